// Verification end to end on our own small tasks (tests/tasks/): every baseline passes on every
// seed and shape; the adversarial suite (tests/tasks/hacks/, each file naming its task and the
// check that must reject it) is rejected in full; the static policy's rules; broken kernels and
// broken tasks give Diagnostics, never crashes; the reference cache is used; the CLI's verify and
// tasks commands. References are cached under the build folder (content-addressed, so sharing the
// cache between test processes is safe).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "cost/calibrate.h"
#include "cost/hardware.h"
#include "nki/target.h"
#include "runtime/kernel_service.h"
#include "support/cli_runner.h"
#include "support/hack_files.h"
#include "support/shared_service.h"
#include "support/test_files.h"
#include "tasks/speed_cost.h"
#include "tasks/static_policy.h"
#include "tasks/task.h"
#include "tasks/verify.h"

namespace nki_agent {
namespace {

namespace fs = std::filesystem;
using testing::read_text;
using testing::shared_cache;

const fs::path kTasks = fs::path(NKIA_SOURCE_DIR) / "tests" / "tasks";

class TasksVerify : public testing::SharedServiceTest {
 protected:
  static VerifyOptions options(const std::string& cache = shared_cache()) {
    VerifyOptions vo;
    vo.reference.cache_dir = cache;
    vo.parallel = 2;
    return vo;
  }

  static Result<VerifyResult> verify(const std::string& task_dir, const std::string& kernel,
                                     const VerifyOptions& vo = options()) {
    auto task = load_task(task_dir);
    if (!task) return fail(task.error());
    auto files = load_kernel_files(kernel);
    if (!files) return fail(files.error());
    return verify_kernel(*task, *files, *service_, vo);
  }
};

TEST_F(TasksVerify, EveryBaselinePassesOnEverySeedAndShape) {
  for (const char* name : {"add_fp32", "layernorm_affine", "int_scale"}) {
    auto r = verify((kTasks / name).string(), (kTasks / name / "baseline.py").string());
    ASSERT_TRUE(r) << name << ": " << r.error().format();
    EXPECT_TRUE(r->passed) << name << ": " << r->format();
    EXPECT_EQ(r->cases_total, 14) << name;  // 7 seeds x (prompt + ragged)
    EXPECT_EQ(r->cases_passed, 14) << name;
    std::set<std::string> profiles;
    for (const auto& c : r->cases) profiles.insert(c.profile);
    EXPECT_EQ(profiles.size(), 7u) << name;
    EXPECT_FALSE(r->speed.available);
    EXPECT_FALSE(r->speed.reason.empty());
    auto j = r->to_json();
    EXPECT_EQ(j["passed"], true);
    EXPECT_EQ(j["cases"].size(), 14u);
  }
}

TEST_F(TasksVerify, SpeedComesFromTheCostModelAgainstTheBaseline) {
  auto dir = (kTasks / "add_fp32").string();
  VerifyOptions vo = options();
  vo.speed = cost_speed_model();
  auto base = verify(dir, dir + "/baseline.py", vo);
  ASSERT_TRUE(base) << base.error().format();
  ASSERT_TRUE(base->passed) << base->format();
  ASSERT_TRUE(base->speed.available) << base->speed.reason;
  EXPECT_EQ(base->speed.target, "trn1");
  EXPECT_GT(base->speed.candidate_seconds, 0);
  EXPECT_DOUBLE_EQ(base->speed.speedup, 1.0);
  // Roofline of 1.5 MiB over trn1's 410 B/ns HBM: 3.84 us; a real kernel cannot beat it.
  EXPECT_NEAR(base->speed.roofline_seconds, 1572864.0 / 410.0 * 1e-9, 1e-12);
  EXPECT_GT(base->speed.roofline_fraction, 0);
  EXPECT_LT(base->speed.roofline_fraction, 1);
  EXPECT_EQ(base->to_json()["speed"]["speedup"], 1.0);

  auto slow = verify(dir, (kTasks / "slow" / "add_fp32_narrow_tiles.py").string(), vo);
  ASSERT_TRUE(slow) << slow.error().format();
  ASSERT_TRUE(slow->passed) << slow->format();
  ASSERT_TRUE(slow->speed.available) << slow->speed.reason;
  EXPECT_DOUBLE_EQ(slow->speed.baseline_seconds, base->speed.baseline_seconds);  // remembered
  EXPECT_LT(slow->speed.speedup, 0.9) << slow->format();
  EXPECT_NE(slow->format().find("speedup"), std::string::npos);

  // A failing kernel gets no speed, and says why.
  auto hack = verify(dir, (kTasks / "hacks" / "zeros_add.py").string(), vo);
  ASSERT_TRUE(hack) << hack.error().format();
  EXPECT_FALSE(hack->passed);
  EXPECT_FALSE(hack->speed.available);
  EXPECT_EQ(hack->speed.reason, "the kernel did not pass");
}

TEST_F(TasksVerify, ReferencesComeFromTheCacheTheSecondTime) {
  fs::path cache = fs::temp_directory_path() / ("nkia-verify-cache-" + std::to_string(::getpid()));
  fs::remove_all(cache);
  auto dir = (kTasks / "layernorm_affine").string();
  auto first = verify(dir, dir + "/baseline.py", options(cache.string()));
  ASSERT_TRUE(first) << first.error().format();
  EXPECT_TRUE(first->passed) << first->format();
  EXPECT_EQ(first->reference.computed, 21);  // 7 seeds of parameters + 14 cases
  EXPECT_EQ(first->reference.cached, 0);
  EXPECT_FALSE(first->reference.torch.empty());
  auto second = verify(dir, dir + "/baseline.py", options(cache.string()));
  ASSERT_TRUE(second);
  EXPECT_TRUE(second->passed);
  EXPECT_EQ(second->reference.computed, 0);
  EXPECT_EQ(second->reference.cached, 21);
  // Nothing but finished entries (and an empty scratch folder) is left behind.
  for (auto& e : fs::recursive_directory_iterator(cache))
    EXPECT_EQ(e.path().string().find("nkia-ref-"), std::string::npos) << e.path();
  fs::remove_all(cache);
}

TEST_F(TasksVerify, AVerificationThatStoresEntriesPrunesTheCacheToItsLimit) {
  fs::path cache = fs::temp_directory_path() / ("nkia-verify-prune-" + std::to_string(::getpid()));
  fs::remove_all(cache);
  // Two old entries of another task, last used a day ago, far over a 1 KiB limit.
  std::vector<fs::path> old;
  for (char digit : {'e', 'f'}) {
    const std::string key(64, digit);
    old.push_back(cache / key.substr(0, 2) / key);
    fs::create_directories(old.back());
    std::ofstream(old.back() / "out0.npy") << std::string(1 << 20, 'x');
    std::ofstream(old.back() / "meta.json") << "{}";
    const timespec day_ago[2] = {{::time(nullptr) - 86400, 0}, {::time(nullptr) - 86400, 0}};
    ASSERT_EQ(::utimensat(AT_FDCWD, (old.back() / "meta.json").c_str(), day_ago, 0), 0);
  }
  ::setenv("NKIA_REFERENCE_CACHE_MAX_BYTES", "1K", 1);
  auto dir = (kTasks / "add_fp32").string();
  auto first = verify(dir, dir + "/baseline.py", options(cache.string()));
  ::unsetenv("NKIA_REFERENCE_CACHE_MAX_BYTES");
  ASSERT_TRUE(first) << first.error().format();
  EXPECT_TRUE(first->passed) << first->format();
  EXPECT_GT(first->reference.computed, 0);
  for (const auto& p : old) EXPECT_FALSE(fs::exists(p)) << p;
  // The verification's own entries were just used: spared, and served to the next one.
  auto second = verify(dir, dir + "/baseline.py", options(cache.string()));
  ASSERT_TRUE(second) << second.error().format();
  EXPECT_EQ(second->reference.computed, 0);
  fs::remove_all(cache);
}

std::vector<testing::HackFile> hacks() {
  return testing::hack_files(kTasks / "hacks");
}

// The adversarial suite: every hack is rejected, by the check its file names.
TEST_F(TasksVerify, EveryHackIsRejectedByItsCheck) {
  auto all = hacks();
  ASSERT_GE(all.size(), 18u);
  int rejected = 0;
  std::set<std::string> checks;
  for (const auto& h : all) {
    ASSERT_FALSE(h.task.empty() || h.expect.empty()) << h.file << " lacks '# task:' / '# expect:'";
    VerifyOptions vo = options();
    vo.static_policy = h.policy;
    auto r = verify((kTasks / h.task).string(), h.file.string(), vo);
    ASSERT_TRUE(r) << h.file << ": " << r.error().format();
    EXPECT_FALSE(r->passed) << h.file.filename() << " was ACCEPTED:\n" << r->format();
    if (!h.code.empty()) {
      ASSERT_TRUE(r->diagnostic.has_value()) << h.file.filename();
      EXPECT_EQ(r->diagnostic->code, h.code) << h.file.filename() << ": " << r->format();
    }
    EXPECT_TRUE(h.expect.count(r->check))
        << h.file.filename() << ": rejected by '" << r->check << "', expected one of " << *h.expect.begin() << "...\n"
        << r->format();
    EXPECT_FALSE(r->message.empty());
    ASSERT_TRUE(r->diagnostic.has_value());
    rejected += !r->passed;
    checks.insert(r->check);
  }
  std::printf("adversarial suite: %zu hacks, %d rejected, by %zu different checks\n", all.size(), rejected,
              checks.size());
  EXPECT_EQ(rejected, static_cast<int>(all.size()));
}

TEST_F(TasksVerify, FailuresCarryTheNumbersAModelCanActOn) {
  auto dir = (kTasks / "add_fp32").string();
  auto r = verify(dir, (kTasks / "hacks" / "partial_store_add.py").string());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->check, "unwritten");
  const CaseResult& c = r->cases[0];
  EXPECT_EQ(c.shape_set, "prompt");
  ASSERT_EQ(c.outputs.size(), 1u);
  EXPECT_EQ(c.outputs[0].unwritten, 128 * 512);
  EXPECT_EQ(c.outputs[0].first_bad_index, (Shape{128, 0}));
  EXPECT_NE(r->message.find("never stored to"), std::string::npos) << r->message;
  EXPECT_NE(r->message.find("prompt shapes"), std::string::npos);
  // Fail fast: nothing after the first failing case started.
  EXPECT_LT(r->cases_run, r->cases_total);
  auto j = r->to_json();
  EXPECT_EQ(j["check"], "unwritten");
  EXPECT_EQ(j["cases"][0]["outputs"][0]["first_bad_index"], (Shape{128, 0}));

  auto mismatch = verify(dir, (kTasks / "hacks" / "precision_drop_hidden_add.py").string());
  ASSERT_TRUE(mismatch);
  const auto& o = mismatch->cases[0].outputs[0];
  EXPECT_GT(o.mismatches, 0);
  EXPECT_GT(o.max_abs_error, 1e-5);
  EXPECT_GT(o.max_rel_error, 1e-5);
  EXPECT_FALSE(o.first_bad_index.empty());
}

// Garbage read from the masked-off lanes of a partial load and stored into the output is an
// uninitialised read, with the run's warning; not "unwritten": every element was stored to.
TEST_F(TasksVerify, StoredGarbageIsAnUninitialisedReadNotUnwritten) {
  fs::path dir = fs::temp_directory_path() / ("nkia-verify-garbage-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "garbage.py") << R"py(import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x, y):
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    jf = nl.arange(512)[None, :]
    for r in nl.affine_range(math.ceil(rows / 128)):
        for c in nl.affine_range(math.ceil(cols / 512)):
            i = r * 128 + ip
            j = c * 512 + jf
            valid = (i < rows) & (j < cols)
            a = nl.load(x[i, j], mask=valid & (ip < 64))
            b = nl.load(y[i, j], mask=valid)
            nl.store(out[i, j], value=nl.add(a, b), mask=valid)
    return out
)py";
  auto r = verify((kTasks / "add_fp32").string(), (dir / "garbage.py").string());
  fs::remove_all(dir);
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_FALSE(r->passed);
  EXPECT_EQ(r->check, "uninitialized_read") << r->format();
  const OutputCheck& o = r->cases[0].outputs[0];
  EXPECT_EQ(o.unwritten, 0);
  EXPECT_EQ(o.stored_nan, 256 * 512 / 2);
  EXPECT_EQ(o.first_bad_index, (Shape{64, 0}));
  EXPECT_NE(r->message.find("garbage.py:"), std::string::npos) << r->message;  // where the garbage came from
}

// A kernel that fails before producing anything never causes a reference output to be computed:
// the candidate runs first.
TEST_F(TasksVerify, CandidateRunsBeforeTheReference) {
  fs::path cache = fs::temp_directory_path() / ("nkia-verify-order-" + std::to_string(::getpid()));
  fs::remove_all(cache);
  fs::path k = cache / "raises.py";
  fs::create_directories(cache);
  std::ofstream(k) << "import neuronxcc.nki as nki\n\n@nki.jit\ndef kernel(x, y):\n    raise ValueError('no')\n";
  auto r = verify((kTasks / "add_fp32").string(), k.string(), options((cache / "refs").string()));
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(r->check, "kernel_error");
  EXPECT_EQ(r->reference.computed, 0);
  EXPECT_EQ(r->reference.cached, 0);
  fs::remove_all(cache);
}

// A correct kernel that keeps 100 tiles of x alive at the prompt's shapes (200 KiB per partition):
// it passes, and the result carries the prompt run's SBUF warning, once.
TEST_F(TasksVerify, SimulatorWarningsOfThePromptRunReachTheResult) {
  fs::path dir = fs::temp_directory_path() / ("nkia-verify-warn-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "hog.py") << R"py(import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x, y):
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    keep = []
    for k in range(100):
        keep.append(nl.load(x[0:128, :]))
    acc = keep[0]
    for t in keep[1:]:
        acc = nl.maximum(acc, t)
    nl.store(out[0:128, :], value=acc)
    ip = nl.arange(128)[:, None]
    jf = nl.arange(512)[None, :]
    for r in nl.affine_range(math.ceil(rows / 128)):
        for c in nl.affine_range(math.ceil(cols / 512)):
            i = r * 128 + ip
            j = c * 512 + jf
            valid = (i < rows) & (j < cols)
            a = nl.load(x[i, j], mask=valid)
            b = nl.load(y[i, j], mask=valid)
            nl.store(out[i, j], value=nl.add(a, b), mask=valid)
    return out
)py";
  auto r = verify((kTasks / "add_fp32").string(), (dir / "hog.py").string());
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_TRUE(r->passed) << r->format();
  ASSERT_EQ(r->warnings.size(), 1u) << r->format();
  EXPECT_EQ(r->warnings[0].rfind((dir / "hog.py").string() + ":13: warning[nkia_sbuf_capacity_exceeded]: ", 0), 0u)
      << r->warnings[0];
  EXPECT_NE(r->format().find("warning[nkia_sbuf_capacity_exceeded]"), std::string::npos);
  EXPECT_EQ(r->to_json()["warnings"].size(), 1u);
  // The baseline fits: no warnings.
  auto base = verify((kTasks / "add_fp32").string(), (kTasks / "add_fp32" / "baseline.py").string());
  ASSERT_TRUE(base) << base.error().format();
  EXPECT_TRUE(base->warnings.empty());
  fs::remove_all(dir);
}

TEST_F(TasksVerify, BrokenKernelsGetDiagnostics) {
  fs::path dir = fs::temp_directory_path() / ("nkia-verify-broken-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  struct Case {
    std::string name, source, check, code;
  };
  const std::vector<Case> cases = {
      {"syntax.py", "def kernel(x, y):\n    return (\n", "static_policy", "nkia_policy_syntax"},
      {"noentry.py", "import neuronxcc.nki as nki\n\n@nki.jit\ndef other(x, y):\n    return x\n", "kernel_error",
       "nkia_entry_not_found"},
      {"raises.py", "import neuronxcc.nki as nki\n\n@nki.jit\ndef kernel(x, y):\n    raise RuntimeError('boom')\n",
       "kernel_error", "nkia_python_exception"},
      {"string.py", "import neuronxcc.nki as nki\n\n@nki.jit\ndef kernel(x, y):\n    return 'done'\n", "kernel_error",
       "nkia_bad_kernel_value"},
      {"twice.py", "import neuronxcc.nki as nki\n\n@nki.jit\ndef kernel(x, y):\n    return x, y\n", "output_count", ""},
      {"unwritten.py",
       "import neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\n\n@nki.jit\ndef kernel(x, y):\n"
       "    return nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n",
       "kernel_error", "err_tensor_output_not_written_to"},
      {"hang.py", "import neuronxcc.nki as nki\n\n@nki.jit\ndef kernel(x, y):\n    while True:\n        pass\n",
       "kernel_error", ""},
  };
  VerifyOptions vo = options();
  vo.kernel_seconds = 2;
  for (const auto& c : cases) {
    std::ofstream(dir / c.name) << c.source;
    auto r = verify((kTasks / "add_fp32").string(), (dir / c.name).string(), vo);
    fs::remove(dir / c.name);
    ASSERT_TRUE(r) << c.name << ": " << r.error().format();
    EXPECT_FALSE(r->passed) << c.name;
    EXPECT_EQ(r->check, c.check) << c.name << "\n" << r->format();
    ASSERT_TRUE(r->diagnostic) << c.name;
    if (!c.code.empty()) {
      EXPECT_EQ(r->diagnostic->code, c.code) << c.name << "\n" << r->format();
    }
  }
  fs::remove_all(dir);
}

TEST_F(TasksVerify, BrokenTasksAreTheTasksFault) {
  fs::path root = fs::temp_directory_path() / ("nkia-verify-badtask-" + std::to_string(::getpid()));
  fs::remove_all(root);
  auto make = [&](const std::string& name, const std::string& py, const std::string& toml_patch) {
    fs::path d = root / name;
    fs::create_directories(d);
    std::string toml = read_text(kTasks / "layernorm_affine" / "task.toml");
    if (!toml_patch.empty()) {
      auto eq = toml_patch.find("=>");
      std::string from = toml_patch.substr(0, eq), to = toml_patch.substr(eq + 2);
      toml.replace(toml.find(from), from.size(), to);
    }
    std::ofstream(d / "task.toml") << toml;
    std::ofstream(d / "task.py") << py;
    return d.string();
  };
  const std::string good_py = read_text(kTasks / "layernorm_affine" / "task.py");
  std::string raising = good_py;
  raising.replace(raising.find("return self.ln(x)"), 17, "raise ValueError('task bug')");
  const std::string kernel = (kTasks / "layernorm_affine" / "baseline.py").string();
  VerifyOptions vo = options((root / "cache").string());

  auto r1 = verify(make("raises", raising, ""), kernel, vo);
  ASSERT_FALSE(r1);
  EXPECT_EQ(r1.error().code, "nkia_reference_failed");
  EXPECT_NE(r1.error().message.find("task bug"), std::string::npos) << r1.error().format();

  auto r2 = verify(make("shape", good_py, "outputs = [[200, 256]]=>outputs = [[200, 255]]"), kernel, vo);
  ASSERT_FALSE(r2);
  EXPECT_EQ(r2.error().code, "nkia_reference_mismatch") << r2.error().format();

  auto r3 = verify(make("param", good_py, "name = \"ln_bias\"=>name = \"ln_offset\""), kernel, vo);
  ASSERT_FALSE(r3);
  EXPECT_EQ(r3.error().code, "nkia_reference_failed");
  EXPECT_NE(r3.error().message.find("ln_offset"), std::string::npos) << r3.error().format();

  fs::remove_all(root);
}

// ---- the static policy on its own --------------------------------------------------------------

std::vector<PolicyViolation> policy(const std::map<std::string, std::string>& files,
                                    std::vector<DType> forbidden = {}) {
  KernelFiles kf;
  kf.root = "/k";
  kf.main_path = files.begin()->first;
  kf.files = files;
  PolicyOptions po;
  po.forbidden_dtypes = std::move(forbidden);
  auto r = check_static_policy(kf, po);
  EXPECT_TRUE(r) << r.error().format();
  return r ? *r : std::vector<PolicyViolation>{};
}

TEST(TasksPolicy, CleanKernelsPass) {
  EXPECT_TRUE(policy({{"k.py", read_text(kTasks / "add_fp32" / "baseline.py")}}, {DType::kBFloat16}).empty());
  EXPECT_TRUE(policy({{"k.py", read_text(kTasks / "layernorm_affine" / "baseline.py")}}).empty());
  // Test drivers under __main__ never run in a kernel call.
  EXPECT_TRUE(policy({{"k.py",
                       "import numpy as np\ndef kernel(x):\n    return x\n"
                       "if __name__ == '__main__':\n    import torch\n    print(np.matmul(1, 2))\n"}})
                  .empty());
  // NumPy for dtypes, op codes and shape arithmetic is fine.
  EXPECT_TRUE(policy({{"k.py", read_text(fs::path(NKIA_SOURCE_DIR) / "tests/kernels/ragged_rows_legacy.py")}}).empty());
  EXPECT_TRUE(
      policy({{"k.py", "import numpy as np\ndef kernel(q):\n    s = 1.0 / np.sqrt(q.shape[-1])\n    return s\n"}})
          .empty());
  EXPECT_TRUE(policy({{"k.py",
                       "import numpy as np\nimport math\ndef kernel(x):\n"
                       "    n = int(np.prod(x.shape)) + math.ceil(3 / 2)\n    t = np.float32\n    return x\n"}})
                  .empty());
}

TEST(TasksPolicy, EachRuleNamesItsLine) {
  struct Case {
    std::string source, rule;
    int line;
  };
  const std::vector<Case> cases = {
      {"import os\n", "system_access", 1},
      {"import subprocess as sp\n", "system_access", 1},
      {"def kernel(x):\n    return open('/etc/passwd').read()\n", "system_access", 2},
      {"import logging\ndef kernel(x):\n    logging.os.system('ls')\n", "system_access", 3},
      {"import numpy as np\nA = np.load('/tmp/ref.npy')\n", "system_access", 2},
      {"import torch\n", "reference_framework", 1},
      {"from jax import numpy as jnp\n", "reference_framework", 1},
      {"from task import Model\n", "reference_access", 1},
      {"def kernel(x):\n    return Model()(x)\n", "reference_access", 2},
      {"P = 'task.py'\n", "reference_access", 1},
      {"def kernel(x):\n    return eval('x')\n", "introspection", 2},
      {"def kernel(x):\n    return x.__class__.__mro__\n", "introspection", 2},
      {"def kernel(x):\n    return getattr(x, '__globals__')\n", "introspection", 2},
      {"import _nkia.runner\n", "introspection", 1},
      {"import numpy as np\ndef kernel(x):\n    return np.matmul(x, x)\n", "host_math", 3},
      {"import numpy as xp\ndef kernel(x):\n    return xp.exp(x)\n", "host_math", 3},
      {"from numpy import matmul\ndef kernel(x):\n    return matmul(x, x)\n", "host_math", 3},
      {"import numpy as np\nimport neuronxcc.nki.language as nl\ndef kernel(x):\n    t = nl.load(x)\n"
       "    return np.exp(t)\n",
       "host_math", 5},
      {"def kernel(x):\n    return x.numpy()\n", "host_math", 2},
      {"import neuronxcc.nki.language as nl\ndef kernel(x):\n    return nl.ndarray(x.shape, dtype=nl.bfloat16)\n",
       "precision_drop", 3},
      {"def kernel(x):\n    return x.astype('float16')\n", "precision_drop", 2},
      {"def kernel(x):\n    return (\n", "syntax", 2},
  };
  for (const auto& c : cases) {
    auto v = policy({{"k.py", c.source}}, {DType::kBFloat16, DType::kFloat16});
    ASSERT_FALSE(v.empty()) << "no violation for:\n" << c.source;
    EXPECT_EQ(v[0].rule, c.rule) << c.source;
    EXPECT_EQ(v[0].line, c.line) << c.source;
    EXPECT_EQ(v[0].file, "k.py");
    EXPECT_FALSE(v[0].hint.empty());
    Diagnostic d = v[0].to_diagnostic("/k");
    EXPECT_EQ(d.code, "nkia_policy_" + c.rule);
    EXPECT_EQ(d.loc.file, "/k/k.py");
  }
  // A precision name is fine when the task allows it.
  EXPECT_TRUE(policy({{"k.py", "import neuronxcc.nki.language as nl\nT = nl.bfloat16\n"}}, {}).empty());
}

TEST(TasksPolicy, OnlyFilesTheKernelImportsAreChecked) {
  auto v = policy({{"a_kernel.py", "from . import helper\ndef kernel(x):\n    return helper.f(x)\n"},
                   {"helper.py", "import os\n"},
                   {"unrelated_test_driver.py", "import torch\n"}});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].file, "helper.py");
  EXPECT_EQ(v[0].rule, "system_access");
}

TEST(TasksPolicy, HostileSourcesDoNotBreakTheChecker) {
  std::string deep = "x = " + std::string(5000, '(') + "1" + std::string(5000, ')') + "\n";
  auto v = policy({{"k.py", deep}});
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v[0].rule, "syntax");
  auto bin = policy({{"k.py", std::string("\x00\xff\xfe\x01", 4)}});
  ASSERT_FALSE(bin.empty());
  EXPECT_EQ(bin[0].rule, "syntax");
  EXPECT_TRUE(policy({{"k.py", ""}}).empty());
}

// Every module the static policy lets a candidate import is one the sandbox has loaded
// (pylib/_nkia/policy.py: OURS and PRELOADED), so an allowed import never fails at run time.
TEST(TasksPolicy, EveryAllowedImportIsLoadedInTheSandbox) {
  std::string src = read_text(fs::path(NKIA_SOURCE_DIR) / "src/runtime/python/pylib/_nkia/policy.py");
  std::set<std::string> runtime;
  std::regex name("\"([A-Za-z_0-9.]+)\"");
  for (const char* table : {"OURS = frozenset({", "PRELOADED = ("}) {
    auto start = src.find(table);
    ASSERT_NE(start, std::string::npos) << table;
    auto end = src.find(")", start);
    std::string body = src.substr(start, end - start);
    for (std::sregex_iterator it(body.begin(), body.end(), name), e; it != e; ++it) runtime.insert((*it)[1]);
  }
  for (const auto& allowed : policy_allowed_imports())
    EXPECT_TRUE(runtime.count(allowed)) << allowed << " is allowed by the static policy but not loaded in the sandbox";
}

// ---- the CLI ------------------------------------------------------------------------------------

using testing::CliRun;
using testing::Stderr;

// By default stderr joins stdout (messages are checked); under the sanitizer build LeakSanitizer
// would append its suppression summary to it, so that is turned off.
CliRun cli(const std::string& args, Stderr err = Stderr::kMerge) {
  return testing::run_cli(
      args, err, "LSAN_OPTIONS=\"${LSAN_OPTIONS}:print_suppressions=0\" NKIA_REFERENCE_CACHE=" + shared_cache());
}

TEST(TasksCli, VerifyExitCodesAndJson) {
  const std::string add = (kTasks / "add_fp32").string();
  auto pass = cli("--json verify --task " + add + " " + add + "/baseline.py --workers 2");
  EXPECT_EQ(pass.exit_code, 0) << pass.out;
  auto j = nlohmann::json::parse(pass.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << pass.out;
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["verify"]["passed"], true);
  EXPECT_EQ(j["verify"]["speed"]["available"], true);
  EXPECT_EQ(j["verify"]["speed"]["speedup"], 1.0);

  auto bad = cli("--json verify --task " + add + " " + (kTasks / "hacks" / "zeros_add.py").string() + " --workers 2");
  EXPECT_EQ(bad.exit_code, 1) << bad.out;
  auto jb = nlohmann::json::parse(bad.out, nullptr, false);
  ASSERT_FALSE(jb.is_discarded()) << bad.out;
  EXPECT_EQ(jb["ok"], false);
  EXPECT_EQ(jb["verify"]["check"], "zero_output");
  EXPECT_EQ(jb["diagnostics"][0]["code"], "nkia_verify_zero_output");

  auto text = cli("verify --task " + add + " " + (kTasks / "hacks" / "floor_tiles_add.py").string() + " --workers 2");
  EXPECT_EQ(text.exit_code, 1);
  EXPECT_NE(text.out.find("FAIL"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("never stored to"), std::string::npos) << text.out;

  EXPECT_EQ(cli("verify " + add + "/baseline.py").exit_code, 2);  // --task missing
  EXPECT_EQ(cli("verify --task /nonexistent " + add + "/baseline.py").exit_code, 1);
  EXPECT_EQ(cli("verify --task " + add + " /nonexistent/kernel.py").exit_code, 1);
  EXPECT_EQ(cli("verify --task " + add + " " + add + "/baseline.py --shapes nope").exit_code, 1);
}

// --hardware: the speed figures come from the given description (here trn1 with DMA engines twice
// as fast), and a description of another target than the task's is refused.
TEST(TasksCli, VerifyTakesAHardwareDescription) {
  const std::string add = (kTasks / "add_fp32").string();
  auto base = cli("--json verify --task " + add + " " + add + "/baseline.py --workers 2 --seeds 1");
  ASSERT_EQ(base.exit_code, 0) << base.out;
  auto trn1 = hardware_for_target("trn1");
  ASSERT_TRUE(trn1) << trn1.error().format();
  auto fast = set_target_numbers(target_text("trn1"), {{"dma.bytes_per_ns", 2 * trn1->dma.bytes_per_ns}}, "fast.toml");
  ASSERT_TRUE(fast) << fast.error().format();
  const std::string path = ::testing::TempDir() + "/verify_fast_dma.toml";
  std::ofstream(path) << *fast;
  auto quick = cli("--json verify --task " + add + " " + add + "/baseline.py --workers 2 --seeds 1 --hardware " + path);
  ASSERT_EQ(quick.exit_code, 0) << quick.out;
  auto jb = nlohmann::json::parse(base.out, nullptr, false);
  auto jq = nlohmann::json::parse(quick.out, nullptr, false);
  ASSERT_FALSE(jb.is_discarded() || jq.is_discarded());
  EXPECT_LT(jq["verify"]["speed"]["candidate_seconds"].get<double>(),
            jb["verify"]["speed"]["candidate_seconds"].get<double>());
  EXPECT_EQ(jq["verify"]["speed"]["speedup"], 1.0);  // the baseline is timed on the same description

  std::string other(target_text("trn2"));
  const std::string trn2_path = ::testing::TempDir() + "/verify_trn2.toml";
  std::ofstream(trn2_path) << other;
  auto wrong =
      cli("--json verify --task " + add + " " + add + "/baseline.py --workers 2 --seeds 1 --hardware " + trn2_path);
  EXPECT_EQ(wrong.exit_code, 1) << wrong.out;
  EXPECT_NE(wrong.out.find("nkia_bad_argument"), std::string::npos) << wrong.out;
  auto missing = cli("--json verify --task " + add + " " + add + "/baseline.py --seeds 1 --hardware /nonexistent.toml");
  EXPECT_EQ(missing.exit_code, 1) << missing.out;
  EXPECT_NE(missing.out.find("nkia_hardware_unreadable"), std::string::npos) << missing.out;
  std::remove(path.c_str());
  std::remove(trn2_path.c_str());
}

TEST(TasksCli, FailIsAResultOnStdout) {
  const std::string add = (kTasks / "add_fp32").string();
  const std::string args = "verify --task " + add + " " + (kTasks / "hacks" / "zeros_add.py").string() + " --workers 2";
  auto out = cli(args, Stderr::kDrop);
  EXPECT_EQ(out.exit_code, 1);
  EXPECT_EQ(out.out.rfind("FAIL  ", 0), 0u) << out.out;
  EXPECT_NE(out.out.find("zero_output"), std::string::npos) << out.out;
  auto err = cli(args, Stderr::kSeparate);  // stderr alone: the failure's Diagnostic
  EXPECT_EQ(err.exit_code, 1);
  EXPECT_EQ(err.err.find("FAIL  "), std::string::npos) << err.err;
  EXPECT_NE(err.err.find("error[nkia_verify_zero_output]"), std::string::npos) << err.err;
  // --json after the subcommand, as any global option may be.
  auto j = nlohmann::json::parse(cli(args + " --json", Stderr::kDrop).out, nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["verify"]["check"], "zero_output");
}

TEST(TasksCli, ListAndShow) {
  auto list = cli("--json tasks --root " + kTasks.string() + " list");
  EXPECT_EQ(list.exit_code, 0) << list.out;
  auto j = nlohmann::json::parse(list.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << list.out;
  EXPECT_EQ(j["tasks"].size(), 4u);
  auto text = cli("tasks --root " + kTasks.string() + " list");
  EXPECT_NE(text.out.find("T_002"), std::string::npos) << text.out;

  auto show = cli("--json tasks --root " + kTasks.string() + " show T_002");
  EXPECT_EQ(show.exit_code, 0) << show.out;
  auto s = nlohmann::json::parse(show.out, nullptr, false);
  ASSERT_FALSE(s.is_discarded()) << show.out;
  EXPECT_EQ(s["task"]["args"][1]["name"], "ln_weight");
  EXPECT_EQ(s["task"]["args"][1]["kind"], "param");
  EXPECT_NE(s["task"]["task_py"].get<std::string>().find("nn.LayerNorm"), std::string::npos);
  auto human = cli("tasks show " + (kTasks / "int_scale").string());
  EXPECT_EQ(human.exit_code, 0);
  EXPECT_NE(human.out.find("reference: int64"), std::string::npos) << human.out;
  EXPECT_EQ(cli("tasks --root " + kTasks.string() + " show T_999").exit_code, 1);
}

// Suites by name over the shipped tasks: a level lists its tasks, a suite naming tasks that are
// not there fails and names them, and bench refuses an unknown suite before running anything.
TEST(TasksCli, SuitesByName) {
  const std::string root = (fs::path(NKIA_SOURCE_DIR) / "tasks" / "nkibench").string();
  auto l2 = cli("--json tasks --root " + root + " list --suite level2");
  ASSERT_EQ(l2.exit_code, 0) << l2.out;
  auto j = nlohmann::json::parse(l2.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << l2.out;
  EXPECT_EQ(j["suite"], "level2");
  EXPECT_EQ(j["tasks"].size(), 100u);
  for (const auto& t : j["tasks"]) EXPECT_EQ(t["level"], 2) << t.dump();
  auto suites = cli("--json tasks --root " + root + " suites");
  ASSERT_EQ(suites.exit_code, 0) << suites.out;
  auto sj = nlohmann::json::parse(suites.out, nullptr, false);
  ASSERT_FALSE(sj.is_discarded()) << suites.out;
  std::set<std::string> names;
  for (const auto& e : sj["suites"]) names.insert(e["name"].get<std::string>());
  for (const char* n : {"nkibench-150", "nkibench-60", "level1", "level2", "all"}) EXPECT_TRUE(names.count(n)) << n;
  auto unknown = cli("tasks --root " + root + " list --suite nope");
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.out.find("nkia_suite_not_found"), std::string::npos) << unknown.out;
  EXPECT_NE(unknown.out.find("nkibench-150"), std::string::npos) << unknown.out;  // the hint lists them
  auto bench = cli("bench --tasks " + root + " --suite nope --db /dev/null");
  EXPECT_NE(bench.exit_code, 0);
  EXPECT_NE(bench.out.find("nkia_suite_not_found"), std::string::npos) << bench.out;
}

}  // namespace
}  // namespace nki_agent
