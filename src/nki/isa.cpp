#include "nki/isa.h"

#include <fmt/format.h>

#include "nki/checks.h"

namespace nki_agent {

namespace {

InstructionRecord make_record(Engine e, std::string opcode, const SourceLoc& loc, const Access& dst,
                              std::initializer_list<const Access*> srcs) {
  InstructionRecord r;
  r.engine = e;
  r.opcode = std::move(opcode);
  r.loc = loc;
  r.elements = dst.view.numel();
  r.operands.push_back(record_operand(dst, true));
  for (const Access* s : srcs) r.operands.push_back(record_operand(*s, false));
  return r;
}

// Shapes equal after dropping size-1 axes: [128, 1, 512] and [128, 512] describe the same data.
bool same_squeezed(const Shape& a, const Shape& b) {
  Shape x, y;
  for (int64_t d : a)
    if (d != 1) x.push_back(d);
  for (int64_t d : b)
    if (d != 1) y.push_back(d);
  return x == y;
}

// The view of src with dst's shape (their squeezed shapes being equal).
Tensor as_shape_of(const Tensor& src, const Shape& shape) {
  return src.shape() == shape ? src : src.reshape(shape);
}

}  // namespace

Result<void> isa_dma_copy(ExecContext& ctx, const Access& dst, const Access& src, const SourceLoc& loc) {
  constexpr const char* kOp = "dma_copy";
  if (src.buffer() == Buffer::kPsum && buffer_is_hbm(dst.buffer()))
    return fail(nki_error("err_unsupported_memory",
                          fmt::format("'{}' cannot move {} from PSUM to HBM", kOp, src.describe()),
                          "copy the PSUM tile to an SBUF tile first (nl.copy or nisa.tensor_copy), then store that"));
  for (const Access* a : {&dst, &src})
    if (auto r = check_partition_limit(ctx, *a, kOp); !r) return r;
  if (dst.view.numel() != src.view.numel() || !same_squeezed(dst.shape(), src.shape()))
    return fail(nki_error("err_store_dst_shape_smaller_than_other_shape",
                          fmt::format("'{}' copies {} into {}: the shapes differ", kOp, src.describe(), dst.describe()),
                          "index the source and the destination so that both select the same shape"));
  Tensor dview = dst.view;
  dview.assign(as_shape_of(src.view, dst.shape()));
  dst.tensor->written = true;
  ctx.trace.add(make_record(Engine::kDma, kOp, loc, dst, {&src}));
  return {};
}

Result<void> isa_tensor_tensor(ExecContext& ctx, const Access& dst, const Access& a, const Access& b, BinaryOp op,
                               const SourceLoc& loc) {
  const std::string opcode = fmt::format("tensor_tensor:{}", binary_op_name(op));
  for (const Access* x : {&dst, &a, &b}) {
    if (auto r = check_on_chip(*x, "tensor_tensor"); !r) return r;
    if (auto r = check_partition_limit(ctx, *x, "tensor_tensor"); !r) return r;
  }
  if (auto r = check_same_partitions(a, b, "tensor_tensor"); !r) return r;
  if (auto r = check_same_partitions(dst, a, "tensor_tensor"); !r) return r;
  if (!shapes_broadcastable(a.shape(), b.shape()) || broadcast_shapes(a.shape(), b.shape()) != dst.shape())
    return fail(nki_error("err_store_dst_shape_smaller_than_other_shape",
                          fmt::format("'tensor_tensor' of {} and {} into {}: the shapes do not match", a.describe(),
                                      b.describe(), dst.describe()),
                          "give both operands the destination's shape, or a [P, 1] second operand"));
  Tensor out = dst.view;
  binary_into(op, a.view, b.view, out);
  dst.tensor->written = true;
  ctx.trace.add(make_record(Engine::kVector, opcode, loc, dst, {&a, &b}));
  return {};
}

Result<void> isa_tensor_scalar(ExecContext& ctx, const Access& dst, const Access& src, BinaryOp op, double scalar,
                               bool reverse, const SourceLoc& loc) {
  for (const Access* x : {&dst, &src}) {
    if (auto r = check_on_chip(*x, "tensor_scalar"); !r) return r;
    if (auto r = check_partition_limit(ctx, *x, "tensor_scalar"); !r) return r;
  }
  if (auto r = check_same_partitions(dst, src, "tensor_scalar"); !r) return r;
  if (dst.shape() != src.shape())
    return fail(nki_error("err_store_dst_shape_smaller_than_other_shape",
                          fmt::format("'tensor_scalar' of {} into {}: the shapes differ", src.describe(), dst.describe()),
                          "write the result into a tile of the operand's shape"));
  Tensor s = Tensor::full({}, DType::kFloat32, scalar);
  Tensor out = dst.view;
  if (reverse)
    binary_into(op, s, src.view, out);
  else
    binary_into(op, src.view, s, out);
  dst.tensor->written = true;
  ctx.trace.add(make_record(Engine::kVector, fmt::format("tensor_scalar:{}", binary_op_name(op)), loc, dst, {&src}));
  return {};
}

Result<void> isa_activation(ExecContext& ctx, const Access& dst, UnaryOp op, const Access& src,
                            const std::optional<Access>& bias, double scale, const SourceLoc& loc) {
  for (const Access* x : {&dst, &src}) {
    if (auto r = check_on_chip(*x, "activation"); !r) return r;
    if (auto r = check_partition_limit(ctx, *x, "activation"); !r) return r;
  }
  if (auto r = check_same_partitions(dst, src, "activation"); !r) return r;
  if (dst.shape() != src.shape())
    return fail(nki_error("err_store_dst_shape_smaller_than_other_shape",
                          fmt::format("'activation' of {} into {}: the shapes differ", src.describe(), dst.describe()),
                          "write the result into a tile of the operand's shape"));
  // The Scalar engine computes op(x * scale + bias) in float32 and rounds once on output.
  Tensor x = src.view.astype(DType::kFloat32);
  if (scale != 1.0) x = binary(BinaryOp::kMultiply, x, Tensor::full({}, DType::kFloat32, scale));
  if (bias) {
    if (auto r = check_on_chip(*bias, "activation"); !r) return r;
    if (bias->view.ndim() != 2 || bias->shape()[1] != 1 || bias->partitions() != src.partitions())
      return fail(nki_error("err_activation_bias_invalid_type",
                            fmt::format("'activation' bias {} is not a [{}, 1] tile", bias->describe(), src.partitions()),
                            "pass the bias as a [P, 1] tile with one value per partition"));
    Shape per_partition(static_cast<size_t>(x.ndim()), 1);  // [P, 1, ..., 1]: broadcast over the free axes
    per_partition[0] = src.partitions();
    x = binary(BinaryOp::kAdd, x, bias->view.reshape(per_partition), DType::kFloat32);
  }
  Tensor out = dst.view;
  unary_into(op, x, out);
  dst.tensor->written = true;
  InstructionRecord rec = make_record(Engine::kScalar, fmt::format("activation:{}", unary_op_name(op)), loc, dst, {&src});
  if (bias) rec.operands.push_back(record_operand(*bias, false));
  ctx.trace.add(std::move(rec));
  return {};
}

Result<void> isa_memset(ExecContext& ctx, const Access& dst, double value, Engine engine, const SourceLoc& loc) {
  if (auto r = check_on_chip(dst, "memset"); !r) return r;
  if (auto r = check_partition_limit(ctx, dst, "memset"); !r) return r;
  Tensor out = dst.view;
  out.fill(value);
  dst.tensor->written = true;
  ctx.trace.add(make_record(engine, "memset", loc, dst, {}));
  return {};
}

Result<void> isa_tensor_copy(ExecContext& ctx, const Access& dst, const Access& src, Engine engine,
                             const SourceLoc& loc) {
  for (const Access* x : {&dst, &src}) {
    if (auto r = check_on_chip(*x, "tensor_copy"); !r) return r;
    if (auto r = check_partition_limit(ctx, *x, "tensor_copy"); !r) return r;
  }
  if (auto r = check_same_partitions(dst, src, "tensor_copy"); !r) return r;
  if (!same_squeezed(dst.shape(), src.shape()))
    return fail(nki_error("err_store_dst_shape_smaller_than_other_shape",
                          fmt::format("'tensor_copy' of {} into {}: the shapes differ", src.describe(), dst.describe()),
                          "index the source and the destination so that both select the same shape"));
  Tensor out = dst.view;
  out.assign(as_shape_of(src.view, dst.shape()));
  dst.tensor->written = true;
  ctx.trace.add(make_record(engine, "tensor_copy", loc, dst, {&src}));
  return {};
}

}  // namespace nki_agent
