// nki/isa_matmul.cpp — the Tensor engine's instructions (nki/isa.h): nc_matmul with its operand
// rules, the PSUM accumulation it writes, and nc_transpose (on the Tensor engine as a matmul by the
// identity, or on the Vector engine for 32 x 32 blocks). The double-row mode is isa_matmul_modes.cpp.
#include <fmt/format.h>

#include <algorithm>

#include "nki/checks.h"
#include "nki/isa.h"
#include "nki/written.h"

namespace nki_agent {

Result<void> check_matmul_inputs(const ExecContext& ctx, const Access& stationary, const Access& moving) {
  constexpr const char* kOp = opcode_name(Opcode::kNcMatmul);
  if (auto r = check_matmul_inputs_in_sbuf(stationary, moving, kOp); !r) return r;
  for (const Access* x : {&stationary, &moving})
    if (auto r = check_partition_limit(ctx, *x, kOp); !r) return r;
  if (stationary.view.ndim() != 2 || moving.view.ndim() != 2)
    return fail(
        nki_error("err_exceed_max_supported_dimension",
                  fmt::format("'{}' takes 2-D operands, got {} and {}", kOp, stationary.describe(), moving.describe()),
                  "index the operands down to [K, M] and [K, N] tiles"));
  if (stationary.partitions() != moving.partitions())
    return fail(nki_error("err_num_partition_mismatch",
                          fmt::format("'{}' contracts over the partitions, but stationary {} and moving {} differ", kOp,
                                      stationary.describe(), moving.describe()),
                          "give both operands the contraction dimension K on the partitions"));
  const int64_t m = stationary.shape()[1], n = moving.shape()[1];
  if (m > ctx.target->gemm_stationary_fmax || n > ctx.target->gemm_moving_fmax)
    return fail(
        nki_error("err_size_of_dimension_exceed_arch_limit",
                  fmt::format("'{}' stationary free size {} (limit {}) or moving free size {} (limit {}) is too "
                              "large",
                              kOp, m, ctx.target->gemm_stationary_fmax, n, ctx.target->gemm_moving_fmax),
                  "tile the stationary free dimension by 128 and the moving free dimension by 512"));
  const bool fp32_a = stationary.dtype() == DType::kFloat32 || stationary.dtype() == DType::kTFloat32;
  const bool fp32_b = moving.dtype() == DType::kFloat32 || moving.dtype() == DType::kTFloat32;
  if (fp32_a != fp32_b || !dtype_is_float(stationary.dtype()) || !dtype_is_float(moving.dtype()))
    return fail(nki_error("nkia_matmul_input_dtype",
                          fmt::format("'{}' cannot multiply {} by {}", kOp, stationary.describe(), moving.describe()),
                          "use float operands; a float32/tfloat32 operand needs a float32/tfloat32 partner (cast the "
                          "other, e.g. load it with dtype=nl.float32)"));
  return {};
}

namespace {

// Flags of a matmul operand as [K, X]: its first `k_axes` axes (the contraction) flattened into K and
// the rest (the free axes) into X.
Tensor contraction_rows(const Tensor& flags, int k_axes) {
  if (!flags.defined() || (flags.ndim() == 2 && k_axes == 1)) return flags;
  int64_t k = 1;
  for (int d = 0; d < k_axes; ++d) k *= flags.shape()[static_cast<size_t>(d)];
  return flags.reshape({k, flags.numel() / std::max<int64_t>(k, 1)});
}

// The contraction axes of a matmul operand: all but the last (the ordinary and double-row modes), or
// the partitions alone when the free axes are flattened (MatmulFree::kFlattened: nc_matmul_mx).
int contraction_axes(const Access& a, MatmulFree free) {
  return free == MatmulFree::kFlattened ? 1 : a.view.ndim() - 1;
}

// Which results of a matmul hold data (nki/written.h), for every mode: dst[m, n] sums the products
// of stationary[k, m] and moving[k, n] over the contraction axes (contraction_axes: [K] for the
// ordinary mode, [K, 2] for double-row, the partitions for MX); it is written when every product's factors are, garbage
// when some are not (noted as where stale data entered dst, under `op`), and an accumulating result
// also keeps what it held. Undefined when every result is written.
Tensor matmul_flags(const SourceLoc& loc, const Access& dst, const Access& stationary, const Access& moving,
                    Accumulate acc, const char* op, MatmulFree free) {
  const int k_axes = contraction_axes(stationary, free);
  const Tensor fs = contraction_rows(written_flags(stationary), k_axes),
               fm = contraction_rows(written_flags(moving), contraction_axes(moving, free));
  const NkiTensor& t = *dst.tensor;
  const bool accumulates = acc == Accumulate::kAccumulate || (acc == Accumulate::kAuto && t.matmul_written.defined());
  const Tensor prev = accumulates ? written_flags(dst) : Tensor();
  if (!fs.defined() && !fm.defined() && !prev.defined()) return {};
  int64_t k = 1;
  for (int d = 0; d < k_axes; ++d) k *= stationary.shape()[static_cast<size_t>(d)];
  const int64_t m = stationary.view.numel() / std::max<int64_t>(k, 1),
                n = moving.view.numel() / std::max<int64_t>(k, 1);
  Tensor out = Tensor::full({m, n}, DType::kUInt8, 1);
  uint8_t* o = out.data_as<uint8_t>();
  if (fs.defined() || fm.defined()) {
    const Tensor s = fs.defined() ? fs.astype(DType::kFloat32) : Tensor::full({k, m}, DType::kFloat32, 1);
    const Tensor v = fm.defined() ? fm.astype(DType::kFloat32) : Tensor::full({k, n}, DType::kFloat32, 1);
    const Tensor counts = matmul(s.transpose(), v, DType::kFloat32).contiguous();  // written products
    const float* c = counts.data_as<float>();
    bool mixed = false;
    for (int64_t i = 0; i < m * n; ++i) {
      mixed = mixed || (c[i] > 0 && c[i] < static_cast<float>(k));
      o[i] = c[i] == static_cast<float>(k);
    }
    if (mixed)
      for (const Access* a : {&stationary, &moving})
        if (!all_written(*a)) note_stale(dst, op, loc, *a);
  }
  if (prev.defined()) {
    const Tensor seen = acc == Accumulate::kAuto ? Tensor(t.matmul_written.storage(), DType::kUInt8, dst.view.shape(),
                                                          dst.view.strides(), dst.view.offset() - t.data.offset())
                                                       .contiguous()
                                                 : Tensor::full({m, n}, DType::kUInt8, 1);
    const uint8_t* p = prev.data_as<uint8_t>();
    const uint8_t* w = seen.data_as<uint8_t>();
    for (int64_t i = 0; i < m * n; ++i)
      if (w[i]) o[i] = static_cast<uint8_t>(o[i] & p[i]);
  }
  return out;
}

}  // namespace

InstructionRecord issue_matmul(ExecContext& ctx, const InstrOp& opcode, const char* op, const SourceLoc& loc,
                               const Access& dst, const Access& stationary, const Access& moving, Accumulate acc,
                               bool settle_reads, MatmulFree free) {
  const Tensor result_flags = matmul_flags(loc, dst, stationary, moving, acc, op, free);
  InstructionRecord rec = issue_instruction(ctx, Engine::kTensor, opcode, loc, dst, {&stationary, &moving},
                                            DataFlow::kCustom, settle_reads);
  set_written(dst, result_flags);
  if (result_flags.defined()) inherit_stale(dst, std::array{&stationary, &moving});
  return rec;
}

Result<void> check_matmul_destination(const ExecContext& ctx, const Access& dst, int64_t m, int64_t n, const char* op,
                                      const Access& stationary, const Access& moving) {
  if (dst.buffer() != Buffer::kPsum)
    return fail(nki_error(
        "err_unsupported_memory",
        fmt::format("'{}' writes its result to PSUM, but {} is in {}", op, dst.describe(), buffer_name(dst.buffer())),
        "allocate the result with buffer=nl.psum, then copy it to SBUF to use it further"));
  if (auto r = check_partition_limit(ctx, dst, op); !r) return r;
  if (dst.dtype() != DType::kFloat32)
    return fail(nki_error("nkia_matmul_psum_dtype",
                          fmt::format("'{}' accumulates in float32, but its PSUM destination {} is {}", op,
                                      dst.describe(), dtype_name(dst.dtype())),
                          "declare the PSUM accumulator as nl.float32 and convert when copying it out to SBUF"));
  // A matmul result lands in one 2 KiB bank per partition: the slice written must fit one, and a
  // plain [P, F] accumulator tile must be one bank wide (multi-dimensional PSUM tensors hold one
  // bank-sized result per index of their leading free or block axes).
  const Tensor& whole_psum = dst.tensor->data;
  const int64_t tile_bytes = whole_psum.ndim() == 2 ? whole_psum.shape()[1] * whole_psum.itemsize() : 0;
  if (dst.free_bytes() > ctx.target->psum_bank_bytes || tile_bytes > ctx.target->psum_bank_bytes)
    return fail(nki_error("nkia_psum_tile_exceeds_bank",
                          fmt::format("'{}' writes into {} of {}, which is {} bytes per partition: a matmul "
                                      "accumulator holds at most one {}-byte PSUM bank",
                                      op, dst.describe(), shape_str(whole_psum.shape()),
                                      std::max(dst.free_bytes(), tile_bytes), ctx.target->psum_bank_bytes),
                          "give each 512-column slice of the result its own PSUM tile (nl.tile_size.psum_fmax)"));
  if (dst.shape() != Shape{m, n})
    return fail(
        nki_error("err_store_dst_shape_smaller_than_other_shape",
                  fmt::format("'{}' of {} and {} gives [{}, {}], but the destination is {}", op, stationary.describe(),
                              moving.describe(), m, n, dst.describe()),
                  "allocate the PSUM result as [M, N]: stationary's last dimension by moving's last dimension"));
  return {};
}

Result<void> isa_nc_matmul(ExecContext& ctx, const Access& dst, const Access& stationary, const Access& moving,
                           Accumulate acc, const SourceLoc& loc) {
  constexpr const char* kOp = opcode_name(Opcode::kNcMatmul);
  if (auto r = check_matmul_inputs(ctx, stationary, moving); !r) return r;
  const int64_t m = stationary.shape()[1], n = moving.shape()[1];
  if (auto r = check_matmul_destination(ctx, dst, m, n, kOp, stationary, moving); !r) return r;
  InstructionRecord rec =
      issue_matmul(ctx, Opcode::kNcMatmul, kOp, loc, dst, stationary, moving, acc, /*settle_reads=*/false);
  rec.elements = stationary.view.numel() > 0 ? m * n : 0;
  ctx.trace.add(std::move(rec));
  if (!ctx.compute) return {};
  Tensor out = dst.view;
  NkiTensor& t = *dst.tensor;
  // Fast path: float32 operands and a float32 PSUM tile whose elements are all fresh (overwrite)
  // or all written by matmuls (accumulate): one sgemm straight into PSUM.
  std::optional<bool> accumulate;  // known when every element of dst takes the same path
  Tensor wmask;                    // kAuto: which elements of dst a matmul already wrote
  if (acc == Accumulate::kOverwrite) {
    accumulate = false;
  } else if (acc == Accumulate::kAccumulate) {
    accumulate = true;
  } else {
    if (!t.matmul_written.defined()) t.matmul_written = Tensor::zeros(t.data.shape(), DType::kUInt8);
    wmask = Tensor(t.matmul_written.storage(), DType::kUInt8, dst.view.shape(), dst.view.strides(),
                   dst.view.offset() - t.data.offset());
    const Tensor flags = wmask.contiguous();
    const uint8_t* w = flags.data_as<uint8_t>();
    const auto count = static_cast<size_t>(flags.numel());
    if (count > 0 && !std::memchr(w, w[0] ^ 1, count)) accumulate = w[0] == 1;  // all 0 or all 1
  }
  const Tensor lhs = read_view(stationary).transpose(), rhs = read_view(moving);
  if (accumulate && gemm_into(lhs, rhs, out, *accumulate)) {
    if (wmask.defined()) wmask.fill(1);
    return {};
  }
  write_matmul_product(dst, matmul(lhs, rhs, DType::kFloat32), acc);
  return {};
}

void write_matmul_product(const Access& dst, const Tensor& product, Accumulate acc) {
  Tensor out = dst.view;
  if (acc == Accumulate::kOverwrite) {
    out.assign(product);
    return;
  }
  if (acc == Accumulate::kAccumulate) {
    out.assign(binary(BinaryOp::kAdd, out, product, DType::kFloat32));
    return;
  }
  NkiTensor& t = *dst.tensor;
  if (!t.matmul_written.defined()) t.matmul_written = Tensor::zeros(t.data.shape(), DType::kUInt8);
  Tensor mask(t.matmul_written.storage(), DType::kUInt8, dst.view.shape(), dst.view.strides(),
              dst.view.offset() - t.data.offset());
  // where(mask, out + product, product), never reading what no matmul wrote (it may be poison).
  Tensor prev = out.astype(DType::kFloat32), seen = mask.contiguous(), res = product.contiguous();
  float* r = res.data_as<float>();
  const float* p = prev.data_as<float>();
  const uint8_t* w = seen.data_as<uint8_t>();
  for (int64_t i = 0, n = res.numel(); i < n; ++i)
    if (w[i]) r[i] += p[i];
  out.assign(res);
  mask.fill(1);
}

Result<void> check_transpose_input(const Access& src, Engine engine) {
  constexpr const char* kOp = opcode_name(Opcode::kNcTranspose);
  if (auto r = check_on_chip(src, kOp); !r) return r;
  if (src.view.ndim() != 2)
    return fail(nki_error("err_exceed_max_supported_dimension",
                          fmt::format("'{}' transposes 2-D tiles, got {}", kOp, src.describe()),
                          "index the tile down to [P, F] before transposing"));
  const int64_t limit = engine == Engine::kTensor ? 128 : 32;
  for (int ax = 0; ax < 2; ++ax)
    if (src.shape()[static_cast<size_t>(ax)] > limit)
      return fail(
          nki_error("err_size_of_dimension_exceed_arch_limit",
                    fmt::format("size of dimension {} in {} of '{}' exceeds the {} engine's limit of {}", ax,
                                src.describe(), kOp, engine_name(engine), limit),
                    engine == Engine::kTensor
                        ? "transpose blocks of at most 128 x 128"
                        : "transpose blocks of at most 32 x 32 on the Vector engine, or use the Tensor engine"));
  return {};
}

Result<void> isa_nc_transpose(ExecContext& ctx, const Access& dst, const Access& src, Engine engine,
                              const SourceLoc& loc) {
  constexpr const char* kOp = opcode_name(Opcode::kNcTranspose);
  if (auto r = check_transpose_input(src, engine); !r) return r;
  if (auto r = check_on_chip(dst, kOp); !r) return r;
  (void)ctx;
  if (engine == Engine::kTensor && (src.buffer() != Buffer::kSbuf || dst.buffer() != Buffer::kPsum))
    return fail(nki_error("err_unsupported_memory",
                          fmt::format("a Tensor-engine transpose reads SBUF and writes PSUM, not {} -> {}",
                                      buffer_name(src.buffer()), buffer_name(dst.buffer())),
                          "transpose an SBUF tile into a PSUM tile (buffer=nl.psum)"));
  if (dst.shape() != Shape{src.shape()[1], src.shape()[0]})
    return fail(nki_error("err_store_dst_shape_smaller_than_other_shape",
                          fmt::format("'{}' of {} needs a [{}, {}] destination, got {}", kOp, src.describe(),
                                      src.shape()[1], src.shape()[0], dst.describe()),
                          "allocate the destination with the two dimensions swapped"));
  // A permutation: each result is one source element.
  const Tensor flags = written_flags(src);
  ctx.trace.add(issue_instruction(ctx, engine, Opcode::kNcTranspose, loc, dst, {&src}, DataFlow::kCustom));
  set_written(dst, flags.defined() ? flags.transpose().copy() : Tensor());
  if (flags.defined()) inherit_stale(dst, std::array{&src});
  if (!ctx.compute) return {};
  Tensor out = dst.view;
  out.assign(src.view.transpose());
  return {};
}

}  // namespace nki_agent
