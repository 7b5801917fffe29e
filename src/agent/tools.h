// agent/tools.h — the tools the agent offers a model, bound to one task.
//
//   compile  run the kernel timing-only at the task's prompt shapes: the simulator's first
//            Diagnostic (code, file:line, message, fix hint), or what the kernel issues and
//            whether its outputs have the task's shapes and dtypes;
//   verify   the full verification (tasks/verify.h: seeds x shapes x input distributions, static
//            policy, degenerate-output guards) and, for a passing kernel, its simulated speed
//            against the task's baseline and the roofline;
//   profile  the cost model's profile at the prompt shapes: latency, engine use, MFU/MBU, the
//            hottest source lines and insights;
//   lookup   the documentation database (agent/docs_db.h): any nl./nisa. API, any error code,
//            programming guides;
//   submit   the final answer: verified (again, if it changed) and ends the loop when it passes.
//
// Every kernel-taking tool accepts `kernel_code` (the complete module source); when it is omitted
// the last kernel the model sent is used, so a model need not resend an unchanged kernel. Results
// are plain text a model can act on, capped at max_result_chars; the structured result goes to the
// trajectory. A tool never throws: bad arguments, a broken kernel or a failing sandbox are results
// with is_error set, and the loop carries on.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "agent/llm.h"
#include "runtime/kernel_service.h"
#include "tasks/task.h"
#include "tasks/verify.h"

namespace nki_agent {

inline constexpr size_t kDefaultToolResultChars = 6000;

struct ToolResult {
  std::string content;  // what the model reads
  bool is_error = false;
  nlohmann::json data;  // the structured result (trajectory)
  double seconds = 0;
  // What the call established about its kernel.
  std::string kernel;  // the source the tool ran on (empty: none)
  bool compiled = false;
  bool verified = false;   // a verify (or submit) ran to a verdict
  bool passed = false;     // ... and it passed
  bool submitted = false;  // submit was called
  std::optional<VerifyResult> verify;
};

class AgentTools {
 public:
  AgentTools(const Task& task, KernelService& service, VerifyOptions verify_options,
             size_t max_result_chars = kDefaultToolResultChars);

  // The tools as offered to the model. `with_submit` false leaves submit out.
  std::vector<ToolSpec> specs(bool with_submit = true) const;
  ToolResult call(const ToolCall& call);

  // The tools as plain functions (the loop's final checks, tests).
  ToolResult compile(const std::string& source);
  ToolResult verify(const std::string& source);
  // The same for a kernel of several files (a task's baseline with its library); `kernel` in the
  // result is the main file's source.
  ToolResult verify(const KernelFiles& files);
  ToolResult profile(const std::string& source);
  ToolResult lookup(const std::string& query);

  const std::string& last_kernel() const { return last_kernel_; }

 private:
  // The timing-only run at the prompt's shapes that compile and profile share; records the kernel
  // in `r` and as the last one sent.
  Result<KernelOutcome> timing_run(const std::string& source, ToolResult& r);
  std::string cap(std::string text) const;

  const Task& task_;
  KernelService& service_;
  VerifyOptions verify_options_;
  size_t max_chars_;
  std::string last_kernel_;
  // The last verification, by the digest of its files: submit after a passing verify does not
  // verify again.
  std::string verified_digest_;
  std::optional<VerifyResult> verified_result_;
};

// Shortens `text` to at most `max_bytes`, cutting at a UTF-8 character boundary; false when it
// already fitted. Tool results and the loop's excerpts are capped with it.
bool truncate_utf8(std::string& text, size_t max_bytes);

// The ```python fenced blocks of a text, in order (an unclosed last fence runs to the end; a block
// with no language counts when it mentions nki), each with the offset of its opening fence.
struct PythonBlock {
  size_t offset = 0;
  std::string body;
};
std::vector<PythonBlock> python_blocks(const std::string& text);
// Whether `source` defines a function `name` (a plain text test: `def name(`).
bool defines_function(const std::string& source, const std::string& name);

// The last ```python fenced block of a reply that defines `entry` (or, failing that, the last
// python block); empty when there is none. Single-shot replies and replies that end the turn with
// code instead of calling a tool are read with this.
std::string extract_kernel(const std::string& text, const std::string& entry);

}  // namespace nki_agent
