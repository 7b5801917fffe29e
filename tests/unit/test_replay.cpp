// Replays of a recorded run (runtime/python/replay.h), in process: a call's later runs of the same
// shapes are replayed, and whatever a replay cannot stand for — a value-dependent failure or warning,
// other shapes, an instruction that is not recorded — runs in Python and gives Python's outcome.
// (Every kernel of tests/kernels is replayed and compared byte for byte in test_kernel_suite.cpp.)
#include <gtest/gtest.h>

#include <cstring>

#include "runtime/kernel_call.h"
#include "runtime/python/py_host.h"
#include "runtime/python/replay.h"
#include "tensor/rng.h"

namespace nki_agent {
namespace {

class Replay : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto r = python_host_init();
    ASSERT_TRUE(r) << r.error().format();
  }

  // A verification's kind of call: the kernel alone, no trace, one set of inputs per run.
  static KernelCall call_of(const std::string& src, std::vector<std::vector<Tensor>> runs) {
    KernelCall c;
    c.src = kernel_files_from_source(src);
    c.entry = "kernel";
    c.kernel_only = true;
    c.collect_trace = false;
    c.runs = static_cast<int>(runs.size());
    for (auto& r : runs)
      for (auto& t : r) c.inputs.push_back(std::move(t));
    return c;
  }

  // Every run through a RunSeries gives what python_run gives for it: the same verdict, output
  // bytes, stored elements and warnings.
  static void expect_python_outcomes(const KernelCall& call, RunSeries& series) {
    for (int i = 0; i < call.runs; ++i) {
      SCOPED_TRACE("run " + std::to_string(i));
      auto got = series.run(i);
      auto want = python_run(call_of_run(call, i));
      ASSERT_EQ(got.has_value(), want.has_value()) << (want ? got.error().format() : want.error().format());
      if (!want) {
        EXPECT_EQ(got.error().code, want.error().code);
        EXPECT_EQ(got.error().message, want.error().message);
        EXPECT_EQ(got.error().loc.line, want.error().loc.line);
        continue;
      }
      ASSERT_EQ(got->outputs.size(), want->outputs.size());
      for (size_t o = 0; o < want->outputs.size(); ++o) {
        const Tensor a = got->outputs[o].contiguous(), b = want->outputs[o].contiguous();
        ASSERT_EQ(a.shape(), b.shape());
        EXPECT_EQ(std::memcmp(a.data(), b.data(), static_cast<size_t>(a.nbytes())), 0) << "output " << o;
      }
      ASSERT_EQ(got->warnings.size(), want->warnings.size());
      for (size_t w = 0; w < want->warnings.size(); ++w)
        EXPECT_EQ(got->warnings[w].format(), want->warnings[w].format());
    }
  }

  static Tensor normal(const Shape& shape, uint64_t seed) {
    Rng rng(seed, 0);
    return random_normal(shape, DType::kFloat32, rng);
  }
};

const char* kLog =
    "import neuronxcc.nki as nki\n"
    "import neuronxcc.nki.language as nl\n"
    "@nki.jit\n"
    "def kernel(x):\n"
    "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n"
    "    for i in nl.affine_range(x.shape[0] // 128):\n"
    "        t = nl.load(x[i * 128:(i + 1) * 128, :])\n"
    "        nl.store(out[i * 128:(i + 1) * 128, :], value=nl.log(t))\n"
    "    return out\n";

// Runs of one shape are replayed; a run of other shapes runs in Python, and the recording stays for
// the runs after it.
TEST_F(Replay, RunsOfOneShapeAreReplayedOthersRunInPython) {
  auto positive = [](const Shape& s, uint64_t seed) {
    Rng rng(seed, 0);
    return random_uniform(s, DType::kFloat32, rng, 0.5, 2.0);
  };
  KernelCall call = call_of(
      kLog, {{positive({256, 64}, 1)}, {positive({128, 64}, 2)}, {positive({256, 64}, 3)}, {positive({256, 64}, 4)}});
  RunSeries series(call);
  expect_python_outcomes(call, series);
  EXPECT_EQ(series.replayed(), 2) << series.why_not();
}

// A process's cases come in case order, their shape sets interleaved: each shape set's first run is
// recorded and replayed on its later ones.
TEST_F(Replay, InterleavedShapesAreEachReplayed) {
  auto positive = [](const Shape& s, uint64_t seed) {
    Rng rng(seed, 0);
    return random_uniform(s, DType::kFloat32, rng, 0.5, 2.0);
  };
  KernelCall call = call_of(kLog, {{positive({256, 64}, 1)},
                                   {positive({128, 32}, 2)},
                                   {positive({256, 64}, 3)},
                                   {positive({128, 32}, 4)},
                                   {positive({256, 64}, 5)}});
  RunSeries series(call);
  expect_python_outcomes(call, series);
  EXPECT_EQ(series.replayed(), 3) << series.why_not();
}

// The Scalar engine's range warning depends on the values: a run whose replay raises warnings the
// recorded run's did not (here: log of negative numbers) runs in Python, and has its warning.
TEST_F(Replay, AReplayThatWarnsOtherwiseRunsInPython) {
  auto uniform = [](double lo, uint64_t seed) {
    Rng rng(seed, 0);
    return random_uniform({128, 64}, DType::kFloat32, rng, lo, 2.0);
  };
  KernelCall call = call_of(kLog, {{uniform(0.5, 1)}, {uniform(-1.0, 2)}, {uniform(0.5, 3)}});
  RunSeries series(call);
  expect_python_outcomes(call, series);
  EXPECT_EQ(series.replayed(), 1) << series.why_not();
  auto warned = python_run(call_of_run(call, 1));
  ASSERT_TRUE(warned);
  ASSERT_FALSE(warned->warnings.empty()) << "the test needs a run that warns";
  EXPECT_EQ(warned->warnings[0].code, "nkia_activation_input_out_of_range");
}

// Rows chosen at run time by an index tile loaded from the input: a row past the end fails only for
// the values of one run. Its replay fails, and the run gives Python's error (located, value and all).
TEST_F(Replay, AValueDependentFailureRunsInPython) {
  const std::string src =
      "import neuronxcc.nki as nki\n"
      "import neuronxcc.nki.language as nl\n"
      "@nki.jit\n"
      "def kernel(x, ids):\n"
      "    out = nl.ndarray((32, 8), dtype=x.dtype, buffer=nl.shared_hbm)\n"
      "    idx = nl.load(ids)\n"
      "    rows = nl.load(x[idx, 0:8])\n"
      "    nl.store(out, value=rows)\n"
      "    return out\n";
  auto ids = [](int64_t bad_at) {
    std::vector<int64_t> v;
    for (int64_t p = 0; p < 32; ++p) v.push_back((p * 7 + 3) % 64);
    if (bad_at >= 0) v[static_cast<size_t>(bad_at)] = 64;
    return Tensor::from_i64({32, 1}, v, DType::kInt32);
  };
  KernelCall call =
      call_of(src, {{normal({64, 8}, 1), ids(-1)}, {normal({64, 8}, 2), ids(9)}, {normal({64, 8}, 3), ids(-1)}});
  RunSeries series(call);
  expect_python_outcomes(call, series);
  EXPECT_EQ(series.replayed(), 1) << series.why_not();
  EXPECT_FALSE(python_run(call_of_run(call, 1))) << "the test needs a run that fails";
}

// An instruction that is not recorded (random numbers: nl.rand) leaves the run unrecorded: every run
// runs in Python.
TEST_F(Replay, AnUnrecordedInstructionRunsEveryRunInPython) {
  const std::string src =
      "import neuronxcc.nki as nki\n"
      "import neuronxcc.nki.language as nl\n"
      "@nki.jit\n"
      "def kernel(x):\n"
      "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n"
      "    r = nl.rand((128, 64), dtype=nl.float32)\n"
      "    nl.store(out, value=nl.add(nl.load(x), r))\n"
      "    return out\n";
  KernelCall call = call_of(src, {{normal({128, 64}, 1)}, {normal({128, 64}, 2)}, {normal({128, 64}, 3)}});
  RunSeries series(call);
  expect_python_outcomes(call, series);
  EXPECT_EQ(series.replayed(), 0);
  EXPECT_NE(series.why_not().find("not recorded"), std::string::npos) << series.why_not();
}

// A call that keeps its trace (a profile) or computes nothing is never replayed.
TEST_F(Replay, CallsThatTraceAreNotReplayed) {
  KernelCall call = call_of(kLog, {{normal({128, 64}, 1)}, {normal({128, 64}, 2)}});
  call.collect_trace = true;
  RunSeries series(call);
  for (int i = 0; i < call.runs; ++i) {
    auto r = series.run(i);
    ASSERT_TRUE(r) << r.error().format();
    EXPECT_FALSE(r->trace.records().empty());
  }
  EXPECT_EQ(series.replayed(), 0);
}

}  // namespace
}  // namespace nki_agent
