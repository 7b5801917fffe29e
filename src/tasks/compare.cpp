// Output comparison and the degenerate-output guards (tasks/compare.h).
#include "tasks/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/target_clones.h"
#include "tasks/verify_check.h"

namespace nki_agent {

namespace {

// Elements sampled for the median magnitude: a strided sample is plenty for a scale.
constexpr int64_t kMedianSample = 1 << 16;

Shape unravel(int64_t flat, const Shape& shape) {
  Shape idx(shape.size(), 0);
  for (int i = static_cast<int>(shape.size()) - 1; i >= 0; --i) {
    if (shape[i] == 0) break;
    idx[i] = flat % shape[i];
    flat /= shape[i];
  }
  return idx;
}

std::string fmt_index(const Shape& idx) {
  std::string s = "[";
  for (size_t i = 0; i < idx.size(); ++i) s += (i ? ", " : "") + std::to_string(idx[i]);
  return s + "]";
}

double median_abs(const float* e, int64_t n) {
  std::vector<float> sample;
  const int64_t step = std::max<int64_t>(1, n / kMedianSample);
  for (int64_t i = 0; i < n; i += step)
    if (std::isfinite(e[i])) sample.push_back(std::fabs(e[i]));
  if (sample.empty()) return 0;
  auto mid = sample.begin() + static_cast<std::ptrdiff_t>(sample.size() / 2);
  std::nth_element(sample.begin(), mid, sample.end());
  return *mid;
}

bool same_values(const std::vector<float>& a, const Tensor& input) {
  if (input.numel() != static_cast<int64_t>(a.size())) return false;
  std::vector<float> b = input.to_f32_vector();
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) && std::isnan(b[i])) continue;
    if (a[i] != b[i]) return false;
  }
  return true;
}

}  // namespace

nlohmann::json OutputCheck::to_json() const {
  nlohmann::json j = {{"passed", passed()},
                      {"elements", elements},
                      {"mismatches", mismatches},
                      {"unwritten", unwritten},
                      {"stored_nan", stored_nan},
                      {"max_abs_error", max_abs_error},
                      {"max_rel_error", max_rel_error},
                      {"rel_norm_error", rel_norm_error},
                      {"expected_max_abs", expected_max_abs},
                      {"reference_too_small", reference_too_small}};
  if (!check.empty()) {
    j["check"] = check;
    j["message"] = message;
  }
  if (!first_bad_index.empty() || (mismatches > 0 && elements == 1)) {
    j["first_bad_index"] = first_bad_index;
    j["first_bad_actual"] = first_bad_actual;
    j["first_bad_expected"] = first_bad_expected;
  }
  // JSON has no NaN/inf: nlohmann writes null for them, which is what we want.
  return j;
}

namespace {

// The values of `t` as contiguous float32, without a copy when they already are.
struct F32View {
  Tensor holder;
  const float* data = nullptr;
  int64_t n = 0;
  explicit F32View(const Tensor& t) {
    holder = t.dtype() == DType::kFloat32 ? t.contiguous() : t.astype(DType::kFloat32).contiguous();
    data = holder.numel() ? holder.data_as<float>() : nullptr;
    n = holder.numel();
  }
};

bool all_equal_to_first(const float* v, int64_t n) {
  for (int64_t i = 1; i < n; ++i)
    if (!(v[i] == v[0] || (std::isnan(v[i]) && std::isnan(v[0])))) return false;
  return true;
}

// The running figures of a comparison.
struct Sums {
  double diff2 = 0, ref2 = 0, max_abs = 0, max_rel = 0, ref_max = 0;
};

// Elements per block of the fast pass.
constexpr int64_t kCleanBlock = 4096;

// Lanes of the fast pass: double vectors of kLanes elements (GCC's vector extension; one AVX-512
// register, two AVX2 or four SSE2 ones, whichever clone runs).
constexpr int kLanes = 8;
using LaneF = float __attribute__((vector_size(kLanes * sizeof(float))));
using LaneD = double __attribute__((vector_size(kLanes * sizeof(double))));
using LaneMask = int64_t __attribute__((vector_size(kLanes * sizeof(int64_t))));

// The fast pass over one block of float elements: true, with the block's figures added to `s`,
// when every element is finite on both sides and within tolerance — the common case, computed
// without branches in kLanes lanes. False, with `s` untouched, when any element is not: the caller
// then redoes the block element by element. A NaN or an infinity on either side makes its lane's
// sum of squares NaN or infinite (squares of finite float32 values cannot overflow a double sum of
// a block); an error beyond tolerance makes `worst` positive. No mask vectors: GCC lowers their
// logic to scalar code in target_clones functions (core/target_clones.h).
NKIA_TARGET_CLONES bool clean_block(const float* a, const float* e, int64_t n, double atol, double rtol,
                                    double rel_floor, Sums& s) {
  const LaneD zero = {}, lim0 = zero + atol, floor = zero + rel_floor;
  LaneD d2 = zero, r2 = zero, max_abs = zero, max_rel = zero, ref_max = zero;
  const LaneMask abs_mask = LaneMask{} + std::numeric_limits<int64_t>::max();  // every bit but the sign
  LaneD worst = zero - 1;  // the largest err - (atol + rtol * |expected|)
  // The tail runs as one more step, padded with zeros on both sides (an exact match adds nothing).
  const int64_t full = n / kLanes * kLanes;
  float tail_a[kLanes] = {}, tail_e[kLanes] = {};
  std::memcpy(tail_a, a + full, static_cast<size_t>(n - full) * sizeof(float));
  std::memcpy(tail_e, e + full, static_cast<size_t>(n - full) * sizeof(float));
  for (int64_t i = 0; i < n; i += kLanes) {
    LaneF af, ef;
    std::memcpy(&af, i < full ? a + i : tail_a, sizeof af);
    std::memcpy(&ef, i < full ? e + i : tail_e, sizeof ef);
    const LaneD x = __builtin_convertvector(af, LaneD), y = __builtin_convertvector(ef, LaneD);
    const LaneD err = (LaneD)((LaneMask)(x - y) & abs_mask), mag = (LaneD)((LaneMask)y & abs_mask);  // |.|
    const LaneD over = err - (lim0 + rtol * mag);
    worst = over > worst ? over : worst;
    d2 += err * err;
    r2 += y * y;
    max_abs = err > max_abs ? err : max_abs;
    ref_max = mag > ref_max ? mag : ref_max;
    const LaneD rel = err / (mag > floor ? mag : floor);
    max_rel = rel > max_rel ? rel : max_rel;
  }
  for (int k = 0; k < kLanes; ++k)
    if (!(worst[k] <= 0) || !std::isfinite(d2[k]) || !std::isfinite(r2[k])) return false;
  for (int k = 0; k < kLanes; ++k) {
    s.diff2 += d2[k];
    s.ref2 += r2[k];
    s.max_abs = std::max(s.max_abs, max_abs[k]);
    s.max_rel = std::max(s.max_rel, max_rel[k]);
    s.ref_max = std::max(s.ref_max, ref_max[k]);
  }
  return true;
}

}  // namespace

OutputCheck compare_output(const Tensor& actual, const Tensor& expected, const Tolerance& tol,
                           std::span<const Tensor> inputs, const OutputStores* stores) {
  const bool stores_known = stores != nullptr && stores->known && !stores->truncated;
  OutputCheck r;
  const F32View av(actual), ev(expected);
  const float* a = av.data;
  const float* e = ev.data;
  const int64_t n = ev.n;
  r.elements = n;
  const bool exact_ints =
      !dtype_is_float(expected.dtype()) && !dtype_is_float(actual.dtype()) && tol.atol == 0 && tol.rtol == 0;
  std::vector<int64_t> ai, ei;
  if (exact_ints) {  // float32 loses integers beyond 2^24
    ai = actual.to_i64_vector();
    ei = expected.to_i64_vector();
  }
  const double scale = std::max(1.0, median_abs(e, n));
  const double atol = tol.atol * scale;
  const double rel_floor = tol.atol > 0 ? tol.atol : 1e-30;
  Sums sums;
  double& diff2 = sums.diff2;
  double& ref2 = sums.ref2;
  double& max_abs = sums.max_abs;
  double& max_rel = sums.max_rel;
  double& ref_max = sums.ref_max;
  int64_t first_bad = -1, first_unwritten = -1, mismatches = 0;
  for (int64_t b0 = 0; b0 < n; b0 += kCleanBlock) {
    const int64_t b1 = std::min(n, b0 + kCleanBlock);
    if (!exact_ints && clean_block(a + b0, e + b0, b1 - b0, atol, tol.rtol, rel_floor, sums)) continue;
    for (int64_t i = b0; i < b1; ++i) {
      const double x = a[i], y = e[i];
      bool bad;
      if (exact_ints) {
        const double err = std::fabs(static_cast<double>(ai[i]) - static_cast<double>(ei[i]));
        bad = ai[i] != ei[i];
        max_abs = std::max(max_abs, err);
        diff2 += err * err;
        ref2 += static_cast<double>(ei[i]) * static_cast<double>(ei[i]);
        ref_max = std::max(ref_max, std::fabs(static_cast<double>(ei[i])));
      } else if (std::isfinite(y) && std::isfinite(x)) {  // the common case
        const double err = std::fabs(x - y), mag = std::fabs(y);
        bad = err > atol + tol.rtol * mag;
        ref_max = std::max(ref_max, mag);
        max_abs = std::max(max_abs, err);
        max_rel = std::max(max_rel, err / std::max(mag, rel_floor));
        diff2 += err * err;
        ref2 += y * y;
      } else if (std::isnan(y)) {
        bad = !std::isnan(x);
      } else if (std::isinf(y)) {
        bad = x != y;
      } else {  // a finite reference, a NaN or infinite result
        ref_max = std::max(ref_max, std::fabs(y));
        bad = true;
        if (std::isnan(x)) {
          if (!stores_known || stores->unstored_at(i)) {
            ++r.unwritten;
            if (first_unwritten < 0) first_unwritten = i;
          } else {
            ++r.stored_nan;
          }
        }
        max_abs = std::numeric_limits<double>::infinity();
      }
      if (bad) {
        ++mismatches;
        if (first_bad < 0) first_bad = i;
      }
    }
  }
  r.mismatches = mismatches;
  r.max_abs_error = max_abs;
  r.max_rel_error = max_rel;
  r.expected_max_abs = ref_max;
  r.rel_norm_error = ref2 > 0 ? std::sqrt(diff2 / ref2) : (diff2 > 0 ? std::numeric_limits<double>::infinity() : 0.0);
  r.reference_too_small = dtype_is_float(expected.dtype()) && r.expected_max_abs <= tol.atol;
  if (first_bad >= 0) {
    r.first_bad_index = unravel(first_bad, expected.shape());
    r.first_bad_actual = a[first_bad];
    r.first_bad_expected = e[first_bad];
  }
  const bool norm_bad = !exact_ints && ref2 > 0 && r.rel_norm_error > tol.norm_rtol;
  if (r.mismatches == 0 && !norm_bad) return r;

  // Wrong: say how, most specific first. These passes run only on failures.
  std::vector<float> af(a, a + n);
  const bool all_zero = n > 0 && std::all_of(a, a + n, [](float v) { return v == 0; });
  const bool ref_all_zero = std::all_of(e, e + n, [](float v) { return v == 0; });
  const bool all_same = n > 0 && all_equal_to_first(a, n);
  const bool ref_all_same = n > 0 && all_equal_to_first(e, n);
  std::vector<float> ef(e, e + n);
  const std::string at = first_bad >= 0
                             ? fmt::format(" (first at {}: got {}, expected {})", fmt_index(r.first_bad_index),
                                           r.first_bad_actual, r.first_bad_expected)
                             : "";
  if (r.unwritten > 0) {
    const int64_t u = first_unwritten;
    const std::string first = fmt::format(" (first at {}: expected {})", fmt_index(unravel(u, expected.shape())), e[u]);
    r.check = check_name(VerifyCheck::kUnwritten);
    r.message = stores_known ? fmt::format(
                                   "{} of {} elements were never stored to: they hold NaN, the poison of fresh kernel "
                                   "memory, where the reference is finite{}; store every element of the output (check "
                                   "loop bounds and masks for ragged tiles)",
                                   r.unwritten, n, first)
                             : fmt::format(
                                   "{} of {} elements hold NaN, the poison of fresh kernel memory, where the reference "
                                   "is finite{}: never written, or computed as NaN; store every element of the output "
                                   "(check loop bounds and masks for ragged tiles)",
                                   r.unwritten, n, first);
  } else if (r.stored_nan > 0) {
    r.check = check_name(VerifyCheck::kMismatch);
    r.message = fmt::format(
        "{} of {} elements differ beyond atol={:g} rtol={:g}{}; {} of them hold NaN that the kernel stored "
        "where the reference is finite: it computed NaN there, or stored garbage read from memory nothing wrote",
        r.mismatches, n, atol, tol.rtol, at, r.stored_nan);
  } else if (all_zero && !ref_all_zero) {
    r.check = check_name(VerifyCheck::kZeroOutput);
    r.message =
        fmt::format("the output is all zeros; the reference is not (max |expected| = {:.6g})", r.expected_max_abs);
  } else if (all_same && !ref_all_same) {
    r.check = check_name(VerifyCheck::kConstantOutput);
    r.message = fmt::format("every element of the output is {}; the reference varies", a[0]);
  } else if (auto it =
                 std::find_if(inputs.begin(), inputs.end(),
                              [&](const Tensor& in) { return in.shape() == actual.shape() && same_values(af, in); });
             it != inputs.end() && !same_values(ef, *it)) {
    r.check = check_name(VerifyCheck::kInputCopy);
    r.message = fmt::format("the output is a copy of input {} (argument #{}); the reference is not",
                            shape_str(it->shape()), it - inputs.begin());
  } else if (r.mismatches > 0) {
    r.check = check_name(VerifyCheck::kMismatch);
    r.message = fmt::format(
        "{} of {} elements differ beyond atol={:g} rtol={:g}{}; max abs error {:.6g}, max rel error "
        "{:.6g}, relative norm error {:.3g}",
        r.mismatches, n, atol, tol.rtol, at, r.max_abs_error, r.max_rel_error, r.rel_norm_error);
  } else {
    r.check = check_name(VerifyCheck::kRelativeNorm);
    r.message = fmt::format(
        "every element is within tolerance but the output is off overall: relative norm error "
        "||actual - expected|| / ||expected|| = {:.3g} > {:g} (max abs error {:.6g})",
        r.rel_norm_error, tol.norm_rtol, r.max_abs_error);
  }
  return r;
}

std::string degenerate_reference(const Tensor& expected, const Tolerance& tol) {
  const std::vector<float> e = expected.to_f32_vector();
  if (e.empty()) return "the reference output is empty";
  int64_t finite = 0;
  double max_abs = 0;
  bool same = true;
  for (float v : e) {
    if (std::isfinite(v)) {
      ++finite;
      max_abs = std::max(max_abs, static_cast<double>(std::fabs(v)));
    }
    if (!(v == e[0])) same = false;
  }
  if (finite == 0) return "the reference output has no finite value";
  if (max_abs == 0) return "the reference output is all zeros: a kernel returning zeros would pass";
  if (same && e.size() > 1) return fmt::format("the reference output is the constant {}", e[0]);
  if (dtype_is_float(expected.dtype()) && max_abs <= tol.atol)
    return fmt::format(
        "the reference output is below the tolerance (max |expected| = {:.3g} <= atol {:g}): a kernel "
        "returning zeros would pass the element check",
        max_abs, tol.atol);
  return {};
}

}  // namespace nki_agent
