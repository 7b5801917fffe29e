// The embedded kernel host, in process: loading kernels from memory and from disk, the calling
// convention, SPMD launches, the import policy and Diagnostics located in the kernel's files.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "runtime/kernel_call.h"
#include "runtime/python/py_host.h"
#include "runtime/python/warm_up.h"
#include "support/python_oracle.h"

namespace nki_agent {
namespace {

class PyHost : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto r = python_host_init();
    ASSERT_TRUE(r) << r.error().format();
  }

  static Result<KernelOutcome> run_src(const std::string& src, const std::string& entry,
                                       std::vector<Tensor> inputs = {}, std::map<std::string, std::string> kwargs = {},
                                       std::vector<int64_t> grid = {}) {
    KernelCall c;
    c.src = kernel_files_from_source(src);
    c.entry = entry;
    c.inputs = std::move(inputs);
    c.kwargs = std::move(kwargs);
    c.grid = std::move(grid);
    return python_run(c);
  }
};

// The warm-up's calls run as written (a warm-up that fails early warms nothing after its failure):
// every one succeeds but the exception report, which fails with the kernel's ValueError; the
// kernels' outputs are what they compute.
TEST_F(PyHost, WarmUpCallsRun) {
  const std::vector<KernelCall> calls = warm_up_calls();
  ASSERT_GE(calls.size(), 4u);
  int kernels = 0;
  for (const KernelCall& c : calls) {
    auto r = python_run(c);
    if (c.entry == "fails") {
      ASSERT_FALSE(r);
      EXPECT_NE(r.error().message.find("ValueError"), std::string::npos) << r.error().format();
      continue;
    }
    ASSERT_TRUE(r) << c.src.main_path << " on " << c.target << ": " << r.error().format();
    EXPECT_TRUE(r->warnings.empty()) << c.src.main_path << ": " << r->warnings.front().format();
    if (c.entry != "kernel") continue;
    ++kernels;
    ASSERT_EQ(r->outputs.size(), 1u);
    EXPECT_EQ(r->outputs[0].shape(), (Shape{256, 512}));
    for (float v : r->outputs[0].to_f32_vector()) ASSERT_TRUE(std::isfinite(v)) << c.src.main_path;
  }
  EXPECT_EQ(kernels, 4);  // both dialects on both targets
}

TEST_F(PyHost, PlainHostFunctionWithNumPy) {
  Tensor a = Tensor::from_f32({2, 3}, std::vector<float>{1, 2, 3, 4, 5, 6});
  auto r = run_src(
      "import numpy as np\n"
      "def entry(a, scale=1.0):\n"
      "    print('shape', a.shape)\n"
      "    return a * scale, np.int32(7), a.sum(axis=1).astype(np.float16)\n",
      "entry", {a}, {{"scale", "2.5"}});
  ASSERT_TRUE(r) << r.error().format();
  ASSERT_EQ(r->outputs.size(), 3u);
  EXPECT_EQ(r->outputs[0].to_f32_vector(), (std::vector<float>{2.5, 5, 7.5, 10, 12.5, 15}));
  EXPECT_EQ(r->outputs[1].dtype(), DType::kInt32);
  EXPECT_EQ(r->outputs[1].ndim(), 0);  // a NumPy scalar stays 0-d
  EXPECT_EQ(r->outputs[1].item(), 7);
  EXPECT_EQ(r->outputs[2].dtype(), DType::kFloat16);
  EXPECT_EQ(r->outputs[2].to_f32_vector(), (std::vector<float>{6, 15}));
  EXPECT_EQ(r->printed, "shape (2, 3)\n");
}

TEST_F(PyHost, NarrowTypesCrossAsTypedArrays) {
  Tensor a = Tensor::from_f32({3}, std::vector<float>{1.0f, 1.00390625f, -2.0f}).astype(DType::kBFloat16);
  auto r = run_src(
      "import numpy as np\n"
      "def entry(a):\n"
      "    assert a.nki_dtype == 'bfloat16', a.nki_dtype\n"
      "    assert a[1:].nki_dtype == 'bfloat16' and a.T.nki_dtype == 'bfloat16'\n"
      "    assert type(a * 2) is np.ndarray and type(a.sum()) is np.float32\n"
      "    return a\n",
      "entry", {a});
  ASSERT_TRUE(r) << r.error().format();
  ASSERT_EQ(r->outputs.size(), 1u);
  EXPECT_EQ(r->outputs[0].dtype(), DType::kBFloat16);
  EXPECT_EQ(r->outputs[0].to_f32_vector(), a.to_f32_vector());
}

// nl.static_cast (legacy dialect) casts a host array into an NKI dtype: bfloat16 values rounded to
// nearest even, as a TypedArray a kernel takes as a bfloat16 tensor; back to np.float32 a plain array.
TEST_F(PyHost, StaticCastRoundsHostArrays) {
  auto r = run_src(
      "import numpy as np\n"
      "import neuronxcc.nki as nki\n"
      "import neuronxcc.nki.language as nl\n"
      "@nki.jit\n"
      "def add_one(a):\n"
      "    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)\n"
      "    nl.store(out, value=nl.add(nl.load(a), 1.0))\n"
      "    return out\n"
      "def entry():\n"
      "    x = np.array([[1.0, 1.00390625, 1.01171875, 3.0]])\n"
      "    b = nl.static_cast(x, nl.bfloat16)\n"
      "    assert b.nki_dtype == 'bfloat16' and b.shape == (1, 4), b\n"
      "    assert list(b[0]) == [1.0, 1.0, 1.015625, 3.0], b\n"
      "    out = nki.simulate_kernel(add_one, b)\n"
      "    assert out.nki_dtype == 'bfloat16', out\n"
      "    f = nl.static_cast(out, np.float32)\n"
      "    assert type(f) is np.ndarray and f.dtype == np.float32, type(f)\n"
      "    assert list(f[0]) == [2.0, 2.0, 2.015625, 4.0], f\n"
      "    i = nl.static_cast(np.array([2.7, -1.5, 300.0]), nl.int8)\n"
      "    assert i.dtype == np.int8 and list(i) == [2, -1, 127], i\n"
      "    return f\n",
      "entry");
  ASSERT_TRUE(r) << r.error().format();
}

// nl.bfloat16 and the float8 / tfloat32 types are NumPy dtypes, as in the toolchain: their real
// sizes, astype rounding to nearest even, NumPy's functions on them in float32, and a kernel
// launched on such an array (or asking np.dtype inside) sees the type.
TEST_F(PyHost, NarrowNlTypesAreNumPyDtypes) {
  auto r = run_src(
      "import numpy as np\n"
      "import neuronxcc.nki as nki\n"
      "import neuronxcc.nki.language as nl\n"
      "@nki.jit\n"
      "def twice(a):\n"
      "    size = np.dtype(nl.bfloat16).itemsize\n"
      "    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)\n"
      "    nl.store(out, value=nl.multiply(nl.load(a), float(size)))\n"
      "    return out\n"
      "def entry():\n"
      "    assert np.dtype(nl.bfloat16).itemsize == 2 and np.dtype(nl.float8_e4m3).itemsize == 1\n"
      "    assert np.dtype(nl.tfloat32).itemsize == 4 and np.dtype(nl.bfloat16) == nl.bfloat16\n"
      "    b = np.array([[1.0, 1.00390625, 1.01171875, 3.0]]).astype(nl.bfloat16)\n"
      "    assert b.dtype == np.dtype(nl.bfloat16) and b.dtype.itemsize == 2, b.dtype\n"
      "    f = b.astype(np.float32)\n"
      "    assert list(f[0]) == [1.0, 1.0, 1.015625, 3.0], f\n"
      "    assert float((b * 2).sum()) == 12.03125 and b[0, 2] == 1.015625 and (b == f).all()\n"
      "    assert list(np.array([300.0]).astype(nl.float8_e4m3).astype(np.float32)) == [np.inf]\n"
      "    out = nki.simulate_kernel(twice, b)\n"
      "    assert out.nki_dtype == 'bfloat16', out\n"
      "    assert list(np.asarray(out, dtype=np.float32)[0]) == [2.0, 2.0, 2.03125, 6.0], out\n"
      "    return out\n",
      "entry");
  ASSERT_TRUE(r) << r.error().format();
}

TEST_F(PyHost, BothDialectsDecorateAndLaunch) {
  for (const char* pkg : {"import nki", "import neuronxcc.nki as nki"}) {
    std::string src = std::string(pkg) +
                      "\n"
                      "import numpy as np\n"
                      "seen = []\n"
                      "@nki.jit\n"
                      "def k1(a):\n"
                      "    return a\n"
                      "@nki.jit(mode='simulation')\n"
                      "def k2(a):\n"
                      "    return a\n"
                      "@nki.baremetal(save_neff_name='file.neff')\n"
                      "def k3(a):\n"
                      "    return a\n"
                      "def host(a):\n"
                      "    outs = [k1(a), k2(a), k3(a), nki.simulate_kernel(k1, a), nki.simulate(k1)(a)]\n"
                      "    for o in outs:\n"
                      "        assert isinstance(o, np.ndarray) and (o == a).all(), type(o)\n"
                      "    return outs[0]\n";
    Tensor a = Tensor::from_f32({2, 2}, std::vector<float>{1, 2, 3, 4});
    auto r = run_src(src, "host", {a});
    ASSERT_TRUE(r) << pkg << ": " << r.error().format();
    EXPECT_EQ(r->outputs[0].to_f32_vector(), a.to_f32_vector());
  }
}

// A kernel that returns a view of its output (`out.reshape(...)`, as nki-library's cascaded_max
// does) hands host code the array the view shows, not the view.
TEST_F(PyHost, AReturnedViewReachesHostCodeAsAnArray) {
  const std::string src =
      "import numpy as np\n"
      "import nki\n"
      "import nki.language as nl\n"
      "@nki.jit\n"
      "def k(a):\n"
      "    out = nl.ndarray((1, 4), dtype=a.dtype, buffer=nl.shared_hbm)\n"
      "    nl.store(out, nl.multiply(nl.load(a), 3.0))\n"
      "    return out.reshape((4,))\n"
      "def host(a):\n"
      "    r = k(a)\n"
      "    assert isinstance(r, np.ndarray) and r.shape == (4,), type(r)\n"
      "    return r + 1\n";
  Tensor a = Tensor::from_f32({1, 4}, std::vector<float>{1, 2, 3, 4});
  auto r = run_src(src, "host", {a});
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(r->outputs[0].to_f32_vector(), (std::vector<float>{4, 7, 10, 13}));
}

TEST_F(PyHost, SpmdGridRunsEveryInstance) {
  const std::string src =
      "import nki\n"
      "import nki.language as nl\n"
      "ids = []\n"
      "@nki.jit\n"
      "def k(a):\n"
      "    assert nl.num_programs() == 6 and nl.num_programs(1) == 3 and nl.program_ndim() == 2\n"
      "    ids.append((nl.program_id(0), nl.program_id(axis=1)))\n"
      "    return a\n"
      "def host(a):\n"
      "    k[2, 3](a)\n"
      "    assert ids == [(i, j) for i in range(2) for j in range(3)], ids\n"
      "    return a\n";
  auto r = run_src(src, "host", {Tensor::zeros({1}, DType::kFloat32)});
  ASSERT_TRUE(r) << r.error().format();
  // The entry itself launched with a grid from the caller.
  auto g = run_src("import nki\n@nki.jit\ndef k(a):\n    return a\n", "k", {Tensor::zeros({1}, DType::kInt8)}, {}, {4});
  ASSERT_TRUE(g) << g.error().format();
  auto bad = run_src("import nki\n@nki.jit\ndef k(a):\n    return a\ndef host(a):\n    return k[0](a)\n", "host",
                     {Tensor::zeros({1}, DType::kInt8)});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, "nkia_bad_launch");
}

TEST_F(PyHost, MainBlocksDoNotRunAndFrameworkImportsAreStandIns) {
  const std::string src =
      "import torch\n"
      "import torch_xla.core.xla_model as xm\n"
      "from jax import numpy as jnp\n"
      "class M(torch.nn.Module):\n"
      "    pass\n"
      "def entry(a):\n"
      "    return a\n"
      "def uses_torch(a):\n"
      "    return torch.tensor(a)\n"
      "if __name__ == '__main__':\n"
      "    raise SystemExit('must not run')\n";
  auto ok = run_src(src, "entry", {Tensor::zeros({2}, DType::kFloat32)});
  ASSERT_TRUE(ok) << ok.error().format();
  auto used = run_src(src, "uses_torch", {Tensor::zeros({2}, DType::kFloat32)});
  ASSERT_FALSE(used);
  EXPECT_NE(used.error().message.find("torch.tensor() is not available"), std::string::npos) << used.error().format();
  EXPECT_EQ(used.error().loc.line, 9);
}

// Kernel files import as real files do: standard modules are the real ones; third-party packages the
// sandbox lacks are stand-ins that fail only when used.
TEST_F(PyHost, StandardModulesAreRealAndOtherPackagesStandIns) {
  for (const char* stmt :
       {"import os", "import subprocess", "from socket import socket", "import ctypes", "x = __import__('os')",
        "import importlib", "import sys", "import argparse", "import unittest", "import numpy.testing as npt",
        "from scipy.special import softmax", "import pytest"}) {
    auto r = run_src(std::string("def entry():\n    ") + stmt + "\n    return 1\n", "entry");
    ASSERT_TRUE(r) << stmt << ": " << r.error().format();
  }
  auto used = run_src("from scipy.special import softmax\n\ndef entry():\n    return softmax([1.0])\n", "entry");
  ASSERT_FALSE(used);
  EXPECT_NE(used.error().message.find("scipy.special.softmax() is not available"), std::string::npos)
      << used.error().format();
  EXPECT_EQ(used.error().loc.line, 4);
  auto ok = run_src(
      "import math, functools, numpy as np\nfrom dataclasses import dataclass\ndef entry():\n    return "
      "np.float32(math.pi)\n",
      "entry");
  ASSERT_TRUE(ok) << ok.error().format();
  // A stand-in in an annotation (a union, a subscript) stays a stand-in: the file still loads.
  auto annotated = run_src(
      "from metrics.context import MetricsContext\nimport torch\n"
      "def helper(x: torch.Tensor[int]) -> MetricsContext | None:\n    return None\n"
      "def entry() -> None | torch.dtype:\n    return 1\n",
      "entry");
  ASSERT_TRUE(annotated) << annotated.error().format();
}

TEST_F(PyHost, ExceptionsPointIntoTheKernel) {
  const std::string src =
      "def helper(x):\n"
      "    return x[10]\n"
      "\n"
      "def entry(a):\n"
      "    return helper([1, 2])\n";
  auto r = run_src(src, "entry", {Tensor::zeros({1}, DType::kFloat32)});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "nkia_python_exception");
  EXPECT_EQ(r.error().message, "IndexError: list index out of range");
  EXPECT_EQ(r.error().loc.line, 2);
  ASSERT_GE(r.error().notes.size(), 2u);
  EXPECT_EQ(r.error().notes[0], "kernel.py:5 in entry: return helper([1, 2])");
  EXPECT_EQ(r.error().notes[1], "kernel.py:2 in helper: return x[10]");
}

TEST_F(PyHost, SyntaxErrorsAndMissingEntries) {
  auto syn = run_src("def entry(a):\n    return a +\n", "entry");
  ASSERT_FALSE(syn);
  EXPECT_EQ(syn.error().code, "nkia_syntax_error");
  EXPECT_EQ(syn.error().loc.line, 2);
  auto missing = run_src("def kernel_a(a):\n    return a\ndef other(b):\n    return b\n", "kernel_b");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, "nkia_entry_not_found");
  EXPECT_NE(missing.error().hint.find("kernel_a, other"), std::string::npos) << missing.error().hint;
  auto rec = run_src("def f(n):\n    return f(n + 1)\ndef entry():\n    return f(0)\n", "entry");
  ASSERT_FALSE(rec);
  EXPECT_EQ(rec.error().code, "nkia_recursion_limit");
  auto bad_out = run_src("def entry():\n    return 'text'\n", "entry");
  ASSERT_FALSE(bad_out);
  EXPECT_EQ(bad_out.error().code, "nkia_bad_kernel_value");
}

TEST_F(PyHost, PackagesWithRelativeAndAbsoluteImportsLoadFromDisk) {
  testing::ScratchDir dir;
  namespace fs = std::filesystem;
  auto write = [&](const std::string& rel, const std::string& text) {
    fs::path p = fs::path(dir.path()) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  };
  write("lib/__init__.py", "");
  write("lib/utils/__init__.py", "");
  write("lib/utils/helpers.py", "def double(x):\n    return x * 2\n");
  write("lib/ops/__init__.py", "");
  write("lib/ops/scale.py",
        "from ..utils.helpers import double\n"
        "from lib.utils import helpers\n"
        "def entry(a):\n"
        "    assert helpers.double is double\n"
        "    return double(a)\n");
  write("lib/ops/notes.txt", "not python");
  auto files = load_kernel_files(dir.file("lib/ops/scale.py"));
  ASSERT_TRUE(files) << files.error().format();
  EXPECT_EQ(files->main_path, "lib/ops/scale.py");
  EXPECT_EQ(files->files.size(), 5u);  // the five .py files of the package, not notes.txt
  KernelCall c;
  c.src = *files;
  c.entry = "entry";
  c.inputs = {Tensor::from_f32({2}, std::vector<float>{1, 2})};
  auto r = python_run(c);
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(r->outputs[0].to_f32_vector(), (std::vector<float>{2, 4}));

  // Siblings without a package import each other absolutely; errors name the real file.
  write("flat/k.py", "import helper\ndef entry(a):\n    return helper.boom(a)\n");
  write("flat/helper.py", "def boom(a):\n    raise ValueError('bad tile')\n");
  auto flat = load_kernel_files(dir.file("flat/k.py"));
  ASSERT_TRUE(flat) << flat.error().format();
  c.src = *flat;
  auto e = python_run(c);
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().loc.file, (fs::path(dir.path()) / "flat" / "helper.py").string());
  EXPECT_EQ(e.error().loc.line, 2);
  EXPECT_EQ(e.error().message, "ValueError: bad tile");

  auto missing = load_kernel_files(dir.file("nope.py"));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, "nkia_kernel_not_found");
}

// A library folder's packages join a kernel's files (tasks/baseline.h: a baseline's shared
// building blocks): importable by their names, errors located in the library's own files, and
// the folder each file came from carried over the wire.
TEST_F(PyHost, KernelLibrariesJoinTheKernelsFiles) {
  testing::ScratchDir dir;
  namespace fs = std::filesystem;
  auto write = [&](const std::string& rel, const std::string& text) {
    fs::path p = fs::path(dir.path()) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  };
  write("lib/blocks/__init__.py", "");
  write("lib/blocks/scale.py",
        "def triple(a):\n    return a * 3\ndef boom(a):\n    raise ValueError('in the block')\n");
  write("lib/loose.py", "X = 1\n");       // not in a package: not part of the library
  write("lib/notpkg/mod.py", "Y = 1\n");  // a folder without __init__.py: neither
  write("task/kernel.py",
        "from blocks import scale\ndef entry(a):\n    return scale.triple(a)\n"
        "def bad(a):\n    return scale.boom(a)\n");
  auto files = load_kernel_files(dir.file("task/kernel.py"));
  ASSERT_TRUE(files) << files.error().format();
  ASSERT_TRUE(add_kernel_library(*files, dir.file("lib")));
  EXPECT_EQ(files->files.size(), 3u);  // kernel.py, blocks/__init__.py, blocks/scale.py
  EXPECT_TRUE(files->files.count("blocks/scale.py"));
  EXPECT_FALSE(files->files.count("loose.py"));
  EXPECT_EQ(files->real_path("blocks/scale.py"), (fs::path(dir.path()) / "lib" / "blocks" / "scale.py").string());
  EXPECT_EQ(files->real_path("kernel.py"), (fs::path(dir.path()) / "task" / "kernel.py").string());

  KernelCall sent;
  sent.src = *files;
  auto wire = decode_call(encode_call(sent));
  ASSERT_TRUE(wire) << wire.error().format();
  KernelCall c = std::move(*wire);
  EXPECT_EQ(c.src.roots, files->roots);
  c.entry = "entry";
  c.inputs = {Tensor::from_f32({2}, std::vector<float>{1, 2})};
  auto r = python_run(c);
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(r->outputs[0].to_f32_vector(), (std::vector<float>{3, 6}));
  c.entry = "bad";
  auto e = python_run(c);
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().loc.file, (fs::path(dir.path()) / "lib" / "blocks" / "scale.py").string());
  EXPECT_EQ(e.error().loc.line, 4);

  EXPECT_EQ(add_kernel_library(*files, dir.file("nope")).error().code, "nkia_kernel_not_found");
}

TEST_F(PyHost, InputsBindByNameWhenEveryNameIsAParameter) {
  KernelCall c;
  c.src = kernel_files_from_source("def entry(a, b, scale=1):\n    return (a - b) * scale\n");
  c.entry = "entry";
  c.inputs = {Tensor::full({1}, DType::kFloat32, 10), Tensor::full({1}, DType::kFloat32, 3)};
  c.input_names = {"b", "a"};
  c.kwargs = {{"scale", "2"}};
  auto r = python_run(c);
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(r->outputs[0].item(), (3 - 10) * 2);
  c.input_names = {"x", "y"};  // not parameter names: positional
  r = python_run(c);
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(r->outputs[0].item(), (10 - 3) * 2);
  c.input_names = {"a", "scale"};
  c.inputs[1] = Tensor::full({1}, DType::kFloat32, 1);
  auto clash = python_run(c);
  ASSERT_FALSE(clash);
  EXPECT_NE(clash.error().message.find("both as an input array and as --arg"), std::string::npos);
}

TEST_F(PyHost, RunsAreIndependent) {
  auto first = run_src("state = []\ndef entry():\n    state.append(1)\n    return len(state)\n", "entry");
  auto second = run_src("state = []\ndef entry():\n    state.append(1)\n    return len(state)\n", "entry");
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->outputs[0].item(), 1);
  EXPECT_EQ(second->outputs[0].item(), 1);
}

// This process's peak resident memory since the last reset_peak_rss(), in bytes; -1 where the
// system does not offer it.
int64_t peak_rss() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmHWM:") {
      int64_t kib = -1;
      status >> kib;
      return kib * 1024;
    }
    status.ignore(1 << 16, '\n');
  }
  return -1;
}
bool reset_peak_rss() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";  // resets VmHWM to the current resident size (Linux 4.0 and later)
  clear.flush();
  return clear.good();
}

// A timing-only run computes nothing and returns no values: its zero inputs are not copied, its
// kernel's HBM tensors not filled, so a kernel over 1 GiB in and 1 GiB out stays far below that in
// resident memory (before, the input was copied and the output filled: over 2 GiB); its outputs'
// specs come back.
TEST_F(PyHost, ATimingOnlyRunTouchesNoMemoryOfItsLargeTensors) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "under AddressSanitizer every storage is a heap allocation, zeros written out";
#endif
  const std::string src =
      "import neuronxcc.nki as nki\n"
      "import neuronxcc.nki.language as nl\n"
      "@nki.jit\n"
      "def kernel(x):\n"
      "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n"
      "    t = nl.load(x[0:128, 0:512])\n"
      "    nl.store(out[0:128, 0:512], value=nl.exp(t))\n"
      "    return out\n";
  KernelCall c;
  c.src = kernel_files_from_source(src);
  c.entry = "kernel";
  make_timing_only(c, {TensorSpec{"x", DType::kFloat32, {8192, 32768}}});  // 1 GiB
  if (!reset_peak_rss() || peak_rss() < 0) GTEST_SKIP() << "no resettable peak RSS here";
  const int64_t before = peak_rss();
  auto r = python_run(c);
  const int64_t grew = peak_rss() - before;
  ASSERT_TRUE(r) << r.error().format();
  ASSERT_EQ(r->output_specs.size(), 1u);
  EXPECT_EQ(r->output_specs[0].shape, (Shape{8192, 32768}));
  EXPECT_TRUE(r->outputs.empty());
  EXPECT_LT(grew, int64_t{256} << 20) << "peak resident memory grew by " << (grew >> 20) << " MiB";
}

}  // namespace
}  // namespace nki_agent
