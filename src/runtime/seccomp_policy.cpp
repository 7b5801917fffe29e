#include "runtime/seccomp_policy.h"

#include <seccomp.h>

#include <fcntl.h>
#include <sched.h>      // CLONE_THREAD
#include <sys/ioctl.h>  // TCGETS, TIOCGWINSZ
#include <sys/mman.h>   // memfd_create
#include <unistd.h>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>

namespace nki_agent {
namespace {

struct SyscallEntry {
  std::string_view name;
  int nr;  // libseccomp's number: the native one, or a negative pseudo-number it maps per arch
};

// The tables read better as the groups they are than one call per line.
// clang-format off
#define NKIA_SYSCALL(n) SyscallEntry{#n, SCMP_SYS(n)}

// Allowed without conditions: what an interpreter needs to compute and to use the fds it has.
// No call here takes a path, creates an fd, or touches another process.
constexpr SyscallEntry kAllowed[] = {
    // I/O on the fds the child was given (stdin = /dev/null, stdout, stderr, result pipe).
    NKIA_SYSCALL(read), NKIA_SYSCALL(write), NKIA_SYSCALL(readv), NKIA_SYSCALL(writev),
    NKIA_SYSCALL(pread64), NKIA_SYSCALL(close), NKIA_SYSCALL(lseek),
    // CPython's io calls fstat on its fds (newfstatat, the form glibc uses, is conditional below).
    NKIA_SYSCALL(fstat),
    // Memory.
    NKIA_SYSCALL(mmap), NKIA_SYSCALL(munmap), NKIA_SYSCALL(mremap), NKIA_SYSCALL(mprotect),
    NKIA_SYSCALL(brk), NKIA_SYSCALL(madvise),
    // Locks (glibc's, even single-threaded), time, randomness.
    NKIA_SYSCALL(futex), NKIA_SYSCALL(clock_gettime), NKIA_SYSCALL(clock_getres),
    NKIA_SYSCALL(clock_nanosleep), NKIA_SYSCALL(nanosleep), NKIA_SYSCALL(gettimeofday),
    NKIA_SYSCALL(time), NKIA_SYSCALL(getrusage), NKIA_SYSCALL(times), NKIA_SYSCALL(getrandom),
    // Signals to itself (kill/tgkill/tkill are below, with their checks).
    NKIA_SYSCALL(rt_sigprocmask), NKIA_SYSCALL(rt_sigreturn), NKIA_SYSCALL(sigaltstack),
    NKIA_SYSCALL(restart_syscall),
    // Leaving.
    NKIA_SYSCALL(exit), NKIA_SYSCALL(exit_group),
    // Harmless facts about itself.
    NKIA_SYSCALL(getpid), NKIA_SYSCALL(gettid), NKIA_SYSCALL(getppid), NKIA_SYSCALL(getuid),
    NKIA_SYSCALL(geteuid), NKIA_SYSCALL(getgid), NKIA_SYSCALL(getegid), NKIA_SYSCALL(sched_yield),
    NKIA_SYSCALL(sched_getaffinity), NKIA_SYSCALL(uname), NKIA_SYSCALL(getcwd),
    NKIA_SYSCALL(getrlimit),
};

// Allowed only with the argument checks in add_conditional_rules(); listed for docs and tests.
constexpr std::string_view kConditional[] = {"rt_sigaction", "kill", "tgkill", "tkill", "ioctl", "fcntl",
                                             "prlimit64", "newfstatat"};

// Made only by escape attempts: the child dies by SIGSYS (after reporting the number).
constexpr SyscallEntry kKilling[] = {
    NKIA_SYSCALL(execve), NKIA_SYSCALL(execveat), NKIA_SYSCALL(ptrace),
    NKIA_SYSCALL(process_vm_readv), NKIA_SYSCALL(process_vm_writev), NKIA_SYSCALL(pidfd_getfd),
    NKIA_SYSCALL(bpf), NKIA_SYSCALL(perf_event_open), NKIA_SYSCALL(userfaultfd),
    // io_uring runs file and socket operations without passing them through this filter.
    NKIA_SYSCALL(io_uring_setup), NKIA_SYSCALL(io_uring_enter), NKIA_SYSCALL(io_uring_register),
    NKIA_SYSCALL(keyctl), NKIA_SYSCALL(add_key), NKIA_SYSCALL(request_key),
    NKIA_SYSCALL(init_module), NKIA_SYSCALL(finit_module), NKIA_SYSCALL(delete_module),
    NKIA_SYSCALL(kexec_load), NKIA_SYSCALL(kexec_file_load), NKIA_SYSCALL(reboot),
    NKIA_SYSCALL(mount), NKIA_SYSCALL(umount2), NKIA_SYSCALL(pivot_root), NKIA_SYSCALL(chroot),
    NKIA_SYSCALL(fsopen), NKIA_SYSCALL(fsconfig), NKIA_SYSCALL(fsmount), NKIA_SYSCALL(fspick),
    NKIA_SYSCALL(move_mount), NKIA_SYSCALL(open_tree), NKIA_SYSCALL(unshare), NKIA_SYSCALL(setns),
    NKIA_SYSCALL(swapon), NKIA_SYSCALL(swapoff), NKIA_SYSCALL(open_by_handle_at),
    NKIA_SYSCALL(name_to_handle_at), NKIA_SYSCALL(kcmp), NKIA_SYSCALL(acct), NKIA_SYSCALL(iopl),
    NKIA_SYSCALL(ioperm), NKIA_SYSCALL(syslog), NKIA_SYSCALL(quotactl),
};

#undef NKIA_SYSCALL
// clang-format on

// A comparison that looks at the low 32 bits only, as the OS kernel does for an `int` argument
// (a caller may put anything in the upper half of the register).
scmp_arg_cmp low32_eq(unsigned arg, uint32_t value) {
  return scmp_arg_cmp{arg, SCMP_CMP_MASKED_EQ, 0xffffffffULL, value};
}

struct RuleError {
  std::string text;
  bool failed() const { return !text.empty(); }
};

void add_rule(scmp_filter_ctx ctx, RuleError* err, uint32_t action, int nr, std::string_view name,
              std::initializer_list<scmp_arg_cmp> args = {}) {
  if (err->failed()) return;
  int rc = seccomp_rule_add_array(ctx, action, nr, static_cast<unsigned>(args.size()), args.begin());
  if (rc < 0) err->text = "seccomp rule for " + std::string(name) + ": " + std::strerror(-rc);
}

void add_conditional_rules(scmp_filter_ctx ctx, RuleError* err, int self_pid) {
  const uint32_t allow = SCMP_ACT_ALLOW;
  // rt_sigaction for any signal but SIGSYS, so the SIGSYS handler that reports forbidden calls
  // stays in place. 64-bit comparisons: a value with upper bits set is refused, so the kernel's
  // truncation to int can never turn an allowed value into SIGSYS.
  static_assert(SIGSYS == 31, "the signal ranges below assume SIGSYS is 31");
  const int sa = SCMP_SYS(rt_sigaction);
  add_rule(ctx, err, allow, sa, "rt_sigaction", {scmp_arg_cmp{0, SCMP_CMP_LE, 30, 0}});
  add_rule(ctx, err, allow, sa, "rt_sigaction", {scmp_arg_cmp{0, SCMP_CMP_MASKED_EQ, ~0x1fULL, 32}});
  add_rule(ctx, err, allow, sa, "rt_sigaction", {scmp_arg_cmp{0, SCMP_CMP_EQ, 64, 0}});

  // Signals only to itself: its pid, its own process group (0 or -pid; it leads a group of one).
  // A filter made before its child exists (self_pid 0) allows no signal to any process.
  if (self_pid > 0) {
    const auto pid = static_cast<uint32_t>(self_pid);
    const auto neg_pid = static_cast<uint32_t>(-self_pid);
    add_rule(ctx, err, allow, SCMP_SYS(kill), "kill", {low32_eq(0, pid)});
    add_rule(ctx, err, allow, SCMP_SYS(kill), "kill", {low32_eq(0, 0)});
    add_rule(ctx, err, allow, SCMP_SYS(kill), "kill", {low32_eq(0, neg_pid)});
    add_rule(ctx, err, allow, SCMP_SYS(tgkill), "tgkill", {low32_eq(0, pid), low32_eq(1, pid)});
    add_rule(ctx, err, allow, SCMP_SYS(tkill), "tkill", {low32_eq(0, pid)});
  }

  // newfstatat only as fstat: glibc >= 2.33 implements fstat(fd) as newfstatat(fd, "",
  // AT_EMPTY_PATH). A stat of a path (os.stat, os.path.exists, os.lstat in os.path.realpath) is
  // refused with EPERM, so a child learns nothing of the host's files, and Python code that probes
  // paths (inspect.stack(), linecache) sees them as absent and goes on. Python cannot pass
  // AT_EMPTY_PATH with a path; only native code could, and the filter cannot read the path.
  add_rule(ctx, err, allow, SCMP_SYS(newfstatat), "newfstatat",
           {scmp_arg_cmp{3, SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, AT_EMPTY_PATH}});

  // ioctl: only the terminal queries isatty() and CPython's io make (never TIOCSTI and friends).
  add_rule(ctx, err, allow, SCMP_SYS(ioctl), "ioctl", {low32_eq(1, TCGETS)});
  add_rule(ctx, err, allow, SCMP_SYS(ioctl), "ioctl", {low32_eq(1, TIOCGWINSZ)});

  // fcntl: fd and status flags; no F_DUPFD (no new fds), no locks, no leases, no F_SETOWN.
  for (int cmd : {F_GETFD, F_SETFD, F_GETFL, F_SETFL})
    add_rule(ctx, err, allow, SCMP_SYS(fcntl), "fcntl", {low32_eq(1, static_cast<uint32_t>(cmd))});

  // prlimit64: reading its own limits (pid 0, new_limit NULL), never raising or setting them.
  add_rule(ctx, err, allow, SCMP_SYS(prlimit64), "prlimit64",
           {scmp_arg_cmp{0, SCMP_CMP_EQ, 0, 0}, scmp_arg_cmp{2, SCMP_CMP_EQ, 0, 0}});
}

// Extra calls the sanitizer runtimes make in a child (sanitizer builds only). UBSan's vptr check
// probes whether memory is readable by write()ing it into a fresh pipe: without pipe/pipe2 every
// check of a polymorphic object fails as "invalid vptr". ASan itself needed nothing more (its
// shadow is mapped before main, and it reports through write()).
constexpr SyscallEntry kSanitizerExtra[] = {SyscallEntry{"pipe", SCMP_SYS(pipe)},
                                            SyscallEntry{"pipe2", SCMP_SYS(pipe2)}};

// What glibc's pthread_create and a new thread's start make besides clone (reference children
// only: PyTorch may start threads). None takes a path or touches another process.
constexpr SyscallEntry kThreadStart[] = {SyscallEntry{"set_robust_list", SCMP_SYS(set_robust_list)},
                                         SyscallEntry{"rseq", SCMP_SYS(rseq)},
                                         SyscallEntry{"sched_getparam", SCMP_SYS(sched_getparam)},
                                         SyscallEntry{"sched_getscheduler", SCMP_SYS(sched_getscheduler)}};

}  // namespace

namespace {

// The filter of one kind of child, built but not loaded. `self_pid` > 0 allows kill/tgkill/tkill
// on that pid; `threads` allows clone for a thread of the same process (never a new process) and
// the calls glibc makes when a thread starts.
scmp_filter_ctx build_filter(int self_pid, bool sanitizer_runtime, bool threads, RuleError* err) {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
  if (ctx == nullptr) {
    err->text = "seccomp_init failed";
    return nullptr;
  }
  // A call made through another ABI (32-bit int 0x80, x32) is refused outright.
  if (int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS); rc < 0)
    err->text = std::string("seccomp bad-arch action: ") + std::strerror(-rc);
  for (const auto& s : kAllowed) add_rule(ctx, err, SCMP_ACT_ALLOW, s.nr, s.name);
  if (sanitizer_runtime)
    for (const auto& s : kSanitizerExtra) add_rule(ctx, err, SCMP_ACT_ALLOW, s.nr, s.name);
  add_conditional_rules(ctx, err, self_pid);
  if (threads) {
    // CLONE_THREAD set: a thread sharing this process's memory, files and filter. Without it the
    // call would make a new process, which stays refused (EPERM).
    add_rule(ctx, err, SCMP_ACT_ALLOW, SCMP_SYS(clone), "clone",
             {scmp_arg_cmp{0, SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD}});
    for (const auto& s : kThreadStart) add_rule(ctx, err, SCMP_ACT_ALLOW, s.nr, s.name);
  }
  for (const auto& s : kKilling) add_rule(ctx, err, SCMP_ACT_TRAP, s.nr, s.name);
  // glibc's pthread_create and posix_spawn try clone3 first and fall back to clone only on ENOSYS.
  add_rule(ctx, err, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), "clone3");
  return ctx;
}

}  // namespace

std::string install_seccomp_filter(int self_pid, bool sanitizer_runtime) {
  RuleError err;
  scmp_filter_ctx ctx = build_filter(self_pid, sanitizer_runtime, /*threads=*/false, &err);
  if (ctx == nullptr) return err.text;
  if (!err.failed()) {
    if (int rc = seccomp_load(ctx); rc < 0) err.text = std::string("seccomp_load: ") + std::strerror(-rc);
  }
  seccomp_release(ctx);
  return err.text;
}

Result<std::string> reference_child_filter_bpf() {
  RuleError err;
  scmp_filter_ctx ctx = build_filter(/*self_pid=*/0, /*sanitizer_runtime=*/false, /*threads=*/true, &err);
  if (ctx == nullptr) return fail("nkia_sandbox_setup", err.text);
  std::string bpf;
  if (!err.failed()) {
    // libseccomp writes the program to a file descriptor: an anonymous file, read back whole.
    int fd = ::memfd_create("nkia-reference-filter", MFD_CLOEXEC);
    if (fd < 0) {
      err.text = std::string("memfd_create: ") + std::strerror(errno);
    } else {
      if (int rc = seccomp_export_bpf(ctx, fd); rc < 0) {
        err.text = std::string("seccomp_export_bpf: ") + std::strerror(-rc);
      } else {
        const off_t size = ::lseek(fd, 0, SEEK_END);
        if (size <= 0 || size % 8 != 0 || ::lseek(fd, 0, SEEK_SET) != 0) {
          err.text = "seccomp_export_bpf wrote no whole program";
        } else {
          bpf.resize(static_cast<size_t>(size));
          size_t got = 0;
          while (got < bpf.size()) {
            ssize_t n = ::read(fd, bpf.data() + got, bpf.size() - got);
            if (n <= 0) break;
            got += static_cast<size_t>(n);
          }
          if (got != bpf.size()) err.text = "reading the exported filter back failed";
        }
      }
      ::close(fd);
    }
  }
  seccomp_release(ctx);
  if (err.failed()) return fail("nkia_sandbox_setup", err.text);
  return bpf;
}

std::string syscall_name(int nr) {
  char* name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
  if (name == nullptr) return "syscall " + std::to_string(nr);
  std::string out(name);
  std::free(name);  // NOLINT(cppcoreguidelines-no-malloc): libseccomp allocates it with malloc
  return out;
}

std::vector<std::string_view> seccomp_allowed_syscalls() {
  std::vector<std::string_view> out;
  for (const auto& s : kAllowed) out.push_back(s.name);
  for (auto n : kConditional) out.push_back(n);
  return out;
}

std::vector<std::string_view> seccomp_killing_syscalls() {
  std::vector<std::string_view> out;
  for (const auto& s : kKilling) out.push_back(s.name);
  return out;
}

}  // namespace nki_agent
