// tasks/compare.h — one kernel output against its reference, and what exactly is wrong with it.
//
// The verdict is meant for a model fixing its kernel, so a failure names the check and gives the
// numbers: max abs/rel error, mismatch count, the first bad index with both values. Checks, in
// the order a failure is named:
//   unwritten        NaN where the reference is finite and the kernel never stored there (fresh
//                    kernel memory holds NaN); where the simulator does not know what was stored
//                    (a host function's arrays), every such NaN counts
//   uninitialized_read  (named by verify, from mismatch) NaN stored where the reference is finite,
//                    and the run warned that it read memory nothing wrote: garbage from masked-off
//                    lanes reached the output
//   zero_output      every element is 0 but the reference is not
//   constant_output  every element is the same value but the reference varies
//   input_copy       the output equals one of the kernel's inputs, the reference does not
//   mismatch         elements outside |a - e| <= atol * s + rtol * |e|, where s = max(1, the median
//                    |e|) keeps atol meaningful when a profile scales outputs by 100 or 1e-3
//   relative_norm    ||a - e|| / ||e|| > norm_rtol: catches outputs that are off everywhere by a
//                    little less than the element tolerance, and near-zero references where
//                    the element check is vacuous
// Non-finite reference values must be matched exactly (same infinity, NaN for NaN). Integer and
// bool outputs are compared exactly unless the task gives them a tolerance.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "runtime/kernel_call.h"
#include "tasks/task.h"
#include "tensor/tensor.h"

namespace nki_agent {

struct OutputCheck {
  std::string check;    // empty: passed; else one of the names above (check_name, tasks/verify_check.h)
  std::string message;  // one sentence with the numbers
  int64_t elements = 0;
  int64_t mismatches = 0;  // elements outside the element tolerance (non-finite disagreements included)
  int64_t unwritten = 0;   // NaN where the reference is finite, never stored to
  int64_t stored_nan = 0;  // NaN where the reference is finite, though the kernel stored there
  double max_abs_error = 0;
  double max_rel_error = 0;
  double rel_norm_error = 0;
  Shape first_bad_index;  // empty when none
  double first_bad_actual = 0, first_bad_expected = 0;
  double expected_max_abs = 0;       // largest finite |reference|
  bool reference_too_small = false;  // max |reference| <= atol: only the norm check has teeth

  bool passed() const { return check.empty(); }
  nlohmann::json to_json() const;
};

// Both tensors must have the same shape (the caller checks shapes and dtypes first). `inputs` are
// the kernel's inputs, for the input_copy guard.
// `stores` (may be null) says which elements the kernel never stored to.
OutputCheck compare_output(const Tensor& actual, const Tensor& expected, const Tolerance& tol,
                           std::span<const Tensor> inputs, const OutputStores* stores = nullptr);

// Whether a reference output is degenerate for verification: all zero, constant, non-finite
// everywhere, or below the tolerance (a zero output would pass its element check). Empty: fine;
// else the reason. For task checks (nki-agent tasks check).
std::string degenerate_reference(const Tensor& expected, const Tolerance& tol);

}  // namespace nki_agent
