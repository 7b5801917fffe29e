// runtime/sandbox.cpp — the parent side of run_sandboxed: fork, watch, cap, kill, reap, classify.
#include "runtime/sandbox.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <new>
#include <nlohmann/json.hpp>

#include "core/huge_pages.h"
#include "core/owned_fd.h"
#include "runtime/sandbox_child.h"
#include "runtime/seccomp_policy.h"

namespace nki_agent {

using sandbox_detail::RecordKind;

namespace {

using Clock = std::chrono::steady_clock;

// Room on the result pipe for the records around the payload (a Diagnostic with a long traceback).
constexpr int64_t kResultRecordSlack = 1 * kMiB;
// The most one drain() call reads before the parent looks at its clock and caps again.
constexpr int64_t kDrainBudget = 1 * kMiB;
// After the child is reaped, how many drain() rounds may collect what it left in its pipes (a
// pipe holds 64 KiB by default and at most 1 MiB, fs.pipe-max-size).
constexpr int kFinalDrainRounds = 4;
// The result pipe's buffer: 1 MiB (the default fs.pipe-max-size) instead of 64 KiB, so a MiB-sized
// result crosses with a few wake-ups instead of sixteen.
constexpr int kResultPipeBytes = 1 << 20;
// Poll tick used only when pidfd_open is missing (Linux < 5.3) to notice the child's exit.
constexpr int kNoPidfdTickMs = 5;
// Ranges validate_limits() accepts.
// Below this a forked child cannot map anything new at all (its parent's mappings count).
constexpr int64_t kMinAddressSpaceBytes = 64 * kMiB;
constexpr int64_t kMaxAddressSpaceBytes = int64_t{1} << 46;  // 64 TiB, the x86-64 user half
constexpr int64_t kMaxFileBytesCeiling = int64_t{1} << 40;
// with_output_notes: how much of the child's output to attach to a Diagnostic.
constexpr size_t kNoteLines = 20;
constexpr size_t kNoteBytes = 4096;
constexpr size_t kNoteLineBytes = 240;  // a longer line (a dumped tensor) is cut

// The result buffer kept for the next request (recycle_result_buffer). While kept, its whole huge
// pages are MADV_DONTFORK: no child forked meanwhile inherits them. Memory in that state must never
// go back to malloc (a block made of it, handed out again, would be missing from every later child),
// so a buffer is made inheritable again before it is used or freed.
constexpr size_t kMaxRecycledResultBytes = size_t{256} * kMiB;
std::string& spare_result_buffer() {
  thread_local std::string spare;
  return spare;
}
void set_inherited(std::string& s, bool inherited) {
  const auto begin = reinterpret_cast<uintptr_t>(s.data());
  const uintptr_t first = (begin + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  const uintptr_t last = (begin + s.capacity()) / kHugePageBytes * kHugePageBytes;
  if (last > first)
    (void)::madvise(reinterpret_cast<void*>(first), last - first, inherited ? MADV_DOFORK : MADV_DONTFORK);
}

struct Pipe {
  OwnedFd read_end;
  OwnedFd write_end;
  // `capacity`: a larger pipe buffer, best effort (fs.pipe-max-size caps it for non-root).
  bool open(int capacity = 0) {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) return false;
    read_end.reset(p[0]);
    write_end.reset(p[1]);
    if (capacity > 0) ::fcntl(p[0], F_SETPIPE_SZ, capacity);
    return ::fcntl(p[0], F_SETFL, O_NONBLOCK) == 0;
  }
};

// One pipe the parent reads. The log streams keep their head and count the rest. The result stream
// (`records`) keeps everything up to its cap, and reads the payload of its first record, the
// result, straight into `data` at its place: no pass through a stack buffer and no record header to
// cut off in front of it afterwards, each a full pass over a result of up to hundreds of MiB.
struct Stream {
  int fd = -1;
  bool open = true;
  std::string data;
  int64_t total = 0;
  int64_t keep = 0;
  // The result stream only.
  bool records = false;
  char head[sandbox_detail::kRecordHeaderBytes] = {};
  size_t head_got = 0;  // bytes of the first record's header read so far
  // The first record is a result within the cap: `data` is its payload (sized to it), `filled`
  // bytes of it read; what follows it goes to `rest`. Otherwise `data` keeps the stream as it
  // came, from the header on.
  bool direct = false;
  size_t filled = 0;
  std::string rest;
};

uint32_t read_u32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

// The result stream's first header is complete: read its payload in place when it is a result the
// cap allows. `data` may still hold an earlier result's bytes (recycle_result_buffer keeps their
// length, so that resizing to a payload of the same size writes nothing); the payload read over
// them covers all of it before it counts (parse_stream), and every other path starts it anew.
void first_header_read(Stream& s) {
  const auto kind = static_cast<RecordKind>(static_cast<unsigned char>(s.head[0]));
  const size_t len = read_u32(s.head + 1);
  if (kind == RecordKind::kResult && static_cast<int64_t>(len + sandbox_detail::kRecordHeaderBytes) <= s.keep) {
    if (s.data.capacity() < len) {
      s.data.clear();
      reserve_on_huge_pages(s.data, len);
    }
    s.data.resize(len);
    s.direct = true;
    return;
  }
  s.data.assign(s.head, sizeof s.head);
}

// Where the next bytes of `s` go: the first header, the payload in place, or `buf` (to be kept
// within the cap by take()).
std::pair<char*, size_t> next_target(Stream& s, char* buf, size_t buf_size, int64_t budget) {
  if (s.records && s.head_got < sizeof s.head) return {s.head + s.head_got, sizeof s.head - s.head_got};
  if (s.direct && s.filled < s.data.size())
    return {s.data.data() + s.filled,
            std::min(s.data.size() - s.filled, static_cast<size_t>(std::max<int64_t>(1, budget)))};
  return {buf, buf_size};
}

// `n` bytes arrived at `at` (next_target's answer).
void take(Stream& s, const char* at, size_t n) {
  if (s.records && s.head_got < sizeof s.head) {
    s.head_got += n;
    if (s.head_got == sizeof s.head) first_header_read(s);
    return;
  }
  if (s.direct && s.filled < s.data.size()) {
    s.filled += n;
    return;
  }
  std::string& to = s.direct ? s.rest : s.data;
  const int64_t held =
      static_cast<int64_t>(to.size()) + (s.direct ? static_cast<int64_t>(s.data.size() + sizeof s.head) : int64_t{0});
  const int64_t room = s.keep - held;
  if (room > 0) to.append(at, static_cast<size_t>(std::min<int64_t>(room, static_cast<int64_t>(n))));
}

// Reads what is available now, at most kDrainBudget bytes so that a child writing as fast as the
// parent reads cannot keep the parent from its deadline and cap checks. Returns the bytes read
// (EOF closes the stream).
int64_t drain(Stream& s) {
  if (!s.open) return 0;
  char buf[64 * 1024];
  int64_t got = 0;
  while (got < kDrainBudget) {
    const auto [to, want] = next_target(s, buf, sizeof buf, kDrainBudget - got);
    ssize_t n = ::read(s.fd, to, want);
    if (n > 0) {
      got += n;
      s.total += n;
      take(s, to, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) s.open = false;
    return got;
  }
  return got;
}

enum class KillReason : uint8_t { kNone, kDeadline, kResultCap, kLogCap };

struct ChildRecords {
  bool has_result = false;
  std::string payload;
  std::optional<Diagnostic> diagnostic;
  bool out_of_memory = false;
  std::optional<std::string> setup_error;
  std::optional<int> syscall_nr;
  bool stack_overflow = false;
  bool malformed = false;
};

// The records in `bytes`, a stream of them; the last result's payload is copied out.
ChildRecords parse_records(std::string_view bytes) {
  ChildRecords r;
  size_t pos = 0;
  while (pos < bytes.size()) {
    if (bytes.size() - pos < sandbox_detail::kRecordHeaderBytes) {
      r.malformed = true;
      break;
    }
    const auto kind = static_cast<RecordKind>(static_cast<unsigned char>(bytes[pos]));
    const size_t len = read_u32(bytes.data() + pos + 1);
    pos += sandbox_detail::kRecordHeaderBytes;
    if (len > bytes.size() - pos) {
      r.malformed = true;
      break;
    }
    std::string_view body = bytes.substr(pos, len);
    pos += len;
    switch (kind) {
      case RecordKind::kResult:
        r.has_result = true;
        r.payload.assign(body);
        break;
      case RecordKind::kDiagnostic: {
        auto j = nlohmann::json::parse(body, nullptr, false);
        if (j.is_discarded() || !j.is_object()) {
          r.malformed = true;
          break;
        }
        Diagnostic d = Diagnostic::from_json(j);
        if (d.code.empty())
          r.malformed = true;
        else
          r.diagnostic = std::move(d);
        break;
      }
      case RecordKind::kOutOfMemory: r.out_of_memory = true; break;
      case RecordKind::kSetupFailed: r.setup_error = std::string(body); break;
      case RecordKind::kSyscall:
        if (len >= 4) {
          int32_t nr;
          std::memcpy(&nr, body.data(), 4);
          r.syscall_nr = nr;
        }
        break;
      case RecordKind::kStackOverflow: r.stack_overflow = true; break;
      default: r.malformed = true; break;
    }
  }
  return r;
}

// The result stream's records (drain() read it); consumes its data. A payload read in place is moved
// out, not copied, once all of it arrived; cut short, it is a malformed record, and none of the
// bytes it was read over count.
ChildRecords parse_stream(Stream& s) {
  if (!s.direct) {
    if (s.head_got < sizeof s.head) s.data.assign(s.head, s.head_got);
    return parse_records(s.data);
  }
  if (s.filled < s.data.size()) {
    ChildRecords r;
    r.malformed = true;
    return r;
  }
  ChildRecords r = parse_records(s.rest);
  if (!r.has_result) {  // the usual case: one record, the result
    r.has_result = true;
    r.payload = std::move(s.data);
  }
  return r;
}

std::string signal_label(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  const char* desc = ::sigdescr_np(sig);
  if (abbrev == nullptr) return fmt::format("signal {}", sig);
  return desc ? fmt::format("SIG{} ({})", abbrev, desc) : fmt::format("SIG{}", abbrev);
}

std::string bytes_label(int64_t n) {
  if (n >= kGiB && n % kGiB == 0) return fmt::format("{} GiB", n / kGiB);
  if (n >= kMiB && n % kMiB == 0) return fmt::format("{} MiB", n / kMiB);
  if (n >= kKiB && n % kKiB == 0) return fmt::format("{} KiB", n / kKiB);
  return fmt::format("{} bytes", n);
}

Diagnostic make(std::string_view code, std::string message, std::string hint) {
  return Diagnostic::error(std::string(code), std::move(message), std::move(hint));
}

Diagnostic memory_diagnostic(const SandboxLimits& lim) {
  return make(
      kSandboxMemoryLimit,
      fmt::format("the kernel ran out of memory (limit: {} of address space)", bytes_label(lim.address_space_bytes)),
      "allocate less: look for a shape that multiplies to a huge size, or a buffer that "
      "grows in a loop");
}

Diagnostic crash_diagnostic(int sig, bool stack_overflow) {
  if (stack_overflow)
    return make(kSandboxCrash, fmt::format("the kernel overflowed its stack (SIG{})", ::sigabbrev_np(sig)),
                "look for unbounded or very deep recursion; write it as a loop");
  std::string hint;
  switch (sig) {
    case SIGSEGV:
    case SIGBUS:
      hint = "an invalid memory access in native code: check indices, shapes and strides passed to it";
      break;
    case SIGABRT: hint = "the process aborted on a fatal error; the stderr notes show the message"; break;
    case SIGFPE: hint = "an integer division by zero in native code"; break;
    case SIGILL: hint = "an illegal instruction: memory was corrupted or a CPU feature is missing"; break;
    default: hint = "the process was ended by a signal it did not handle (did it signal itself?)"; break;
  }
  return make(kSandboxCrash, fmt::format("the kernel process crashed: {}", signal_label(sig)), std::move(hint));
}

std::optional<Diagnostic> classify(const SandboxLimits& lim, KillReason reason, int status, double cpu_used,
                                   const ChildRecords& rec) {
  switch (reason) {
    case KillReason::kDeadline:
      return make(kSandboxTimeout,
                  fmt::format("the kernel ran longer than {:g} s of wall-clock time and was killed", lim.wall_seconds),
                  "look for an unbounded loop or a blocking call (sleep, input, waiting on a lock)");
    case KillReason::kResultCap:
      return make(kSandboxOutputLimit,
                  fmt::format("the kernel returned more than {} of results", bytes_label(lim.max_output_bytes)),
                  "return only the output tensors; check that their shapes are what the task asks for");
    case KillReason::kLogCap:
      return make(kSandboxOutputLimit,
                  fmt::format("the kernel printed more than {} to stdout and stderr", bytes_label(lim.max_log_bytes)),
                  "remove print calls from loops; print shapes and a few values, not whole tensors");
    case KillReason::kNone: break;
  }
  if (rec.setup_error)
    return make(kSandboxSetup, "could not set up the sandbox: " + *rec.setup_error,
                "this is a problem with the machine or nki-agent, not with the kernel");
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const auto soft_cpu = std::max(1.0, std::ceil(lim.cpu_seconds));
    switch (sig) {
      case SIGSYS: {
        std::string name = rec.syscall_nr ? fmt::format("{} ({})", syscall_name(*rec.syscall_nr), *rec.syscall_nr)
                                          : std::string("unknown");
        return make(kSandboxForbiddenSyscall, "the kernel made a forbidden system call: " + name,
                    "kernels may not run programs, trace or signal other processes, or reach the "
                    "OS kernel's admin interfaces; compute only with the nki API and NumPy");
      }
      case SIGXCPU:
        return make(kSandboxCpuLimit, fmt::format("the kernel used more than {:g} s of CPU time", soft_cpu),
                    "look for an unbounded loop, or work that grows too fast with the input size");
      case SIGKILL:
        // The parent did not send it: either RLIMIT_CPU's hard limit (SIGXCPU ignored) or the
        // OOM killer.
        if (cpu_used >= soft_cpu)
          return make(kSandboxCpuLimit, fmt::format("the kernel used more than {:g} s of CPU time", soft_cpu),
                      "look for an unbounded loop, or work that grows too fast with the input size");
        return memory_diagnostic(lim).with_note(
            "killed by SIGKILL from outside the sandbox, most likely the "
            "out-of-memory killer");
      case SIGXFSZ:
        return make(kSandboxOutputLimit,
                    fmt::format("the kernel wrote more than {} to a file", bytes_label(lim.max_file_bytes)),
                    "kernels may not write files; return results instead");
      default:
        if (rec.out_of_memory) return memory_diagnostic(lim);
        return crash_diagnostic(sig, rec.stack_overflow && (sig == SIGSEGV || sig == SIGBUS));
    }
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == 0) {
    if (rec.out_of_memory) return memory_diagnostic(lim);
    if (rec.diagnostic) return *rec.diagnostic;
    if (rec.has_result) return std::nullopt;
    if (rec.malformed)
      return make(kSandboxExit, "the kernel process wrote a malformed result and exited",
                  "do not write to file descriptor 3; return results normally");
    return make(kSandboxExit, "the kernel process exited (status 0) before returning a result",
                "do not call exit(), sys.exit() or os._exit() in a kernel; return normally");
  }
  return make(kSandboxExit, fmt::format("the kernel process exited with status {} before returning a result", code),
              "do not call exit(), sys.exit() or os._exit() in a kernel; return normally");
}

SandboxReport setup_failure(SandboxReport rep, const std::string& what) {
  rep.error = make(kSandboxSetup, fmt::format("could not start the sandbox: {}: {}", what, std::strerror(errno)),
                   "this is a problem with the machine or nki-agent, not with the kernel");
  return rep;
}

// The CPU time the scheduler charged to an exited, unreaped child — what RLIMIT_CPU is measured
// against. getrusage's figure can lag it by a third on a loaded VM, too much to tell a child that
// hit the CPU hard limit from one the OOM killer took. -1 when /proc does not say.
double scheduler_cpu_seconds(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/schedstat", static_cast<int>(pid));
  FILE* f = std::fopen(path, "re");
  if (f == nullptr) return -1;
  unsigned long long ns = 0;
  const bool ok = std::fscanf(f, "%llu", &ns) == 1;
  std::fclose(f);
  return ok ? static_cast<double>(ns) * 1e-9 : -1;
}

double seconds_of(const timeval& tv) {
  return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) * 1e-6;
}

}  // namespace

SandboxLimits SandboxLimits::for_kernel(double seconds, int64_t memory_mib, bool large_reply) {
  SandboxLimits limits;
  limits.wall_seconds = seconds;
  limits.cpu_seconds = seconds;
  limits.address_space_bytes = memory_mib << 20;
  if (large_reply) limits.max_output_bytes = kMaxOutputBytesCeiling;
  return limits;
}

Result<void> validate_limits(const SandboxLimits& lim) {
  auto bad = [](const std::string& what) {
    return fail(std::string(kSandboxBadLimits), "invalid sandbox limits: " + what,
                "fix the limits passed to the sandbox (see docs/sandbox.md for the ranges)");
  };
  auto seconds_ok = [](double s) { return std::isfinite(s) && s > 0 && s <= kMaxLimitSeconds; };
  if (!seconds_ok(lim.wall_seconds))
    return bad(fmt::format("wall_seconds = {} is not in (0, 86400]", lim.wall_seconds));
  if (!seconds_ok(lim.cpu_seconds)) return bad(fmt::format("cpu_seconds = {} is not in (0, 86400]", lim.cpu_seconds));
  if (lim.address_space_bytes < kMinAddressSpaceBytes || lim.address_space_bytes > kMaxAddressSpaceBytes)
    return bad(fmt::format("address_space_bytes = {} is not in [64 MiB, 64 TiB]", lim.address_space_bytes));
  if (lim.max_output_bytes < 0 || lim.max_output_bytes > kMaxOutputBytesCeiling)
    return bad(fmt::format("max_output_bytes = {} is not in [0, 256 MiB]", lim.max_output_bytes));
  if (lim.max_log_bytes < 0 || lim.max_log_bytes > kMaxOutputBytesCeiling)
    return bad(fmt::format("max_log_bytes = {} is not in [0, 256 MiB]", lim.max_log_bytes));
  if (lim.capture_bytes < 0 || lim.capture_bytes > kMaxCaptureBytesCeiling)
    return bad(fmt::format("capture_bytes = {} is not in [0, 16 MiB]", lim.capture_bytes));
  if (lim.max_file_bytes < 0 || lim.max_file_bytes > kMaxFileBytesCeiling)
    return bad(fmt::format("max_file_bytes = {} is not in [0, 1 TiB]", lim.max_file_bytes));
  return {};
}

SandboxReport run_sandboxed_report(const SandboxLimits& lim, const SandboxFn& child_fn) {
  SandboxReport rep;
  if (auto ok = validate_limits(lim); !ok) {
    rep.error = ok.error();
    return rep;
  }
  Pipe result, out, err;
  if (!result.open(kResultPipeBytes) || !out.open() || !err.open()) return setup_failure(std::move(rep), "pipe2");
  OwnedFd devnull(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (devnull.get() < 0) return setup_failure(std::move(rep), "open /dev/null");

  sandbox_detail::ChildPlan plan;
  plan.parent_pid = ::getpid();
  plan.stdin_fd = devnull.get();
  plan.stdout_fd = out.write_end.get();
  plan.stderr_fd = err.write_end.get();
  plan.result_fd = result.write_end.get();
  plan.limits = &lim;

  std::fflush(nullptr);  // or the child would print the parent's buffered output again
  const auto t0 = Clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) return setup_failure(std::move(rep), "fork");
  if (pid == 0) {
    // The kept result buffer's pages were not inherited: the child forgets it (never frees it).
    new (&spare_result_buffer()) std::string();
    sandbox_detail::child_main(plan, child_fn);
  }

  // The child does the same; doing it here too means the group exists before any kill below.
  ::setpgid(pid, pid);
  result.write_end.reset();
  out.write_end.reset();
  err.write_end.reset();
  devnull.reset();
  OwnedFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));

  Stream streams[3];
  streams[0].fd = result.read_end.get();
  streams[0].keep = lim.max_output_bytes + kResultRecordSlack + 1;
  streams[1].fd = out.read_end.get();
  streams[1].keep = lim.capture_bytes;
  streams[2].fd = err.read_end.get();
  streams[2].keep = lim.capture_bytes;
  Stream& res = streams[0];
  // Memory a previous result already faulted in, if any, still holding that result's bytes (the
  // child is forked: it may be inherited again, and freed).
  res.records = true;
  res.data.swap(spare_result_buffer());
  set_inherited(res.data, true);
  auto over_caps = [&]() {
    if (res.total > lim.max_output_bytes + kResultRecordSlack) return KillReason::kResultCap;
    if (streams[1].total + streams[2].total > lim.max_log_bytes) return KillReason::kLogCap;
    return KillReason::kNone;
  };

  const auto deadline =
      t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(lim.wall_seconds));
  KillReason reason = KillReason::kNone;
  bool exited = false;
  while (!exited && reason == KillReason::kNone) {
    const auto now = Clock::now();
    if (now >= deadline) {
      reason = KillReason::kDeadline;
      break;
    }
    pollfd fds[4];
    nfds_t n = 0;
    int stream_of[4] = {-1, -1, -1, -1};
    for (int i = 0; i < 3; ++i)
      if (streams[i].open) {
        stream_of[n] = i;
        fds[n++] = pollfd{streams[i].fd, POLLIN, 0};
      }
    const nfds_t pid_slot = n;
    if (pidfd.get() >= 0) fds[n++] = pollfd{pidfd.get(), POLLIN, 0};
    auto left_ms = std::chrono::ceil<std::chrono::milliseconds>(deadline - now).count();
    int timeout = static_cast<int>(std::min<int64_t>(left_ms, 60'000));
    if (pidfd.get() < 0) timeout = std::min(timeout, kNoPidfdTickMs);
    const int ready = ::poll(fds, n, timeout);
    if (ready < 0 && errno != EINTR) {
      reason = KillReason::kDeadline;  // cannot watch the child any more: stop it
      break;
    }
    for (nfds_t k = 0; k < pid_slot; ++k)
      if (fds[k].revents != 0) drain(streams[stream_of[k]]);
    reason = over_caps();
    if (pidfd.get() >= 0) {
      exited = n > pid_slot && (fds[pid_slot].revents & POLLIN) != 0;
    } else {
      siginfo_t info{};
      exited = ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid;
    }
  }

  // The child (if still running) and anything left in its process group. The group cannot have
  // been recycled: the child is not reaped yet.
  ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);
  // Wait until it is a zombie (not yet reaped, so /proc still has its exact CPU time), then reap.
  siginfo_t exit_info{};
  while (::waitid(P_PID, static_cast<id_t>(pid), &exit_info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
  }
  const double sched_cpu = scheduler_cpu_seconds(pid);
  int status = 0;
  rusage ru{};
  while (::wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {
  }
  const auto t1 = Clock::now();
  for (auto& s : streams)  // what the child wrote just before it exited
    for (int round = 0; round < kFinalDrainRounds && drain(s) > 0; ++round) {
    }
  if (reason == KillReason::kNone) reason = over_caps();

  SandboxOutput& o = rep.output;
  o.wall_seconds = std::chrono::duration<double>(t1 - t0).count();
  o.cpu_seconds = std::max(sched_cpu, seconds_of(ru.ru_utime) + seconds_of(ru.ru_stime));
  o.peak_rss_bytes = static_cast<int64_t>(ru.ru_maxrss) * kKiB;
  for (int i = 1; i <= 2; ++i) {
    CapturedStream& c = i == 1 ? o.stdout_capture : o.stderr_capture;
    c.bytes = std::move(streams[i].data);
    c.total_bytes = streams[i].total;
    c.truncated = c.total_bytes > static_cast<int64_t>(c.bytes.size());
  }
  ChildRecords rec = parse_stream(res);
  rep.error = classify(lim, reason, status, o.cpu_seconds, rec);
  if (!rep.error) {
    if (static_cast<int64_t>(rec.payload.size()) > lim.max_output_bytes)
      rep.error = classify(lim, KillReason::kResultCap, status, o.cpu_seconds, rec);
    else
      o.payload = std::move(rec.payload);
  }
  return rep;
}

void recycle_result_buffer(std::string&& buffer) {
  std::string& spare = spare_result_buffer();
  if (buffer.capacity() > kMaxRecycledResultBytes || buffer.capacity() <= spare.capacity()) return;
  set_inherited(spare, true);  // the one it replaces is freed with `buffer`
  spare.swap(buffer);
  set_inherited(spare, false);
}

Result<SandboxOutput> run_sandboxed(const SandboxLimits& limits, const SandboxFn& child_fn) {
  SandboxReport rep = run_sandboxed_report(limits, child_fn);
  if (rep.error) return fail(with_output_notes(std::move(*rep.error), rep.output));
  return std::move(rep.output);
}

Diagnostic with_output_notes(Diagnostic d, const SandboxOutput& output) {
  auto add_tail = [&d](const CapturedStream& c, std::string_view name) {
    if (c.bytes.empty()) return;
    std::string_view text(c.bytes);
    if (text.size() > kNoteBytes) text = text.substr(text.size() - kNoteBytes);
    std::vector<std::string_view> lines;
    while (!text.empty()) {
      size_t nl = text.find('\n');
      lines.push_back(text.substr(0, nl));
      if (nl == std::string_view::npos) break;
      text.remove_prefix(nl + 1);
    }
    size_t first = lines.size() > kNoteLines ? lines.size() - kNoteLines : 0;
    for (size_t i = first; i < lines.size(); ++i) {
      std::string_view line = lines[i];
      const bool cut = line.size() > kNoteLineBytes;
      d.with_note(fmt::format("{}: {}{}", name, line.substr(0, kNoteLineBytes), cut ? " [...]" : ""));
    }
  };
  add_tail(output.stdout_capture, "stdout");
  add_tail(output.stderr_capture, "stderr");
  return d;
}

}  // namespace nki_agent
