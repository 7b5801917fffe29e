// Random-number instructions: nisa.rng, nl.rand and nisa.dropout (nki/isa_random.h).
#include "nki/isa_random.h"

#include <fmt/format.h>

#include <vector>

#include "nki/checks.h"

namespace nki_agent {

namespace {

// The value of the low `bits` bits of `word` in an integer type of that width.
int64_t truncated(uint32_t word, int bits, bool is_signed) {
  if (bits >= 32) return is_signed ? static_cast<int64_t>(static_cast<int32_t>(word)) : static_cast<int64_t>(word);
  const uint32_t low = word & ((1u << bits) - 1u);
  if (is_signed && (low >> (bits - 1)) != 0) return static_cast<int64_t>(low) - (int64_t{1} << bits);
  return static_cast<int64_t>(low);
}

}  // namespace

Result<void> isa_rng(ExecContext& ctx, const Access& dst, Engine engine, const SourceLoc& loc) {
  constexpr const char* kOp = opcode_name(Opcode::kRng);
  if (engine != Engine::kVector && engine != Engine::kGpSimd)
    return fail(nki_error(
        "nkia_unknown_engine",
        fmt::format("'{}' runs on the Vector or the GpSimd engine, not the {} engine", kOp, engine_name(engine)),
        "pass engine=nisa.engine.vector (the default) or nisa.engine.gpsimd"));
  if (auto r = check_tiles(ctx, {&dst}, kOp, engine); !r) return r;
  if (!dtype_is_int(dst.dtype()))
    return fail(nki_error("nkia_bad_operand",
                          fmt::format("'{}' writes random bits into an integer tile, but {} is {}", kOp, dst.describe(),
                                      dtype_name(dst.dtype())),
                          "give the destination an integer type (uint32, uint16, ...) and scale the bits into a "
                          "float range, or use nl.rand for uniform floats"));
  ctx.trace.add(issue_instruction(ctx, engine, Opcode::kRng, loc, dst, {}));
  if (!ctx.compute) return {};
  const int bits = dtype_size(dst.dtype()) * 8;
  const bool is_signed = dtype_is_signed(dst.dtype());
  std::vector<int64_t> values(static_cast<size_t>(dst.view.numel()));
  for (int64_t& v : values) v = truncated(ctx.rng.next_u32(), bits, is_signed);
  Tensor out = dst.view;
  out.assign(Tensor::from_i64(dst.shape(), values, dst.dtype()));
  return {};
}

Result<void> isa_rand_uniform(ExecContext& ctx, const Access& dst, const SourceLoc& loc) {
  constexpr const char* kOp = "nl.rand";
  if (auto r = check_tiles(ctx, {&dst}, kOp); !r) return r;
  if (!dtype_is_float(dst.dtype()))
    return fail(
        nki_error("nkia_bad_operand",
                  fmt::format("{} draws floats in [0, 1), but {} is {}", kOp, dst.describe(), dtype_name(dst.dtype())),
                  "give nl.rand a float dtype (nl.float32, nl.bfloat16, ...); for random bits use nisa.rng "
                  "into an integer tile"));
  ctx.trace.add(issue_instruction(ctx, Engine::kVector, Opcode::kRng, loc, dst, {}));
  if (!ctx.compute) return {};
  Tensor out = dst.view;
  ctx.rng.fill_uniform(out, 0.0, 1.0);
  return {};
}

Result<void> isa_dropout(ExecContext& ctx, const Access& dst, const Access& data, const ScalarOperand& prob,
                         const SourceLoc& loc) {
  constexpr const char* kOp = opcode_name(Opcode::kDropout);
  if (auto r = check_tiles(ctx, {&dst, &data}, kOp); !r) return r;
  if (auto r = check_same_partitions(dst, data, kOp); !r) return r;
  if (dst.dtype() != data.dtype())
    return fail(nki_error("nkia_bad_operand",
                          fmt::format("'{}' writes data's type: {} is {}, but {} is {}", kOp, dst.describe(),
                                      dtype_name(dst.dtype()), data.describe(), dtype_name(data.dtype())),
                          fmt::format("allocate the destination as {}", dtype_name(data.dtype()))));
  if (dst.view.numel() != data.view.numel() || !same_squeezed(dst.shape(), data.shape()))
    return fail(nki_error("err_store_dst_shape_smaller_than_other_shape",
                          fmt::format("'{}' of {} into {}: the shapes differ", kOp, data.describe(), dst.describe()),
                          "write the result into a tile of the operand's shape"));
  std::vector<const Access*> reads{&data};
  if (auto r = check_per_partition_operand(ctx, prob, data, "prob", kOp); !r) return r;
  if (const std::optional<Access>& t = prob.tile) {
    if (!dtype_is_float(t->dtype()) || (dtype_is_int(data.dtype()) && t->dtype() != DType::kFloat32))
      return fail(nki_error("nkia_bad_operand",
                            fmt::format("'{}' prob {} must be {}", kOp, t->describe(),
                                        dtype_is_int(data.dtype()) ? "float32 for integer data" : "a float type"),
                            "load the probabilities as nl.float32"));
    reads.push_back(&*t);
  }
  ctx.trace.add(issue_instruction(ctx, Engine::kVector, Opcode::kDropout, loc, dst, reads, DataFlow::kElementwise));
  if (!ctx.compute) return {};
  const int64_t p = data.partitions(), n = p ? data.view.numel() / p : 0;
  std::vector<float> probs(static_cast<size_t>(p), static_cast<float>(prob.value));
  if (prob.tile) probs = prob.tile->view.contiguous().to_f32_vector();
  // One draw per element, in row-major order; the kept values are data's own (integers stay exact).
  std::vector<bool> dropped(static_cast<size_t>(p * n));
  for (int64_t i = 0; i < p * n; ++i)
    dropped[static_cast<size_t>(i)] = ctx.rng.uniform_f32() < probs[static_cast<size_t>(n ? i / n : 0)];
  Tensor out = dst.view;
  if (dtype_is_int(data.dtype())) {
    std::vector<int64_t> x = data.view.contiguous().to_i64_vector();
    for (size_t i = 0; i < x.size(); ++i)
      if (dropped[i]) x[i] = 0;
    out.assign(Tensor::from_i64(dst.shape(), x, dst.dtype()));
  } else {
    std::vector<float> x = data.view.contiguous().to_f32_vector();  // every float type is exact in float32
    for (size_t i = 0; i < x.size(); ++i)
      if (dropped[i]) x[i] = 0.0f;
    out.assign(Tensor::from_f32(dst.shape(), x, dst.dtype()));
  }
  return {};
}

Result<void> isa_set_rng_seed(ExecContext& ctx, const Access& seed, const SourceLoc& loc) {
  constexpr const char* kOp = opcode_name(Opcode::kSetRngSeed);
  if (auto r = check_tiles(ctx, {&seed}, kOp); !r) return r;
  if (seed.view.numel() != 1)
    return fail(nki_error("nkia_scalar_operand_shape",
                          fmt::format("'{}' takes a [1, 1] seed tile, not {}", kOp, seed.describe()),
                          "put the seed in a [1, 1] tile, e.g. nl.full((1, 1), 42, dtype=nl.int32)"));
  // The instruction writes no tile: its record names the seed as destination and source, and the
  // custom flow leaves the seed's written flags as they are.
  ctx.trace.add(issue_instruction(ctx, Engine::kVector, Opcode::kSetRngSeed, loc, seed, {&seed}, DataFlow::kCustom));
  if (!ctx.compute) return {};
  const auto value = static_cast<int64_t>(seed.view.contiguous().item());
  ctx.rng = Rng(static_cast<uint32_t>(value));
  return {};
}

}  // namespace nki_agent
