// agent/loop.cpp — the compile → verify → fix loop over one task.
#include "agent/loop.h"

#include <fmt/format.h>

#include <chrono>

#include "agent/store.h"
#include "core/clock.h"
#include "core/hash.h"
#include "core/log.h"
#include "core/version.h"

namespace nki_agent {

namespace {

using Clock = std::chrono::steady_clock;

nlohmann::json usage_json(const Usage& u) {
  return {{"input_tokens", u.input_tokens}, {"output_tokens", u.output_tokens}};
}

class Run {
 public:
  Run(const Task& task, AgentTools& tools, LlmClient& model, LlmClient* stronger, const SolveOptions& opt,
      const SolveHooks& hooks)
      : task_(task), tools_(tools), model_(model), stronger_(stronger), opt_(opt), hooks_(hooks), t0_(Clock::now()) {}

  Result<SolveResult> go() {
    PromptOptions po = opt_.prompt;
    po.tools = !opt_.single_shot;
    po.max_turns = opt_.max_turns;
    auto prompt = build_prompt(task_, po);
    if (!prompt) return fail(prompt.error());
    res_.task = task_.label();
    res_.prompt_version = prompt->version;
    system_ = prompt->system;
    messages_.push_back(Message{Role::kUser, prompt->user, {}, {}, {}, false});
    emit({{"type", "start"},
          {"task", task_.label()},
          {"level", task_.level},
          {"prompt_version", prompt->version},
          {"dialect", po.dialect},
          {"model", model_.config().name},
          {"model_config", model_.config().to_json()},
          {"stronger_model", stronger_ ? nlohmann::json(stronger_->config().name) : nlohmann::json()},
          {"seed", opt_.seed},
          {"simulator_version", kVersion},
          {"options",
           {{"max_turns", opt_.max_turns},
            {"optimize_turns", opt_.optimize_turns},
            {"single_shot", opt_.single_shot},
            {"escalate_after", opt_.escalate_after}}},
          {"system", system_},
          {"user", prompt->user},
          {"tools", tools_json()}});
    if (opt_.single_shot)
      single_shot();
    else
      loop();
    finish();
    return res_;
  }

 private:
  nlohmann::json tools_json() const {
    auto a = nlohmann::json::array();
    if (opt_.single_shot) return a;
    for (const auto& t : tools_.specs())
      a.push_back({{"name", t.name}, {"description", t.description}, {"parameters", t.parameters}});
    return a;
  }

  void progress(const std::string& line) {
    if (hooks_.progress) hooks_.progress(fmt::format("[{}] {}", task_.id.empty() ? task_.name : task_.id, line));
  }
  void emit(nlohmann::json ev) {
    if (!hooks_.trajectory) return;
    ev["run"] = opt_.run_id;
    ev["t"] = seconds_since(t0_);
    hooks_.trajectory->write(ev);
  }

  LlmClient& current() {
    if (stronger_ && !escalated_ && opt_.escalate_after > 0 && failed_turns_ >= opt_.escalate_after) {
      escalated_ = true;
      progress(fmt::format("escalating from {} to {} after {} failed turns", model_.config().name,
                           stronger_->config().name, failed_turns_));
      emit({{"type", "escalate"},
            {"from", model_.config().name},
            {"to", stronger_->config().name},
            {"failed_turns", failed_turns_}});
    }
    return escalated_ ? *stronger_ : model_;
  }

  // One model call; nullopt when it failed: the run stops, interrupted (the error is recorded).
  std::optional<ChatResponse> call_model(LlmClient& llm, int turn, bool with_tools) {
    ChatRequest req;
    req.system = system_;
    req.messages = messages_;
    if (with_tools) req.tools = tools_.specs();
    req.seed = opt_.seed;
    if (res_.models.empty() || res_.models.back() != llm.config().name) res_.models.push_back(llm.config().name);
    NKIA_LOG_DEBUG("agent turn {}: asking {} ({} messages)", turn, llm.config().name, req.messages.size());
    const auto t = Clock::now();
    auto resp = llm.chat(req, hooks_.cancel, hooks_.on_text);
    const double secs = seconds_since(t);
    res_.model_seconds += secs;
    res_.turns = turn;
    if (!resp) {
      interrupted_ = true;
      endpoint_failed_ = !(hooks_.cancel && hooks_.cancel->load());
      res_.error = resp.error().format();
      res_.code = resp.error().code;
      emit({{"type", "model_call"},
            {"turn", turn},
            {"model", llm.config().name},
            {"seconds", secs},
            {"error", resp.error().to_json()}});
      progress(fmt::format("turn {}: model call failed: {}", turn, resp.error().message));
      return std::nullopt;
    }
    NKIA_LOG_DEBUG("agent turn {}: {} replied in {:.3f} s ({} tool calls, stop: {})", turn, llm.config().name, secs,
                   resp->tool_calls.size(), resp->stop_reason);
    res_.usage += resp->usage;
    const double cost = llm.config().cost_usd(resp->usage);
    res_.cost_usd += cost;
    Message m{Role::kAssistant, resp->text, resp->tool_calls, {}, {}, false};
    messages_.push_back(m);
    emit({{"type", "model_call"},
          {"turn", turn},
          {"model", llm.config().name},
          {"stop_reason", resp->stop_reason},
          {"usage", usage_json(resp->usage)},
          {"cost_usd", cost},
          {"seconds", secs},
          {"attempts", resp->attempts},
          {"message", m.to_json()}});
    progress(fmt::format("turn {}: {} replied ({} tool call{}, {} tokens out, {:.1f} s)", turn, llm.config().name,
                         resp->tool_calls.size(), resp->tool_calls.size() == 1 ? "" : "s", resp->usage.output_tokens,
                         secs));
    return std::move(*resp);
  }

  // Records a tool result in the run's state; true when it passed.
  bool absorb(const ToolResult& tr) {
    if (!tr.kernel.empty()) last_kernel_ = tr.kernel;
    note_failure(tr);
    if (tr.compiled) {
      res_.compiled = true;
      last_compiled_ = tr.kernel;
    }
    if (!(tr.verified && tr.passed)) return false;
    const double speedup = tr.verify && tr.verify->speed.available ? tr.verify->speed.speedup : 0;
    if (!res_.passed || speedup > res_.speedup) {
      best_passed_ = tr.kernel;
      res_.verify = tr.verify;
      res_.speedup = speedup;
    }
    if (!res_.passed) res_.first_pass_turn = res_.turns;
    res_.passed = true;
    return true;
  }

  // Remembers why the last kernel tried failed: the check and the Diagnostic code.
  void note_failure(const ToolResult& tr) {
    if (tr.kernel.empty() || tr.passed) return;
    if (tr.verified && tr.verify) {
      tried_ = true;
      last_check_ = tr.verify->check;
      last_code_ = tr.verify->diagnostic ? tr.verify->diagnostic->code : std::string();
      last_compiled_ok_ = tr.compiled;
    } else if (tr.is_error && tr.data.contains("verifier_error")) {
      tried_ = true;
      last_check_ = "verifier_error";
      last_code_ = tr.data["verifier_error"].value("code", "");
      last_compiled_ok_ = false;
    } else if (!tr.compiled && tr.data.contains("diagnostic")) {
      tried_ = true;
      last_check_.clear();
      last_code_ = tr.data["diagnostic"].value("code", "");
      last_compiled_ok_ = false;
    } else if (tr.compiled && !tried_) {
      tried_ = true;  // compiled, never verified (yet): a later verdict replaces this
      last_compiled_ok_ = true;
      last_check_ = "not_verified";
    }
  }

  // `sent`: what the model read, when the loop added to the tool's own content.
  void record_tool(int turn, const ToolCall& call, const ToolResult& tr, bool implicit,
                   const std::string* sent = nullptr) {
    res_.tool_seconds += tr.seconds;
    nlohmann::json args = nlohmann::json::object();
    auto parsed = call.parsed();
    if (parsed.is_object())
      args = parsed;
    else
      args = {{"raw", call.arguments.substr(0, 2000)}};
    if (!tr.kernel.empty()) args["kernel_sha256"] = sha256_hex(tr.kernel);
    emit({{"type", "tool"},
          {"turn", turn},
          {"name", call.name},
          {"call_id", call.id},
          {"implicit", implicit},
          {"arguments", args},
          {"content", sent ? *sent : tr.content},
          {"is_error", tr.is_error},
          {"result", tr.data},
          {"seconds", tr.seconds}});
    std::string verdict = tr.is_error   ? "error"
                          : tr.passed   ? "PASS"
                          : tr.verified ? "FAIL"
                          : tr.compiled ? "ok"
                                        : "failed";
    if (tr.verified && !tr.passed && tr.verify) verdict += " " + tr.verify->check;
    if (call.name == "lookup") verdict = "done";
    progress(fmt::format("turn {}: {}{} -> {} ({:.1f} s)", turn, call.name, implicit ? " (reply's kernel)" : "",
                         verdict, tr.seconds));
  }

  void add_user(int turn, std::string text) {
    emit({{"type", "message"}, {"turn", turn}, {"role", "user"}, {"text", text}});
    messages_.push_back(Message{Role::kUser, std::move(text), {}, {}, {}, false});
  }

  std::string optimize_note(int turns_left) const {
    std::string s = fmt::format("\n\nThe kernel is correct. You have {} more turn{} to make it faster", turns_left,
                                turns_left == 1 ? "" : "s");
    if (res_.speedup > 0) s += fmt::format(" (best speedup so far {:.2f}x over the baseline)", res_.speedup);
    s += ": call profile for where the time goes, verify every change, and submit the fastest correct kernel.";
    return s;
  }

  // On the first pass with optimisation turns ahead: the profile of the passing kernel, run by the
  // loop itself, so the model starts optimising from where the time goes.
  std::string first_pass_profile(int turn) {
    if (best_passed_.empty()) return {};
    ToolCall implicit{"profile-" + std::to_string(turn), "profile", "{}"};
    ToolResult tr = tools_.profile(best_passed_);
    ++res_.tool_calls;
    record_tool(turn, implicit, tr, true);
    if (tr.is_error || !tr.compiled) return {};
    std::string text = tr.content;
    if (truncate_utf8(text, 2500)) text += "\n[... call profile for the rest]";
    return "\n\nSimulated profile of the passing kernel:\n" + text;
  }

  void single_shot() {
    LlmClient& llm = current();
    auto resp = call_model(llm, 1, /*with_tools=*/false);
    if (!resp) return;  // interrupted (call_model says so)
    if (resp->stop_reason == "refusal") {
      refused_ = true;
      return;
    }
    const std::string src = extract_kernel(resp->text, task_.entry);
    if (src.empty()) {
      res_.error = "the reply holds no python code block";
      progress("turn 1: no kernel in the reply");
      return;
    }
    ToolCall implicit{
        "single-shot", "verify",
        nlohmann::json({{"kernel_code", src}}).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)};
    ToolResult tr = tools_.verify(src);
    res_.tool_calls = 1;
    record_tool(1, implicit, tr, true);
    absorb(tr);
  }

  void loop() {
    int optimize_left = opt_.optimize_turns;
    bool done = false;
    for (int turn = 1; !done; ++turn) {
      if (!res_.passed && turn > opt_.max_turns) break;
      if (res_.passed) {
        if (optimize_left <= 0) break;
        --optimize_left;
      }
      if (hooks_.cancel && hooks_.cancel->load()) {
        res_.error = "cancelled";
        interrupted_ = true;
        break;
      }
      LlmClient& llm = current();
      auto resp = call_model(llm, turn, /*with_tools=*/true);
      if (!resp) break;  // interrupted (call_model says so)
      if (resp->stop_reason == "refusal") {
        refused_ = true;
        progress(fmt::format("turn {}: the model refused", turn));
        break;
      }
      const bool passed_before = res_.passed;
      bool turn_failed = false;
      if (resp->tool_calls.empty()) {
        const std::string src = extract_kernel(resp->text, task_.entry);
        if (!src.empty() && src != last_verified_) {
          ToolCall implicit{
              "reply-" + std::to_string(turn), "verify",
              nlohmann::json({{"kernel_code", src}}).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)};
          ToolResult tr = tools_.verify(src);
          last_verified_ = src;
          ++res_.tool_calls;
          record_tool(turn, implicit, tr, true);
          const bool ok = absorb(tr);
          if (ok && opt_.optimize_turns == 0) break;
          if (ok && res_.passed && passed_before) {
            done = true;  // an optimising model ended its turn with a passing kernel: its answer
            break;
          }
          std::string text = "Your reply ended without a tool call, so its last kernel was verified:\n" + tr.content;
          if (ok)
            text += optimize_note(optimize_left) + first_pass_profile(turn);
          else
            text += "\nFix it and call verify (or submit) with the corrected kernel.";
          turn_failed = !ok;
          add_user(turn, std::move(text));
        } else if (resp->stop_reason == "max_tokens" || resp->stop_reason == "truncated") {
          add_user(turn,
                   "Your reply was cut off. Keep replies short: send the kernel through the compile or verify "
                   "tool instead of repeating it in text.");
          turn_failed = true;
        } else {
          add_user(turn, res_.passed ? "Submit your fastest correct kernel with the submit tool, or keep optimising."
                                     : "Write the kernel and call the compile and verify tools with it; submit it when "
                                       "it passes.");
          turn_failed = !res_.passed;
        }
        if (turn_failed && !res_.passed) ++failed_turns_;
        continue;
      }
      bool any_pass = false;
      for (size_t i = 0; i < resp->tool_calls.size(); ++i) {
        const ToolCall& call = resp->tool_calls[i];
        ToolResult tr = tools_.call(call);
        ++res_.tool_calls;
        if (tr.verified && !tr.kernel.empty()) last_verified_ = tr.kernel;
        const bool ok = absorb(tr);
        any_pass = any_pass || ok;
        if (tr.is_error || (tr.verified && !tr.passed) || (!tr.compiled && call.name != "lookup")) turn_failed = true;
        if (tr.submitted && ok) done = true;
        std::string content = tr.content;
        if (i + 1 == resp->tool_calls.size() && res_.passed && !done && opt_.optimize_turns > 0) {
          const int left = passed_before ? optimize_left : opt_.optimize_turns;
          if (left > 0) content += optimize_note(left) + (passed_before ? std::string() : first_pass_profile(turn));
        }
        record_tool(turn, call, tr, false, &content);
        messages_.push_back(Message{Role::kTool, std::move(content), {}, call.id, call.name, tr.is_error});
      }
      if (any_pass && !passed_before && opt_.optimize_turns == 0) done = true;
      if (!res_.passed && turn_failed) ++failed_turns_;
    }
  }

  void finish() {
    if (res_.passed) {
      res_.kernel = best_passed_;
      res_.status = "passed";
    } else {
      res_.kernel = !last_compiled_.empty() ? last_compiled_ : last_kernel_;
      if (refused_)
        res_.status = "refused";
      else
        res_.status = res_.compiled ? "compiled" : "failed";
      if (res_.verify && res_.verify->passed) res_.verify.reset();
    }
    res_.last_kernel = last_kernel_;
    if (res_.passed) {
      res_.outcome = kOutcomePassed;
    } else {
      res_.check = last_check_;
      if (res_.code.empty()) res_.code = last_code_;
      res_.outcome = refused_            ? kOutcomeRefused
                     : !tried_           ? kOutcomeBudgetExhausted
                     : last_compiled_ok_ ? kOutcomeFailedCheck
                                         : kOutcomeCompileError;
    }
    // Cut short by the endpoint or a stop, not by the task: what it reached is kept, but it is not a result.
    if (interrupted_) {
      res_.status = kStatusInterrupted;
      res_.outcome = endpoint_failed_ ? kOutcomeEndpointFailure : kOutcomeInterrupted;
    }
    res_.seconds = seconds_since(t0_);
    emit({{"type", "end"}, {"result", res_.to_json()}, {"kernel", res_.kernel}});
    progress(fmt::format("{} after {} turn{}, {} tool call{}{}", res_.status, res_.turns, res_.turns == 1 ? "" : "s",
                         res_.tool_calls, res_.tool_calls == 1 ? "" : "s",
                         res_.speedup > 0 ? fmt::format(", speedup {:.2f}x", res_.speedup) : ""));
  }

  const Task& task_;
  AgentTools& tools_;
  LlmClient& model_;
  LlmClient* stronger_;
  const SolveOptions& opt_;
  const SolveHooks& hooks_;
  Clock::time_point t0_;
  SolveResult res_;
  std::string system_;
  std::vector<Message> messages_;
  std::string last_kernel_, last_compiled_, best_passed_, last_verified_;
  int failed_turns_ = 0;
  bool escalated_ = false, refused_ = false;
  bool interrupted_ = false;      // a model call failed, or the run was cancelled
  bool endpoint_failed_ = false;  // ... a model call failed without a stop
  // The last kernel tried: whether one was, whether it compiled, and its failed check and code.
  bool tried_ = false, last_compiled_ok_ = false;
  std::string last_check_, last_code_;
};

}  // namespace

nlohmann::json SolveResult::to_json() const {
  nlohmann::json j = {{"task", task},
                      {"status", status},
                      {"compiled", compiled},
                      {"passed", passed},
                      {"speedup", speedup},
                      {"turns", turns},
                      {"tool_calls", tool_calls},
                      {"first_pass_turn", first_pass_turn},
                      {"usage", usage_json(usage)},
                      {"cost_usd", cost_usd},
                      {"seconds", seconds},
                      {"model_seconds", model_seconds},
                      {"tool_seconds", tool_seconds},
                      {"models", models},
                      {"prompt_version", prompt_version},
                      {"outcome", outcome}};
  if (!check.empty()) j["check"] = check;
  if (!code.empty()) j["code"] = code;
  if (!error.empty()) j["error"] = error;
  if (verify) {
    nlohmann::json v = {{"passed", verify->passed},
                        {"check", verify->check},
                        {"cases_total", verify->cases_total},
                        {"cases_passed", verify->cases_passed},
                        {"speed", verify->speed.to_json()}};
    j["verify"] = std::move(v);
  }
  return j;
}

Result<SolveResult> solve_task(const Task& task, AgentTools& tools, LlmClient& model, LlmClient* stronger,
                               const SolveOptions& options, const SolveHooks& hooks) {
  Run run(task, tools, model, stronger, options, hooks);
  return run.go();
}

}  // namespace nki_agent
