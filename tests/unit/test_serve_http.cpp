// The reward service over real HTTP on loopback (docs/serve.md): every route family answers in
// its format (/v1/reward and its batch, OpenRLHF, slime, KernelGYM with /status, the op-based
// /reward, the tools), every refusal is a JSON error with its status (400, 401, 404, 413, 429,
// 503), /health and /metrics, and shutdown lets a request in flight finish. One server for most
// tests; a second one with tokens and a one-item queue for authorisation and 429; shutdown gets a
// server of its own. The client is the agent's libcurl layer (agent/http.h).
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "agent/http.h"
#include "serve/server.h"
#include "support/test_files.h"
#include "tasks/speed_cost.h"

namespace nki_agent::serve {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::read_text;
using testing::shared_cache;

const fs::path kTasks = fs::path(NKIA_SOURCE_DIR) / "tests" / "tasks";

const std::string& baseline() {
  static const std::string text = read_text(kTasks / "add_fp32" / "baseline.py");
  return text;
}

ServeOptions options(int workers, int queue, int kernel_workers) {
  ::setenv("NKIA_WORKER", NKIA_WORKER_BIN, 1);
  ServeOptions o;
  o.host = "127.0.0.1";
  o.port = 0;
  o.workers = workers;
  o.queue = queue;
  o.max_body_bytes = size_t{64} << 10;
  o.deadline_seconds = 120;
  o.scorer.task_roots = {kTasks.string()};
  o.scorer.verify.speed = cost_speed_model();
  o.scorer.verify.reference.cache_dir = shared_cache();
  o.scorer.kernel_workers = kernel_workers;
  return o;
}

HttpResponse call(int port, const std::string& path, const std::string& body, bool get = false,
                  std::vector<std::string> headers = {}) {
  HttpRequest r;
  r.url = "http://127.0.0.1:" + std::to_string(port) + path;
  r.body = body;
  r.get = get;
  r.headers = std::move(headers);
  if (!get) r.headers.push_back("Content-Type: application/json");
  r.timeout_s = 180;
  return http_post(r);
}

json body_json(const HttpResponse& r) {
  return json::parse(r.body, nullptr, false);
}

// A running server: run() on its own thread, ready once /health answers.
struct Running {
  std::unique_ptr<RewardServer> server;
  std::thread thread;

  static std::unique_ptr<Running> start(ServeOptions o) {
    auto s = RewardServer::create(std::move(o));
    if (!s) {
      ADD_FAILURE() << s.error().format();
      return nullptr;
    }
    auto r = std::make_unique<Running>();
    r->server = std::move(*s);
    RewardServer* raw = r->server.get();
    r->thread = std::thread([raw] { raw->run(); });
    // Ready when it answers (a deadline, not a speed check).
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < give_up) {
      HttpRequest h;
      h.url = "http://127.0.0.1:" + std::to_string(raw->port()) + "/health";
      h.get = true;
      h.timeout_s = 5;
      if (http_post(h).status == 200) return r;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ADD_FAILURE() << "the server never answered /health";
    return r;
  }
  void stop(double drain_seconds = 120) {
    server->shutdown(drain_seconds);
    if (thread.joinable()) thread.join();
  }
  int port() const { return server->port(); }
};

json reward_body(const std::string& code, int seeds = 1) {
  return {{"task_id", "add_fp32"}, {"kernel_code", code}, {"seeds", seeds}};
}

// ---------------------------------------------------------------------------------------------
// The main server: no tokens, two workers, a 64 KiB body limit.

class ServeHttp : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { running_ = Running::start(options(2, 8, 2)).release(); }
  static void TearDownTestSuite() {
    if (running_ != nullptr) running_->stop();
    delete running_;
    running_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(running_, nullptr); }

  static HttpResponse post(const std::string& path, const json& body) {
    return call(running_->port(), path, body.dump());
  }
  static HttpResponse post_raw(const std::string& path, const std::string& body) {
    return call(running_->port(), path, body);
  }
  static HttpResponse get(const std::string& path) { return call(running_->port(), path, "", true); }

  // A refusal: the status, a JSON body {"error": {"code", "message"}} with that code.
  static void expect_refusal(const HttpResponse& r, long status, const std::string& code) {
    ASSERT_EQ(r.outcome, HttpOutcome::kOk) << r.error;
    EXPECT_EQ(r.status, status) << r.body;
    const json j = body_json(r);
    ASSERT_TRUE(j.is_object()) << r.body;
    ASSERT_TRUE(j.contains("error")) << r.body;
    EXPECT_EQ(j["error"].value("code", ""), code) << r.body;
    EXPECT_FALSE(j["error"].value("message", "").empty()) << r.body;
    EXPECT_NE(r.header("content-type").find("application/json"), std::string::npos) << r.header("content-type");
  }

  static inline Running* running_ = nullptr;
};

TEST_F(ServeHttp, HealthListsThePresetsAndTheWorkers) {
  const HttpResponse r = get("/health");
  ASSERT_EQ(r.status, 200) << r.error << r.body;
  const json j = body_json(r);
  EXPECT_EQ(j["status"], "ok");
  EXPECT_FALSE(j.value("version", "").empty());
  EXPECT_EQ(j["default_preset"], "nki");
  EXPECT_EQ(j["presets"].size(), 8u);
  EXPECT_NE(std::find(j["presets"].begin(), j["presets"].end(), "cuda_agent"), j["presets"].end());
  EXPECT_EQ(j["workers"], 2);
  EXPECT_EQ(j["kernel_workers"], 2);
  EXPECT_EQ(j["task_roots"], json::array({kTasks.string()}));
  EXPECT_EQ(j["in_flight"], 0);
}

// docs/serve.md: GET /health -> {"status", "version", "tasks", "workers", "in_flight", "queued"}.
TEST_F(ServeHttp, HealthHasTheDocumentedFields) {
  const HttpResponse r = get("/health");
  ASSERT_EQ(r.status, 200) << r.error << r.body;
  const json j = body_json(r);
  for (const char* k : {"status", "version", "tasks", "workers", "in_flight", "queued"})
    EXPECT_TRUE(j.contains(k)) << "missing " << k << " in " << r.body;
}

TEST_F(ServeHttp, ARewardForAGoodKernelAndForAHack) {
  const HttpResponse good = post("/v1/reward", reward_body(baseline()));
  ASSERT_EQ(good.status, 200) << good.error << good.body;
  EXPECT_NE(good.header("content-type").find("application/json"), std::string::npos);
  const json g = body_json(good);
  EXPECT_EQ(g["status"], "ok");
  EXPECT_EQ(g["preset"], "nki");
  EXPECT_EQ(g["components"]["correct"], 1);
  EXPECT_EQ(g["components"]["compile"], 1);
  ASSERT_TRUE(g["components"]["speedup"].is_number()) << g.dump();
  EXPECT_NEAR(g["components"]["speedup"].get<double>(), 1.0, 0.05);
  EXPECT_TRUE(g["score"].is_number());
  EXPECT_EQ(g["score"], g["scores"]["nki"]);
  EXPECT_EQ(g["flags"], json::array());
  EXPECT_TRUE(g["error"].is_null());
  EXPECT_EQ(g["verify"]["passed"], true);
  EXPECT_TRUE(g["timings"].contains("total_s"));

  const HttpResponse hack = post("/v1/reward", reward_body(read_text(kTasks / "hacks" / "zeros_add.py")));
  ASSERT_EQ(hack.status, 200) << hack.error << hack.body;
  const json h = body_json(hack);
  EXPECT_EQ(h["status"], "ok");
  EXPECT_EQ(h["components"]["correct"], 0);
  EXPECT_EQ(h["flags"], json::array({"zero_output"}));
  EXPECT_EQ(h["score"], 0);
  EXPECT_EQ(h["scores"]["cuda_agent"], -1);
  EXPECT_EQ(h["scores"]["binary_compile"], 1);

  // A kernel in the model's text, with the preset asked for.
  const HttpResponse text = post("/v1/reward", {{"task_id", "add_fp32"},
                                                {"response", "Sure:\n```python\n" + baseline() + "```\n"},
                                                {"preset", "kevin"},
                                                {"seeds", 1}});
  ASSERT_EQ(text.status, 200) << text.body;
  const json t = body_json(text);
  EXPECT_EQ(t["preset"], "kevin");
  EXPECT_EQ(t["extracted_from"], "response");
  EXPECT_EQ(t["score"], g["scores"]["kevin"]);
  EXPECT_EQ(t["cached"], true);  // the same kernel as `good`
}

TEST_F(ServeHttp, ABatchWithABadItemAnswersEveryItem) {
  json items = json::array();
  items.push_back(reward_body(baseline()));
  items.push_back({{"task_id", 7}, {"kernel_code", baseline()}});  // malformed
  items.push_back(reward_body(read_text(kTasks / "hacks" / "constant_add.py")));
  items.push_back({{"task_id", "no_such_task"}, {"kernel_code", baseline()}});
  items.push_back({{"task_id", "add_fp32"}, {"response", "no code at all"}});
  const HttpResponse r = post("/v1/reward/batch", {{"items", items}});
  ASSERT_EQ(r.status, 200) << r.error << r.body;
  const json j = body_json(r);
  ASSERT_EQ(j["results"].size(), 5u) << r.body;
  const json& res = j["results"];
  EXPECT_EQ(res[0]["status"], "ok");
  EXPECT_EQ(res[0]["components"]["correct"], 1);
  EXPECT_EQ(res[1]["status"], "error");
  EXPECT_TRUE(res[1]["score"].is_null());
  EXPECT_EQ(res[1]["error"]["code"], "nkia_reward_bad_request");
  EXPECT_EQ(res[2]["status"], "ok");
  EXPECT_EQ(res[2]["components"]["correct"], 0);
  EXPECT_EQ(res[2]["flags"], json::array({"constant_output"}));
  EXPECT_EQ(res[3]["status"], "error");
  EXPECT_EQ(res[3]["error"]["code"], "nkia_task_not_found");
  EXPECT_EQ(res[4]["status"], "format_error");
  EXPECT_EQ(res[4]["score"], 0);

  expect_refusal(post("/v1/reward/batch", {{"items", "not a list"}}), 400, "nkia_reward_bad_request");
}

TEST_F(ServeHttp, OpenRlhfGetReward) {
  const std::string prompt = "<|user|>Write the add kernel.<|assistant|>";
  const std::string query = prompt + "Here:\n```python\n" + baseline() + "```<|end|>";
  const HttpResponse r =
      post("/get_reward", {{"query", {query, prompt + "nothing"}},
                           {"prompts", {prompt, prompt}},
                           {"labels", {"add_fp32", R"({"task_id": "add_fp32", "preset": "cuda_agent", "seeds": 1})"}}});
  ASSERT_EQ(r.status, 200) << r.error << r.body;
  const json j = body_json(r);
  ASSERT_EQ(j["rewards"].size(), 2u) << r.body;
  ASSERT_EQ(j["scores"].size(), 2u);
  EXPECT_TRUE(j["extra_logs"].is_object());
  EXPECT_GT(j["rewards"][0].get<double>(), 0.5);  // nki: correct
  EXPECT_EQ(j["scores"][0], 1);
  EXPECT_EQ(j["rewards"][1], -1);  // cuda_agent's floor: no kernel in the answer
  EXPECT_EQ(j["scores"][1], 0);
  EXPECT_EQ(j["extra_logs"]["nki_errors"], 0);

  // The same on the long route, and a label without a task is an error item rewarded 0.
  const HttpResponse bad = post("/openrlhf/get_reward", {{"query", {query}}, {"labels", {R"({"preset": "nki"})"}}});
  ASSERT_EQ(bad.status, 200) << bad.body;
  const json b = body_json(bad);
  EXPECT_EQ(b["rewards"], json::array({0.0}));
  EXPECT_EQ(b["extra_logs"]["nki_errors"], 1);

  expect_refusal(post("/get_reward", {{"query", {query, query}}, {"labels", {"add_fp32"}}}), 400,
                 "nkia_reward_bad_request");
}

TEST_F(ServeHttp, SlimeRmAnswersABareNumber) {
  const std::string response = "```python\n" + baseline() + "```";
  const HttpResponse r = post(
      "/rm", {{"prompt", "write it"}, {"response", response}, {"label", R"({"task_id": "add_fp32", "seeds": 1})"}});
  ASSERT_EQ(r.status, 200) << r.error << r.body;
  const json j = body_json(r);
  ASSERT_TRUE(j.is_number()) << r.body;
  EXPECT_GT(j.get<double>(), 0.5);
  const HttpResponse again = post(
      "/slime/rm", {{"response", response}, {"label", {{"task_id", "add_fp32"}, {"seeds", 1}, {"preset", "kevin"}}}});
  ASSERT_EQ(again.status, 200) << again.body;
  ASSERT_TRUE(body_json(again).is_number()) << again.body;
  EXPECT_GT(body_json(again).get<double>(), 1.0);  // 0.3 + speedup ~ 1
  expect_refusal(post("/rm", {{"response", response}, {"label", "no_such_task"}}), 404, "nkia_task_not_found");
}

TEST_F(ServeHttp, KernelGymEvaluateThenStatusAndResults) {
  const std::string id = "http-eval-" + std::to_string(::getpid());
  const HttpResponse r = post("/evaluate", {{"task_id", id},
                                            {"kernel_code", baseline()},
                                            {"metadata", {{"task", "add_fp32"}}},
                                            {"num_correct_trials", 1},
                                            {"num_perf_trials", 100},
                                            {"backend", "triton"}});
  ASSERT_EQ(r.status, 200) << r.error << r.body;
  const json a = body_json(r);
  for (const char* f : {"task_id", "status", "compiled", "correctness", "decoy_kernel", "reference_runtime",
                        "kernel_runtime", "speedup", "metadata", "error_code", "error_message"})
    EXPECT_TRUE(a.contains(f)) << f << " in " << r.body;
  EXPECT_EQ(a["task_id"], id);
  EXPECT_EQ(a["status"], "completed");
  EXPECT_EQ(a["compiled"], true);
  EXPECT_EQ(a["correctness"], true);
  EXPECT_EQ(a["decoy_kernel"], false);
  EXPECT_GT(a["reference_runtime"].get<double>(), 0);
  EXPECT_GT(a["kernel_runtime"].get<double>(), 0);
  EXPECT_TRUE(a["error_code"].is_null());

  for (const char* route : {"/status/", "/results/"}) {
    const HttpResponse s = get(route + id);
    ASSERT_EQ(s.status, 200) << route << ": " << s.body;
    EXPECT_EQ(body_json(s), a) << route;
  }
  expect_refusal(get("/status/never-evaluated"), 404, "nkia_serve_not_found");

  // A hack is a decoy; an unknown task is a failed evaluation in the same shape.
  const HttpResponse hack = post("/evaluate", {{"task_id", id + "-hack"},
                                               {"kernel_code", read_text(kTasks / "hacks" / "copy_input_add.py")},
                                               {"metadata", {{"task", "add_fp32"}}},
                                               {"num_correct_trials", 1}});
  ASSERT_EQ(hack.status, 200) << hack.body;
  EXPECT_EQ(body_json(hack)["correctness"], false);
  EXPECT_EQ(body_json(hack)["decoy_kernel"], true);
  const HttpResponse unknown = post("/evaluate", {{"task_id", "no_such_task"}, {"kernel_code", baseline()}});
  ASSERT_EQ(unknown.status, 200) << unknown.body;
  EXPECT_EQ(body_json(unknown)["status"], "failed");
  EXPECT_EQ(body_json(unknown)["error_code"], "VALIDATION_ERROR");

  // Alone, the client's reference is the task: one that defines no Model is a validation error.
  const HttpResponse no_model =
      post("/evaluate", {{"task_id", "x"}, {"kernel_code", baseline()}, {"reference_code", "import torch"}});
  ASSERT_EQ(no_model.status, 200) << no_model.body;
  EXPECT_EQ(body_json(no_model)["status"], "failed");
  EXPECT_EQ(body_json(no_model)["error_code"], "VALIDATION_ERROR");
  EXPECT_EQ(body_json(no_model)["metadata"].value("code", ""), "nkia_inline_reference") << no_model.body;
  // A KernelBench-form reference: verified as a task of the server's would be.
  const HttpResponse own = post("/evaluate", {{"task_id", "x1"},
                                              {"kernel_code", baseline()},
                                              {"reference_code", testing::read_text(kTasks / "add_fp32" / "task.py")},
                                              {"num_correct_trials", 2}});
  ASSERT_EQ(own.status, 200) << own.body;
  EXPECT_EQ(body_json(own)["correctness"], true) << own.body;
  EXPECT_FALSE(body_json(own)["metadata"].contains("reference_code")) << own.body;
  // Beside a task of the server's, a client's reference is set aside, and the answer says so.
  const HttpResponse beside = post("/evaluate", {{"task_id", "x2"},
                                                 {"kernel_code", baseline()},
                                                 {"reference_code", "import os; os.system('id')"},
                                                 {"metadata", {{"task", "add_fp32"}}}});
  ASSERT_EQ(beside.status, 200) << beside.body;
  EXPECT_EQ(body_json(beside)["correctness"], true) << beside.body;
  EXPECT_NE(body_json(beside)["metadata"].value("reference_code", "").find("ignored"), std::string::npos)
      << beside.body;
}

TEST_F(ServeHttp, TheOpBasedRewardRouteAndTheTools) {
  const HttpResponse c = post("/reward", {{"op", "compile"}, {"task_id", "add_fp32"}, {"kernel_source", baseline()}});
  ASSERT_EQ(c.status, 200) << c.error << c.body;
  const json cj = body_json(c);
  EXPECT_EQ(cj["success"], true) << c.body;
  EXPECT_EQ(cj["returncode"], 0);
  EXPECT_EQ(cj["errors"], json::array());

  // Without a task: the reference server's nki_kernel at the given input_specs, bound by position.
  std::string nki_kernel = baseline();
  nki_kernel.replace(nki_kernel.find("def kernel("), 11, "def nki_kernel(");
  const json specs = {{{"shape", {256, 512}}, {"dtype", "float32"}}, {{"shape", {256, 512}}, {"dtype", "float32"}}};
  const HttpResponse at = post("/reward", {{"op", "compile"}, {"kernel_source", nki_kernel}, {"input_specs", specs}});
  ASSERT_EQ(at.status, 200) << at.body;
  EXPECT_EQ(body_json(at)["success"], true) << at.body;
  EXPECT_EQ(body_json(at)["warnings"], json::array()) << at.body;
  const HttpResponse ap = post("/reward", {{"op", "profile"}, {"kernel_source", nki_kernel}, {"input_specs", specs}});
  ASSERT_EQ(ap.status, 200) << ap.body;
  EXPECT_GT(body_json(ap)["latency_mean_us"].get<double>(), 0) << ap.body;
  const HttpResponse wrong = post("/reward", {{"op", "compile"},
                                              {"kernel_source", nki_kernel},
                                              {"input_specs", {{{"shape", {256, 512}}, {"dtype", "float32"}}}}});
  ASSERT_EQ(wrong.status, 200) << wrong.body;
  EXPECT_EQ(body_json(wrong)["success"], false) << wrong.body;  // one input for two parameters
  EXPECT_EQ(post("/reward", {{"op", "verify"}, {"kernel_source", nki_kernel}, {"input_specs", specs}}).status, 400);

  const HttpResponse b = post("/reward", {{"op", "baseline"}, {"task_id", "add_fp32"}});
  ASSERT_EQ(b.status, 200) << b.body;
  EXPECT_EQ(body_json(b)["success"], true) << b.body;
  EXPECT_GT(body_json(b)["latency_mean_us"].get<double>(), 0);

  expect_refusal(post("/reward", {{"op", "compile"}, {"task_id", "no_such_task"}, {"kernel_source", baseline()}}), 404,
                 "nkia_task_not_found");
  expect_refusal(post("/reward", {{"op", "submit"}, {"task_id", "add_fp32"}, {"kernel_source", baseline()}}), 400,
                 "nkia_reward_bad_request");

  const HttpResponse t = post("/v1/compile", {{"task_id", "add_fp32"}, {"kernel_code", baseline()}});
  ASSERT_EQ(t.status, 200) << t.error << t.body;
  const json tj = body_json(t);
  EXPECT_EQ(tj["ok"], true) << t.body;
  EXPECT_NE(tj.value("content", "").find("COMPILED"), std::string::npos) << t.body;
  EXPECT_TRUE(tj.contains("data"));

  const HttpResponse p = post("/v1/profile", {{"task_id", "add_fp32"}, {"kernel_code", baseline()}});
  ASSERT_EQ(p.status, 200) << p.body;
  EXPECT_EQ(body_json(p)["ok"], true) << p.body;

  expect_refusal(post("/v1/compile", {{"task_id", "add_fp32"}}), 400, "nkia_reward_bad_request");
  expect_refusal(post("/v1/compile", {{"task_id", "no_such_task"}, {"kernel_code", baseline()}}), 404,
                 "nkia_task_not_found");
}

TEST_F(ServeHttp, BadInputIsAJsonErrorWithItsStatus) {
  expect_refusal(post_raw("/v1/reward", "{\"task_id\": "), 400, "nkia_serve_bad_json");
  expect_refusal(post_raw("/v1/reward", "not json at all"), 400, "nkia_serve_bad_json");
  expect_refusal(post_raw("/v1/reward", std::string(65, '[') + std::string(65, ']')), 400, "nkia_serve_bad_json");
  expect_refusal(post("/v1/reward", {{"task_id", "add_fp32"}, {"kernel_code", 12}}), 400, "nkia_reward_bad_request");
  expect_refusal(post("/v1/reward", {{"task_id", "add_fp32"}}), 400, "nkia_reward_bad_request");
  expect_refusal(post("/v1/reward", {{"task_id", "add_fp32"}, {"kernel_code", baseline()}, {"preset", "nope"}}), 400,
                 "nkia_reward_bad_request");
  json inline_reference = reward_body(baseline());
  inline_reference["reference_code"] = "import torch";
  expect_refusal(post("/v1/reward", inline_reference), 400, "nkia_inline_reference");
  expect_refusal(post("/v1/reward", {{"task_id", "no_such_task"}, {"kernel_code", baseline()}}), 404,
                 "nkia_task_not_found");
  expect_refusal(post("/v1/reward", {{"task_id", "../../etc"}, {"kernel_code", baseline()}}), 404,
                 "nkia_task_not_found");
  expect_refusal(post("/v1/nothing", json::object()), 404, "nkia_serve_not_found");
  expect_refusal(get("/nothing/here"), 404, "nkia_serve_not_found");
}

TEST_F(ServeHttp, ABodyOverTheLimitIs413) {
  json big = reward_body(baseline());
  big["response_padding"] = std::string(100 << 10, 'x');  // 100 KiB over a 64 KiB limit
  const HttpResponse r = post("/v1/reward", big);
  expect_refusal(r, 413, "nkia_serve_body_too_large");
  // The server is fine afterwards.
  EXPECT_EQ(get("/health").status, 200);
}

TEST_F(ServeHttp, MetricsCountRequestsAndCacheHits) {
  ASSERT_EQ(get("/health").status, 200);
  const json body = reward_body(baseline() + "\n# for the metrics test\n");
  ASSERT_EQ(post("/v1/reward", body).status, 200);
  const HttpResponse repeat = post("/v1/reward", body);
  ASSERT_EQ(repeat.status, 200);
  EXPECT_EQ(body_json(repeat)["cached"], true);
  const HttpResponse m = get("/metrics");
  ASSERT_EQ(m.status, 200) << m.error;
  EXPECT_NE(m.header("content-type").find("text/plain"), std::string::npos);
  const std::string& t = m.body;
  EXPECT_NE(t.find("# TYPE nki_agent_requests_total counter"), std::string::npos) << t;
  EXPECT_NE(t.find(R"(nki_agent_requests_total{route="/health",code="200"})"), std::string::npos) << t;
  EXPECT_NE(t.find(R"(nki_agent_requests_total{route="/v1/reward",code="200"})"), std::string::npos) << t;
  EXPECT_NE(t.find(R"(nki_agent_request_seconds_bucket{route="/v1/reward",le="+Inf"})"), std::string::npos) << t;
  EXPECT_NE(t.find(R"(nki_agent_rewards_total{preset="nki"})"), std::string::npos) << t;
  const size_t at = t.find("\nnki_agent_reward_cache_hits_total ");
  ASSERT_NE(at, std::string::npos) << t;
  EXPECT_GE(std::stod(t.substr(at + std::string("\nnki_agent_reward_cache_hits_total ").size())), 1.0);
  EXPECT_NE(t.find("\nnki_agent_reward_cache_misses_total "), std::string::npos);
  EXPECT_NE(t.find("\nnki_agent_in_flight "), std::string::npos);
  EXPECT_NE(t.find("\nnki_agent_queue_depth "), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// A server with tokens and room for one item running and one waiting.

const std::string kToken = "test-token-0123456789abcdef";

class ServeHttpGuarded : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("nkia-serve-http-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    std::ofstream(dir_ / "tokens") << "# the trainer\n" << kToken << "\n";
    ServeOptions o = options(/*workers=*/1, /*queue=*/1, /*kernel_workers=*/1);
    o.tokens_file = (dir_ / "tokens").string();
    running_ = Running::start(std::move(o)).release();
  }
  static void TearDownTestSuite() {
    if (running_ != nullptr) running_->stop();
    delete running_;
    running_ = nullptr;
    fs::remove_all(dir_);
  }
  void SetUp() override { ASSERT_NE(running_, nullptr); }

  static HttpResponse post(const std::string& path, const json& body, const std::string& auth) {
    std::vector<std::string> h;
    if (!auth.empty()) h.push_back("Authorization: " + auth);
    return call(running_->port(), path, body.dump(), false, h);
  }
  static HttpResponse get(const std::string& path, const std::string& auth = "") {
    std::vector<std::string> h;
    if (!auth.empty()) h.push_back("Authorization: " + auth);
    return call(running_->port(), path, "", true, h);
  }

  static inline Running* running_ = nullptr;
  static inline fs::path dir_;
};

// A request that costs no kernel run: no code in the answer.
json no_code() {
  return {{"task_id", "add_fp32"}, {"response", "no code here"}};
}

TEST_F(ServeHttpGuarded, EveryRouteButHealthNeedsTheToken) {
  for (const std::string& auth : {std::string(""), std::string("Bearer wrong-token-0123456789abcdef"),
                                  std::string("Bearer ") + kToken + "x", kToken, "Basic " + kToken}) {
    const HttpResponse r = post("/v1/reward", no_code(), auth);
    ASSERT_EQ(r.outcome, HttpOutcome::kOk) << r.error;
    EXPECT_EQ(r.status, 401) << "'" << auth << "': " << r.body;
    EXPECT_EQ(body_json(r)["error"]["code"], "nkia_serve_unauthorized") << r.body;
  }
  const HttpResponse ok = post("/v1/reward", no_code(), "Bearer " + kToken);
  ASSERT_EQ(ok.status, 200) << ok.body;
  EXPECT_EQ(body_json(ok)["status"], "format_error");

  const HttpResponse health = get("/health");
  EXPECT_EQ(health.status, 200) << health.body;
  EXPECT_EQ(get("/metrics").status, 401);
  EXPECT_EQ(get("/metrics", "Bearer " + kToken).status, 200);
  EXPECT_EQ(get("/status/anything").status, 401);
  // Trainers that send no headers put the token in the URL.
  EXPECT_EQ(post("/v1/reward?token=" + kToken, no_code(), "").status, 200);
  EXPECT_EQ(post("/v1/reward?token=" + kToken + "x", no_code(), "").status, 401);
  EXPECT_EQ(post("/v1/reward?token=", no_code(), "").status, 401);
  EXPECT_EQ(post("/get_reward", {{"query", {"x"}}, {"labels", {"add_fp32"}}}, "").status, 401);
}

TEST_F(ServeHttpGuarded, ABatchThatNeverFitsIs400AndOneThatDoesNotFitNowIs429WithRetryAfter) {
  const std::string auth = "Bearer " + kToken;
  // Three items can never be admitted by 1 worker + 1 queued: retrying would not help.
  const HttpResponse never = post("/v1/reward/batch", {{"items", {no_code(), no_code(), no_code()}}}, auth);
  ASSERT_EQ(never.outcome, HttpOutcome::kOk) << never.error;
  EXPECT_EQ(never.status, 400) << never.body;
  EXPECT_EQ(body_json(never)["error"]["code"], "nkia_reward_bad_request") << never.body;
  // Two items fit an idle server but not one with a request in flight: 429, retry later. The
  // request in flight is a kernel not verified before (its seeds make it new), polled until the
  // server counts it.
  HttpResponse busy;
  for (int seeds = 2; seeds <= 8 && busy.status != 429; ++seeds) {
    json slow = {{"task_id", "add_fp32"},
                 {"kernel_code", read_text(kTasks / "slow" / "add_fp32_narrow_tiles.py")},
                 {"seeds", seeds}};
    std::atomic<bool> done{false};
    std::thread inflight([&] {
      post("/v1/reward", slow, auth);
      done = true;
    });
    while (!done) {
      const json h = body_json(get("/health"));
      if (h.value("in_flight", 0) + h.value("queued", 0) >= 1) {
        busy = post("/v1/reward/batch", {{"items", {no_code(), no_code()}}}, auth);
        break;
      }
    }
    inflight.join();
  }
  ASSERT_EQ(busy.status, 429) << busy.body;
  EXPECT_EQ(busy.header("retry-after"), "1");
  EXPECT_EQ(body_json(busy)["error"]["code"], "nkia_serve_busy") << busy.body;
  // Two items fit (one running, one waiting); malformed items take no place.
  const HttpResponse fits =
      post("/v1/reward/batch", {{"items", {no_code(), no_code(), {{"task_id", 1}}, {{"bad", true}}}}}, auth);
  ASSERT_EQ(fits.status, 200) << fits.body;
  const json j = body_json(fits);
  ASSERT_EQ(j["results"].size(), 4u);
  EXPECT_EQ(j["results"][0]["status"], "format_error");
  EXPECT_EQ(j["results"][1]["status"], "format_error");
  EXPECT_EQ(j["results"][2]["status"], "error");
  EXPECT_EQ(j["results"][3]["status"], "error");
  // The 429 is counted.
  const HttpResponse m = get("/metrics", auth);
  ASSERT_EQ(m.status, 200);
  EXPECT_NE(m.body.find(R"(nki_agent_requests_total{route="/v1/reward/batch",code="429"} 1)"), std::string::npos)
      << m.body;
  EXPECT_NE(m.body.find("\nnki_agent_rejected_busy_total "), std::string::npos) << m.body;
}

// ---------------------------------------------------------------------------------------------
// Shutdown.

// A server of its own with a batch of `kernels` kernels no test scored before (so they run now,
// one after the other) in flight, and shutdown() called on another thread once the batch runs.
struct Draining {
  std::unique_ptr<Running> running;
  std::thread client, stopper;
  HttpResponse in_flight;
  std::atomic<bool> answered{false};
  bool running_seen = false, draining_seen = false;
  int port = 0;

  void begin(int kernels, const std::string& tag) {
    running = Running::start(options(/*workers=*/1, /*queue=*/8, /*kernel_workers=*/1));
    if (!running) return;
    port = running->port();
    json items = json::array();
    for (int i = 0; i < kernels; ++i)
      items.push_back(reward_body(baseline() + "\n# " + tag + " " + std::to_string(i) + " of " +
                                  std::to_string(::getpid()) + "\n"));
    client = std::thread([this, body = json{{"items", items}}.dump()] {
      in_flight = call(port, "/v1/reward/batch", body);
      answered = true;
    });
    // Deadlines, not speed checks.
    for (auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
         !running_seen && !answered && std::chrono::steady_clock::now() < give_up;) {
      const HttpResponse h = call(port, "/health", "", true);
      running_seen = h.status == 200 && body_json(h).value("in_flight", 0) >= 1;
      if (!running_seen) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (!running_seen) return;
    stopper = std::thread([this] { running->server->shutdown(120); });
    for (auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
         !draining_seen && !answered && std::chrono::steady_clock::now() < give_up;) {
      const HttpResponse h = call(port, "/health", "", true);
      draining_seen = h.status == 200 && body_json(h).value("status", "") == "draining";
    }
  }
  void finish() {
    if (running && !stopper.joinable()) running->server->shutdown(120);
    if (stopper.joinable()) stopper.join();
    if (client.joinable()) client.join();
    if (running && running->thread.joinable()) running->thread.join();
  }
  ~Draining() { finish(); }
};

// shutdown() while a request is being scored: new requests are refused (503), the one in flight
// finishes and is answered 200, then the listener closes.
TEST(ServeHttpShutdown, ARequestInFlightFinishesAndNewOnesAreRefused) {
  Draining d;
  d.begin(3, "in flight during shutdown");
  ASSERT_NE(d.running, nullptr);
  ASSERT_TRUE(d.running_seen) << "the batch was never seen in flight";
  if (d.draining_seen) {
    const HttpResponse refused = call(d.port, "/v1/reward", json{{"task_id", "add_fp32"}, {"response", "x"}}.dump());
    if (refused.status != 0) {  // 0: the batch finished meanwhile and the listener is closed
      EXPECT_EQ(refused.status, 503) << refused.body;
      EXPECT_EQ(refused.header("retry-after"), "5");
      EXPECT_EQ(body_json(refused)["error"]["code"], "nkia_serve_draining") << refused.body;
    }
  }
  d.finish();
  ASSERT_EQ(d.in_flight.outcome, HttpOutcome::kOk) << d.in_flight.error;
  EXPECT_EQ(d.in_flight.status, 200) << d.in_flight.body;
  const json j = body_json(d.in_flight);
  ASSERT_EQ(j["results"].size(), 3u) << d.in_flight.body;
  for (const auto& r : j["results"]) {
    EXPECT_EQ(r["status"], "ok") << r.dump();
    EXPECT_EQ(r["components"]["correct"], 1) << r.dump();
  }
  // The listener is closed.
  EXPECT_NE(call(d.port, "/health", "", true).outcome, HttpOutcome::kOk);
  // A second shutdown is harmless.
  d.running->server->shutdown(0);
}

// docs/serve.md: while draining, a refusal is 503 with Retry-After, on every route that admits.
TEST(ServeHttpShutdown, EveryRouteRefusesWith503AndRetryAfterWhileDraining) {
  Draining d;
  d.begin(4, "in flight while the routes are probed");
  ASSERT_NE(d.running, nullptr);
  ASSERT_TRUE(d.running_seen) << "the batch was never seen in flight";
  if (!d.draining_seen) GTEST_SKIP() << "the batch finished before draining was seen";
  const std::vector<std::pair<std::string, json>> probes = {
      {"/v1/reward", {{"task_id", "add_fp32"}, {"response", "x"}}},
      {"/v1/compile", {{"task_id", "add_fp32"}, {"kernel_code", baseline()}}},
      {"/get_reward", {{"query", {"x"}}, {"labels", {"add_fp32"}}}},
      {"/rm", {{"response", "x"}, {"label", "add_fp32"}}},
      {"/evaluate", {{"task_id", "add_fp32"}, {"kernel_code", baseline()}}},
      {"/reward", {{"op", "compile"}, {"task_id", "add_fp32"}, {"kernel_source", baseline()}}}};
  int answered = 0;
  for (const auto& [path, body] : probes) {
    const HttpResponse r = call(d.port, path, body.dump());
    if (r.status == 0) continue;  // the batch finished meanwhile and the listener is closed
    ++answered;
    EXPECT_EQ(r.status, 503) << path << ": " << r.body;
    EXPECT_EQ(r.header("retry-after"), "5") << path;
    const json j = body_json(r);
    EXPECT_EQ(j.is_object() && j.contains("error") ? j["error"].value("code", "") : "", "nkia_serve_draining")
        << path << ": " << r.body;
  }
  std::printf("probed %d of %zu routes while draining\n", answered, probes.size());
  d.finish();
  EXPECT_EQ(d.in_flight.status, 200) << d.in_flight.body;
}

// ---------------------------------------------------------------------------------------------
// A slow client: one that sends half a request and then nothing holds one connection until the
// read timeout, and no one else waits for it.

TEST(ServeHttpSlowClient, AStalledRequestIsDroppedAfterTheReadTimeoutAndOthersAreServedMeanwhile) {
  ServeOptions o = options(1, 1, 1);
  o.read_timeout_seconds = 1;
  auto running = Running::start(o);
  ASSERT_NE(running, nullptr);
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(running->port()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  const std::string half =
      "POST /v1/reward HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
      "Content-Length: 1000\r\n\r\n{\"task_id\": ";
  ASSERT_EQ(::send(fd, half.data(), half.size(), MSG_NOSIGNAL), static_cast<ssize_t>(half.size()));
  // Served while the stalled connection is open.
  const HttpResponse h = call(running->port(), "/health", "", true);
  EXPECT_EQ(h.status, 200) << h.body;
  const HttpResponse r = call(running->port(), "/v1/reward", json{{"task_id", "add_fp32"}, {"response", "x"}}.dump());
  EXPECT_EQ(r.status, 200) << r.body;
  // The stalled connection is closed by the server (after any answer it sends), within a bound.
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  char buf[4096];
  ssize_t n;
  std::string answer;
  while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) answer.append(buf, static_cast<size_t>(n));
  EXPECT_EQ(n, 0) << "the stalled connection was not closed within 10 s (errno " << errno << ")";
  ::close(fd);
  // And the server is unaffected.
  EXPECT_EQ(call(running->port(), "/health", "", true).status, 200);
  running->stop();
}

}  // namespace
}  // namespace nki_agent::serve
