// bench_reward — the reward service's throughput on this machine (docs/perf.md, "Reward service").
//
// A server runs in-process on loopback with the NKIBench task root; C clients send one
// /v1/reward request per Level-1 task (the task's baseline kernel as kernel_code, the tasks' own
// seeds and shapes, speed measured), first with an empty result cache ("cold": every kernel
// verified; the reference cache as it is on disk, so fill it first with
// `nki-agent tasks check --suite level1`), then the same requests again ("cached"). Prints
// rewards per minute and the p50 / p95 / max latency of each pass.
//
//   bench_reward [--tasks N|all] [--clients C] [--workers W]   (default: every 5th task, 8, 2)
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "agent/http.h"
#include "serve/server.h"
#include "tasks/speed_cost.h"
#include "tasks/task_dirs.h"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace nki_agent;

namespace {

struct Pass {
  std::vector<double> latency;
  int ok = 0, correct = 0, errors = 0;
  double seconds = 0;
};

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5))];
}

Pass run_pass(const std::string& url, const std::vector<std::string>& bodies, int clients) {
  Pass pass;
  std::vector<double> latency(bodies.size());
  std::vector<int> verdict(bodies.size());
  std::atomic<size_t> next{0};
  const auto t0 = std::chrono::steady_clock::now();
  auto client = [&] {
    for (size_t i; (i = next.fetch_add(1)) < bodies.size();) {
      for (;;) {
        HttpRequest req;
        req.url = url + "/v1/reward";
        req.body = bodies[i];
        req.timeout_s = 1800;
        const auto s = std::chrono::steady_clock::now();
        const HttpResponse res = http_post(req);
        if (res.outcome == HttpOutcome::kOk && res.status == 429) {
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
          continue;
        }
        latency[i] = std::chrono::duration<double>(std::chrono::steady_clock::now() - s).count();
        const json j = json::parse(res.body, nullptr, false);
        verdict[i] = res.status != 200 || j.is_discarded() || j.value("status", "") == "error"
                         ? -1
                         : static_cast<int>(j["components"].value("correct", 0.0));
        break;
      }
    }
  };
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) threads.emplace_back(client);
  for (auto& t : threads) t.join();
  pass.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  pass.latency = latency;
  for (int v : verdict) {
    pass.ok += v >= 0;
    pass.correct += v == 1;
    pass.errors += v < 0;
  }
  return pass;
}

void print(const char* name, const Pass& p) {
  std::printf(
      "%-7s %4zu rewards in %7.1f s: %7.1f rewards/min; latency p50 %.3f s, p95 %.3f s, max %.3f s; %d correct, "
      "%d not scored\n",
      name, p.latency.size(), p.seconds, 60.0 * static_cast<double>(p.latency.size()) / p.seconds,
      percentile(p.latency, 0.5), percentile(p.latency, 0.95), percentile(p.latency, 1.0), p.correct, p.errors);
}

}  // namespace

int main(int argc, char** argv) {
  int every = 5, clients = 8, workers = 2;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--tasks"))
      every = !std::strcmp(argv[i + 1], "all") ? 1 : std::max(1, 100 / std::atoi(argv[i + 1]));
    else if (!std::strcmp(argv[i], "--clients"))
      clients = std::max(1, std::atoi(argv[i + 1]));
    else if (!std::strcmp(argv[i], "--workers"))
      workers = std::max(1, std::atoi(argv[i + 1]));
  }
  const fs::path root = fs::path(NKIA_SOURCE_DIR) / "tasks" / "nkibench";
  auto dirs = find_task_dirs((root / "level1").string());
  if (!dirs) {
    std::fprintf(stderr, "%s\n", dirs.error().format().c_str());
    return 1;
  }
  std::vector<std::string> bodies;
  for (size_t i = 0; i < dirs->size(); i += static_cast<size_t>(every)) {
    std::ifstream in(fs::path((*dirs)[i]) / "baseline.py");
    std::stringstream ss;
    ss << in.rdbuf();
    bodies.push_back(json{{"task_id", fs::path((*dirs)[i]).filename().string()}, {"kernel_code", ss.str()}}.dump());
  }
  serve::ServeOptions so;
  so.port = 0;
  so.workers = workers;
  so.scorer.kernel_workers = workers;
  so.scorer.worker_path = NKIA_WORKER_BIN;
  so.scorer.task_roots = {root.string()};
  so.scorer.verify.speed = cost_speed_model();
  auto server = serve::RewardServer::create(so);
  if (!server) {
    std::fprintf(stderr, "%s\n", server.error().format().c_str());
    return 1;
  }
  std::thread run([&] { (*server)->run(); });
  const std::string url = "http://127.0.0.1:" + std::to_string((*server)->port());
  std::printf("bench_reward: %zu Level-1 baselines, %d clients, %d workers, %u cores\n", bodies.size(), clients,
              workers, std::thread::hardware_concurrency());
  print("cold", run_pass(url, bodies, clients));
  print("cached", run_pass(url, bodies, clients));
  (*server)->shutdown(60);
  run.join();
  return 0;
}
