// nkia-shards: 2 (short tests, each of which would otherwise start a process of its own)
//
// The names public NKI kernels import and call, in both dialects, beyond the instructions: the
// constants modules (nki.isa.constants, nki.language.constants and their legacy twins), nki.dtype in
// annotations, nl.finfo, nl.device_print, no_reorder, Tensor.reshape(shape=), and the collectives the
// simulator refuses (nkia_multicore_not_modelled). Each test runs a small kernel
// through the kernel host and checks what it computes, prints or reports.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>

#include "runtime/python/py_host.h"
#include "tensor/ops.h"

namespace nki_agent {
namespace {

class NkiPublicApi : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto r = python_host_init();
    ASSERT_TRUE(r) << r.error().format();
  }
  static Result<KernelOutcome> run(const std::string& src, const std::string& entry, std::vector<Tensor> inputs,
                                   bool compute = true) {
    KernelCall c;
    c.src = kernel_files_from_source(src);
    c.entry = entry;
    c.inputs = std::move(inputs);
    c.compute = compute;
    return python_run(c);
  }
  static Tensor ramp(const Shape& s) {
    std::vector<float> v(static_cast<size_t>(shape_numel(s)));
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 50) - 20.0f;
    return Tensor::from_f32(s, v);
  }
};

// The enums real kernels import from the constants modules are the nisa objects themselves, in
// both dialects; nki.language.constants gives sizeinbytes and sbuf_min_align.
TEST_F(NkiPublicApi, ConstantsModulesInBothDialects) {
  const char* current = R"py(
import nki
import nki.isa as nisa
import nki.language as nl
from nki.isa.constants import dge_mode, oob_mode, matmul_perf_mode, engine, reduce_cmd, dma_engine
from nki.isa import constants as nisa_constants
import nki.language.constants as lc
from nki.language.constants import sizeinbytes

@nki.jit
def k(a):
    assert dge_mode is nisa.dge_mode and oob_mode is nisa.oob_mode and matmul_perf_mode is nisa.matmul_perf_mode
    assert engine is nisa.engine and reduce_cmd.load_reduce == "load_reduce" and dma_engine.gpsimd_dma
    assert nisa_constants.dge_mode.hwdge == "hwdge"
    assert [sizeinbytes(d) for d in (nl.float32, nl.bfloat16, nl.float8_e4m3, nl.int32, nl.uint16)] == [4, 2, 1, 4, 2]
    assert sizeinbytes(nl.float8_e4m3fn_x4) == 4 and sizeinbytes(nl.float4_e2m1fn_x4) == 2
    assert lc.sbuf_min_align == nl.tile_size.sbuf_min_align == 1
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a, dge_mode=nisa_constants.dge_mode.hwdge)
    nisa.dma_copy(dst=out, src=t)
    return out
)py";
  const char* legacy = R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
from neuronxcc.nki.isa.constants import dge_mode
from neuronxcc.nki.language.constants import sizeinbytes

@nki.jit
def k(a):
    assert dge_mode is nisa.dge_mode and sizeinbytes(a.dtype) == 4
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(a))
    return out
)py";
  Tensor a = ramp({128, 16});
  for (const char* src : {current, legacy}) {
    auto r = run(src, "k", {a});
    ASSERT_TRUE(r) << r.error().format();
    EXPECT_EQ(r->outputs[0].to_f32_vector(), a.to_f32_vector());
  }
}

// nki.dtype is the dtypes' type, as dataclass config objects annotate their fields, and imports as
// the namespace of the dtypes (`import nki.dtype as nt; nt.float8_e4m3`); nl.finfo gives
// NumPy's finfo numbers for the NKI float types and refuses integer types.
TEST_F(NkiPublicApi, DtypeAnnotationsAndFinfo) {
  const char* src = R"py(
import nki
import nki.language as nl
import nki.dtype as nt
from nki.dtype import float8_e4m3
from dataclasses import dataclass

assert nt.bfloat16 == nl.bfloat16 and float8_e4m3 is nl.float8_e4m3 and nt.int32 is nl.int32

@dataclass
class Config:
    compute_dtype: nki.dtype
    scale: float = 1.0

def pick(c: Config) -> nki.dtype:
    return c.compute_dtype

@nki.jit
def k(a):
    c = Config(nl.bfloat16)
    assert isinstance(pick(c), nki.dtype) and pick(c) == nl.bfloat16
    f32, bf16, f16 = nl.finfo(nl.float32), nl.finfo(nl.bfloat16), nl.finfo(nl.float16)
    assert f32.max == 3.4028234663852886e38 and f32.min == -f32.max and f32.eps == 2.0 ** -23
    assert f32.tiny == 2.0 ** -126 and f32.bits == 32 and f32.dtype == nl.float32
    assert bf16.eps == 2.0 ** -7 and bf16.max == 3.3895313892515355e38 and bf16.bits == 16
    assert f16.max == 65504.0 and f16.tiny == 2.0 ** -14 and f16.smallest_subnormal == 2.0 ** -24
    assert nl.finfo(nl.float8_e4m3).max == 240.0 and nl.finfo(nl.float8_e4m3fn).max == 448.0
    assert nl.finfo(nl.float8_e5m2).max == 57344.0 and nl.finfo("bf16").eps == bf16.eps
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.full(a.shape, nl.finfo(a.dtype).min, dtype=a.dtype))
    return out

@nki.jit
def bad(a):
    return nl.finfo(nl.int32).max
)py";
  auto r = run(src, "k", {ramp({4, 8})});
  ASSERT_TRUE(r) << r.error().format();
  for (float v : r->outputs[0].to_f32_vector()) EXPECT_EQ(v, -3.4028234663852886e38f);
  auto b = run(src, "bad", {ramp({4, 8})});
  ASSERT_FALSE(b);
  EXPECT_EQ(b.error().code, "nkia_unknown_dtype") << b.error().format();
}

// nl.device_print prints the prefix and the tile to the kernel's output when the run computes, and
// only the shape in a trace; no_reorder (nl's context manager, nki.compiler's loop directive and
// decorator) changes nothing; reshape takes its shape as shape=.
TEST_F(NkiPublicApi, DevicePrintNoReorderAndReshapeKeyword) {
  const char* current = R"py(
import nki
import nki.isa as nisa
import nki.language as nl

@nki.compiler.no_reorder
def double(t):
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=2.0)

@nki.jit
def k(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    v = t.reshape(shape=(128, 2, 4))
    assert tuple(v.shape) == (128, 2, 4) and tuple(t.reshape((128, 8)).shape) == (128, 8)
    with nl.no_reorder():
        double(v)
    for i in nl.sequential_range(1, directives=nki.compiler.no_reorder()):
        nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=1.0)
    nl.device_print("t[0:1, 0:3] =", t[0:1, 0:3])
    nisa.dma_copy(dst=out, src=t)
    return out
)py";
  const char* legacy = R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def k(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    x = nl.load(a)
    y = x * 2.0 + 1.0
    for i in nl.sequential_range(1, directives=nki.compiler.no_reorder()):
        nl.device_print("t[0:1, 0:3] =", y[0:1, 0:3])
    nl.device_print("mm:", nl.matmul(y[0:2, 0:2], y[0:2, 0:2], transpose_x=True))
    nl.store(out, value=y)
    return out
)py";
  Tensor a = ramp({128, 8});
  std::vector<float> want = a.to_f32_vector();
  for (float& v : want) v = v * 2.0f + 1.0f;
  for (const char* src : {current, legacy}) {
    auto r = run(src, "k", {a});
    ASSERT_TRUE(r) << r.error().format();
    EXPECT_EQ(r->outputs[0].to_f32_vector(), want);
    EXPECT_NE(r->printed.find("t[0:1, 0:3] = [[-39. -37. -35.]]"), std::string::npos) << r->printed;
    // The legacy matmul's result lands in PSUM and prints: y[0:2, 0:2] is [[-39, -37], [-23, -21]].
    if (src == legacy) {
      EXPECT_NE(r->printed.find("mm: [[2050. 1926.]\n [1926. 1810.]]"), std::string::npos) << r->printed;
    }
    auto trace = run(src, "k", {a}, /*compute=*/false);
    ASSERT_TRUE(trace) << trace.error().format();
    EXPECT_NE(trace->printed.find("t[0:1, 0:3] = <float32[1, 3]: values are not computed in a trace>"),
              std::string::npos)
        << trace->printed;
  }
  const char* bad = R"py(
import nki
import nki.language as nl

@nki.jit
def k(a):
    t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    return t.reshape(size=(128, 8))
)py";
  auto b = run(bad, "k", {a});
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message.find("reshape() takes the shape"), std::string::npos) << b.error().format();
}

// The nki.collectives operations whose element counts come from a tensor at run time are refused
// with nkia_multicore_not_modelled naming the API, at the kernel's line (the others run between the
// ranks: test_nki_collectives; sendrecv and core_barrier between LNC=2 cores: test_nki_multicore).
TEST_F(NkiPublicApi, CollectivesOfRunTimeCountsAreRefusedByName) {
  const std::string head = R"py(
import nki
import nki.isa as nisa
import nki.language as nl
import nki.collectives as ncc
import neuronxcc.nki.isa as legacy_isa

@nki.jit
def k(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    group = ncc.ReplicaGroup([[0, 1]])
)py";
  const struct {
    const char* call;
    const char* api;
  } kCases[] = {
      {"ncc.all_gather_v(srcs=[a], dsts=[out], replica_group=group, metadata_tensor=t)",
       "nki.collectives.all_gather_v"},
      {"ncc.all_to_all_v([a], [out], group, t)", "nki.collectives.all_to_all_v"},
  };
  for (const auto& c : kCases) {
    const std::string src = head + "    " + c.call + "\n    return out\n";
    auto r = run(src, "k", {ramp({128, 8})});
    ASSERT_FALSE(r) << c.call;
    EXPECT_EQ(r.error().code, "nkia_multicore_not_modelled") << r.error().format();
    EXPECT_NE(r.error().message.find(c.api), std::string::npos) << r.error().format();
    EXPECT_EQ(r.error().loc.line, 14) << r.error().format();
  }
}

// nisa.tensor_tensor pairs the elements of each partition in order: operands of the same partitions
// and element count but different free shapes ([128, 8] with [128, 2, 4], as nki-library's attention
// TKG kernel passes) are legal; a different count is nkia_free_size_mismatch.
TEST_F(NkiPublicApi, TensorTensorPairsElementsAcrossFreeShapes) {
  const std::string src = R"py(
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def k(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    x = nl.ndarray((128, 8), dtype=a.dtype, buffer=nl.sbuf)
    y = nl.ndarray((128, 2, 4), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=x, src=a)
    nisa.dma_copy(dst=y, src=b)
    nisa.tensor_tensor(dst=x, data1=x, data2=WHICH, op=nl.subtract)
    nisa.dma_copy(dst=out, src=x)
    return out
)py";
  const Tensor a = ramp({128, 8});
  std::vector<float> bv(128 * 8);
  for (size_t i = 0; i < bv.size(); ++i) bv[i] = static_cast<float>(i % 7);
  const Tensor b = Tensor::from_f32({128, 2, 4}, bv);
  auto with = [&](const std::string& which) {
    std::string s = src;
    s.replace(s.find("WHICH"), 5, which);
    return s;
  };
  auto r = run(with("y"), "k", {a, b});
  ASSERT_TRUE(r) << r.error().format();
  const auto got = r->outputs[0].to_f32_vector();
  const auto av = a.to_f32_vector();
  for (size_t i = 0; i < av.size(); ++i) ASSERT_EQ(got[i], av[i] - bv[i]) << i;
  auto bad = run(with("y[:, 0:1, :]"), "k", {a, b});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, "nkia_free_size_mismatch") << bad.error().format();
}

// The elementwise instructions write a destination of the same partitions and element count in
// another free shape, pairing elements in row-major order (nki-library writes a [1, 16] result into
// a [1, 4, 4] tile, a [1, 1, 4] one into [1, 4]; the ISA reference's tile-size rule); a different
// count stays err_store_dst_shape_smaller_than_other_shape.
TEST_F(NkiPublicApi, ElementwiseDestinationsOfAnotherFreeShape) {
  const std::string src = R"py(
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def k(a):
    out = nl.ndarray((4, 16), dtype=a.dtype, buffer=nl.shared_hbm)
    x = nl.ndarray((4, 16), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=x, src=a)
    y = nl.ndarray((4, 4, 4), dtype=a.dtype, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=y, data=x, op0=nl.add, operand0=1.0)
    z = nl.ndarray((4, 2, 8), dtype=a.dtype, buffer=nl.sbuf)
    nisa.scalar_tensor_tensor(dst=z, data=x, op0=nl.multiply, operand0=2.0, op1=nl.add, operand1=y)
    w = nl.ndarray((4, 16), dtype=a.dtype, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=w, data1=z, data2=x, op=nl.subtract)
    nisa.dma_copy(dst=out, src=w)
    return out

@nki.jit
def bad(a):
    x = nl.ndarray((4, 16), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=x, src=a)
    y = nl.ndarray((4, 4, 3), dtype=a.dtype, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=y, data=x, op0=nl.add, operand0=1.0)
    return a
)py";
  const Tensor a = ramp({4, 16});
  auto r = run(src, "k", {a});
  ASSERT_TRUE(r) << r.error().format();
  const auto got = r->outputs[0].to_f32_vector(), x = a.to_f32_vector();
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(got[i], (2 * x[i] + (x[i] + 1)) - x[i]) << i;
  auto b = run(src, "bad", {a});
  ASSERT_FALSE(b);
  EXPECT_EQ(b.error().code, "err_store_dst_shape_smaller_than_other_shape") << b.error().format();
}

// `mask=(ix < a and iy < b)`: NKI's front end joins the predicates of a mask= argument written with
// Python's `and` (the SDK's own nc_match_replace8 example does), as `&` would; `or` is no mask (a
// mask is a box) and stays the error of a predicate asked for a truth value; elsewhere `and` keeps
// Python's meaning. The legacy max8 honours its mask.
TEST_F(NkiPublicApi, LegacyMaskJoinsAndedPredicates) {
  const std::string src = R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

@nki.jit
def k(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    ix, iy = nl.mgrid[0:128, 0:8]
    t = nl.load(a)
    nl.store(out, value=nl.zeros((128, 8), dtype=a.dtype, buffer=nl.sbuf))
    flag = 1 and 2
    assert flag == 2
    nl.store(out[ix, iy], value=nl.add(t, 100.0), mask=(ix < 64 and iy < 4 and ix >= 8))
    return out

@nki.jit
def top(a):
    out = nl.ndarray((128, 8), dtype=a.dtype, buffer=nl.shared_hbm)
    ix, iy = nl.mgrid[0:128, 0:16]
    t = nl.load(a)
    m = nisa.max8(src=t[ix, iy], mask=(ix < 64 and iy < 8))
    nl.store(out[0:64, :], value=m[0:64, :])
    return out

@nki.jit
def either(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    ix, iy = nl.mgrid[0:128, 0:8]
    nl.store(out[ix, iy], value=nl.load(a), mask=(ix < 64 or iy < 4))
    return out
)py";
  const Tensor a = ramp({128, 8});
  auto r = run(src, "k", {a});
  ASSERT_TRUE(r) << r.error().format();
  const auto got = r->outputs[0].to_f32_vector();
  const auto in = a.to_f32_vector();
  for (int64_t p = 0; p < 128; ++p)
    for (int64_t f = 0; f < 8; ++f) {
      const size_t i = static_cast<size_t>(p * 8 + f);
      const bool on = p < 64 && f < 4 && p >= 8;
      ASSERT_EQ(got[i], on ? in[i] + 100.0f : 0.0f) << p << "," << f;
    }
  // max8 under a mask takes the 8 largest of the part it selects (the first 8 of 16 columns).
  const Tensor w = ramp({128, 16});
  auto m = run(src, "top", {w});
  ASSERT_TRUE(m) << m.error().format();
  const auto tops = m->outputs[0].to_f32_vector();
  const auto wv = w.to_f32_vector();
  for (size_t p = 0; p < 64; ++p) {
    std::vector<float> row(wv.begin() + static_cast<long>(p * 16), wv.begin() + static_cast<long>(p * 16 + 8));
    std::sort(row.begin(), row.end(), std::greater<float>());
    for (size_t j = 0; j < 8; ++j) ASSERT_EQ(tops[p * 8 + j], row[j]) << p << "," << j;
  }
  auto e = run(src, "either", {a});
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().code, "err_control_flow_condition_depending_on_arange") << e.error().format();
}

// @nki.jit(platform_target="trn2") compiles the kernel for trn2 whatever the run's target (trn1 here):
// its limits and nisa.get_nc_version(); an unknown target is refused by name.
TEST_F(NkiPublicApi, PlatformTargetOfTheDecoratorChoosesTheTarget) {
  const char* src = R"py(
import nki
import nki.isa as nisa
import nki.language as nl

def body(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    print(nisa.get_nc_version() == nisa.nc_version.gen3)
    t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    nisa.dma_copy(dst=out, src=t)
    return out

on_trn2 = nki.jit(body, platform_target="trn2")
plain = nki.jit(body)
elsewhere = nki.jit(body, platform_target="trn9")
)py";
  auto r = run(src, "on_trn2", {ramp({128, 8})});
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(r->printed, "True\n");
  auto p = run(src, "plain", {ramp({128, 8})});
  ASSERT_TRUE(p) << p.error().format();
  EXPECT_EQ(p->printed, "False\n");
  auto e = run(src, "elsewhere", {ramp({128, 8})});
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().code, "nkia_unknown_target") << e.error().format();
}

// Legacy grid dimensions spread over NeuronCores: nl.nc(2) * 2 and nl.spmd_dim(nl.nc(2), 2) are a
// dimension of 4 instances; nl.store of a number fills the destination (a memset).
TEST_F(NkiPublicApi, LegacyCoreGridDimensionsAndScalarStore) {
  const char* src = R"py(
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def rows(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i = nl.program_id(0)
    nl.store(out[i], value=nl.load(a[i]))
    return out

@nki.jit
def fill(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, 100)
    return out

def host(a):
    assert nl.spmd_dim(nl.nc(2), 2) == 4 and nl.nc(2) * 2 == 4 and 2 * nl.nc(2) == 4
    x = rows[nl.spmd_dim(nl.nc(2), 2)](a)
    y = rows[nl.nc(2) * 2](a)
    z = fill(a)
    assert np.array_equal(x, a) and np.array_equal(y, a) and np.all(z == 100)
    return z
)py";
  auto r = run(src, "host", {ramp({4, 1, 8})});
  ASSERT_TRUE(r) << r.error().format();
  for (float v : r->outputs[0].to_f32_vector()) EXPECT_EQ(v, 100.0f);
}

// Registers and dynamic loops: constant bounds run as a sequential loop (and register_store writes a
// constant); a bound loaded from memory traces the body once in a timing-only run, with the loop
// variable a register usable as a scalar_offset, and is refused when computing
// (nkia_dynamic_loop_not_computed); a register is no Python truth value.
TEST_F(NkiPublicApi, RegistersAndDynamicLoops) {
  const char* src = R"py(
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def constant(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    reg = nisa.register_alloc(1)
    three = nisa.register_alloc()
    nisa.register_move(three, 3)
    for i in nl.dynamic_range(reg, three):
        nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=float(i))
    c = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.register_store(c, three)
    nisa.tensor_scalar(dst=t[0:1, 0:1], data=c, op0=nl.add, operand0=0.0)
    nisa.dma_copy(dst=out, src=t)
    return out

@nki.jit
def loaded(a, n):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    s = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=s, src=n)
    reg = nisa.register_alloc()
    nisa.register_load(reg, s)
    t = nl.ndarray((1, 8), dtype=a.dtype, buffer=nl.sbuf)
    for i in nl.dynamic_range(reg):
        nisa.dma_copy(dst=t, src=a.ap(pattern=[[8, 1], [1, 8]], scalar_offset=i, indirect_dim=0))
        nisa.dma_copy(dst=out.ap(pattern=[[8, 1], [1, 8]], scalar_offset=i, indirect_dim=0), src=t)
    return out

@nki.jit
def truth(a):
    reg = nisa.register_alloc(2)
    if reg:
        return a
    return a
)py";
  const Tensor a = ramp({4, 8});
  auto c = run(src, "constant", {a});
  ASSERT_TRUE(c) << c.error().format();
  const auto got = c->outputs[0].to_f32_vector(), x = a.to_f32_vector();
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_EQ(got[i], i == 0 ? 3.0f : x[i] + 3.0f) << i;  // +1 +2, then [0, 0] = 3

  const std::vector<float> two{2.0f};
  const Tensor n = Tensor::from_f32({1, 1}, two).astype(DType::kInt32);
  auto traced = run(src, "loaded", {a, n}, /*compute=*/false);
  ASSERT_TRUE(traced) << traced.error().format();
  EXPECT_EQ(traced->trace.size(), 3u);  // the load of n, then the body once: two DMAs
  auto computed = run(src, "loaded", {a, n});
  ASSERT_FALSE(computed);
  EXPECT_EQ(computed.error().code, "nkia_dynamic_loop_not_computed") << computed.error().format();
  auto t = run(src, "truth", {a});
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, "err_dynamic_control_flow_not_supported") << t.error().format();
}

// nl.NKIObject subclasses are built with keywords or positions naming their fields, as nki-library's
// kernels build their config objects: annotated fields without a decorator (a field the call omits
// is its default, else None), and a @dataclass whose attributes carry no annotation; an unknown
// keyword is still a TypeError, and a subclass's own __init__ and __post_init__ are kept.
TEST_F(NkiPublicApi, NkiObjectKeywordConstructors) {
  const char* src = R"py(
from dataclasses import dataclass, field
import nki
import nki.language as nl

class Plan(nl.NKIObject):
    tiles: int
    dtype: object
    limit: float
    fused: bool = True

@dataclass
class Section(nl.NKIObject):
    index = None
    start = 7

@dataclass
class Sizes(nl.NKIObject):
    n: int
    parts: list = field(default_factory=list)
    def __post_init__(self):
        self.total = self.n * 2

class Own(nl.NKIObject):
    def __init__(self, v):
        self.v = v + 1

class Child(Plan):
    extra: int = 5

@nki.jit
def k(a):
    p = Plan(tiles=3, dtype=nl.bfloat16)
    assert p.tiles == 3 and p.dtype == nl.bfloat16 and p.limit is None and p.fused is True
    s = Section(index=2)
    assert s.index == 2 and s.start == 7 and Section().index is None
    z = Sizes(4)
    assert z.total == 8 and z.parts == [] and Own(1).v == 2
    c = Child(1, nl.float32, 0.5, extra=9)
    assert (c.tiles, c.limit, c.fused, c.extra) == (1, 0.5, True, 9)
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.full(a.shape, float(p.tiles + s.index + z.total + c.extra), dtype=a.dtype))
    return out

@nki.jit
def bad(a):
    return Section(idx=1)
)py";
  auto r = run(src, "k", {ramp({4, 8})});
  ASSERT_TRUE(r) << r.error().format();
  for (float v : r->outputs[0].to_f32_vector()) EXPECT_EQ(v, 22.0f);
  auto b = run(src, "bad", {ramp({4, 8})});
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message.find("unexpected keyword argument 'idx'"), std::string::npos) << b.error().format();
}

// `t[0, :]` of an SBUF tile is a [1, M] view of partition 0 (a row reshaped to a leading partition
// of 1), which a DMA can fill; a view spanning partitions still cannot move them into the free axis.
TEST_F(NkiPublicApi, RowOfOnChipTileTakesPartitionOfOne) {
  const char* src = R"py(
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def k(a):
    t = nl.ndarray((4, a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)
    nisa.memset(dst=t, value=0.0)
    nisa.dma_copy(dst=t[2, :], src=a[1:2, :])
    out = nl.ndarray((4, a.shape[1]), dtype=a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out

@nki.jit
def bad(a):
    t = nl.ndarray((4, 8), dtype=a.dtype, buffer=nl.sbuf)
    v = t[:, 0:2].reshape((1, 8))
    return v
)py";
  Tensor a = ramp({2, 8});
  auto r = run(src, "k", {a});
  ASSERT_TRUE(r) << r.error().format();
  const auto got = r->outputs[0].to_f32_vector();
  const auto in = a.to_f32_vector();
  for (int p = 0; p < 4; ++p)
    for (int j = 0; j < 8; ++j)
      EXPECT_EQ(got[static_cast<size_t>(p * 8 + j)], p == 2 ? in[static_cast<size_t>(8 + j)] : 0.0f) << p << "," << j;
  auto b = run(src, "bad", {a});
  ASSERT_FALSE(b);
  EXPECT_EQ(b.error().code, "nkia_bad_shape") << b.error().format();
}

// t.ap(..., dtype=d) and t.view(d) read the tensor's bytes as elements of d (the pattern counts
// elements of d), on chip and in HBM; writing through such a view writes the tensor's bytes.
TEST_F(NkiPublicApi, ReinterpretingAccessReadsTheBytes) {
  const char* src = R"py(
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def k(a):
    P, F = a.shape
    t = nl.ndarray((P, F), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    on_chip = nl.ndarray((P, 2 * F), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=on_chip, src=t.ap(pattern=[[2 * F, P], [1, 2 * F]], dtype=nl.bfloat16))
    row = nl.ndarray((1, 4 * F), dtype=nl.uint8, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=row, src=a.ap(pattern=[[4 * F, 1], [1, 4 * F]], offset=4 * F, dtype=nl.uint8))
    whole = nl.ndarray((P, F), dtype=nl.int32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=whole, src=a.view(nl.int32))
    return on_chip, row, whole

@nki.jit
def through(a):
    t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    nisa.memset(dst=t.ap(pattern=[[8, 2], [1, 4]], dtype=nl.bfloat16), value=0.0)
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out
)py";
  Tensor a = ramp({2, 4});
  auto r = run(src, "k", {a});
  ASSERT_TRUE(r) << r.error().format();
  ASSERT_EQ(r->outputs.size(), 3u);
  const auto* in = static_cast<const uint8_t*>(a.data());
  EXPECT_EQ(r->outputs[0].shape(), (Shape{2, 8}));
  EXPECT_EQ(std::memcmp(r->outputs[0].data(), in, 32), 0);       // the 8 float32 as 16 bfloat16 halves
  EXPECT_EQ(std::memcmp(r->outputs[1].data(), in + 16, 16), 0);  // row 1's bytes
  EXPECT_EQ(std::memcmp(r->outputs[2].data(), in, 32), 0);       // float32 bits as int32
  EXPECT_NE(r->outputs[2].to_i64_vector()[1], 0);
  auto b = run(src, "through", {a});
  ASSERT_TRUE(b) << b.error().format();
  const std::vector<float> got = b->outputs[0].to_f32_vector(), want = a.to_f32_vector();
  for (size_t i = 0; i < got.size(); ++i)  // 4 bfloat16 zeros a row: that row's first 2 float32
    EXPECT_EQ(got[i], i % 4 < 2 ? 0.0f : want[i]) << i;
}

// The NKI 0.4 frontend's form: an nl.affine_range used as an index stands for its whole range.
TEST_F(NkiPublicApi, AffineRangeAsAnIndexIsItsRange) {
  const char* src = R"py(
import nki
import nki.language as nl

@nki.jit
def k(a, b):
    ix = nl.affine_range(a.shape[0])
    iy = nl.affine_range(a.shape[1])
    c = nl.add(nl.load(a[ix, iy]), nl.load(b[ix, iy]))
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out[ix, iy], value=c)
    n = 0
    for i in ix:
        n += 1
    assert n == a.shape[0]
    return out
)py";
  Tensor a = ramp({8, 16}), b = ramp({8, 16});
  auto r = run(src, "k", {a, b});
  ASSERT_TRUE(r) << r.error().format();
  const auto got = r->outputs[0].to_f32_vector(), x = a.to_f32_vector();
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], 2 * x[i]) << i;
}

// The current dialect's nl.shared_identity_matrix is an SBUF tile (its API page: "Create an
// identity matrix in SBUF"), or fills dst=; the legacy one stays an HBM constant.
TEST_F(NkiPublicApi, CurrentIdentityMatrixIsInSbuf) {
  const char* src = R"py(
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def k(a):
    i = nl.shared_identity_matrix(8, dtype=nl.float32)
    assert i.buffer == "sbuf", i.buffer
    d = nl.ndarray((8, 8), dtype=nl.float32, buffer=nl.sbuf)
    nl.shared_identity_matrix(n=8, dtype=nl.float32, dst=d)
    t = nl.ndarray((8, 8), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=t, data1=i, data2=d, op=nl.add)
    out = nl.ndarray((8, 8), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out
)py";
  auto r = run(src, "k", {ramp({8, 8})});
  ASSERT_TRUE(r) << r.error().format();
  const auto got = r->outputs[0].to_f32_vector();
  for (int p = 0; p < 8; ++p)
    for (int j = 0; j < 8; ++j) EXPECT_EQ(got[static_cast<size_t>(p * 8 + j)], p == j ? 2.0f : 0.0f) << p << "," << j;
}

// The current dialect's `if t:` on a tensor the kernel was given or allocated asks whether the
// optional tensor is there (nki-library's `if params.expert_index:`); on a tile the kernel computed
// it is still a value the trace does not have.
TEST_F(NkiPublicApi, CurrentIfOnAGivenTensorIsPresence) {
  const char* src = R"py(
import nki
import nki.isa as nisa
import nki.language as nl

def scale_of(b):
    if b:
        return 2.0
    return 1.0

@nki.jit
def k(a, b):
    t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    assert t
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=scale_of(b))
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out

@nki.jit
def bad(a, b):
    if nl.add(nl.load(a), 1.0):
        return a
    return b
)py";
  Tensor a = ramp({4, 8});
  auto r = run(src, "k", {a, ramp({4, 8})});
  ASSERT_TRUE(r) << r.error().format();
  const auto got = r->outputs[0].to_f32_vector(), x = a.to_f32_vector();
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], 2 * x[i]) << i;
  auto b = run(src, "bad", {a, ramp({4, 8})});
  ASSERT_FALSE(b);
  EXPECT_EQ(b.error().code, "err_dynamic_control_flow_not_supported") << b.error().format();
}

// In the legacy dialect `if t:` on one of the kernel's arguments asks whether the optional argument
// was given (the SDK's tensor_scalar_cumulative example: `nl.load(imm1[...]) if imm1 else None`); on a
// tile the kernel loaded or computed it stays err_dynamic_control_flow_not_supported.
TEST_F(NkiPublicApi, LegacyIfOnAnArgumentIsPresence) {
  const char* src = R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def k(a, b=None):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    extra = nl.load(b) if b else None
    nl.store(out, value=nl.add(t, extra) if extra is not None else t)
    return out

@nki.jit
def bad(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    if t:
        nl.store(out, value=t)
    return out
)py";
  const Tensor a = ramp({4, 8});
  auto r = run(src, "k", {a, a});
  ASSERT_TRUE(r) << r.error().format();
  const auto got = r->outputs[0].to_f32_vector(), x = a.to_f32_vector();
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], 2 * x[i]) << i;
  auto one = run(src, "k", {a});
  ASSERT_TRUE(one) << one.error().format();
  EXPECT_EQ(one->outputs[0].to_f32_vector(), x);
  auto b = run(src, "bad", {a});
  ASSERT_FALSE(b);
  EXPECT_EQ(b.error().code, "err_dynamic_control_flow_not_supported") << b.error().format();
}

// nc_matmul(is_transpose=True) on NeuronCore-v3 and later is the PE's bit-accurate transpose: the
// PSUM result may keep the data's type (nc_transpose's rule); on trn1 the result is float32 only.
TEST_F(NkiPublicApi, TransposeModeKeepsTheDataType) {
  const char* src = R"py(
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def k(a):
    P, F = a.shape
    t = nl.ndarray((P, F), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    ident = nl.shared_identity_matrix(P, dtype=a.dtype)
    p = nl.ndarray((F, P), dtype=a.dtype, buffer=nl.psum)
    nisa.nc_matmul(dst=p, stationary=t, moving=ident, is_transpose=True)
    s = nl.ndarray((F, P), dtype=a.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=s, src=p)
    out = nl.ndarray((F, P), dtype=a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=s)
    return out
)py";
  const Tensor a = ramp({128, 64}).astype(DType::kBFloat16);
  for (const char* target : {"trn2", "trn1"}) {
    KernelCall c;
    c.src = kernel_files_from_source(src);
    c.entry = "k";
    c.inputs = {a};
    c.target = target;
    auto r = python_run(c);
    if (std::string(target) == "trn1") {
      ASSERT_FALSE(r);
      EXPECT_EQ(r.error().code, "nkia_matmul_psum_dtype") << r.error().format();
      continue;
    }
    ASSERT_TRUE(r) << r.error().format();
    EXPECT_EQ(r->outputs[0].dtype(), DType::kBFloat16);
    const auto got = r->outputs[0].to_f32_vector(), x = a.to_f32_vector();
    for (int i = 0; i < 64; ++i)
      for (int j = 0; j < 128; ++j)
        EXPECT_EQ(got[static_cast<size_t>(i * 128 + j)], x[static_cast<size_t>(j * 64 + i)]) << i << "," << j;
  }
}

// ncc.psum.alloc / ncc.sbuf.alloc call the allocation function by keyword (idx=, pdim_size=,
// fdim_size=), as the compiler does: a functools.partial binding its first parameter by keyword
// works; a function with other parameter names is called positionally.
TEST_F(NkiPublicApi, AllocationFunctionsAreCalledByKeyword) {
  const char* src = R"py(
import functools
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.compiler as ncc
import neuronxcc.nki.language as nl
from neuronxcc.nki.language import par_dim

def psum_addr(bank_map, idx, pdim_size, fdim_size):
    assert pdim_size == 128 and fdim_size == 512, (pdim_size, fdim_size)
    return (bank_map[idx], 0, 0)

def sbuf_addr(block, partitions, nbytes):
    return (0, 1024 + block[0] * nbytes)

@nki.jit
def k(a):
    out = nl.ndarray((128, 128), dtype=a.dtype, buffer=nl.shared_hbm)
    acc = nl.ndarray((2, par_dim(128), 128), dtype=np.float32,
                     buffer=ncc.psum.alloc(functools.partial(psum_addr, bank_map={(0,): 1, (1,): 5})))
    t = nl.ndarray((par_dim(128), 128), dtype=np.float32, buffer=ncc.sbuf.mod_alloc(base_addr=0))
    t[...] = nl.load(a)
    acc[1, :, :] = nl.add(t, 1.0)
    o = nl.ndarray((2, par_dim(128), 128), dtype=np.float32, buffer=ncc.sbuf.alloc(sbuf_addr))
    o[0, :, :] = nl.copy(acc[1, :, :])
    nl.store(out, value=o[0, :, :])
    return out
)py";
  Tensor a = ramp({128, 128});
  auto r = run(src, "k", {a});
  ASSERT_TRUE(r) << r.error().format();
  std::vector<float> av = a.to_f32_vector(), o = r->outputs[0].to_f32_vector();
  for (size_t i = 0; i < o.size(); ++i) ASSERT_EQ(o[i], av[i] + 1.0f) << i;
}

}  // namespace
}  // namespace nki_agent
