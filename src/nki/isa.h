// nki/isa.h — the instruction core: NeuronCore instructions with explicit destinations, as
// nki.isa has them in the current dialect. Both dialects' front ends lower onto these.
//
// Each instruction, in one pass: validates its operands against the compiler's rules (a
// Diagnostic with the NKI catalogue code on failure), appends an InstructionRecord to the trace,
// and computes the numbers (engines widen to float32, compute, and round once into the
// destination's type) — unless the context is timing-only (ExecContext::compute false).
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "core/diagnostic.h"
#include "nki/nki_tensor.h"
#include "nki/target.h"
#include "nki/trace.h"
#include "tensor/ops.h"
#include "tensor/rng.h"

namespace nki_agent {

// What one kernel launch executes against.
struct ExecContext {
  const TargetSpec* target = &target_trn1();
  // false: timing-only — every instruction still runs its checks, marks its destination written
  // and records its trace entry, but skips the numerics (destinations keep what they held, poison
  // for fresh memory). The trace is the same as a computing run's.
  bool compute = true;
  // true: fresh tensors are poisoned when created and DMA copies are carried out at once, instead
  // of lazily (nki/nki_tensor.h). The values every read sees are the same either way; the switch
  // exists to show that (test_nki_lazy_state runs every kernel both ways) and for debugging.
  bool eager_state = false;
  Trace trace;
  // The innermost nl.affine_range loop running, and its iteration: (loop << 32 | iteration), 0
  // outside every affine loop. HBM writes are tagged with it (err_unexpected_output_dependencies).
  int64_t affine_tag = 0;
  // Reads of on-chip elements that another iteration of the running nl.affine_range loop wrote, kept
  // until the reading iteration ends: they are carried dependencies unless the iteration rewrote
  // them (an accumulation, acc[...] = acc + x). See check_carried_reads (nki/checks.h).
  struct CarriedRead {
    std::shared_ptr<NkiTensor> tensor;
    std::vector<int64_t> elements;  // element offsets into tensor->data
    int64_t tag = 0;                // the reading iteration
    SourceLoc loc;
    std::string opcode;
    int64_t writer = 0;  // the iteration that wrote the first of them
  };
  std::vector<CarriedRead> carried_reads;
  // What the checks found that does not stop the kernel (severity kWarning codes, e.g.
  // nkia_sbuf_capacity_exceeded), located at the kernel's line like errors; the run collects them
  // into KernelOutcome::warnings.
  WarningList warnings;
  // The engines' random-number state (nisa.rng, nisa.dropout, nl.rand): Philox seeded with 0 when the
  // launch begins and drawn from in program order, so a kernel call's draws are the same on every
  // run; they are not the device PRNG's values. A timing-only run draws nothing.
  Rng rng{0};
  // The Vector engine's per-partition accumulator as tensor_scalar_cumulative leaves it (its last
  // running value of each partition), for a following one with reduce_cmd=reduce; empty before the
  // first. Other accumulating instructions do not update it here.
  std::vector<float> vector_accumulator;
};

// Copies src into dst through a DMA queue (any memories but PSUM to HBM); the element counts must
// match, and the element type converts on the way. With `rmw` (dma_copy's dst_rmw_op, nl.add only)
// the DMA engine accumulates instead: dst = dst + src, in float32, rounded once into dst's type;
// accumulating writes of different nl.affine_range iterations into one element are allowed.
Result<void> isa_dma_copy(ExecContext& ctx, const Access& dst, const Access& src, const SourceLoc& loc,
                          std::optional<BinaryOp> rmw = std::nullopt);

// DMA transposes move 2- or 4-byte elements; others are nkia_dma_transpose_layout.
Result<void> check_dma_transpose_elements(const Access& src, const char* op);

// The one permutation the DMA engines apply to a source of `rank` dimensions: (1, 0), (2, 1, 0) or
// (3, 1, 2, 0); empty for another rank.
std::span<const int> dma_transpose_axes(int rank);

// dst = src with its axes permuted by `axes` (dst axis i is src axis axes[i]) through a DMA queue:
// (1, 0) of a 2-D source, (2, 1, 0) of a 3-D one, (3, 1, 2, 0) of a 4-D one; an empty `axes` takes
// the one for the source's rank. The source is in HBM or SBUF, the destination in SBUF, with the
// source's 2- or 4-byte dtype (dma_transpose, nl.load_transpose2d).
Result<void> isa_dma_transpose(ExecContext& ctx, const Access& dst, const Access& src, std::vector<int> axes,
                               const SourceLoc& loc);

// dst = a <op> b, elementwise on the Vector engine; a and b are on-chip tiles of the same shape, or
// b has one element per partition ([P, 1]) and broadcasts along the free axes.
Result<void> isa_tensor_tensor(ExecContext& ctx, const Access& dst, const Access& a, const Access& b, BinaryOp op,
                               const SourceLoc& loc);

// dst = src <op> scalar (or scalar <op> src when `reverse`), on the Vector engine.
Result<void> isa_tensor_scalar(ExecContext& ctx, const Access& dst, const Access& src, BinaryOp op, double scalar,
                               bool reverse, const SourceLoc& loc);

// dst = src <op> operand (or operand <op> src when `reverse`) with a [P, 1] operand tile broadcast
// along the free axes, on the Vector engine.
Result<void> isa_tensor_scalar_tile(ExecContext& ctx, const Access& dst, const Access& src, BinaryOp op,
                                    const Access& operand, bool reverse, const SourceLoc& loc);

// An affine function of the element's position in dst: value = constant + sum of coef * position
// along the axis, for each (axis, coef) term.
struct AffineExpr {
  int64_t constant = 0;
  std::vector<std::pair<int, int64_t>> terms;  // (axis of dst, coefficient)
  int64_t at(std::span<const int64_t> pos) const;
};

// dst = the affine expression's value at each position (int64 arithmetic, rounded into dst's
// type), on the GpSimd engine.
Result<void> isa_iota(ExecContext& ctx, const Access& dst, const AffineExpr& expr, const SourceLoc& loc);

// dst = cmp(expr(position), 0) ? on_true : on_false_value, on the GpSimd engine (causal masks).
Result<void> isa_affine_select(ExecContext& ctx, const Access& dst, const AffineExpr& expr, BinaryOp cmp,
                               const Access& on_true, double on_false_value, const SourceLoc& loc);

// dst = op(src * scale + bias) on the Scalar engine (op absent: the identity, nl.copy); bias is a
// [P, 1] tile or absent; the scale is
// the number `scale`, or, when given, the float32 [P, 1] tile `scale_tile` (one factor per partition).
// With `reduce_to`, the float32 results are also reduced along the free axes into reduce_to.res
// ([P, 1]) in the same instruction (activation_reduce, activation's reduce_res).
struct ActivationReduce {
  Access res;
  ReduceOp op = ReduceOp::kSum;
};
Result<void> isa_activation(ExecContext& ctx, const Access& dst, std::optional<UnaryOp> op, const Access& src,
                            const std::optional<Access>& bias, double scale, const SourceLoc& loc,
                            const std::optional<Access>& scale_tile = std::nullopt,
                            const std::optional<ActivationReduce>& reduce_to = std::nullopt);

// How nc_matmul treats what its PSUM destination already holds.
enum class Accumulate : uint8_t {
  kOverwrite,   // dst = stationary.T @ moving
  kAccumulate,  // dst += stationary.T @ moving
  kAuto,        // per element: overwrite the first time a matmul writes it, accumulate after
};

// dst[M, N] (PSUM, float32) = stationary[K, M].T @ moving[K, N] on the Tensor engine; both inputs in
// SBUF, K <= 128 partitions, M <= gemm_stationary_fmax, N <= gemm_moving_fmax. Products are exact
// in float32 and sums accumulate in float32.
Result<void> isa_nc_matmul(ExecContext& ctx, const Access& dst, const Access& stationary, const Access& moving,
                           Accumulate acc, const SourceLoc& loc);
// The rules of a matmul's PSUM destination (both modes): float32, in PSUM, within one 2 KiB bank per
// partition, and [m, n].
Result<void> check_matmul_destination(const ExecContext& ctx, const Access& dst, int64_t m, int64_t n, const char* op,
                                      const Access& stationary, const Access& moving);
// Writes a matmul's float32 [M, N] product into its PSUM destination as `acc` says (kAuto: per
// element, through NkiTensor::matmul_written), for both matmul modes.
void write_matmul_product(const Access& dst, const Tensor& product, Accumulate acc);
// How a matmul operand's axes split into contraction and free axes: all but the last contract (the
// ordinary mode's [K, X], double-row's [K, 2, X]), or the partitions contract and the free axes,
// flattened in row-major order, make X (nc_matmul_mx's [P, F...]).
enum class MatmulFree : uint8_t { kLast, kFlattened };
// Issues a matmul of any mode once its checks passed: issue_instruction (trace record `opcode`;
// `settle_reads` as there), with dst's flags following unwritten operand elements through the
// contraction (`free` says which axes contract) — a result is written when all its products'
// factors are; `op` names the instruction where stale data entered dst.
InstructionRecord issue_matmul(ExecContext& ctx, const InstrOp& opcode, const char* op, const SourceLoc& loc,
                               const Access& dst, const Access& stationary, const Access& moving, Accumulate acc,
                               bool settle_reads, MatmulFree free = MatmulFree::kLast);
// The operand rules of nc_matmul alone, for front ends that allocate the result after them.
Result<void> check_matmul_inputs(const ExecContext& ctx, const Access& stationary, const Access& moving);

// MX (OCP microscaling) instructions of NeuronCore-v4 (nki/isa_mx.cpp). A packed x4 operand [P, F]
// holds 4 values per element; the contraction runs over its partitions and the 4 values (K = 4P).
// A scaling group is 8 partitions x 1 element (32 values); its E8M0 scale (uint8 or
// float8_e8m0fnu) lies in the scale tile at row 32 * (p / 32) + (p % 32) / 8, the data's column:
// each 32-partition quadrant keeps its 4 rows of scales in its own quadrant.
//
// dst[M, N] (PSUM, float32 or bfloat16) (+)= sum over p, j of
//   stationary[p, m, j] * 2^(s_scale - 127) * moving[p, n, j] * 2^(m_scale - 127),
// in float32, rounded once into dst; P a multiple of 32 up to 128, M even and <= 128, N <= 4096
// (float32 dst) or 8192 (bfloat16). `tile_position` / `tile_size` (row tiling) are checked. Operands
// of several free axes ([P, F0, F1, ...], scales alike, dst [M, N0, ...]) count their free axes
// flattened in row-major order, as the ISA reference sizes them (M, N: free sizes).
struct MxTiling {
  int64_t row = 0, col = 0;        // tile_position
  int64_t rows = 128, cols = 128;  // tile_size
  bool given = false;
};
Result<void> isa_nc_matmul_mx(ExecContext& ctx, const Access& dst, const Access& stationary, const Access& moving,
                              const Access& stationary_scale, const Access& moving_scale, Accumulate acc,
                              const MxTiling& tiling, const SourceLoc& loc);
// dst[P, F] (float8_e4m3fn_x4 / float8_e5m2_x4) and dst_scale = src[P, 4F] (bfloat16 / float16)
// quantized by groups of 8 partitions x 4 values: scale X = 2^(floor(log2 amax) - (emax - 1)) (emax 8
// for e4m3fn, 15 for e5m2; 2^-127 for an all-zero group), values src / X rounded (RNE, saturating)
// into the lane format, dst[p, f] lane j = src[p, 4f + j]. On the Vector engine; all in SBUF.
Result<void> isa_quantize_mx(ExecContext& ctx, const Access& dst, const Access& src, const Access& dst_scale,
                             const SourceLoc& loc);
// The row of an MX scale tile holding the scale of data partition p (see above).
inline int64_t mx_scale_row(int64_t p) {
  return 32 * (p / 32) + (p % 32) / 8;
}

// dst[F, P] = src[P, F]: on the Tensor engine (src in SBUF, dst in PSUM, each side <= 128, through
// a matmul with the identity) or on the Vector engine (each side <= 32).
Result<void> isa_nc_transpose(ExecContext& ctx, const Access& dst, const Access& src, Engine engine,
                              const SourceLoc& loc);
Result<void> check_transpose_input(const Access& src, Engine engine);

// dst = reduce(op, src) over free axes of src (never axis 0, the partition axis), times -1 when
// `negate`; dst has src's shape with the reduced axes removed or, with keepdims, of size 1.
Result<void> isa_tensor_reduce(ExecContext& ctx, const Access& dst, ReduceOp op, const Access& src,
                               const std::vector<int>& axes, bool negate, const SourceLoc& loc);

// Per partition, along the (flattened) free elements i:
//   r[i] = op1(op0(data0[i], r[i-1]), data1[i]),  r[-1] = initial
// (reverse0 / reverse1 swap the operands of op0 / op1), in float32, on the Vector engine. The
// initial value is a number, or a [P, 1] tile (one per partition) when `initial_tile` is given.
Result<void> isa_tensor_tensor_scan(ExecContext& ctx, const Access& dst, const Access& data0, const Access& data1,
                                    double initial, const std::optional<Access>& initial_tile, BinaryOp op0,
                                    BinaryOp op1, bool reverse0, bool reverse1, const SourceLoc& loc);

// dst[P, 6] = per partition, over the even and the odd free elements of src[P, F <= 512]:
// [count_even, mean_even, var_even * count_even, count_odd, mean_odd, var_odd * count_odd].
Result<void> isa_bn_stats(ExecContext& ctx, const Access& dst, const Access& src, const SourceLoc& loc);
// dst[P, 2] = [mean, population variance] combining the (count, mean, M2) triples of src[P, 3k].
Result<void> isa_bn_aggr(ExecContext& ctx, const Access& dst, const Access& src, const SourceLoc& loc);

// Every element of dst = value (rounded into dst's type), on the given compute engine.
Result<void> isa_memset(ExecContext& ctx, const Access& dst, double value, Engine engine, const SourceLoc& loc);

// Shapes equal after dropping size-1 axes: [128, 1, 512] and [128, 512] describe the same data.
bool same_squeezed(const Shape& a, const Shape& b);
// The view of src with `shape` (their squeezed shapes being equal).
Tensor as_shape_of(const Tensor& src, const Shape& shape);
// Runs `fill` on dst laid out as `shape` (the same elements per partition, in row-major order): on a
// view of dst when the two shapes differ only by unit dimensions, else on a temporary copied into dst
// afterwards (the ISA pairs elements per partition, whatever the free shapes: nki-library writes a
// [1, 16] result into a [1, 4, 4] tile).
void compute_into(const Tensor& dst, const Shape& shape, const std::function<void(Tensor&)>& fill);
// err_store_dst_shape_smaller_than_other_shape unless dst holds as many elements as src (per
// partition, once their partitions match): the rule of the elementwise instructions compute_into
// serves, whose free shapes may differ.
Result<void> check_dst_elements(const Access& dst, const Access& src, const char* instruction);

// dst = src (with the type conversion), on the given compute engine.
Result<void> isa_tensor_copy(ExecContext& ctx, const Access& dst, const Access& src, Engine engine,
                             const SourceLoc& loc);

}  // namespace nki_agent
