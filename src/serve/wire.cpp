// serve/wire.cpp — every route's fields, checked one by one.
#include "serve/wire.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "core/json_bounded.h"

#include "tasks/verify.h"

namespace nki_agent::serve {

namespace {

using nlohmann::json;

Diagnostic bad(std::string message) {
  return Diagnostic::error("nkia_reward_bad_request", std::move(message),
                           "docs/serve.md lists each route's fields and their types");
}

Result<std::string> string_field(const json& j, const char* name, bool required) {
  auto it = j.find(name);
  if (it == j.end() || it->is_null()) {
    if (required) return tl::unexpected(bad(fmt::format("the field '{}' is required", name)));
    return std::string();
  }
  if (!it->is_string()) return tl::unexpected(bad(fmt::format("the field '{}' must be a string", name)));
  return it->get<std::string>();
}

}  // namespace

namespace {

// The fields of an inline reference: its code (under either name), then what goes with it.
constexpr std::array<const char*, 2> kInlineCodeFields = {"reference_code", "reference_source"};
constexpr std::array<const char*, 5> kInlineOptionFields = {"entry_point", "kernel_name", "target", "atol", "rtol"};

// The field that carries reference code of the request's own, or nullptr.
const char* inline_reference_field(const json& j) {
  if (!j.is_object()) return nullptr;
  for (const char* f : kInlineCodeFields) {
    auto it = j.find(f);
    if (it != j.end() && !it->is_null() && !(it->is_string() && it->get<std::string>().empty())) return f;
  }
  return nullptr;
}

}  // namespace

bool carries_inline_reference(const json& j) {
  return inline_reference_field(j) != nullptr;
}

bool kernelgym_names_task(const json& j) {
  return j.is_object() && j.contains("metadata") && j["metadata"].is_object() && j["metadata"].contains("task");
}

namespace {

// reference_code (or reference_source) in KernelBench form, with entry_point (the reference's
// class), kernel_name (the kernel's function), atol, rtol and target; nullopt when none is given.
Result<std::optional<InlineReference>> inline_reference_from_json(const json& j) {
  const char* field = inline_reference_field(j);
  if (field == nullptr) return std::optional<InlineReference>();
  int given = 0;
  for (const char* f : kInlineCodeFields) given += j.contains(f) && !j[f].is_null();
  if (given > 1) return tl::unexpected(bad("give the reference once, as 'reference_code' or 'reference_source'"));
  InlineReference ref;
  auto code = string_field(j, field, true);
  if (!code) return tl::unexpected(code.error());
  ref.code = *code;
  for (auto [name, slot] : {std::pair{"entry_point", &ref.entry_point}, std::pair{"kernel_name", &ref.kernel_entry},
                            std::pair{"target", &ref.target}}) {
    auto v = string_field(j, name, false);
    if (!v) return tl::unexpected(v.error());
    if (!v->empty()) *slot = *v;
  }
  for (auto [name, slot] : {std::pair{"atol", &ref.atol}, std::pair{"rtol", &ref.rtol}}) {
    if (!j.contains(name) || j[name].is_null()) continue;
    if (!j[name].is_number()) return tl::unexpected(bad(fmt::format("the field '{}' must be a number", name)));
    *slot = j[name].get<double>();
  }
  return std::optional<InlineReference>(std::move(ref));
}

// The text of a conversational value (a list of {role, content} messages) or a plain string.
std::string text_of(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  std::string out;
  if (v.is_array())
    for (const auto& m : v)
      if (m.is_object() && m.contains("content") && m["content"].is_string())
        out += m["content"].get<std::string>() + "\n";
  return out;
}

}  // namespace

Result<json> parse_json_body(std::string_view body, int max_depth) {
  if (json_nesting_depth(body, max_depth) > max_depth)
    return tl::unexpected(Diagnostic::error("nkia_serve_bad_json",
                                            fmt::format("the body is nested deeper than {} levels", max_depth),
                                            "send a flat JSON object of the route's fields"));
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);  // depth checked above
  if (j.is_discarded())
    return tl::unexpected(Diagnostic::error("nkia_serve_bad_json", "the body is not valid JSON",
                                            "send a JSON object with Content-Type: application/json"));
  return j;
}

Result<RewardRequest> reward_request_from_json(const json& j) {
  if (!j.is_object()) return tl::unexpected(bad("a reward request must be a JSON object"));
  RewardRequest req;
  auto inline_ref = inline_reference_from_json(j);
  if (!inline_ref) return tl::unexpected(inline_ref.error());
  req.inline_reference = std::move(*inline_ref);
  // With its own reference a request needs no task; task_id is then its label.
  auto task = string_field(j, "task_id", !req.inline_reference);
  if (!task) return tl::unexpected(task.error());
  req.task_id = *task;
  int given = 0;
  if (j.contains("response") && !j["response"].is_null()) {
    const json& v = j["response"];
    if (!v.is_string() && !v.is_array()) return tl::unexpected(bad("the field 'response' must be a string"));
    req.submission.response = text_of(v);
    ++given;
  }
  if (j.contains("kernel_code") && !j["kernel_code"].is_null()) {
    if (!j["kernel_code"].is_string()) return tl::unexpected(bad("the field 'kernel_code' must be a string"));
    req.submission.kernel_code = j["kernel_code"].get<std::string>();
    ++given;
  }
  if (j.contains("tool_call") && !j["tool_call"].is_null()) {
    if (!j["tool_call"].is_object()) return tl::unexpected(bad("the field 'tool_call' must be an object"));
    req.submission.tool_call = j["tool_call"];
    ++given;
  }
  if (given != 1)
    return tl::unexpected(bad(given == 0 ? "give the kernel as one of 'response', 'kernel_code' or 'tool_call'"
                                         : "give only one of 'response', 'kernel_code' and 'tool_call'"));
  auto prompt = string_field(j, "prompt", false);
  if (!prompt) return tl::unexpected(prompt.error());
  req.submission.prompt = *prompt;
  auto preset = string_field(j, "preset", false);
  if (!preset) return tl::unexpected(preset.error());
  if (!preset->empty()) req.preset = *preset;
  if (j.contains("presets") && !j["presets"].is_null()) {
    if (!j["presets"].is_array()) return tl::unexpected(bad("the field 'presets' must be a list of preset names"));
    for (const auto& p : j["presets"]) {
      if (!p.is_string()) return tl::unexpected(bad("the field 'presets' must be a list of preset names"));
      req.presets.push_back(p.get<std::string>());
    }
  }
  auto turns = string_field(j, "turns", false);
  if (!turns) return tl::unexpected(turns.error());
  if (*turns == "all")
    req.all_turns = true;
  else if (!turns->empty() && *turns != "last")
    return tl::unexpected(bad("the field 'turns' must be \"last\" or \"all\""));
  if (j.contains("gamma") && !j["gamma"].is_null()) {
    if (!j["gamma"].is_number()) return tl::unexpected(bad("the field 'gamma' must be a number in [0, 1]"));
    req.gamma = j["gamma"].get<double>();
  }
  if (j.contains("seeds") && !j["seeds"].is_null()) {
    if (!j["seeds"].is_number_integer() || j["seeds"].get<int64_t>() < 1 || j["seeds"].get<int64_t>() > 64)
      return tl::unexpected(bad("the field 'seeds' must be an integer from 1 to 64"));
    req.seeds = j["seeds"].get<int>();
  }
  if (j.contains("speed") && !j["speed"].is_null()) {
    if (!j["speed"].is_boolean()) return tl::unexpected(bad("the field 'speed' must be true or false"));
    req.speed = j["speed"].get<bool>();
  }
  return req;
}

Result<std::vector<Result<RewardRequest>>> batch_requests_from_json(const json& j) {
  if (!j.is_object() || !j.contains("items") || !j["items"].is_array())
    return tl::unexpected(bad("a batch is {\"items\": [<reward request>, ...]}"));
  if (j["items"].size() > kMaxBatchItems)
    return tl::unexpected(
        bad(fmt::format("a batch holds at most {} items, this one {}", kMaxBatchItems, j["items"].size())));
  std::vector<Result<RewardRequest>> out;
  for (const auto& item : j["items"]) out.push_back(reward_request_from_json(item));
  return out;
}

Result<ToolRequest> tool_request_from_json(const json& j) {
  if (!j.is_object()) return tl::unexpected(bad("a tool request must be a JSON object"));
  ToolRequest t;
  auto task = string_field(j, "task_id", true);
  if (!task) return tl::unexpected(task.error());
  auto code = string_field(j, "kernel_code", true);
  if (!code) return tl::unexpected(code.error());
  t.task_id = *task;
  t.kernel_code = *code;
  return t;
}

json tool_answer(const ToolResult& r) {
  return {{"ok", !r.is_error && (r.verified ? r.passed : true) && (r.compiled || r.verified)},
          {"content", r.content},
          {"data", r.data},
          {"seconds", r.seconds}};
}

Result<std::vector<Result<RewardRequest>>> openrlhf_requests(const json& j) {
  if (!j.is_object() || !j.contains("query") || !j["query"].is_array())
    return tl::unexpected(bad("an OpenRLHF request is {\"query\": [...], \"prompts\": [...], \"labels\": [...]}"));
  const json& query = j["query"];
  const json prompts = j.contains("prompts") && j["prompts"].is_array() ? j["prompts"] : json::array();
  const json labels = j.contains("labels") && j["labels"].is_array() ? j["labels"] : json::array();
  if (query.size() > kMaxBatchItems)
    return tl::unexpected(
        bad(fmt::format("a request holds at most {} queries, this one {}", kMaxBatchItems, query.size())));
  if (labels.size() != query.size())
    return tl::unexpected(
        bad(fmt::format("{} queries but {} labels: each query needs its label (the task id; "
                        "--data.label_key)",
                        query.size(), labels.size())));
  std::vector<Result<RewardRequest>> out;
  for (size_t i = 0; i < query.size(); ++i) {
    json label = labels[i];
    if (label.is_string()) {
      const std::string s = label.get<std::string>();
      if (!s.empty() && s.front() == '{')
        label = parse_json_bounded(s);
      else
        label = json{{"task_id", s}};
    }
    if (!label.is_object()) {
      out.push_back(tl::unexpected(bad(fmt::format("label {} is neither a task id nor an object with task_id", i))));
      continue;
    }
    json item = label;
    item.erase("kernel_code");
    item.erase("tool_call");
    item["response"] = query[i].is_string() ? query[i] : json(text_of(query[i]));
    if (i < prompts.size() && prompts[i].is_string()) item["prompt"] = prompts[i];
    out.push_back(reward_request_from_json(item));
  }
  return out;
}

json openrlhf_answer(const std::vector<RewardResult>& results) {
  json rewards = json::array(), scores = json::array();
  json correct = json::array(), compiled = json::array(), flagged = json::array();
  int errors = 0;
  for (const auto& r : results) {
    const bool ok = r.status != "error" && r.score;
    errors += ok ? 0 : 1;
    rewards.push_back(ok ? *r.score : 0.0);
    scores.push_back(r.components.correct);
    correct.push_back(r.components.correct);
    compiled.push_back(r.components.compile);
    flagged.push_back(r.flags.empty() ? 0 : 1);
  }
  return {{"rewards", rewards},
          {"scores", scores},
          {"extra_logs",
           {{"nki_correct", correct}, {"nki_compiled", compiled}, {"nki_flagged", flagged}, {"nki_errors", errors}}}};
}

Result<RewardRequest> slime_request(const json& j) {
  if (!j.is_object() || !j.contains("response"))
    return tl::unexpected(bad("a slime request is {\"prompt\", \"response\", \"label\"}"));
  json label = j.contains("label") ? j["label"] : json();
  if (label.is_string()) {
    const std::string s = label.get<std::string>();
    label = !s.empty() && s.front() == '{' ? parse_json_bounded(s) : json{{"task_id", s}};
  }
  if (!label.is_object()) return tl::unexpected(bad("the label must be a task id or an object with task_id"));
  json item = label;
  item.erase("kernel_code");
  item.erase("tool_call");
  item["response"] = j["response"];
  if (j.contains("prompt") && j["prompt"].is_string()) item["prompt"] = j["prompt"];
  return reward_request_from_json(item);
}

json slime_answer(const RewardResult& r) {
  return r.score && r.status != "error" ? *r.score : 0.0;
}

Result<RewardRequest> kernelgym_request(const json& j, std::string& request_id) {
  if (!j.is_object()) return tl::unexpected(bad("an /evaluate request must be a JSON object"));
  // KernelGYM clients always send their reference; beside a task the server names (metadata.task)
  // it is set aside, and the answer says so. Alone it is the task (tasks/inline_task.h).
  const bool names_task = kernelgym_names_task(j);
  auto id = string_field(j, "task_id", true);
  if (!id) return tl::unexpected(id.error());
  if (id->empty() || id->size() > 100) return tl::unexpected(bad("task_id must be 1 to 100 characters"));
  request_id = *id;
  json item = {{"task_id", *id}};
  if (j.contains("metadata") && j["metadata"].is_object() && j["metadata"].contains("task") &&
      j["metadata"]["task"].is_string())
    item["task_id"] = j["metadata"]["task"];
  auto code = string_field(j, "kernel_code", true);
  if (!code) return tl::unexpected(code.error());
  item["kernel_code"] = *code;
  if (!names_task && carries_inline_reference(j)) {
    for (const char* f : kInlineCodeFields)
      if (j.contains(f)) item[f] = j[f];
    for (const char* f : kInlineOptionFields)
      if (j.contains(f)) item[f] = j[f];
  }
  if (j.contains("num_correct_trials") && j["num_correct_trials"].is_number_integer())
    item["seeds"] = std::clamp<int64_t>(j["num_correct_trials"].get<int64_t>(), 1, 64);
  if (j.contains("preset")) item["preset"] = j["preset"];
  return reward_request_from_json(item);
}

json kernelgym_answer(const std::string& request_id, const RewardResult& r) {
  const bool scored = r.status == "ok";
  const json speed = r.verify.is_object() && r.verify.contains("speed") ? r.verify["speed"] : json::object();
  auto seconds_ms = [&](const char* key) -> json {
    if (!speed.value("available", false) || !speed.contains(key)) return nullptr;
    return speed[key].get<double>() * 1e3;
  };
  // KernelGYM's error codes from the failed check.
  std::string code;
  const std::string check = r.verify.is_object() ? r.verify.value("check", "") : "";
  if (r.status == "error")
    code = "SYSTEM_ERROR";
  else if (r.status == "format_error")
    code = "VALIDATION_ERROR";
  else if (r.components.compile == 0)
    code = check == "static_policy" ? "VALIDATION_ERROR" : "COMPILATION_ERROR";
  else if (r.components.correct == 0)
    code = check == "kernel_error" ? "RUNTIME_ERROR" : "CORRECTNESS_ERROR";
  json answer = {
      {"task_id", request_id},
      {"status", scored || r.status == "format_error" ? "completed" : "failed"},
      {"compiled", r.components.compile == 1},
      {"correctness", r.components.correct == 1},
      {"decoy_kernel", !r.flags.empty() && r.components.correct == 0},
      {"reference_runtime", seconds_ms("baseline_seconds")},
      {"kernel_runtime", seconds_ms("candidate_seconds")},
      {"speedup", r.components.speedup ? json(*r.components.speedup) : json(nullptr)},
      {"score", r.score ? json(*r.score) : json(nullptr)},
      {"reward", r.score ? json(*r.score) : json(nullptr)},
      {"metadata",
       {{"device", "nki-agent simulator"},
        {"runtime_unit", "ms (simulated)"},
        {"preset", r.preset},
        {"flags", r.flags},
        {"coverage", r.components.coverage},
        {"check", check},
        {"excessive_speedup", std::find(r.flags.begin(), r.flags.end(), "excessive_speedup") != r.flags.end()}}},
      {"error_code", code.empty() ? json(nullptr) : json(code)},
      {"error_message", r.error ? json(r.error->message)
                        : r.verify.is_object() && !r.verify.value("message", "").empty()
                            ? json(r.verify.value("message", ""))
                            : json(nullptr)},
      {"processing_time", r.total_seconds}};
  return answer;
}

json kernelgym_error(const std::string& request_id, const Diagnostic& d) {
  return {{"task_id", request_id},
          {"status", "failed"},
          {"compiled", false},
          {"correctness", false},
          {"decoy_kernel", false},
          {"reference_runtime", nullptr},
          {"kernel_runtime", nullptr},
          {"speedup", nullptr},
          {"score", nullptr},
          {"reward", nullptr},
          {"metadata", {{"device", "nki-agent simulator"}, {"code", d.code}}},
          {"error_code",
           d.code == "nkia_task_not_found" || d.code == "nkia_reward_bad_request" || d.code == "nkia_inline_reference"
               ? "VALIDATION_ERROR"
               : "SYSTEM_ERROR"},
          {"error_message", d.message},
          {"processing_time", 0.0}};
}

Result<OpRequest> op_request_from_json(const json& j) {
  if (!j.is_object()) return tl::unexpected(bad("a /reward item must be a JSON object with 'op'"));
  // A reference_source beside the task_id the op names is set aside (the answer says so).
  OpRequest op;
  auto name = string_field(j, "op", true);
  if (!name) return tl::unexpected(name.error());
  op.op = *name;
  if (op.op != "compile" && op.op != "verify" && op.op != "profile" && op.op != "baseline")
    return tl::unexpected(bad(fmt::format("unknown op: {}", op.op.substr(0, 100))));
  auto task = string_field(j, "task_id", false);
  if (!task) return tl::unexpected(task.error());
  op.task_id = *task;
  auto src = string_field(j, "kernel_source", op.op != "baseline");
  if (!src) return tl::unexpected(src.error());
  op.kernel_source = *src;
  auto target = string_field(j, "target", false);
  if (!target) return tl::unexpected(target.error());
  if (!target->empty()) op.target = *target;
  if (op.target != "trn1" && op.target != "trn2") return tl::unexpected(bad("target must be \"trn1\" or \"trn2\""));
  if (!op.task_id.empty()) return op;
  // No task: compile and profile run at the given shapes; verify and baseline need a task's
  // reference and baseline.
  if (op.op == "verify" || op.op == "baseline")
    return tl::unexpected(
        bad(fmt::format("op {} needs a task_id: this server verifies against its own tasks only", op.op)));
  if (!j.contains("input_specs"))
    return tl::unexpected(bad("give a task_id, or input_specs ([{\"shape\": [128, 256], \"dtype\": \"float32\"}])"));
  const json& specs = j["input_specs"];
  if (!specs.is_array() || specs.empty() || specs.size() > 64)
    return tl::unexpected(bad("input_specs must be a list of 1 to 64 {\"shape\", \"dtype\"} objects"));
  for (size_t i = 0; i < specs.size(); ++i) {
    const json& s = specs[i];
    if (!s.is_object() || !s.contains("shape") || !s["shape"].is_array() || s["shape"].empty() || s["shape"].size() > 8)
      return tl::unexpected(bad(fmt::format("input_specs[{}].shape must be a list of 1 to 8 positive integers", i)));
    TensorSpec t;
    t.name = fmt::format("in{}", i);
    double elements = 1;
    for (const auto& d : s["shape"]) {
      if (!d.is_number_integer() || d.get<int64_t>() < 1 || d.get<int64_t>() > (int64_t{1} << 31))
        return tl::unexpected(bad(fmt::format("input_specs[{}].shape must be a list of positive integers", i)));
      t.shape.push_back(d.get<int64_t>());
      elements *= static_cast<double>(d.get<int64_t>());
    }
    if (elements > static_cast<double>(int64_t{1} << 34))
      return tl::unexpected(
          bad(fmt::format("input_specs[{}] has {:.3g} elements, more than any kernel input", i, elements)));
    const std::string dtype = s.contains("dtype") && s["dtype"].is_string() ? s["dtype"].get<std::string>() : "float32";
    auto dt = dtype_from_name(dtype);
    if (!dt)
      return tl::unexpected(
          bad(fmt::format("input_specs[{}].dtype '{}' is not an element type", i, dtype.substr(0, 40))));
    t.dtype = *dt;
    op.input_specs.push_back(std::move(t));
  }
  return op;
}

json op_answer(const OpRequest& req, const ToolResult& r) {
  if (req.op == "compile") {
    json errors = json::array(), warnings = json::array();
    if (!r.compiled && r.data.contains("diagnostic")) errors.push_back(r.data["diagnostic"].value("message", ""));
    if (r.data.contains("warnings"))
      for (const auto& w : r.data["warnings"]) warnings.push_back(w.value("message", ""));
    return {{"success", r.compiled},
            {"neff_path", nullptr},
            {"returncode", r.compiled ? 0 : 1},
            {"errors", errors},
            {"warnings", warnings},
            {"stderr_tail", json::array()},
            {"compile_time_s", r.seconds},
            {"content", r.content}};
  }
  if (req.op == "verify") {
    json a = {{"correct", r.passed}, {"verify_time_s", r.seconds}, {"content", r.content}};
    double max_abs = 0, max_rel = 0;
    int64_t mismatched = 0, total = 0;
    if (r.verify) {
      for (const auto& c : r.verify->cases)
        for (const auto& o : c.outputs) {
          max_abs = std::max(max_abs, o.max_abs_error);
          max_rel = std::max(max_rel, o.max_rel_error);
          mismatched += o.mismatches;
          total += o.elements;
        }
    }
    a["max_abs_error"] = max_abs;
    a["max_rel_error"] = max_rel;
    a["mismatched_elements"] = mismatched;
    a["total_elements"] = total;
    a["error"] = r.passed ? json(nullptr) : json(r.verify ? r.verify->message : r.content);
    if (r.verify) a["check"] = r.verify->check;
    return a;
  }
  // profile
  const bool ok = !r.is_error && r.data.contains("summary");
  const double us = ok ? r.data["summary"].value("total_time_ns", 0.0) / 1e3 : 0.0;
  json lat = ok ? json(us) : json(nullptr);
  return {{"success", ok},
          {"latency_mean_us", lat},
          {"latency_median_us", lat},
          {"latency_p99_us", lat},
          {"latency_min_us", lat},
          {"latency_max_us", lat},
          {"throughput_ops_per_s", ok && us > 0 ? json(1e6 / us) : json(nullptr)},
          {"flops_utilization", ok ? json(r.data["summary"].value("mfu_estimated_percent", 0.0) / 100) : json(nullptr)},
          {"warmup_runs", 0},
          {"measure_runs", 1},
          {"profile_time_s", r.seconds},
          {"error", ok ? json(nullptr) : json(r.content)},
          {"content", r.content}};
}

json op_baseline_answer(const SpeedResult& s, double seconds) {
  const json lat = s.available ? json(s.candidate_seconds * 1e6) : json(nullptr);
  return {{"success", s.available},
          {"latency_mean_us", lat},
          {"latency_median_us", lat},
          {"latency_p99_us", lat},
          {"latency_min_us", lat},
          {"latency_max_us", lat},
          {"backend", "nki-agent: the task's eager baseline kernel, simulated"},
          {"baseline_time_s", seconds},
          {"error", s.available ? json(nullptr) : json(s.reason)}};
}

json error_body(const Diagnostic& d) {
  return {{"error", {{"code", d.code}, {"message", d.message}}}};
}

}  // namespace nki_agent::serve
