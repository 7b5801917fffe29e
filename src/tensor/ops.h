// tensor/ops.h — elementwise, reduction and matmul operations on Tensors.
//
// Semantics follow NumPy (broadcasting, NaN propagation, Python-style floor division and modulo),
// with NKI's type rules instead of NumPy's where they differ (dtype.h promote_types: no 64-bit
// types; float with int gives the float). Arithmetic happens the way the NeuronCore engines do it:
// floating operands are widened to float32, the operation runs in float32, and the result is
// rounded once into the output type (RNE). Integer operations run in int64 and wrap into the
// output type. Reductions accumulate in double (floats) or int64 (integers) in a fixed order, so
// results are deterministic. Matmul runs on OpenBLAS in float32 (an exact int64 loop for integers).
//
// Edge rules worth knowing:
//   - bool with bool in arithmetic gives uint8 (NumPy keeps bool for + and *), and so do abs,
//     sign, square... of a bool tensor.
//   - Integer pairs whose NKI type is float32 ((int32, uint32), (int8, uint32)...) are computed
//     exactly in int64 and rounded once into float32; bitwise and shift ops on them too.
//   - Integer power with a negative exponent truncates toward zero: 2 ** -1 == 0, 1 ** -3 == 1,
//     (-1) ** -3 == -1 (NumPy raises instead).
//
// Every function returns a new contiguous tensor (the *_into forms write an existing view instead);
// inputs are never modified. Bad shapes or
// unsupported dtype combinations throw std::invalid_argument.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "tensor/tensor.h"

namespace nki_agent {

enum class BinaryOp : uint8_t {
  kAdd,
  kSubtract,
  kMultiply,
  kDivide,       // true division: integer inputs give float32
  kFloorDivide,  // floor(a / b); integers: Python semantics, x // 0 = 0
  kMod,          // Python/NumPy remainder: sign of the divisor; integers: x % 0 = 0
  kFmod,         // C fmod: sign of the dividend
  kPower,
  kMaximum,  // NaN-propagating, like np.maximum
  kMinimum,
  kAbsMax,  // max(|a|, |b|), NaN-propagating (nl.abs_max)
  kAbsMin,  // min(|a|, |b|), NaN-propagating (nl.abs_min)
  kEqual,   // comparisons give bool
  kNotEqual,
  kLess,
  kLessEqual,
  kGreater,
  kGreaterEqual,
  kLogicalAnd,  // logical ops give bool
  kLogicalOr,
  kLogicalXor,
  kBitwiseAnd,  // bitwise and shift ops need integer or bool operands
  kBitwiseOr,
  kBitwiseXor,
  kLeftShift,
  kRightShift,  // arithmetic for signed types
};
inline constexpr int kNumBinaryOps = static_cast<int>(BinaryOp::kRightShift) + 1;  // keep with the last enumerator

enum class UnaryOp : uint8_t {
  kNegative,
  kAbs,
  kSign,
  kSquare,
  kReciprocal,
  kSqrt,
  kRsqrt,
  kExp,
  kLog,
  kSin,
  kCos,
  kTan,
  kTanh,
  kArctan,
  kErf,
  kSigmoid,
  kRelu,
  kGelu,         // exact: x * Φ(x) with erf
  kGeluTanh,     // tanh approximation
  kGeluSigmoid,  // sigmoid approximation: x * sigmoid(1.702 x)
  kSilu,
  kSoftplus,
  kMish,    // x * tanh(softplus(x))
  kGeluDx,  // d/dx gelu: Phi(x) + x * phi(x)
  kSiluDx,  // d/dx silu: s(x) * (1 + x * (1 - s(x)))
  kErfDx,   // d/dx erf: 2 / sqrt(pi) * exp(-x^2)
  kFloor,
  kCeil,
  kTrunc,
  kRint,        // round half to even
  kLogicalNot,  // gives bool
  kInvert,      // bitwise not; integers and bool only
};
inline constexpr int kNumUnaryOps = static_cast<int>(UnaryOp::kInvert) + 1;  // keep with the last enumerator

enum class ReduceOp : uint8_t { kSum, kProd, kMax, kMin, kMean, kAll, kAny };
inline constexpr int kNumReduceOps = static_cast<int>(ReduceOp::kAny) + 1;  // keep with the last enumerator

// The operators' names (one table each, tensor/op_names.cpp; its static_asserts fail when an
// enumerator has no name): binary "add", "subtract", ... as nl spells its operators; unary "exp",
// "gelu_tanh", ... as nl spells its functions; reductions "sum", "prod", "max", "min", "mean",
// "all", "any".
std::string_view binary_op_name(BinaryOp op);
std::string_view unary_op_name(UnaryOp op);
std::string_view reduce_op_name(ReduceOp op);
// The inverses; nullopt for a name that is none. reduce_op_from_name also takes the names of the
// binary operators that reduce (add, multiply, maximum, minimum, logical_and, logical_or), as
// NKI's reduce arguments are spelt (nl.add reduces to a sum).
std::optional<BinaryOp> binary_op_from_name(std::string_view name);
std::optional<UnaryOp> unary_op_from_name(std::string_view name);
std::optional<ReduceOp> reduce_op_from_name(std::string_view name);

// One element of a float binary op, with exactly the arithmetic binary() uses (for sequential
// instructions such as scans). Bitwise and shift ops are not defined on floats and throw.
float binary_op_f32(BinaryOp op, float a, float b);

// The dtype binary() gives when no output type is requested.
DType binary_result_dtype(BinaryOp op, DType a, DType b);
DType unary_result_dtype(UnaryOp op, DType a);
DType reduce_result_dtype(ReduceOp op, DType a);

// out_dtype overrides the result type: the value is computed as usual (float32 or int64) and
// stored once, in out_dtype — as an engine writes its output, with no rounding in between.
Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b, std::optional<DType> out_dtype = {});
Tensor unary(UnaryOp op, const Tensor& a, std::optional<DType> out_dtype = {});
// The same, written into an existing view `out` (any dtype, any strides) whose shape must be the
// broadcast shape of the operands. `out` may alias an operand only when they are the same view.
void binary_into(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out);
void unary_into(UnaryOp op, const Tensor& a, Tensor& out);
// Reduces over `axes` (negative axes count from the end; an empty list reduces every axis).
Tensor reduce(ReduceOp op, const Tensor& a, std::span<const int> axes, bool keepdims = false,
              std::optional<DType> out_dtype = {});
// Index of the first maximum / minimum along one axis, as int32 (NaN counts as the extreme).
Tensor argmax(const Tensor& a, int axis, bool keepdims = false);
Tensor argmin(const Tensor& a, int axis, bool keepdims = false);

// np.matmul: 1-D operands are promoted to matrices and the added axis removed; leading (batch)
// axes broadcast. The default output type is promote_types(a, b).
Tensor matmul(const Tensor& a, const Tensor& b, std::optional<DType> out_dtype = {});

// out = a @ b (or out += a @ b with `accumulate`) in place, for float32 matrices (an operand BLAS
// cannot read in place is copied first) and an `out` BLAS can write: unit column stride. Returns
// false, touching nothing, when they do not qualify; the caller then takes the general path.
bool gemm_into(const Tensor& a, const Tensor& b, Tensor& out, bool accumulate);

// Convenience
inline Tensor operator+(const Tensor& a, const Tensor& b) {
  return binary(BinaryOp::kAdd, a, b);
}
inline Tensor operator-(const Tensor& a, const Tensor& b) {
  return binary(BinaryOp::kSubtract, a, b);
}
inline Tensor operator*(const Tensor& a, const Tensor& b) {
  return binary(BinaryOp::kMultiply, a, b);
}
inline Tensor operator/(const Tensor& a, const Tensor& b) {
  return binary(BinaryOp::kDivide, a, b);
}

}  // namespace nki_agent
