// Elementwise binary and unary operations (see ops.h for the semantics).
//
// Each innermost row is processed in chunks of kChunk elements: operands are widened into float32
// (or int64) scratch buffers — or used in place when they already are contiguous float32 — the
// operation runs as a tight loop the compiler vectorises, and the result is narrowed once.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "tensor/ops.h"
#include "tensor/strided.h"
#include "tensor/vector_math.h"

namespace nki_agent {

namespace {

constexpr int64_t kChunk = 1024;  // 4 KiB of float32 per operand: stays in L1

bool is_comparison(BinaryOp op) {
  return op >= BinaryOp::kEqual && op <= BinaryOp::kGreaterEqual;
}
bool is_logical(BinaryOp op) {
  return op >= BinaryOp::kLogicalAnd && op <= BinaryOp::kLogicalXor;
}
bool is_bitwise(BinaryOp op) {
  return op >= BinaryOp::kBitwiseAnd;
}

// ---- float32 kernels ----------------------------------------------------------------------------

// NumPy's float remainder: the sign of the divisor, and a zero result takes the divisor's sign too.
float py_mod(float a, float b) {
  float r = std::fmod(a, b);
  if (b == 0) return r;  // NaN
  if (r == 0) return std::copysign(0.0f, b);
  if ((r < 0) != (b < 0)) r += b;
  return r;
}

// NumPy's float floor division (npy_divmod): floor of the exact quotient, computed via fmod.
float py_floordiv(float a, float b) {
  if (b == 0) return a / b;  // ±inf or NaN, as NumPy
  float mod = std::fmod(a, b);
  float div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1.0f;
  if (div == 0) return std::copysign(0.0f, a / b);
  float fl = std::floor(div);
  if (div - fl > 0.5f) fl += 1.0f;
  return fl;
}

void binary_f32(BinaryOp op, const float* a, const float* b, float* o, int64_t n) {
#define NKIA_LOOP(expr)                          \
  for (int64_t i = 0; i < n; ++i) o[i] = (expr); \
  return
  switch (op) {
    case BinaryOp::kAdd: NKIA_LOOP(a[i] + b[i]);
    case BinaryOp::kSubtract: NKIA_LOOP(a[i] - b[i]);
    case BinaryOp::kMultiply: NKIA_LOOP(a[i] * b[i]);
    case BinaryOp::kDivide: NKIA_LOOP(a[i] / b[i]);
    case BinaryOp::kFloorDivide: NKIA_LOOP(py_floordiv(a[i], b[i]));
    case BinaryOp::kMod: NKIA_LOOP(py_mod(a[i], b[i]));
    case BinaryOp::kFmod: NKIA_LOOP(std::fmod(a[i], b[i]));
    case BinaryOp::kPower: NKIA_LOOP(std::pow(a[i], b[i]));
    case BinaryOp::kMaximum: NKIA_LOOP((a[i] != a[i] || b[i] != b[i]) ? a[i] + b[i] : (a[i] > b[i] ? a[i] : b[i]));
    case BinaryOp::kMinimum: NKIA_LOOP((a[i] != a[i] || b[i] != b[i]) ? a[i] + b[i] : (a[i] < b[i] ? a[i] : b[i]));
    case BinaryOp::kAbsMax:
      NKIA_LOOP((a[i] != a[i] || b[i] != b[i]) ? std::fabs(a[i] + b[i]) : std::max(std::fabs(a[i]), std::fabs(b[i])));
    case BinaryOp::kAbsMin:
      NKIA_LOOP((a[i] != a[i] || b[i] != b[i]) ? std::fabs(a[i] + b[i]) : std::min(std::fabs(a[i]), std::fabs(b[i])));
    case BinaryOp::kEqual: NKIA_LOOP(a[i] == b[i] ? 1.0f : 0.0f);
    case BinaryOp::kNotEqual: NKIA_LOOP(a[i] != b[i] ? 1.0f : 0.0f);
    case BinaryOp::kLess: NKIA_LOOP(a[i] < b[i] ? 1.0f : 0.0f);
    case BinaryOp::kLessEqual: NKIA_LOOP(a[i] <= b[i] ? 1.0f : 0.0f);
    case BinaryOp::kGreater: NKIA_LOOP(a[i] > b[i] ? 1.0f : 0.0f);
    case BinaryOp::kGreaterEqual: NKIA_LOOP(a[i] >= b[i] ? 1.0f : 0.0f);
    case BinaryOp::kLogicalAnd: NKIA_LOOP((a[i] != 0 && b[i] != 0) ? 1.0f : 0.0f);
    case BinaryOp::kLogicalOr: NKIA_LOOP((a[i] != 0 || b[i] != 0) ? 1.0f : 0.0f);
    case BinaryOp::kLogicalXor: NKIA_LOOP(((a[i] != 0) != (b[i] != 0)) ? 1.0f : 0.0f);
    default: throw std::invalid_argument(fmt::format("{} needs integer operands", binary_op_name(op)));
  }
#undef NKIA_LOOP
}

// ---- int64 kernels ------------------------------------------------------------------------------

int64_t py_idiv(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return static_cast<int64_t>(0ULL - static_cast<uint64_t>(a));  // no INT64_MIN / -1 trap
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t py_imod(int64_t a, int64_t b) {
  if (b == 0 || b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

int64_t ipow(int64_t base, int64_t e) {
  if (e < 0) return base == 1 ? 1 : (base == -1 ? ((e & 1) ? -1 : 1) : 0);
  uint64_t r = 1, b = static_cast<uint64_t>(base);
  while (e) {
    if (e & 1) r *= b;
    b *= b;
    e >>= 1;
  }
  return static_cast<int64_t>(r);
}

int64_t shl(int64_t a, int64_t s) {
  return (s < 0 || s >= 64) ? 0 : static_cast<int64_t>(static_cast<uint64_t>(a) << s);
}
int64_t shr(int64_t a, int64_t s) {
  return (s < 0 || s >= 64) ? (a < 0 ? -1 : 0) : (a >> s);
}

void binary_i64(BinaryOp op, const int64_t* a, const int64_t* b, int64_t* o, int64_t n) {
#define NKIA_LOOP(expr)                          \
  for (int64_t i = 0; i < n; ++i) o[i] = (expr); \
  return
  auto wrap_add = [](int64_t x, int64_t y) {
    return static_cast<int64_t>(static_cast<uint64_t>(x) + static_cast<uint64_t>(y));
  };
  auto wrap_sub = [](int64_t x, int64_t y) {
    return static_cast<int64_t>(static_cast<uint64_t>(x) - static_cast<uint64_t>(y));
  };
  auto wrap_mul = [](int64_t x, int64_t y) {
    return static_cast<int64_t>(static_cast<uint64_t>(x) * static_cast<uint64_t>(y));
  };
  // |INT64_MIN| wraps to itself, as NumPy's int64 abs does.
  auto wrap_abs = [](int64_t x) { return x < 0 ? static_cast<int64_t>(0ULL - static_cast<uint64_t>(x)) : x; };
  switch (op) {
    case BinaryOp::kAdd: NKIA_LOOP(wrap_add(a[i], b[i]));
    case BinaryOp::kSubtract: NKIA_LOOP(wrap_sub(a[i], b[i]));
    case BinaryOp::kMultiply: NKIA_LOOP(wrap_mul(a[i], b[i]));
    case BinaryOp::kFloorDivide: NKIA_LOOP(py_idiv(a[i], b[i]));
    case BinaryOp::kMod: NKIA_LOOP(py_imod(a[i], b[i]));
    case BinaryOp::kFmod: NKIA_LOOP((b[i] == 0 || b[i] == -1) ? 0 : a[i] % b[i]);
    case BinaryOp::kPower: NKIA_LOOP(ipow(a[i], b[i]));
    case BinaryOp::kMaximum: NKIA_LOOP(std::max(a[i], b[i]));
    case BinaryOp::kMinimum: NKIA_LOOP(std::min(a[i], b[i]));
    case BinaryOp::kAbsMax: NKIA_LOOP(std::max(wrap_abs(a[i]), wrap_abs(b[i])));
    case BinaryOp::kAbsMin: NKIA_LOOP(std::min(wrap_abs(a[i]), wrap_abs(b[i])));
    case BinaryOp::kEqual: NKIA_LOOP(a[i] == b[i]);
    case BinaryOp::kNotEqual: NKIA_LOOP(a[i] != b[i]);
    case BinaryOp::kLess: NKIA_LOOP(a[i] < b[i]);
    case BinaryOp::kLessEqual: NKIA_LOOP(a[i] <= b[i]);
    case BinaryOp::kGreater: NKIA_LOOP(a[i] > b[i]);
    case BinaryOp::kGreaterEqual: NKIA_LOOP(a[i] >= b[i]);
    case BinaryOp::kLogicalAnd: NKIA_LOOP(a[i] != 0 && b[i] != 0);
    case BinaryOp::kLogicalOr: NKIA_LOOP(a[i] != 0 || b[i] != 0);
    case BinaryOp::kLogicalXor: NKIA_LOOP((a[i] != 0) != (b[i] != 0));
    case BinaryOp::kBitwiseAnd: NKIA_LOOP(a[i] & b[i]);
    case BinaryOp::kBitwiseOr: NKIA_LOOP(a[i] | b[i]);
    case BinaryOp::kBitwiseXor: NKIA_LOOP(a[i] ^ b[i]);
    case BinaryOp::kLeftShift: NKIA_LOOP(shl(a[i], b[i]));
    case BinaryOp::kRightShift: NKIA_LOOP(shr(a[i], b[i]));
    case BinaryOp::kDivide: break;  // always computed in float32
  }
  throw std::invalid_argument("integer division is computed in float32");
#undef NKIA_LOOP
}

// Written to avoid cancellation for negative x: 1 + erf(x) loses every digit below x = -4, while
// erfc(-x) keeps them. The x * (something that reaches 0) forms give -inf * 0 = NaN at x = -inf,
// where the functions' limit is 0. (exp, log, tanh and the activations made of them:
// tensor/vector_math.h.)
float gelu_exact(float x) {
  if (std::isinf(x)) return x > 0 ? x : 0.0f;
  return 0.5f * x * std::erfc(-x * 0.70710678118654752f);
}
float gelu_dx(float x) {
  if (std::isinf(x)) return x > 0 ? 1.0f : 0.0f;
  return 0.5f * std::erfc(-x * 0.70710678118654752f) + x * std::exp(-0.5f * x * x) * 0.39894228040143268f;
}
float silu_dx(float x) {
  if (std::isinf(x)) return x > 0 ? 1.0f : 0.0f;
  const float s = x >= 0 ? 1.0f / (1.0f + std::exp(-x)) : std::exp(x) / (1.0f + std::exp(x));
  return s * (1.0f + x * (1.0f - s));
}
float erf_dx(float x) {
  return 1.12837916709551257f * std::exp(-x * x);
}

void unary_f32(UnaryOp op, const float* a, float* o, int64_t n) {
#define NKIA_LOOP(expr)                          \
  for (int64_t i = 0; i < n; ++i) o[i] = (expr); \
  return
  switch (op) {
    case UnaryOp::kNegative: NKIA_LOOP(-a[i]);
    case UnaryOp::kAbs: NKIA_LOOP(std::fabs(a[i]));
    case UnaryOp::kSign: NKIA_LOOP(a[i] > 0 ? 1.0f : (a[i] < 0 ? -1.0f : (a[i] == 0 ? 0.0f : a[i])));
    case UnaryOp::kSquare: NKIA_LOOP(a[i] * a[i]);
    case UnaryOp::kReciprocal: NKIA_LOOP(1.0f / a[i]);
    case UnaryOp::kSqrt: NKIA_LOOP(std::sqrt(a[i]));
    case UnaryOp::kRsqrt: NKIA_LOOP(1.0f / std::sqrt(a[i]));
    case UnaryOp::kExp: return vexp_f32(a, o, n);
    case UnaryOp::kLog: return vlog_f32(a, o, n);
    case UnaryOp::kSin: return vsin_f32(a, o, n);
    case UnaryOp::kCos: return vcos_f32(a, o, n);
    case UnaryOp::kTan: NKIA_LOOP(std::tan(a[i]));
    case UnaryOp::kTanh: return vtanh_f32(a, o, n);
    case UnaryOp::kArctan: NKIA_LOOP(std::atan(a[i]));
    case UnaryOp::kErf: NKIA_LOOP(std::erf(a[i]));
    case UnaryOp::kSigmoid: return vsigmoid_f32(a, o, n);
    case UnaryOp::kRelu: NKIA_LOOP(a[i] > 0 ? a[i] : (a[i] != a[i] ? a[i] : 0.0f));
    case UnaryOp::kGelu: NKIA_LOOP(gelu_exact(a[i]));
    case UnaryOp::kGeluTanh: return vgelu_tanh_f32(a, o, n);
    case UnaryOp::kGeluSigmoid: return vgelu_sigmoid_f32(a, o, n);
    case UnaryOp::kSilu: return vsilu_f32(a, o, n);
    case UnaryOp::kSoftplus: return vsoftplus_f32(a, o, n);
    case UnaryOp::kMish: return vmish_f32(a, o, n);
    case UnaryOp::kGeluDx: NKIA_LOOP(gelu_dx(a[i]));
    case UnaryOp::kSiluDx: NKIA_LOOP(silu_dx(a[i]));
    case UnaryOp::kErfDx: NKIA_LOOP(erf_dx(a[i]));
    case UnaryOp::kFloor: NKIA_LOOP(std::floor(a[i]));
    case UnaryOp::kCeil: NKIA_LOOP(std::ceil(a[i]));
    case UnaryOp::kTrunc: NKIA_LOOP(std::trunc(a[i]));
    case UnaryOp::kRint: NKIA_LOOP(std::nearbyint(a[i]));
    case UnaryOp::kLogicalNot: NKIA_LOOP(a[i] == 0 ? 1.0f : 0.0f);
    case UnaryOp::kInvert: break;
  }
  throw std::invalid_argument("invert needs an integer or bool operand");
#undef NKIA_LOOP
}

bool unary_stays_int(UnaryOp op) {
  switch (op) {
    case UnaryOp::kNegative:
    case UnaryOp::kAbs:
    case UnaryOp::kSign:
    case UnaryOp::kSquare:
    case UnaryOp::kRelu:
    case UnaryOp::kFloor:
    case UnaryOp::kCeil:
    case UnaryOp::kTrunc:
    case UnaryOp::kRint:
    case UnaryOp::kLogicalNot:
    case UnaryOp::kInvert: return true;
    default: return false;
  }
}

void unary_i64(UnaryOp op, const int64_t* a, int64_t* o, int64_t n, DType in) {
#define NKIA_LOOP(expr)                          \
  for (int64_t i = 0; i < n; ++i) o[i] = (expr); \
  return
  switch (op) {
    case UnaryOp::kNegative: NKIA_LOOP(static_cast<int64_t>(0ULL - static_cast<uint64_t>(a[i])));
    case UnaryOp::kAbs: NKIA_LOOP(a[i] < 0 ? static_cast<int64_t>(0ULL - static_cast<uint64_t>(a[i])) : a[i]);
    case UnaryOp::kSign: NKIA_LOOP(a[i] > 0 ? 1 : (a[i] < 0 ? -1 : 0));
    case UnaryOp::kSquare: NKIA_LOOP(static_cast<int64_t>(static_cast<uint64_t>(a[i]) * static_cast<uint64_t>(a[i])));
    case UnaryOp::kRelu: NKIA_LOOP(a[i] > 0 ? a[i] : 0);
    case UnaryOp::kFloor:
    case UnaryOp::kCeil:
    case UnaryOp::kTrunc:
    case UnaryOp::kRint: NKIA_LOOP(a[i]);
    case UnaryOp::kLogicalNot: NKIA_LOOP(a[i] == 0);
    case UnaryOp::kInvert:
      if (in == DType::kBool) {
        NKIA_LOOP(a[i] == 0);
      }
      NKIA_LOOP(~a[i]);
    default: break;
  }
  throw std::invalid_argument("unary op has no integer form");
#undef NKIA_LOOP
}

// The domain a binary op computes in: float32 unless both operands are integers (or bool) and the
// op is not true division.
bool computes_in_float(BinaryOp op, DType a, DType b) {
  if (op == BinaryOp::kDivide) return true;
  return dtype_is_float(a) || dtype_is_float(b);
}

}  // namespace

float binary_op_f32(BinaryOp op, float a, float b) {
  float r = 0;
  binary_f32(op, &a, &b, &r, 1);
  return r;
}

DType binary_result_dtype(BinaryOp op, DType a, DType b) {
  if (is_comparison(op) || is_logical(op)) return DType::kBool;
  if (is_bitwise(op)) {
    if (dtype_is_float(a) || dtype_is_float(b))
      throw std::invalid_argument(fmt::format("{} needs integer or bool operands, got {} and {}", binary_op_name(op),
                                              dtype_name(a), dtype_name(b)));
    return promote_types(a, b);
  }
  DType p = promote_types(a, b);
  if (op == BinaryOp::kDivide && !dtype_is_float(p)) return DType::kFloat32;
  if (p == DType::kBool && op != BinaryOp::kMaximum && op != BinaryOp::kMinimum) return DType::kUInt8;
  return p;
}

DType unary_result_dtype(UnaryOp op, DType a) {
  if (op == UnaryOp::kLogicalNot) return DType::kBool;
  if (op == UnaryOp::kInvert) {
    if (dtype_is_float(a))
      throw std::invalid_argument(fmt::format("invert needs an integer or bool, got {}", dtype_name(a)));
    return a;
  }
  if (dtype_is_float(a)) return a;
  if (unary_stays_int(op)) return a == DType::kBool ? DType::kUInt8 : a;
  return DType::kFloat32;
}

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b, std::optional<DType> out_dtype) {
  const DType ot = out_dtype.value_or(binary_result_dtype(op, a.dtype(), b.dtype()));
  Tensor out = Tensor::uninitialized(broadcast_shapes(a.shape(), b.shape()), ot);
  binary_into(op, a, b, out);
  return out;
}

void binary_into(BinaryOp op, const Tensor& a_in, const Tensor& b_in, Tensor& out) {
  (void)binary_result_dtype(op, a_in.dtype(), b_in.dtype());  // rejects bitwise ops on floats
  const Shape shape = broadcast_shapes(a_in.shape(), b_in.shape());
  if (out.shape() != shape)
    throw std::invalid_argument(fmt::format("{}: output shape {} is not the broadcast shape {}", binary_op_name(op),
                                            shape_str(out.shape()), shape_str(shape)));
  Tensor a = a_in.broadcast_to(shape), b = b_in.broadcast_to(shape);
  const DType ot = out.dtype();
  const DType at = a.dtype(), bt = b.dtype();
  const int64_t as = a.itemsize(), bs = b.itemsize(), os = out.itemsize();

  if (computes_in_float(op, at, bt)) {
    std::vector<float> ba(kChunk), bb(kChunk), bo(kChunk);
    for_each_row({&out, &a, &b}, [&](const RowPtrs& p, int64_t n, const int64_t* st) {
      for (int64_t c = 0; c < n; c += kChunk) {
        const int64_t m = std::min(kChunk, n - c);
        const float* pa = widen_f32(static_cast<uint8_t*>(p[1]) + c * st[1] * as, at, st[1], m, ba.data());
        const float* pb = widen_f32(static_cast<uint8_t*>(p[2]) + c * st[2] * bs, bt, st[2], m, bb.data());
        uint8_t* po = static_cast<uint8_t*>(p[0]) + c * st[0] * os;
        float* dst = (ot == DType::kFloat32 && st[0] == 1) ? reinterpret_cast<float*>(po) : bo.data();
        binary_f32(op, pa, pb, dst, m);
        narrow_f32(dst, po, ot, st[0], m);
      }
    });
  } else {
    std::vector<int64_t> ba(kChunk), bb(kChunk), bo(kChunk);
    for_each_row({&out, &a, &b}, [&](const RowPtrs& p, int64_t n, const int64_t* st) {
      for (int64_t c = 0; c < n; c += kChunk) {
        const int64_t m = std::min(kChunk, n - c);
        widen_i64(static_cast<uint8_t*>(p[1]) + c * st[1] * as, at, st[1], m, ba.data());
        widen_i64(static_cast<uint8_t*>(p[2]) + c * st[2] * bs, bt, st[2], m, bb.data());
        binary_i64(op, ba.data(), bb.data(), bo.data(), m);
        narrow_i64(bo.data(), static_cast<uint8_t*>(p[0]) + c * st[0] * os, ot, st[0], m);
      }
    });
  }
}

Tensor unary(UnaryOp op, const Tensor& a, std::optional<DType> out_dtype) {
  Tensor out = Tensor::uninitialized(a.shape(), out_dtype.value_or(unary_result_dtype(op, a.dtype())));
  unary_into(op, a, out);
  return out;
}

void unary_into(UnaryOp op, const Tensor& a, Tensor& out) {
  (void)unary_result_dtype(op, a.dtype());  // rejects invert on floats
  if (out.shape() != a.shape())
    throw std::invalid_argument(fmt::format("{}: output shape {} differs from the input's {}", unary_op_name(op),
                                            shape_str(out.shape()), shape_str(a.shape())));
  const DType ot = out.dtype();
  const DType at = a.dtype();
  const int64_t as = a.itemsize(), os = out.itemsize();
  const bool int_domain = !dtype_is_float(at) && unary_stays_int(op);
  if (!int_domain) {
    std::vector<float> ba(kChunk), bo(kChunk);
    for_each_row({&out, &a}, [&](const RowPtrs& p, int64_t n, const int64_t* st) {
      for (int64_t c = 0; c < n; c += kChunk) {
        const int64_t m = std::min(kChunk, n - c);
        const float* pa = widen_f32(static_cast<uint8_t*>(p[1]) + c * st[1] * as, at, st[1], m, ba.data());
        uint8_t* po = static_cast<uint8_t*>(p[0]) + c * st[0] * os;
        float* dst = (ot == DType::kFloat32 && st[0] == 1) ? reinterpret_cast<float*>(po) : bo.data();
        unary_f32(op, pa, dst, m);
        narrow_f32(dst, po, ot, st[0], m);
      }
    });
  } else {
    std::vector<int64_t> ba(kChunk), bo(kChunk);
    for_each_row({&out, &a}, [&](const RowPtrs& p, int64_t n, const int64_t* st) {
      for (int64_t c = 0; c < n; c += kChunk) {
        const int64_t m = std::min(kChunk, n - c);
        widen_i64(static_cast<uint8_t*>(p[1]) + c * st[1] * as, at, st[1], m, ba.data());
        unary_i64(op, ba.data(), bo.data(), m, at);
        narrow_i64(bo.data(), static_cast<uint8_t*>(p[0]) + c * st[0] * os, ot, st[0], m);
      }
    });
  }
}

}  // namespace nki_agent
