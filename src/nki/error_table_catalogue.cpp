// nki/error_table_catalogue.cpp — the error table's NKI compiler codes (`err_*`, nki-spec §5.1).
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
        .meaning = "In the legacy dialect (neuronxcc.nki), the inputs of a kernel that returns its outputs are "
                   "read-only unless declared otherwise, because the caller still owns their buffers. A store, "
                   "assignment or atomic update aimed at such an input is refused. The current dialect (import "
                   "nki) updates inputs in place.",
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
        .not_raised = "SDK 2.20 only: nki-agent follows SDK 2.21 and later, which report the mistake as "
                      "err_cannot_update_immutable_parameter.",
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
};

static_assert(part_ok(kPart), "error table: codes must be sorted, unique and well formed, entries complete");

}  // namespace

std::span<const ErrorInfo> catalogue_part() {
  return kPart;
}

}  // namespace nki_agent::error_table
