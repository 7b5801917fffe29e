// Kernels in the sandbox, end to end: nki-agent-worker with the embedded CPython host, driven
// through KernelService. Every hostile kernel of the catalogue is contained with its own
// Diagnostic, the workers survive (a good kernel runs right after), and concurrent mixed runs each
// get the right verdict.
//
// Kernels import os, sys, ctypes and the rest of the standard library as real files do (and reach
// them through other modules, logging.os): the sandbox below holds on its own.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "runtime/kernel_service.h"
#include "support/shared_service.h"

namespace nki_agent {
namespace {

class KernelSandbox : public testing::SharedServiceTest {
 protected:
  static Result<KernelOutcome> run(const std::string& body, double seconds = 5) {
    KernelCall c;
    c.src.main_path = "kernel.py";
    c.src.files["kernel.py"] = "import logging\nimport numpy as np\n\ndef entry(a):\n" + body;
    c.entry = "entry";
    c.inputs = {Tensor::from_f32({2, 2}, std::vector<float>{1, 2, 3, 4})};
    return service_->run(c, limits(seconds));
  }

  // A good kernel still runs after a hostile one: the pool and its workers are unharmed.
  static void expect_healthy() {
    auto r = run("    return a * 2\n");
    ASSERT_TRUE(r) << r.error().format();
    EXPECT_EQ(r->outputs[0].to_f32_vector(), (std::vector<float>{2, 4, 6, 8}));
  }

  static void expect_code(const Result<KernelOutcome>& r, std::string_view code) {
    ASSERT_FALSE(r) << "expected " << code << ", the kernel succeeded";
    EXPECT_EQ(r.error().code, code) << r.error().format();
    EXPECT_FALSE(r.error().message.empty());
  }
};

TEST_F(KernelSandbox, GoodKernelRuns) {
  auto r = run("    print('hello from the kernel')\n    return a + 1, np.float32(3)\n");
  ASSERT_TRUE(r) << r.error().format();
  ASSERT_EQ(r->outputs.size(), 2u);
  EXPECT_EQ(r->outputs[0].to_f32_vector(), (std::vector<float>{2, 3, 4, 5}));
  EXPECT_EQ(r->printed, "hello from the kernel\n");
}

TEST_F(KernelSandbox, KernelExceptionsKeepTheirLocation) {
  auto r = run("    x = [1]\n    return x[3]\n");
  expect_code(r, "nkia_python_exception");
  EXPECT_EQ(r.error().loc.file, "kernel.py");
  EXPECT_EQ(r.error().loc.line, 6);
}

TEST_F(KernelSandbox, InfiniteLoopTimesOut) {
  auto r = run("    while True:\n        pass\n", 1.0);
  ASSERT_FALSE(r);
  EXPECT_TRUE(r.error().code == "nkia_sandbox_timeout" || r.error().code == "nkia_sandbox_cpu_limit")
      << r.error().format();
  expect_healthy();
}

TEST_F(KernelSandbox, DeepRecursionIsARecursionError) {
  auto r = run("    def f(n):\n        return f(n + 1) + 1\n    return f(0)\n");
  expect_code(r, "nkia_recursion_limit");
  expect_healthy();
}

TEST_F(KernelSandbox, HugeAllocationHitsTheMemoryLimit) {
  if (sandbox_sanitizer_build()) GTEST_SKIP() << "RLIMIT_AS is not applied under AddressSanitizer";
  auto r = run("    big = np.ones((10 * 1024 ** 3) // 8)\n    return a\n");
  expect_code(r, "nkia_sandbox_memory_limit");
  expect_healthy();
}

TEST_F(KernelSandbox, ForkBombIsRefused) {
  auto r = run("    while True:\n        logging.os.fork()\n");
  ASSERT_FALSE(r);
  EXPECT_TRUE(r.error().code == "nkia_sandbox_refused" || r.error().code == "nkia_sandbox_forbidden_syscall")
      << r.error().format();
  EXPECT_NE(r.error().format().find("ermission"), std::string::npos) << r.error().format();
  expect_healthy();
}

TEST_F(KernelSandbox, ReadingAndWritingFilesIsRefused) {
  auto rd = run("    return open('/etc/passwd').read()\n");
  expect_code(rd, "nkia_sandbox_refused");
  EXPECT_NE(rd.error().message.find("PermissionError"), std::string::npos) << rd.error().format();
  auto wr = run("    open('/tmp/nkia-kernel-wrote-this', 'w').write('x')\n    return a\n");
  expect_code(wr, "nkia_sandbox_refused");
  EXPECT_NE(wr.error().message.find("PermissionError"), std::string::npos) << wr.error().format();
  expect_healthy();
}

// A stat of a path is refused (the host's files cannot be probed), while a stat of an open fd still
// works; code that probes paths and handles OSError, as inspect.stack() does through
// os.path.realpath, goes on.
TEST_F(KernelSandbox, PathsCannotBeProbedAndCodeThatProbesThemGoesOn) {
  auto exists =
      run("    e = logging.os.path.exists\n"
          "    return np.array([e('/etc/passwd'), e('/'), e('/usr/lib/python3.11')], dtype=np.int32)\n");
  ASSERT_TRUE(exists) << exists.error().format();
  EXPECT_EQ(exists->outputs[0].to_i64_vector(), (std::vector<int64_t>{0, 0, 0}));
  auto stat = run("    logging.os.stat('/etc/passwd')\n    return a\n");
  expect_code(stat, "nkia_sandbox_refused");
  EXPECT_NE(stat.error().message.find("PermissionError"), std::string::npos) << stat.error().format();
  auto fd = run("    return np.array([logging.os.fstat(2).st_mode != 0], dtype=np.int32)\n");
  ASSERT_TRUE(fd) << fd.error().format();
  EXPECT_EQ(fd->outputs[0].to_i64_vector(), (std::vector<int64_t>{1}));
  auto stack =
      run("    import inspect\n"
          "    frames = inspect.stack()\n"
          "    return np.array([len(frames) > 0, frames[0].function == 'entry'], dtype=np.int32)\n");
  ASSERT_TRUE(stack) << stack.error().format();
  EXPECT_EQ(stack->outputs[0].to_i64_vector(), (std::vector<int64_t>{1, 1}));
  expect_healthy();
}

TEST_F(KernelSandbox, SocketsAreRefused) {
  // Past Python's socket module: libc's socket() through ctypes.
  auto r =
      run("    ctypes = logging.sys.modules['ctypes']\n"
          "    libc = ctypes.CDLL(None, use_errno=True)\n"
          "    fd = libc.socket(2, 1, 0)\n"
          "    return np.array([fd, ctypes.get_errno()], dtype=np.int32)\n");
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(r->outputs[0].to_i64_vector(), (std::vector<int64_t>{-1, 1}));  // -1, EPERM
}

TEST_F(KernelSandbox, ExecKillsTheChild) {
  auto r = run("    logging.os.execv('/bin/sh', ['sh', '-c', 'echo pwned'])\n");
  ASSERT_FALSE(r);
  EXPECT_TRUE(r.error().code == "nkia_sandbox_forbidden_syscall" || r.error().code == "nkia_python_exception")
      << r.error().format();
  EXPECT_EQ(r.error().format().find("pwned"), std::string::npos);
  expect_healthy();
}

// Standard modules import as in real files; what they then do that reaches outside fails at that
// line. A standard module the worker did not load cannot be read from disk in the sandbox.
TEST_F(KernelSandbox, StandardModulesImportAndTheSandboxRefusesWhatTheyReach) {
  for (const char* mod :
       {"ctypes", "subprocess", "os", "sys", "argparse", "unittest", "importlib", "socket", "numpy.typing"}) {
    auto r = run(std::string("    import ") + mod + "\n    return a\n");
    ASSERT_TRUE(r) << mod << ": " << r.error().format();
  }
  auto proc = run("    import subprocess\n    subprocess.run(['true'])\n    return a\n");
  ASSERT_FALSE(proc);
  EXPECT_TRUE(proc.error().code == "nkia_sandbox_refused" || proc.error().code == "nkia_sandbox_forbidden_syscall")
      << proc.error().format();
  EXPECT_EQ(proc.error().loc.line, 6) << proc.error().format();
  auto sock = run("    import socket\n    socket.create_connection(('127.0.0.1', 9))\n    return a\n");
  expect_code(sock, "nkia_sandbox_refused");
  auto unloaded = run("    import xml.dom.minidom\n    return a\n");
  expect_code(unloaded, "nkia_module_unavailable");
  EXPECT_EQ(unloaded.error().loc.line, 5);
  expect_healthy();
}

TEST_F(KernelSandbox, HugePrintIsCapped) {
  auto r = run("    for _ in range(1000):\n        print('x' * 1_000_000)\n    return a\n", 20);
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_LT(r->printed.size(), 100u * 1024);
  EXPECT_NE(r->printed.find("[output truncated]"), std::string::npos);
}

TEST_F(KernelSandbox, SegfaultInAnExtensionIsACrash) {
  auto r =
      run("    from numpy.lib.stride_tricks import as_strided\n"
          "    v = as_strided(np.zeros(1), shape=(1 << 20,), strides=(1 << 40,))\n"
          "    return np.asarray(v.sum(), dtype=np.float32)\n");
  expect_code(r, "nkia_sandbox_crash");
  expect_healthy();
}

TEST_F(KernelSandbox, WildPointerThroughCtypesIsACrash) {
  auto r =
      run("    return logging.sys.modules['ctypes'].string_at(16, 8)  # (address 0 means 'allocate' to CPython)\n");
  expect_code(r, "nkia_sandbox_crash");
  expect_healthy();
}

TEST_F(KernelSandbox, OsExitAndSignalsAreContained) {
  auto ex = run("    logging.os._exit(7)\n");
  expect_code(ex, "nkia_sandbox_exit");
  auto kill_parent = run("    logging.os.kill(logging.os.getppid(), 9)\n    return a\n");
  ASSERT_FALSE(kill_parent);  // EPERM from the filter, or the child killed for trying
  auto kill_self = run("    logging.os.kill(logging.os.getpid(), 11)\n");
  expect_code(kill_self, "nkia_sandbox_crash");
  expect_healthy();
}

TEST_F(KernelSandbox, ConcurrentMixedRunsEachGetTheirVerdict) {
  struct Case {
    std::string body;
    std::string expect;  // "" = success
  };
  const std::vector<Case> cases = {
      {"    return a * 3\n", ""},
      {"    return open('/etc/passwd').read()\n", "nkia_sandbox_refused"},
      {"    raise ValueError('bad tile')\n", "nkia_python_exception"},
      {"    import xml.dom.minidom\n", "nkia_module_unavailable"},
      {"    while True:\n        pass\n", "timeout"},
      {"    logging.os._exit(3)\n", "nkia_sandbox_exit"},
  };
  constexpr int kRuns = 36;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  std::mutex mu;
  std::vector<std::string> failures;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = t; i < kRuns; i += 4) {
        const Case& c = cases[static_cast<size_t>(i) % cases.size()];
        auto r = run(c.body, 1.0);
        bool ok;
        if (c.expect.empty())
          ok = r && r->outputs.size() == 1 && r->outputs[0].to_f32_vector() == std::vector<float>{3, 6, 9, 12};
        else if (c.expect == "timeout")
          ok = !r && (r.error().code == "nkia_sandbox_timeout" || r.error().code == "nkia_sandbox_cpu_limit");
        else
          ok = !r && r.error().code == c.expect;
        if (!ok) {
          wrong++;
          std::lock_guard<std::mutex> lock(mu);
          failures.push_back(c.body + " -> " + (r ? std::string("ok") : r.error().format()));
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0) << (failures.empty() ? "" : failures[0]);
}

}  // namespace
}  // namespace nki_agent
