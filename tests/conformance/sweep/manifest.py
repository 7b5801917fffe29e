"""The manifest of the coverage sweep (sweep.py, docs/conformance.md "Coverage sweep").

Says, for the entry kernels of the public NKI repositories, at which pinned commit they are read
and with which shapes, dtypes and arguments nki-agent checks them. It must never hold upstream
code, only locations, shapes and reasons: sweep.py reads the files from local git mirrors at run
time.

Fields of a kernel (`K`):
- repo, path, entry: where the kernel is (`repo` is the mirror folder's name, owner+name);
- shapes: {parameter: "dtype[d0,d1,...]"} for the tensor inputs (None: not swept yet);
- args: {parameter: python literal} for the non-tensor arguments;
- grid: the SPMD launch grid, when the kernel's driver launches one;
- target: the NeuronCore the kernel is written for (trn1, trn2 or trn3: the MX kernels);
- src: where the shapes come from: "test" (the kernel's upstream test: for the SDK's nki/test
  files the exact arrays each unittest passes, read once by running the tests' drivers on a
  recording stand-in of nki; elsewhere the test's first parameter set, read by hand), "doc"
  (the kernel's docstring, tutorial driver or `__main__` block), "asserts" (no test or doc gives
  shapes: a plausible shape satisfying the kernel's asserts; marked `plausible`);
- package_root: the leading folders dropped when laying the repository's package out
  (nki-library's src/nkilib_src), so that `nkilib/...` is the package tree;
- prepare: "strip_module_code" where the file runs device code at import time (the conformance
  suite's preparation, run_conformance.py);
- trees: more folders of the repository to lay out at their paths (a test file's helpers);
- absent: repository paths of modules those helpers import that the repository does not hold at
  the pinned commit; each is written as a stub whose every name is an empty class (sweep.py
  ABSENT_MODULE), so that the import resolves;
- call: the function nki-agent calls when the kernel's docs launch it through a host function of
  the same file (which picks the SPMD grid); the entry kernel otherwise;
- driver: for arguments `--arg` (Python literals) cannot express — a config object, an NKI
  operator, a dtype — the call expression of a small driver the sweep writes beside the kernel
  file (sweep.write_driver): an entry kernel in the file's dialect taking the `shapes` tensors by
  name, with `kernel` (the upstream entry), `nl`, `nisa`, `np` and `driver_imports` (more names of
  the kernel's module) in scope, e.g. `kernel(src, op0=nl.add, op1=nl.add, imm0=np.float32(0.0))`.
  The upstream kernel is inlined into the driver, as a sub-kernel into its caller;
- via: a sub-kernel (an nki.jit function its own file calls from another entry kernel): the caller's
  entry. The sweep runs the caller with --trace and counts the sub-kernel traced when an instruction
  of that trace comes from the sub-kernel's lines (sweep.py resolve_subkernels); otherwise it stays
  not-swept with the reason;
- with_nkilib: the kernel imports nki-library's package (an NxDI kernel, `from nkilib.core...`): the
  sweep writes nki-library's nkilib tree at its pin into the scratch folder and passes it as `--lib`;
- note: why a kernel is not swept, or what is special.

SHARED is the reviewed table of rejections the real toolchain shares: {kernel id: {key}}, where
key is the diagnostic code (or nkia_python_exception:<Exception>). A rejection is counted as
shared only when it is listed here, with the reason in a comment; sweep.py never infers it.

TRACED_FLOOR is the number of kernels that traced when the table in docs/conformance.md was
measured; tests/unit/test_conformance_sweep.cpp fails when fewer trace.
"""
import dataclasses
from typing import Optional

SDK = "aws-neuron+aws-neuron-sdk"
SAMPLES = "aws-neuron+nki-samples"
NKILIB = "aws-neuron+nki-library"
NXDI = "aws-neuron+neuronx-distributed-inference"
NKIPY = "aws-neuron+nkipy"

# The pinned commits: each mirror's HEAD when the sweep was written (SDK, nki-library and NxDI are
# the conformance suite's commits, tests/conformance/cases.py).
COMMITS = {
    SDK: "81ce03ae261e12925e53437a0f690478e6366155",
    SAMPLES: "6905a68a122f937e68403727759f035ddd144f95",
    NKILIB: "d2ad3a579498d1888aa8740af97fd325dd5f2740",
    NXDI: "4bcdc54bf3b6ccdad490e5cd0680a3dc95270b8e",
    NKIPY: "b91c9800bb096d1686befcd43fe9e92b408d4912",  # its mirror's HEAD when it was added
}
# Public NKI code the sweep cannot read: no mirror of it exists on the machines the sweep runs on.
NOT_MIRRORED = []

NKILIB_ROOT = "src/nkilib_src"
STRIP = "strip_module_code"
T, DOC, ASSERTS = "test", "doc", "asserts"


@dataclasses.dataclass(frozen=True)
class Kernel:
    repo: str
    path: str
    entry: str
    shapes: Optional[dict]
    args: dict = dataclasses.field(default_factory=dict)
    grid: Optional[tuple] = None
    target: str = "trn1"
    src: str = T
    package_root: str = ""
    prepare: tuple = ()
    timeout: float = 120.0
    trees: tuple = ()  # more repository folders to write, e.g. a test's helpers ("test/utils")
    call: str = ""  # the documented host function that launches the kernel, when the docs call that
    driver: str = ""  # the call a sweep driver makes (sweep.write_driver), when --arg cannot pass an argument
    driver_imports: tuple = ()  # more names the driver imports from the kernel's module (a config class)
    absent: tuple = ()  # modules its helpers import that the repository lacks: written as empty stubs
    with_nkilib: bool = False  # lay nki-library's package (nkilib/, at its pin) out beside it, as its model installs it
    via: str = ""  # a sub-kernel: the entry of its own file that calls it; traced when that caller's trace runs its code
    note: str = ""

    @property
    def id(self):
        return f"{self.repo.split('+', 1)[-1]}:{self.path}::{self.entry}"

    @property
    def plausible(self):
        return self.src == ASSERTS

    @property
    def source(self):
        return self.src


def K(repo, path, entry, shapes, **kw):
    if repo == NKILIB and "package_root" not in kw:
        kw["package_root"] = NKILIB_ROOT
    if repo == NKILIB and "target" not in kw:
        kw["target"] = "trn2"
    return Kernel(repo, path, entry, shapes, **kw)


def not_swept(repo, path, entry, why):
    return Kernel(repo, path, entry, None, src="", note=why)


KERNELS = [
    # ---- aws-neuron-sdk: nki/test (legacy dialect, neuronxcc.nki). Shapes: the arrays each
    # unittest passes (nki/test/test_*.py at the pinned commit).
    K(SDK, "nki/test/test_nki_isa_activation.py", "nki_activation", {"a_tensor": "float32[128,1024]", "b_tensor": "float32[128,512]", "c_tensor": "float32[128,1]"}, src=T),
    K(SDK, "nki/test/test_nki_isa_affine_select.py", "nki_affine_select", {"a_tensor": "float32[128,128]"}, src=T),
    K(SDK, "nki/test/test_nki_isa_bn_stats.py", "nki_bn_stats_bn_aggr_1", {"a_tensor": "float32[128,128]"}, src=T),
    K(SDK, "nki/test/test_nki_isa_copypredicated.py", "nki_copy_predicated", {"predicate": "bool[128,512]", "on_true_tensor": "float32[128,512]", "on_false_tensor": "float32[128,512]"}, src=T),
    K(SDK, "nki/test/test_nki_isa_dma_copy.py", "nki_dma_copy_hwdge", {"in_tensor": "float32[128,512]"}, target="trn2", src=T),
    K(SDK, "nki/test/test_nki_isa_dma_copy.py", "nki_dma_copy_swdge", {"in_tensor": "float32[64,512]"}, src=T),
    K(SDK, "nki/test/test_nki_isa_dma_copy.py", "nki_indirect_load_oob_err", {"in_tensor": "float32[128,512]"}, src=T),
    K(SDK, "nki/test/test_nki_isa_dma_copy.py", "nki_indirect_load_oob_error_negative", {"in_tensor": "float32[128,512]"}, src=T),
    K(SDK, "nki/test/test_nki_isa_dma_copy.py", "nki_indirect_load_oob_skip", {"in_tensor": "float32[128,512]"}, src=T),
    K(SDK, "nki/test/test_nki_isa_dma_copy.py", "nki_indirect_store_oob_err", {"in_tensor": "float32[64,512]"}, src=T),
    K(SDK, "nki/test/test_nki_isa_dma_copy.py", "nki_indirect_store_oob_err_negative", {"in_tensor": "float32[64,512]"}, src=T),
    K(SDK, "nki/test/test_nki_isa_dma_copy.py", "nki_indirect_store_oob_skip", {"in_tensor": "float32[64,512]"}, src=T),
    K(SDK, "nki/test/test_nki_isa_dma_copy.py", "nki_indirect_store_rmw", {"in_tensor": "float32[64,512]"}, src=T),
    K(SDK, "nki/test/test_nki_isa_dma_copy.py", "nki_dma_copy", {"a": "float32[256,1]"}, src=T),
    K(SDK, "nki/test/test_nki_isa_dropout.py", "nki_dropout", {"a_tensor": "float32[128,512]", "b_tensor": "float32[128,1]"}, src=T),
    K(SDK, "nki/test/test_nki_isa_dropout.py", "nki_dropout_scalar", {"in_tensor": "float32[128,512]"}, src=T),
    K(SDK, "nki/test/test_nki_isa_iota.py", "nki_iota", {}, src=T),
    K(SDK, "nki/test/test_nki_isa_local_gather.py", "nki_local_gather", {"src_buffer": "float32[128,512,4]", "index": "uint16[128,4]"}, args={"num_elem_per_idx": "4", "num_valid_indices": "64", "output_shape": "(128, 4, 16, 4)"}, src=T),
    K(SDK, "nki/test/test_nki_isa_max8.py", "nki_max8", {}, src=T),
    K(SDK, "nki/test/test_nki_isa_memset.py", "nki_memset", {}, src=T),
    K(SDK, "nki/test/test_nki_isa_nc_find_index8.py", "nki_max_index8", {}, src=T),
    K(SDK, "nki/test/test_nki_isa_nc_match_replace8.py", "nki_nc_match_replace8", {}, src=T),
    K(SDK, "nki/test/test_nki_isa_nc_match_replace8.py", "nki_nc_match_replace_indices8", {"in_tensor": "float32[128,512]"}, args={"imm": "0.0"}, src=T),
    K(SDK, "nki/test/test_nki_isa_nc_match_replace8.py", "nki_nc_match_replace_indices8_3d", {"data_tensor": "float32[128,4,4]"}, src=T),
    K(SDK, "nki/test/test_nki_isa_nc_match_replace8.py", "nki_nc_match_replace_indices8_3d_inplace", {"data_tensor": "float32[128,4,4]"}, src=T),
    K(SDK, "nki/test/test_nki_isa_nc_match_replace8.py", "nki_nc_match_replace_indices8_mask", {"in_tensor": "float32[128,512]"}, args={"imm": "0.0"}, src=T),
    K(SDK, "nki/test/test_nki_isa_nc_matmul.py", "nki_nc_matmul", {"a_tensor": "float32[128,128]", "b_tensor": "float32[128,512]", "d_tensor": "float32[256,128]", "e_tensor": "float32[256,512]", "g_tensor": "float32[16,64,64]", "h_tensor": "float32[16,64,512]"}, src=T),
    K(SDK, "nki/test/test_nki_isa_nc_stream_shuffle.py", "nki_nc_stream_shuffle_broadcast_mask", {"in_tensor": "float32[128,128]"}, src=T),
    K(SDK, "nki/test/test_nki_isa_nc_stream_shuffle.py", "nki_nc_stream_shuffle_broadcast_partition", {"in_tensor": "float32[1,128]"}, src=T),
    K(SDK, "nki/test/test_nki_isa_nc_stream_shuffle.py", "nki_nc_stream_shuffle", {"in_tensor": "float32[32,128]"}, src=T),
    K(SDK, "nki/test/test_nki_isa_nc_transpose.py", "nki_nc_transpose", {"a_tensor": "float32[128,64]", "b_tensor": "float32[32,2]"}, src=T),
    K(SDK, "nki/test/test_nki_isa_reciprocal.py", "reciprocal_kernel", {"in_tensor": "float32[128,512]"}, src=T),
    K(SDK, "nki/test/test_nki_isa_reduce.py", "nki_reduce", {"a_tensor": "float32[128,512]"}, src=T),
    K(SDK, "nki/test/test_nki_isa_select_reduce.py", "nki_select_reduce_basic", {"predicate_data": "uint8[128,64]", "on_true_data": "float32[128,64]"}, src=T),
    K(SDK, "nki/test/test_nki_isa_select_reduce.py", "nki_select_reduce_reverse_pred", {"predicate_data": "uint8[128,64]", "on_true_data": "float32[128,64]"}, src=T),
    K(SDK, "nki/test/test_nki_isa_select_reduce.py", "nki_select_reduce_with_reduction", {"predicate_data": "bool[128,512]", "on_true_data": "float32[128,512]", "on_false_data": "float32[128,1]"}, src=T),
    K(SDK, "nki/test/test_nki_isa_sequence_bounds.py", "nki_sequence_bounds", {"segment_ids": "float32[1,32]"}, src=T),
    K(SDK, "nki/test/test_nki_isa_tensor_copy.py", "nki_tensor_copy", {"in_tensor": "float32[8,8]"}, src=T),
    K(SDK, "nki/test/test_nki_isa_tensor_scalar.py", "nki_tensor_scalar", {"a_tensor": "float32[128,512]", "c_tensor": "float32[128,512]", "e_tensor": "float32[64,1024]", "f_tensor": "float32[64,1]"}, src=T),
    K(SDK, "nki/test/test_nki_isa_tensor_tensor.py", "nki_tensor_tensor", {"a_tensor": "float32[128,512]", "b_tensor": "float32[128,512]"}, src=T),
    K(SDK, "nki/test/test_nki_isa_tensor_tensor_scan.py", "nki_tensor_tensor_scan", {"a_tensor": "float32[128,1024]", "b_tensor": "float32[128,1024]"}, src=T),
    K(SDK, "nki/test/test_nki_mask.py", "nki_mask", {"in_tensor": "float32[128,512]"}, src=T),
    K(SDK, "nki/test/test_nki_memory_semantics.py", "simple_demo_kernel", {"a_ptr": "float32[4,128,512]"}, src=T),
    K(SDK, "nki/test/test_nki_nl_add.py", "add_tensors", {"a_tensor": "float32[128,512]", "b_tensor": "float32[128,512]"}, src=T),
    K(SDK, "nki/test/test_nki_nl_add.py", "add_broadcast_both_dims", {"a_tensor": "float32[128,512]", "b_tensor": "float32[1,1]"}, src=T),
    K(SDK, "nki/test/test_nki_nl_add.py", "add_broadcast_each_dims", {"a_tensor": "float32[128,1]", "b_tensor": "float32[1,512]"}, src=T),
    K(SDK, "nki/test/test_nki_nl_add.py", "add_broadcast_free_dim", {"a_tensor": "float32[128,512]", "b_tensor": "float32[128,1]"}, src=T),
    K(SDK, "nki/test/test_nki_nl_add.py", "add_broadcast_par_dim", {"a_tensor": "float32[128,512]", "b_tensor": "float32[1,512]"}, src=T),
    K(SDK, "nki/test/test_nki_nl_add.py", "add_tensor_scalar", {"a_tensor": "float32[128,512]"}, src=T),
    K(SDK, "nki/test/test_nki_nl_broadcast.py", "test_nl_broadcast", {"in_tensor": "int32[1,64]"}, src=T),
    K(SDK, "nki/test/test_nki_nl_dslice.py", "example_kernel", {"in_tensor": "float32[128,4096]"}, src=T),
    K(SDK, "nki/test/test_nki_nl_gather_flattened.py", "nki_gather_flattened", {}, src=T),
    K(SDK, "nki/test/test_nki_nl_load_store.py", "example_load_store_b", {"in_tensor": "float32[4,128,512]"}, src=T),
    K(SDK, "nki/test/test_nki_nl_load_store.py", "example_kernel", {"in_tensor": "float32[128,512]"}, src=T),
    K(SDK, "nki/test/test_nki_nl_load_store_indirect.py", "example_indirect_load_1", {"data_tensor": "float32[128,512]", "idx_tensor": "int32[64]"}, src=T),
    K(SDK, "nki/test/test_nki_nl_load_store_indirect.py", "example_indirect_load_2", {"data_tensor": "float32[128,512]"}, src=T),
    K(SDK, "nki/test/test_nki_nl_load_store_indirect.py", "example_indirect_save_1", {"in_tensor": "float32[64,512]", "idx_tensor": "int32[64]"}, src=T),
    K(SDK, "nki/test/test_nki_nl_load_store_indirect.py", "example_indirect_save_2", {"in_tensor": "float32[64,512]"}, src=T),
    K(SDK, "nki/test/test_nki_nl_load_transpose2d.py", "example_kernel_0", {"in_tensor": "float32[2048,128]"}, src=T),
    K(SDK, "nki/test/test_nki_nl_load_transpose2d.py", "example_kernel_1", {"in_tensor": "float32[2048,128]"}, src=T),
    K(SDK, "nki/test/test_nki_nl_mgrid.py", "example_kernel", {"in_tensor": "float32[128,512]"}, src=T),
    K(SDK, "nki/test/test_nki_nl_mgrid.py", "example_kernel_1", {"in_tensor": "float32[128,512]"}, src=T),
    K(SDK, "nki/test/test_nki_simulate_kernel.py", "print_kernel", {"a_tensor": "float32[3,4]"}, src=T),
    K(SDK, "nki/test/test_nki_nl_load_store.py", "example_kernel", {"in_tensor": "float32[128,512]"}, src=T),
    K(SDK, "nki/test/test_nki_isa_bn_stats.py", "nki_bn_stats_bn_aggr_2", {"b_tensor": "float32[128,1024]"}, src=T),
    K(SDK, "nki/test/test_nki_isa_dma_transpose.py", "nki_dma_transpose_2d_hbm2sb", {"a": "float16[16,128]"}, src=T),
    K(SDK, "nki/test/test_nki_isa_dma_transpose.py", "nki_dma_transpose_2d_sb2sb", {"a": "float16[16,128]"}, src=T),
    K(SDK, "nki/test/test_nki_isa_dma_transpose.py", "nki_dma_transpose_2d_hbm2sb_dge_xbar", {"a": "float16[16,128]"},
      target="trn2", src=T),
    K(SDK, "nki/test/test_nki_isa_dma_transpose.py", "nki_dma_transpose_2d_sb2sb_dge_xbar", {"a": "float16[16,128]"},
      target="trn2", src=T),
    K(SDK, "nki/test/test_nki_isa_dma_transpose.py", "nki_dma_gather_transpose_3d_hbm2sb",
      {"src_tensor": "uint16[64,4,128]", "idx_tensor": "uint32[32,1]"}, target="trn2", src=T),
    K(SDK, "nki/test/test_nki_isa_dma_transpose.py", "nki_dma_gather_transpose_3d_sb2sb",
      {"src_tensor": "uint16[64,4,128]", "idx_tensor": "uint32[32,1]"}, target="trn2", src=T,
      note="test_dma_transpose_indirect passes these arrays to the hbm2sb twin; the sb2sb one takes the same"),
    K(SDK, "nki/test/test_nki_isa_nc_matmul.py", "nki_nc_matmul_double_row_gen3",
      {"a_input": "float8_e5m2[128,2,1]", "b_input": "float8_e5m2[128,2,512]"}, target="trn2", src=T),
    K(SDK, "nki/test/test_nki_spmd_grid.py", "nki_spmd_kernel", {"a": "float32[4,2,1,1]"}, grid=(4, 2), src=T),
    # Their tests pass NKI operators, NumPy comparison ufuncs or a dtype: swept through a driver
    # (manifest docstring, `driver`) making the first test's call.
    K(SDK, "nki/test/test_nki_isa_tensor_scalar_cumulative.py", "nki_tensor_scalar_cumulative_scalar",
      {"src": "float32[128,64]"}, driver="kernel(src, op0=nl.add, op1=nl.add, imm0=np.float32(0.0))", src=T),
    K(SDK, "nki/test/test_nki_isa_tensor_scalar_cumulative.py", "nki_tensor_scalar_cumulative_vector",
      {"src": "float32[128,64]", "imm0": "float32[128,1]"}, driver="kernel(src, op0=nl.add, op1=nl.add, imm0=imm0)",
      src=T),
    K(SDK, "nki/test/test_nki_isa_tensor_scalar_cumulative.py", "nki_tensor_scalar_cumulative_chain",
      {"src": "float32[128,64]"},
      driver="kernel(src, op0=nl.add, op1=nl.add, imm0=np.float32(0.0), reduce_cmd=nisa.reduce_cmd.reset_reduce)",
      src=T),
    K(SDK, "nki/test/test_nki_isa_tensor_scalar_cumulative.py", "nki_tensor_scan", {"src": "float32[128,64]"},
      driver="kernel(src, op=nl.add, initial=np.float32(2.0))", src=T),
    K(SDK, "nki/test/test_nki_isa_range_select.py", "nki_range_select_chaining",
      {"on_true": "float32[128,512]", "bound0": "float32[128,1]", "bound1": "float32[128,1]"},
      driver="kernel(on_true, bound0, bound1, np.greater_equal, np.less, 32)", target="trn2", src=T),
    K(SDK, "nki/test/test_nki_isa_range_select.py", "nki_range_select_example",
      {"on_true": "float32[128,512]", "bound0": "float32[128,1]", "bound1": "float32[128,1]"},
      driver="kernel(on_true, bound0, bound1, np.greater_equal, np.less, 32, np.float32)", target="trn2", src=T,
      note="the test's float32 pass (it loops over five dtypes)"),

    # ---- aws-neuron-sdk: nki/examples and deep-dives (current dialect, `import nki`). Shapes: each
    # example's __main__ block or tutorial driver (*_torch.py) or docstring.
    K(SDK, "nki/examples/tensor_addition/tensor_addition_nki_kernels.py", "nki_tensor_add",
      {"a_input": "float32[256,1024]", "b_input": "float32[256,1024]"}, src=DOC,
      note="docstring: tiles of [128,512]; the tutorial's driver uses (256, 1024)"),
    K(SDK, "nki/examples/getting_started_baremetal.py", "nki_tensor_add_kernel",
      {"a_input": "float16[4,3]", "b_input": "float16[4,3]"}, src=DOC),
    K(SDK, "nki/examples/getting_started_jax.py", "nki_tensor_add_kernel",
      {"a_input": "float16[4,3]", "b_input": "float16[4,3]"}, src=DOC),
    K(SDK, "nki/examples/getting_started_torch.py", "nki_tensor_add_kernel",
      {"a_input": "float16[4,3]", "b_input": "float16[4,3]"}, src=DOC),
    K(SDK, "nki/examples/index-case-1.py", "tensor_split_kernel_", {"in_tensor": "bfloat16[4,5]"}, src=DOC),
    K(SDK, "nki/examples/index-case-3.py", "tensor_maxpool_kernel_", {"in_tensor": "bfloat16[2,6,6]"},
      args={"sz_pool": "2"}, src=DOC),
    K(SDK, "nki/examples/layout-pass.py", "tensor_exp_kernel_", {"in_tensor": "bfloat16[128,512]"}, src=DOC),
    K(SDK, "nki/examples/layout-violation.py", "tensor_exp_kernel_", {"in_tensor": "bfloat16[256,512]"}, src=DOC,
      note="the example of a layout violation: (256, 512) puts 256 rows on the 128 partitions"),
    K(SDK, "nki/examples/average_pool2d/average_pool2d_nki_kernels.py", "tensor_avgpool_kernel",
      {"in_tensor": "float16[2,6,6]"}, args={"pool_size": "2"}, src=DOC),
    K(SDK, "nki/examples/matrix_multiplication/matrix_multiplication_nki_kernels.py", "nki_matmul_basic_",
      {"lhsT": "bfloat16[128,64]", "rhs": "bfloat16[128,512]"}, src=DOC),
    K(SDK, "nki/examples/matrix_multiplication/matrix_multiplication_nki_kernels.py", "nki_matmul_tiled_",
      {"lhsT": "bfloat16[1024,4096]", "rhs": "bfloat16[1024,2048]"}, src=DOC),
    K(SDK, "nki/examples/matrix_multiplication/matrix_multiplication_nki_kernels.py", "nki_matmul_hoist_load_",
      {"lhsT": "bfloat16[1024,4096]", "rhs": "bfloat16[1024,2048]"}, src=DOC),
    K(SDK, "nki/examples/matrix_multiplication/matrix_multiplication_nki_kernels.py", "nki_matmul_block_free_dimension_",
      {"lhsT": "bfloat16[1024,4096]", "rhs": "bfloat16[1024,2048]"}, src=DOC),
    K(SDK, "nki/examples/matrix_multiplication/matrix_multiplication_nki_kernels.py", "nki_matmul_fully_optimized_",
      {"lhsT": "bfloat16[1024,4096]", "rhs": "bfloat16[1024,2048]"}, src=DOC),
    K(SDK, "nki/examples/simulate/nki_simulate_example.py", "add_kernel",
      {"a_ptr": "float32[128,512]", "b_ptr": "float32[128,512]"}, src=DOC, prepare=(STRIP,),
      note="the file runs nki.simulate at module level"),
    K(SDK, "nki/examples/transpose2d/transpose2d_nki_kernels.py", "tensor_transpose2D_kernel_",
      {"in_tensor": "int8[5,12]"}, args={"shape2D": "(3, 4)"}, src=DOC),
    K(SDK, "nki/examples/fused_mamba/mamba_nki_kernels.py", "mamba_v1",
      {"delta": "float32[1,256,2048]", "u": "float32[1,256,2048]", "A": "float32[256,16]",
       "B": "float32[1,16,2048]", "C": "float32[1,16,2048]"}, src=DOC),
    K(SDK, "nki/examples/fused_mamba/mamba_nki_kernels.py", "mamba_v2",
      {"delta": "float32[1,256,2048]", "u": "float32[1,256,2048]", "A": "float32[256,16]",
       "B": "float32[1,16,2048]", "C": "float32[1,16,2048]"}, src=DOC),
    K(SDK, "nki/examples/fused_mamba/mamba_nki_kernels.py", "mamba_v3",
      {"delta": "float32[1,256,2048]", "u": "float32[1,256,2048]", "A": "float32[256,16]",
       "B": "float32[1,16,2048]", "C": "float32[1,16,2048]"}, src=DOC),

    # ---- nki-samples (legacy tutorials; the matmul tutorial is current). Shapes: the tutorial's
    # test or driver.
    K(SAMPLES, "src/nki_samples/tutorials/attention_fwd_performance/attention_kernels.py", "attn_fwd_v1",
      {"q": "float32[128,128]", "k": "float32[128,128]", "v": "float32[128,128]"}, src=DOC),
    K(SAMPLES, "src/nki_samples/tutorials/attention_fwd_performance/attention_kernels.py", "attn_fwd_v2",
      {"q": "float32[128,128]", "k": "float32[128,128]", "v": "float32[128,128]"}, src=DOC),
] + [
    K(SAMPLES, "src/nki_samples/tutorials/attention_fwd_performance/attention_kernels.py", f"attn_fwd_{v}",
      {"q": "float32[128,4096]", "k": "float32[128,4096]", "v": "float32[128,4096]"}, src=DOC, timeout=300.0)
    for v in ("v3", "v4", "v5", "v6", "v7", "v8", "v8a", "v9", "v10", "v11")
] + [
    K(SAMPLES, "src/nki_samples/tutorials/average_pool2d/average_pool2d_nki_kernels.py", "tensor_avgpool_kernel",
      {"in_tensor": "float16[2,6,6]"}, args={"pool_size": "2"}, src=DOC),
    K(SAMPLES, "src/nki_samples/tutorials/transpose2d/transpose2d_nki_kernels.py", "tensor_transpose2D_kernel_",
      {"in_tensor": "int8[5,12]"}, args={"shape2D": "(3, 4)"}, src=DOC),
    K(SAMPLES, "src/nki_samples/tutorials/tensor_addition/tensor_addition_nki_kernels.py", "nki_tensor_add_kernel_",
      {"a_input": "bfloat16[256,1024]", "b_input": "bfloat16[256,1024]"}, call="nki_tensor_add", src=DOC,
      note="tensor_addition_torch.py calls the host function nki_tensor_add, which launches the grid"),
    K(SAMPLES, "src/nki_samples/tutorials/tensor_addition/spmd_tensor_addition_nki_kernels.py", "nki_tensor_add_kernel_",
      {"a_input": "bfloat16[256,1024]", "b_input": "bfloat16[256,1024]"}, call="nki_tensor_add", src=DOC,
      note="spmd_tensor_addition_torch.py calls the host function nki_tensor_add, which launches the grid"),
    K(SAMPLES, "src/nki_samples/tutorials/matrix_multiplication/matrix_multiplication_nki_kernels.py", "nki_matmul_basic_",
      {"lhsT": "bfloat16[128,64]", "rhs": "bfloat16[128,512]"}, src=DOC),
] + [
    K(SAMPLES, "src/nki_samples/tutorials/matrix_multiplication/matrix_multiplication_nki_kernels.py", name,
      {"lhsT": "bfloat16[1024,4096]", "rhs": "bfloat16[1024,2048]"}, src=DOC)
    for name in ("nki_matmul_tiled_", "nki_matmul_hoist_load_", "nki_matmul_block_free_dimension_",
                 "nki_matmul_fully_optimized_")
] + [
    K(SAMPLES, "src/nki_samples/tutorials/fused_mamba/mamba_nki_kernels.py", name,
      {"delta": "float32[1,256,2048]", "u": "float32[1,256,2048]", "A": "float32[256,16]",
       "B": "float32[1,16,2048]", "C": "float32[1,16,2048]"}, src=DOC)
    for name in ("mamba_v1", "mamba_v2", "mamba_v3")
] + [
    # ---- nki-library (current dialect; the package src/nkilib_src/nkilib is laid out whole). Shapes:
    # the first parameter set of each kernel's test under test/integration/nkilib/.
    K(NKILIB, "src/nkilib_src/nkilib/core/cumsum/cumsum.py", "cumsum", {"x": "float32[1,256]"}, src=T),
    K(NKILIB, "src/nkilib_src/nkilib/core/max/cascaded_max.py", "cascaded_max",
      {"input_tensor": "float32[8,5,4058]"}, src=T),
    K(NKILIB, "src/nkilib_src/nkilib/core/embeddings/rope.py", "RoPE",
      {"x_in": "bfloat16[128,8192,1,8]", "cos": "bfloat16[64,8192,8]", "sin": "bfloat16[64,8192,8]"},
      args={"contiguous_layout": "True", "relayout_in_sbuf": "False"}, src=T),
    K(NKILIB, "src/nkilib_src/nkilib/core/subkernels/find_nonzero_indices.py", "find_nonzero_indices",
      {"input_tensor": "int32[4096,128]"}, args={"chunk_size": "4096"}, src=T),
    K(NKILIB, "src/nkilib_src/nkilib/core/embeddings/rope_hf.py", "rope_hf",
      {"q": "bfloat16[1,32,256,128]", "k": "bfloat16[1,8,256,128]", "q_out": "bfloat16[1,32,256,128]",
       "k_out": "bfloat16[1,8,256,128]", "cos": "bfloat16[1,256,128]", "sin": "bfloat16[1,256,128]"}, src=T),
    K(NKILIB, "src/nkilib_src/nkilib/experimental/conv/conv1d.py", "conv1d",
      {"x_in": "float32[1,16,20]", "filters": "float32[3,16,32]"},
      args={"stride": "1", "padding": "(0, 0)", "dilation": "1"}, src=T),
    K(NKILIB, "src/nkilib_src/nkilib/experimental/conv/depthwise_conv1d.py", "depthwise_conv1d_implicit_gemm",
      {"img_ref": "bfloat16[1,16,1,512]", "filter_ref": "bfloat16[16,1,1,64]"},
      args={"stride": "(1, 1)", "padding": "((0, 0), (0, 0))", "feature_group_count": "16"}, src=T),
    K(NKILIB, "src/nkilib_src/nkilib/experimental/loss/cross_entropy.py", "cross_entropy_forward",
      {"logits_hbm": "bfloat16[1,32128]", "targets_hbm": "int32[1]"},
      args={"positions_per_batch": "1", "chunk_size": "32128"}, src=T),
    K(NKILIB, "src/nkilib_src/nkilib/experimental/loss/cross_entropy.py", "cross_entropy_backward",
      {"logits_hbm": "bfloat16[1,32128]", "targets_hbm": "int32[1]", "lse_state_hbm": "bfloat16[1]"},
      args={"positions_per_batch": "1", "chunk_size": "32128"}, src=T),
    K(NKILIB, "src/nkilib_src/nkilib/core/subkernels/indexed_flatten.py", "indexed_flatten",
      {"input_tensor": "int32[1,4096]", "row_offsets": "int32[1]"}, args={"f_len": "128", "output_len": "5120"},
      grid=(2,), target="trn2", src=T, note="test_indexed_flatten.py runs it with LNC 2 (its two cores exchange "
      "their partial results with sendrecv)"),
    K(NKILIB, "src/nkilib_src/nkilib/core/output_projection/output_projection_cte/output_projection_cte.py",
      "output_projection_cte",
      {"attention": "bfloat16[1,10,128,16]", "weight": "bfloat16[1280,5120]", "bias": "bfloat16[1,5120]"}, src=T),
    K(NKILIB, "src/nkilib_src/nkilib/core/output_projection/output_projection_tkg.py", "output_projection_tkg",
      {"attention": "bfloat16[128,64,8,1]", "weight": "bfloat16[1024,8192]", "bias": "bfloat16[1,8192]"}, src=T,
      note="test_output_proj_tkg.py's (B 64, n_heads 8, S_tkg 1, d_head 128, H 8192) with the default "
           "QuantizationType.NONE (the enum cannot be passed by --arg)"),
    K(NKILIB, "src/nkilib_src/nkilib/core/attention/attention_cte.py", "attention_cte",
      {"q": "float32[1,4096,64]", "k": "float32[1,64,9216]", "v": "float32[1,9216,64]"},
      args={"scale": "0.5", "causal_mask": "False", "tp_q": "True", "tp_out": "False"}, src=T, timeout=300.0),
    K(NKILIB, "src/nkilib_src/nkilib/experimental/benchmark/find_nonzero_indices_with_count.py",
      "find_nonzero_indices_with_count", {"input_tensor": "float32[1,32]"}, src=T),
    K(NKILIB, "src/nkilib_src/nkilib/experimental/dynamic_shapes/dynamic_elementwise_add.py", "dynamic_elementwise_add",
      {"input_a": "bfloat16[256,1024]", "input_b": "bfloat16[256,1024]", "num_m_tiles": "int32[1,1]"}, src=ASSERTS,
      note="the test's input layout (M x H bf16, num_m_tiles = M // 128); M, H chosen as multiples of the tiles"),
]

KERNELS += [
    # ---- neuronx-distributed-inference. Shapes: the kernel's unit test (test/unit/...) or, for the
    # contrib models, the kernel's own test beside it.
    K(NXDI, "src/neuronx_distributed_inference/modules/sliding_window/attention.py", "flash_fwd",
      {"q": "bfloat16[1,1,96,16384]", "k": "bfloat16[1,1,96,16384]", "v": "bfloat16[1,1,16384,96]"},
      args={"use_causal_mask": "True", "window_size": "(-2, -1)"}, grid=(1, 1), src=T, timeout=300.0,
      note="test_attention.py's first case, launched flash_fwd[bs, heads]; its FlashConfig(seq_tile_size=2048) "
           "cannot be passed by --arg, so the kernel's default config is used"),
    K(NXDI, "src/neuronx_distributed_inference/utils/distributed.py", "split_along_dim0_kernel",
      {"tensor": "int32[6]", "rank": "int32[1]"}, args={"num_partitions": "3"}, src=T, with_nkilib=True,
      note="test_distributed.py: torch.arange(6) (int64 there; NKI has no int64, int32 here), rank 0 "
           "reshaped to (1,), 3 partitions"),
    K(NXDI, "contrib/models/GLM-5.2/src/mla_attention_nki_kernel.py", "mla_attention_tkg",
      {"q_pe": "bfloat16[2,64]", "q_nope": "bfloat16[2,512]", "kv_cache": "bfloat16[1,512,576]",
       "v_absorb": "bfloat16[2,256,512]", "attn_mask": "bool[2,512]"}, target="trn2", src=T,
      note="test_mla_attention_nki.py at the kernel's defaults (B 1, 2 heads, d_rope 64, d_c 512, d_v 256, S 512)"),
    K(NXDI, "src/neuronx_distributed_inference/modules/kvcache/utils.py", "write_kv_cache_at_batch_kernel",
      {"K": "float32[1,2,128,64]", "V": "float32[1,2,128,64]", "K_prior": "float32[4,2,256,64]",
       "V_prior": "float32[4,2,256,64]", "batch_idx": "int32[1]"}, src=ASSERTS, with_nkilib=True,
      note="the docstring's layout (1, H, S, D) into (B, H, S_prior, D); sizes chosen"),
]

# The Qwen3.5 DeltaNet kernels (identical files in the 2B and 35B-A3B contrib models). Shapes: the
# layouts their parameter comments give ("(S, 128) float32", ...), with S = 256 (two 128-token
# chunks), N = 2 chunks and BH = 2 heads chosen.
_F = "float32"
_M = {"lower_mask": "float32[128,128]", "identity": "float32[128,128]", "lower_mask_diag": "float32[128,128]"}
_QKV = {"query": "float32[256,128]", "key": "float32[256,128]", "value": "float32[256,128]"}
_DELTANET = [
    ("nki_deltanet.py", "_deltanet_recurrent_step_batched_kernel",
     {"query": "float32[2,128]", "key": "float32[2,128]", "value": "float32[2,128]", "g_in": "float32[2,1]",
      "beta_in": "float32[2,1]", "state_in": "float32[256,128]"}),
    ("nki_deltanet.py", "deltanet_recurrent_step",
     {"query": "float32[1,128]", "key": "float32[1,128]", "value": "float32[1,128]", "g_in": "float32[1,128]",
      "beta_in": "float32[1,128]", "state_in": "float32[128,128]"}),
    ("nki_deltanet.py", "deltanet_recurrent_fwd", dict(_QKV, g_in="float32[256,128]", beta_in="float32[256,128]")),
    ("nki_deltanet.py", "deltanet_recurrent_fwd_state",
     dict(_QKV, g_in="float32[256,128]", beta_in="float32[256,128]")),
    ("nki_deltanet_chunked.py", "deltanet_chunk_step",
     {n: "float32[128,128]" for n in ("query", "key", "value", "beta_broadcast", "g_cumsum", "g_last", "state_in",
                                       "lower_mask", "identity", "lower_mask_diag")}),
    ("nki_deltanet_fused.py", "deltanet_fused_chunked_fwd",
     dict(_QKV, g_in="float32[256,1]", beta_in="float32[256,1]", initial_state="float32[128,128]", **_M)),
    ("nki_deltanet_fused.py", "deltanet_autocp_affine_chunk",
     dict({"query": "float32[128,128]", "key": "float32[128,128]", "value": "float32[128,128]",
           "g_in": "float32[128,1]", "beta_in": "float32[128,1]"}, **_M)),
    ("nki_deltanet_fused.py", "deltanet_autocp_affine_sequence",
     dict(_QKV, g_in="float32[256,1]", beta_in="float32[256,1]", **_M)),
    # one AutoCP segment: AUTOCP_CP_CHUNKS (4) chunks of CHUNK_SIZE (128) tokens
    ("nki_deltanet_fused.py", "deltanet_autocp_state_summary_sequence",
     {"key": "float32[512,128]", "value": "float32[512,128]", "g_in": "float32[512,1]", "beta_in": "float32[512,1]",
      "lower_mask": "float32[128,128]", "identity": "float32[128,128]"}),
    ("nki_deltanet_fused.py", "deltanet_autocp_state_prefix",
     {"state_matrix": "float32[2,128,128]", "state_bias": "float32[2,128,128]", "initial_state": "float32[128,128]"}),
    ("nki_deltanet_fused.py", "deltanet_autocp_apply_output",
     {"output_base": "float32[2,128,128]", "output_state": "float32[2,128,128]", "chunk_states": "float32[2,128,128]"}),
    ("nki_deltanet_fused.py", "deltanet_autocp_prefix_apply_output",
     {"output_base": "float32[2,128,128]", "output_state": "float32[2,128,128]", "state_matrix": "float32[2,128,128]",
      "state_bias": "float32[2,128,128]", "initial_state": "float32[128,128]"}),
    ("nki_deltanet_fused.py", "deltanet_fused_chunked_fwd_multihead",
     dict({"query": "float32[2,256,128]", "key": "float32[2,256,128]", "value": "float32[2,256,128]",
           "g_in": "float32[2,256,1]", "beta_in": "float32[2,256,1]", "initial_state": "float32[2,128,128]"}, **_M)),
    ("nki_deltanet_fused_legacy.py", "deltanet_fused_chunked_fwd",
     dict(_QKV, g_in="float32[256,1]", beta_in="float32[256,1]", initial_state="float32[128,128]", **_M)),
]
KERNELS += [
    K(NXDI, f"contrib/models/{model}/src/nki_kernels/{file}", entry, shapes, target="trn2", src=DOC,
      note="the parameter comments' layout; S, N, BH chosen")
    for model in ("Qwen3.5-2B", "Qwen3.5-35B-A3B") for file, entry, shapes in _DELTANET
]

KERNELS += [
    K(NXDI, f"contrib/models/{model}/src/nki_kernels/qwen_qk_norm_rope.py", "qwen_qk_norm_partial_rope_kernel",
      {"q_proj": "bfloat16[1,128,2048]", "k_proj": "bfloat16[1,128,512]", "q_gamma": "bfloat16[256]",
       "k_gamma": "bfloat16[256]", "cos_cache": "bfloat16[1,128,64]", "sin_cache": "bfloat16[1,128,64]"},
      args={"eps": "1e-06"}, target="trn2", src=ASSERTS,
      note="the layout the kernel reads (BSD projections of 256-wide heads, [B, S, 64] cos/sin, as "
           "modeling_qwen35.py passes them); 8 query and 2 key heads, S = 128 chosen")
    for model in ("Qwen3.5-2B", "Qwen3.5-35B-A3B")
]

KERNELS += [
    K(NXDI, "src/neuronx_distributed_inference/modules/eagle/hidden_state.py", "rolling_buffer_set_state",
      {"buffer": "float32[3,10,3072]", "hidden_states": "float32[1,3072]", "batch_ids": "int32[1]",
       "position_ids": "int32[1]"}, src=T,
      note="test_hidden_state_rolling_buffer_kernel.py (batch 1, padding 1, hidden 3072): the buffer is "
           "(batch + padding + 1, 2k = 10, hidden); the others in the parameter comments' layout"),
    K(NXDI, "contrib/models/ltx2-video-audio/src/attention_cte_bias.py", "attention_cte_with_bias",
      {"q": "bfloat16[2,1024,128]", "k": "bfloat16[2,1024,128]", "v": "bfloat16[2,1024,128]",
       "bias": "float32[2,1024]"},
      args={"scale": "0.08838834764831845", "causal_mask": "False", "tp_q": "True", "tp_k": "True",
            "tp_out": "False"}, grid=(2,), target="trn2", src=DOC, timeout=300.0, with_nkilib=True,
      note="modeling_ltx2.py's attention_cte_bias_4d: (B*H, S, d) q/k/v, a [B*H, K_seq] bias, scale 1/sqrt(d), "
           "launched [(2,)] with causal_mask=False, tp_q=True, tp_k=True, tp_out=False; B*H 2, S 1024, d 128 chosen"),
    K(NXDI, "contrib/models/ltx2-video-audio/src/nki_cross_attention_kernel.py", "cross_attn_kernel",
      {"q_ref": "bfloat16[2,128,128]", "k_ref": "bfloat16[2,1024,128]", "v_ref": "bfloat16[2,1024,128]",
       "mask_ref": "bfloat16[2,1024]"}, target="trn2", src=DOC,
      note="the docstring's layout; batch_heads 2 and q_seq 128 chosen"),
]

KERNELS += [
    # ---- nkipy: NKI kernels inside NKIPy models (current dialect). Shapes: the decode step's
    # greedy_sampling, which calls the kernel on h.reshape(-1, H) (batch 1, one token) with the
    # model's hidden size and dtype (config.py: bfloat16; gpt-oss-20b H = 2880, Qwen3-30B-A3B 2048).
    K(NKIPY, "examples/models/gpt_oss/kernels/nki/rmsnorm.py", "nki_rmsnorm_kernel",
      {"input_tensor": "bfloat16[1,2880]", "weight": "bfloat16[2880]"}, args={"eps": "1e-05"}, target="trn2",
      src=DOC, note="kernels/sampling.py greedy_sampling(use_nki_rmsnorm=True), gpt-oss-20b"),
    K(NKIPY, "examples/models/qwen3/kernels/sampling.py", "nki_rmsnorm_kernel",
      {"input_tensor": "bfloat16[1,2048]", "weight": "bfloat16[2048]"}, args={"eps": "1e-06"}, target="trn2",
      src=DOC, package_root="examples/models/qwen3",
      note="the file's greedy_sampling(use_nki_rmsnorm=True), Qwen3-30B-A3B; the model folder is laid out "
           "whole, as `from config import Config` and `from .rmsnorm import ...` import it"),
    K(NKIPY, "examples/playground/simple_nki_kernel.py", "nki_tensor_add",
      {"a_input": "float32[128,512]", "b_input": "float32[128,512]"}, target="trn2", src=DOC,
      note="the file's main(): shape (128, 512)"),
]

# Entry kernels decorated with nki.jit that their own file calls from another kernel: swept through
# their caller where that is swept, listed here so that they are not counted as missing shapes.
_SUBKERNELS = [
    (NXDI, "src/neuronx_distributed_inference/modules/sliding_window/attention.py", "transpose_p_local", "flash_fwd"),
    (NXDI, "src/neuronx_distributed_inference/modules/sliding_window/attention.py", "_flash_attention_core", "flash_fwd"),
    (NXDI, "src/neuronx_distributed_inference/modules/sliding_window/attention.py", "load_v_tile", "flash_fwd"),
] + [
    (NKILIB, "src/nkilib_src/nkilib/core/moe/moe_tkg/all_expert_mx_impl.py", name, "_all_expert_moe_tkg_mx")
    for name in ("_all_expert_mx_static", "_all_expert_mx_dynamic", "_find_expert_routed_tokens",
                 "_init_dynamic_block_indices_hbm", "_get_block_token_position_to_id", "_layout_adapter_qmx_hbm",
                 "_load_block_expert_affinities", "_load_expert", "_compute_expert_mlp", "_compute_block")
] + [
    (NKILIB, "src/nkilib_src/nkilib/core/moe/moe_tkg/down_projection_mx.py", "load_broadcast_down_weight_scale_bias",
     "down_projection_mx"),
    (NKILIB, "src/nkilib_src/nkilib/core/moe/moe_tkg/gate_up_projection_mx.py", "load_gate_up_weight_scale_bias",
     "gate_up_projection_mx_shard_I"),
    (NKILIB, "src/nkilib_src/nkilib/core/moe/moe_tkg/gate_up_projection_mx.py", "_clamp_tensor",
     "gate_up_projection_mx_shard_I"),
    (NKILIB, "src/nkilib_src/nkilib/core/moe/moe_tkg/gate_up_projection_mx.py", "_matmul_mx_accumulate",
     "gate_up_projection_mx_shard_I"),
]
KERNELS += [Kernel(r, p, e, None, src="", via=c, target="trn2" if r == NKILIB else "trn1",
                   note=f"a sub-kernel that {c} calls; swept through it")
            for r, p, e, c in _SUBKERNELS]

KERNELS += [
    K(NKILIB, "src/nkilib_src/nkilib/core/qkv/qkv.py", "qkv",
      {"input": "bfloat16[1,128,8192]", "fused_qkv_weights": "bfloat16[8192,384]"},
      args={"d_head": "128", "num_q_heads": "1", "num_kv_heads": "1"}, src=T,
      note="test_qkv_cte.py's (batch 1, seqlen 128, hidden 8192, 1 q head, 1 kv head, d_head 128, no "
           "norm) at the kernel's defaults otherwise (no fused RoPE)"),
    K(NKILIB, "src/nkilib_src/nkilib/experimental/mxfp_subkernels/mxfp_load_utils.py", "mxfp_load_performance_wrapper",
      {"tensor": "bfloat16[128,1024]"}, target="trn3", src=T,
      note="test_mxfp_load.py's (M 128, K 1024); the test runs on trn3 only"),
    K(NKILIB, "src/nkilib_src/nkilib/experimental/collectives/topk_reduce.py", "topk_reduce",
      {"input": "bfloat16[32,2882]"}, args={"T": "4", "K": "4"}, src=T,
      note="test_topk_reduce.py's (src_ranks 8, T 4, K 4, H 2880): a (src_ranks * T, H + 2) buffer"),
]

KERNELS += [
    # ---- issue 22's second nki-library pass. Shapes: each kernel's test (the parameter set the note names).
    K(NKILIB, "src/nkilib_src/nkilib/core/attention/attention_bwd.py", "attention_bwd",
      {"q_ref": "bfloat16[1,1,128,2048]", "k_ref": "bfloat16[1,1,128,2048]", "v_ref": "bfloat16[1,1,128,2048]",
       "o_ref": "bfloat16[1,1,128,2048]", "dy_ref": "bfloat16[1,1,128,2048]", "lse_ref": "float32[1,1,128,16]"},
      args={"use_causal_mask": "True", "mixed_precision": "True"}, src=T, timeout=300.0,
      note="test_attention_bwd.py's first base case (batch 1, 1 q / 1 kv head, seq 2048, d_head 128, bfloat16, "
           "causal, no sinks); lse is (B, H, 128, seq // 128) as compute_o_lse returns it"),
    K(NKILIB, "src/nkilib_src/nkilib/experimental/moe/forward/bwmm_shard_on_H.py", "blockwise_mm_baseline_shard_hidden",
      {"hidden_states": "bfloat16[4097,6144]", "expert_affinities_masked": "bfloat16[65552,1]",
       "gate_up_proj_weight": "bfloat16[16,6144,2,336]", "down_proj_weight": "bfloat16[16,336,6144]",
       "token_position_to_id": "int32[24064]", "block_to_expert": "int32[47,1]"},
      args={"block_size": "512", "is_tensor_update_accumulating": "True"}, grid=(2,), src=T, timeout=300.0,
      note="test_bwmm_shard_on_H.py's first set with 16 experts (hidden 6144, tokens 4096, 16 experts, block 512, "
           "top-k 4, intermediate 336, bfloat16, no DMA skip, post-scale; LNC 2), as build_bwmm_shard_h_inputs "
           "builds it: N = 47 blocks (get_n_blocks), T + 1 rows; the sets before it (256 experts) need 271 blocks"),
]

KERNELS += [
    # A config-object argument, built by a driver (manifest docstring, `driver`) as the test builds it.
    K(NKILIB, "src/nkilib_src/nkilib/core/rmsnorm/rmsnorm_quant.py", "rmsnorm_quant_kernel",
      {"hidden": "bfloat16[1,2,16384]", "ln_w": "bfloat16[1,16384]"}, grid=(2,),
      driver="kernel(hidden, ln_w, RmsNormQuantKernelArgs(quantization_type=QuantizationType.ROW, lower_bound=0.0, "
             "norm_type=NormType.NO_NORM, eps=1e-6))",
      driver_imports=("RmsNormQuantKernelArgs", "QuantizationType", "NormType"), src=T,
      note="test_rmsnorm_quant.py's first LNC set (seqlen 2, quant only, row quant, batch 1, hidden 16384, "
           "bfloat16, LNC 2: gamma [1, H], grid (2,))"),
    K(NKILIB, "src/nkilib_src/nkilib/core/topk/rotational_topk.py", "rotational_topk",
      {"inp": "float32[40,4058]"}, grid=(2,),
      driver="kernel(inp, prepare_rotational_constants(create_rotational_topk_config(inp_shape=(40, 4058), "
             "topk_config=create_topk_config(inp_shape=(8, 5, 4058), inp_dtype=nl.float32, k=256, sorted=True, "
             "num_programs=2))))",
      driver_imports=("prepare_rotational_constants", "create_rotational_topk_config", "create_topk_config"), src=T,
      note="test_topk.py's first topk_unit_perms set (LNC 2, batch 8, seqlen 5, vocab 4058, K 256, float32, "
           "sorted): the input reshaped to (B x S, V), the config built and prepared as its input_generator does"),
]

# nki-library kernels defined in test files: laid out with the test helpers (test/utils) beside the
# package, at their repository paths, as the tests import them (`nkilib_src.nkilib...`, `test.utils...`).
# test/utils/core_lock_client.py (remote-host locking of the test harness) imports
# test/utils/scripts/remote_lock_scripts.py, and test_orchestrator.py imports perf_analysis_private.py:
# neither is in the repository at the pinned commit.
_NKILIB_TEST = dict(package_root="src", trees=("test/utils", "test/integration/nkilib/utils"),
                    absent=("test/utils/scripts/remote_lock_scripts.py", "test/utils/perf_analysis_private.py"))
KERNELS += [
    K(NKILIB, "test/unit/test_kernel_tracer.py", "kernel_with_assert_false", {"dummy_out": "float32[1]"}, src=T,
      **_NKILIB_TEST),
    K(NKILIB, "test/integration/nkilib/core/utils/test_tp_broadcast.py", "tp_broadcast_hbm",
      {"src_hbm": "float32[5,7]"}, args={"src_offset": "0", "broadcast_count": "1", "src_select_index": "None"},
      src=T, **_NKILIB_TEST),
    K(NKILIB, "test/integration/nkilib/core/utils/test_cross_partition_copy.py", "kernel_cross_partition_copy",
      {"input_data": "float32[128,8]", "output": "float32[128,8]"},
      args={"src_start_partition": "0", "dst_start_partition": "0", "num_partitions_to_copy": "32",
            "free_dim_size": "8", "total_partitions": "128"}, src=T, **_NKILIB_TEST),
] + [
    K(NKILIB, "test/integration/nkilib/core/utils/test_tensor_view.py", name, {"dummy_out": "float32[1]"},
      args={"shape": "(128, 64)"}, src=T, **_NKILIB_TEST)
    for name in ("kernel_test_reinterpret_cast", "kernel_test_reinterpret_cast_mxfp4",
                 "kernel_test_reinterpret_cast_mxfp8", "kernel_test_reinterpret_cast_bf16_fp16",
                 "kernel_test_reinterpret_cast_cross_size_indirect", "kernel_test_tensorview_from_tensorview",
                 "kernel_test_chained_ops_on_tensorview_input")
] + [
    K(NKILIB, "test/integration/nkilib/experimental/collectives/test_collectives.py", "rank_id_kernel",
      {"in_tensor": "float32[2,128,512]"}, src=T, **_NKILIB_TEST,
      note="a collective test run on 2 ranks upstream; without a collective call the launch is one rank"),
    K(NKILIB, "test/integration/nkilib/experimental/collectives/test_collectives.py", "dma_copy_rank_id_kernel",
      {"in_tensor": "float32[2,128,64]", "rank_id_lookup": "int32[1,2]"}, src=T, **_NKILIB_TEST,
      note="a collective test run on 2 ranks upstream; without a collective call the launch is one rank"),
    K(NKILIB, "test/integration/nkilib/core/max/test_cascaded_max_utils.py", "folded_load_store_dst_kernel",
      {"input_tensor": "float32[16,256]"},
      args={"fold_factor": "2", "src_batch_start": "0", "src_batch_end": "8", "dst_batch_start": "0",
            "dst_batch_end": "8"}, src=T, **_NKILIB_TEST),
    K(NKILIB, "test/integration/nkilib/core/max/test_cascaded_max_utils.py", "folded_load_oversized_sb_kernel",
      {"input_tensor": "float32[8,256]"},
      args={"fold_factor": "2", "batch_start": "0", "batch_end": "8", "sb_extra_cols": "16"}, src=T, **_NKILIB_TEST),
    K(NKILIB, "test/integration/nkilib/core/subkernels/test_rmsnorm_mx_quantize_tkg.py",
      "rmsnorm_mx_quantize_tkg_wrapper", {"inp": "float16[32,1,512]", "gamma": "float16[1,512]"}, grid=(2,),
      target="trn3", src=T, **_NKILIB_TEST,
      note="test_rmsnorm_mx_quantize_tkg's first set (batch 32, seqlen 1, hidden 512, float16, fp8 e4m3 x4): LNC 2 "
           "(the wrapper asserts it), trn3 only (quantize_mx)"),
    K(NKILIB, "test/integration/nkilib/core/qkv/test_qkv_tkg.py",
      "qkv_tkg_sb2sb_wrapper_kernel",
      {"input": "float16[1,4,16384]", "fused_qkv_weights": "float16[16384,384]",
       "gamma_norm_weights": "float16[1,16384]"},
      driver="kernel(input, fused_qkv_weights, fused_norm_type=NormType.RMS_NORM, "
             "gamma_norm_weights=gamma_norm_weights, norm_eps=1e-6, d_head=128, num_q_heads=1, num_kv_heads=1, "
             "store_output_in_sbuf=True)",
      driver_imports=("NormType",), src=T,
      **dict(_NKILIB_TEST, trees=_NKILIB_TEST["trees"] + ("test/integration/nkilib/core/mlp",)),
      note="test_qkv_tkg_sb2sb_accuracy_unit's first set (LNC 1, batch 1, seqlen 4, hidden 16384, fused QKV 384, "
           "1 q / 1 kv head, d_head 128, RMS norm, no quantization, float16), as build_qkv_input builds it"),
    K(NKILIB, "test/integration/nkilib/core/max/test_cascaded_max_utils.py", "folded_load_store_kernel",
      {"input_tensor": "float32[8,256]"}, args={"fold_factor": "1", "batch_start": "0", "batch_end": "8"}, src=T,
      **_NKILIB_TEST),
]

KERNELS += [
    # ---- nki-samples contributed kernels (legacy). Shapes: each file's check_correct() / module driver.
    K(SAMPLES, "contributed/interpolate_bilinear_fwd.py", "interpolate_bilinear_2x_fwd",
      {"src_arr": "float32[2,64,128,128]"}, src=DOC, timeout=300.0),
    K(SAMPLES, "contributed/interpolate_trilinear_fwd.py", "interpolate_trilinear_2x_fwd",
      {"src_arr": "float32[2,64,23,23,23]"}, src=DOC, timeout=300.0),
    K(SAMPLES, "contributed/maxpooling.py", "max_pooling_2d_stride_1", {"in_tensor": "float32[448,448]"},
      args={"pool_size": "3"}, src=DOC),
    K(SAMPLES, "contributed/pipelined_attention.py", "flash_fwd",
      {"q": "bfloat16[1,128,16384]", "k": "bfloat16[1,128,16384]", "v": "bfloat16[1,16384,128]"},
      args={"mixed_precision": "True", "softmax_scale": "0.125", "use_causal_mask": "False"}, grid=(1,),
      prepare=(STRIP,), src=DOC, timeout=300.0,
      note="the file launches flash_fwd[0] on these arrays at module level (stripped: it runs on the device)"),
]

# nki-library's MoE CTE kernels. Shapes: test_moe_cte.py's BWMM_LNC2_TEST_CASES, the first set of each kernel,
# as build_bwmm_inputs (test_moe_cte_common.py) builds them: N blocks from get_n_blocks (shard on block: rounded up
# to the LNC degree), T + 1 token rows unless tokens are skipped, weights [E, H, 2, I] and [E, I, H]; the enum and
# SkipMode arguments through a driver, as moe_cte_kernel_wrapper passes them; LNC 2 (grid (2,)).
_MOE_CTE = "src/nkilib_src/nkilib/core/moe/moe_cte/"
KERNELS += [
    K(NKILIB, _MOE_CTE + "bwmm_shard_on_I.py", "blockwise_mm_baseline_shard_intermediate",
      {"hidden_states": "bfloat16[1025,3072]", "expert_affinities_masked": "bfloat16[8200,1]",
       "gate_up_proj_weight": "bfloat16[8,3072,2,2048]", "down_proj_weight": "bfloat16[8,2048,3072]",
       "token_position_to_id": "int32[7680]", "block_to_expert": "int32[15]",
       "gate_and_up_proj_bias": "bfloat16[8,2,2048]", "down_proj_bias": "bfloat16[8,3072]"},
      driver="kernel(hidden_states, expert_affinities_masked, gate_up_proj_weight, down_proj_weight, 512, "
             "token_position_to_id, block_to_expert, gate_and_up_proj_bias=gate_and_up_proj_bias, "
             "down_proj_bias=down_proj_bias, activation_function=ActFnType.SiLU, skip_dma=SkipMode(False, False), "
             "compute_dtype=nl.bfloat16, is_tensor_update_accumulating=True, "
             "expert_affinities_scaling_mode=ExpertAffinityScaleMode.POST_SCALE, checkpoint_activation=False, "
             "expert_affinity_multiply_on_I=False)",
      driver_imports=("ActFnType", "ExpertAffinityScaleMode", "SkipMode"), grid=(2,), src=T, timeout=300.0,
      note="the first set (hidden 3072, tokens 1024, 8 experts, block 512, top-k 4, intermediate 2048, bfloat16, "
           "no DMA skip, bias, SiLU, post-scale): N = 15 blocks"),
    K(NKILIB, _MOE_CTE + "bwmm_shard_on_I.py", "blockwise_mm_baseline_shard_intermediate_hybrid",
      {"conditions": "int32[164]", "hidden_states": "bfloat16[10240,4096]",
       "expert_affinities_masked": "bfloat16[40960,1]", "gate_up_proj_weight": "bfloat16[4,4096,2,768]",
       "down_proj_weight": "bfloat16[4,768,4096]", "token_position_to_id": "int32[83456]",
       "block_to_expert": "int32[163]"},
      driver="kernel(conditions, hidden_states, expert_affinities_masked, gate_up_proj_weight, down_proj_weight, "
             "512, token_position_to_id, block_to_expert, activation_function=ActFnType.SiLU, "
             "skip_dma=SkipMode(True, False), compute_dtype=nl.bfloat16, is_tensor_update_accumulating=True, "
             "expert_affinities_scaling_mode=ExpertAffinityScaleMode.POST_SCALE)",
      driver_imports=("ActFnType", "ExpertAffinityScaleMode", "SkipMode"), grid=(2,), src=T, timeout=300.0,
      note="its only set not commented out (the E < top-k vector: hidden 4096, tokens 10240, 4 experts, block 512, "
           "top-k 8, intermediate 768, token skip, no bias): N = 163 blocks, N + 1 conditions"),
    K(NKILIB, _MOE_CTE + "bwmm_shard_on_I.py", "blockwise_mm_shard_intermediate_dropping",
      {"hidden_states": "bfloat16[8193,1536]", "expert_affinities_masked": "bfloat16[16386,1]",
       "gate_up_proj_weight": "bfloat16[2,1536,2,6144]", "down_proj_weight": "bfloat16[2,6144,1536]",
       "token_position_to_id": "int32[8192]", "block_to_expert": "int32[2]"},
      driver="kernel(hidden_states, expert_affinities_masked, gate_up_proj_weight, down_proj_weight, 4096, "
             "token_position_to_id, block_to_expert, activation_function=ActFnType.SiLU, "
             "skip_dma=SkipMode(False, False), compute_dtype=nl.bfloat16, is_tensor_update_accumulating=True, "
             "expert_affinities_scaling_mode=ExpertAffinityScaleMode.POST_SCALE, expert_affinity_multiply_on_I=True)",
      driver_imports=("ActFnType", "ExpertAffinityScaleMode", "SkipMode"), grid=(2,), src=T, timeout=300.0,
      note="the first dropping set (hidden 1536, tokens 8192, 2 experts, block 4096, top-k 2, intermediate 6144, "
           "training, affinity multiplied on I): N = E = 2 blocks"),
    K(NKILIB, _MOE_CTE + "bwmm_shard_on_block.py", "bwmm_shard_on_block",
      {"hidden_states": "bfloat16[1024,3072]", "expert_affinities_masked": "bfloat16[8192,1]",
       "gate_up_proj_weight": "bfloat16[8,3072,2,384]", "down_proj_weight": "bfloat16[8,384,3072]",
       "token_position_to_id": "int32[8192]", "block_to_expert": "int32[16]",
       "gate_and_up_proj_bias": "bfloat16[8,2,384]", "down_proj_bias": "bfloat16[8,3072]"},
      driver="kernel(hidden_states=hidden_states, expert_affinities_masked=expert_affinities_masked, "
             "gate_up_proj_weight=gate_up_proj_weight, down_proj_weight=down_proj_weight, block_size=512, "
             "token_position_to_id=token_position_to_id, block_to_expert=block_to_expert, "
             "gate_and_up_proj_bias=gate_and_up_proj_bias, down_proj_bias=down_proj_bias, "
             "activation_function=common_types.ActFnType.Swish, skip_dma=SkipMode(True, False), "
             "compute_dtype=nl.bfloat16, is_tensor_update_accumulating=True, "
             "expert_affinities_scaling_mode=common_types.ExpertAffinityScaleMode.POST_SCALE, n_block_per_iter=1, "
             "gate_clamp_upper_limit=7, gate_clamp_lower_limit=None, up_clamp_upper_limit=8, "
             "up_clamp_lower_limit=-9, block_sharding_strategy=BlockShardStrategy.PING_PONG)",
      driver_imports=("common_types", "SkipMode", "BlockShardStrategy"), grid=(2,), src=T, timeout=300.0,
      note="the first shard-on-block set (hidden 3072, tokens 1024, 8 experts, block 512, top-k 4, intermediate "
           "384, token skip, bias, Swish, post-scale, clamps 7 / 8 / -9): N = 16 blocks (15 rounded up to LNC 2)"),
]

KERNELS += [
    K(NKILIB, "src/nkilib_src/nkilib/experimental/moe/bwd/blockwise_mm_backward.py", "blockwise_mm_bwd",
      {"hidden_states": "bfloat16[8193,5120]", "expert_affinities_masked": "bfloat16[131088,1]",
       "gate_up_proj_weight": "bfloat16[16,5120,2,256]", "down_proj_weight": "bfloat16[16,256,5120]",
       "gate_up_proj_act_checkpoint_T": "bfloat16[31,2,256,512]", "down_proj_act_checkpoint": "bfloat16[31,512,5120]",
       "token_position_to_id": "int32[15872]", "block_to_expert": "int32[31]",
       "output_hidden_states_grad": "bfloat16[8193,5120]"},
      driver="kernel(hidden_states, expert_affinities_masked, gate_up_proj_weight, down_proj_weight, "
             "gate_up_proj_act_checkpoint_T, down_proj_act_checkpoint, token_position_to_id, block_to_expert, "
             "output_hidden_states_grad, 512, skip_dma=SkipMode(False, False), compute_dtype=nl.bfloat16, "
             "is_tensor_update_accumulating=False, clamp_limits=ClampLimits(None, None, None, None), bias=False, "
             "activation_type=ActFnType.SiLU)",
      driver_imports=("SkipMode", "ClampLimits", "ActFnType"), grid=(2,), src=T, timeout=300.0,
      note="test_bwmm_bwd.py's first set (hidden 5120, tokens 8192, 16 experts, block 512, top-k 1, intermediate "
           "256, bfloat16, no skip, no clamps, no bias, SiLU; LNC 2), as build_bwmm_bwd_inputs builds it: N = 31 "
           "blocks, T + 1 rows, the forward checkpoints [N, 2, I, B] and [N, B, H]"),
]

# The router, activation and clamp options of test_moe_block_tkg.py's first sets, which its MX set shares.
_MOE_BLOCK_TKG_OPTIONS = (
    "top_k=4, router_act_fn=RouterActFnType.SOFTMAX, router_pre_norm=False, norm_topk_prob=False, "
    "expert_affinities_scaling_mode=ExpertAffinityScaleMode.POST_SCALE, hidden_act_fn=ActFnType.Swish, "
    "gate_clamp_upper_limit=7.0, gate_clamp_lower_limit=None, up_clamp_upper_limit=8.0, up_clamp_lower_limit=-6.0, "
    "router_mm_dtype=nl.float16, hidden_actual=None, skip_router_logits=False, is_all_expert=False, rank_id=None)")
KERNELS += [
    K(NKILIB, "src/nkilib_src/nkilib/core/moe_block/moe_block_tkg.py", "moe_block_tkg",
      {"inp": "float16[1,1,3072]", "gamma": "float16[1,3072]", "router_weights": "float16[3072,128]",
       "expert_gate_up_weights": "float16[128,3072,2,384]", "expert_down_weights": "float16[128,384,3072]",
       "router_bias": "float16[1,128]", "expert_gate_up_bias": "float16[128,2,384]",
       "expert_down_bias": "float16[128,3072]"},
      driver="kernel(inp, gamma, router_weights, expert_gate_up_weights, expert_down_weights, router_bias=router_bias, "
             "expert_gate_up_bias=expert_gate_up_bias, expert_down_bias=expert_down_bias, " + _MOE_BLOCK_TKG_OPTIONS,
      driver_imports=("RouterActFnType", "ExpertAffinityScaleMode", "ActFnType"), grid=(2,), src=T, timeout=300.0,
      note="test_moe_block_tkg.py's first MANUAL_PARAMS set that is not MX (the MX ones run on trn3 only): LNC 2, "
           "batch 1, seqlen 1, hidden 3072, intermediate 384, 128 experts, top-k 4, softmax router, Swish, "
           "post-scale, float16, bias, clamps 7 / 8 / -6, as its generate_inputs builds them"),
]

# nki-library's all-expert MX MoE TKG kernel (trn3 only). Its test (test_moe_tkg.py test_moe_tkg_mx) calls the host
# function moe_tkg (moe_tkg.py, not an nki.jit kernel), which masks the affinities into SBUF, builds the MLPParameters
# and calls it; the driver calls moe_tkg the same way (imported by its package path: the kernel's module does not
# import it), with the inputs build_moe_tkg makes: MX weights x4-packed along their contraction dimension
# ([E, 128, 2, H / 512, I] and [E, I_p, I / 512, H]) with uint8 scales, gate/up bias [E, I_p, 2, I / 512, 4].
_MOE_TKG_MOD = '__import__("nkilib.core.moe.moe_tkg.moe_tkg", fromlist=["moe_tkg"])'
KERNELS += [
    K(NKILIB, "src/nkilib_src/nkilib/core/moe/moe_tkg/all_expert_mx_impl.py", "_all_expert_moe_tkg_mx",
      {"hidden_input": "bfloat16[32,3072]", "expert_gate_up_weights": "float4_e2m1fn_x4[1,128,2,6,3072]",
       "expert_down_weights": "float4_e2m1fn_x4[1,128,6,3072]", "expert_affinities": "bfloat16[32,1]",
       "expert_index": "int32[32,1]", "rank_id": "uint32[1,1]", "expert_gate_up_bias": "bfloat16[1,128,2,6,4]",
       "expert_down_bias": "bfloat16[1,3072]", "expert_gate_up_weights_scale": "uint8[1,16,2,6,3072]",
       "expert_down_weights_scale": "uint8[1,16,6,3072]"},
      driver=_MOE_TKG_MOD + ".moe_tkg(hidden_input, expert_gate_up_weights, expert_down_weights, expert_affinities, "
             "expert_index, True, rank_id=rank_id, expert_gate_up_bias=expert_gate_up_bias, "
             "expert_down_bias=expert_down_bias, expert_gate_up_weights_scale=expert_gate_up_weights_scale, "
             "expert_down_weights_scale=expert_down_weights_scale, mask_unselected_experts=False, "
             "expert_affinities_eager=None, expert_affinities_scaling_mode=" + _MOE_TKG_MOD +
             ".ExpertAffinityScaleMode.POST_SCALE, activation_fn=" + _MOE_TKG_MOD + ".ActFnType.Swish, "
             "output_dtype=nl.bfloat16, gate_clamp_upper_limit=7.0, gate_clamp_lower_limit=None, "
             "up_clamp_upper_limit=8.0, up_clamp_lower_limit=-6.0, is_all_expert_dynamic=False, block_size=None)",
      grid=(2,), target="trn3", src=T, timeout=300.0,
      note="test_moe_tkg.py's first MOE_TKG_MX_PARAMS set (LNC 2, tokens 32, hidden 3072, intermediate 3072, 1 "
           "expert, all-expert, Swish, post-scale, MXFP4, bfloat16, clamps 7 / 8 / -6, bias; static), as "
           "build_moe_tkg builds it, through moe_tkg as the test calls it: I_p = 128, 6 H512 and 6 I512 tiles"),
]

# nki-library's MX MoE block test wrapper (trn3 only): the MX weights passed as the unsigned integers NxD passes (uint16
# for MXFP4 x4), which the wrapper reinterprets, as convert_mx_weights_to_uint does; the test helpers it imports
# (test_mlp_common, test_moe_tkg_utils, the model configs) laid out beside it.
KERNELS += [
    K(NKILIB, "test/integration/nkilib/core/moe_block/test_moe_block_tkg.py", "mx_moe_block_tkg_wrapper",
      {"inp": "float16[1,1,3072]", "gamma": "float16[1,3072]", "router_weights": "float16[3072,128]",
       "expert_gate_up_weights": "uint16[128,128,2,6,384]", "expert_down_weights": "uint16[128,96,1,3072]",
       "expert_gate_up_weights_scale": "uint8[128,16,2,6,384]", "expert_down_weights_scale": "uint8[128,12,1,3072]",
       "router_bias": "float16[1,128]", "expert_gate_up_bias": "float16[128,96,2,1,4]",
       "expert_down_bias": "float16[128,3072]"},
      driver="kernel(inp, gamma, router_weights, expert_gate_up_weights, expert_down_weights, "
             "expert_gate_up_weights_scale=expert_gate_up_weights_scale, "
             "expert_down_weights_scale=expert_down_weights_scale, router_bias=router_bias, "
             "expert_gate_up_bias=expert_gate_up_bias, expert_down_bias=expert_down_bias, " + _MOE_BLOCK_TKG_OPTIONS,
      driver_imports=("RouterActFnType", "ExpertAffinityScaleMode", "ActFnType"), grid=(2,), target="trn3", src=T,
      timeout=300.0,
      **dict(_NKILIB_TEST, trees=_NKILIB_TEST["trees"] + ("test/integration/nkilib/core/mlp",
                                                          "test/integration/nkilib/core/moe",
                                                          "test/integration/nkilib/core/moe_block")),
      note="test_moe_block_tkg.py's first MX MANUAL_PARAMS set (LNC 2, selective, batch 1, seqlen 1, hidden 3072, "
           "intermediate 384, 128 experts, top-k 4, softmax router, Swish, post-scale, MXFP4, float16, bias, clamps "
           "7 / 8 / -6), as generate_inputs and gen_moe_mx_weights build it: weights [E, 128, 2, H / 512, I] and "
           "[E, I_p = 96, 1, H] as uint16, scales [E, 16, 2, 6, I] / [E, 12, 1, H], gate/up bias [E, 96, 2, 1, 4]"),
]

# nki-library's attention TKG test wrapper: an AttnTKGConfig and 16 tensors (None where the config uses none), built as
# run_attention_tkg_test builds them.
KERNELS += [
    K(NKILIB, "test/integration/nkilib/core/attention/test_attention_tkg.py", "attn_tkg_wrapper",
      {"q": "bfloat16[4,1,5,128]", "k_active": "bfloat16[4,1,5,128]", "v_active": "bfloat16[4,1,5,128]",
       "k_prior": "bfloat16[4,1,10240,128]", "v_prior": "bfloat16[4,1,10240,128]", "mask": "uint8[5,4,1,5]",
       "inv_freqs": "float32[64,1]", "rope_pos_ids": "float32[4,5]"},
      driver="kernel(q, k_active, v_active, k_prior, v_prior, mask, inv_freqs, rope_pos_ids, None, None, None, "
             "(4, 1, 128, 5), (4, 1, 128, 5), AttnTKGConfig(4, 1, 5, 1024, 10240, 128, 0, tp_k_prior=True, "
             "use_pos_id=True, fuse_rope=True), nl.bfloat16, 2, False)",
      driver_imports=("AttnTKGConfig",), grid=(2,), src=T, timeout=300.0, **_NKILIB_TEST,
      note="attention_tkg_fast_configs' first set (batch 4, 1 q head, 5 active, s_prior 1024 of 10240, d_head 128, "
           "no block KV, K prior transposed, position ids, fused RoPE) with the default AttnTKGTestParams "
           "(bfloat16, no sink, no fp8 KV, no sliding window), LNC 2: the causal active mask [5, 4, 1, 5], "
           "inv_freqs [64, 1], rope_pos_ids [4, 5], the outputs [4, 1, 128, 5]"),
]

KERNELS += [
    K(NKILIB, "test/integration/nkilib/core/utils/test_tensor_view.py", "kernel_test_view_ops",
      {"dummy_out": "float32[1]"},
      driver="kernel(dummy_out, (128, 64), nl.sbuf, ((\"slice\", (0, 0, 64, 1)),), (64, 64), (64, 1), 0)",
      src=T, **_NKILIB_TEST,
      note="test_slice's first set (shape (128, 64), nl.sbuf, slice dim 0 0:64:1), the expected shape, strides "
           "and offset being PyTorch's for that slice, as run_test computes them; the buffer through a driver"),
    K(NKILIB, "test/integration/nkilib/core/utils/test_tensor_view.py", "kernel_dynamic_ops",
      {"input_tensor": "float32[4,2,8]", "dynamic_idx": "int32[1,1]", "vector_offsets_hbm": "int32[128,1]"},
      args={"ops": "((\"select\", (0, 0)),)", "out_shape": "(2, 8)"}, src=T, **_NKILIB_TEST,
      note="test_dynamic_select's first set (input (4, 2, 8), a static select of row 0), as "
           "generate_dynamic_ops_inputs builds it"),
]

# nki-library's collectives taking a ReplicaGroup (built by a driver as the test builds it): multi-rank
# kernels: the launch runs every rank the group names, each on these inputs.
_RG2, _RG4 = "ReplicaGroup([[0, 1]])", "ReplicaGroup([[0, 1, 2, 3]])"
_COLL = "test/integration/nkilib/experimental/collectives/test_collectives.py"
KERNELS += [
    K(NKILIB, _COLL, "all_reduce_hbm_kernel", {"input": "float32[128,512]"}, driver=f"kernel(input, {_RG2})",
      driver_imports=("ReplicaGroup",), grid=(2,), src=T, **_NKILIB_TEST,
      note="test_all_reduce's first set (2 ranks, LNC 2): a [128, 512] input"),
    K(NKILIB, _COLL, "all_gather_hbm_kernel", {"input": "float32[128,512]"}, driver=f"kernel(input, {_RG2}, 2)",
      driver_imports=("ReplicaGroup",), grid=(2,), src=T, **_NKILIB_TEST,
      note="test_all_gather's first set (2 ranks, LNC 2): one rank's [128, 512] slice"),
    K(NKILIB, _COLL, "reduce_scatter_hbm_kernel", {"input": "float32[256,512]"},
      driver=f"kernel(input, {_RG2}, 2)", driver_imports=("ReplicaGroup",), grid=(2,), src=T, **_NKILIB_TEST,
      note="test_reduce_scatter's first set (2 ranks, LNC 2): one rank's [128 * 2, 512] slice"),
    K(NKILIB, _COLL, "all_to_all_hbm_kernel", {"input": "float32[512,512]"}, driver=f"kernel(input, {_RG4})",
      driver_imports=("ReplicaGroup",), grid=(2,), src=T, **_NKILIB_TEST,
      note="test_all_to_all's first set (4 ranks, LNC 2): a [128 * 4, 512] input"),
    K(NKILIB, _COLL, "attn_q_batch_shard",
      {"input": "float32[1,8,1,64]", "iota_workers": "int32[1,4]", "gathered_buf": "float32[2,1,8,1,64]"},
      driver="kernel(input, iota_workers, gathered_buf, 2, ReplicaGroup([[0, 1], [2, 3]]))",
      driver_imports=("ReplicaGroup",), grid=(2,), src=T, **_NKILIB_TEST,
      note="test_batch_shard_input's first set (TP2DP2: 4 ranks, LNC 2, GQA group 2, 1 q head, batch 8, NBSd, "
           "the collective's rank id): one rank's inputs as create_inputs builds them"),
    K(NKILIB, "src/nkilib_src/nkilib/experimental/collectives/sb2sb_allgather.py", "allgather_sb2sb",
      {"inp": "bfloat16[128,512]"}, driver="kernel(inp, ReplicaGroup([list(range(8))]), 8)",
      driver_imports=("ReplicaGroup",), src=T,
      note="test_sb2sb_allgather.py's first set (m 128, k 512, bfloat16, tp 8): one rank's [m, k] input"),
    K(NKILIB, "src/nkilib_src/nkilib/experimental/collectives/sb2sb_allgather.py", "allgather_sb2sb_tiled",
      {"inp": "bfloat16[128,512]"}, driver="kernel(inp, ReplicaGroup([list(range(4))]), 4)",
      driver_imports=("ReplicaGroup",), grid=(2,), src=T,
      note="the tiled test's first set (m 128, k 512, bfloat16, tp 4, LNC 2): one rank's [m, k] input"),
]

KERNELS += [
    K(NKILIB, _MOE_CTE + "moe_cte.py", "moe_cte",
      {"hidden_states": "bfloat16[1025,3072]", "expert_affinities_masked": "bfloat16[8200,1]",
       "gate_up_proj_weight": "bfloat16[8,3072,2,2048]", "down_proj_weight": "bfloat16[8,2048,3072]",
       "token_position_to_id": "int32[7680]", "block_to_expert": "int32[15]", "conditions": "int32[16]"},
      driver="kernel(hidden_states, expert_affinities_masked, gate_up_proj_weight, down_proj_weight, "
             "token_position_to_id, block_to_expert, 512, MoECTESpec(implementation=MoECTEImplementation."
             "shard_on_i_hybrid, shard_on_I=ShardOnIConfig()), conditions=conditions, "
             "activation_function=ActFnType.SiLU, skip_dma=SkipMode(False, False), compute_dtype=nl.bfloat16, "
             "is_tensor_update_accumulating=True, expert_affinities_scaling_mode=ExpertAffinityScaleMode.NO_SCALE)",
      driver_imports=("MoECTESpec", "MoECTEImplementation", "ShardOnIConfig", "ActFnType", "SkipMode",
                      "ExpertAffinityScaleMode"), grid=(2,), src=T, timeout=300.0,
      note="test_moe_cte_unified.py's first set (shard on I, hybrid: hidden 3072, tokens 1024, 8 experts, block "
           "512, top-k 4, intermediate 2048, bfloat16, no skip, no bias, no scale; LNC 2): N = 15 blocks, N + 1 "
           "conditions, the spec built as run_unified_test builds it"),
]

# nki-library's fine-grained collectives: multi-rank kernels (each rank's inputs from its test; checked here
# with every rank of the test's tp_degree, LNC 2, each on these inputs).
KERNELS += [
    K(NKILIB, "src/nkilib_src/nkilib/experimental/collectives/fg_allgather.py", "fine_grained_allgather",
      {"lhs": "bfloat16[1024,4096]"}, args={"tp_degree": "4", "num_groups": "1", "force_hbm_cc": "False"}, grid=(2,),
      src=T, note="test_fg_allgather.py's set (m 1024, K 4096, bfloat16, tp 4, LNC 2): one rank's [m, K] rows"),
    K(NKILIB, "src/nkilib_src/nkilib/experimental/collectives/fgcc.py", "allgather_compute_matmul",
      {"lhs": "bfloat16[1024,4096]", "rhs": "bfloat16[4096,1024]"},
      args={"tp_degree": "4", "num_groups": "1", "force_hbm_cc": "False"}, grid=(2,), src=T,
      note="test_fgcc.py's set (m 1024, K 4096, N 4096, bfloat16, tp 4, LNC 2): one rank's [m, K] rows and "
           "[K, N / tp] columns"),
]

# nki-library's MX MoE CTE kernels (trn3 only). Shapes: test_moe_bwmm_mx_cte.py's unit sets, as build_moe_bwmm_mx_cte
# (test_utils.py) builds them: N blocks from get_n_blocks (shard on I: one block per iteration; shard on block:
# rounded up to the LNC degree), T rows when tokens are skipped (T + 1 otherwise), the MX weights packed x4 along
# their contraction dimension ([E, 128, 2, H / 512, I] and [E, I_p, I / 512, H], the x4 dtype as the test passes
# it) with uint8 scales [E, 16, 2, H / 512, I] / [E, I_p / 8, I / 512, H], bias [E, I_p, 2, I / 512, 4] and [E, H];
# the enums, SkipMode and weight_dtype through a driver; LNC 2 (grid (2,)).
_MX_CTE_FP4_I2048 = {
    "hidden_states": "bfloat16[1024,3072]", "expert_affinities_masked": "bfloat16[8192,1]",
    "gate_up_proj_weight": "float4_e2m1fn_x4[8,128,2,6,2048]", "down_proj_weight": "float4_e2m1fn_x4[8,128,4,3072]",
    "token_position_to_id": "int32[5888]", "block_to_expert": "int32[23]",
    "gate_and_up_proj_bias": "bfloat16[8,128,2,4,4]", "down_proj_bias": "bfloat16[8,3072]",
    "gate_up_proj_scale": "uint8[8,16,2,6,2048]", "down_proj_scale": "uint8[8,16,4,3072]"}
_MX_CTE_ARGS = ("activation_function=ActFnType.Swish, skip_dma=SkipMode(True, False), compute_dtype=nl.bfloat16, "
                "weight_dtype=nl.float4_e2m1fn_x4, is_tensor_update_accumulating=True, "
                "expert_affinities_scaling_mode=ExpertAffinityScaleMode.POST_SCALE, gate_clamp_upper_limit=7.0, "
                "gate_clamp_lower_limit=None, up_clamp_lower_limit=-7.0, up_clamp_upper_limit=7.0")
KERNELS += [
    K(NKILIB, _MOE_CTE + "bwmm_shard_on_I_mx.py", "blockwise_mm_shard_intermediate_mx", _MX_CTE_FP4_I2048,
      driver="kernel(hidden_states, expert_affinities_masked, gate_up_proj_weight, down_proj_weight, "
             "token_position_to_id, block_to_expert, gate_and_up_proj_bias, down_proj_bias, gate_up_proj_scale, "
             "down_proj_scale, 256, " + _MX_CTE_ARGS + ")",
      driver_imports=("ActFnType", "ExpertAffinityScaleMode", "SkipMode"), grid=(2,), target="trn3", src=T,
      timeout=300.0,
      note="moe_bwmm_mx_shard_I_unit_perms' first set (hidden 3072, tokens 1024, intermediate 2048, 8 experts, block "
           "256, top-k 4, Swish, post-scale, bfloat16, MXFP4 weights, token skip, bias, static, clamps 7 / - / 7 / "
           "-7; LNC 2): N = 23 blocks, T rows"),
    K(NKILIB, _MOE_CTE + "bwmm_shard_on_I_mx.py", "blockwise_mm_shard_intermediate_mx_hybrid",
      dict(conditions="int32[24]", **_MX_CTE_FP4_I2048),
      driver="kernel(conditions, hidden_states, expert_affinities_masked, gate_up_proj_weight, down_proj_weight, "
             "token_position_to_id, block_to_expert, gate_and_up_proj_bias, down_proj_bias, gate_up_proj_scale, "
             "down_proj_scale, 256, None, " + _MX_CTE_ARGS + ")",
      driver_imports=("ActFnType", "ExpertAffinityScaleMode", "SkipMode"), grid=(2,), target="trn3", src=T,
      timeout=300.0,
      note="moe_bwmm_mx_shard_I_unit_perms' first dynamic set (the first set's sizes, dynamic; LNC 2): N = 23 "
           "blocks, N + 1 conditions, no static block count"),
    K(NKILIB, _MOE_CTE + "bwmm_shard_on_block_mx.py", "bwmm_shard_on_block_mx",
      {"hidden_states": "bfloat16[10240,3072]", "expert_affinities_masked": "bfloat16[1310720,1]",
       "gate_up_proj_weight": "float4_e2m1fn_x4[128,128,2,6,384]",
       "down_proj_weight": "float4_e2m1fn_x4[128,96,1,3072]", "token_position_to_id": "int32[73728]",
       "block_to_expert": "int32[288]", "gate_and_up_proj_bias": "bfloat16[128,96,2,1,4]",
       "down_proj_bias": "bfloat16[128,3072]", "gate_up_proj_scale": "uint8[128,16,2,6,384]",
       "down_proj_scale": "uint8[128,12,1,3072]"},
      driver="kernel(hidden_states, expert_affinities_masked, gate_up_proj_weight, down_proj_weight, "
             "token_position_to_id, block_to_expert, gate_and_up_proj_bias=gate_and_up_proj_bias, "
             "down_proj_bias=down_proj_bias, gate_up_proj_scale=gate_up_proj_scale, down_proj_scale=down_proj_scale, "
             "block_size=256, " + _MX_CTE_ARGS + ")",
      driver_imports=("ActFnType", "ExpertAffinityScaleMode", "SkipMode"), grid=(2,), target="trn3", src=T,
      timeout=300.0,
      note="moe_bwmm_mx_cte_unit_perms' first set (hidden 3072, tokens 10240, intermediate 384, 128 experts, block "
           "256, top-k 4, Swish, post-scale, bfloat16, MXFP4 weights, token skip, bias, static, clamps 7 / - / 7 / "
           "-7; LNC 2): N = 288 blocks (287 rounded up to LNC 2), T rows, I_p = 384 / 4 = 96 (one I512 tile)"),
]

# ---- The MX matmul tutorials (current dialect, trn3 only: NeuronCore-v4's packed x4 types, quantize_mx and
# nc_matmul_mx). Shapes and dtypes: mx_toplevel.py's __main__ (M 128, K 128 x4, N 512): offline MX data as
# generate_stabilized_mx_data packs it (fp8: uint32 [K, M] / [K, N]; fp4: uint8 [K, 2M], two values a byte)
# with contiguous uint8 scales [K // 8, free]; the copy-strided kernels take bfloat16 [512, 128] / [512, 512].
# The mx_dtype arguments are NKI dtypes: a driver passes them.
_MX_TUTORIALS = {SDK: "nki/deep-dives/src/mxfp-matmul/mx_kernels.py",
                 SAMPLES: "src/nki_samples/tutorials/mxfp-matmul/mx_kernels.py"}
_MX_OFFLINE = {"stationary_mx_data": "uint32[128,128]", "stationary_mx_scale": "uint8[16,128]",
               "moving_mx_data": "uint32[128,512]", "moving_mx_scale": "uint8[16,512]"}
_MX_STRIDED = {"stationary_hbm": "bfloat16[512,128]", "moving_hbm": "bfloat16[512,512]"}
for _repo, _path in _MX_TUTORIALS.items():
    KERNELS += [
        K(_repo, _path, "kernel_offline_quantized_mx_matmul", _MX_OFFLINE, target="trn3", src=DOC,
          driver="kernel(stationary_mx_data, stationary_mx_scale, moving_mx_data, moving_mx_scale, nl.float8_e5m2_x4)",
          note="mx_toplevel.py run_offline_quantized_matmul_mx_test(float8_e5m2): M 128, K 128 x4, N 512"),
        K(_repo, _path, "kernel_on_device_quantize_matmul_mx",
          {"stationary_mx_data": "uint8[128,256]", "stationary_mx_scale": "uint8[16,128]",
           "moving_data_bf16": "bfloat16[128,2048]"}, target="trn3", src=DOC,
          driver="kernel(stationary_mx_data, stationary_mx_scale, moving_data_bf16, nl.float4_e2m1fn_x4, "
                 "nl.float8_e5m2_x4)",
          note="mx_toplevel.py run_on_device_quantize_matmul_mx_test(float4_e2m1fn, float8_e5m2): fp4 stationary "
               "packed two a byte, bfloat16 moving [K, N x 4] quantized on the device"),
        K(_repo, _path, "kernel_copy_strided_quantize_matmul_mx", _MX_STRIDED, target="trn3", src=DOC,
          driver="kernel(stationary_hbm, moving_hbm, nl.float8_e5m2_x4, True)",
          note="mx_toplevel.py run_copy_strided_test(float8_e5m2, use_tensor_copy=True): K 512, M 128, N 512"),
    ]
KERNELS.append(K(SDK, _MX_TUTORIALS[SDK], "kernel_copy_strided_quantize_matmul_mx_packed_scale", _MX_STRIDED,
                 target="trn3", src=DOC, driver="kernel(stationary_hbm, moving_hbm, nl.float8_e5m2_x4, True)",
                 note="mx_toplevel.py run_copy_strided_test(float8_e5m2, use_tensor_copy=True, pack_scales=True)"))

# Entry kernels whose upstream tests pass arguments `nki-agent check --arg` (Python literals) cannot
# express: NKI dtypes, config objects, replica groups, view-operation lists. Not swept yet, with the
# reason; a driver (`driver`) can pass all but the multi-rank collectives' replica groups.
_CONFIG_ARG = "its {} argument is a config object, which --arg cannot build; a driver (`driver`) can, not written yet"
_ARG_LIMITS = [
    (NKILIB, "src/nkilib_src/nkilib/experimental/transformer/attention_block_tkg.py", "attention_block_tkg",
     "44 arguments that test_attention_block_tkg.py's input builders derive (QKV, RoPE, KV cache, masks, output "
     "projection); a driver can pass them, not written yet"),
] + [
    (NKILIB, "src/nkilib_src/nkilib/core/moe/moe_tkg/down_projection_mx.py", "down_projection_mx",
     "its operands and its result are SBUF tensors its caller (the MoE TKG kernels) allocates; check passes HBM "
     "inputs, and a driver returning its SBUF result would not be an entry kernel; _all_expert_moe_tkg_mx runs it"),
    (NKILIB, "src/nkilib_src/nkilib/core/moe/moe_tkg/gate_up_projection_mx.py", "gate_up_projection_mx_shard_I",
     "its operands and its results are SBUF tensors its caller (the MoE TKG kernels) allocates; check passes HBM "
     "inputs, and a driver returning its SBUF results would not be an entry kernel; _all_expert_moe_tkg_mx runs it"),
]
KERNELS += [not_swept(r, p, e, why) for r, p, e, why in _ARG_LIMITS]

# Reviewed rejections the real toolchain shares (see the module docstring).
SHARED = {
    # The test file names `Platforms` in a class decorator (line 929, @pytest.mark.platforms(exclude=
    # [Platforms.TRN1, ...])) without importing it: Python raises NameError while importing the file,
    # so pytest cannot collect it either; the kernel defined in it never runs upstream at this pin.
    "nki-library:test/integration/nkilib/core/qkv/test_qkv_tkg.py::qkv_tkg_sb2sb_wrapper_kernel":
        {"nkia_python_exception:NameError"},
    # The SDK's own example of a layout error: its page (nki/examples/layout-violation.py, the
    # programming guide's "layout" section) shows the compiler rejecting 256 rows on 128 partitions.
    "aws-neuron-sdk:nki/examples/layout-violation.py::tensor_exp_kernel_": {"err_num_partition_exceed_arch_limit"},
    # nki-library's own tracer test: the kernel is `assert False`, and the test requires tracing to
    # fail with its message (test/unit/test_kernel_tracer.py, pytest.raises(match="This kernel should fail")).
    "nki-library:test/unit/test_kernel_tracer.py::kernel_with_assert_false": {"nkia_python_exception:AssertionError"},
    # nki-library's own TensorView validation (nkilib/core/utils/kernel_assert.py) refuses a
    # reinterpret_cast across element sizes after a vector select, and its test requires exactly that
    # (test_tensor_view.py test_reinterpret_cast_cross_size_indirect_blocked, pytest.raises(match=...)).
    "nki-library:test/integration/nkilib/core/utils/test_tensor_view.py::kernel_test_reinterpret_cast_cross_size_indirect":
        {"nkia_python_exception:AssertionError"},
    # The kernel returns an SBUF tile; NKI's known-issues page: "The input and output tensors of the
    # top-level NKI kernel ... must be located in HBM. We currently do not support using tensors
    # stored in SBUF or PSUM as the input or output of the top-level kernel."
    "aws-neuron-sdk:nki/test/test_nki_isa_range_select.py::nki_range_select_example": {"nkia_kernel_output_not_shared_hbm"},
}

TRACED_FLOOR = 228  # docs/conformance.md "Coverage sweep", measured 2026-12-04 (the sixth pass: collectives between ranks, writes through retyped views, nc_matmul_mx of several free dimensions)
