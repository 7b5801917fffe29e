// The data movement of nki.collectives (see isa_collective.h).
#include "nki/isa_collective.h"

#include <fmt/format.h>

#include "nki/checks.h"
#include "nki/written.h"
#include "tensor/ops.h"

namespace nki_agent {

std::shared_ptr<NkiTensor> collective_snapshot(const Access& src) {
  settle(*src.tensor);
  auto t = make_nki_tensor(src.shape(), src.dtype(), src.buffer(), src.tensor->name, Poison::kNone);
  t->data.assign(src.view);
  t->written = true;
  t->writes.all_written = true;
  return t;
}

Result<void> isa_collective_receive(ExecContext& ctx, const Access& dst, const Access& part, const Access* own,
                                    std::optional<BinaryOp> combine, const SourceLoc& loc) {
  constexpr const char* kOp = "collective";
  for (const Access* a : {&dst, &part})
    if (a->buffer() == Buffer::kPsum)
      return fail(nki_error("err_unsupported_memory",
                            fmt::format("a collective moves HBM or SBUF tensors, not {} in PSUM", a->describe()),
                            "copy the PSUM tile to an SBUF tile first"));
  if (dst.view.numel() != part.view.numel() || (own && own->view.numel() != dst.view.numel()))
    return fail(nki_error("err_store_dst_shape_smaller_than_other_shape",
                          fmt::format("'{}' receives {} ({} elements) into {} ({} elements)", kOp, part.describe(),
                                      part.view.numel(), dst.describe(), dst.view.numel()),
                          "give every rank sources and destinations of the sizes the collective exchanges"));
  std::vector<const Access*> reads{&part};
  if (own && own->tensor != part.tensor) reads.push_back(own);
  if (combine) reads.push_back(&dst);
  const InstrOp op = combine ? InstrOp{Opcode::kDmaCopy, *combine} : InstrOp{Opcode::kDmaCopy};
  ctx.trace.add(issue_instruction(ctx, Engine::kDma, op, loc, dst, reads, DataFlow::kElementwise));
  if (!ctx.compute) return {};
  const Tensor from = part.view.shape() == dst.shape() ? part.view : part.view.reshape(dst.shape());
  Tensor dview = dst.view;
  if (combine)
    dview.assign(binary(*combine, dst.view.astype(DType::kFloat32), from.astype(DType::kFloat32), dst.dtype()));
  else
    dview.assign(from);
  return {};
}

std::shared_ptr<NkiTensor> rank_argument_copy(NkiTensor& arg) {
  settle(arg);
  auto t = argument_tensor(arg.data.copy(), arg.name);
  t->buffer = arg.buffer;
  t->kernel_argument = arg.kernel_argument;
  t->immutable = arg.immutable;
  return t;
}

}  // namespace nki_agent
