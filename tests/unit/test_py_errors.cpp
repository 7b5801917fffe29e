// One path to the user for failures inside the NKI core (runtime/python/py_errors.h): a C++
// exception that escapes an instruction is nkia_internal at the kernel's line, never the kernel's
// own nkia_python_exception; pybind11's deliberate Python errors keep their translation; a
// tensor-library precondition a kernel can reach is a coded Diagnostic before the call (probe:
// a max over a [128, 0] tile); and the Scalar engine's input ranges are warned about.
#include <gtest/gtest.h>
#include <pybind11/embed.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "nki/error_catalogue.h"
#include "runtime/python/py_host.h"

namespace py = pybind11;

namespace nki_agent {
namespace {

class PyErrors : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto r = python_host_init();
    ASSERT_TRUE(r) << r.error().format();
    // Functions of the core that fail the way a broken core does, reachable from kernel code as
    // builtins (the kernel host imports nothing else for them).
    py::module_ builtins = py::module_::import("builtins");
    builtins.attr("core_throws_std") = py::cpp_function([] { throw std::invalid_argument("an empty axis"); });
    builtins.attr("core_throws_internal") = py::cpp_function([] { NKIA_ASSERT(1 + 1 == 3); });
    builtins.attr("core_throws_value_error") = py::cpp_function([] { throw py::value_error("a deliberate one"); });
  }

  static Result<KernelOutcome> run_src(const std::string& src, const std::string& entry, std::vector<Tensor> inputs,
                                       bool compute = true) {
    KernelCall c;
    c.src = kernel_files_from_source(src, "k.py");
    c.entry = entry;
    c.inputs = std::move(inputs);
    c.compute = compute;
    return python_run(c);
  }
};

const char* const kKernelHead =
    "import nki\n"
    "import nki.isa as nisa\n"
    "import nki.language as nl\n"
    "\n"
    "@nki.jit\n";

TEST_F(PyErrors, AStdExceptionInTheCoreIsAnInternalErrorAtTheKernelsLine) {
  auto r = run_src(std::string(kKernelHead) +
                       "def k(x):\n"
                       "    core_throws_std()\n"
                       "    return x\n",
                   "k", {Tensor::zeros({2, 2}, DType::kFloat32)});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "nkia_internal");
  EXPECT_TRUE(is_internal(r.error()));
  EXPECT_NE(r.error().message.find("internal error in nki-agent's core: an empty axis"), std::string::npos)
      << r.error().message;
  EXPECT_EQ(r.error().hint, find_error("nkia_internal")->hint);
  EXPECT_EQ(r.error().loc.line, 7);
}

TEST_F(PyErrors, AnInternalErrorEndsTheRunEvenWhenTheKernelCatchesIt) {
  auto r = run_src(std::string(kKernelHead) +
                       "def k(x):\n"
                       "    try:\n"
                       "        core_throws_internal()\n"
                       "    except Exception:\n"
                       "        pass\n"
                       "    return x\n",
                   "k", {Tensor::zeros({2, 2}, DType::kFloat32)});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "nkia_internal");
  EXPECT_NE(r.error().message.find("assertion failed"), std::string::npos) << r.error().message;
}

TEST_F(PyErrors, PybindsOwnPythonErrorsKeepTheirTranslation) {
  auto r = run_src(std::string(kKernelHead) +
                       "def k(x):\n"
                       "    core_throws_value_error()\n"
                       "    return x\n",
                   "k", {Tensor::zeros({2, 2}, DType::kFloat32)});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "nkia_python_exception");
  EXPECT_NE(r.error().message.find("ValueError: a deliberate one"), std::string::npos) << r.error().message;
  EXPECT_FALSE(is_internal(r.error()));
}

// The probe: nisa.tensor_reduce(op=nl.maximum) over a [128, 0] tile reached the tensor library's
// std::invalid_argument and came out as a bare ValueError (nkia_python_exception, no hint). It is a
// coded Diagnostic with a hint at the instruction now, in timing-only runs too.
TEST_F(PyErrors, AMaxOverAnEmptyAxisIsACodedErrorAtTheInstruction) {
  const std::string src = std::string(kKernelHead) +
                          "def k(x):\n"
                          "    t = nl.ndarray((128, 0), dtype=nl.float32, buffer=nl.sbuf)\n"
                          "    m = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)\n"
                          "    nisa.tensor_reduce(dst=m, op=nl.maximum, data=t, axis=1)\n"
                          "    return x\n";
  for (bool compute : {true, false}) {
    auto r = run_src(src, "k", {Tensor::zeros({128, 1}, DType::kFloat32)}, compute);
    ASSERT_FALSE(r) << compute;
    EXPECT_EQ(r.error().code, "nkia_reduce_empty_axis") << r.error().format();
    EXPECT_EQ(r.error().loc.line, 9);
    EXPECT_FALSE(r.error().hint.empty());
    EXPECT_NE(r.error().message.find("max"), std::string::npos) << r.error().message;
  }
  // A sum over nothing is 0, as in NumPy: still computed.
  auto sum = run_src(std::string(kKernelHead) +
                         "def k(x):\n"
                         "    t = nl.ndarray((128, 0), dtype=nl.float32, buffer=nl.sbuf)\n"
                         "    m = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)\n"
                         "    nisa.tensor_reduce(dst=m, op=nl.add, data=t, axis=1)\n"
                         "    out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)\n"
                         "    nisa.dma_copy(dst=out, src=m)\n"
                         "    return out\n",
                     "k", {Tensor::zeros({128, 1}, DType::kFloat32)});
  ASSERT_TRUE(sum) << sum.error().format();
  EXPECT_EQ(sum->outputs[0].to_f32_vector(), std::vector<float>(128, 0.0f));
}

// nisa.activation(op=...) on [128, 4] inputs x; returns the outcome.
Result<KernelOutcome> activation_of(const char* op, const std::vector<float>& values, bool compute = true) {
  KernelCall c;
  c.src = kernel_files_from_source(std::string(kKernelHead) +
                                       "def k(x):\n"
                                       "    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)\n"
                                       "    nisa.dma_copy(dst=t, src=x)\n"
                                       "    y = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)\n"
                                       "    nisa.activation(dst=y, op=nl." +
                                       op +
                                       ", data=t)\n"
                                       "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n"
                                       "    nisa.dma_copy(dst=out, src=y)\n"
                                       "    return out\n",
                                   "k.py");
  c.entry = "k";
  std::vector<float> all;
  for (int p = 0; p < 128; ++p) all.insert(all.end(), values.begin(), values.end());
  c.inputs = {Tensor::from_f32({128, static_cast<int64_t>(values.size())}, all)};
  c.compute = compute;
  return python_run(c);
}

TEST_F(PyErrors, ScalarEngineInputsOutsideTheirRangeAreWarnedAbout) {
  auto sin = activation_of("sin", {0.5f, -3.0f, 9.0f, 1.0f});
  ASSERT_TRUE(sin) << sin.error().format();
  ASSERT_EQ(sin->warnings.size(), 1u);
  const Diagnostic& w = sin->warnings[0];
  EXPECT_EQ(w.code, "nkia_activation_input_out_of_range");
  EXPECT_EQ(w.severity, Severity::kWarning);
  EXPECT_EQ(w.loc.line, 10);
  EXPECT_NE(w.message.find("sin of 128 inputs"), std::string::npos) << w.message;  // one per partition
  EXPECT_NE(w.message.find("the first: 9"), std::string::npos) << w.message;
  // The simulator computes the exact function all the same.
  EXPECT_NEAR(sin->outputs[0].to_f32_vector()[2], std::sin(9.0f), 1e-6);

  auto log = activation_of("log", {1.0f, 0.0f, 2.0f, 3.0f});
  ASSERT_TRUE(log) << log.error().format();
  ASSERT_EQ(log->warnings.size(), 1u);
  EXPECT_NE(log->warnings[0].message.find("log"), std::string::npos);
  auto rsqrt = activation_of("rsqrt", {1.0f, 1e30f, 4.0f, 9.0f});  // 1e30 > 2^97
  ASSERT_TRUE(rsqrt) << rsqrt.error().format();
  EXPECT_EQ(rsqrt->warnings.size(), 1u);
}

TEST_F(PyErrors, InputsInsideTheRangeAndFunctionsValidEverywhereAreNotWarnedAbout) {
  for (auto [op, values] : {std::pair<const char*, std::vector<float>>{"sin", {0.0f, -3.1f, 3.1f, 1.0f}},
                            {"sqrt", {0.0f, 1.0f, 4.0f, 1e30f}},
                            {"arctan", {0.0f, -1.5f, 1.5f, 0.25f}},
                            {"log", {1e-9f, 1.0f, 1e9f, 2.0f}},
                            {"exp", {-100.0f, 0.0f, 50.0f, 1e30f}},
                            {"tanh", {-1e30f, 0.0f, 1e30f, 3.0f}}}) {
    auto r = activation_of(op, values);
    ASSERT_TRUE(r) << op << ": " << r.error().format();
    EXPECT_TRUE(r->warnings.empty()) << op << ": " << r->warnings[0].format();
  }
  // A timing-only run sees no values, so it cannot warn.
  auto timing = activation_of("sin", {9.0f, 9.0f, 9.0f, 9.0f}, /*compute=*/false);
  ASSERT_TRUE(timing) << timing.error().format();
  EXPECT_TRUE(timing->warnings.empty());
}

}  // namespace
}  // namespace nki_agent
