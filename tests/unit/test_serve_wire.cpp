// nkia-shards: 2 (short tests, each of which would otherwise start a process of its own)
//
// The reward service's wire formats and guards without a server (serve/wire.h, auth.h,
// admission.h, metrics.h; docs/serve.md): the body's depth limit and JSON checks, every field of a
// reward request type-checked, the batch cap, the adapters (OpenRLHF, slime, KernelGYM, the
// op-based reward server) translating to requests and back into exactly the fields their clients
// read (RL-CONVENTIONS.md §3, §3.1, §4.5), bearer tokens, the loopback test, the bounded queue and
// the Prometheus text.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "serve/admission.h"
#include "serve/auth.h"
#include "serve/metrics.h"
#include "serve/wire.h"

namespace nki_agent::serve {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string nested_arrays(int depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

std::string error_of(const Result<RewardRequest>& r) {
  return r ? std::string("(accepted)") : r.error().code;
}

const std::string kCode = "@nki.jit\ndef kernel(x, y):\n    return x\n";

json base_request() {
  return {{"task_id", "add_fp32"}, {"kernel_code", kCode}};
}

json with(json j, const std::string& key, json value) {
  j[key] = std::move(value);
  return j;
}

// ---------------------------------------------------------------------------------------------
// The body.

TEST(ServeWireBody, DepthSixtyFourIsAcceptedAndSixtyFiveRefused) {
  auto ok = parse_json_body(nested_arrays(64));
  ASSERT_TRUE(ok) << ok.error().format();
  EXPECT_TRUE(ok->is_array());
  auto deep = parse_json_body(nested_arrays(65));
  ASSERT_FALSE(deep);
  EXPECT_EQ(deep.error().code, "nkia_serve_bad_json");
  EXPECT_NE(deep.error().message.find("64"), std::string::npos) << deep.error().message;
  // Objects count like arrays, and mixed.
  std::string objects;
  for (int i = 0; i < 65; ++i) objects += i % 2 ? "[" : "{\"k\":";
  EXPECT_FALSE(parse_json_body(objects));
  // Very deep bodies are refused without being parsed (no recursion into them).
  auto hostile = parse_json_body(nested_arrays(1'000'000));
  ASSERT_FALSE(hostile);
  EXPECT_EQ(hostile.error().code, "nkia_serve_bad_json");
  // A smaller limit given.
  EXPECT_TRUE(parse_json_body(nested_arrays(3), 3));
  EXPECT_FALSE(parse_json_body(nested_arrays(4), 3));
}

TEST(ServeWireBody, BracketsInsideStringsAreNotCounted) {
  const json j = {{"response", std::string(1000, '[') + "\\\"" + std::string(1000, '{')}, {"x", "]]]"}};
  auto r = parse_json_body(j.dump());
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ((*r)["x"], "]]]");
  // An escaped quote does not end the string: the brackets after it are still inside.
  auto esc =
      parse_json_body(R"({"a": "\" [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[ \\"})");
  ASSERT_TRUE(esc) << esc.error().format();
  // 64 levels around a string full of brackets: still 64.
  const std::string wrapped = std::string(63, '[') + "{\"k\": \"[[[[{{{{\"}" + std::string(63, ']');
  EXPECT_TRUE(parse_json_body(wrapped));
}

TEST(ServeWireBody, InvalidJsonIsRefused) {
  for (const char* body : {"", "{", "{\"task_id\": ", "not json", "{\"a\": 1,}", "[1, 2", "{'a': 1}", "\x01\x02"}) {
    auto r = parse_json_body(body);
    ASSERT_FALSE(r) << body;
    EXPECT_EQ(r.error().code, "nkia_serve_bad_json") << body;
  }
  EXPECT_TRUE(parse_json_body("{}"));
  EXPECT_TRUE(parse_json_body("  {\"a\": [1, {\"b\": null}]}  "));
}

TEST(ServeWireBody, ErrorBodyIsCodeAndMessage) {
  const json j = error_body(Diagnostic::error("nkia_serve_busy", "full", "a hint"));
  EXPECT_EQ(j, (json{{"error", {{"code", "nkia_serve_busy"}, {"message", "full"}}}}));
}

// ---------------------------------------------------------------------------------------------
// POST /v1/reward.

TEST(ServeWireReward, AGoodRequestWithEveryField) {
  const json j = {{"task_id", "add_fp32"}, {"response", "p+r"},  {"prompt", "p+"},
                  {"preset", "kevin"},     {"presets", {"nki"}}, {"turns", "all"},
                  {"gamma", 0.5},          {"seeds", 3},         {"speed", false}};
  auto r = reward_request_from_json(j);
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(r->task_id, "add_fp32");
  EXPECT_EQ(r->submission.response, "p+r");
  EXPECT_EQ(r->submission.prompt, "p+");
  EXPECT_FALSE(r->submission.kernel_code.has_value());
  EXPECT_FALSE(r->submission.tool_call.has_value());
  EXPECT_EQ(r->preset, "kevin");
  EXPECT_EQ(r->presets, std::vector<std::string>{"nki"});
  EXPECT_TRUE(r->all_turns);
  ASSERT_TRUE(r->gamma.has_value());
  EXPECT_DOUBLE_EQ(*r->gamma, 0.5);
  EXPECT_EQ(r->seeds, 3);
  EXPECT_FALSE(r->speed);
}

TEST(ServeWireReward, DefaultsWhenOnlyTheTaskAndTheKernelAreGiven) {
  auto r = reward_request_from_json(base_request());
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(r->preset, "nki");
  EXPECT_TRUE(r->presets.empty());
  EXPECT_FALSE(r->all_turns);
  EXPECT_FALSE(r->gamma.has_value());
  EXPECT_EQ(r->seeds, 0);
  EXPECT_TRUE(r->speed);
  ASSERT_TRUE(r->submission.kernel_code.has_value());
  EXPECT_EQ(*r->submission.kernel_code, kCode);
  // Nulls are as good as absent.
  auto n =
      reward_request_from_json(with(with(with(base_request(), "gamma", nullptr), "seeds", nullptr), "preset", nullptr));
  ASSERT_TRUE(n) << n.error().format();
  EXPECT_EQ(n->preset, "nki");
  EXPECT_EQ(n->seeds, 0);
}

TEST(ServeWireReward, EveryFieldOfTheWrongTypeIsABadRequest) {
  const std::vector<std::pair<std::string, json>> bad = {{"task_id", 7},
                                                         {"task_id", json::array()},
                                                         {"kernel_code", 12},
                                                         {"response", 3},
                                                         {"response", true},
                                                         {"tool_call", "verify"},
                                                         {"tool_call", json::array()},
                                                         {"prompt", 1},
                                                         {"preset", 2},
                                                         {"presets", "nki"},
                                                         {"presets", {1, 2}},
                                                         {"turns", "first"},
                                                         {"turns", 2},
                                                         {"gamma", "0.5"},
                                                         {"gamma", true},
                                                         {"seeds", "3"},
                                                         {"seeds", 2.5},
                                                         {"speed", "yes"},
                                                         {"speed", 1}};
  for (const auto& [key, value] : bad) {
    json j = base_request();
    if (key == "response" || key == "tool_call") j.erase("kernel_code");
    j[key] = value;
    auto r = reward_request_from_json(j);
    ASSERT_FALSE(r) << key << " = " << value.dump();
    EXPECT_EQ(r.error().code, "nkia_reward_bad_request") << key;
    EXPECT_NE(r.error().message.find(key), std::string::npos) << key << ": " << r.error().message;
  }
  // Not an object at all.
  for (const json& j : {json::array(), json("add_fp32"), json(3), json(nullptr)})
    EXPECT_EQ(error_of(reward_request_from_json(j)), "nkia_reward_bad_request") << j.dump();
  // The task is required.
  json no_task = base_request();
  no_task.erase("task_id");
  EXPECT_EQ(error_of(reward_request_from_json(no_task)), "nkia_reward_bad_request");
}

TEST(ServeWireReward, ExactlyOneOfResponseKernelCodeAndToolCall) {
  const json call = {{"name", "verify"}, {"arguments", {{"kernel_code", kCode}}}};
  json none = {{"task_id", "add_fp32"}};
  EXPECT_EQ(error_of(reward_request_from_json(none)), "nkia_reward_bad_request");
  EXPECT_EQ(error_of(reward_request_from_json(with(base_request(), "response", "text"))), "nkia_reward_bad_request");
  EXPECT_EQ(error_of(reward_request_from_json(with(base_request(), "tool_call", call))), "nkia_reward_bad_request");
  json all3 = with(with(base_request(), "response", "x"), "tool_call", call);
  EXPECT_EQ(error_of(reward_request_from_json(all3)), "nkia_reward_bad_request");
  // One given, the others null: fine.
  auto t = reward_request_from_json(
      {{"task_id", "a"}, {"tool_call", call}, {"response", nullptr}, {"kernel_code", nullptr}});
  ASSERT_TRUE(t) << t.error().format();
  ASSERT_TRUE(t->submission.tool_call.has_value());
  EXPECT_EQ(*t->submission.tool_call, call);
  // A response may be a conversation: the contents joined.
  auto conv = reward_request_from_json(
      {{"task_id", "a"},
       {"response", {{{"role", "assistant"}, {"content", "first"}}, {{"role", "assistant"}, {"content", "second"}}}}});
  ASSERT_TRUE(conv) << conv.error().format();
  EXPECT_NE(conv->submission.response.find("first"), std::string::npos);
  EXPECT_NE(conv->submission.response.find("second"), std::string::npos);
  EXPECT_LT(conv->submission.response.find("first"), conv->submission.response.find("second"));
}

TEST(ServeWireReward, TurnsGammaAndSeeds) {
  auto last = reward_request_from_json(with(base_request(), "turns", "last"));
  ASSERT_TRUE(last);
  EXPECT_FALSE(last->all_turns);
  auto all = reward_request_from_json(with(base_request(), "turns", "all"));
  ASSERT_TRUE(all);
  EXPECT_TRUE(all->all_turns);
  EXPECT_EQ(error_of(reward_request_from_json(with(base_request(), "turns", "ALL"))), "nkia_reward_bad_request");
  for (double g : {0.0, 0.4, 1.0}) {
    auto r = reward_request_from_json(with(base_request(), "gamma", g));
    ASSERT_TRUE(r) << g;
    EXPECT_DOUBLE_EQ(*r->gamma, g);
  }
  auto gi = reward_request_from_json(with(base_request(), "gamma", 1));  // an integer is a number
  ASSERT_TRUE(gi);
  EXPECT_DOUBLE_EQ(*gi->gamma, 1.0);
  for (int s : {1, 64}) {
    auto r = reward_request_from_json(with(base_request(), "seeds", s));
    ASSERT_TRUE(r) << s;
    EXPECT_EQ(r->seeds, s);
  }
  for (const json& s : {json(0), json(65), json(-1), json(int64_t{1} << 40), json(uint64_t{18446744073709551615ull})})
    EXPECT_EQ(error_of(reward_request_from_json(with(base_request(), "seeds", s))), "nkia_reward_bad_request")
        << s.dump();
}

TEST(ServeWireReward, AnInlineReferenceIsTheTask) {
  for (const char* f : {"reference_code", "reference_source"}) {
    auto r = reward_request_from_json(with(base_request(), f, "import torch\nclass Model: ..."));
    ASSERT_TRUE(r) << f << ": " << r.error().format();
    ASSERT_TRUE(r->inline_reference) << f;
    EXPECT_EQ(r->inline_reference->code, "import torch\nclass Model: ...");
    EXPECT_EQ(r->inline_reference->entry_point, "Model");
    EXPECT_EQ(r->inline_reference->kernel_entry, "kernel");
    EXPECT_FALSE(r->inline_reference->atol);
  }
  // With its own reference a request needs no task_id; its fields are read and type-checked.
  json j = base_request();
  j.erase("task_id");
  EXPECT_EQ(error_of(reward_request_from_json(j)), "nkia_reward_bad_request");
  j["reference_code"] = "class Foo: ...";
  j["entry_point"] = "Foo";
  j["kernel_name"] = "my_kernel";
  j["atol"] = 1e-3;
  auto r = reward_request_from_json(j);
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(r->inline_reference->entry_point, "Foo");
  EXPECT_EQ(r->inline_reference->kernel_entry, "my_kernel");
  EXPECT_EQ(r->inline_reference->atol.value_or(0), 1e-3);
  for (const auto& [field, value] : {std::pair{"atol", json("small")}, std::pair{"entry_point", json(3)},
                                     std::pair{"reference_source", json("class Model: ...")}})
    EXPECT_EQ(error_of(reward_request_from_json(with(j, field, value))), "nkia_reward_bad_request") << field;
  // An empty one carries nothing.
  auto empty = reward_request_from_json(with(base_request(), "reference_code", ""));
  ASSERT_TRUE(empty);
  EXPECT_FALSE(empty->inline_reference);
}

TEST(ServeWireReward, ABatchIsItemsEachParsedOnItsOwnAndCapped) {
  json j = {{"items", {base_request(), {{"task_id", 7}}, with(base_request(), "preset", "kevin")}}};
  auto b = batch_requests_from_json(j);
  ASSERT_TRUE(b) << b.error().format();
  ASSERT_EQ(b->size(), 3u);
  EXPECT_TRUE((*b)[0]);
  ASSERT_FALSE((*b)[1]);
  EXPECT_EQ((*b)[1].error().code, "nkia_reward_bad_request");
  ASSERT_TRUE((*b)[2]);
  EXPECT_EQ((*b)[2]->preset, "kevin");

  json full = {{"items", json::array()}};
  for (size_t i = 0; i < kMaxBatchItems; ++i) full["items"].push_back(base_request());
  auto ok = batch_requests_from_json(full);
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->size(), kMaxBatchItems);
  full["items"].push_back(base_request());
  auto over = batch_requests_from_json(full);
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().code, "nkia_reward_bad_request");

  for (const json& bad : {json::array(), json::object(), json{{"items", "x"}}, json{{"item", json::array()}}})
    EXPECT_FALSE(batch_requests_from_json(bad)) << bad.dump();
  auto empty = batch_requests_from_json({{"items", json::array()}});
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->empty());
}

TEST(ServeWireReward, ToolRequestsNeedTheTaskAndTheKernel) {
  auto t = tool_request_from_json({{"task_id", "add_fp32"}, {"kernel_code", kCode}});
  ASSERT_TRUE(t);
  EXPECT_EQ(t->task_id, "add_fp32");
  EXPECT_EQ(t->kernel_code, kCode);
  EXPECT_FALSE(tool_request_from_json({{"task_id", "add_fp32"}}));
  EXPECT_FALSE(tool_request_from_json({{"kernel_code", kCode}}));
  EXPECT_FALSE(tool_request_from_json({{"task_id", 1}, {"kernel_code", kCode}}));
  EXPECT_FALSE(tool_request_from_json(json::array()));

  ToolResult ok;
  ok.compiled = true;
  ok.content = "COMPILED";
  ok.data = {{"compiled", true}};
  const json a = tool_answer(ok);
  EXPECT_EQ(a["ok"], true);
  EXPECT_EQ(a["content"], "COMPILED");
  EXPECT_EQ(a["data"]["compiled"], true);
  ToolResult failed_verify;
  failed_verify.verified = true;
  failed_verify.passed = false;
  EXPECT_EQ(tool_answer(failed_verify)["ok"], false);
  ToolResult err;
  err.is_error = true;
  err.compiled = true;
  EXPECT_EQ(tool_answer(err)["ok"], false);
}

// ---------------------------------------------------------------------------------------------
// OpenRLHF.

RewardResult result(double score, double correct, double compile = 1, std::vector<std::string> flags = {}) {
  RewardResult r;
  r.status = "ok";
  r.score = score;
  r.preset = "nki";
  r.components.format = 1;
  r.components.compile = compile;
  r.components.correct = correct;
  r.flags = std::move(flags);
  return r;
}

TEST(ServeWireOpenRlhf, LabelsAsATaskIdAJsonTextObjectOrAnObject) {
  const json j = {{"query", {"P1 ```python\nA\n```", "P2 answer", "P3 answer"}},
                  {"prompts", {"P1 ", "P2 ", "P3 "}},
                  {"labels",
                   {"add_fp32",
                    R"({"task_id": "int_scale", "preset": "kevin", "seeds": 2})",
                    {{"task_id", "layernorm_affine"}, {"turns", "all"}, {"kernel_code", "ignored"}}}}};
  auto items = openrlhf_requests(j);
  ASSERT_TRUE(items) << items.error().format();
  ASSERT_EQ(items->size(), 3u);
  for (const auto& i : *items) ASSERT_TRUE(i) << i.error().format();
  const RewardRequest& a = *(*items)[0];
  EXPECT_EQ(a.task_id, "add_fp32");
  EXPECT_EQ(a.submission.response, "P1 ```python\nA\n```");
  EXPECT_EQ(a.submission.prompt, "P1 ");
  EXPECT_EQ(a.preset, "nki");
  const RewardRequest& b = *(*items)[1];
  EXPECT_EQ(b.task_id, "int_scale");
  EXPECT_EQ(b.preset, "kevin");
  EXPECT_EQ(b.seeds, 2);
  const RewardRequest& c = *(*items)[2];
  EXPECT_EQ(c.task_id, "layernorm_affine");
  EXPECT_TRUE(c.all_turns);
  // The query is the answer: a kernel_code in a label does not replace it.
  EXPECT_FALSE(c.submission.kernel_code.has_value());
  EXPECT_EQ(c.submission.response, "P3 answer");
}

TEST(ServeWireOpenRlhf, BadLabelsAreItemErrorsAndMismatchedCountsRefuseTheWhole) {
  auto items = openrlhf_requests(
      {{"query", {"a", "b", "c", "d"}}, {"labels", {7, "{not json", R"({"preset": "kevin"})", R"({"task_id": "t"})"}}});
  ASSERT_TRUE(items) << items.error().format();
  ASSERT_EQ(items->size(), 4u);
  EXPECT_FALSE((*items)[0]);
  EXPECT_FALSE((*items)[1]);
  EXPECT_FALSE((*items)[2]);  // no task_id
  EXPECT_TRUE((*items)[3]);
  // Prompts may be absent.
  EXPECT_EQ((*items)[3]->submission.prompt, "");

  auto fewer = openrlhf_requests({{"query", {"a", "b"}}, {"labels", {"add_fp32"}}});
  ASSERT_FALSE(fewer);
  EXPECT_EQ(fewer.error().code, "nkia_reward_bad_request");
  auto none = openrlhf_requests({{"query", {"a"}}});
  ASSERT_FALSE(none);
  EXPECT_FALSE(openrlhf_requests({{"labels", {"add_fp32"}}}));
  EXPECT_FALSE(openrlhf_requests({{"query", "a"}, {"labels", "add_fp32"}}));
  json big = {{"query", json::array()}, {"labels", json::array()}};
  for (size_t i = 0; i <= kMaxBatchItems; ++i) {
    big["query"].push_back("q");
    big["labels"].push_back("add_fp32");
  }
  EXPECT_FALSE(openrlhf_requests(big));
}

TEST(ServeWireOpenRlhf, TheAnswerHasExactlyRewardsScoresAndExtraLogs) {
  std::vector<RewardResult> results = {result(1.7, 1), result(0, 0, 1, {"zero_output"}),
                                       RewardResult::failure(Diagnostic::error("nkia_internal", "x"))};
  RewardResult format_error;
  format_error.status = "format_error";
  format_error.score = -1;  // e.g. cuda_agent's floor
  results.push_back(format_error);
  const json a = openrlhf_answer(results);
  std::set<std::string> keys;
  for (auto it = a.begin(); it != a.end(); ++it) keys.insert(it.key());
  EXPECT_EQ(keys, (std::set<std::string>{"rewards", "scores", "extra_logs"}));
  EXPECT_EQ(a["rewards"], json::array({1.7, 0.0, 0.0, -1.0}));
  EXPECT_EQ(a["scores"], json::array({1.0, 0.0, 0.0, 0.0}));  // the correct component: dynamic filtering
  const json& logs = a["extra_logs"];
  ASSERT_TRUE(logs.is_object());
  EXPECT_EQ(logs["nki_errors"], 1);
  EXPECT_EQ(logs["nki_correct"], json::array({1.0, 0.0, 0.0, 0.0}));
  EXPECT_EQ(logs["nki_compiled"], json::array({1.0, 1.0, 0.0, 0.0}));
  EXPECT_EQ(logs["nki_flagged"], json::array({0, 1, 0, 0}));
  // One reward per query, in order, also for an empty batch.
  const json empty = openrlhf_answer({});
  EXPECT_EQ(empty["rewards"], json::array());
  EXPECT_EQ(empty["scores"], json::array());
}

// ---------------------------------------------------------------------------------------------
// slime.

TEST(ServeWireSlime, ARequestAndABareNumber) {
  auto r = slime_request({{"prompt", "P "}, {"response", "P ```python\nA\n```"}, {"label", "add_fp32"}});
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(r->task_id, "add_fp32");
  EXPECT_EQ(r->submission.prompt, "P ");
  EXPECT_EQ(r->submission.response, "P ```python\nA\n```");
  auto obj = slime_request({{"response", "x"}, {"label", {{"task_id", "int_scale"}, {"preset", "cuda_agent"}}}});
  ASSERT_TRUE(obj) << obj.error().format();
  EXPECT_EQ(obj->task_id, "int_scale");
  EXPECT_EQ(obj->preset, "cuda_agent");
  auto text = slime_request({{"response", "x"}, {"label", R"({"task_id": "int_scale", "gamma": 0.3})"}});
  ASSERT_TRUE(text) << text.error().format();
  ASSERT_TRUE(text->gamma);
  EXPECT_DOUBLE_EQ(*text->gamma, 0.3);

  EXPECT_FALSE(slime_request({{"prompt", "p"}, {"label", "add_fp32"}}));  // no response
  EXPECT_FALSE(slime_request({{"response", "x"}}));                       // no label
  EXPECT_FALSE(slime_request({{"response", "x"}, {"label", 3}}));
  EXPECT_FALSE(slime_request({{"response", 3}, {"label", "add_fp32"}}));
  EXPECT_FALSE(slime_request(json::array()));

  const json n = slime_answer(result(1.25, 1));
  EXPECT_TRUE(n.is_number());
  EXPECT_EQ(n.dump(), "1.25");
  const json err = slime_answer(RewardResult::failure(Diagnostic::error("nkia_internal", "x")));
  EXPECT_TRUE(err.is_number());
  EXPECT_EQ(err.get<double>(), 0.0);
  RewardResult floor = result(-1, 0);
  EXPECT_EQ(slime_answer(floor).get<double>(), -1.0);
}

// ---------------------------------------------------------------------------------------------
// KernelGYM.

TEST(ServeWireKernelGym, TheTaskIsMetadataTaskElseTaskId) {
  std::string id;
  auto r = kernelgym_request({{"task_id", "eval-42"},
                              {"kernel_code", kCode},
                              {"metadata", {{"task", "add_fp32"}}},
                              {"num_correct_trials", 5},
                              {"backend", "triton"},
                              {"num_perf_trials", 100}},
                             id);
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(id, "eval-42");
  EXPECT_EQ(r->task_id, "add_fp32");
  EXPECT_EQ(r->seeds, 5);
  ASSERT_TRUE(r->submission.kernel_code);
  EXPECT_EQ(*r->submission.kernel_code, kCode);

  auto plain = kernelgym_request({{"task_id", "add_fp32"}, {"kernel_code", kCode}}, id);
  ASSERT_TRUE(plain);
  EXPECT_EQ(id, "add_fp32");
  EXPECT_EQ(plain->task_id, "add_fp32");
  EXPECT_EQ(plain->seeds, 0);
  // A metadata.task that is not a string is ignored.
  auto odd = kernelgym_request({{"task_id", "add_fp32"}, {"kernel_code", kCode}, {"metadata", {{"task", 3}}}}, id);
  ASSERT_TRUE(odd);
  EXPECT_EQ(odd->task_id, "add_fp32");
  // Trials beyond the seed range are clamped into it.
  auto many = kernelgym_request({{"task_id", "t"}, {"kernel_code", kCode}, {"num_correct_trials", 1000}}, id);
  ASSERT_TRUE(many);
  EXPECT_EQ(many->seeds, 64);
  auto zero = kernelgym_request({{"task_id", "t"}, {"kernel_code", kCode}, {"num_correct_trials", 0}}, id);
  ASSERT_TRUE(zero);
  EXPECT_EQ(zero->seeds, 1);
}

TEST(ServeWireKernelGym, TaskIdLengthKernelCodeAndInlineReference) {
  std::string id;
  EXPECT_TRUE(kernelgym_request({{"task_id", "x"}, {"kernel_code", kCode}}, id));
  EXPECT_TRUE(kernelgym_request({{"task_id", std::string(100, 'a')}, {"kernel_code", kCode}}, id));
  for (const json& bad_id : {json(""), json(std::string(101, 'a')), json(5)}) {
    auto r = kernelgym_request({{"task_id", bad_id}, {"kernel_code", kCode}}, id);
    ASSERT_FALSE(r) << bad_id.dump();
    EXPECT_EQ(r.error().code, "nkia_reward_bad_request");
  }
  EXPECT_FALSE(kernelgym_request({{"kernel_code", kCode}}, id));
  EXPECT_FALSE(kernelgym_request({{"task_id", "x"}}, id));
  EXPECT_FALSE(kernelgym_request({{"task_id", "x"}, {"kernel_code", 1}}, id));
  auto inline_ref = kernelgym_request(
      {{"task_id", "x"}, {"kernel_code", kCode}, {"reference_code", "class Net: pass"}, {"entry_point", "Net"}}, id);
  ASSERT_TRUE(inline_ref) << inline_ref.error().format();
  ASSERT_TRUE(inline_ref->inline_reference);
  EXPECT_EQ(inline_ref->inline_reference->code, "class Net: pass");
  EXPECT_EQ(inline_ref->inline_reference->entry_point, "Net");
  // Beside a task of the server's (metadata.task) the reference is set aside, not refused.
  auto beside = kernelgym_request({{"task_id", "x"},
                                   {"kernel_code", kCode},
                                   {"reference_code", "class Model: pass"},
                                   {"metadata", {{"task", "add_fp32"}}}},
                                  id);
  ASSERT_TRUE(beside) << beside.error().format();
  EXPECT_EQ(beside->task_id, "add_fp32");
  EXPECT_FALSE(beside->inline_reference);
}

// RL-CONVENTIONS.md §4.5, EvaluationResponse: the fields we produce.
const std::set<std::string> kEvaluationFields = {
    "task_id",        "status",  "compiled", "correctness", "decoy_kernel", "reference_runtime",
    "kernel_runtime", "speedup", "metadata", "error_code",  "error_message"};

TEST(ServeWireKernelGym, TheAnswerHasEveryEvaluationResponseField) {
  RewardResult r = result(1.5, 1);
  r.components.speedup = 2.0;
  r.components.coverage = 0.3;
  r.verify = {{"passed", true},
              {"check", ""},
              {"message", ""},
              {"speed", {{"available", true}, {"baseline_seconds", 0.002}, {"candidate_seconds", 0.001}}}};
  const json a = kernelgym_answer("eval-1", r);
  for (const auto& f : kEvaluationFields) EXPECT_TRUE(a.contains(f)) << f;
  EXPECT_EQ(a["task_id"], "eval-1");
  EXPECT_EQ(a["status"], "completed");
  EXPECT_EQ(a["compiled"], true);
  EXPECT_EQ(a["correctness"], true);
  EXPECT_EQ(a["decoy_kernel"], false);
  EXPECT_DOUBLE_EQ(a["reference_runtime"].get<double>(), 2.0);  // milliseconds
  EXPECT_DOUBLE_EQ(a["kernel_runtime"].get<double>(), 1.0);
  EXPECT_EQ(a["speedup"], 2.0);
  EXPECT_TRUE(a["error_code"].is_null());
  EXPECT_TRUE(a["error_message"].is_null());
  ASSERT_TRUE(a["metadata"].is_object());
  EXPECT_EQ(a["metadata"]["preset"], "nki");
  EXPECT_EQ(a["metadata"]["coverage"], 0.3);
  EXPECT_EQ(a["metadata"]["excessive_speedup"], false);
  EXPECT_EQ(a["score"], 1.5);
  EXPECT_EQ(a["reward"], 1.5);
}

TEST(ServeWireKernelGym, ErrorCodesFollowTheFailedCheck) {
  auto answer_for = [](double compile, double correct, const std::string& check, std::vector<std::string> flags = {}) {
    RewardResult r = result(0, correct, compile, std::move(flags));
    r.verify = {{"passed", false}, {"check", check}, {"message", "it failed: " + check}};
    return kernelgym_answer("id", r);
  };
  const json mismatch = answer_for(1, 0, "mismatch");
  for (const auto& f : kEvaluationFields) EXPECT_TRUE(mismatch.contains(f)) << f;
  EXPECT_EQ(mismatch["status"], "completed");
  EXPECT_EQ(mismatch["error_code"], "CORRECTNESS_ERROR");
  EXPECT_EQ(mismatch["error_message"], "it failed: mismatch");
  EXPECT_EQ(mismatch["correctness"], false);
  EXPECT_TRUE(mismatch["reference_runtime"].is_null());
  EXPECT_TRUE(mismatch["kernel_runtime"].is_null());
  EXPECT_TRUE(mismatch["speedup"].is_null());
  EXPECT_EQ(answer_for(1, 0, "kernel_error")["error_code"], "RUNTIME_ERROR");
  EXPECT_EQ(answer_for(0, 0, "kernel_error")["error_code"], "COMPILATION_ERROR");
  EXPECT_EQ(answer_for(0, 0, "static_policy")["error_code"], "VALIDATION_ERROR");
  // A flagged incorrect kernel is a decoy.
  const json decoy = answer_for(1, 0, "zero_output", {"zero_output"});
  EXPECT_EQ(decoy["decoy_kernel"], true);
  EXPECT_EQ(decoy["metadata"]["flags"], json::array({"zero_output"}));

  RewardResult fe;
  fe.status = "format_error";
  fe.score = 0;
  fe.verify = {{"passed", false}, {"check", "format"}, {"message", "no kernel"}};
  const json f = kernelgym_answer("id", fe);
  EXPECT_EQ(f["status"], "completed");
  EXPECT_EQ(f["error_code"], "VALIDATION_ERROR");

  const json sys =
      kernelgym_answer("id", RewardResult::failure(Diagnostic::error("nkia_worker_died", "the worker died")));
  for (const auto& k : kEvaluationFields) EXPECT_TRUE(sys.contains(k)) << k;
  EXPECT_EQ(sys["status"], "failed");
  EXPECT_EQ(sys["error_code"], "SYSTEM_ERROR");
  EXPECT_EQ(sys["error_message"], "the worker died");
}

// A request that could not be evaluated (an unknown task) is answered in the same shape, the
// runtimes null (docs/serve.md: /evaluate answers every EvaluationResponse field).
TEST(ServeWireKernelGym, ARefusedEvaluationHasTheSameFields) {
  const json refused = kernelgym_error("id", Diagnostic::error("nkia_task_not_found", "no task"));
  EXPECT_EQ(refused["task_id"], "id");
  EXPECT_EQ(refused["status"], "failed");
  EXPECT_EQ(refused["compiled"], false);
  EXPECT_EQ(refused["correctness"], false);
  EXPECT_EQ(refused["error_code"], "VALIDATION_ERROR");
  EXPECT_EQ(refused["error_message"], "no task");
  EXPECT_EQ(refused["metadata"]["code"], "nkia_task_not_found");
  for (const auto& k : kEvaluationFields) EXPECT_TRUE(refused.contains(k)) << "missing " << k;
}

// ---------------------------------------------------------------------------------------------
// The op-based reward server.

TEST(ServeWireOps, EachOpAndItsFields) {
  for (const char* op : {"compile", "verify", "profile"}) {
    auto r = op_request_from_json({{"op", op}, {"task_id", "add_fp32"}, {"kernel_source", kCode}});
    ASSERT_TRUE(r) << op << ": " << r.error().format();
    EXPECT_EQ(r->op, op);
    EXPECT_EQ(r->task_id, "add_fp32");
    EXPECT_EQ(r->kernel_source, kCode);
    EXPECT_FALSE(op_request_from_json({{"op", op}, {"task_id", "add_fp32"}})) << op << " without a kernel";
  }
  auto base = op_request_from_json({{"op", "baseline"}, {"task_id", "add_fp32"}});
  ASSERT_TRUE(base) << base.error().format();
  EXPECT_EQ(base->op, "baseline");
  EXPECT_EQ(base->kernel_source, "");
  auto unknown = op_request_from_json({{"op", "submit"}, {"task_id", "add_fp32"}, {"kernel_source", kCode}});
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code, "nkia_reward_bad_request");
  EXPECT_FALSE(op_request_from_json({{"task_id", "add_fp32"}, {"kernel_source", kCode}}));
  EXPECT_FALSE(op_request_from_json({{"op", "compile"}, {"kernel_source", kCode}}));
  EXPECT_FALSE(op_request_from_json({{"op", 1}, {"task_id", "add_fp32"}}));
  EXPECT_FALSE(op_request_from_json(json::array()));
  // A reference beside the task named is set aside (the server's answer says so), never run.
  const json with_reference = {
      {"op", "verify"}, {"task_id", "add_fp32"}, {"kernel_source", kCode}, {"reference_source", "import torch"}};
  auto ref = op_request_from_json(with_reference);
  ASSERT_TRUE(ref) << ref.error().format();
  EXPECT_EQ(ref->task_id, "add_fp32");
  EXPECT_TRUE(carries_inline_reference(with_reference));
  EXPECT_FALSE(carries_inline_reference({{"op", "verify"}, {"reference_source", ""}}));
}

TEST(ServeWireOps, CompileAndProfileTakeInputSpecsInsteadOfATask) {
  auto c = op_request_from_json({{"op", "compile"},
                                 {"kernel_source", kCode},
                                 {"input_specs", {{{"shape", {128, 256}}, {"dtype", "bfloat16"}}, {{"shape", {4}}}}}});
  ASSERT_TRUE(c) << c.error().format();
  EXPECT_TRUE(c->task_id.empty());
  ASSERT_EQ(c->input_specs.size(), 2u);
  EXPECT_EQ(c->input_specs[0].shape, (Shape{128, 256}));
  EXPECT_EQ(c->input_specs[0].dtype, DType::kBFloat16);
  EXPECT_EQ(c->input_specs[1].dtype, DType::kFloat32);  // the reference server's default
  EXPECT_EQ(c->target, "trn1");
  // Verify and baseline need a task; bad specs are refused with the field named.
  for (const json& bad :
       {json{{"op", "verify"}, {"kernel_source", kCode}, {"input_specs", {{{"shape", {1}}}}}},
        json{{"op", "baseline"}, {"input_specs", {{{"shape", {1}}}}}},
        json{{"op", "compile"}, {"kernel_source", kCode}},
        json{{"op", "compile"}, {"kernel_source", kCode}, {"input_specs", json::array()}},
        json{{"op", "compile"}, {"kernel_source", kCode}, {"input_specs", {{{"shape", {0}}}}}},
        json{{"op", "compile"}, {"kernel_source", kCode}, {"input_specs", {{{"shape", {-3}}}}}},
        json{{"op", "compile"}, {"kernel_source", kCode}, {"input_specs", {{{"shape", {1.5}}}}}},
        json{{"op", "compile"}, {"kernel_source", kCode}, {"input_specs", {{{"shape", {1 << 20, 1 << 20, 1 << 20}}}}}},
        json{{"op", "compile"}, {"kernel_source", kCode}, {"input_specs", {{{"shape", {4}}, {"dtype", "complex128"}}}}},
        json{{"op", "compile"}, {"kernel_source", kCode}, {"target", "trn9"}, {"task_id", "t"}}}) {
    auto r = op_request_from_json(bad);
    ASSERT_FALSE(r) << bad.dump();
    EXPECT_EQ(r.error().code, "nkia_reward_bad_request") << bad.dump();
  }
}

TEST(ServeWireOps, AnswersCarryTheOpsFields) {
  OpRequest compile{.op = "compile", .task_id = "add_fp32", .kernel_source = kCode};
  ToolResult ok;
  ok.compiled = true;
  ok.content = "COMPILED";
  ok.data = {{"compiled", true}, {"warnings", {{{"message", "w1"}}}}};
  const json c = op_answer(compile, ok);
  EXPECT_EQ(c["success"], true);
  EXPECT_EQ(c["returncode"], 0);
  EXPECT_EQ(c["errors"], json::array());
  EXPECT_EQ(c["warnings"], json::array({"w1"}));
  ToolResult failed;
  failed.data = {{"compiled", false}, {"diagnostic", {{"message", "NameError"}}}};
  const json cf = op_answer(compile, failed);
  EXPECT_EQ(cf["success"], false);
  EXPECT_EQ(cf["returncode"], 1);
  EXPECT_EQ(cf["errors"], json::array({"NameError"}));

  OpRequest verify{.op = "verify", .task_id = "add_fp32", .kernel_source = kCode};
  ToolResult v;
  v.verified = true;
  v.passed = true;
  const json va = op_answer(verify, v);
  EXPECT_EQ(va["correct"], true);
  EXPECT_TRUE(va["error"].is_null());
  for (const char* k : {"max_abs_error", "max_rel_error", "mismatched_elements", "total_elements", "verify_time_s"})
    EXPECT_TRUE(va.contains(k)) << k;

  OpRequest profile{.op = "profile", .task_id = "add_fp32", .kernel_source = kCode};
  ToolResult p;
  p.data = {{"summary", {{"total_time_ns", 5000.0}, {"mfu_estimated_percent", 12.0}}}};
  const json pa = op_answer(profile, p);
  EXPECT_EQ(pa["success"], true);
  EXPECT_DOUBLE_EQ(pa["latency_mean_us"].get<double>(), 5.0);
  EXPECT_DOUBLE_EQ(pa["throughput_ops_per_s"].get<double>(), 200000.0);
  EXPECT_DOUBLE_EQ(pa["flops_utilization"].get<double>(), 0.12);
  ToolResult pe;
  pe.is_error = true;
  pe.content = "COMPILE FAILED";
  const json pea = op_answer(profile, pe);
  EXPECT_EQ(pea["success"], false);
  EXPECT_TRUE(pea["latency_mean_us"].is_null());
  EXPECT_EQ(pea["error"], "COMPILE FAILED");

  SpeedResult s;
  s.available = true;
  s.candidate_seconds = 4e-6;
  const json b = op_baseline_answer(s, 0.1);
  EXPECT_EQ(b["success"], true);
  EXPECT_DOUBLE_EQ(b["latency_mean_us"].get<double>(), 4.0);
  SpeedResult none;
  none.reason = "no speed model";
  const json bn = op_baseline_answer(none, 0.1);
  EXPECT_EQ(bn["success"], false);
  EXPECT_EQ(bn["error"], "no speed model");
}

// ---------------------------------------------------------------------------------------------
// Tokens and hosts.

class ServeTokens : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("nkia-serve-tokens-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  fs::path dir_;
};

const std::string kTokenA = "0123456789abcdef0123456789abcdef";
const std::string kTokenB = "second-token-of-the-file-16+";

TEST_F(ServeTokens, AFileWithCommentsAndBlankLines) {
  auto t = TokenSet::load(
      write("tokens", "# the trainers' tokens\n\n  " + kTokenA + "  \n# another\n" + kTokenB + "\r\n\n"));
  ASSERT_TRUE(t) << t.error().format();
  EXPECT_TRUE(t->required());
  EXPECT_TRUE(t->accepts("Bearer " + kTokenA));
  EXPECT_TRUE(t->accepts("Bearer " + kTokenB));
  // Only "Bearer <exact token>" (any case of the scheme).
  for (const std::string& bad :
       std::vector<std::string>{"", kTokenA, "Bearer", "Bearer ", "Bearer  " + kTokenA, "Bearer " + kTokenA + " ",
                                "Bearer " + kTokenA.substr(0, 31), "Bearer " + kTokenA + "0", "Basic " + kTokenA,
                                "Bearer # the trainers' tokens", "Bearer " + kTokenA + "\n",
                                "Bearer " + kTokenA + kTokenB, "Token " + kTokenA})
    EXPECT_FALSE(t->accepts(bad)) << "'" << bad << "'";
  // A comment line is no token.
  EXPECT_FALSE(t->accepts("Bearer # another"));
  // The scheme is case-insensitive (RFC 7235), the token is not.
  EXPECT_TRUE(t->accepts("bearer " + kTokenA));
  EXPECT_TRUE(t->accepts("BEARER " + kTokenA));
}

TEST_F(ServeTokens, ShortTokensNoTokensAndUnreadableFilesAreRefused) {
  auto short_token = TokenSet::load(write("short", kTokenA + "\nshort-token\n"));
  ASSERT_FALSE(short_token);
  EXPECT_EQ(short_token.error().code, "nkia_bad_argument");
  auto fifteen = TokenSet::load(write("fifteen", std::string(15, 'x') + "\n"));
  ASSERT_FALSE(fifteen);
  EXPECT_TRUE(TokenSet::load(write("sixteen", std::string(16, 'x') + "\n")));
  auto empty = TokenSet::load(write("empty", "# nothing\n\n   \n"));
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().code, "nkia_bad_argument");
  auto missing = TokenSet::load((dir_ / "missing").string());
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, "nkia_bad_argument");
  const TokenSet none = TokenSet::none();
  EXPECT_FALSE(none.required());
  EXPECT_FALSE(none.accepts("Bearer " + kTokenA));
}

TEST(ServeHosts, LoopbackHosts) {
  for (const char* h : {"127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]"}) EXPECT_TRUE(is_loopback_host(h)) << h;
  for (const char* h : {"0.0.0.0", "", "::", "192.168.1.10", "10.0.0.1", "example.com", "1127.0.0.1", "localhost.com",
                        "::ffff:10.0.0.1"})
    EXPECT_FALSE(is_loopback_host(h)) << h;
}

// A host NAME that merely starts with "127." can resolve to any address: it is not loopback.
TEST(ServeHosts, AHostNameStartingWith127IsNotLoopback) {
  for (const char* h : {"127.example.com", "127.0.0.1.nip.io", "127.attacker.net"})
    EXPECT_FALSE(is_loopback_host(h)) << h;
}

// ---------------------------------------------------------------------------------------------
// The bounded queue.

using Clock = Admission::Clock;

TEST(ServeAdmission, AdmitsUpToWorkersPlusQueueAllOrNone) {
  Admission a(2, 3);
  EXPECT_TRUE(a.try_admit(3));
  EXPECT_FALSE(a.try_admit(3));  // 6 > 5: none of them
  EXPECT_EQ(a.rejected(), 1);
  EXPECT_TRUE(a.try_admit(2));  // exactly full
  EXPECT_FALSE(a.try_admit(1));
  EXPECT_EQ(a.rejected(), 2);
  EXPECT_EQ(a.queued(), 5);
  EXPECT_EQ(a.running(), 0);
  EXPECT_TRUE(a.try_admit(0));

  const auto later = Clock::now() + std::chrono::seconds(30);
  EXPECT_TRUE(a.start(later));
  EXPECT_TRUE(a.start(later));
  EXPECT_EQ(a.running(), 2);
  EXPECT_EQ(a.queued(), 3);
  a.finish();
  EXPECT_EQ(a.running(), 1);
  EXPECT_EQ(a.queued(), 3);
  EXPECT_TRUE(a.try_admit(1));  // a place freed
  EXPECT_EQ(a.queued(), 4);
  a.abandon();  // one admitted item that never started
  EXPECT_EQ(a.queued(), 3);
  EXPECT_TRUE(a.start(later));
  a.finish();
  a.finish();
  EXPECT_EQ(a.running(), 0);
  EXPECT_EQ(a.queued(), 2);
}

TEST(ServeAdmission, AnItemWaitsForAWorkerUntilItsDeadline) {
  Admission a(1, 2);
  ASSERT_TRUE(a.try_admit(2));
  ASSERT_TRUE(a.start(Clock::now() + std::chrono::seconds(30)));
  // The only worker is busy: the second item's deadline passes and it is released.
  EXPECT_FALSE(a.start(Clock::now() + std::chrono::milliseconds(20)));
  EXPECT_EQ(a.queued(), 0);
  EXPECT_EQ(a.running(), 1);
  // A waiter gets the slot when the running item finishes.
  ASSERT_TRUE(a.try_admit(1));
  std::atomic<bool> started{false};
  std::thread waiter([&] { started = a.start(Clock::now() + std::chrono::seconds(60)); });
  a.finish();
  waiter.join();
  EXPECT_TRUE(started);
  EXPECT_EQ(a.running(), 1);
  a.finish();
  EXPECT_EQ(a.running(), 0);
  EXPECT_EQ(a.queued(), 0);
}

TEST(ServeAdmission, DrainingRefusesAndWaitIdleWaitsForTheAdmitted) {
  Admission a(2, 2);
  EXPECT_TRUE(a.wait_idle(Clock::now()));  // nothing admitted
  ASSERT_TRUE(a.try_admit(1));
  ASSERT_TRUE(a.start(Clock::now() + std::chrono::seconds(30)));
  a.drain();
  EXPECT_TRUE(a.draining());
  EXPECT_FALSE(a.try_admit(1));
  EXPECT_EQ(a.rejected(), 1);
  EXPECT_FALSE(a.wait_idle(Clock::now() + std::chrono::milliseconds(20)));  // still one running
  std::atomic<bool> idle{false};
  std::thread waiter([&] { idle = a.wait_idle(Clock::now() + std::chrono::seconds(60)); });
  a.finish();
  waiter.join();
  EXPECT_TRUE(idle);
  EXPECT_FALSE(a.try_admit(1));  // still draining
}

// ---------------------------------------------------------------------------------------------
// Metrics.

// The value of the sample line starting with `prefix` ("name{labels}"), or -1.
double sample(const std::string& text, const std::string& prefix) {
  size_t at = 0;
  while ((at = text.find(prefix + " ", at)) != std::string::npos) {
    if (at == 0 || text[at - 1] == '\n') {
      const size_t end = text.find('\n', at);
      return std::stod(text.substr(at + prefix.size() + 1, end - at - prefix.size() - 1));
    }
    at += prefix.size();
  }
  return -1;
}

TEST(ServeMetrics, TheTextHasEveryMetricAndACumulativeHistogram) {
  Metrics m;
  m.request("/v1/reward", 200, 0.3);
  m.request("/v1/reward", 200, 2.5);
  m.request("/v1/reward", 400, 0.001);
  m.request("/health", 200, 0.0001);
  m.reward("nki", 1.5);
  m.reward("nki", 0.5);
  m.reward("cuda_agent", -1);
  Gauges g;
  g.in_flight = 3;
  g.queued = 4;
  g.cache_hits = 5;
  g.cache_misses = 6;
  g.worker_restarts = 7;
  g.rejected_busy = 8;
  const std::string t = m.render(g);
  for (const char* name : {"nki_agent_requests_total", "nki_agent_request_seconds", "nki_agent_rewards_total",
                           "nki_agent_reward_sum", "nki_agent_in_flight", "nki_agent_queue_depth",
                           "nki_agent_rejected_busy_total", "nki_agent_reward_cache_hits_total",
                           "nki_agent_reward_cache_misses_total", "nki_agent_kernel_worker_restarts_total"}) {
    EXPECT_NE(t.find(std::string("# TYPE ") + name + " "), std::string::npos) << name;
    EXPECT_NE(t.find(std::string("# HELP ") + name + " "), std::string::npos) << name;
  }
  EXPECT_EQ(sample(t, R"(nki_agent_requests_total{route="/v1/reward",code="200"})"), 2);
  EXPECT_EQ(sample(t, R"(nki_agent_requests_total{route="/v1/reward",code="400"})"), 1);
  EXPECT_EQ(sample(t, R"(nki_agent_requests_total{route="/health",code="200"})"), 1);
  EXPECT_NE(t.find("# TYPE nki_agent_request_seconds histogram"), std::string::npos);
  // Cumulative buckets: 0.001 in le=0.005; 0.3 from le=0.5; 2.5 from le=5.
  const std::string b = R"(nki_agent_request_seconds_bucket{route="/v1/reward",le=")";
  EXPECT_EQ(sample(t, b + R"(0.005"})"), 1);
  EXPECT_EQ(sample(t, b + R"(0.25"})"), 1);
  EXPECT_EQ(sample(t, b + R"(0.5"})"), 2);
  EXPECT_EQ(sample(t, b + R"(2"})"), 2);
  EXPECT_EQ(sample(t, b + R"(5"})"), 3);
  EXPECT_EQ(sample(t, b + R"(600"})"), 3);
  EXPECT_EQ(sample(t, b + R"(+Inf"})"), 3);
  EXPECT_EQ(sample(t, R"(nki_agent_request_seconds_count{route="/v1/reward"})"), 3);
  EXPECT_NEAR(sample(t, R"(nki_agent_request_seconds_sum{route="/v1/reward"})"), 2.801, 1e-9);
  double previous = 0;
  for (double le : Metrics::kBuckets) {
    const double v = sample(t, b + fmt::format("{}", le) + "\"}");
    EXPECT_GE(v, previous) << le;
    previous = v;
  }
  EXPECT_EQ(sample(t, R"(nki_agent_rewards_total{preset="nki"})"), 2);
  EXPECT_EQ(sample(t, R"(nki_agent_reward_sum{preset="nki"})"), 2);
  EXPECT_EQ(sample(t, R"(nki_agent_rewards_total{preset="cuda_agent"})"), 1);
  EXPECT_EQ(sample(t, "nki_agent_in_flight"), 3);
  EXPECT_EQ(sample(t, "nki_agent_queue_depth"), 4);
  EXPECT_EQ(sample(t, "nki_agent_reward_cache_hits_total"), 5);
  EXPECT_EQ(sample(t, "nki_agent_reward_cache_misses_total"), 6);
  EXPECT_EQ(sample(t, "nki_agent_kernel_worker_restarts_total"), 7);
  EXPECT_EQ(sample(t, "nki_agent_rejected_busy_total"), 8);
}

// Rewards can be negative (cuda_agent, compile_correct): their running sum can fall, which a
// Prometheus counter must never do (rate() would read each fall as a counter reset).
TEST(ServeMetrics, ARewardSumThatCanFallIsNotExposedAsACounter) {
  Metrics m;
  m.reward("cuda_agent", -1);
  m.reward("cuda_agent", -1);
  const std::string t = m.render(Gauges{});
  EXPECT_EQ(sample(t, R"(nki_agent_reward_sum{preset="cuda_agent"})"), -2);
  EXPECT_EQ(t.find("# TYPE nki_agent_reward_sum counter"), std::string::npos)
      << "nki_agent_reward_sum falls; make it a gauge";
}

}  // namespace
}  // namespace nki_agent::serve
