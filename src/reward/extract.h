// reward/extract.h — the kernel(s) a model's answer holds.
//
// An RL trainer hands over what the model produced, in one of three forms: the raw response text
// (verl's solution_str, TRL's completion, OpenRLHF's query), the kernel module itself, or one tool
// call. From text, the kernels are the ```python fenced blocks and the hermes-style
// <tool_call>{"name": ..., "arguments": {"kernel_code": ...}}</tool_call> tags, in the order they
// appear (a multi-turn response holds every turn's); the blocks that define the task's entry count,
// and when none does, the last Python block. An answer with none has no kernel: the `format`
// component is 0.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace nki_agent {

struct Submission {
  std::string response;                    // raw text
  std::string prompt;                      // cut from the front of `response` when it starts with it
  std::optional<std::string> kernel_code;  // the module itself
  // A tool call: {"name": ..., "arguments": {...} or "<json text>"}; the kernel is
  // arguments.kernel_code.
  std::optional<nlohmann::json> tool_call;
};

struct ExtractedKernels {
  std::vector<std::string> kernels;  // in turn order; the last is the answer; empty: none found
  std::string source;                // "kernel_code", "tool_call", "response"
};

ExtractedKernels extract_kernels(const Submission& s, const std::string& entry);

}  // namespace nki_agent
