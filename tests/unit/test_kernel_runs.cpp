// One kernel on several sets of inputs in one sandboxed process (KernelService::run_each): every
// run's outcome in order, each run as fresh as its own process would make it (modules reloaded,
// values sealed), the first failing run ending the call, and the wire form of such a call and its
// reply refusing what does not add up.
#include <gtest/gtest.h>

#include "runtime/kernel_call.h"
#include "runtime/kernel_service.h"
#include "support/shared_service.h"

namespace nki_agent {
namespace {

class KernelRuns : public testing::SharedServiceTest {
 protected:
  static KernelCall call_of(const std::string& source, bool kernel_only = false) {
    KernelCall c;
    c.src.main_path = "kernel.py";
    c.src.files["kernel.py"] = source;
    c.entry = "entry";
    c.kernel_only = kernel_only;
    return c;
  }

  static std::vector<Tensor> set(std::vector<float> values) {
    const auto n = static_cast<int64_t>(values.size());
    return {Tensor::from_f32({n}, std::move(values))};
  }
};

TEST_F(KernelRuns, EverySetRunsInOrder) {
  // Module-level code runs again for each run: the list starts empty every time.
  auto call = call_of(
      "import numpy as np\n"
      "seen = []\n"
      "def entry(a):\n"
      "    seen.append(1)\n"
      "    return a * 2 + len(seen)\n");
  auto r = service_->run_each(call, {set({1, 2}), set({5}), set({0, 0, 7})}, limits());
  ASSERT_TRUE(r) << r.error().format();
  ASSERT_EQ(r->size(), 3u);
  for (const auto& o : *r) ASSERT_TRUE(o) << o.error().format();
  EXPECT_EQ((*r)[0]->outputs[0].to_f32_vector(), (std::vector<float>{3, 5}));
  EXPECT_EQ((*r)[1]->outputs[0].to_f32_vector(), (std::vector<float>{11}));
  EXPECT_EQ((*r)[2]->outputs[0].to_f32_vector(), (std::vector<float>{1, 1, 15}));
}

TEST_F(KernelRuns, AKernelsFailureEndsTheCall) {
  auto call = call_of(
      "def entry(a):\n"
      "    if a.shape[0] == 3:\n"
      "        raise ValueError('three')\n"
      "    return a + 1\n");
  auto r = service_->run_each(call, {set({1}), set({1, 2, 3}), set({4})}, limits());
  ASSERT_TRUE(r) << r.error().format();
  ASSERT_EQ(r->size(), 2u) << "the run after the failed one does not happen";
  ASSERT_TRUE((*r)[0]);
  EXPECT_EQ((*r)[0]->outputs[0].to_f32_vector(), (std::vector<float>{2}));
  ASSERT_FALSE((*r)[1]);
  EXPECT_NE((*r)[1].error().message.find("three"), std::string::npos) << (*r)[1].error().format();
}

TEST_F(KernelRuns, ValuesStaySealedInEveryRun) {
  // A kernel that keeps its first run's input and reads its values on the second run finds them
  // unreadable: what one run leaves behind opens nothing for the next.
  auto call = call_of(
      "import builtins\n"
      "import numpy as np\n"
      "import nki\n"
      "import nki.language as nl\n"
      "@nki.jit\n"
      "def entry(a):\n"
      "    n = getattr(builtins, 'nkia_test_runs', 0)\n"
      "    builtins.nkia_test_runs = n + 1\n"
      "    if n == 0:\n"
      "        builtins.nkia_test_first = a\n"
      "    else:\n"
      "        builtins.nkia_test_first.numpy()\n"
      "    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)\n"
      "    nl.store(out, nl.load(a))\n"
      "    return out\n",
      /*kernel_only=*/true);
  auto r = service_->run_each(call, {set({1}), set({2}), set({3})}, limits());
  ASSERT_TRUE(r) << r.error().format();
  ASSERT_TRUE((*r)[0]) << (*r)[0].error().format();
  ASSERT_EQ(r->size(), 2u);
  ASSERT_FALSE((*r)[1]);
  EXPECT_EQ((*r)[1].error().code, "nkia_trace_time_value_read") << (*r)[1].error().format();
}

TEST_F(KernelRuns, TheCallsTimeGrowsWithItsRunsAndAHangIsStillStopped) {
  // Each run takes about 0.4 s against a limit of 1 s per run: three fit in the call's 3 s.
  auto slow = call_of(
      "import time\n"
      "def entry(a):\n"
      "    t = time.monotonic()\n"
      "    while time.monotonic() - t < 0.4:\n"
      "        pass\n"
      "    return a\n");
  auto r = service_->run_each(slow, {set({1}), set({2}), set({3})}, limits(1));
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(r->size(), 3u);
  auto hang = call_of("def entry(a):\n    while True:\n        pass\n");
  auto h = service_->run_each(hang, {set({1}), set({2})}, limits(1));
  ASSERT_FALSE(h);
  EXPECT_TRUE(h.error().code == kSandboxTimeout || h.error().code == kSandboxCpuLimit) << h.error().format();
  KernelCall plain = call_of("def entry(a):\n    return a\n");
  plain.inputs = set({1});
  auto ok = service_->run(plain, limits());  // the pool is unharmed
  EXPECT_TRUE(ok) << ok.error().format();
}

TEST_F(KernelRuns, MisusedCallsAreRefused) {
  auto call = call_of("def entry(a):\n    return a\n");
  EXPECT_FALSE(service_->run_each(call, {}, limits()));
  EXPECT_FALSE(service_->run_each(call, {set({1}), {set({1})[0], set({2})[0]}}, limits()));
  KernelCall with_inputs = call;
  with_inputs.inputs = set({1});
  EXPECT_FALSE(service_->run_each(with_inputs, {set({1})}, limits()));
  KernelCall two = call;
  two.runs = 2;
  two.inputs = {set({1})[0], set({2})[0]};
  EXPECT_FALSE(service_->run(two, limits())) << "run() takes one run";
}

TEST(KernelRunsWire, ACallsRunsMustDivideItsInputs) {
  KernelCall c;
  c.src = kernel_files_from_source("def entry(a):\n    return a\n");
  c.entry = "entry";
  c.inputs = {Tensor::from_f32({1}, std::vector<float>{1}), Tensor::from_f32({1}, std::vector<float>{2}),
              Tensor::from_f32({1}, std::vector<float>{3})};
  c.input_names = {"a"};
  c.runs = 3;
  auto back = decode_call(encode_call(c));
  ASSERT_TRUE(back) << back.error().format();
  EXPECT_EQ(back->runs, 3);
  EXPECT_EQ(call_of_run(*back, 2).inputs[0].to_f32_vector(), (std::vector<float>{3}));
  EXPECT_EQ(call_of_run(*back, 2).runs, 1);
  c.runs = 2;
  EXPECT_FALSE(decode_call(encode_call(c))) << "3 inputs do not split into 2 runs";
  c.runs = 0;
  EXPECT_FALSE(decode_call(encode_call(c)));
  c.runs = 3;
  c.zero_inputs = {TensorSpec{"z", DType::kFloat32, {1}}};
  c.input_names = {"a", "z"};
  EXPECT_FALSE(decode_call(encode_call(c))) << "several runs take no zero inputs";
}

TEST(KernelRunsWire, RepliesThatDoNotAddUpAreRefused) {
  KernelOutcome good;
  good.outputs = {Tensor::from_f32({1}, std::vector<float>{4})};
  good.output_specs = {TensorSpec{"out0", DType::kFloat32, {1}}};
  const Result<KernelOutcome> bad = fail("nkia_kernel_exception", "boom");
  Reply reply;
  append_run_outcome(reply, good);
  append_run_outcome(reply, bad);
  const std::string two = reply.flatten();
  auto r = decode_run_outcomes(two, 3);
  ASSERT_TRUE(r) << r.error().format();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_TRUE((*r)[0]);
  EXPECT_EQ((*r)[1].error().code, "nkia_kernel_exception");
  EXPECT_FALSE(decode_run_outcomes(two, 1)) << "more outcomes than runs";
  Reply after_failure = reply;
  append_run_outcome(after_failure, good);
  EXPECT_FALSE(decode_run_outcomes(after_failure.flatten(), 3)) << "an outcome after a failed run";
  EXPECT_FALSE(decode_run_outcomes(two.substr(0, two.size() - 1), 3)) << "a truncated outcome";
  EXPECT_FALSE(decode_run_outcomes(two.substr(0, 5), 3)) << "a truncated length";
  EXPECT_FALSE(decode_run_outcomes("", 3)) << "no outcome at all";
}

}  // namespace
}  // namespace nki_agent
