// serve/wire.h — the request and answer bodies of every route (docs/serve.md), kept apart from the
// HTTP server so that each format is tested on its own.
//
// Parsing is defensive: a body is size- and depth-checked before it is parsed, every field is
// type-checked, and each failure is a Diagnostic naming the field (the route answers 400 with it).
// The adapters (OpenRLHF, slime, KernelGYM, the op-based reward server) translate their fields into
// RewardRequests for the one scoring core and its results back into their answers.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "agent/tools.h"
#include "core/diagnostic.h"
#include "core/json_bounded.h"
#include "reward/score_types.h"
#include "tasks/speed.h"
#include "tensor/tensor_spec.h"

namespace nki_agent::serve {

inline constexpr size_t kMaxBatchItems = 256;

// The body as JSON. Code nkia_serve_bad_json: not JSON, or nested deeper than `max_depth`.
inline constexpr int kMaxBodyDepth = 64;
Result<nlohmann::json> parse_json_body(std::string_view body, int max_depth = kMaxBodyDepth);

// POST /v1/reward. Codes: nkia_reward_bad_request (a field of the wrong type or range, none or
// several of response / kernel_code / tool_call, no task_id and no reference_code).
Result<RewardRequest> reward_request_from_json(const nlohmann::json& j);
// The items of POST /v1/reward/batch, each parsed on its own (a bad item is its own error). Code of
// the whole: nkia_reward_bad_request (no `items` list, more than kMaxBatchItems).
Result<std::vector<Result<RewardRequest>>> batch_requests_from_json(const nlohmann::json& j);

// The fields every tool route takes: {"task_id", "kernel_code"}.
struct ToolRequest {
  std::string task_id;
  std::string kernel_code;
};
Result<ToolRequest> tool_request_from_json(const nlohmann::json& j);
nlohmann::json tool_answer(const ToolResult& r);

// OpenRLHF: {"query": [...], "prompts": [...], "labels": [...]} -> one request per query. A label
// is a task id, or an object (or its JSON text) of reward-request fields with task_id.
Result<std::vector<Result<RewardRequest>>> openrlhf_requests(const nlohmann::json& j);
// {"rewards": [...], "scores": [...], "extra_logs": {...}}: a result that could not be scored is
// reward 0 and counted in extra_logs.nki_errors.
nlohmann::json openrlhf_answer(const std::vector<RewardResult>& results);

// slime: {"prompt", "response", "label"} -> one request; the answer is the bare score (0 when it
// could not be scored).
Result<RewardRequest> slime_request(const nlohmann::json& j);
nlohmann::json slime_answer(const RewardResult& r);

// KernelGYM: {"task_id", "kernel_code", "metadata": {"task": ...}, ...}. The task is
// metadata.task, else task_id. `request_id` receives task_id (what /status and /results look up).
Result<RewardRequest> kernelgym_request(const nlohmann::json& j, std::string& request_id);
nlohmann::json kernelgym_answer(const std::string& request_id, const RewardResult& r);
nlohmann::json kernelgym_error(const std::string& request_id, const Diagnostic& d);

// The op-based reward server: {"op": "compile"|"verify"|"profile"|"baseline", "kernel_source",
// "task_id", ...}.
// compile and profile need no task: given `input_specs` ([{"shape": [..], "dtype": ".."}], the
// reference server's field) instead of a task_id, the kernel's entry `nki_kernel` (that server's
// convention) runs timing-only on zeros of those shapes.
struct OpRequest {
  std::string op{};
  std::string task_id{};  // empty: input_specs
  std::string kernel_source{};
  std::vector<TensorSpec> input_specs{};
  std::string target = "trn1";
};
inline constexpr const char* kOpEntry = "nki_kernel";
Result<OpRequest> op_request_from_json(const nlohmann::json& j);
// That op's answer fields from the tool's result (compile, verify, profile).
nlohmann::json op_answer(const OpRequest& req, const ToolResult& r);
// op = baseline: the task baseline's simulated latency.
nlohmann::json op_baseline_answer(const SpeedResult& s, double seconds);

// Whether a request carries reference code of its own (reference_code, reference_source). The
// reward routes make a task of it (RewardRequest::inline_reference, tasks/inline_task.h); the
// KernelGYM adapter sets it aside when the request names a task of the server's (metadata.task,
// kernelgym_names_task), and the op-based adapter always does (its ops name tasks); their answers
// then say that it was (kInlineReferenceNote).
bool carries_inline_reference(const nlohmann::json& j);
bool kernelgym_names_task(const nlohmann::json& j);
inline constexpr const char* kInlineReferenceNote =
    "ignored: the kernel was scored against the server's own task and its reference";

// {"error": {"code", "message"}} of a refusal.
nlohmann::json error_body(const Diagnostic& d);

}  // namespace nki_agent::serve
