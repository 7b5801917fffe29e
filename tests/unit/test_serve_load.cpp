// The reward service under load on loopback: 32 concurrent clients send
// 2,000 mixed requests — good kernels, broken ones, the adversarial suite, hostile bodies, batches
// and duplicates — to a server with a small queue, while kernel workers are killed mid-run. Every
// request must be answered (zero lost), every 429 retried by the client, every verdict the
// expected one (zero wrong), a killed worker costs only the items it was running (answered as
// retryable errors, never as a wrong verdict), and shutdown drains an in-flight batch.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include "agent/http.h"
#include "serve/server.h"
#include "support/test_files.h"
#include "tasks/speed_cost.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace nki_agent {
namespace {

const fs::path kTasks = fs::path(NKIA_SOURCE_DIR) / "tests" / "tasks";

std::string header(const std::string& src, const std::string& key) {
  const std::string prefix = "# " + key + ": ";
  const size_t at = src.find(prefix);
  if (at == std::string::npos) return "";
  const size_t end = src.find('\n', at);
  return src.substr(at + prefix.size(), end - at - prefix.size());
}

// One kind of request and what its answer must be.
struct Kind {
  std::string name;
  std::string path = "/v1/reward";
  std::string body;
  int status = 200;
  int correct = -1;  // for 200 reward answers: 1, 0; -1 not checked
  int items = 1;     // batch items (each checked for `correct`)
};

std::vector<Kind> catalogue() {
  std::vector<Kind> k;
  auto reward = [](const std::string& task, const std::string& code) {
    return json{{"task_id", task}, {"kernel_code", code}, {"seeds", 2}};
  };
  for (const char* t : {"add_fp32", "int_scale", "layernorm_affine", "bn_relu_add"})
    k.push_back({std::string("baseline ") + t, "/v1/reward",
                 reward(t, testing::read_text(kTasks / t / "baseline.py")).dump(), 200, 1});
  const std::string add = testing::read_text(kTasks / "add_fp32" / "baseline.py");
  k.push_back(
      {"response text", "/v1/reward",
       json{{"task_id", "add_fp32"}, {"response", "Here it is:\n```python\n" + add + "```\n"}, {"seeds", 2}}.dump(),
       200, 1});
  for (const auto& e : fs::directory_iterator(kTasks / "slow")) {
    const std::string src = testing::read_text(e.path());
    k.push_back(
        {"slow " + e.path().filename().string(), "/v1/reward", reward(header(src, "task"), src).dump(), 200, 1});
  }
  std::string broken = add;
  broken.replace(broken.find("nl.load("), 8, "nl.lod(");
  k.push_back({"compile error", "/v1/reward", reward("add_fp32", broken).dump(), 200, 0});
  for (const auto& e : fs::directory_iterator(kTasks / "hacks")) {
    const std::string src = testing::read_text(e.path());
    if (header(src, "task") != "add_fp32") continue;
    k.push_back({"hack " + e.path().filename().string(), "/v1/reward", reward("add_fp32", src).dump(), 200, 0});
  }
  json batch = {{"items", json::array()}};
  batch["items"].push_back(reward("add_fp32", add));
  batch["items"].push_back({{"task_id", 7}});
  batch["items"].push_back(reward("add_fp32", testing::read_text(kTasks / "hacks" / "zeros_add.py")));
  k.push_back({"batch", "/v1/reward/batch", batch.dump(), 200, -1, 3});
  k.push_back({"openrlhf", "/get_reward",
               json{{"query", {"```python\n" + add + "```"}}, {"prompts", {""}}, {"labels", {"add_fp32"}}}.dump(),
               200});
  k.push_back({"malformed json", "/v1/reward", "{\"task_id\": ", 400});
  k.push_back({"deep json", "/v1/reward", std::string(200, '[') + std::string(200, ']'), 400});
  k.push_back({"wrong type", "/v1/reward", json{{"task_id", "add_fp32"}, {"kernel_code", 12}}.dump(), 400});
  k.push_back({"unknown task", "/v1/reward", reward("no_such_task", add).dump(), 404});
  k.push_back({"path as task", "/v1/reward", reward("../../etc", add).dump(), 404});
  // A client's own reference (KernelBench form) is the task: the same verdicts as the server's own.
  const std::string add_reference = testing::read_text(kTasks / "add_fp32" / "task.py");
  k.push_back({"inline reference", "/v1/reward",
               json{{"task_id", "mine"}, {"kernel_code", add}, {"reference_code", add_reference}, {"seeds", 2}}.dump(),
               200, 1});
  k.push_back({"inline reference, hack", "/v1/reward",
               json{{"task_id", "mine"},
                    {"kernel_code", testing::read_text(kTasks / "hacks" / "zeros_add.py")},
                    {"reference_code", add_reference},
                    {"seeds", 2}}
                   .dump(),
               200, 0});
  k.push_back({"hostile inline reference", "/v1/reward",
               json{{"task_id", "x"},
                    {"kernel_code", add},
                    {"reference_code", "import os\nos.system('id')\nclass Model: pass\n"}}
                   .dump(),
               400});
  return k;
}

// The server's kernel workers: this process's children running nki-agent-worker.
std::vector<int> worker_pids() {
  std::vector<int> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(e.path() / "stat");
    std::string line;
    std::getline(stat, line);
    const size_t open = line.find('('), close = line.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;
    const std::string comm = line.substr(open + 1, close - open - 1);
    std::istringstream rest(line.substr(close + 2));
    std::string state;
    int ppid = 0;
    rest >> state >> ppid;
    if (ppid == getpid() && comm.rfind("nki-agent-work", 0) == 0) out.push_back(std::stoi(name));
  }
  return out;
}

// Whether a reward answer says "not scored, try again" (a worker lost mid-verification).
bool retryable(const json& r) {
  return r.value("status", "") == "error" && r.contains("error") && r["error"].is_object() &&
         r["error"].value("code", "").rfind("nkia_worker_", 0) == 0;
}

TEST(ServeLoad, ThirtyTwoClientsTwoThousandRequestsKilledWorkersAndDrain) {
  serve::ServeOptions so;
  so.port = 0;
  so.workers = 4;
  so.queue = 4;
  so.scorer.kernel_workers = 2;
  so.scorer.worker_path = NKIA_WORKER_BIN;
  so.scorer.task_roots = {kTasks.string()};
  so.scorer.verify.reference.cache_dir = testing::shared_cache();
  so.scorer.verify.speed = cost_speed_model();
  auto server = serve::RewardServer::create(so);
  ASSERT_TRUE(server) << server.error().format();
  std::thread run([&] { (*server)->run(); });
  const std::string url = "http://127.0.0.1:" + std::to_string((*server)->port());

  const auto kinds = catalogue();
  constexpr int kClients = 32, kRequests = 2000;
  std::atomic<int> next{0}, answered{0}, lost{0}, wrong{0}, busy{0}, infra{0};
  std::mutex mu;
  std::vector<std::string> failures;
  auto fail = [&](std::string what) {
    std::lock_guard lock(mu);
    if (failures.size() < 20) failures.push_back(std::move(what));
  };
  auto check_reward = [&](const Kind& k, const json& r) {
    if (k.correct < 0) return true;
    if (r.value("status", "") == "error") return false;
    return r["components"].value("correct", -1.0) == k.correct;
  };

  std::atomic<bool> done{false};
  int kills = 0;
  std::thread killer([&] {
    // Three workers killed a second apart while the clients run.
    for (int i = 0; i < 3 && !done; ++i) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      auto pids = worker_pids();
      if (!pids.empty() && !done) {
        ::kill(pids[static_cast<size_t>(i) % pids.size()], SIGKILL);
        ++kills;
      }
    }
  });

  auto client = [&](int seed) {
    std::mt19937 rng(static_cast<unsigned>(seed));
    for (int n; (n = next.fetch_add(1)) < kRequests;) {
      const Kind& k = kinds[rng() % kinds.size()];
      bool finished = false;
      // A busy server (429) is asked again until it answers, for as long as a request may take: how
      // many times depends on how fast this machine runs the slow kernels (sanitizers, two cores).
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(300);
      while (!finished && std::chrono::steady_clock::now() < deadline) {
        HttpRequest req;
        req.url = url + k.path;
        req.body = k.body;
        req.headers = {"Content-Type: application/json"};
        req.timeout_s = 300;
        const HttpResponse res = http_post(req);
        if (res.outcome != HttpOutcome::kOk) {
          ++lost;
          fail(k.name + ": no answer: " + res.error);
          finished = true;
          break;
        }
        if (res.status == 429) {
          ++busy;
          EXPECT_FALSE(res.header("retry-after").empty());
          std::this_thread::sleep_for(std::chrono::milliseconds(50 + rng() % 200));
          continue;
        }
        finished = true;
        ++answered;
        if (res.status != k.status) {
          ++wrong;
          fail(k.name + ": HTTP " + std::to_string(res.status) + " " + res.body.substr(0, 300));
          break;
        }
        const json body = json::parse(res.body, nullptr, false);
        if (body.is_discarded()) {
          ++wrong;
          fail(k.name + ": not JSON");
          break;
        }
        if (k.status != 200) {
          if (!body.contains("error")) fail(k.name + ": refusal without an error body"), ++wrong;
          break;
        }
        if (k.path == "/v1/reward") {
          if (retryable(body)) {
            ++infra;
            --answered;
            finished = false;
            continue;
          }
          if (!check_reward(k, body)) ++wrong, fail(k.name + ": " + body.dump().substr(0, 400));
        } else if (k.path == "/v1/reward/batch") {
          const auto& results = body["results"];
          if (results.size() != 3) {
            ++wrong;
            fail("batch: " + body.dump().substr(0, 300));
            break;
          }
          // Item 1 is malformed: its own error; items 0 and 2 are a good kernel and a hack.
          bool redo = false;
          for (int i : {0, 2}) redo = redo || retryable(results[i]);
          if (redo) {
            ++infra;
            --answered;
            finished = false;
            continue;
          }
          if (results[0]["components"].value("correct", -1.0) != 1 || results[1].value("status", "") != "error" ||
              results[2]["components"].value("correct", -1.0) != 0)
            ++wrong, fail("batch: " + body.dump().substr(0, 400));
        } else if (k.path == "/get_reward") {
          if (!body.contains("rewards") || body["rewards"].size() != 1) ++wrong, fail("openrlhf: " + body.dump());
        }
      }
      if (!finished) ++lost, fail(k.name + ": still busy after 300 s");
    }
  };
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) clients.emplace_back(client, c + 1);
  for (auto& t : clients) t.join();
  done = true;
  killer.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "load: %d requests answered in %.1f s by 32 clients; %d answered 429 and retried, %d worker(s) killed, "
      "%d item(s) lost to a killed worker and retried\n",
      answered.load(), seconds, busy.load(), kills, infra.load());
  for (const auto& f : failures) ADD_FAILURE() << f;
  EXPECT_EQ(lost.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(answered.load(), kRequests);
  EXPECT_GT(busy.load(), 0) << "the queue never filled: the load test did not test back-pressure";
  EXPECT_LE(infra.load(), 3 * kills) << "a killed worker cost more than the items it was running";

  // Drain: a batch of kernels not seen yet (other seeds) is in flight when shutdown starts; it is
  // answered in full, and the server then takes nothing new.
  json batch = {{"items", json::array()}};
  for (int seeds : {3, 4, 5})
    batch["items"].push_back({{"task_id", "add_fp32"},
                              {"kernel_code", testing::read_text(kTasks / "add_fp32" / "baseline.py")},
                              {"seeds", seeds}});
  HttpResponse drained;
  std::thread inflight([&] {
    HttpRequest req;
    req.url = url + "/v1/reward/batch";
    req.body = batch.dump();
    req.timeout_s = 300;
    drained = http_post(req);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  (*server)->shutdown(120);
  inflight.join();
  run.join();
  ASSERT_EQ(drained.outcome, HttpOutcome::kOk) << drained.error;
  EXPECT_EQ(drained.status, 200) << drained.body;
  const json jb = json::parse(drained.body, nullptr, false);
  ASSERT_FALSE(jb.is_discarded());
  for (const auto& r : jb["results"]) EXPECT_EQ(r["components"].value("correct", -1.0), 1) << r.dump();
  HttpRequest after;
  after.url = url + "/health";
  after.get = true;
  after.timeout_s = 5;
  EXPECT_NE(http_post(after).outcome, HttpOutcome::kOk) << "the listener is still open after shutdown";
}

}  // namespace
}  // namespace nki_agent
