// nki/error_table.cpp — the error table itself: one entry per code, sorted by code.
//
// Everything here is written for nki-agent from the rules in nki-spec.md §2–§5 and §7; none of it
// is copied from AWS documentation. Examples use the legacy dialect with the usual imports
// (`import neuronxcc.nki.language as nl`, `neuronxcc.nki.isa as nisa`, `neuronxcc.nki.typing as
// nt`) and show only the lines that matter; `x`, `out` are HBM tensors, `t` an SBUF tile,
// `i_p = nl.arange(128)[:, None]` and `i_f = nl.arange(F)[None, :]` unless the snippet says otherwise.
//
// The static_asserts at the end keep the table sorted, unique and complete.
#include <algorithm>

#include "nki/error_catalogue.h"

namespace nki_agent {

namespace {

constexpr ErrorOrigin kCatalogue = ErrorOrigin::kCatalogue;
constexpr ErrorOrigin kConstraint = ErrorOrigin::kConstraint;
constexpr ErrorOrigin kSimulator = ErrorOrigin::kSimulator;

// Lets a raw-string snippet start on the line after its opening delimiter.
constexpr std::string_view snippet(std::string_view s) {
  return s.substr(s.starts_with('\n') ? 1 : 0);
}

constexpr ErrorInfo kTable[] = {
    // Sorted by code; the groups (ErrorOrigin) are separated only when rendered.
    {
        .code = "err_1d_arange_not_supported",
        .origin = kCatalogue,
        .title = "A one-dimensional nl.arange is used as an index",
        .meaning = "`nl.arange(n)` on its own is a flat vector of indices, so it does not say which axis of the "
                   "tile it runs along. Used directly in a subscript it is rejected: every index must be at least "
                   "two-dimensional, with its extent on exactly one axis.",
        .hint = "Lift the arange to two dimensions: `nl.arange(n)[:, None]` for the partition (first) index and "
                "`nl.arange(m)[None, :]` for a free index; or index with plain slices such as `x[0:128, 0:512]`.",
        .example_bad = snippet(R"py(
i = nl.arange(128)
j = nl.arange(512)
t = nl.load(x[i, j]))py"),
        .example_fix = snippet(R"py(
i = nl.arange(128)[:, None]
j = nl.arange(512)[None, :]
t = nl.load(x[i, j]))py"),
        .spec = "§5.1 #1; §3.6",
    },
    {
        .code = "err_activation_bias_invalid_type",
        .origin = kCatalogue,
        .title = "The activation bias has an unsupported dtype",
        .meaning = "`nisa.activation` (and the `nl` functions that lower to it) adds the bias once per partition, "
                   "so the bias must be a `[P, 1]` tile holding float32, float16 or bfloat16 values. An integer "
                   "tile such as int8 is refused.",
        .hint = "Convert the bias to a float type before the call, e.g. `nl.load(bias, dtype=nl.float32)` or "
                "`nl.copy(b, dtype=nl.float32)`, and keep its shape `[P, 1]`.",
        .example_bad = snippet(R"py(
b = nl.load(bias_i8)                      # int8 [128, 1]
y = nisa.activation(op=nl.exp, data=t, bias=b))py"),
        .example_fix = snippet(R"py(
b = nl.load(bias_i8, dtype=nl.float32)    # float32 [128, 1]
y = nisa.activation(op=nl.exp, data=t, bias=b))py"),
        .spec = "§5.1 #2; §4.3",
    },
    {
        .code = "err_activation_scale_invalid_type",
        .origin = kCatalogue,
        .title = "The activation scale is not float32",
        .meaning = "The Scalar Engine multiplies by the activation scale in float32. The scale must therefore be a "
                   "float32 constant or a float32 `[P, 1]` tile; a float16, bfloat16 or integer tile is refused.",
        .hint = "Pass the scale as a Python float, or convert the per-partition scale tile to float32 first "
                "(`nl.load(s, dtype=nl.float32)` or `nl.copy(s, dtype=nl.float32)`).",
        .example_bad = snippet(R"py(
s = nl.load(scale_f16)                    # float16 [128, 1]
y = nisa.activation(op=nl.tanh, data=t, scale=s))py"),
        .example_fix = snippet(R"py(
s = nl.load(scale_f16, dtype=nl.float32)  # float32 [128, 1]
y = nisa.activation(op=nl.tanh, data=t, scale=s))py"),
        .spec = "§5.1 #3; §4.3",
    },
    {
        .code = "err_activation_scale_scalar_or_vector",
        .origin = kCatalogue,
        .title = "The activation scale is neither a scalar nor a [P, 1] vector",
        .meaning = "The activation scale is one number for the whole tile or one number per partition, spread "
                   "along the free axis. A full `[P, F]` tile or a row vector `[1, P]` has the wrong shape for "
                   "that and is refused.",
        .hint = "Use a Python float or a `[P, 1]` tile as `scale`. To multiply by a full tile, do it as a "
                "separate `nl.multiply` before the activation; turn a `[1, P]` row into a `[P, 1]` column with "
                "`nl.transpose` first.",
        .example_bad = snippet(R"py(
s = nl.load(scales[0:128, 0:512])         # [128, 512]
y = nisa.activation(op=nl.exp, data=t, scale=s))py"),
        .example_fix = snippet(R"py(
s = nl.load(scales[0:128, 0:512])
y = nisa.activation(op=nl.exp, data=nl.multiply(t, s)))py"),
        .spec = "§5.1 #4; §4.3",
    },
    {
        .code = "err_ambiguous_tensor_truth_value",
        .origin = kCatalogue,
        .title = "A multi-element tensor is used where Python needs True or False",
        .meaning = "`and`, `or`, `not` and a bare `if t:` ask for one truth value, which a tile of many elements "
                   "does not have (and whose data is not known while the kernel is traced). The frontend refuses "
                   "rather than guess.",
        .hint = "For elementwise logic use `&`, `|`, `~` or `nl.logical_and` / `nl.logical_or` / "
                "`nl.logical_not`. To test whether an optional argument was passed, write `if bias is not None:`.",
        .example_bad = snippet(R"py(
m = nl.greater(a, 0.0) and nl.greater(b, 0.0)
if bias:
    t = nl.add(t, nl.load(bias)))py"),
        .example_fix = snippet(R"py(
m = nl.logical_and(nl.greater(a, 0.0), nl.greater(b, 0.0))
if bias is not None:
    t = nl.add(t, nl.load(bias)))py"),
        .spec = "§5.1 #5",
    },
    {
        .code = "err_annotation_shape_mismatch",
        .origin = kCatalogue,
        .title = "A tensor's shape differs from its type annotation",
        .meaning = "A shape annotation such as `t: nt.tensor[128, 512] = ...` is checked against the value that "
                   "is actually assigned. When the two disagree the compiler stops, since one of them is wrong.",
        .hint = "Make the annotation state the real shape (print `t.shape` while tracing if unsure), fix the "
                "expression so it produces the annotated shape, or drop the annotation.",
        .example_bad = snippet(R"py(
t: nt.tensor[128, 512] = nl.load(x[0:128, 0:256]))py"),
        .example_fix = snippet(R"py(
t: nt.tensor[128, 256] = nl.load(x[0:128, 0:256]))py"),
        .spec = "§5.1 #6; §3.1",
    },
    {
        .code = "err_bias_tensor_must_be_specified_in_allocation",
        .origin = kCatalogue,
        .title = "An activation in a direct-allocation kernel has no explicit bias tile",
        .meaning = "When a kernel places its SBUF/PSUM tensors itself (direct allocation), the compiler cannot "
                   "create the hidden zero bias that `nisa.activation` normally gets. Every activation must then "
                   "be given a bias tile, including `nl.exp` and the other `nl` functions that lower to an "
                   "activation.",
        .hint = "Allocate a `[P, 1]` float32 tile with your allocator, fill it with zeros using `nisa.memset`, "
                "and call `nisa.activation(op=..., data=t, bias=zero)` instead of `nl.exp(t)` and friends.",
        .example_bad = snippet(R"py(
y = nl.exp(t)                  # t lives in a hand-allocated SBUF buffer)py"),
        .example_fix = snippet(R"py(
zero = nl.ndarray((128, 1), dtype=nl.float32, buffer=ncc.sbuf.mod_alloc(base_addr=0))
zero[...] = nisa.memset(shape=(128, 1), value=0.0, dtype=nl.float32)
y = nisa.activation(op=nl.exp, data=t, bias=zero))py"),
        .spec = "§5.1 #7; §2.2",
    },
    {
        .code = "err_cannot_assign_to_index",
        .origin = kCatalogue,
        .title = "A value is assigned into an index expression",
        .meaning = "`nl.arange`, `nl.mgrid` and expressions built from them describe index patterns for the "
                   "compiler; they are not data in memory. They can address tensors but cannot be written into.",
        .hint = "If you need the index values as data, materialise them into an SBUF tile with "
                "`nisa.iota(expr, dtype=nl.int32)` and work on that tile; otherwise write into a real tensor.",
        .example_bad = snippet(R"py(
j = nl.arange(512)[None, :]
j[0, 0] = 7)py"),
        .example_fix = snippet(R"py(
j = nl.arange(512)[None, :]
v = nisa.iota(j, dtype=nl.int32)          # [1, 512] SBUF tile holding 0 .. 511
v2 = nl.multiply(v, 2)                    # ordinary data now)py"),
        .spec = "§5.1 #8; §3.6",
    },
    {
        .code = "err_cannot_update_immutable_parameter",
        .origin = kCatalogue,
        .title = "The kernel writes into one of its input tensors",
        .meaning = "Kernel inputs are read-only unless declared otherwise, because the caller still owns their "
                   "buffers. A store, assignment or atomic update aimed at an input parameter is refused.",
        .hint = "Allocate a separate output with `nl.ndarray(shape, dtype, buffer=nl.shared_hbm)`, store into it "
                "and return it. If an in-place update is really intended, annotate the parameter "
                "`nt.mutable_tensor` and return it from the kernel.",
        .example_bad = snippet(R"py(
def kernel(x):
    nl.store(x, value=nl.exp(nl.load(x))))py"),
        .example_fix = snippet(R"py(
def kernel(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.exp(nl.load(x)))
    return out)py"),
        .spec = "§5.1 #9; §1.2",
    },
    {
        .code = "err_control_flow_condition_depending_on_arange",
        .origin = kCatalogue,
        .title = "An if condition depends on nl.arange or nl.mgrid values",
        .meaning = "An index expression stands for many values at once (one per partition or element), so a "
                   "Python `if` over it has no single answer while the kernel is traced. Conditions on index "
                   "values have to be applied per element.",
        .hint = "Move the condition into a `mask=` argument on the loads, stores and compute calls (e.g. "
                "`mask=(i_p < n)`), or rewrite it in terms of Python ints such as loop bounds and shapes.",
        .example_bad = snippet(R"py(
if i_p < n:
    t = nl.load(x[i_p, i_f]))py"),
        .example_fix = snippet(R"py(
t = nl.load(x[i_p, i_f], mask=(i_p < n)))py"),
        .spec = "§5.1 #10; §3.7, §3.8",
    },
    {
        .code = "err_copy_dynamic_indirect_indices_not_natively_supported",
        .origin = kCatalogue,
        .title = "An on-chip copy uses runtime indices through plain assignment",
        .meaning = "Assigning between SBUF/PSUM tiles with an index that is read from a tile at run time cannot "
                   "be lowered to an ordinary copy instruction. Runtime offsets inside on-chip memory need a "
                   "dedicated instruction.",
        .hint = "Use `nisa.tensor_copy_dynamic_src` (runtime offset on the source) or "
                "`nisa.tensor_copy_dynamic_dst` (on the destination); to gather rows from HBM, use `nl.load` "
                "with the index tile on the partition axis instead.",
        .note = "tensor_copy_dynamic_src/dst were removed in NKI 0.4; the new dialect uses "
                "`.ap(scalar_offset=...)` instead.",
        .spec = "§5.1 #11; §4.4",
    },
    {
        .code = "err_dynamic_control_flow_not_supported",
        .origin = kCatalogue,
        .title = "Python control flow depends on a tensor's runtime value",
        .meaning = "The legacy frontend traces the kernel once, taking every `if`, `for` and `while` decision at "
                   "trace time. A condition computed from tensor data is only known when the kernel runs, so it "
                   "cannot steer the trace.",
        .hint = "Compute both outcomes and select per element with `nl.where` (or `nisa.tensor_copy_predicated`); "
                "use `mask=` for conditions on indices; derive loop bounds from shapes and constants only.",
        .example_bad = snippet(R"py(
s = nl.sum(t, axis=[1])                   # [128, 1], known only at run time
if s > 0:
    t = nl.multiply(t, 2.0))py"),
        .example_fix = snippet(R"py(
s = nl.sum(t, axis=[1], keepdims=True)
t = nl.where(nl.greater(s, 0.0), nl.multiply(t, 2.0), t))py"),
        .spec = "§5.1 #12; §3.7",
    },
    {
        .code = "err_exceed_max_supported_dimension",
        .origin = kCatalogue,
        .title = "A tensor has more dimensions than the API accepts",
        .meaning = "Some APIs work on a fixed number of axes: `nl.transpose` takes exactly a 2-D tile, and an "
                   "on-chip access pattern has at most four free axes. A tile with more axes is refused.",
        .hint = "Bring the tile down to the supported rank first: reshape it, or loop over the extra axis and "
                "call the API on each 2-D slice.",
        .example_bad = snippet(R"py(
t = nl.load(x[0:128, 0:4, 0:32])          # [128, 4, 32]
y = nl.transpose(t))py"),
        .example_fix = snippet(R"py(
for j in nl.affine_range(4):
    y = nl.transpose(nl.load(x[0:128, j, 0:32]))   # [32, 128])py"),
        .spec = "§5.1 #13; §2.5, §3.5",
    },
    {
        .code = "err_failed_to_infer_tile_from_local_tensor",
        .origin = kCatalogue,
        .title = "A compute API gets a tensor whose partition axis is not first",
        .meaning = "Compute APIs take tiles: on-chip tensors whose first axis is the partition axis. A tensor "
                   "declared with leading block axes, such as `(4, nl.par_dim(128), 512)`, is not a tile until "
                   "one block is selected.",
        .hint = "Index the tensor down to a tile before the call (`nl.exp(buf[i])` for block `i`). Better still, "
                "declare it with the partition axis first, `(128, 4, 512)`, since block axes are deprecated.",
        .example_bad = snippet(R"py(
buf = nl.ndarray((4, nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.sbuf)
y = nl.exp(buf))py"),
        .example_fix = snippet(R"py(
buf = nl.ndarray((4, nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.sbuf)
for i in nl.affine_range(4):
    y = nl.exp(buf[i])                    # tile [128, 512])py"),
        .spec = "§5.1 #14; §2.3",
    },
    {
        .code = "err_hbm_tensor_with_init_value_not_supported",
        .origin = kCatalogue,
        .title = "nl.zeros, nl.ones or nl.full asks for an HBM tensor",
        .meaning = "Creation functions that fill in a value work only for on-chip buffers. A tensor in device "
                   "memory (HBM) cannot be created already filled.",
        .hint = "Create the HBM tensor with `nl.ndarray(..., buffer=nl.shared_hbm)`, build the values in an SBUF "
                "tile (`nl.zeros(..., buffer=nl.sbuf)`) and write them with `nl.store`.",
        .example_bad = snippet(R"py(
out = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.shared_hbm))py"),
        .example_fix = snippet(R"py(
out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
nl.store(out, value=nl.zeros((128, 512), dtype=nl.float32, buffer=nl.sbuf)))py"),
        .spec = "§5.1 #15; §3.1",
    },
    {
        .code = "err_indirect_indices_are_not_supported_with_nki_api",
        .origin = kCatalogue,
        .title = "An API that needs static addresses gets runtime indices",
        .meaning = "Some data-movement APIs, `nl.load_transpose2d` and `nisa.dma_transpose` among them, only "
                   "work with addresses known at compile time. Indexing their source with an index tile read at "
                   "run time is refused.",
        .hint = "Gather the rows first with `nl.load` and the index tile on the partition axis, then transpose on "
                "chip with `nl.transpose` or `nisa.nc_transpose`.",
        .example_bad = snippet(R"py(
idx = nl.load(rows)                       # int32 [128, 1]
t = nl.load_transpose2d(x[idx[i_p, 0], i_f]))py"),
        .example_fix = snippet(R"py(
idx = nl.load(rows)
g = nl.load(x[idx[i_p, 0], i_f])          # gathered rows [128, F], F <= 128
t = nl.transpose(g))py"),
        .spec = "§5.1 #16; §3.2",
    },
    {
        .code = "err_indirect_indices_free_dim",
        .origin = kCatalogue,
        .title = "A runtime (indirect) index is used on a free dimension",
        .meaning = "A load or store may pick rows with indices read from a tile at run time, but only along the "
                   "partition (or block) dimension; addresses along free axes must be static. The same error "
                   "appears when the index grid was built with `nl.mgrid` rather than `nl.arange`.",
        .hint = "Put the index tile in the first (partition) position, `x[idx[i_p, 0], i_f]`. To gather along a "
                "free axis, lay the data out transposed so that axis becomes the partition axis, or gather on "
                "chip with `nl.gather_flattened`. Build index grids with `nl.arange`.",
        .example_bad = snippet(R"py(
t = nl.load(x[i_p, idx[i_p, 0]]))py"),
        .example_fix = snippet(R"py(
t = nl.load(xT[idx[i_p, 0], i_f])         # same gather with the data transposed)py"),
        .spec = "§5.1 #17; §3.2, §3.6",
    },
    {
        .code = "err_leading_dimension_of_tensor_must_be_partition",
        .origin = kCatalogue,
        .title = "An on-chip tensor has block dimensions before the partition dimension",
        .meaning = "Legacy NKI let SBUF/PSUM tensors carry leading block axes, with `nl.par_dim` marking the "
                   "partition axis. That form is deprecated: the partition dimension must be the first axis.",
        .hint = "Put the partition dimension first and fold the block axis into the free axes, e.g. "
                "`(128, 4, 512)` instead of `(4, nl.par_dim(128), 512)`, and index a block as `buf[:, i, :]`; or "
                "allocate one tile per iteration inside the loop.",
        .example_bad = snippet(R"py(
buf = nl.ndarray((4, nl.par_dim(128), 512), dtype=nl.bfloat16, buffer=nl.sbuf))py"),
        .example_fix = snippet(R"py(
buf = nl.ndarray((128, 4, 512), dtype=nl.bfloat16, buffer=nl.sbuf))py"),
        .spec = "§5.1 #18; §2.3",
    },
    {
        .code = "err_local_variable_used_out_of_scope",
        .origin = kCatalogue,
        .title = "A tensor created inside an if or for block is used after the block",
        .meaning = "A tensor created inside a loop or branch body belongs to that block, and its memory may be "
                   "reused once the block ends, so reading it afterwards is refused. Rebinding a name inside a "
                   "loop (`acc = nl.add(acc, ...)`) creates such a block-local tensor instead of updating the "
                   "outer one.",
        .hint = "Create the tensor before the block and write into it with slice assignment inside the block "
                "(`acc[...] = ...` or `acc[...] += ...`); it is then still valid after the block.",
        .example_bad = snippet(R"py(
acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.sbuf)
for i in nl.sequential_range(4):
    acc = nl.add(acc, nl.load(x[i]))
nl.store(out, value=acc))py"),
        .example_fix = snippet(R"py(
acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.sbuf)
for i in nl.sequential_range(4):
    acc[...] = nl.add(acc, nl.load(x[i]))
nl.store(out, value=acc))py"),
        .spec = "§5.1 #19; §3.7",
    },
    {
        .code = "err_mutable_parameter_not_returned",
        .origin = kCatalogue,
        .title = "A written nt.mutable_tensor parameter is not returned",
        .meaning = "Annotating a parameter `nt.mutable_tensor` allows the kernel to update it in place, but the "
                   "framework only sees the update when the kernel hands the tensor back. A mutable parameter "
                   "that is written must be among the returned values.",
        .hint = "Return the parameter from the kernel, alone or in a tuple with the other outputs "
                "(`return out, state`).",
        .example_bad = snippet(R"py(
def kernel(x, state: nt.mutable_tensor):
    nl.store(state, value=nl.load(x)))py"),
        .example_fix = snippet(R"py(
def kernel(x, state: nt.mutable_tensor):
    nl.store(state, value=nl.load(x))
    return state)py"),
        .spec = "§5.1 #20; §1.2",
    },
    {
        .code = "err_nested_kernel_with_spmd_grid",
        .origin = kCatalogue,
        .title = "A kernel is launched with an SPMD grid from inside another kernel",
        .meaning = "A kernel may call helpers and other kernels, which are inlined into it, but a launch grid "
                   "(`kernel[g](...)`) exists only for the top-level call from the host. Inside a kernel there is "
                   "no second grid to launch.",
        .hint = "Call the inner kernel without a grid so that it is inlined, and cover what the grid covered "
                "with an `nl.affine_range` loop; or launch the inner kernel from the host.",
        .example_bad = snippet(R"py(
@nki.jit
def outer(x):
    return inner[4](x))py"),
        .example_fix = snippet(R"py(
@nki.jit
def outer(x):
    return inner(x)          # inner loops over its 4 blocks with nl.affine_range(4))py"),
        .spec = "§5.1 #21; §1.2",
    },
    {
        .code = "err_nki_api_outside_of_nki_kernel",
        .origin = kCatalogue,
        .title = "An NKI API is called outside a kernel",
        .meaning = "`nl` and `nisa` functions build device instructions and only mean something while a kernel "
                   "is being traced. Calling them from ordinary host code (module level, test code) is refused.",
        .hint = "Move the call into a function decorated with `@nki.jit` or a helper called from one; on the host "
                "side, prepare inputs and check outputs with NumPy.",
        .example_bad = snippet(R"py(
ones = nl.ones((128, 1), dtype=nl.float32)     # at module level)py"),
        .example_fix = snippet(R"py(
ones = np.ones((128, 1), dtype=np.float32)     # host data: NumPy)py"),
        .spec = "§5.1 #22",
    },
    {
        .code = "err_num_partition_exceed_arch_limit",
        .origin = kCatalogue,
        .title = "A tile spans more than 128 partitions",
        .meaning = "SBUF and PSUM have 128 partitions, so the first axis of every on-chip tile is at most 128 "
                   "long. The same limit applies to the contraction size K of a matmul, which lies on the "
                   "partition axis of both inputs.",
        .hint = "Split the first axis into chunks of at most 128 (`nl.tile_size.pmax`) and loop over them; mask a "
                "ragged last chunk. For a matmul with K > 128, accumulate over K chunks with `+=` into one PSUM "
                "tile.",
        .example_bad = snippet(R"py(
t = nl.load(x[0:256, 0:512]))py"),
        .example_fix = snippet(R"py(
for i in nl.affine_range(2):
    t = nl.load(x[i * 128:(i + 1) * 128, 0:512]))py"),
        .spec = "§5.1 #23; §2.3 TC#1, §5.3",
    },
    {
        .code = "err_num_partition_mismatch",
        .origin = kCatalogue,
        .title = "The operands of one instruction span different numbers of partitions",
        .meaning = "Engines work on all partitions in lockstep, one lane per partition, so the operands of an "
                   "elementwise instruction must span the same number of partitions, and so must the K axes of a "
                   "matmul's two inputs. At the ISA level a `[1, F]` operand is not spread over 128 partitions "
                   "by itself.",
        .hint = "Make the partition counts equal: broadcast the smaller operand with "
                "`nl.broadcast_to(t, shape=(128, F))` (or load it with the larger partition count), or slice the "
                "larger one down.",
        .example_bad = snippet(R"py(
a = nl.load(x[0:128, 0:512])
b = nl.load(y[0:1, 0:512])
c = nisa.tensor_tensor(a, b, op=nl.add))py"),
        .example_fix = snippet(R"py(
a = nl.load(x[0:128, 0:512])
b = nl.broadcast_to(nl.load(y[0:1, 0:512]), shape=(128, 512))
c = nisa.tensor_tensor(a, b, op=nl.add))py"),
        .spec = "§5.1 #24; §4.2, §4.4, §5.3",
    },
    {
        .code = "err_read_modify_write_on_kernel_parameter",
        .origin = kCatalogue,
        .title = "A kernel parameter is loaded, modified and stored back",
        .meaning = "SDK 2.20 did not allow a kernel to update one of its parameters in place: loading from a "
                   "parameter and later storing into that same parameter was refused. SDK 2.21 replaced the rule "
                   "with mutable parameters, and the code left the catalogue.",
        .hint = "Read from the input parameter and write the result to a separate output. Where an in-place "
                "update is really needed (SDK 2.21 and later, and nki-agent), annotate the parameter "
                "`nt.mutable_tensor` and return it.",
        .example_bad = snippet(R"py(
def kernel(x, y):                         # y is both read and written
    nl.store(y, value=nl.add(nl.load(y), nl.load(x))))py"),
        .example_fix = snippet(R"py(
def kernel(x, y, out):
    nl.store(out, value=nl.add(nl.load(y), nl.load(x))))py"),
        .note = "SDK 2.20 only: dropped from the catalogue in SDK 2.21, when nt.mutable_tensor arrived. "
                "nki-agent reports the same mistake as err_cannot_update_immutable_parameter.",
        .spec = "§5.1 #37",
    },
    {
        .code = "err_shared_hbm_must_in_kernel_level",
        .origin = kCatalogue,
        .title = "A shared_hbm tensor is created below the kernel's top level",
        .meaning = "A tensor in `nl.shared_hbm` is visible to every SPMD instance and usually is a kernel "
                   "output, so it must be created exactly once, in the kernel's own body, not inside a loop, a "
                   "branch or a helper function.",
        .hint = "Move the `nl.ndarray(..., buffer=nl.shared_hbm)` call to the top level of the kernel body, make "
                "it large enough for all iterations, and index it inside the loop or pass it to helpers.",
        .example_bad = snippet(R"py(
for i in nl.affine_range(4):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(x[i])))py"),
        .example_fix = snippet(R"py(
out = nl.ndarray((4, 128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
for i in nl.affine_range(4):
    nl.store(out[i], value=nl.load(x[i])))py"),
        .spec = "§5.1 #25; §1.3",
    },
    {
        .code = "err_size_of_dimension_exceed_arch_limit",
        .origin = kCatalogue,
        .title = "An axis is longer than the API's hardware limit",
        .meaning = "Besides the 128-partition limit, many APIs cap particular axes because of the engine that "
                   "runs them: `nl.transpose` and Tensor Engine transposes take at most 128 on each axis (32 on "
                   "the Vector Engine), a matmul's stationary free size is at most 128 and its moving free size "
                   "at most 512, and `bn_stats` reads at most 512 elements per partition. Vector and Scalar "
                   "Engine instructions read at most 64K elements per partition from SBUF and 4K from PSUM.",
        .hint = "Tile the axis named in the message: loop over chunks no longer than its limit and combine the "
                "results (transpose a `[128, 512]` tile as four `[128, 128]` blocks; compute a matmul with N > "
                "512 in 512-wide slices of the moving operand).",
        .example_bad = snippet(R"py(
t = nl.load(x[0:128, 0:512])
y = nl.transpose(t))py"),
        .example_fix = snippet(R"py(
for j in nl.affine_range(4):
    y = nl.transpose(nl.load(x[0:128, j * 128:(j + 1) * 128]))   # [128, 128])py"),
        .note = "NeuronCore-v4 raises the moving free size to 4096 (float32 result) or 8192 (bfloat16 result). "
                "max8 / nc_find_index8 / nc_match_replace8 (16384 elements per partition) and local_gather "
                "(4096 indices per core) report their upper limits with this code too.",
        .spec = "§5.1 #26; §2.3 TC#3, §2.5, §4.2, §4.4, §5.3",
    },
    {
        .code = "err_store_dst_shape_smaller_than_other_shape",
        .origin = kCatalogue,
        .title = "An assignment's destination is smaller than the value",
        .meaning = "Slice assignment `a[...] = b` writes into existing storage. It may broadcast a smaller value "
                   "up to the destination, but never shrink a larger one, because that would drop data.",
        .hint = "Make the destination slice as large as the value, or reduce or slice the value first (e.g. "
                "`nl.sum(b, axis=[1], keepdims=True)` when a one-column result was meant).",
        .example_bad = snippet(R"py(
a = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
a[...] = b                                # b is [128, 512])py"),
        .example_fix = snippet(R"py(
a = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
a[...] = nl.sum(b, axis=[1], keepdims=True))py"),
        .spec = "§5.1 #27; §3.11",
    },
    {
        .code = "err_tensor_access_out_of_bound",
        .origin = kCatalogue,
        .title = "A static index range runs past the end of a tensor",
        .meaning = "Every static index range is known while the kernel is traced and is checked against the "
                   "tensor's shape; reading rows 0..4095 of a 4000-row tensor is an error even if only the last "
                   "loop iteration overshoots. Indices read from tiles at run time are checked only when the "
                   "kernel runs (nkia_indirect_index_out_of_bounds).",
        .hint = "Mask the ragged last tile, e.g. `nl.load(x[i_p, i_f], mask=(i_p < n))` with the same mask on the "
                "compute and store calls, and check loop bounds and slice ends for off-by-one errors.",
        .example_bad = snippet(R"py(
for k in nl.affine_range((n + 127) // 128):
    i_p = k * 128 + nl.arange(128)[:, None]
    t = nl.load(x[i_p, i_f]))py"),
        .example_fix = snippet(R"py(
for k in nl.affine_range((n + 127) // 128):
    i_p = k * 128 + nl.arange(128)[:, None]
    t = nl.load(x[i_p, i_f], mask=(i_p < n)))py"),
        .spec = "§5.1 #28; §3.6, §3.8",
    },
    {
        .code = "err_tensor_creation_on_scratchpad_with_init_value_not_supported",
        .origin = kCatalogue,
        .title = "nl.zeros or nl.full creates an SBUF/PSUM tensor in a direct-allocation kernel",
        .meaning = "When the kernel places its on-chip tensors itself, creation functions that also fill in a "
                   "value are unavailable: the compiler does not insert the fill for a buffer it did not "
                   "allocate.",
        .hint = "Create the buffer with `nl.ndarray(..., buffer=<your allocation>)` and fill it explicitly with "
                "`nisa.memset` (or a copy) before its first use.",
        .example_bad = snippet(R"py(
acc = nl.zeros((128, 512), dtype=nl.float32, buffer=ncc.psum.mod_alloc(base_bank=0)))py"),
        .example_fix = snippet(R"py(
acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=ncc.psum.mod_alloc(base_bank=0))
acc[...] = nisa.memset(shape=(128, 512), value=0.0, dtype=nl.float32))py"),
        .note = "Older SDKs call it err_tensor_creation_on_scratchpad_with_init_value_not_allowed.",
        .spec = "§5.1 #29; §2.2",
    },
    {
        .code = "err_tensor_output_not_written_to",
        .origin = kCatalogue,
        .title = "An output tensor is never written",
        .meaning = "Every tensor the kernel returns (every output parameter, in the old style) must be stored to "
                   "at least once, and a kernel must have at least one output. A frequent cause is a loop that "
                   "runs zero times, such as `nl.affine_range(M // 128)` when M < 128.",
        .hint = "Compute trip counts with ceiling division, `(M + 127) // 128`, and mask the last tile; make sure "
                "each returned tensor is stored to; return the output tensor from the kernel.",
        .example_bad = snippet(R"py(
out = nl.ndarray((M, F), dtype=x.dtype, buffer=nl.shared_hbm)
for k in nl.affine_range(M // 128):       # zero trips when M < 128
    nl.store(out[k * 128:(k + 1) * 128, :], value=nl.load(x[k * 128:(k + 1) * 128, :]))
return out)py"),
        .example_fix = snippet(R"py(
out = nl.ndarray((M, F), dtype=x.dtype, buffer=nl.shared_hbm)
for k in nl.affine_range((M + 127) // 128):
    i_p = k * 128 + nl.arange(128)[:, None]
    nl.store(out[i_p, i_f], value=nl.load(x[i_p, i_f], mask=(i_p < M)), mask=(i_p < M))
return out)py"),
        .spec = "§5.1 #30; §1.2",
    },
    {
        .code = "err_transpose_on_tensor_engine_not_allowed_in_allocated_kernel",
        .origin = kCatalogue,
        .title = "A Tensor Engine transpose is used in a direct-allocation kernel",
        .meaning = "A transpose on the Tensor Engine is a matmul against an identity matrix that the compiler "
                   "normally provides. In a kernel that allocates its own buffers it cannot, so "
                   "`nisa.nc_transpose` on the Tensor Engine and `nl.matmul(..., transpose_x=False)`, which hides "
                   "such a transpose, are refused.",
        .hint = "Pass the left operand already transposed with `nl.matmul(xT, y, transpose_x=True)`; transpose "
                "with your own identity tile via `nisa.nc_matmul(x, identity)`; or use "
                "`nisa.nc_transpose(t, engine=nisa.vector_engine)` for tiles up to 32x32.",
        .example_bad = snippet(R"py(
acc[...] = nl.matmul(a, b)                # transpose_x=False: hidden PE transpose of a)py"),
        .example_fix = snippet(R"py(
acc[...] = nl.matmul(aT, b, transpose_x=True)   # aT holds a transposed, [K, M])py"),
        .spec = "§5.1 #31; §3.5, §4.2",
    },
    {
        .code = "err_unexpected_output_dependencies",
        .origin = kCatalogue,
        .title = "Iterations of an affine_range loop write the same location",
        .meaning = "`nl.affine_range` tells the compiler that iterations are independent, so it may reorder or "
                   "overlap them. If two iterations (or two SPMD instances) write the same address, the result "
                   "would depend on that order, so the kernel is refused. Accumulating into one tile with `+=` is "
                   "the allowed exception.",
        .hint = "Give each iteration its own slot by indexing the write with the loop variable (`buf[:, i, :]`, "
                "`out[i * 128:(i + 1) * 128, :]`), accumulate with `+=`, or use `nl.sequential_range` when the "
                "iterations really must run in order.",
        .example_bad = snippet(R"py(
for i in nl.affine_range(4):
    buf[0:128, 0:512] = nl.load(x[i]))py"),
        .example_fix = snippet(R"py(
for i in nl.affine_range(4):
    buf[0:128, i, 0:512] = nl.load(x[i])  # buf is [128, 4, 512])py"),
        .spec = "§5.1 #32; §3.7, §5.3",
    },
    {
        .code = "err_unsupported_expression_in_mask",
        .origin = kCatalogue,
        .title = "A mask is not an affine condition on static indices",
        .meaning = "Masks are turned into fixed instruction ranges at compile time. They may only compare affine "
                   "expressions of `nl.arange` indices, loop variables and program ids (constants times "
                   "indices, plus constants) with constants, joined with `&`. Runtime tensor values and "
                   "operations such as `i % 4` or `i * i` cannot become ranges.",
        .hint = "Rewrite the condition as comparisons of affine index expressions joined with `&`, e.g. "
                "`(i_p < n) & (i_f >= 8)`. For periodic patterns index the wanted elements directly (`2 * j` "
                "for even columns); for data-dependent selection use `nl.where`.",
        .example_bad = snippet(R"py(
y = nl.exp(t, mask=(i_f % 2 == 0))        # even columns only)py"),
        .example_fix = snippet(R"py(
j = nl.arange(F // 2)[None, :]
y = nl.exp(nl.load(x[i_p, 2 * j]))        # load the even columns instead)py"),
        .spec = "§5.1 #33; §3.8",
    },
    {
        .code = "err_unsupported_memory",
        .origin = kCatalogue,
        .title = "An operand is in a memory the API does not accept",
        .meaning = "Each API reads and writes fixed memories: `nl.load` moves HBM to SBUF and `nl.store` SBUF to "
                   "HBM; compute APIs take SBUF or PSUM tiles, never HBM; `nc_matmul` and Tensor Engine "
                   "transposes read SBUF and write PSUM; GpSimd instructions (iota, affine_select, local_gather, "
                   "power, integer arithmetic, partition reductions) cannot touch PSUM.",
        .hint = "Move the data first: `nl.load` an HBM tensor into SBUF before computing on it, `nl.copy` a PSUM "
                "result into SBUF before storing it or feeding it to a GpSimd instruction, and write HBM only "
                "through `nl.store`.",
        .example_bad = snippet(R"py(
y = nl.exp(x)                             # x is the kernel's HBM input)py"),
        .example_fix = snippet(R"py(
y = nl.exp(nl.load(x)))py"),
        .note = "The legacy nl.store of a PSUM tile inserts the copy to SBUF itself (SDK 2.26); from NKI 0.3 a "
                "DMA from PSUM is this error.",
        .spec = "§5.1 #34; §2.1, §5.3",
    },
    {
        .code = "err_unsupported_mixing_basic_advanced_tensor_indexing",
        .origin = kCatalogue,
        .title = "Slices and index expressions are mixed in one subscript",
        .meaning = "One subscript either slices (`0:128`, `:`) or uses `nl.arange` / `nl.mgrid` expressions, "
                   "not both. `a[i, :]` with `i = nl.arange(4)[:, None]` combines the two styles and is refused.",
        .hint = "Use one style for every axis: `a[i, nl.arange(F)[None, :]]` (index expressions throughout) or "
                "`a[0:4, :]` (slices throughout).",
        .example_bad = snippet(R"py(
i = nl.arange(4)[:, None]
t = nl.load(a[i, :]))py"),
        .example_fix = snippet(R"py(
i = nl.arange(4)[:, None]
j = nl.arange(a.shape[1])[None, :]
t = nl.load(a[i, j]))py"),
        .spec = "§5.1 #35; §3.6",
    },
    {
        .code = "err_while_loop_requires_unconditional_entry",
        .origin = kCatalogue,
        .title = "A runtime while loop may skip its first iteration",
        .meaning = "Loops on runtime values exist only in do-while form: the body always runs once, and a "
                   "condition computed at the end of the body decides whether it runs again. A classic "
                   "`while cond:` whose body may never run cannot be expressed.",
        .hint = "Restructure as do-while: enter the loop unconditionally, compute the continue-condition from a "
                "`[1, 1]` tile at the end of the body, and make the body harmless (masked or selected with "
                "`nl.where`) for the case where no work is needed.",
        .spec = "§5.1 #36; §3.7",
    },
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
        .code = "nkia_feature_not_on_target",
        .origin = kConstraint,
        .title = "The instruction or mode is not available on the target NeuronCore",
        .meaning = "NeuronCore generations differ. v2 (trn1, inf2) lacks hardware DMA descriptor generation, a "
                   "scalar activation bias, `tensor_scalar` add/multiply on the Scalar Engine, the bit-exact "
                   "transpose mode and `range_select`; double-row FP8 matmul and 2/4-byte `dma_transpose` need v3 "
                   "(trn2); MX matmul, bfloat16 PSUM results, moving free sizes above 512, tensor indirection, "
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

// ---- Static checks ------------------------------------------------------------------------------

constexpr bool well_formed(std::string_view code, ErrorOrigin origin) {
  std::string_view rest;
  if (code.starts_with("err_")) {
    if (origin != kCatalogue) return false;
    rest = code.substr(4);
  } else if (code.starts_with("nkia_")) {
    if (origin == kCatalogue) return false;
    rest = code.substr(5);
  } else {
    return false;
  }
  if (rest.empty()) return false;
  return std::all_of(rest.begin(), rest.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; });
}

constexpr bool table_ok() {
  for (size_t i = 0; i < std::size(kTable); ++i) {
    const ErrorInfo& e = kTable[i];
    if (!well_formed(e.code, e.origin)) return false;
    if (i > 0 && !(kTable[i - 1].code < e.code)) return false;  // sorted and unique
    if (e.title.empty() || e.meaning.empty() || e.hint.empty() || e.spec.empty()) return false;
    if (e.example_bad.empty() != e.example_fix.empty()) return false;
  }
  return true;
}

static_assert(table_ok(), "error table: codes must be sorted, unique and well formed, entries complete");

}  // namespace

std::span<const ErrorInfo> error_catalogue() {
  return kTable;
}

}  // namespace nki_agent
