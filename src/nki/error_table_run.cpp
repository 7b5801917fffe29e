// nki/error_table_run.cpp — the error table's codes for a kernel as a program: the front end's
// own checks of names, operands, indices and shapes (constraint), how the kernel's Python ran
// (runtime), and verify's checks of its results with the static policy over its source (verify).
//
// The verify codes are built at run time as `nkia_verify_<check>` (tasks/verify.cpp, with the
// checks of tasks/compare.cpp) and `nkia_policy_<rule>` (tasks/static_policy.cpp, with the rules of
// tasks/py/static_policy.py): every check and rule that can be produced has its entry here.
//
// Sorted by code; the static_assert at the end keeps the part sorted, unique and complete
// (nki/error_table.h).
#include "nki/error_table.h"

namespace nki_agent::error_table {

namespace {

constexpr ErrorInfo kPart[] = {
    {
        .code = "nkia_bad_index",
        .origin = kConstraint,
        .title = "A subscript or index tile is malformed",
        .meaning = "A subscript must be made of integers, slices with a positive step, `nl.arange` index tiles "
                   "(lifted to two dimensions) and affine expressions of loop variables. Something else was "
                   "used: non-integer arange bounds, an index tile reshaped other than with `[:, None]` / "
                   "`[None, :]`, an operator NKI cannot express on indices (such as `%`), or a tile of values "
                   "used as an index outside an indirect DMA.",
        .hint = "Index with integers, slices and affine expressions of `nl.arange` and loop variables; move "
                "data-dependent indexing to an indirect DMA (`nl.load(x[ids_tile, ...])`) or compute it with masks.",
        .example_bad = snippet(R"py(
i_p = nl.arange(128)[:, None]
t = nl.load(x[i_p % 2, i_f]))py"),
        .example_fix = snippet(R"py(
i_p = nl.arange(64)[:, None]
t = nl.load(x[i_p * 2, i_f]))py"),
        .spec = "§3.6; §3.8",
    },
    {
        .code = "nkia_bad_input_name",
        .origin = kRuntime,
        .title = "An input is named after no parameter of the entry",
        .meaning = "Inputs bind to the entry's parameters by name (the .npy file's name, or the name in "
                   "`--shapes` / `--random`). Some inputs were named after parameters and this one was not, so it "
                   "cannot be bound.",
        .hint = "Name every input after a parameter of the entry, or none of them (they then bind by position).",
    },
    {
        .code = "nkia_bad_kernel_value",
        .origin = kRuntime,
        .title = "A kernel takes or returns a value nki-agent cannot convert",
        .meaning = "A kernel's inputs and outputs cross between the kernel host and the caller as arrays of the "
                   "NKI dtypes. The entry returned something else (a Python object, an array of an unsupported "
                   "dtype such as float64 or complex, an object array).",
        .hint = "Return NKI tensors (or NumPy arrays of 8-, 16- or 32-bit types), one per output, as a tuple when "
                "there are several.",
    },
    {
        .code = "nkia_bad_launch",
        .origin = kRuntime,
        .title = "A kernel is launched in a way NKI does not allow",
        .meaning = "A `@nki.jit` kernel was called with a malformed SPMD grid (`kernel[2, 2](...)` takes positive "
                   "integers, at most four of them), launched from inside another launch, or given arguments its "
                   "decorator cannot bind.",
        .hint = "Launch the kernel from host code with a grid of positive integers, and call helper functions (not "
                "other `@nki.jit` kernels) from inside a kernel.",
    },
    {
        .code = "nkia_bad_operand",
        .origin = kConstraint,
        .title = "An argument of an NKI call has the wrong kind of value",
        .meaning = "An `nl` or `nisa` call got a Python value it cannot use where it needs a tile, a number or a "
                   "structured argument: a list where a tile belongs, a call with no tile operand at all, an "
                   "`address=` that is not a (partition, byte offset) pair, and the like. The message names the "
                   "argument and what it got.",
        .hint = "Pass tiles (loaded or computed on chip) where the API takes tiles and Python numbers where it "
                "takes scalars; see the API's signature in nki-spec §3–§4 or `lookup` it.",
        .spec = "§3; §4",
    },
    {
        .code = "nkia_bad_shape",
        .origin = kConstraint,
        .title = "A reshape, permutation or broadcast view is impossible",
        .meaning = "A view asks for a shape the tensor cannot take: a reshape to a different number of elements, a "
                   "permutation that is not one of the axes, a broadcast between shapes that do not broadcast, or "
                   "a view that moves the partition dimension of an SBUF or PSUM tile (partitions are physical "
                   "rows: only a transpose instruction moves data between them).",
        .hint = "Keep the element count in reshapes and the partition axis first on chip; transpose with "
                "`nisa.nc_transpose` / `nl.transpose` instead of reshaping across partitions.",
        .spec = "§2.3; §3.10",
    },
    {
        .code = "nkia_entry_not_found",
        .origin = kRuntime,
        .title = "The kernel file has no function of the entry's name",
        .meaning = "The file was loaded, but it defines no callable with the name given as the entry (`--entry`, "
                   "or the task's kernel name). The hint lists the functions the file does define.",
        .hint = "Give the name of the kernel function with `--entry NAME`, or define that function in the file.",
    },
    {
        .code = "nkia_inputs_bound_by_position",
        .origin = kRuntime,
        .severity = Severity::kNote,
        .title = "The inputs were bound to the entry's parameters by position",
        .meaning = "No input was named after a parameter of the entry, so the inputs were passed in the order "
                   "given. The note lists which input went to which parameter, in case the order was not meant.",
        .hint = "Name the inputs after the entry's parameters to bind them by name.",
    },
    {
        .code = "nkia_internal",
        .origin = kRuntime,
        .title = "An internal error in nki-agent (not a problem with your kernel)",
        .meaning = "nki-agent's C++ core failed one of its own invariants, or a library it uses failed, while it ran "
                   "an instruction of the kernel. This is a bug in nki-agent, not in the kernel: the command exits "
                   "with code 3. The message says what failed and where the kernel was when it happened.",
        .hint = "This is a bug in nki-agent, not in your kernel: please report it with the kernel and the command "
                "line. Until it is fixed, writing the failing instruction differently may avoid it.",
    },
    {
        .code = "nkia_internal_python",
        .origin = kRuntime,
        .title = "The embedded Python of the kernel host failed",
        .meaning = "The kernel host could not start its Python interpreter, or the interpreter failed outside the "
                   "kernel's own code. This is not caused by the kernel: the installation (python3.11 with NumPy) "
                   "is broken, or nki-agent has a bug.",
        .hint = "Check that python3.11 and python3-numpy are installed; if they are, please report it as a bug.",
    },
    {
        .code = "nkia_module_unavailable",
        .origin = kRuntime,
        .title = "The kernel imports a module the sandbox does not provide",
        .meaning = "Kernels run with NumPy, the NKI modules, a list of pure standard-library modules and their "
                   "own files. Other modules (the file system, processes, networking, native extensions) cannot "
                   "be imported; frameworks such as torch are present only as stand-ins that fail when used.",
        .hint = "Compute with NKI (and NumPy in host code) only; keep helper code in the kernel's own files.",
    },
    {
        .code = "nkia_policy_host_math",
        .origin = kVerify,
        .title = "The kernel computes its result with host math instead of NKI",
        .meaning = "The static policy found NumPy (or Python) math on the data where the task expects NKI "
                   "instructions: a result computed on the host does not measure the kernel and does not run on a "
                   "NeuronCore.",
        .hint = "Compute the outputs with `nl` / `nisa` instructions on tiles; keep NumPy for shapes and constants.",
    },
    {
        .code = "nkia_policy_introspection",
        .origin = kVerify,
        .title = "The kernel inspects or rewrites Python itself",
        .meaning = "The static policy refuses kernels that reach into the interpreter (frames, `globals()`, "
                   "`getattr` on modules by computed names, `exec`, `eval`, `__import__`, …): such code can reach "
                   "the reference or the checker instead of computing.",
        .hint = "Write plain kernel code: call NKI functions by name and pass data through arguments.",
    },
    {
        .code = "nkia_policy_precision_drop",
        .origin = kVerify,
        .title = "The kernel uses a dtype the task forbids",
        .meaning = "The task fixes the precision the kernel must keep (for example, no bfloat16 or float8 in a "
                   "float32 task), and the kernel names one of the forbidden dtypes: computing at lower precision "
                   "would pass tolerances by luck or trade accuracy the task does not allow.",
        .hint = "Compute in the task's dtypes (see its task.toml); cast only where the task allows it.",
    },
    {
        .code = "nkia_policy_reference_access",
        .origin = kVerify,
        .title = "The kernel reaches for the task's reference",
        .meaning = "The static policy found the kernel reading the task's reference (task.py, its Model, or the "
                   "reference's outputs). A kernel must compute its outputs from its inputs.",
        .hint = "Compute the outputs from the kernel's inputs; never import or read the task's files.",
    },
    {
        .code = "nkia_policy_reference_framework",
        .origin = kVerify,
        .title = "The kernel imports the reference's framework",
        .meaning = "The kernel imports a framework such as torch, jax or scipy. In the sandbox these are "
                   "stand-ins; computing through them would mean computing through the reference's world rather "
                   "than with NKI.",
        .hint = "Remove the framework import and compute with NKI (NumPy only in host code).",
    },
    {
        .code = "nkia_policy_syntax",
        .origin = kVerify,
        .title = "The static policy cannot parse the kernel",
        .meaning = "The kernel's source is not valid Python (or nests too deeply to check), so the static policy "
                   "cannot read it; the kernel is refused before it runs.",
        .hint = "Fix the syntax error at the reported line (`nki-agent check KERNEL` shows it too).",
    },
    {
        .code = "nkia_policy_system_access",
        .origin = kVerify,
        .title = "The kernel calls something that reaches the system",
        .meaning = "The static policy refuses calls such as `open`, `input` or `breakpoint` and modules that reach "
                   "files, processes or the network: a kernel computes with NKI on its arguments only.",
        .hint = "Remove the call; a kernel needs no files, input or debugger.",
    },
    {
        .code = "nkia_python_exception",
        .origin = kRuntime,
        .title = "The kernel's Python code raised an exception",
        .meaning = "An exception that is not an NKI rule escaped the kernel's Python code (a TypeError, an "
                   "IndexError, an assertion, …). The message is the exception; the notes are the traceback frames "
                   "inside the kernel's files.",
        .hint = "Fix the Python error at the reported line; the traceback notes show how the kernel got there.",
    },
    {
        .code = "nkia_recursion_limit",
        .origin = kRuntime,
        .title = "The kernel recursed too deeply",
        .meaning = "Python's recursion limit was reached while the kernel ran: usually a function that calls "
                   "itself without end, or a property that reads itself.",
        .hint = "Look for unbounded recursion in the kernel's helper functions.",
    },
    {
        .code = "nkia_reduce_empty_axis",
        .origin = kConstraint,
        .title = "A max or min reduction runs over an empty axis",
        .meaning = "A maximum or minimum over no elements has no value (unlike a sum, it has no identity), so a "
                   "reduction whose reduced axes have size 0 cannot produce its results. The tile has an axis of "
                   "size 0: usually a size computed from the shapes that came out as zero.",
        .hint = "Reduce over axes with at least one element: check the sizes the tile was created or sliced with, "
                "and skip the reduction when the extent is zero.",
        .example_bad = snippet(R"py(
t = nl.ndarray((128, 0), dtype=nl.float32, buffer=nl.sbuf)
m = nisa.tensor_reduce(op=nl.maximum, data=t, axis=[1]))py"),
        .example_fix = snippet(R"py(
t = nl.load(x[:, 0:512])
m = nisa.tensor_reduce(op=nl.maximum, data=t, axis=[1]))py"),
        .spec = "§4.4; §3.4",
    },
    {
        .code = "nkia_syntax_error",
        .origin = kRuntime,
        .title = "The kernel file is not valid Python",
        .meaning = "Python could not compile the kernel's file (or a helper module it imports). The location is "
                   "the line and column the parser stopped at.",
        .hint = "Fix the syntax at the reported line and column.",
    },
    {
        .code = "nkia_unknown_buffer",
        .origin = kConstraint,
        .title = "A buffer= names no NKI buffer",
        .meaning = "Tensors live in one of NKI's buffers: SBUF, PSUM or HBM (private or shared). The `buffer=` "
                   "argument named none of them.",
        .hint = "Use nl.sbuf, nl.psum, nl.hbm, nl.private_hbm or nl.shared_hbm.",
        .spec = "§2.2",
    },
    {
        .code = "nkia_unknown_dtype",
        .origin = kConstraint,
        .title = "A dtype names no NKI dtype",
        .meaning = "A `dtype=` argument (or a dtype name given on the command line) is not one of the data types "
                   "NKI and nki-agent know: the float types (float32, bfloat16, float16, tfloat32, the float8 "
                   "kinds) and the 8-, 16- and 32-bit integers and bool.",
        .hint = "Use an nl dtype such as nl.float32, nl.bfloat16, nl.float16 or nl.int32 (`nki-agent dtypes` "
                "lists them).",
        .spec = "§3.9",
    },
    {
        .code = "nkia_unknown_engine",
        .origin = kConstraint,
        .title = "An engine= names no compute engine",
        .meaning = "Instructions that may run on several engines take `engine=` to choose one. The name given is "
                   "not one of the engines that can run the instruction.",
        .hint = "Use nisa.vector_engine, nisa.scalar_engine or nisa.gpsimd_engine (or leave engine= out).",
        .spec = "§4.1; §4.7",
    },
    {
        .code = "nkia_unsupported_operator",
        .origin = kConstraint,
        .title = "An op= is not an operator NKI knows, or not one this instruction takes",
        .meaning = "The `op=` (or `op0=`, `reduce_op=`, …) of an instruction is not an NKI operator, or is one the "
                   "instruction cannot compute (a bitwise op in an activation, a transcendental in an ALU op).",
        .hint = "Pass an nl operator the instruction accepts, e.g. nl.add or nl.maximum for ALU ops, nl.exp for "
                "activations (nki-spec §4.6 lists the ALU operators).",
        .spec = "§4.3; §4.6",
    },
    {
        .code = "nkia_verify_constant_output",
        .origin = kVerify,
        .title = "Every element of the output is the same value; the reference varies",
        .meaning = "The kernel ran, but each element of an output holds one value while the reference's differ: "
                   "the result was probably written from a constant or a single element instead of computed.",
        .hint = "Compute the result from the inputs and store it into the tensor you return.",
    },
    {
        .code = "nkia_verify_input_copy",
        .origin = kVerify,
        .title = "The output is a copy of one of the inputs",
        .meaning = "An output holds exactly the values of one of the kernel's inputs, and the reference does not: "
                   "the kernel returned (or copied) its input instead of computing.",
        .hint = "The output must be computed from the inputs, not copied from one of them.",
    },
    {
        .code = "nkia_verify_mismatch",
        .origin = kVerify,
        .title = "The output differs from the reference beyond the tolerance",
        .meaning = "Elements of an output differ from the task's reference by more than the task's atol + rtol · "
                   "|expected|. The message gives the number of bad elements, the errors and the first bad index "
                   "with both values; NaN that the kernel stored is counted separately.",
        .hint = "Compare the kernel's math with task.py's forward step by step; keep the task's precision and check "
                "the axes of reductions and broadcasts.",
    },
    {
        .code = "nkia_verify_output_count",
        .origin = kVerify,
        .title = "The kernel returns the wrong number of outputs",
        .meaning = "The task's forward() returns a given number of outputs and the kernel returned a different "
                   "number.",
        .hint = "Return every output of forward(), in order, as a tuple when there are several.",
    },
    {
        .code = "nkia_verify_output_dtype",
        .origin = kVerify,
        .title = "An output has the wrong dtype",
        .meaning = "An output of the kernel has a dtype other than the one the task expects for it.",
        .hint = "Allocate each output with the task's dtype.",
    },
    {
        .code = "nkia_verify_output_shape",
        .origin = kVerify,
        .title = "An output has the wrong shape",
        .meaning = "An output of the kernel has a shape other than the reference's for this shape set. The task "
                   "runs the kernel at several shapes, so sizes written as constants pass one set and fail another.",
        .hint = "Derive every size from the input shapes (x.shape), never from constants.",
    },
    {
        .code = "nkia_verify_relative_norm",
        .origin = kVerify,
        .title = "The output is within tolerance element by element but off overall",
        .meaning = "Every element passes the elementwise tolerance, but the relative norm error ||actual − "
                   "expected|| / ||expected|| is above the task's bound: a small systematic error (a lower "
                   "precision, a missing term) that the elementwise test alone would let through.",
        .hint = "Keep the task's precision (no narrower dtypes in a float32 task) and check every term of the "
                "formula against task.py.",
    },
    {
        .code = "nkia_verify_uninitialized_read",
        .origin = kVerify,
        .title = "The output holds results computed from memory nothing wrote",
        .meaning = "Elements of an output differ from the reference, and the run's own record shows they were "
                   "computed from memory no instruction had written (the simulator fills it with NaN). On "
                   "hardware such memory holds stale data.",
        .hint = "Give the compute and store calls the same mask as the load that filled the tile, or initialise the "
                "tile (nl.zeros, nisa.memset) before a partial load.",
    },
    {
        .code = "nkia_verify_unwritten",
        .origin = kVerify,
        .title = "Elements of the output were never stored",
        .meaning = "Elements of an output still hold the NaN poison of fresh kernel memory where the reference is "
                   "finite: the kernel did not store to them, usually because a loop bound or a mask leaves out "
                   "the last, partial tile.",
        .hint = "Store every element of each output: derive trip counts from the input shapes with ceiling division "
                "and mask the last, partial tile.",
    },
    {
        .code = "nkia_verify_zero_output",
        .origin = kVerify,
        .title = "The output is all zeros; the reference is not",
        .meaning = "Every element of an output is zero while the reference has non-zero values: the kernel "
                   "returned a tensor it never stored its results into, or stored zeros.",
        .hint = "Compute the result from the inputs and store it into the tensor you return.",
    },
};

static_assert(part_ok(kPart), "error table: codes must be sorted, unique and well formed, entries complete");

}  // namespace

std::span<const ErrorInfo> run_part() {
  return kPart;
}

}  // namespace nki_agent::error_table
