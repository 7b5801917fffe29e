// runtime/sandbox_child.cpp — the child side of run_sandboxed: from fork() to _exit().
//
// Order: own process group → prctl (no new privileges, not dumpable, SIGKILL when the parent
// dies) → fds (only 0–3 left) → rlimits → signal handlers → seccomp → child_fn → one record → _exit.
// The fds are placed before the rlimits because RLIMIT_NOFILE would refuse the F_DUPFD that moves
// them; the handlers are installed before the filter, which forbids replacing the SIGSYS one.
#include "runtime/sandbox_child.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <nlohmann/json.hpp>
#include <string>

#include "runtime/seccomp_policy.h"

namespace nki_agent::sandbox_detail {
namespace {

// The signal handlers' own stack, so that a stack overflow can still be reported. 64 KiB is far
// above MINSIGSTKSZ even with AVX-512 state, and the handlers only call write().
constexpr size_t kAltStackBytes = size_t{64} * 1024;
// Linux leaves a guard gap of 256 pages (1 MiB) below a growing stack; a fault in it, or in the
// stack's rlimit range below where the child started, is a stack overflow.
constexpr uintptr_t kStackGuardSlack = uintptr_t{2} * 1024 * 1024;
// The child has 4 fds and the filter lets it create none; the limit matters with the filter off.
constexpr rlim_t kChildMaxFds = 16;
// Where fds are parked while they are moved to 0–3 (above any of the targets).
constexpr int kFdParkingBase = 10;

alignas(16) char g_alt_stack[kAltStackBytes];
// The address range a stack overflow faults in; set before the handlers are installed.
volatile uintptr_t g_stack_lo = 0;
volatile uintptr_t g_stack_hi = 0;

// Async-signal-safe: raw write() until done or the pipe is gone.
void write_all_raw(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    p += w;
    n -= static_cast<size_t>(w);
  }
}

void write_record(RecordKind kind, const void* body, uint32_t n) {
  unsigned char head[kRecordHeaderBytes] = {static_cast<unsigned char>(kind), static_cast<unsigned char>(n & 0xff),
                                            static_cast<unsigned char>((n >> 8) & 0xff),
                                            static_cast<unsigned char>((n >> 16) & 0xff),
                                            static_cast<unsigned char>((n >> 24) & 0xff)};
  write_all_raw(kResultFd, head, sizeof head);
  if (n > 0 && body != nullptr) write_all_raw(kResultFd, body, n);  // no body: the caller writes its n bytes
}

// Sends `sig` to this thread; the filter allows tgkill on the child's own pid.
void reraise(int sig) {
  ::syscall(SYS_tgkill, ::getpid(), ::syscall(SYS_gettid), sig);
}

// SA_RESETHAND has already restored SIG_DFL and SA_NODEFER left SIGSYS unblocked, so re-raising
// ends the process by SIGSYS, which is how the parent recognises a forbidden call.
void on_sigsys(int sig, siginfo_t* si, void*) {
  unsigned char body[8];
  int32_t nr = si->si_syscall;
  uint32_t arch = si->si_arch;
  std::memcpy(body, &nr, 4);
  std::memcpy(body + 4, &arch, 4);
  write_record(RecordKind::kSyscall, body, sizeof body);
  reraise(sig);
  ::_exit(128 + sig);  // not reached
}

// SIGSEGV / SIGBUS: notes a stack overflow, then lets the default action end the process.
void on_fault(int sig, siginfo_t* si, void*) {
  auto addr = reinterpret_cast<uintptr_t>(si->si_addr);
  if (addr >= g_stack_lo && addr < g_stack_hi) {
    uint64_t a = addr;
    write_record(RecordKind::kStackOverflow, &a, sizeof a);
  }
  // Sent by kill()/raise() rather than a fault: returning would not repeat it, so raise it again.
  if (si->si_code <= 0) reraise(sig);
  // A real fault: returning re-runs the instruction, which faults again under SIG_DFL.
}

// std::bad_alloc escaping a noexcept function ends in std::terminate: report it as memory.
void on_terminate() {
  if (std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::bad_alloc&) {
      write_record(RecordKind::kOutOfMemory, nullptr, 0);
    } catch (...) {
    }
  }
  std::abort();
}

[[noreturn]] void setup_failed(const std::string& what) {
  std::string text = what;
  if (errno != 0) text += std::string(": ") + std::strerror(errno);
  write_record(RecordKind::kSetupFailed, text.data(), static_cast<uint32_t>(text.size()));
  ::_exit(kExitSetupFailed);
}

// Puts plan's fds at 0, 1, 2, 3 and closes every other fd.
void arrange_fds(const ChildPlan& plan) {
  const int sources[4] = {plan.stdin_fd, plan.stdout_fd, plan.stderr_fd, plan.result_fd};
  int parked[4];
  for (int i = 0; i < 4; ++i) {
    parked[i] = ::fcntl(sources[i], F_DUPFD_CLOEXEC, kFdParkingBase);
    if (parked[i] < 0) {
      // The result pipe may not be at fd 3 yet: report through wherever it is.
      std::string text = std::string("moving fds: ") + std::strerror(errno);
      unsigned char head[kRecordHeaderBytes] = {static_cast<unsigned char>(RecordKind::kSetupFailed),
                                                static_cast<unsigned char>(text.size()), 0, 0, 0};
      write_all_raw(plan.result_fd, head, sizeof head);
      write_all_raw(plan.result_fd, text.data(), text.size());
      ::_exit(kExitSetupFailed);
    }
  }
  for (int i = 0; i < 4; ++i) ::dup2(parked[i], i);  // dup2 clears FD_CLOEXEC on the copy
  if (::syscall(SYS_close_range, kResultFd + 1, ~0U, 0) != 0) {
    // Kernels before 5.9: close one by one up to the fd limit.
    rlimit nofile{};
    ::getrlimit(RLIMIT_NOFILE, &nofile);
    const rlim_t top = nofile.rlim_cur == RLIM_INFINITY ? 65536 : nofile.rlim_cur;
    for (rlim_t fd = kResultFd + 1; fd < top; ++fd) ::close(static_cast<int>(fd));
  }
}

// Lowers a limit (never raises a hard limit, which needs privileges).
void lower_limit(int resource, rlim_t soft, rlim_t hard, const char* name) {
  rlimit cur{};
  if (::getrlimit(resource, &cur) != 0) setup_failed(std::string("getrlimit ") + name);
  rlimit want{};
  want.rlim_max = cur.rlim_max == RLIM_INFINITY ? hard : std::min(hard, cur.rlim_max);
  want.rlim_cur = std::min(soft, want.rlim_max);
  if (::setrlimit(resource, &want) != 0) setup_failed(std::string("setrlimit ") + name);
}

void apply_rlimits(const SandboxLimits& lim) {
  const auto cpu = static_cast<rlim_t>(std::max(1.0, std::ceil(lim.cpu_seconds)));
  lower_limit(RLIMIT_CPU, cpu, cpu + 1, "RLIMIT_CPU");  // SIGXCPU at soft, SIGKILL at hard
  if (!sandbox_sanitizer_build()) {
    const auto as = static_cast<rlim_t>(lim.address_space_bytes);
    lower_limit(RLIMIT_AS, as, as, "RLIMIT_AS");
  }
  const auto fsize = static_cast<rlim_t>(lim.max_file_bytes);
  lower_limit(RLIMIT_FSIZE, fsize, fsize, "RLIMIT_FSIZE");
  lower_limit(RLIMIT_CORE, 0, 0, "RLIMIT_CORE");
  // No new processes or threads for an unprivileged user. root ignores RLIMIT_NPROC, which is why
  // the seccomp filter refuses fork/clone as well.
  lower_limit(RLIMIT_NPROC, 0, 0, "RLIMIT_NPROC");
  lower_limit(RLIMIT_NOFILE, kChildMaxFds, kChildMaxFds, "RLIMIT_NOFILE");
}

void install_handlers() {
  // The stack the child runs on grows down from here; an overflow faults below its rlimit range.
  rlimit stack{};
  ::getrlimit(RLIMIT_STACK, &stack);
  const uintptr_t span = stack.rlim_cur == RLIM_INFINITY ? (uintptr_t{1} << 30) : stack.rlim_cur;
  const auto hi = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  g_stack_hi = hi;
  g_stack_lo = hi > span + kStackGuardSlack ? hi - span - kStackGuardSlack : 0;

  stack_t alt{};
  alt.ss_sp = g_alt_stack;
  alt.ss_size = sizeof g_alt_stack;
  if (::sigaltstack(&alt, nullptr) != 0) setup_failed("sigaltstack");

  struct sigaction sa {};
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND | SA_NODEFER;
  sa.sa_sigaction = on_fault;
  if (::sigaction(SIGSEGV, &sa, nullptr) != 0 || ::sigaction(SIGBUS, &sa, nullptr) != 0)
    setup_failed("sigaction SIGSEGV");
  sa.sa_sigaction = on_sigsys;
  if (::sigaction(SIGSYS, &sa, nullptr) != 0) setup_failed("sigaction SIGSYS");
  // Limits must end the process even if the zygote ignored these.
  for (int sig : {SIGPIPE, SIGXCPU, SIGXFSZ}) ::signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  std::set_terminate(on_terminate);
}

// Steps 1–6 of the file comment; a failure is reported on the result pipe and ends the process.
void confine(const ChildPlan& plan) {
  errno = 0;
  // 1. A process group of its own, so the parent's SIGKILL reaches anything it might have started.
  ::setpgid(0, 0);
  // 2. No privilege gain through exec, no ptrace/core dumps of it, no life after its parent.
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) setup_failed("PR_SET_NO_NEW_PRIVS");
  if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) setup_failed("PR_SET_DUMPABLE");
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) setup_failed("PR_SET_PDEATHSIG");
  if (::getppid() != plan.parent_pid) ::_exit(kExitParentGone);  // parent died before PDEATHSIG
  // 3–5. fds, rlimits, handlers.
  arrange_fds(plan);
  apply_rlimits(*plan.limits);
  install_handlers();
  // 6. The filter, last: from here on the child can only compute and use fds 0–3.
  if (plan.limits->seccomp) {
    std::string err = install_seccomp_filter(static_cast<int>(::getpid()), sandbox_sanitizer_build());
    if (!err.empty()) {
      errno = 0;
      setup_failed(err);
    }
  }
}

void write_result(const Result<Reply>& r) {
  if (r) {  // one record whose body is the parts in order, each written from where it lies
    write_record(RecordKind::kResult, nullptr, static_cast<uint32_t>(r->size()));
    for (const Reply::Part& p : r->parts()) write_all_raw(kResultFd, p.bytes().data(), p.bytes().size());
    return;
  }
  std::string json = r.error().to_json().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  write_record(RecordKind::kDiagnostic, json.data(), static_cast<uint32_t>(json.size()));
}

// Step 7: runs the request and writes its one record.
void run_request(const SandboxFn& fn) {
  Result<Reply> r;
  try {
    r = fn();
  } catch (const std::bad_alloc&) {
    std::fflush(nullptr);
    write_record(RecordKind::kOutOfMemory, nullptr, 0);
    return;
  } catch (const std::exception& e) {
    r = fail(std::string(kSandboxCrash), std::string("the handler threw an exception: ") + e.what(),
             "this is a bug in the sandboxed handler, not in the kernel");
  } catch (...) {
    r = fail(std::string(kSandboxCrash), "the handler threw an exception of unknown type",
             "this is a bug in the sandboxed handler, not in the kernel");
  }
  std::fflush(nullptr);
  write_result(r);
}

}  // namespace

void child_main(const ChildPlan& plan, const SandboxFn& fn) noexcept {
  try {
    confine(plan);
    run_request(fn);
  } catch (...) {
    // Only building a message (a std::string) can throw here, and only when memory is gone.
    static constexpr char kText[] = "an exception escaped the sandbox setup or the result encoding";
    write_record(RecordKind::kSetupFailed, kText, sizeof kText - 1);
    ::_exit(kExitSetupFailed);
  }
  ::_exit(0);
}

}  // namespace nki_agent::sandbox_detail
