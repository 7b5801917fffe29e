// The agent's own costs (docs/perf.md, "Agent"):
//   BM_LoopOverheadPerTurn   the loop's time per turn outside the model and the tools: a scripted
//                            in-process model that calls `lookup` every turn (no sandbox), so the
//                            time left is prompt building, conversation bookkeeping, tool dispatch
//                            and the trajectory (JSONL, flushed);
//   BM_BenchThroughput/J     `run_bench` over 8 Level-1 tasks with a model that takes a fixed
//                            1.5 s per call and needs two turns per task (compile, then verify of
//                            the task's baseline), at --jobs J: tasks per minute.
// References are cached under build/bench-cache by a warm-up baseline run first.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "agent/bench.h"
#include "agent/loop.h"
#include "agent/tools.h"
#include "tasks/speed_cost.h"

namespace nki_agent {
namespace {

namespace fs = std::filesystem;

const fs::path kLevel1 = fs::path(NKIA_SOURCE_DIR) / "tasks" / "nkibench" / "level1";
const std::vector<std::string> kTasks = {"L1_001", "L1_012", "L1_013", "L1_019",
                                         "L1_024", "L1_031", "L1_050", "L1_060"};

std::string cache_dir() {
  return (fs::path(NKIA_WORKER_BIN).parent_path() / "bench-cache").string();
}

std::string read_text(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// A model that answers from a fixed plan after a fixed latency.
class ScriptedModel : public LlmClient {
 public:
  ScriptedModel(LlmConfig cfg, std::string kernel, double latency_s, bool lookup_only)
      : cfg_(std::move(cfg)), kernel_(std::move(kernel)), latency_(latency_s), lookup_only_(lookup_only) {}
  const LlmConfig& config() const override { return cfg_; }
  Result<ChatResponse> chat(const ChatRequest&, const std::atomic<bool>*, const TextSink&) override {
    if (latency_ > 0) std::this_thread::sleep_for(std::chrono::duration<double>(latency_));
    ChatResponse r;
    r.stop_reason = "tool_use";
    r.usage = {1000, 200};
    ++turn_;
    ToolCall c;
    c.id = fmt::format("call_{}", turn_);
    if (lookup_only_) {
      c.name = "lookup";
      c.arguments = R"({"query": "nl.matmul"})";
    } else {
      c.name = turn_ == 1 ? "compile" : "verify";
      c.arguments = nlohmann::json({{"kernel_code", kernel_}}).dump();
    }
    r.text = "Next step.";
    r.tool_calls.push_back(std::move(c));
    return r;
  }

 private:
  LlmConfig cfg_;
  std::string kernel_;
  double latency_;
  bool lookup_only_;
  int turn_ = 0;
};

LlmConfig scripted_config() {
  LlmConfig c;
  c.name = "scripted";
  c.provider = "openai";
  c.base_url = "http://127.0.0.1:9/v1";
  c.model = "scripted";
  return c;
}

void BM_LoopOverheadPerTurn(benchmark::State& state) {
  const int turns = static_cast<int>(state.range(0));
  auto task = load_task((kLevel1 / "L1_001_matmul_small_fp32").string());
  if (!task) {
    state.SkipWithError(task.error().message.c_str());
    return;
  }
  KernelServiceOptions ko;
  ko.workers = 1;
  ko.worker_path = NKIA_WORKER_BIN;
  auto service = KernelService::create(ko);
  if (!service) {
    state.SkipWithError(service.error().message.c_str());
    return;
  }
  const fs::path traj_path = fs::temp_directory_path() / "nkia-bench-agent.jsonl";
  double overhead = 0, tools = 0;
  int64_t n = 0;
  for (auto _ : state) {
    AgentTools t(*task, **service, VerifyOptions{});
    ScriptedModel model(scripted_config(), "", 0, /*lookup_only=*/true);
    auto traj = TrajectoryWriter::open(traj_path.string(), /*truncate=*/true);
    SolveOptions so;
    so.max_turns = turns;
    SolveHooks hooks;
    hooks.trajectory = traj->get();
    auto r = solve_task(*task, t, model, nullptr, so, hooks);
    if (!r) {
      state.SkipWithError(r.error().message.c_str());
      return;
    }
    overhead += r->seconds - r->model_seconds - r->tool_seconds;
    tools += r->tool_seconds;
    n += r->turns;
  }
  fs::remove(traj_path);
  state.counters["agent_us_per_turn"] = overhead / static_cast<double>(n) * 1e6;
  state.counters["lookup_us_per_turn"] = tools / static_cast<double>(n) * 1e6;
}
BENCHMARK(BM_LoopOverheadPerTurn)->Arg(10)->Arg(40)->Unit(benchmark::kMillisecond);

void warm_references() {
  static bool done = false;
  if (done) return;
  ::setenv("NKIA_WORKER", NKIA_WORKER_BIN, 0);  // run_bench starts its workers like the CLI does
  BenchOptions bo;
  bo.tasks_root = kLevel1.string();
  bo.filter = kTasks;
  bo.jobs = 2;
  bo.db_path = (fs::temp_directory_path() / "nkia-bench-agent-warm.sqlite").string();
  bo.verify.reference.cache_dir = cache_dir();
  (void)run_bench(bo, {});
  fs::remove(bo.db_path);
  done = true;
}

void BM_BenchThroughput(benchmark::State& state) {
  warm_references();
  const int jobs = static_cast<int>(state.range(0));
  const double latency = 1.5;
  double tasks = 0, seconds = 0, passed = 0;
  for (auto _ : state) {
    const fs::path db = fs::temp_directory_path() / fmt::format("nkia-bench-agent-{}.sqlite", jobs);
    const fs::path out = fs::temp_directory_path() / "nkia-bench-agent-runs";
    fs::remove(db);
    BenchOptions bo;
    bo.tasks_root = kLevel1.string();
    bo.filter = kTasks;
    bo.jobs = jobs;
    bo.db_path = db.string();
    bo.out_dir = out.string();
    bo.model = scripted_config();
    bo.verify.reference.cache_dir = cache_dir();
    bo.client_factory = [latency](const LlmConfig& c, const Task& task) -> Result<std::unique_ptr<LlmClient>> {
      return std::unique_ptr<LlmClient>(new ScriptedModel(c, read_text(task.baseline_path()), latency, false));
    };
    const auto t0 = std::chrono::steady_clock::now();
    auto r = run_bench(bo, {});
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!r) {
      state.SkipWithError(r.error().message.c_str());
      return;
    }
    tasks += r->total.tasks;
    passed += r->total.passed;
    fs::remove(db);
    fs::remove_all(out);
  }
  state.counters["tasks_per_min"] = tasks / seconds * 60;
  state.counters["passed"] = passed / static_cast<double>(state.iterations());
  state.counters["model_s_per_task"] = 2 * latency;
}
BENCHMARK(BM_BenchThroughput)->Arg(1)->Arg(2)->Arg(4)->Iterations(1)->UseRealTime()->Unit(benchmark::kSecond);

}  // namespace
}  // namespace nki_agent

BENCHMARK_MAIN();
