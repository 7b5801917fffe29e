// The table of verification checks (tasks/verify_check.h): one row a check, with its name.
#include "tasks/verify_check.h"

#include <iterator>

#include "core/diagnostic.h"

namespace nki_agent {

namespace {

struct CheckRow {
  VerifyCheck check;
  std::string_view name;
};

constexpr CheckRow kChecks[] = {
    {VerifyCheck::kStaticPolicy, "static_policy"},
    {VerifyCheck::kKernelError, "kernel_error"},
    {VerifyCheck::kOutputCount, "output_count"},
    {VerifyCheck::kOutputShape, "output_shape"},
    {VerifyCheck::kOutputDtype, "output_dtype"},
    {VerifyCheck::kUnwritten, "unwritten"},
    {VerifyCheck::kUninitializedRead, "uninitialized_read"},
    {VerifyCheck::kZeroOutput, "zero_output"},
    {VerifyCheck::kConstantOutput, "constant_output"},
    {VerifyCheck::kInputCopy, "input_copy"},
    {VerifyCheck::kMismatch, "mismatch"},
    {VerifyCheck::kRelativeNorm, "relative_norm"},
};
static_assert(std::size(kChecks) == kNumVerifyChecks, "one row per VerifyCheck");

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

std::optional<VerifyCheck> check_by_name(std::string_view name) {
  for (const CheckRow& r : kChecks)
    if (r.name == name) return r.check;
  return std::nullopt;
}

std::string check_code(VerifyCheck check) {
  return "nkia_verify_" + std::string(row(check).name);
}

}  // namespace nki_agent
