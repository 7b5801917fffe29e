// The names of the tensor operators (tensor/ops.h): one table per enum, checked complete at compile
// time, and their inverses. Nothing here computes.
#include <array>
#include <iterator>

#include "tensor/ops.h"

namespace nki_agent {

namespace {

constexpr std::string_view kBinaryNames[] = {
    "add",         "subtract",   "multiply",    "divide",        "floor_divide", "mod",        "fmod",
    "power",       "maximum",    "minimum",     "abs_max",       "abs_min",      "equal",      "not_equal",
    "less",        "less_equal", "greater",     "greater_equal", "logical_and",  "logical_or", "logical_xor",
    "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift",    "right_shift"};
static_assert(std::size(kBinaryNames) == kNumBinaryOps, "every BinaryOp has a name");

constexpr std::string_view kUnaryNames[] = {
    "negative", "abs",    "sign",      "square",       "reciprocal", "sqrt",     "rsqrt",       "exp",
    "log",      "sin",    "cos",       "tan",          "tanh",       "arctan",   "erf",         "sigmoid",
    "relu",     "gelu",   "gelu_tanh", "gelu_sigmoid", "silu",       "softplus", "mish",        "gelu_dx",
    "silu_dx",  "erf_dx", "floor",     "ceil",         "trunc",      "rint",     "logical_not", "invert"};
static_assert(std::size(kUnaryNames) == kNumUnaryOps, "every UnaryOp has a name");

constexpr std::string_view kReduceNames[] = {"sum", "prod", "max", "min", "mean", "all", "any"};
static_assert(std::size(kReduceNames) == kNumReduceOps, "every ReduceOp has a name");

// The binary operators NKI passes as a reduction (nl.add for a sum).
constexpr std::pair<std::string_view, ReduceOp> kReduceAliases[] = {
    {"add", ReduceOp::kSum},     {"multiply", ReduceOp::kProd},   {"maximum", ReduceOp::kMax},
    {"minimum", ReduceOp::kMin}, {"logical_and", ReduceOp::kAll}, {"logical_or", ReduceOp::kAny}};

template <typename E, size_t N>
std::optional<E> find_name(const std::string_view (&names)[N], std::string_view name) {
  for (size_t i = 0; i < N; ++i)
    if (names[i] == name) return static_cast<E>(i);
  return std::nullopt;
}

}  // namespace

std::string_view binary_op_name(BinaryOp op) {
  return kBinaryNames[static_cast<int>(op)];
}
std::string_view unary_op_name(UnaryOp op) {
  return kUnaryNames[static_cast<int>(op)];
}
std::string_view reduce_op_name(ReduceOp op) {
  return kReduceNames[static_cast<int>(op)];
}

std::optional<BinaryOp> binary_op_from_name(std::string_view name) {
  return find_name<BinaryOp>(kBinaryNames, name);
}
std::optional<UnaryOp> unary_op_from_name(std::string_view name) {
  return find_name<UnaryOp>(kUnaryNames, name);
}
std::optional<ReduceOp> reduce_op_from_name(std::string_view name) {
  if (auto op = find_name<ReduceOp>(kReduceNames, name)) return op;
  for (const auto& [alias, op] : kReduceAliases)
    if (alias == name) return op;
  return std::nullopt;
}

}  // namespace nki_agent
