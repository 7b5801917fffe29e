// tasks/verify_check.h — the checks a verification can fail, each with its name. A check's title
// and hint are its code's entry in the error table (nki/error_table_run.cpp).
//
// A failed check's name is what VerifyResult::check and CaseResult::check hold, what the JSON and
// the human summary show, and, prefixed with "nkia_verify_", the code of the Diagnostic a failure
// the kernel itself did not raise becomes. These names are stable: the error catalogue, the agent
// and the benchmark reports key on them, so a check is never renamed, only added.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace nki_agent {

enum class VerifyCheck {
  kStaticPolicy,       // the candidate's source breaks the static policy (tasks/static_policy.h)
  kKernelError,        // the kernel raised a Diagnostic in the sandbox
  kOutputCount,        // it returned the wrong number of outputs
  kOutputShape,        // an output has the wrong shape
  kOutputDtype,        // an output has the wrong dtype
  kUnwritten,          // elements of an output were never stored (tasks/compare.h)
  kUninitializedRead,  // NaN from memory nothing wrote reached an output
  kZeroOutput,         // an output is all zeros where the reference is not
  kConstantOutput,     // an output holds one value where the reference does not
  kInputCopy,          // an output is a copy of an input
  kMismatch,           // elements differ beyond the tolerance
  kRelativeNorm,       // the output's relative error norm is too large
};
inline constexpr int kNumVerifyChecks = static_cast<int>(VerifyCheck::kRelativeNorm) + 1;  // keep with the last

// "static_policy", "kernel_error", "output_count", ... (the names above in snake_case).
std::string_view check_name(VerifyCheck check);
// The check named `name`; nullopt for a name that is not a check.
std::optional<VerifyCheck> check_by_name(std::string_view name);
// "nkia_verify_<name>": the code of the Diagnostic a failed check becomes.
std::string check_code(VerifyCheck check);

}  // namespace nki_agent
