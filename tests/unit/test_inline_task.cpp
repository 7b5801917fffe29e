// Tasks made from a client's inline reference (tasks/inline_task.h): a KernelBench-form reference
// becomes a task with its inputs, parameters and outputs; it is found again by its key; malformed
// ones are refused before anything runs; and hostile ones — reading files or the environment,
// writing files, sockets, new processes, exec, signals to other processes, endless loops — are
// contained by the confined reference worker and answered as the reference's failure.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "runtime/kernel_call.h"
#include "runtime/kernel_service.h"
#include "support/test_files.h"
#include "tasks/inline_task.h"
#include "tasks/verify.h"

namespace nki_agent {
namespace {

namespace fs = std::filesystem;

class InlineTask : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = fs::temp_directory_path() / fmt::format("nkia-inline-test-{}", ::getpid());
    fs::remove_all(root_);
  }
  static void TearDownTestSuite() { fs::remove_all(root_); }

  static InlineTaskOptions options(double seconds = 60) {
    InlineTaskOptions o;
    o.root = root_.string();
    o.inspect_seconds = seconds;
    return o;
  }
  static InlineReference ref(std::string code) {
    InlineReference r;
    r.code = std::move(code);
    return r;
  }
  static size_t folders() {
    size_t n = 0;
    for (const auto& e : fs::directory_iterator(root_)) n += e.path().filename().string().rfind("inline_", 0) == 0;
    return n;
  }

  static inline fs::path root_;
};

// A KernelBench-form module around `forward_body`, with `prelude` at module level.
std::string reference(const std::string& prelude, const std::string& forward_body = "return x * 2",
                      const std::string& inputs = "[torch.randn(128, 64)]") {
  return fmt::format(
      "import os\nimport torch\nimport torch.nn as nn\n{}\n\n"
      "class Model(nn.Module):\n    def forward(self, x):\n        {}\n\n"
      "def get_inputs():\n    return {}\n\ndef get_init_inputs():\n    return []\n",
      prelude, forward_body, inputs);
}

TEST_F(InlineTask, AKernelBenchReferenceBecomesATask) {
  InlineReference r =
      ref("import torch\nimport torch.nn as nn\n\n"
          "class Net(nn.Module):\n"
          "    def __init__(self, d):\n        super().__init__()\n"
          "        self.fc = nn.Linear(d, d)\n        self.norm = nn.LayerNorm(d)\n"
          "    def forward(self, x, ids):\n        return self.norm(self.fc(x)), ids * 2\n\n"
          "def get_inputs():\n    return [torch.rand(128, 256), torch.randint(3, 40, (4, 16))]\n\n"
          "def get_init_inputs():\n    return [256]\n");
  r.entry_point = "Net";
  r.kernel_entry = "fused";
  r.atol = 1e-3;
  auto t = make_inline_task(r, options());
  ASSERT_TRUE(t) << t.error().format();
  EXPECT_TRUE(t->untrusted_reference);
  EXPECT_EQ(t->entry, "fused");
  EXPECT_TRUE(t->variants.empty());
  ASSERT_EQ(t->args.size(), 6u);
  EXPECT_EQ(t->args[0].name, "in0");
  EXPECT_EQ(t->args[0].shape, (Shape{128, 256}));
  EXPECT_EQ(t->args[0].dist, Dist::kUniform);  // torch.rand: values in [0, 1) stay there
  EXPECT_EQ(t->args[1].name, "in1");
  EXPECT_EQ(t->args[1].torch_dtype, "int64");
  EXPECT_EQ(t->args[1].dist, Dist::kRandint);
  EXPECT_GE(t->args[1].low.value_or(-1), 3);
  EXPECT_LE(t->args[1].high.value_or(99), 40);
  for (size_t i = 2; i < 6; ++i) EXPECT_EQ(t->args[i].kind, ArgKind::kParam) << t->args[i].name;
  EXPECT_EQ(t->args[2].name, "fc_weight");
  EXPECT_EQ(t->args[5].name, "norm_bias");
  ASSERT_EQ(t->outputs.size(), 2u);
  EXPECT_EQ(t->outputs[0].shape, (Shape{128, 256}));
  EXPECT_EQ(t->outputs[1].torch_dtype, "int64");
  EXPECT_EQ(t->tolerance_for(DType::kFloat32).atol, 1e-3);

  // Found again by its key, without another folder; another tolerance is another task.
  const size_t before = folders();
  auto again = make_inline_task(r, options());
  ASSERT_TRUE(again) << again.error().format();
  EXPECT_EQ(again->dir, t->dir);
  EXPECT_EQ(folders(), before);
  r.atol = 2e-3;
  auto other = make_inline_task(r, options());
  ASSERT_TRUE(other) << other.error().format();
  EXPECT_NE(other->dir, t->dir);
}

TEST_F(InlineTask, ItsReferenceRunsConfinedAndVerifies) {
  // The confined worker computes the same references as the trusted one: the test task add_fp32's
  // own baseline verifies against add_fp32's task.py sent inline.
  const fs::path tasks = fs::path(NKIA_SOURCE_DIR) / "tests" / "tasks" / "add_fp32";
  auto t = make_inline_task(ref(testing::read_text(tasks / "task.py")), options());
  ASSERT_TRUE(t) << t.error().format();
  KernelServiceOptions so;
  so.worker_path = NKIA_WORKER_BIN;
  auto service = KernelService::create(so);
  ASSERT_TRUE(service) << service.error().format();
  VerifyOptions vo;
  vo.seeds = 2;
  vo.reference.use_cache = false;
  auto v = verify_kernel(*t, kernel_files_from_source(testing::read_text(tasks / "baseline.py"), "kernel.py"),
                         **service, vo);
  ASSERT_TRUE(v) << v.error().format();
  EXPECT_TRUE(v->passed) << v->message;
  auto zeros = verify_kernel(
      *t,
      kernel_files_from_source(
          testing::read_text(fs::path(NKIA_SOURCE_DIR) / "tests" / "tasks" / "hacks" / "zeros_add.py"), "kernel.py"),
      **service, vo);
  ASSERT_TRUE(zeros) << zeros.error().format();
  EXPECT_FALSE(zeros->passed);
}

TEST_F(InlineTask, MalformedReferencesAreRefusedBeforeAnythingRuns) {
  fs::create_directories(root_);
  const size_t before = folders();
  auto code_of = [&](InlineReference r) {
    auto t = make_inline_task(r, options());
    return t ? std::string("made") : t.error().code;
  };
  EXPECT_EQ(code_of(ref("")), "nkia_inline_reference");
  EXPECT_EQ(code_of(ref(std::string(kMaxInlineReferenceBytes + 1, '#'))), "nkia_inline_reference");
  InlineReference r = ref(reference(""));
  r.entry_point = "Model; import os";
  EXPECT_EQ(code_of(r), "nkia_inline_reference");
  r = ref(reference(""));
  r.kernel_entry = "1kernel";
  EXPECT_EQ(code_of(r), "nkia_inline_reference");
  r = ref(reference(""));
  r.rtol = 2;
  EXPECT_EQ(code_of(r), "nkia_inline_reference");
  // Tensors a task cannot hold: float64, a scalar output, too many elements, a non-tensor input.
  EXPECT_EQ(code_of(ref(reference("", "return x * 2", "[torch.randn(8, 8, dtype=torch.float64)]"))),
            "nkia_inline_reference");
  EXPECT_EQ(code_of(ref(reference("", "return x.sum()"))), "nkia_inline_reference");
  EXPECT_EQ(code_of(ref(reference("", "return x", "[torch.empty(1 << 27, dtype=torch.int8)]"))),
            "nkia_inline_reference");
  EXPECT_EQ(code_of(ref(reference("", "return x", "[3]"))), "nkia_inline_reference");
  EXPECT_EQ(folders(), before);  // nothing above was stored, and no half-made folder is left
  for (const auto& e : fs::directory_iterator(root_)) EXPECT_NE(e.path().filename().string()[0], '.') << e.path();
}

TEST_F(InlineTask, HostileReferencesAreContained) {
  ::setenv("NKIA_INLINE_TEST_SECRET", "sk-do-not-leak", 1);
  const fs::path planted = root_ / "planted.txt";
  struct Case {
    const char* name;
    std::string prelude;
    const char* expect;  // in the message
  };
  const std::vector<Case> cases = {
      {"read a file", "open('/etc/passwd').read()", "Operation not permitted"},
      {"read the environment file", "open('/proc/self/environ').read()", "Operation not permitted"},
      {"write a file", fmt::format("open('{}', 'w').write('x')", planted.string()), "Operation not permitted"},
      {"list a folder", "os.listdir('/')", "Operation not permitted"},
      {"a socket", "import socket\nsocket.socket()", "Operation not permitted"},
      {"a new process", "os.fork()", "Operation not permitted"},
      {"exec", "os.execv('/bin/sh', ['sh', '-c', 'id'])", "forbids"},
      {"kill the worker", "os.kill(os.getppid(), 9)", "Operation not permitted"},
  };
  for (const auto& c : cases) {
    auto t = make_inline_task(ref(reference(c.prelude)), options());
    ASSERT_FALSE(t) << c.name;
    EXPECT_EQ(t.error().code, "nkia_reference_failed") << c.name << ": " << t.error().format();
    EXPECT_NE(t.error().message.find(c.expect), std::string::npos) << c.name << ": " << t.error().message;
  }
  EXPECT_FALSE(fs::exists(planted));
  // The host's environment does not reach the reference (a clean one does): it runs and is a task.
  auto env = make_inline_task(
      ref(reference("assert 'NKIA_INLINE_TEST_SECRET' not in os.environ and 'PATH' in os.environ")), options());
  EXPECT_TRUE(env) << env.error().format();
  // os.system returns an error status instead of raising: the reference that ignores it still
  // never ran `id`, and is a task like any other.
  auto ignored = make_inline_task(ref(reference("status = os.system('id')\nassert status != 0")), options());
  EXPECT_TRUE(ignored) << ignored.error().format();
  ::unsetenv("NKIA_INLINE_TEST_SECRET");
}

TEST_F(InlineTask, AnEndlessReferenceIsStoppedAtItsDeadline) {
  const auto t0 = std::chrono::steady_clock::now();
  auto t = make_inline_task(ref(reference("", "while True: pass")), options(/*seconds=*/6));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message.find("ran past"), std::string::npos) << t.error().format();
  EXPECT_LT(seconds, 60);
}

}  // namespace
}  // namespace nki_agent
