// The sandbox (runtime/sandbox.h) run directly: every way a child can end comes back with the
// right Diagnostic code, the limits hold, the seccomp filter refuses files, sockets, processes
// and threads, and no process outlives its run. Hostile behaviour comes from
// tests/support/hostile_handlers.h. Worker-pool tests are in test_worker_pool.cpp.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>

#include "runtime/sandbox.h"
#include "runtime/seccomp_policy.h"
#include "support/hostile_handlers.h"
#include "support/process_check.h"

namespace nki_agent {
namespace {

using testing::SandboxProcessTest;

// Short deadlines keep the suite fast; assertions check the verdict, never exact durations.
constexpr double kShortWall = 0.5;

SandboxLimits limits() {
  return SandboxLimits{};
}

SandboxLimits short_wall() {
  SandboxLimits l;
  l.wall_seconds = kShortWall;
  return l;
}

// Runs a named hostile handler from tests/support/hostile_handlers.h in the sandbox.
SandboxReport run(const std::string& handler, const std::string& payload = {}, SandboxLimits l = limits()) {
  static const HandlerRegistry registry = [] {
    HandlerRegistry r;
    register_builtin_handlers(r);
    testing::register_hostile_handlers(r);
    return r;
  }();
  const Handler* h = registry.find(handler);
  EXPECT_NE(h, nullptr) << handler;
  return run_sandboxed_report(l, [h, &payload] { return (*h)(payload, Attachments{}); });
}

std::string code_of(const SandboxReport& r) {
  return r.error ? r.error->code : std::string("ok");
}

// A temp folder of the test's own, removed at the end.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string templ = (std::filesystem::temp_directory_path() / "nkia_sandbox_XXXXXX").string();
    path = ::mkdtemp(templ.data());
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

class Sandbox : public SandboxProcessTest {};

TEST_F(Sandbox, ReturnsPayloadCapturesOutputAndMeasures) {
  auto r = run("print_and_return", "abc");
  ASSERT_TRUE(r.ok()) << r.error->format();
  EXPECT_EQ(r.output.payload, "done:abc");
  EXPECT_EQ(r.output.stdout_capture.bytes, "out:abc\n");
  EXPECT_EQ(r.output.stderr_capture.bytes, "err:abc\n");
  EXPECT_FALSE(r.output.stdout_capture.truncated);
  EXPECT_GT(r.output.wall_seconds, 0);
  EXPECT_GE(r.output.cpu_seconds, 0);
  EXPECT_GT(r.output.peak_rss_bytes, 0);
}

TEST_F(Sandbox, BinaryPayloadSurvivesAndEmptyIsFine) {
  const std::string bin("a\0b\xff\x01", 5);
  auto r = run_sandboxed(limits(), [&bin] { return bin; });
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(r->payload, bin);
  auto e = run_sandboxed(limits(), [] { return std::string(); });
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->payload.empty());
}

// A worker reads each result into the buffer of the one before (recycle_result_buffer), which keeps
// that result's bytes and length: a result of another size comes back exactly, and one cut short
// is no result at all, never the earlier result's bytes.
TEST_F(Sandbox, ResultsReadOverAnEarlierOnesBufferAreExactlyTheirOwn) {
  auto run_and_recycle = [](char fill, int64_t bytes) {
    auto r = run_sandboxed(limits(), [fill, bytes] { return std::string(static_cast<size_t>(bytes), fill); });
    EXPECT_TRUE(r) << r.error().format();
    if (!r) return;
    EXPECT_EQ(r->payload.size(), static_cast<size_t>(bytes));
    EXPECT_EQ(std::count(r->payload.begin(), r->payload.end(), fill), bytes);
    recycle_result_buffer(std::move(r->payload));
  };
  run_and_recycle('a', 2 * kMiB);
  run_and_recycle('b', kMiB + 3);  // shorter than what the buffer holds
  run_and_recycle('c', 3 * kMiB);  // longer than its length and its capacity
  run_and_recycle('d', 0);
  run_and_recycle('e', 2 * kMiB);

  // The child writes a result record's header for 1 MiB to its result pipe, then 1000 bytes of it,
  // and exits.
  auto cut = run_sandboxed_report(limits(), []() -> std::string {
    for (int fd = 3; fd < 1024; ++fd) {
      struct stat st {};
      if (::fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode) || (::fcntl(fd, F_GETFL) & O_ACCMODE) != O_WRONLY) continue;
      const char head[5] = {'R', 0, 0, 0x10, 0};  // little-endian 0x00100000
      const std::string part(1000, 'f');
      if (::write(fd, head, sizeof head) != 5 || ::write(fd, part.data(), part.size()) != 1000) break;
      ::_exit(0);
    }
    return "the result pipe was not found";
  });
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.error->code, kSandboxExit) << cut.error->format();
  EXPECT_TRUE(cut.output.payload.empty());
}

TEST_F(Sandbox, HandlerDiagnosticPassesThrough) {
  auto r = run("kernel_error");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error->code, "err_test_kernel");
  EXPECT_EQ(r.error->loc.file, "kernel.py");
  EXPECT_EQ(r.error->loc.line, 12);
  EXPECT_EQ(r.error->hint, "fix the kernel");
}

TEST_F(Sandbox, HandlerExceptionIsACrashWithItsMessage) {
  auto r = run("throw");
  EXPECT_EQ(code_of(r), kSandboxCrash);
  EXPECT_NE(r.error->message.find("boom"), std::string::npos);
}

TEST_F(Sandbox, WallDeadlineKillsABusyLoop) {
  auto r = run("busy_loop", "", short_wall());
  EXPECT_EQ(code_of(r), kSandboxTimeout);
  EXPECT_NE(r.error->message.find("0.5 s"), std::string::npos) << r.error->message;
  EXPECT_FALSE(r.error->hint.empty());
}

TEST_F(Sandbox, WallDeadlineKillsABlockingSleep) {
  EXPECT_EQ(code_of(run("sleep_forever", "", short_wall())), kSandboxTimeout);
}

TEST_F(Sandbox, IgnoredSignalsAndSetsidDoNotEscapeTheDeadline) {
  EXPECT_EQ(code_of(run("signal_tricks", "", short_wall())), kSandboxTimeout);
}

TEST_F(Sandbox, CpuLimitStopsABusyLoop) {
  SandboxLimits l;
  l.cpu_seconds = 1;
  l.wall_seconds = 30;  // the CPU limit must fire first, even on a loaded machine
  auto r = run("busy_loop", "", l);
  EXPECT_EQ(code_of(r), kSandboxCpuLimit);
  EXPECT_GT(r.output.cpu_seconds, 0.5);  // ~1 s; loose, the accounting differs between figures
}

// signal_tricks ignores SIGXCPU, so the hard limit's SIGKILL ends it a second later: still the
// CPU verdict, not the out-of-memory one a SIGKILL from outside would otherwise get.
TEST_F(Sandbox, CpuHardLimitWhenSigxcpuIsIgnored) {
  SandboxLimits l;
  l.cpu_seconds = 1;
  l.wall_seconds = 30;
  EXPECT_EQ(code_of(run("signal_tricks", "", l)), kSandboxCpuLimit);
}

TEST_F(Sandbox, CrashesAreNamed) {
  auto segv = run("segfault");
  EXPECT_EQ(code_of(segv), kSandboxCrash);
  EXPECT_NE(segv.error->message.find("SIGSEGV"), std::string::npos) << segv.error->message;
  auto abrt = run("abort");
  EXPECT_EQ(code_of(abrt), kSandboxCrash);
  EXPECT_NE(abrt.error->message.find("SIGABRT"), std::string::npos) << abrt.error->message;
}

TEST_F(Sandbox, StackOverflowIsReportedAsSuch) {
  auto r = run("deep_recursion");
  EXPECT_EQ(code_of(r), kSandboxCrash);
  if (sandbox_sanitizer_build() && r.error->message.find("stack") == std::string::npos)
    GTEST_SKIP() << "ASan reports the overflow itself: " << r.error->message;
  EXPECT_NE(r.error->message.find("overflowed its stack"), std::string::npos) << r.error->message;
  EXPECT_NE(r.error->hint.find("recursion"), std::string::npos);
}

TEST_F(Sandbox, ExitBeforeResultIsReported) {
  auto r = run("exit7");
  EXPECT_EQ(code_of(r), kSandboxExit);
  EXPECT_NE(r.error->message.find("status 7"), std::string::npos) << r.error->message;
}

TEST_F(Sandbox, PrintFloodIsCutAtTheLogLimit) {
  SandboxLimits l;
  l.max_log_bytes = 4 * kMiB;
  l.capture_bytes = 64 * kKiB;
  auto r = run("print_flood", "", l);
  EXPECT_EQ(code_of(r), kSandboxOutputLimit);
  EXPECT_EQ(r.output.stdout_capture.bytes.size(), static_cast<size_t>(64 * kKiB));
  EXPECT_TRUE(r.output.stdout_capture.truncated);
  EXPECT_GT(r.output.stdout_capture.total_bytes, 4 * kMiB);
  EXPECT_LT(r.output.stdout_capture.total_bytes, 1 * kGiB);  // killed long before the 1 GiB
}

TEST_F(Sandbox, ResultOverTheCapIsRefused) {
  SandboxLimits l;
  l.max_output_bytes = 1 * kMiB;
  EXPECT_EQ(code_of(run("big_result", std::to_string(3 * kMiB), l)), kSandboxOutputLimit);
  // Just over the cap, inside the pipe's record slack: refused all the same.
  EXPECT_EQ(code_of(run("big_result", std::to_string(kMiB + 1), l)), kSandboxOutputLimit);
  auto ok = run("big_result", std::to_string(kMiB), l);
  ASSERT_TRUE(ok.ok()) << ok.error->format();
  EXPECT_EQ(ok.output.payload.size(), static_cast<size_t>(kMiB));
}

TEST_F(Sandbox, MemoryBombHitsTheAddressSpaceLimit) {
  if (sandbox_sanitizer_build()) GTEST_SKIP() << "RLIMIT_AS is not applied under ASan (shadow memory)";
  SandboxLimits l;
  l.address_space_bytes = 512 * kMiB;
  auto r = run("allocate_gib", "2", l);
  EXPECT_EQ(code_of(r), kSandboxMemoryLimit);
  EXPECT_NE(r.error->message.find("512 MiB"), std::string::npos) << r.error->message;
}

TEST_F(Sandbox, FilterRefusesFilesWithEperm) {
  auto r = run("open_passwd");
  ASSERT_TRUE(r.ok()) << r.error->format();
  EXPECT_EQ(r.output.payload.rfind("denied errno=1 ", 0), 0u) << r.output.payload;

  TempDir dir;
  const auto target = dir.path / "escaped.txt";
  auto w = run("write_file", target.string());
  ASSERT_TRUE(w.ok()) << w.error->format();
  EXPECT_EQ(w.output.payload.rfind("denied errno=1 ", 0), 0u) << w.output.payload;
  EXPECT_FALSE(std::filesystem::exists(target));
}

TEST_F(Sandbox, FilterRefusesSockets) {
  // A listener on 127.0.0.1 that must see no connection.
  int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(listener, 4), 0);
  ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  auto r = run("connect_local", std::to_string(ntohs(addr.sin_port)));
  ASSERT_TRUE(r.ok()) << r.error->format();
  EXPECT_EQ(r.output.payload.rfind("denied errno=1 ", 0), 0u) << r.output.payload;
  EXPECT_LT(::accept(listener, nullptr, nullptr), 0);  // nobody connected
  ::close(listener);
}

TEST_F(Sandbox, FilterRefusesProcessesAndThreads) {
  auto f = run("fork_bomb");
  ASSERT_TRUE(f.ok()) << f.error->format();
  EXPECT_EQ(f.output.payload, "forks=0 errno=1");
  auto t = run("spawn_thread");
  ASSERT_TRUE(t.ok()) << t.error->format();
  EXPECT_EQ(t.output.payload.rfind("thread refused", 0), 0u) << t.output.payload;
}

TEST_F(Sandbox, FilterKillsExecAndPtraceAndNamesTheCall) {
  auto e = run("exec_shell");
  EXPECT_EQ(code_of(e), kSandboxForbiddenSyscall);
  EXPECT_NE(e.error->message.find("execve"), std::string::npos) << e.error->message;
  auto p = run("ptrace_parent");
  EXPECT_EQ(code_of(p), kSandboxForbiddenSyscall);
  EXPECT_NE(p.error->message.find("ptrace"), std::string::npos) << p.error->message;
}

TEST_F(Sandbox, WithoutTheFilterRlimitsStillStopFileWrites) {
  TempDir dir;
  SandboxLimits l;
  l.seccomp = false;
  auto r = run("write_file", (dir.path / "f.txt").string(), l);
  EXPECT_EQ(code_of(r), kSandboxOutputLimit);  // RLIMIT_FSIZE = 0: SIGXFSZ on the first write
  EXPECT_NE(r.error->message.find("file"), std::string::npos) << r.error->message;
}

TEST_F(Sandbox, ErrorsCarryTheTailOfStderr) {
  auto r = run_sandboxed(limits(), [] {
    std::fputs("line one\nabout to crash\n", stderr);
    std::fflush(stderr);
    std::abort();
    return std::string();
  });
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, kSandboxCrash);
  ASSERT_FALSE(r.error().notes.empty());
  EXPECT_EQ(r.error().notes.back(), "stderr: about to crash");
}

TEST_F(Sandbox, BadLimitsAreRefusedWithoutForking) {
  auto expect_bad = [](SandboxLimits l) {
    auto r = run_sandboxed(l, [] { return std::string("ran"); });
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, kSandboxBadLimits);
  };
  SandboxLimits l;
  l.wall_seconds = 0;
  expect_bad(l);
  l = {};
  l.cpu_seconds = std::numeric_limits<double>::quiet_NaN();
  expect_bad(l);
  l = {};
  l.address_space_bytes = 1024;
  expect_bad(l);
  l = {};
  l.max_output_bytes = -1;
  expect_bad(l);
  l = {};
  l.capture_bytes = kGiB;
  expect_bad(l);
  l = {};
  l.max_file_bytes = -5;
  expect_bad(l);
}

TEST(SeccompPolicy, TablesAreSaneAndNamesResolve) {
  auto allowed = seccomp_allowed_syscalls();
  auto killing = seccomp_killing_syscalls();
  for (auto name : killing) EXPECT_EQ(std::find(allowed.begin(), allowed.end(), name), allowed.end()) << name;
  for (std::string_view never :
       {"open",   "openat", "creat", "socket", "connect", "fork",  "vfork",   "clone", "clone3", "execve", "ptrace",
        "unlink", "rename", "mkdir", "setsid", "setpgid", "prctl", "seccomp", "dup",   "pipe",   "mount"})
    EXPECT_EQ(std::find(allowed.begin(), allowed.end(), never), allowed.end()) << never;
#if defined(__x86_64__)
  EXPECT_EQ(syscall_name(59), "execve");
  EXPECT_EQ(syscall_name(101), "ptrace");
#endif
  EXPECT_EQ(syscall_name(-12345).rfind("syscall ", 0), 0u);
}

}  // namespace
}  // namespace nki_agent
