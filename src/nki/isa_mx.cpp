// nki/isa_mx.cpp — the MX (OCP microscaling) instructions of NeuronCore-v4 (nki/isa.h): nc_matmul_mx on
// the Tensor engine, quantize_mx on the Vector engine, with their operand rules and numerics.
//
// Layout (nki-spec §4.2; NKI's nc_matmul_mx / quantize_mx docs and its MXFP matmul guide): an x4 element
// [p, f] packs the values j = 0..3 of 4 contraction rows; a scaling group is 8 partitions of one column
// (32 values) sharing one E8M0 scale, kept at row mx_scale_row(p) of the scale tile, in the group's own
// 32-partition quadrant. Never here: costs (cost/) or the Python front end.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "nki/checks.h"
#include "nki/isa.h"
#include "nki/written.h"

namespace nki_agent {

namespace {

constexpr int64_t kQuadrant = 32;  // partitions of one SBUF quadrant
constexpr int64_t kGroupRows = 8;  // partitions of one scaling group
constexpr int kMxCoreVersion = 4;  // NeuronCore-v4 (trn3)
// Largest moving free size of an MX matmul: the whole PSUM (8 banks) of float32, or of bfloat16.
constexpr int64_t kMovingFmaxF32 = 4096, kMovingFmaxBf16 = 8192;

Diagnostic mx_layout(std::string message, std::string_view hint) {
  return nki_error("nkia_mx_layout", std::move(message), std::string(hint));
}

Diagnostic mx_dtype(std::string message, std::string_view hint) {
  return nki_error("nkia_mx_dtype", std::move(message), std::string(hint));
}

bool is_scale_dtype(DType t) {
  return t == DType::kUInt8 || t == DType::kFloat8E8M0;
}

// The elements of one partition of `t`: the product of its free dimensions.
int64_t free_elements(const Tensor& t) {
  int64_t n = 1;
  for (int i = 1; i < t.ndim(); ++i) n *= t.shape()[static_cast<size_t>(i)];
  return n;
}

// Most dimensions of a quantize_mx operand (check_mx_data).
constexpr int kMaxMxRank = 8;

// The address of element [p, c] of `t` with its free dimensions flattened in row-major order.
void* flat_ptr(Tensor& t, int64_t p, int64_t c) {
  std::array<int64_t, kMaxMxRank> idx{};
  const int n = t.ndim();
  idx[0] = p;
  for (int d = n - 1; d >= 1; --d) {
    const int64_t size = t.shape()[static_cast<size_t>(d)];
    idx[static_cast<size_t>(d)] = c % size;
    c /= size;
  }
  return t.ptr_at(std::span<const int64_t>(idx.data(), static_cast<size_t>(n)));
}

// `t` [P, F...] as [P, F]: its free dimensions flattened in row-major order (a copy unless `t` allows a view).
Tensor flat_2d(const Tensor& t) {
  return t.ndim() == 2 ? t : t.contiguous().reshape({t.shape()[0], free_elements(t)});
}

// SBUF, on-chip rules and partitions a multiple of 32 up to 128, for an MX data operand. MX
// instructions take tiles of any number of free dimensions, read flattened in row-major order
// (nki-library quantizes [128, 6, 8, 32] sources and multiplies [128, 1, 96] tiles).
Result<void> check_mx_data(const ExecContext& ctx, const Access& a, const char* op) {
  if (a.buffer() != Buffer::kSbuf)
    return fail(nki_error(
        "err_unsupported_memory",
        fmt::format("'{}' reads and writes SBUF tiles, but {} is in {}", op, a.describe(), buffer_name(a.buffer())),
        "allocate MX data, scales and quantize_mx's source with buffer=nl.sbuf"));
  if (auto r = check_partition_limit(ctx, a, op); !r) return r;
  if (a.view.ndim() < 2 || a.view.ndim() > kMaxMxRank)
    return fail(
        mx_layout(fmt::format("'{}' takes [P, F...] tiles of 2 to {} dimensions, got {}", op, kMaxMxRank, a.describe()),
                  "index or reshape the operand to [P, F]"));
  const int64_t p = a.partitions();
  if (p % kQuadrant != 0 || p > ctx.target->partitions)
    return fail(mx_layout(fmt::format("'{}' needs a multiple of 32 partitions up to {}, got {}", op,
                                      ctx.target->partitions, a.describe()),
                          "pad the contraction (partition) dimension of MX data to a multiple of 32"));
  return {};
}

// The scale tile of `data` [P, F...]: SBUF, uint8 or float8_e8m0fnu, F columns, and a row for every
// scaling group at mx_scale_row.
Result<void> check_mx_scale(const ExecContext& ctx, const Access& scale, const Access& data, const char* op,
                            const char* what) {
  if (scale.buffer() != Buffer::kSbuf)
    return fail(nki_error("err_unsupported_memory",
                          fmt::format("'{}' keeps its {} in SBUF, but {} is in {}", op, what, scale.describe(),
                                      buffer_name(scale.buffer())),
                          "allocate MX scales with buffer=nl.sbuf"));
  if (auto r = check_partition_limit(ctx, scale, op); !r) return r;
  if (!is_scale_dtype(scale.dtype()))
    return fail(mx_dtype(fmt::format("'{}' {} must be uint8 or float8_e8m0fnu, got {}", op, what, scale.describe()),
                         "allocate MX scales as nl.uint8 (or nl.float8_e8m0fnu)"));
  const int64_t p = data.partitions(), f = free_elements(data.view);
  const int64_t rows = mx_scale_row(p - 1) + 1;
  if (scale.view.ndim() < 2 || free_elements(scale.view) != f || scale.shape()[0] < rows)
    return fail(mx_layout(fmt::format("'{}' {} {} does not fit the scales of {}: it needs [>= {}, {}] (4 rows of "
                                      "scales in each 32-partition quadrant the data covers)",
                                      op, what, scale.describe(), data.describe(), rows, f),
                          p > kQuadrant ? "allocate the scales as [P, F] uint8 for data of more than 32 partitions"
                                        : "allocate the scales as [P // 8, F] uint8"));
  return {};
}

// The value of lane j of x4 element [p, f] of `data` times its scale, as float32.
struct MxReader {
  const Tensor& data;
  const Tensor& scale;
  float at(int64_t p, int64_t f, int j) const {
    const int64_t di[2] = {p, f};
    const int64_t si[2] = {mx_scale_row(p), f};
    return packed_lane_load(data.ptr_at(di), data.dtype(), j) * load_f32(scale.ptr_at(si), DType::kFloat8E8M0);
  }
};

// [4P, F] float32: the dequantized values, contraction row 4p + j.
Tensor dequantize(const Tensor& data, const Tensor& scale) {
  const int64_t p = data.shape()[0], f = data.shape()[1];
  // A uint8 scale tile holds the same bits as float8_e8m0fnu.
  const Tensor s = scale.dtype() == DType::kFloat8E8M0 ? scale : scale.contiguous().view_as(DType::kFloat8E8M0);
  const MxReader reader{data, s};
  Tensor out = Tensor::uninitialized({p * kPackedLanes, f}, DType::kFloat32);
  float* o = out.data_as<float>();
  for (int64_t i = 0; i < p; ++i)
    for (int j = 0; j < kPackedLanes; ++j)
      for (int64_t c = 0; c < f; ++c) o[(i * kPackedLanes + j) * f + c] = reader.at(i, c, j);
  return out;
}

Result<void> check_tiling(const MxTiling& t, int64_t partitions, const char* op) {
  if (!t.given) return {};
  const bool size_ok = (t.rows == 32 || t.rows == 64 || t.rows == 128) && t.cols == 128;
  const bool pos_ok = t.col == 0 && t.row >= 0 && t.row < 128 && t.row % std::max<int64_t>(t.rows, 1) == 0;
  if (!size_ok || !pos_ok || partitions > t.rows)
    return fail(mx_layout(fmt::format("'{}' row tiling tile_position=({}, {}) tile_size=({}, {}) does not fit: row "
                                      "tiles are 32, 64 or 128 rows by 128 columns, start at a multiple of their "
                                      "size in column 0, and hold the {} stationary partitions",
                                      op, t.row, t.col, t.rows, t.cols, partitions),
                          "pass tile_size=(32|64|128, 128) and tile_position=(k * row_size, 0), or neither"));
  return {};
}

Result<void> check_matmul_mx(const ExecContext& ctx, const Access& dst, const Access& stationary, const Access& moving,
                             const Access& s_scale, const Access& m_scale, const MxTiling& tiling) {
  constexpr const char* kOp = opcode_name(Opcode::kNcMatmulMx);
  if (auto r = check_core_version(ctx, kMxCoreVersion, kOp,
                                  "MX matmul exists on trn3 (NeuronCore-v4); on older targets multiply bfloat16 or "
                                  "fp8 tiles with nisa.nc_matmul");
      !r)
    return r;
  for (const Access* a : {&stationary, &moving})
    if (auto r = check_mx_data(ctx, *a, kOp); !r) return r;
  for (const Access* a : {&stationary, &moving})
    if (!dtype_is_packed(a->dtype()))
      return fail(mx_dtype(fmt::format("'{}' multiplies packed x4 tiles, got {}", kOp, a->describe()),
                           "give nc_matmul_mx float8_e4m3fn_x4, float8_e5m2_x4 or float4_e2m1fn_x4 tiles (a "
                           "uint8/uint32 tile's bits can be viewed as one: t.view(nl.float8_e4m3fn_x4))"));
  if (stationary.partitions() != moving.partitions())
    return fail(nki_error("err_num_partition_mismatch",
                          fmt::format("'{}' contracts over the partitions, but stationary {} and moving {} differ", kOp,
                                      stationary.describe(), moving.describe()),
                          "give both operands the same contraction (partition) size"));
  const int64_t m = free_elements(stationary.view), n = free_elements(moving.view);
  if (m > ctx.target->gemm_stationary_fmax || m % 2 != 0)
    return fail(mx_layout(fmt::format("'{}' stationary free size {} must be even and at most {}", kOp, m,
                                      ctx.target->gemm_stationary_fmax),
                          "tile the stationary free dimension by 128 (x4 elements)"));
  if (auto r = check_mx_scale(ctx, s_scale, stationary, kOp, "stationary_scale"); !r) return r;
  if (auto r = check_mx_scale(ctx, m_scale, moving, kOp, "moving_scale"); !r) return r;
  if (auto r = check_tiling(tiling, stationary.partitions(), kOp); !r) return r;
  if (dst.buffer() != Buffer::kPsum)
    return fail(nki_error(
        "err_unsupported_memory",
        fmt::format("'{}' writes its result to PSUM, but {} is in {}", kOp, dst.describe(), buffer_name(dst.buffer())),
        "allocate the result with buffer=nl.psum"));
  if (auto r = check_partition_limit(ctx, dst, kOp); !r) return r;
  if (dst.dtype() != DType::kFloat32 && dst.dtype() != DType::kBFloat16)
    return fail(mx_dtype(fmt::format("'{}' writes float32 or bfloat16 into PSUM, got {}", kOp, dst.describe()),
                         "allocate the PSUM result as nl.float32 or nl.bfloat16"));
  const int64_t n_max = dst.dtype() == DType::kFloat32 ? kMovingFmaxF32 : kMovingFmaxBf16;
  if (n > n_max)
    return fail(mx_layout(fmt::format("'{}' moving free size {} exceeds {} for a {} result (the whole PSUM)", kOp, n,
                                      n_max, dtype_name(dst.dtype())),
                          "tile the moving free dimension"));
  if (dst.view.ndim() < 2 || dst.partitions() != m || free_elements(dst.view) != n)
    return fail(nki_error("err_store_dst_shape_smaller_than_other_shape",
                          fmt::format("'{}' of {} and {} gives [{}, {}], but the destination is {}", kOp,
                                      stationary.describe(), moving.describe(), m, n, dst.describe()),
                          "allocate the PSUM result as [M, N]: stationary's free size by moving's free size"));
  return {};
}

// The trace record's operands after dst and the data: the two scale tiles, read.
void record_scale_reads(ExecContext& ctx, InstructionRecord& rec, const SourceLoc& loc,
                        std::initializer_list<const Access*> scales) {
  for (const Access* s : scales) {
    warn_unwritten_read(ctx, rec.opcode_text(), loc, *s);
    OperandRecord o = instruction_record(rec.engine, rec.op, loc, *s, {}).operands.front();
    o.is_write = false;
    rec.operands.push_back(std::move(o));
  }
}

}  // namespace

Result<void> isa_nc_matmul_mx(ExecContext& ctx, const Access& dst, const Access& stationary, const Access& moving,
                              const Access& stationary_scale, const Access& moving_scale, Accumulate acc,
                              const MxTiling& tiling, const SourceLoc& loc) {
  constexpr const char* kOp = opcode_name(Opcode::kNcMatmulMx);
  if (auto r = check_matmul_mx(ctx, dst, stationary, moving, stationary_scale, moving_scale, tiling); !r) return r;
  const int64_t m = free_elements(stationary.view), n = free_elements(moving.view);
  InstructionRecord rec = issue_matmul(ctx, Opcode::kNcMatmulMx, kOp, loc, dst, stationary, moving, acc,
                                       /*settle_reads=*/false, MatmulFree::kFlattened);
  record_scale_reads(ctx, rec, loc, {&stationary_scale, &moving_scale});
  rec.elements = m * n;
  ctx.trace.add(std::move(rec));
  if (!ctx.compute) return {};
  const Tensor a = dequantize(flat_2d(read_view(stationary)), flat_2d(read_view(stationary_scale)));  // [4P, M]
  const Tensor b = dequantize(flat_2d(read_view(moving)), flat_2d(read_view(moving_scale)));          // [4P, N]
  const Tensor product = matmul(a.transpose(), b, DType::kFloat32);                                   // [M, N]
  write_matmul_product(dst, dst.view.ndim() == 2 ? product : product.reshape(dst.view.shape()), acc);
  return {};
}

Result<void> isa_quantize_mx(ExecContext& ctx, const Access& dst, const Access& src, const Access& dst_scale,
                             const SourceLoc& loc) {
  constexpr const char* kOp = opcode_name(Opcode::kQuantizeMx);
  if (auto r = check_core_version(ctx, kMxCoreVersion, kOp,
                                  "MX quantization exists on trn3 (NeuronCore-v4); on older targets cast to an fp8 "
                                  "dtype with nisa.tensor_copy");
      !r)
    return r;
  for (const Access* a : {&dst, &src})
    if (auto r = check_mx_data(ctx, *a, kOp); !r) return r;
  if (src.dtype() != DType::kBFloat16 && src.dtype() != DType::kFloat16)
    return fail(mx_dtype(fmt::format("'{}' quantizes bfloat16 or float16 values, got {}", kOp, src.describe()),
                         "cast the source to bfloat16 first"));
  if (dst.dtype() != DType::kFloat8E4M3FNx4 && dst.dtype() != DType::kFloat8E5M2x4)
    return fail(
        mx_dtype(fmt::format("'{}' writes float8_e4m3fn_x4 or float8_e5m2_x4 data, got {}", kOp, dst.describe()),
                 "allocate the quantized tile as nl.float8_e4m3fn_x4 or nl.float8_e5m2_x4 (quantize_mx "
                 "has no float4 output)"));
  const int64_t p = src.partitions(), f = free_elements(dst.view);
  if (dst.partitions() != p || free_elements(src.view) != f * kPackedLanes)
    return fail(mx_layout(fmt::format("'{}' packs 4 values per element: {} needs a [{}, {}] source, got {}", kOp,
                                      dst.describe(), dst.partitions(), f * kPackedLanes, src.describe()),
                          "allocate the quantized tile as [P, F // 4] for a [P, F] source"));
  if (auto r = check_free_size(ctx, src, Engine::kVector, kOp); !r) return r;
  if (auto r = check_mx_scale(ctx, dst_scale, dst, kOp, "dst_scale"); !r) return r;

  InstructionRecord rec =
      issue_instruction(ctx, Engine::kVector, Opcode::kQuantizeMx, loc, dst, {&src}, DataFlow::kCombined);
  prepare_second_destination(dst_scale);
  OperandRecord so = instruction_record(rec.engine, rec.op, loc, dst_scale, {}).operands.front();
  rec.operands.push_back(std::move(so));
  rec.elements = src.view.numel();
  ctx.trace.add(std::move(rec));
  // The rows of scales it writes: 4 (or fewer) at the start of each quadrant the data covers.
  for (int64_t q = 0; q * kQuadrant < p; ++q) {
    const int64_t groups = std::min(kQuadrant, p - q * kQuadrant) / kGroupRows;
    mark_written(Access{dst_scale.tensor, dst_scale.view.slice(0, q * kQuadrant, q * kQuadrant + groups)});
  }
  if (!ctx.compute) return {};

  const DType lane = *packed_lane_dtype(dst.dtype());
  // emax: the largest unbiased exponent of the lane format (8 for e4m3fn, 15 for e5m2).
  const int emax = static_cast<int>(std::ilogb(dtype_max_finite(lane)));
  const Tensor in = src.view.astype(DType::kFloat32);
  const float* x = in.data_as<float>();
  Tensor out = dst.view, scale = dst_scale.view;
  for (int64_t g = 0; g < p / kGroupRows; ++g) {
    for (int64_t c = 0; c < f; ++c) {
      float amax = 0.0f;
      bool nan = false;
      for (int64_t r = g * kGroupRows; r < (g + 1) * kGroupRows; ++r)
        for (int j = 0; j < kPackedLanes; ++j) {
          const float v = x[r * f * kPackedLanes + c * kPackedLanes + j];
          nan = nan || !std::isfinite(v);
          amax = std::max(amax, std::fabs(v));
        }
      // X = 2^(floor(log2 amax) - (emax - 1)): twice the OCP sample scale, so the group's largest value
      // rounds without saturating; 2^-127 for an all-zero group; NaN (0xFF) when the group holds NaN/inf.
      const int exp = amax > 0.0f ? std::ilogb(amax) - (emax - 1) : -127;
      const int code = nan ? 0xFF : std::clamp(exp + 127, 0, 254);
      const float inv = code == 0xFF ? std::numeric_limits<float>::quiet_NaN() : std::ldexp(1.0f, -(code - 127));
      store_f32(flat_ptr(scale, mx_scale_row(g * kGroupRows), c), DType::kUInt8, static_cast<float>(code));
      for (int64_t r = g * kGroupRows; r < (g + 1) * kGroupRows; ++r) {
        void* e = flat_ptr(out, r, c);
        for (int j = 0; j < kPackedLanes; ++j)
          packed_lane_store(e, dst.dtype(), j, x[r * f * kPackedLanes + c * kPackedLanes + j] * inv,
                            Fp8Overflow::kSaturating);
      }
    }
  }
  return {};
}

}  // namespace nki_agent
