// agent/tools.cpp — compile, verify, profile, lookup and submit for a model, bound to one task.
#include "agent/tools.h"

#include <fmt/format.h>

#include <chrono>

#include "agent/docs_db.h"
#include "core/clock.h"
#include "cost/cost.h"
#include "nki/target.h"
#include "nki/trace.h"
#include "tasks/verify_check.h"

namespace nki_agent {

namespace {

nlohmann::json kernel_schema(bool required) {
  nlohmann::json s = {
      {"type", "object"},
      {"properties",
       {{"kernel_code",
         {{"type", "string"},
          {"description",
           "The complete kernel module: imports, the @nki.jit kernel and any helpers. Omit it to reuse the last "
           "kernel you sent."}}}}}};
  if (required) s["required"] = nlohmann::json::array({"kernel_code"});
  return s;
}

std::string output_list(const std::vector<TensorSpec>& specs) {
  std::string s;
  for (const auto& t : specs)
    s += fmt::format("{}{} {}", s.empty() ? "" : ", ", dtype_name(t.dtype), shape_str(t.shape));
  return s.empty() ? "none" : s;
}

// One paragraph for a kernel Diagnostic: code, where, what, how to fix.
std::string diagnostic_text(const Diagnostic& d) {
  return d.format();
}

}  // namespace

AgentTools::AgentTools(const Task& task, KernelService& service, VerifyOptions verify_options, size_t max_result_chars)
    : task_(task), service_(service), verify_options_(std::move(verify_options)), max_chars_(max_result_chars) {}

std::vector<ToolSpec> AgentTools::specs(bool with_submit) const {
  std::vector<ToolSpec> v;
  v.push_back({"compile",
               "Compile-check the kernel on the NeuronCore simulator at the task's shapes without computing: returns "
               "the first error (code, line, message, fix) or what the kernel issues and its output shapes.",
               kernel_schema(false)});
  v.push_back({"verify",
               "Run the kernel against the PyTorch reference: several seeds, input distributions and shapes "
               "(including larger and ragged ones). Returns PASS with the simulated speedup over the baseline, or "
               "the failed check with max abs/rel error, mismatch count and the first bad index.",
               kernel_schema(false)});
  v.push_back({"profile",
               "Simulated profile at the task's shapes: latency, engine utilisation, MFU/MBU, DMA statistics, the "
               "hottest source lines and optimisation insights.",
               kernel_schema(false)});
  v.push_back({"lookup",
               "Reference documentation: an nl./nisa. API (e.g. 'nl.matmul', 'nisa.nc_transpose'), an error code "
               "(e.g. 'err_unsupported_memory') or a topic ('tiling', 'psum accumulation', 'masks').",
               {{"type", "object"},
                {"properties", {{"query", {{"type", "string"}, {"description", "An API name, error code or topic"}}}}},
                {"required", nlohmann::json::array({"query"})}}});
  if (with_submit)
    v.push_back({"submit",
                 "Submit the final kernel. It is verified; when it passes the task ends, otherwise you get the "
                 "failure and may continue.",
                 kernel_schema(false)});
  return v;
}

bool truncate_utf8(std::string& text, size_t max_bytes) {
  if (text.size() <= max_bytes) return false;
  size_t keep = max_bytes;
  while (keep > 0 && (static_cast<unsigned char>(text[keep]) & 0xC0) == 0x80) --keep;
  text.resize(keep);
  return true;
}

std::string AgentTools::cap(std::string text) const {
  if (text.size() <= max_chars_) return text;
  truncate_utf8(text, max_chars_ > 64 ? max_chars_ - 64 : max_chars_);
  text += fmt::format("\n[... truncated to {} characters]", text.size());
  return text;
}

Result<KernelOutcome> AgentTools::timing_run(const std::string& source, ToolResult& r) {
  r.kernel = source;
  last_kernel_ = source;
  return service_.run(prompt_timing_call(task_, kernel_files_from_source(source, "kernel.py")),
                      SandboxLimits::for_kernel(verify_options_.kernel_seconds, verify_options_.kernel_memory_mib,
                                                /*large_reply=*/true));
}

ToolResult AgentTools::call(const ToolCall& c) {
  ToolResult r;
  auto args = c.parsed();
  if (args.is_discarded() || !args.is_object()) {
    r.is_error = true;
    r.content = fmt::format(
        "The arguments of '{}' are not a JSON object ({} characters received{}). Call the tool again with a JSON "
        "object, e.g. {{\"kernel_code\": \"...\"}}; escape newlines and quotes inside the string.",
        c.name, c.arguments.size(), c.arguments.empty() ? "" : ", it may have been cut off");
    r.data = {{"error", "malformed_arguments"}, {"arguments_chars", c.arguments.size()}};
    return r;
  }
  auto source_arg = [&](std::string& out) -> bool {
    if (args.contains("kernel_code")) {
      if (!args["kernel_code"].is_string()) return false;
      out = args["kernel_code"].get<std::string>();
    } else {
      out = last_kernel_;
    }
    return !out.empty();
  };
  if (c.name == "lookup") {
    if (!args.contains("query") || !args["query"].is_string()) {
      r.is_error = true;
      r.content = "lookup needs {\"query\": \"<API name, error code or topic>\"}.";
      return r;
    }
    return lookup(args["query"].get<std::string>());
  }
  if (c.name == "compile" || c.name == "verify" || c.name == "profile" || c.name == "submit") {
    std::string source;
    if (!source_arg(source)) {
      r.is_error = true;
      r.content = fmt::format(
          "{} needs {{\"kernel_code\": \"<the complete kernel module>\"}} (no earlier kernel to reuse).", c.name);
      return r;
    }
    if (c.name == "compile") return compile(source);
    if (c.name == "profile") return profile(source);
    ToolResult v = verify(source);
    if (c.name == "submit") {
      v.submitted = true;
      if (v.passed)
        v.content = "SUBMITTED. " + v.content;
      else if (v.verified)
        v.content = "NOT ACCEPTED: the submitted kernel fails verification. Fix it and submit again.\n" + v.content;
    }
    return v;
  }
  r.is_error = true;
  r.content = fmt::format("There is no tool '{}'. The tools are compile, verify, profile, lookup and submit.", c.name);
  r.data = {{"error", "unknown_tool"}, {"name", c.name}};
  return r;
}

ToolResult AgentTools::compile(const std::string& source) {
  const auto t0 = std::chrono::steady_clock::now();
  ToolResult r;
  auto outcome = timing_run(source, r);
  r.seconds = seconds_since(t0);
  if (!outcome) {
    r.content = cap("COMPILE FAILED\n" + diagnostic_text(outcome.error()));
    r.data = {{"compiled", false}, {"diagnostic", outcome.error().to_json()}};
    return r;
  }
  r.compiled = true;
  const TraceSummary s = summarize(outcome->trace);
  std::string per_engine;
  for (int e = 0; e < kNumEngines; ++e)
    if (s.per_engine[e] > 0)
      per_engine +=
          fmt::format("{}{} {}", per_engine.empty() ? "" : ", ", engine_name(static_cast<Engine>(e)), s.per_engine[e]);
  std::string text = fmt::format("COMPILED on {} at the {} shapes: {} instructions ({}), {} bytes moved by DMA.\n",
                                 task_.target, task_.outputs.empty() ? "given" : "prompt's", s.instructions,
                                 per_engine.empty() ? "none" : per_engine, s.dma_bytes);
  text += "outputs: " + output_list(outcome->output_specs) + "\n";
  // The outputs the task expects: a cheap early warning before verify.
  std::vector<std::string> problems;
  if (task_.outputs.empty()) {
    // Shapes without a task (the reward service's compile at given input shapes): nothing to expect.
  } else if (outcome->output_specs.size() != task_.outputs.size()) {
    problems.push_back(fmt::format("the task expects {} output(s), the kernel returns {}", task_.outputs.size(),
                                   outcome->output_specs.size()));
  } else {
    for (size_t i = 0; i < task_.outputs.size(); ++i) {
      const auto& want = task_.outputs[i];
      const auto& got = outcome->output_specs[i];
      if (got.shape != want.shape || got.dtype != want.dtype)
        problems.push_back(fmt::format("output {} is {} {}, the task expects {} {}", i, dtype_name(got.dtype),
                                       shape_str(got.shape), dtype_name(want.dtype), shape_str(want.shape)));
    }
  }
  for (const auto& p : problems) text += "warning: " + p + "\n";
  if (problems.empty() && !task_.outputs.empty())
    text += "The outputs match the task's shapes and dtypes. Next: verify.\n";
  nlohmann::json warnings = nlohmann::json::array();
  for (const Diagnostic& w : outcome->warnings) {  // the simulator's (nkia_sbuf_capacity_exceeded, ...)
    text += fmt::format("warning: {}[{}] {}{}\n", w.loc.line > 0 ? fmt::format("line {}: ", w.loc.line) : "", w.code,
                        w.message, w.hint.empty() ? "" : " Hint: " + w.hint);
    warnings.push_back(w.to_json());
  }
  if (!outcome->printed.empty()) text += "kernel printed:\n" + outcome->printed.substr(0, 1000) + "\n";
  r.content = cap(std::move(text));
  r.data = {{"compiled", true}, {"summary", summary_to_json(s)}, {"problems", problems}, {"warnings", warnings}};
  return r;
}

ToolResult AgentTools::verify(const std::string& source) {
  return verify(kernel_files_from_source(source, "kernel.py"));
}

ToolResult AgentTools::verify(const KernelFiles& files) {
  const auto t0 = std::chrono::steady_clock::now();
  ToolResult r;
  auto main = files.files.find(files.main_path);
  r.kernel = main != files.files.end() ? main->second : std::string();
  last_kernel_ = r.kernel;
  const std::string digest = kernel_files_digest(files);
  if (verified_result_ && verified_digest_ == digest) {
    r.verify = verified_result_;
  } else {
    auto v = verify_kernel(task_, files, service_, verify_options_);
    if (!v) {
      // The verification itself could not run (a broken task, a missing reference worker): not the
      // model's fault, and nothing it can fix.
      r.is_error = true;
      r.seconds = seconds_since(t0);
      r.content = cap("The verifier could not run (not a problem with your kernel): " + v.error().format());
      r.data = {{"verifier_error", v.error().to_json()}};
      return r;
    }
    verified_digest_ = digest;
    verified_result_ = *v;
    r.verify = std::move(*v);
  }
  r.seconds = seconds_since(t0);
  const VerifyResult& v = *r.verify;
  r.verified = true;
  r.passed = v.passed;
  r.compiled = v.passed || v.check != check_name(VerifyCheck::kKernelError);
  if (v.check == check_name(VerifyCheck::kStaticPolicy)) r.compiled = false;
  std::string text;
  if (v.passed) {
    text = fmt::format("PASS: {} of {} cases match the reference.\n", v.cases_passed, v.cases_total);
    if (v.speed.available) {
      text += fmt::format("speed on {}: {:.2f} us simulated, baseline {:.2f} us, speedup {:.2f}x", v.speed.target,
                          v.speed.candidate_seconds * 1e6, v.speed.baseline_seconds * 1e6, v.speed.speedup);
      if (v.speed.roofline_seconds > 0)
        text += fmt::format(", {:.1f}% of the roofline bound", v.speed.roofline_fraction * 100);
      text += ".\n";
    } else {
      text += "speed: not measured (" + v.speed.reason + ").\n";
    }
  } else {
    text = v.format();
  }
  r.content = cap(std::move(text));
  r.data = v.to_json();
  return r;
}

ToolResult AgentTools::profile(const std::string& source) {
  const auto t0 = std::chrono::steady_clock::now();
  ToolResult r;
  auto outcome = timing_run(source, r);
  if (!outcome) {
    r.seconds = seconds_since(t0);
    r.content = cap("COMPILE FAILED (nothing to profile)\n" + diagnostic_text(outcome.error()));
    r.data = {{"compiled", false}, {"diagnostic", outcome.error().to_json()}};
    return r;
  }
  r.compiled = true;
  auto hw = hardware_for_target(task_.target);
  if (!hw) {
    r.is_error = true;
    r.content = "No hardware description for target " + task_.target + ": " + hw.error().message;
    return r;
  }
  auto report = profile_trace(outcome->trace, *hw);
  r.seconds = seconds_since(t0);
  if (!report) {
    r.content = cap("The kernel compiled but issues nothing to profile: " + report.error().message);
    r.data = {{"compiled", true}, {"diagnostic", report.error().to_json()}};
    return r;
  }
  r.content = cap(profile_to_text(report->profile, 8));
  r.data = profile_to_json(report->profile, 10);
  return r;
}

ToolResult AgentTools::lookup(const std::string& query) {
  const auto t0 = std::chrono::steady_clock::now();
  ToolResult r;
  const auto& db = DocDatabase::builtin();
  auto hits = db.lookup(query, 3);
  r.seconds = seconds_since(t0);
  if (hits.empty()) {
    r.content = fmt::format(
        "Nothing found for '{}'. Try an API name such as 'nl.load' or 'nisa.nc_matmul', an error code, or a topic "
        "such as 'tiling', 'matmul', 'masks', 'psum'.",
        query.substr(0, 200));
    r.data = {{"query", query.substr(0, 200)}, {"hits", nlohmann::json::array()}};
    return r;
  }
  std::string text;
  nlohmann::json keys = nlohmann::json::array();
  const size_t per_hit = std::max<size_t>(max_chars_ / hits.size(), 400);
  for (const auto& h : hits) {
    text += render_doc(*h.entry, per_hit) + "\n";
    keys.push_back({{"key", h.entry->key}, {"score", h.score}});
  }
  r.content = cap(std::move(text));
  r.data = {{"query", query.substr(0, 200)}, {"hits", keys}};
  return r;
}

std::vector<PythonBlock> python_blocks(const std::string& text) {
  // Fenced blocks: a line starting with ``` opens (its info string names the language), the next
  // line starting with ``` closes. Scanned by hand: model replies can be long, and std::regex
  // recurses per character.
  std::vector<PythonBlock> out;
  size_t pos = 0;
  while (true) {
    size_t open = text.find("```", pos);
    if (open == std::string::npos) break;
    if (open > 0 && text[open - 1] != '\n') {
      pos = open + 3;
      continue;
    }
    size_t info_end = text.find('\n', open);
    if (info_end == std::string::npos) break;
    std::string info = text.substr(open + 3, info_end - open - 3);
    while (!info.empty() && (info.back() == ' ' || info.back() == '\t' || info.back() == '\r')) info.pop_back();
    while (!info.empty() && (info.front() == ' ' || info.front() == '\t')) info.erase(0, 1);
    const std::string lang = info.substr(0, info.find_first_of(" \t"));
    size_t close = info_end + 1;
    while (true) {
      close = text.find("```", close);
      if (close == std::string::npos || text[close - 1] == '\n') break;
      close += 3;
    }
    // An unclosed fence (a reply cut off) runs to the end.
    std::string body = text.substr(info_end + 1, (close == std::string::npos ? text.size() : close) - info_end - 1);
    const bool python = lang == "python" || lang == "py" || lang == "python3" ||
                        (lang.empty() && body.find("nki") != std::string::npos);
    if (python) out.push_back({open, std::move(body)});
    if (close == std::string::npos) break;
    pos = close + 3;
  }
  return out;
}

bool defines_function(const std::string& source, const std::string& name) {
  return source.find("def " + name + "(") != std::string::npos;
}

std::string extract_kernel(const std::string& text, const std::string& entry) {
  std::string last_any, last_entry;
  for (auto& b : python_blocks(text)) {
    if (defines_function(b.body, entry)) last_entry = b.body;
    last_any = std::move(b.body);
  }
  return last_entry.empty() ? last_any : last_entry;
}

}  // namespace nki_agent
