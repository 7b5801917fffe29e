// The table of verification checks (tasks/verify_check.h): one row a check, its name and its hint.
#include "tasks/verify_check.h"

#include "core/diagnostic.h"

namespace nki_agent {

namespace {

struct CheckRow {
  VerifyCheck check;
  std::string_view name;
  std::string_view hint;
};

constexpr std::string_view kComputeHint = "compute the result from the inputs and store it into the tensor you return";
constexpr std::string_view kMathHint =
    "compare your math with task.py's forward step by step; keep the task's precision (no bfloat16 shortcuts in a "
    "float32 task) and check the axes of reductions and broadcasts";

constexpr CheckRow kChecks[] = {
    {VerifyCheck::kStaticPolicy, "static_policy", ""},
    {VerifyCheck::kKernelError, "kernel_error", ""},
    {VerifyCheck::kOutputCount, "output_count",
     "return every output of forward(), in order, as a tuple when there are several"},
    {VerifyCheck::kOutputShape, "output_shape",
     "derive every size from the input shapes (x.shape), never from constants: the task runs your kernel at several "
     "shapes"},
    {VerifyCheck::kOutputDtype, "output_dtype", "allocate each output with the task's dtype"},
    {VerifyCheck::kUnwritten, "unwritten",
     "store every element of each output: derive trip counts from the input shapes with ceiling division and mask "
     "the last, partial tile"},
    {VerifyCheck::kUninitializedRead, "uninitialized_read",
     "give the compute and store calls the same mask as the load that filled the tile, or initialise the tile "
     "(nl.zeros, nisa.memset) before a partial load"},
    {VerifyCheck::kZeroOutput, "zero_output", kComputeHint},
    {VerifyCheck::kConstantOutput, "constant_output", kComputeHint},
    {VerifyCheck::kInputCopy, "input_copy", "the output must be computed from the inputs, not copied from one of them"},
    {VerifyCheck::kMismatch, "mismatch", kMathHint},
    {VerifyCheck::kRelativeNorm, "relative_norm", kMathHint},
};

const CheckRow& row(VerifyCheck check) {
  for (const CheckRow& r : kChecks)
    if (r.check == check) return r;
  NKIA_ASSERT(false && "a VerifyCheck without a row");
  return kChecks[0];
}

}  // namespace

std::string_view check_name(VerifyCheck check) {
  return row(check).name;
}

std::string_view check_hint(VerifyCheck check) {
  return row(check).hint;
}

std::optional<VerifyCheck> check_by_name(std::string_view name) {
  for (const CheckRow& r : kChecks)
    if (r.name == name) return r.check;
  return std::nullopt;
}

std::string check_code(VerifyCheck check) {
  return "nkia_verify_" + std::string(row(check).name);
}

}  // namespace nki_agent
