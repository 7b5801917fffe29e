// nki/error_table_constraint.cpp — the error table's kernel codes of our own: the hardware and
// language rules no catalogue code covers (constraint) and what only running a kernel reveals
// (simulator).
//
// Everything here is written for nki-agent from the rules in nki-spec.md §2–§5 and §7; none of it
// is copied from AWS documentation. Examples use the legacy dialect with the usual imports
// (`import neuronxcc.nki.language as nl`, `neuronxcc.nki.isa as nisa`, `neuronxcc.nki.typing as
// nt`) and show only the lines that matter; `x`, `out` are HBM tensors, `t` an SBUF tile,
// `i_p = nl.arange(128)[:, None]` and `i_f = nl.arange(F)[None, :]` unless the snippet says otherwise.
//
// Sorted by code; the static_assert at the end keeps the part sorted, unique and complete
// (nki/error_table.h).
#include "nki/error_table.h"

namespace nki_agent::error_table {

namespace {

constexpr ErrorInfo kPart[] = {
    {
        .code = "nkia_activation_input_out_of_range",
        .origin = kSimulator,
        .severity = Severity::kWarning,
        .title = "A Scalar Engine function got an input outside its valid range",
        .meaning = "The Scalar Engine evaluates functions such as log, sin, sqrt, rsqrt, reciprocal and arctan by "
                   "piece-wise approximation over a limited input range (sin over [-pi, pi], log over "
                   "[2^-64, 2^64], ...). Outside it the hardware returns meaningless values; the simulator computes "
                   "the exact function but warns, because the kernel would be wrong on a device.",
        .hint = "Bring the input into range before the call (range-reduce angles, clamp with `nl.maximum` / "
                "`nl.minimum`), or use a variant with its own range handling (`nl.sin`) or a more precise engine "
                "(`nisa.reciprocal` on the Vector Engine).",
        .example_bad = snippet(R"py(
y = nisa.activation(op=nl.sin, data=t)    # t holds angles up to 10)py"),
        .example_fix = snippet(R"py(
y = nl.sin(t)                             # reduces the range first)py"),
        .spec = "§4.3; §9",
    },
    {
        .code = "nkia_affine_range_carried_dependency",
        .origin = kConstraint,
        .title = "An affine_range iteration reads a value written by another iteration",
        .meaning = "`nl.affine_range` lets the compiler run iterations in any order or overlapped, so a value "
                   "written in one iteration and read in a later one may not be there yet. The real compiler does "
                   "not catch this and silently computes wrong results; nki-agent reports it. Accumulating with "
                   "`+=` is the one permitted cross-iteration pattern.",
        .hint = "Use `nl.sequential_range` for loops whose iterations depend on each other (recurrences, running "
                "values), or restructure so each iteration reads only inputs and its own writes.",
        .example_bad = snippet(R"py(
for i in nl.affine_range(1, 4):
    buf[:, i, :] = nl.multiply(buf[:, i - 1, :], 0.5)   # reads iteration i - 1's write)py"),
        .example_fix = snippet(R"py(
for i in nl.sequential_range(1, 4):
    buf[:, i, :] = nl.multiply(buf[:, i - 1, :], 0.5))py"),
        .spec = "§5.3 Control flow; §3.7",
    },
    {
        .code = "nkia_allocation_misaligned",
        .origin = kConstraint,
        .title = "A tensor the kernel places is not aligned in PSUM",
        .meaning = "PSUM is addressed in 4-byte words: a tile placed with `ncc.psum.mod_alloc` / `ncc.psum.alloc` "
                   "must start at a byte address within its bank that is a multiple of 4 "
                   "(`nl.tile_size.psum_min_align`). In the current dialect a PSUM tensor placed with "
                   "`address=(partition, byte)` must start on a bank boundary, a multiple of 2048 bytes.",
        .hint = "Place PSUM tiles at byte 0 of their bank (`ncc.psum.mod_alloc(base_bank=b)`, "
                "`address=(0, b * 2048)`) and give every accumulator a bank of its own.",
        .example_bad = snippet(R"py(
acc = nl.ndarray((128, 256), dtype=nl.float32, buffer=ncc.psum.mod_alloc(base_bank=0, base_addr=2)))py"),
        .example_fix = snippet(R"py(
acc = nl.ndarray((128, 256), dtype=nl.float32, buffer=ncc.psum.mod_alloc(base_bank=0, base_addr=0)))py"),
        .note = "SBUF's minimum alignment is not settled (1 or 16 bytes by source), so SBUF addresses are not "
                "checked for alignment.",
        .spec = "§2.4 psum_min_align; §2.1; §2.2",
    },
    {
        .code = "nkia_allocation_out_of_range",
        .origin = kConstraint,
        .title = "A tensor the kernel places lies outside SBUF or PSUM",
        .meaning = "With direct allocation (`ncc.sbuf.mod_alloc`, `ncc.psum.mod_alloc`, the `alloc(func)` forms) "
                   "or `address=`, every physical tile must fit the memory: its partitions within the 128, its "
                   "bytes within a partition's usable SBUF (180224 on NeuronCore-v2, 212984 on v3), and a PSUM tile "
                   "within one of the eight 2 KiB banks. The compiler keeps the rest of SBUF for itself, and a PSUM "
                   "tile cannot cross a bank boundary.",
        .hint = "Compute the addresses so that base_addr + tile bytes x num_free_tiles stays within the usable "
                "bytes (`nl.tile_size.total_available_sbuf_size`); keep PSUM tiles at most 2 KiB (512 float32) per "
                "partition, in banks 0 to 7; reuse the bytes of tiles that are no longer live.",
        .example_bad = snippet(R"py(
t = nl.ndarray((128, 2048), dtype=nl.float32,
               buffer=ncc.sbuf.mod_alloc(base_addr=176 * 1024))   # 8 KiB from 176 KiB: past 180224)py"),
        .example_fix = snippet(R"py(
t = nl.ndarray((128, 2048), dtype=nl.float32,
               buffer=ncc.sbuf.mod_alloc(base_addr=160 * 1024)))py"),
        .note = "A start partition the engines cannot address (more than 64 partitions not at 0, 33-64 not at 0 "
                "or 64) is nkia_partition_start_alignment. In the legacy dialect a placement is checked in the "
                "first iteration of the enclosing loops: the tracer sees a loop body once.",
        .spec = "§2.1; §2.2; §2.3 TC#2; §2.4",
    },
    {
        .code = "nkia_allocation_overlap",
        .origin = kConstraint,
        .title = "Two tiles the kernel placed over the same bytes are live at once",
        .meaning = "A tensor placed by the kernel owns its bytes only while it holds data, from its first access "
                   "to its last. When another tile placed over some of the same bytes (another tensor, or another "
                   "block of a modulo allocation with too few physical tiles) is used in between, one overwrites "
                   "the other on the device. nki-agent keeps every tensor in storage of its own, so it reports the "
                   "conflict at the access that would read clobbered data instead of computing a wrong result.",
        .hint = "Give tiles that are live at the same time disjoint byte ranges (an allocation covers base_addr up "
                "to base_addr + tile bytes x num_free_tiles); give a rotating allocation at least as many physical "
                "tiles (num_free_tiles, num_bank_tiles) as blocks it keeps live; or finish with a tile before "
                "reusing its bytes.",
        .example_bad = snippet(R"py(
a = nl.ndarray((128, 512), dtype=nl.float32, buffer=ncc.sbuf.mod_alloc(base_addr=0))
b = nl.ndarray((128, 512), dtype=nl.float32, buffer=ncc.sbuf.mod_alloc(base_addr=1024))   # a's upper half
a[...] = nl.load(x)
b[...] = nl.load(y)
c[...] = nl.add(a, b))py"),
        .example_fix = snippet(R"py(
a = nl.ndarray((128, 512), dtype=nl.float32, buffer=ncc.sbuf.mod_alloc(base_addr=0))
b = nl.ndarray((128, 512), dtype=nl.float32, buffer=ncc.sbuf.mod_alloc(base_addr=2048))
a[...] = nl.load(x)
b[...] = nl.load(y)
c[...] = nl.add(a, b))py"),
        .note = "The compiler's own lifetime checks are incomplete; on hardware such kernels compute wrong "
                "numbers rather than fail.",
        .spec = "§2.1; §2.2",
    },
    {
        .code = "nkia_bitvec_op_needs_integer",
        .origin = kConstraint,
        .title = "A bitwise or shift operator is applied to floating-point data",
        .meaning = "Bitwise operators (`bitwise_and`, `bitwise_or`, `bitwise_xor`, `invert`) and shifts work on "
                   "raw bit patterns, and the engines accept them only on integer dtypes. Arithmetic operators, "
                   "by contrast, convert every input to float32.",
        .hint = "Give the operator integer tiles: convert values with `nl.copy(t, dtype=nl.int32)`, or "
                "reinterpret the bits with `t.view(nl.int32)` if you really mean the float's bit pattern.",
        .example_bad = snippet(R"py(
y = nl.bitwise_and(t, 0xFF)               # t is float32)py"),
        .example_fix = snippet(R"py(
y = nl.bitwise_and(t.view(nl.int32), 0xFF))py"),
        .spec = "§5.3 Dtypes; §4.6",
    },
    {
        .code = "nkia_bn_aggr_stats_size",
        .origin = kConstraint,
        .title = "The bn_aggr input is not a whole number of statistics triples",
        .meaning = "`nisa.bn_aggr` combines the statistics `bn_stats` produces, which come in triples (count, "
                   "mean, scaled variance) per partition. Its free size must therefore be a multiple of 3; "
                   "normally it is the concatenation of 6-wide `bn_stats` outputs.",
        .hint = "Feed `bn_aggr` exactly the concatenated `bn_stats` results (`[P, 6 * k]` for k chunks) without "
                "slicing into a triple or appending other values.",
        .example_bad = snippet(R"py(
stats = nisa.bn_stats(t)                  # [128, 6]
mv = nisa.bn_aggr(stats[:, 0:4]))py"),
        .example_fix = snippet(R"py(
stats = nisa.bn_stats(t)
mv = nisa.bn_aggr(stats)                  # [128, 2]: mean, variance)py"),
        .spec = "§5.3 Shapes; §4.4",
    },
    {
        .code = "nkia_both_inputs_in_psum",
        .origin = kConstraint,
        .title = "Both inputs of a two-input Vector Engine instruction are in PSUM",
        .meaning = "The Vector Engine can read only one operand per instruction from PSUM; the other has to come "
                   "from SBUF. `tensor_tensor`, `tensor_tensor_scan`, `scalar_tensor_tensor`, "
                   "`tensor_copy_predicated` and the `nl` binary functions that lower to them all follow this "
                   "rule.",
        .hint = "Evict one operand to SBUF first (`a = nl.copy(acc1)`) and combine it with the other one still "
                "in PSUM.",
        .example_bad = snippet(R"py(
c = nisa.tensor_tensor(acc1, acc2, op=nl.add)   # acc1, acc2 in PSUM)py"),
        .example_fix = snippet(R"py(
a = nl.copy(acc1)                         # PSUM -> SBUF
c = nisa.tensor_tensor(a, acc2, op=nl.add))py"),
        .spec = "§5.3 Memory placement; §4.4",
    },
    {
        .code = "nkia_direct_allocation_internal_hbm",
        .origin = kConstraint,
        .title = "A direct-allocation kernel creates an internal HBM tensor",
        .meaning = "In a kernel that places its on-chip tensors itself, HBM tensors can only be the kernel's "
                   "inputs, its outputs (`nl.shared_hbm`) and constants (`nl.shared_constant`). A scratch tensor in "
                   "`nl.hbm` / `nl.private_hbm` has no place the compiler can map (NKI005: DRAM location of kind "
                   "Internal).",
        .hint = "Keep intermediate data on chip in placed SBUF tiles, or make the HBM tensor an output "
                "(`buffer=nl.shared_hbm`, returned by the kernel).",
        .example_bad = snippet(R"py(
t = nl.ndarray((128, 512), dtype=nl.float32, buffer=ncc.sbuf.mod_alloc(base_addr=0))
spill = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.hbm))py"),
        .example_fix = snippet(R"py(
t = nl.ndarray((128, 512), dtype=nl.float32, buffer=ncc.sbuf.mod_alloc(base_addr=0))
keep = nl.ndarray((128, 512), dtype=nl.float32, buffer=ncc.sbuf.mod_alloc(base_addr=2048)))py"),
        .spec = "§5.2 NKI005; §2.2",
    },
    {
        .code = "nkia_direct_allocation_mixed",
        .origin = kConstraint,
        .title = "A direct-allocation kernel also has tensors the compiler allocates",
        .meaning = "Once a kernel places an on-chip tensor with `ncc.sbuf.mod_alloc` / `ncc.psum.mod_alloc` (or "
                   "the `alloc(func)` forms), every SBUF/PSUM tensor in it must be placed: auto- and "
                   "direct-allocated tensors cannot be mixed, since the compiler's tiles could land on the "
                   "kernel's. That rules out `nl.ndarray` / `nl.zeros` on `nl.sbuf` or `nl.psum`, and the result "
                   "tile of an `nl` or `nisa` call used by another instruction instead of being assigned into a "
                   "placed tensor (`t = nl.load(x)`, `nl.exp(nl.load(x))`, `nl.store` of a PSUM tile, a matmul "
                   "assigned into SBUF, `nl.softmax` and other calls that need intermediate tiles).",
        .hint = "Create every on-chip tensor with a placement and assign results into it: "
                "`t = nl.ndarray(shape, dtype, buffer=ncc.sbuf.mod_alloc(base_addr=...))`, then `t[...] = "
                "nl.load(x)`; copy PSUM results into a placed SBUF tile before storing them. Or drop direct "
                "allocation from the whole kernel.",
        .example_bad = snippet(R"py(
y = nl.ndarray((128, 512), dtype=nl.float32, buffer=ncc.sbuf.mod_alloc(base_addr=0))
t = nl.load(x)                            # a tile the compiler allocates
y[...] = nl.add(t, 1.0))py"),
        .example_fix = snippet(R"py(
y = nl.ndarray((128, 512), dtype=nl.float32, buffer=ncc.sbuf.mod_alloc(base_addr=0))
t = nl.ndarray((128, 512), dtype=nl.float32, buffer=ncc.sbuf.mod_alloc(base_addr=2048))
t[...] = nl.load(x)
y[...] = nl.add(t, 1.0))py"),
        .note = "The current dialect's `address=` placements may be mixed with automatic allocation. A result "
                "tile is reported at the line that created it.",
        .spec = "§2.2; §5.1 #7, #29, #31",
    },
    {
        .code = "nkia_dma_transpose_layout",
        .origin = kConstraint,
        .title = "A dma_transpose the DMA engines cannot do",
        .meaning = "`nisa.dma_transpose` permutes the axes of a 2-D to 4-D HBM or SBUF source into an SBUF "
                   "destination while it moves the data. The DMA engines do three permutations: (1, 0) of a 2-D "
                   "source, (2, 1, 0) of a 3-D one and (3, 1, 2, 0) of a 4-D one, on 2- and 4-byte elements, and "
                   "the destination has the permuted shape and the source's dtype.",
        .hint = "Pass one of the supported `axes` for the source's rank (or none, for the default), keep 2- or "
                "4-byte elements, and allocate the destination with the permuted shape; for other layouts, "
                "transpose on chip with `nisa.nc_transpose` in 128 x 128 blocks.",
        .example_bad = snippet(R"py(
t = nisa.dma_transpose(x[0:64, 0:32, 0:128], axes=(1, 0, 2))   # not a DMA permutation)py"),
        .example_fix = snippet(R"py(
t = nisa.dma_transpose(x[0:64, 0:32, 0:128], axes=(2, 1, 0))   # [128, 32, 64])py"),
        .spec = "§4.5 (dma_transpose); §5.3",
    },
    {
        .code = "nkia_dynamic_loop_not_computed",
        .origin = kSimulator,
        .title = "A loop bound loaded from memory at run time cannot be computed",
        .meaning = "`nl.dynamic_range` with a register from `nisa.register_load` (or `nisa.register_store` of such a "
                   "register) depends on a tensor's value, which the sequencer reads when the kernel runs. A "
                   "timing-only check traces the loop body once, as the compiler compiles it; a computing run would "
                   "have to run the body's Python once per iteration, which would let the kernel count them and so "
                   "read a value while it is traced, so nki-agent refuses it.",
        .hint = "Check such a kernel with `nki-agent check`; to verify it, give the loop a compile-time bound "
                "(`nl.sequential_range(max_tiles)`) and skip the tail with a mask or `oob_mode`.",
        .example_bad = snippet(R"py(
reg = nisa.register_alloc()
nisa.register_load(reg, count_tile)
for _ in nl.dynamic_range(0, reg):
    ...)py"),
        .example_fix = snippet(R"py(
for i in nl.sequential_range(max_tiles):   # a compile-time bound
    ...)py"),
        .spec = "§3.1; §4.6",
    },
    {
        .code = "nkia_feature_not_on_target",
        .origin = kConstraint,
        .title = "The instruction or mode is not available on the target NeuronCore",
        .meaning = "NeuronCore generations differ. v2 (trn1, inf2) lacks hardware DMA descriptor generation, a "
                   "scalar activation bias, `tensor_scalar` add/multiply on the Scalar Engine, the bit-exact "
                   "transpose mode and `range_select`; double-row FP8 matmul, 2/4-byte `dma_transpose`, `sendrecv` and "
                   "`core_barrier` need v3 (trn2); MX matmul, bfloat16 PSUM results, moving free sizes above 512, "
                   "tensor indirection, "
                   "`exponential` and `activate2` need v4 (trn3).",
        .hint = "Use the portable form for the selected target (a `[P, 1]` bias tile instead of a scalar, the "
                "Vector Engine for `tensor_scalar`, an ordinary bf16/fp8 matmul instead of double-row), or "
                "select a newer target if the kernel is meant for one.",
        .spec = "§5.3 Target-specific; §4.2, §4.3",
    },
    {
        .code = "nkia_find_index8_output_dtype",
        .origin = kConstraint,
        .title = "The nc_find_index8 output dtype is not uint16 or uint32",
        .meaning = "`nisa.nc_find_index8` writes element positions, which the hardware produces as unsigned "
                   "integers. Only uint32 (the default) and uint16 outputs are accepted.",
        .hint = "Pass `dtype=nl.uint32` (or `nl.uint16` when positions stay below 65536) and convert afterwards "
                "with `nl.copy(idx, dtype=...)` if another type is needed.",
        .example_bad = snippet(R"py(
top = nisa.max8(src=t)
idx = nisa.nc_find_index8(data=t, vals=top, dtype=nl.int32))py"),
        .example_fix = snippet(R"py(
top = nisa.max8(src=t)
idx = nisa.nc_find_index8(data=t, vals=top, dtype=nl.uint32))py"),
        .spec = "§5.3 Dtypes; §4.4",
    },
    {
        .code = "nkia_free_size_mismatch",
        .origin = kConstraint,
        .title = "The operands have different numbers of elements per partition",
        .meaning = "Instructions that combine two full tiles (`tensor_tensor`, `tensor_tensor_scan`, "
                   "`scalar_tensor_tensor`, `nc_stream_shuffle`) pair the elements of each partition one to one, "
                   "so both operands must hold the same number of elements per partition. Unlike the `nl` "
                   "functions, these ISA calls do not broadcast along the free axis.",
        .hint = "Slice both operands to the same free size; for a `[P, 1]` operand that should apply to every "
                "column, use `nisa.tensor_scalar` (which spreads it along the free axis) instead.",
        .example_bad = snippet(R"py(
c = nisa.tensor_tensor(a, b, op=nl.multiply)        # a [128, 512], b [128, 1])py"),
        .example_fix = snippet(R"py(
c = nisa.tensor_scalar(a, op0=nl.multiply, operand0=b))py"),
        .spec = "§5.3 Shapes; §4.4",
    },
    {
        .code = "nkia_host_math_on_tile",
        .origin = kSimulator,
        .title = "NumPy is called on a tile",
        .meaning = "NumPy runs on the host while the kernel is traced; a tile's values exist only on the device, "
                   "so `np.maximum(t, 0)`, `np.exp(t)`, `np.sum(t)` or `np.asarray(t)` on a tile computes nothing "
                   "the kernel can use. NumPy may shape constants from shapes and arguments (`np.prod(x.shape)`, "
                   "`1 / np.sqrt(d)`), and `np.shape`, `np.ndim` and `np.size` of a tile are its shape's.",
        .hint = "Compute on tiles with the NKI instruction: `nl.maximum(t, 0.0)`, `nl.exp(t)`, "
                "`nl.sum(t, axis=[1])`.",
        .example_bad = snippet(R"py(
t = nl.load(x)
y = np.maximum(t, 0))py"),
        .example_fix = snippet(R"py(
t = nl.load(x)
y = nl.maximum(t, 0.0))py"),
        .spec = "§1.2; §3.3",
    },
    {
        .code = "nkia_indirect_index_out_of_bounds",
        .origin = kSimulator,
        .title = "A runtime index points outside the tensor",
        .meaning = "Indices read from a tile at run time (indirect loads, stores, gathers, `atomic_rmw`) cannot be "
                   "checked while the kernel is traced. During execution one of them fell outside the indexed "
                   "tensor; on hardware that faults or touches unrelated memory.",
        .hint = "Clamp the indices before use (`nl.minimum(idx, n - 1)`), mask the affected rows, or, when "
                "out-of-range rows should simply be skipped, use `nisa.dma_copy(..., oob_mode=nisa.oob_mode.skip)`.",
        .example_bad = snippet(R"py(
g = nl.load(x[idx[i_p, 0], i_f])          # some idx values are >= x.shape[0])py"),
        .example_fix = snippet(R"py(
safe = nl.minimum(idx, x.shape[0] - 1)
g = nl.load(x[safe[i_p, 0], i_f]))py"),
        .spec = "§3.6; §5.1 #28",
    },
    {
        .code = "nkia_indirect_index_tile",
        .origin = kConstraint,
        .title = "An indirect index is not an int32/uint32 tile in SBUF",
        .meaning = "A runtime row index, as in `x[idx[i_p, 0], i_f]`, is read by the DMA engines from on-chip "
                   "memory. It must be an SBUF tile of int32 or uint32 values; float tiles, PSUM tiles and HBM "
                   "tensors cannot serve as indices.",
        .hint = "Load the indices into SBUF first and convert them if needed (`nl.load(ids, dtype=nl.int32)`), "
                "then index with that tile.",
        .example_bad = snippet(R"py(
g = nl.load(x[ids[i_p, 0], i_f])          # ids is an HBM input)py"),
        .example_fix = snippet(R"py(
idx = nl.load(ids, dtype=nl.int32)        # [128, 1] in SBUF
g = nl.load(x[idx[i_p, 0], i_f]))py"),
        .spec = "§5.3 Shapes (indexing); §3.2",
    },
    {
        .code = "nkia_insufficient_rank",
        .origin = kConstraint,
        .title = "An SBUF or PSUM tensor has fewer than two dimensions",
        .meaning = "On-chip memory is laid out as partitions times bytes, so an on-chip tensor needs a partition "
                   "axis and at least one free axis. A 1-D shape such as `(128,)` has no free axis and is "
                   "refused.",
        .hint = "Add a free axis of size 1: use `(128, 1)` instead of `(128,)`, or `keepdims=True` on "
                "reductions.",
        .example_bad = snippet(R"py(
v = nl.ndarray((128,), dtype=nl.float32, buffer=nl.sbuf))py"),
        .example_fix = snippet(R"py(
v = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf))py"),
        .note = "The legacy compiler says \"Insufficient rank\".",
        .spec = "§5.3 Shapes; §2.3, §5.2",
    },
    {
        .code = "nkia_kernel_output_not_shared_hbm",
        .origin = kConstraint,
        .title = "The kernel returns a tensor that is not in shared HBM",
        .meaning = "The caller can only receive tensors in device memory. A returned tensor must be an HBM tensor "
                   "created with `buffer=nl.shared_hbm`; SBUF and PSUM tiles cannot leave the kernel, and "
                   "private HBM (`nl.hbm`) outputs are refused from NKI 0.3 on.",
        .hint = "Allocate the output with `nl.ndarray(shape, dtype, buffer=nl.shared_hbm)` at the kernel's top "
                "level, `nl.store` the computed tile into it, and return that tensor rather than the tile.",
        .example_bad = snippet(R"py(
t = nl.exp(nl.load(x))
return t)py"),
        .example_fix = snippet(R"py(
out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
nl.store(out, value=nl.exp(nl.load(x)))
return out)py"),
        .spec = "§5.3 Memory placement; §1.2",
    },
    {
        .code = "nkia_local_gather_layout",
        .origin = kConstraint,
        .title = "The local_gather operands break its layout rules",
        .meaning = "`nisa.local_gather` runs on the GpSimd cores, each serving a group of 16 partitions. The "
                   "source must span a multiple of 16 partitions, `num_elem_per_idx` must be 1, 2, 4, 8, 16 or "
                   "32, and the index tile must be uint16.",
        .hint = "Pad the partition count to a multiple of 16, convert the indices with "
                "`nl.copy(idx, dtype=nl.uint16)`, and choose a supported `num_elem_per_idx`.",
        .note = "More than 4096 indices per 16-partition group is reported as "
                "err_size_of_dimension_exceed_arch_limit.",
        .spec = "§5.3 Shapes; §4.5",
    },
    {
        .code = "nkia_matmul_double_row_layout",
        .origin = kConstraint,
        .title = "The double-row FP8 matmul operands have the wrong shape or dtype",
        .meaning = "`perf_mode=double_row` contracts over 256 values laid out as 128 partitions times 2: "
                   "stationary must be `[128, 2, M]` with M at most 128 and moving `[128, 2, N]` with N at most "
                   "512, the middle axis exactly 2. Both operands must be FP8 (float8_e4m3 and float8_e5m2 may be "
                   "mixed), and the mode cannot be combined with PE tiling or the transpose mode.",
        .hint = "Reshape both operands to `[128, 2, free]` (zero-pad K to 256), cast them to an FP8 dtype and "
                "drop `tile_position` / `is_transpose`; otherwise use the ordinary matmul mode.",
        .note = "Double-row mode exists on NeuronCore-v3 and v4 only (see nkia_feature_not_on_target).",
        .spec = "§5.3 Shapes; §4.2",
    },
    {
        .code = "nkia_matmul_input_dtype",
        .origin = kConstraint,
        .title = "A matmul input dtype is not supported by the Tensor Engine",
        .meaning = "The Tensor Engine multiplies float8 (e4m3, e5m2), bfloat16, float16, tfloat32 and float32 "
                   "inputs; integer tiles are not accepted. The two operands may have different dtypes, except "
                   "that float32 and tfloat32 pair only with each other.",
        .hint = "Cast the operands, for instance to bfloat16 (`nl.load(a, dtype=nl.bfloat16)` or "
                "`nl.copy(t, dtype=nl.bfloat16)`; float32 runs 4x slower), and give both the same dtype when one "
                "of them is float32 or tfloat32.",
        .example_bad = snippet(R"py(
a = nl.load(aT)                           # float32 [128, 128]
b = nl.load(w, dtype=nl.bfloat16)         # bfloat16 [128, 512]
acc += nisa.nc_matmul(a, b))py"),
        .example_fix = snippet(R"py(
a = nl.load(aT, dtype=nl.bfloat16)
b = nl.load(w, dtype=nl.bfloat16)
acc += nisa.nc_matmul(a, b))py"),
        .note = "NeuronCore-v4 also takes float8_e4m3fn, which cannot be mixed with float8_e4m3.",
        .spec = "§5.3 Dtypes; §4.2",
    },
    {
        .code = "nkia_matmul_psum_dtype",
        .origin = kConstraint,
        .title = "A matmul result tile in PSUM is not float32",
        .meaning = "The Tensor Engine accumulates in float32 and writes float32 into PSUM; only NeuronCore-v4 can "
                   "also write bfloat16 results. A matmul result assigned into a PSUM tile of any other dtype is "
                   "refused.",
        .hint = "Declare the PSUM accumulator as float32 (`nl.zeros((M, N), nl.float32, buffer=nl.psum)`) and "
                "convert when evicting it: `nl.copy(acc, dtype=nl.bfloat16)`.",
        .example_bad = snippet(R"py(
acc = nl.zeros((128, 512), nl.bfloat16, buffer=nl.psum)
acc += nisa.nc_matmul(a, b))py"),
        .example_fix = snippet(R"py(
acc = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
acc += nisa.nc_matmul(a, b)
res = nl.copy(acc, dtype=nl.bfloat16))py"),
        .spec = "§5.3 Dtypes; §2.1, §4.2",
    },
    {
        .code = "nkia_max8_input_size",
        .origin = kConstraint,
        .title = "max8-family input too small, or vals not 8 per partition",
        .meaning = "`nisa.max8` returns the 8 largest values of each partition, and `nc_find_index8` / "
                   "`nc_match_replace8` look for exactly 8 values per partition. The searched data therefore "
                   "needs at least 8 elements per partition, and `vals` must be a `[P, 8]` tile.",
        .hint = "Pad the data to at least 8 elements per partition (with `nl.fp32.min` for max8, so padding never "
                "wins), and pass `vals` as a `[P, 8]` tile, typically the output of `nisa.max8`.",
        .example_bad = snippet(R"py(
top = nisa.max8(src=t[:, 0:4])           # only 4 elements per partition)py"),
        .example_fix = snippet(R"py(
p = nl.full((128, 8), nl.fp32.min, dtype=nl.float32)
p[:, 0:4] = t[:, 0:4]                     # padding can never be among the largest
top = nisa.max8(src=p))py"),
        .note = "The upper limit, 16384 elements per partition, is reported as "
                "err_size_of_dimension_exceed_arch_limit.",
        .spec = "§5.3 Shapes; §4.4",
    },
    {
        .code = "nkia_multicore_deadlock",
        .origin = kSimulator,
        .title = "A core or rank waits for a synchronisation its peers never reach",
        .meaning = "The two cores of an LNC=2 launch synchronise at `nisa.sendrecv` (both sides of a pipe) and "
                   "`nisa.core_barrier` (both cores); the ranks of a replica group meet at each `nki.collectives` "
                   "operation (every rank of the group, the same operation, in the same order). One of them waited "
                   "while a peer returned, failed, or waited somewhere else: on a device both would wait forever.",
        .hint = "Make both cores reach the same sendrecv and core_barrier calls in the same order, whatever "
                "their program_id: a synchronisation inside `if nl.program_id(0) == 0:` has no partner. Every "
                "rank of a group makes the same collective calls.",
        .example_bad = snippet(R"py(
if nl.program_id(0) == 0:
    nisa.core_barrier(out, cores=(0, 1)))py"),
        .example_fix = snippet(R"py(
nisa.core_barrier(out, cores=(0, 1))   # both cores)py"),
        .spec = "§7.2",
    },
    {
        .code = "nkia_multicore_not_modelled",
        .origin = kSimulator,
        .title = "A multi-core primitive needs cores or ranks the launch does not have",
        .meaning = "`nisa.sendrecv` and `nisa.core_barrier` are simulated between the two logical cores of an "
                   "LNC=2 launch, a launch of two instances (`kernel[2](...)`); called from a launch of one "
                   "instance, or of more than two, they have no peer core, and the call is refused rather than "
                   "simulated wrongly. `nki.collectives` operations run between the ranks their replica group "
                   "names (up to 64) in launches of one or two instances; `all_gather_v` and `all_to_all_v`, whose "
                   "element counts are read from a tensor when the kernel runs, are not simulated.",
        .hint = "Launch an LNC=2 kernel as `kernel[2](...)`, so that both cores run; for a collective nki-agent "
                "does not simulate, check the kernel in a form without it and pass what the other ranks would "
                "send as an input.",
        .example_bad = snippet(R"py(
out = my_kernel(a)   # my_kernel calls nisa.sendrecv(..., send_to_rank=1 - rank, ...))py"),
        .example_fix = snippet(R"py(
out = my_kernel[2](a)   # two instances: the two cores of LNC=2)py"),
        .spec = "§1.3; §4.5; §7.2",
    },
    {
        .code = "nkia_mx_dtype",
        .origin = kConstraint,
        .title = "An MX instruction operand has the wrong dtype",
        .meaning = "`nc_matmul_mx` multiplies packed x4 tiles (float8_e4m3fn_x4, float8_e5m2_x4, "
                   "float4_e2m1fn_x4) with uint8 or float8_e8m0fnu scales into a float32 or bfloat16 PSUM tile. "
                   "`quantize_mx` reads a bfloat16 or float16 tile and writes float8_e4m3fn_x4 or float8_e5m2_x4 "
                   "data (not float4_e2m1fn_x4) and uint8 or float8_e8m0fnu scales.",
        .hint = "Allocate the MX data with an x4 dtype (`nl.ndarray((P, F // 4), dtype=nl.float8_e4m3fn_x4, "
                "buffer=nl.sbuf)`), the scales as nl.uint8, and quantize from bfloat16 or float16.",
        .example_bad = snippet(R"py(
q = nl.ndarray((128, 128), dtype=nl.float8_e4m3fn, buffer=nl.sbuf)
nisa.quantize_mx(dst=q, src=x, dst_scale=s))py"),
        .example_fix = snippet(R"py(
q = nl.ndarray((128, 128), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)
nisa.quantize_mx(dst=q, src=x, dst_scale=s))py"),
        .spec = "§4.2 nc_matmul_mx; §4.4 quantize_mx; §3.9",
    },
    {
        .code = "nkia_mx_layout",
        .origin = kConstraint,
        .title = "An MX instruction operand has the wrong shape or layout",
        .meaning = "MX data covers a multiple of 32 partitions, at most 128, in scaling groups of 8 partitions "
                   "by 4 values. `quantize_mx` writes `[P, F]` x4 data from a `[P, 4F]` source; the scale tile "
                   "has the data's free size and, per 32-partition quadrant, 4 rows of scales inside that "
                   "quadrant: `[P // 8, F]` for P <= 32, else at least 32 * (P // 32 - 1) + 4 rows. "
                   "`nc_matmul_mx` takes stationary `[P, M]` (M even, <= 128) and moving `[P, N]` (N <= 4096 for "
                   "a float32 result, 8192 for bfloat16), both with the same P, and a `[M, N]` destination.",
        .hint = "Allocate the data as `[P, F // 4]` of an x4 dtype and the scales as `[P, F // 4]` uint8 when "
                "P > 32 (`[P // 8, F // 4]` otherwise), with P a multiple of 32.",
        .example_bad = snippet(R"py(
q = nl.ndarray((128, 512), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)
s = nl.ndarray((16, 512), dtype=nl.uint8, buffer=nl.sbuf)     # scales must stay in their quadrants
nisa.quantize_mx(dst=q, src=x, dst_scale=s))py"),
        .example_fix = snippet(R"py(
s = nl.ndarray((128, 512), dtype=nl.uint8, buffer=nl.sbuf)
nisa.quantize_mx(dst=q, src=x, dst_scale=s))py"),
        .spec = "§4.2 nc_matmul_mx; §4.4 quantize_mx",
    },
    {
        .code = "nkia_output_partially_written",
        .origin = kSimulator,
        .severity = Severity::kWarning,
        .title = "Part of an output tensor was never written",
        .meaning = "The kernel stored into an output but left some of its elements untouched. On hardware those "
                   "elements keep whatever the buffer held before; the simulator fills them with a marker value "
                   "and reports them. A typical cause is a kernel that assumes a fixed number of tiles (say 128 "
                   "rows) while the input has more.",
        .hint = "Derive trip counts from the tensor shapes with ceiling division and mask the last tile, so that "
                "every element of every output is stored.",
        .example_bad = snippet(R"py(
out = nl.ndarray((256, 512), dtype=x.dtype, buffer=nl.shared_hbm)
nl.store(out[0:128, :], value=nl.exp(nl.load(x[0:128, :])))   # rows 128..255 never written)py"),
        .example_fix = snippet(R"py(
out = nl.ndarray((256, 512), dtype=x.dtype, buffer=nl.shared_hbm)
for k in nl.affine_range(2):
    nl.store(out[k * 128:(k + 1) * 128, :], value=nl.exp(nl.load(x[k * 128:(k + 1) * 128, :]))))py"),
        .spec = "§7.1; §1.2",
    },
    {
        .code = "nkia_packed_dtype_operand",
        .origin = kConstraint,
        .title = "A packed x4 MX tile is an operand of an instruction that computes on values",
        .meaning = "float8_e4m3fn_x4, float8_e5m2_x4 and float4_e2m1fn_x4 hold four values per element. "
                   "Only DMA copies (no conversion), `nc_matmul_mx` and `quantize_mx` take them; the Vector, "
                   "Scalar and GpSimd instructions do not compute on them.",
        .hint = "Move MX tiles with `nisa.dma_copy` into a tile of the same dtype, compute on the bfloat16 values "
                "before `quantize_mx`, or view the bits as an integer type (`t.view(nl.uint32)`).",
        .example_bad = snippet(R"py(
nisa.tensor_copy(dst=q2, src=q))py"),
        .example_fix = snippet(R"py(
nisa.dma_copy(dst=q2, src=q))py"),
        .spec = "§3.9; §4.6 dma_copy",
    },
    {
        .code = "nkia_partition_index_not_first",
        .origin = kConstraint,
        .title = "The partition index is not the first index of the subscript",
        .meaning = "When a tile is taken out of a tensor, the tensor's first indexed axis becomes the tile's "
                   "partition axis, so the partition-shaped index (`nl.arange(n)[:, None]`) must come first. "
                   "Putting it on a later axis, as in `x[i_f, i_p]`, asks for a layout the load cannot produce.",
        .hint = "Index so that the axis you want on partitions comes first. If the data is laid out the other way "
                "round, load it as it is and transpose on chip (`nl.transpose`, `nisa.nc_transpose`), or use "
                "`nl.load_transpose2d`.",
        .example_bad = snippet(R"py(
i = nl.arange(128)[:, None]
j = nl.arange(64)[None, :]
t = nl.load(x[j, i])                      # partition index on x's second axis)py"),
        .example_fix = snippet(R"py(
t = nl.load_transpose2d(x[0:64, 0:128])   # [128, 64]: x's columns on partitions)py"),
        .spec = "§5.3 Shapes (indexing); §3.2",
        .not_raised = "the index front end accepts an index tile of either shape on any tensor axis and loads the "
                      "data transposed (tests/kernels/fail/partition_index_second.py is a known failure).",
    },
    {
        .code = "nkia_partition_not_contiguous",
        .origin = kConstraint,
        .title = "An operand's partition range is not contiguous",
        .meaning = "Engines address a run of consecutive partitions; an access pattern cannot step over "
                   "partitions. A partition index such as `2 * i_p` or a stepped slice on the partition axis is "
                   "refused, while free axes may be strided freely.",
        .hint = "Keep the partition index unit-stride and move the stride to a free axis: view the data so that "
                "the step becomes its own axis (e.g. reshape `[2n, F]` to `[n, 2, F]` and index `[i_p, 0, i_f]`), "
                "or transpose first.",
        .example_bad = snippet(R"py(
g = nl.load(x[2 * i_p, i_f])              # every other row)py"),
        .example_fix = snippet(R"py(
x2 = x.reshape((n // 2, 2, F))
g = nl.load(x2[i_p, 0, i_f])              # the same rows, unit partition stride)py"),
        .spec = "§5.3 Shapes (access patterns); §2.5, §3.6",
    },
    {
        .code = "nkia_partition_start_alignment",
        .origin = kConstraint,
        .title = "An operand starts at a partition the engines cannot address",
        .meaning = "Where an operand may start depends on how many partitions it spans: more than 64 must start at "
                   "partition 0, 33 to 64 at 0 or 64, and 32 or fewer at 0, 32, 64 or 96. Moving data between "
                   "partitions is therefore limited to these half and quadrant boundaries.",
        .hint = "Start tiles on an allowed partition (`t[64:128]` or `t[32:64]`, not `t[16:48]`); to move data to "
                "an arbitrary partition, multiply by a shifted identity on the Tensor Engine or go through HBM "
                "with `nl.store` and `nl.load`.",
        .example_bad = snippet(R"py(
y = nl.exp(t[16:48, 0:512])               # 32 partitions starting at 16)py"),
        .example_fix = snippet(R"py(
y = nl.exp(t[32:64, 0:512])               # load the rows to start at 0, 32, 64 or 96)py"),
        .spec = "§5.3 Shapes (access patterns); §2.5",
    },
    {
        .code = "nkia_predicate_dtype",
        .origin = kConstraint,
        .title = "A predicate tile has an unsupported dtype",
        .meaning = "Predicated instructions read their predicate as raw integers: `nisa.tensor_copy_predicated` "
                   "takes uint8, uint16 or uint32 predicates, and `nisa.select_reduce` 8- or 16-bit integer ones. "
                   "Floating-point predicate tiles are refused.",
        .hint = "Produce the predicate with an integer output dtype, e.g. `nl.greater(a, b, dtype=nl.uint8)`, or "
                "convert it with `nl.copy(p, dtype=nl.uint8)`.",
        .example_bad = snippet(R"py(
pred = nl.greater(a, b, dtype=nl.float32)
nisa.tensor_copy_predicated(src=a, dst=res, predicate=pred))py"),
        .example_fix = snippet(R"py(
pred = nl.greater(a, b, dtype=nl.uint8)
nisa.tensor_copy_predicated(src=a, dst=res, predicate=pred))py"),
        .spec = "§5.3 Dtypes; §4.4",
    },
    {
        .code = "nkia_psum_capacity_exceeded",
        .origin = kConstraint,
        .title = "Live PSUM tensors need more than 16 KiB per partition",
        .meaning = "PSUM holds 16 KiB per partition in eight 2 KiB banks, and each matmul accumulation group "
                   "occupies a bank until its result is evicted. The PSUM tensors alive at one point of the kernel "
                   "need more space, or more than eight banks, than exists.",
        .hint = "Evict finished accumulators to SBUF with `nl.copy` promptly, allocate PSUM tiles inside the loop "
                "that uses them rather than all up front, and keep at most eight 2 KiB accumulators alive.",
        .example_bad = snippet(R"py(
acc = nl.zeros((128, 16, 512), nl.float32, buffer=nl.psum)   # 32 KiB per partition
for j in nl.affine_range(16):
    acc[:, j, :] += nisa.nc_matmul(a, b[:, j, :]))py"),
        .example_fix = snippet(R"py(
for j in nl.affine_range(16):
    acc = nl.zeros((128, 512), nl.float32, buffer=nl.psum)   # one 2 KiB bank at a time
    acc += nisa.nc_matmul(a, b[:, j, :])
    res[:, j, :] = nl.copy(acc)                              # evict to SBUF)py"),
        .spec = "§5.3 Shapes; §2.1, §6.4",
    },
    {
        .code = "nkia_psum_tile_exceeds_bank",
        .origin = kConstraint,
        .title = "A PSUM tile for matmul results is larger than one bank",
        .meaning = "A matmul writes its result into a single 2 KiB PSUM bank per partition, so a PSUM tile that "
                   "receives matmul results may hold at most 512 float32 values per partition. A wider tile, or a "
                   "result slice that straddles a bank boundary, is refused.",
        .hint = "Give each 512-column slice of the result its own PSUM tile (`nl.tile_size.psum_fmax` columns at "
                "most) and evict each one to SBUF when its accumulation is done.",
        .example_bad = snippet(R"py(
acc = nl.zeros((128, 1024), nl.float32, buffer=nl.psum)     # 4 KiB per partition
for n in nl.affine_range(2):
    acc[:, n * 512:(n + 1) * 512] += nisa.nc_matmul(a, b[:, n * 512:(n + 1) * 512]))py"),
        .example_fix = snippet(R"py(
for n in nl.affine_range(2):
    acc = nl.zeros((128, 512), nl.float32, buffer=nl.psum)  # one bank
    acc += nisa.nc_matmul(a, b[:, n * 512:(n + 1) * 512])
    res[:, n * 512:(n + 1) * 512] = nl.copy(acc))py"),
        .note = "NeuronCore-v4 can spread one matmul over all eight banks (up to 4096 float32 or 8192 bfloat16 "
                "values per partition). A moving operand wider than 512 is err_size_of_dimension_exceed_arch_limit.",
        .spec = "§5.3 Shapes; §2.3 TC#2, §2.1",
    },
    {
        .code = "nkia_reduce_axes",
        .origin = kConstraint,
        .title = "The reduction axes are not free axes at the end of the tile",
        .meaning = "Engines reduce within each partition, along free axes only; the partition axis (axis 0) "
                   "cannot be reduced this way. `nisa.tensor_reduce` further needs the reduced axes to be "
                   "contiguous and to end at the last axis.",
        .hint = "To reduce across partitions, transpose first, multiply by a ones vector on the Tensor Engine, or "
                "use `nisa.tensor_partition_reduce`; for `tensor_reduce`, reorder the free axes so the reduced "
                "ones come last.",
        .example_bad = snippet(R"py(
s = nl.sum(t, axis=[0])                   # t is [128, 128])py"),
        .example_fix = snippet(R"py(
s = nl.sum(nl.transpose(t), axis=[1])     # what was the partition axis is now free)py"),
        .spec = "§5.3 Shapes; §3.4, §4.4",
    },
    {
        .code = "nkia_sbuf_capacity_exceeded",
        .origin = kConstraint,
        .severity = Severity::kWarning,
        .title = "Live SBUF data exceeds a partition's usable capacity",
        .meaning = "Each SBUF partition has a fixed usable size: 180224 bytes on NeuronCore-v2, 212984 on v3 and "
                   "245752 on v4. When the tiles alive at one point need more than that per partition, the "
                   "compiler spills some of them to HBM and reloads them later. nki-agent warns, once per kernel "
                   "launch, with the peak and the allocation that first went over, and runs the kernel as if the "
                   "tiles fitted.",
        .hint = "Shrink what is alive at once: allocate per-iteration tiles inside the loop body, use smaller "
                "free sizes, reuse buffers, and avoid keeping whole inputs resident in SBUF.",
        .example_bad = snippet(R"py(
t = nl.load(x[0:128, 0:65536])            # float32: 256 KiB per partition)py"),
        .example_fix = snippet(R"py(
for j in nl.affine_range(64):
    t = nl.load(x[0:128, j * 1024:(j + 1) * 1024])   # 4 KiB per partition at a time)py"),
        .spec = "§5.3 Shapes; §2.1, §6.6",
    },
    {
        .code = "nkia_scalar_operand_shape",
        .origin = kConstraint,
        .title = "A per-partition operand is neither a constant nor a [P, 1] tile",
        .meaning = "Operands that are spread along the free axis (those of `nisa.tensor_scalar`, the initial "
                   "value of `tensor_tensor_scan`, the probability of `dropout`, `on_false` of `select_reduce`) "
                   "must each be a compile-time constant or a tile with one element per partition, `[P, 1]`.",
        .hint = "Pass a Python number, or reduce or slice the operand to `[P, 1]` (e.g. "
                "`nl.max(t, axis=[1], keepdims=True)`); when it varies along the free axis, use "
                "`nisa.tensor_tensor` instead.",
        .example_bad = snippet(R"py(
y = nisa.tensor_scalar(t, op0=nl.subtract, operand0=m)   # m is [128, 512])py"),
        .example_fix = snippet(R"py(
m1 = nl.max(m, axis=[1], keepdims=True)                  # [128, 1]
y = nisa.tensor_scalar(t, op0=nl.subtract, operand0=m1))py"),
        .spec = "§5.3 Shapes; §4.4",
    },
    {
        .code = "nkia_stream_shuffle_operands",
        .origin = kConstraint,
        .title = "The nc_stream_shuffle operands break its rules",
        .meaning = "`nisa.nc_stream_shuffle` permutes partitions within each 32-partition quadrant using a mask of "
                   "exactly 32 entries (255 leaves a destination partition as it is). Source and destination need "
                   "the same dtype and the same elements per partition, and start partitions follow the active "
                   "count: 96 or 128 partitions start at 0, 64 at 0 or 64, 32 at 0, 32, 64 or 96.",
        .hint = "Give `shuffle_mask` 32 entries, create the destination with the source's shape and dtype "
                "(`nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.sbuf)`), and start both on an allowed "
                "partition.",
        .spec = "§5.3 Shapes; §4.4",
    },
    {
        .code = "nkia_trace_time_value_read",
        .origin = kSimulator,
        .title = "Kernel code reads the values of a tensor",
        .meaning = "An NKI kernel is traced with its tensors' shapes and dtypes only: the values exist on the "
                   "device, after the launch, and the compiled program cannot depend on them. Kernel code that "
                   "reads values (`t.numpy()`, however the call is spelt or reached) is refused while a kernel "
                   "runs. A host function may read a kernel's results after the launch returns; when the entry "
                   "itself is the kernel (as in `verify`), nothing reads values until the outputs leave the run.",
        .hint = "Compute with `nl` / `nisa` instructions on tiles instead of reading values into Python; "
                "control flow and constants must come from shapes, dtypes and arguments, never from data.",
        .example_bad = snippet(R"py(
scale = float(x.numpy().max())          # reads the input's values
t = nl.multiply(nl.load(x), 1.0 / scale))py"),
        .example_fix = snippet(R"py(
t = nl.load(x)
m = nl.max(nl.abs(t), axis=[1], keepdims=True)
t = nl.divide(t, m))py"),
        .spec = "§1.2; §3.7",
    },
    {
        .code = "nkia_uninitialized_read",
        .origin = kSimulator,
        .severity = Severity::kWarning,
        .title = "Memory is read before anything wrote it",
        .meaning = "An instruction read a tensor (created with `nl.ndarray`) that no instruction had written, or "
                   "combined elements nothing wrote (the tail of a tile a masked load filled only in part) with "
                   "written ones into results that reached an output. On hardware such memory holds stale data; "
                   "the simulator fills it with NaN (4 for integers). Garbage that stays in positions a masked "
                   "store leaves out is harmless and not reported.",
        .hint = "Initialise the tensor (`nl.zeros`, `nisa.memset`) or write all of it before reading, and give "
                "the compute calls the same mask as the load that filled the tile.",
        .example_bad = snippet(R"py(
acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
for i in nl.sequential_range(4):
    acc[...] = nl.add(acc, nl.load(x[i]))   # the first add reads garbage)py"),
        .example_fix = snippet(R"py(
acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.sbuf)
for i in nl.sequential_range(4):
    acc[...] = nl.add(acc, nl.load(x[i])))py"),
        .spec = "§7.2; §3.1",
    },
};

static_assert(part_ok(kPart), "error table: codes must be sorted, unique and well formed, entries complete");

}  // namespace

std::span<const ErrorInfo> constraint_part() {
  return kPart;
}

}  // namespace nki_agent::error_table
