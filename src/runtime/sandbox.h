// runtime/sandbox.h — runs one request in a forked child process under limits.
//
// Kernels come from LLMs and are hostile. run_sandboxed() forks a child, confines it (own process
// group, no new privileges, not dumpable, killed with its parent, rlimits, only fds 0–3 open, a
// seccomp allow-list), runs `child_fn` there and sends its bytes back through a pipe. The parent
// enforces a wall-clock deadline, caps everything the child writes, reaps it, and turns every way
// the child can end into a success or one Diagnostic with a stable code (kSandbox* below) and a
// hint a kernel author can act on. docs/sandbox.md has the threat model and the exact policy.
//
// This file must never run child code in the calling process, leave a child alive or unreaped when
// it returns, or let the child's output grow the caller's memory beyond the limits. It is
// language-neutral: the embedded CPython host plugs in as a child_fn and knows nothing of fork.
//
// Call it from a single-threaded process (the worker zygote): the child runs arbitrary C++ after
// fork(), which is only safe when no other thread holds a lock. Hosts use WorkerPool instead.
// The child gets SIGKILL when the calling *thread* ends (PR_SET_PDEATHSIG follows the thread).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/diagnostic.h"
#include "runtime/reply.h"

namespace nki_agent {

inline constexpr int64_t kKiB = 1024;
inline constexpr int64_t kMiB = 1024 * kKiB;
inline constexpr int64_t kGiB = 1024 * kMiB;

// Default limits. NKIBench kernels finish in well under a second on the simulator, so 10 s of
// wall-clock time only ever stops hangs. The child is single-threaded (the filter forbids new
// threads), so its CPU time cannot exceed its wall time: the CPU limit is a second line of defence
// enforced by the OS kernel itself (RLIMIT_CPU) should the parent's timer ever fail.
inline constexpr double kDefaultWallSeconds = 10;
inline constexpr double kDefaultCpuSeconds = 10;
// Virtual address space (RLIMIT_AS), not resident memory: CPython + NumPy + the simulator's tiles
// need a few hundred MiB; 4 GiB leaves room for big shapes while a 2-core CI machine with 8 GiB
// survives two workers hitting the limit at once.
inline constexpr int64_t kDefaultAddressSpaceBytes = 4 * kGiB;
// The result payload: the largest NKIBench outputs are a few MiB of fp32; 64 MiB bounds the copy
// through the pipe and what one call can make the host hold.
inline constexpr int64_t kDefaultMaxOutputBytes = 64 * kMiB;
// stdout + stderr together. More than this is a print in a loop: kill it early instead of draining
// gigabytes.
inline constexpr int64_t kDefaultMaxLogBytes = 8 * kMiB;
// How much of each of stdout and stderr is kept (the head; the rest is counted and dropped).
inline constexpr int64_t kDefaultCaptureBytes = 1 * kMiB;
// Kernels write no files. With RLIMIT_FSIZE = 0 any write to a regular file raises SIGXFSZ, even
// when the seccomp filter is off.
inline constexpr int64_t kDefaultMaxFileBytes = 0;

// Upper bounds validate_limits() accepts for the byte limits (and so what a worker frame carries).
inline constexpr int64_t kMaxOutputBytesCeiling = 256 * kMiB;
inline constexpr int64_t kMaxCaptureBytesCeiling = 16 * kMiB;

// The longest time limit a run may have: a day; anything longer is a typo.
inline constexpr double kMaxLimitSeconds = 24 * 3600;

struct SandboxLimits {
  double wall_seconds = kDefaultWallSeconds;                // parent's deadline; then SIGKILL to the process group
  double cpu_seconds = kDefaultCpuSeconds;                  // RLIMIT_CPU soft = ceil(this), hard = soft + 1
  int64_t address_space_bytes = kDefaultAddressSpaceBytes;  // RLIMIT_AS (not applied under ASan)
  int64_t max_output_bytes = kDefaultMaxOutputBytes;        // result payload cap
  int64_t max_log_bytes = kDefaultMaxLogBytes;              // stdout + stderr written, in total
  int64_t capture_bytes = kDefaultCaptureBytes;             // kept per stream
  int64_t max_file_bytes = kDefaultMaxFileBytes;            // RLIMIT_FSIZE
  bool seccomp = true;  // off only for debugging tools (valgrind, strace) that need more syscalls

  // The limits of one kernel run: `seconds` of wall-clock and CPU time, `memory_mib` of address
  // space, and with `large_reply` the largest reply a worker frame carries (a trace adds about a
  // hundred bytes per instruction; verified outputs can be a few hundred MiB), else the default.
  static SandboxLimits for_kernel(double seconds, int64_t memory_mib, bool large_reply);
};

// Stable Diagnostic codes of the sandbox, one per way a child can fail.
inline constexpr std::string_view kSandboxTimeout = "nkia_sandbox_timeout";
inline constexpr std::string_view kSandboxCpuLimit = "nkia_sandbox_cpu_limit";
inline constexpr std::string_view kSandboxMemoryLimit = "nkia_sandbox_memory_limit";
inline constexpr std::string_view kSandboxOutputLimit = "nkia_sandbox_output_limit";
inline constexpr std::string_view kSandboxForbiddenSyscall = "nkia_sandbox_forbidden_syscall";
inline constexpr std::string_view kSandboxCrash = "nkia_sandbox_crash";
inline constexpr std::string_view kSandboxExit = "nkia_sandbox_exit";
inline constexpr std::string_view kSandboxBadLimits = "nkia_sandbox_bad_limits";
inline constexpr std::string_view kSandboxSetup = "nkia_sandbox_setup";  // could not fork/confine

// The head of one output stream of the child.
struct CapturedStream {
  std::string bytes;        // at most SandboxLimits::capture_bytes
  int64_t total_bytes = 0;  // everything the child wrote to the stream
  bool truncated = false;   // total_bytes > bytes.size()
};

struct SandboxOutput {
  std::string payload;  // what child_fn returned; empty on failure
  CapturedStream stdout_capture;
  CapturedStream stderr_capture;
  double wall_seconds = 0;     // fork to reap
  double cpu_seconds = 0;      // CPU time of the child (the scheduler's figure when /proc has it)
  int64_t peak_rss_bytes = 0;  // the child's peak resident set, including the pages it shares with
                               // the process it was forked from; 0 when unknown
};

// Everything about one run: `error` is empty on success. The captures and timings are filled
// either way (a kernel that crashes still printed something useful).
struct SandboxReport {
  std::optional<Diagnostic> error;
  SandboxOutput output;
  bool ok() const { return !error.has_value(); }
};

// What runs in the child, after the confinement: the bytes to send back (runtime/reply.h: some may be
// spans of the child's memory, written without a copy), or a Diagnostic of its own (a kernel's
// Python exception with file:line). A function returning std::string converts to it.
using SandboxFn = std::function<Result<Reply>()>;

// kSandboxBadLimits when a limit is out of its range (see sandbox.cpp); nothing is forked.
Result<void> validate_limits(const SandboxLimits& limits);

// Runs child_fn in a confined child and reports how it ended. Never throws for anything the child
// does.
SandboxReport run_sandboxed_report(const SandboxLimits& limits, const SandboxFn& child_fn);

// The same, as a Result: on failure the Diagnostic carries the tail of the child's stderr as notes.
Result<SandboxOutput> run_sandboxed(const SandboxLimits& limits, const SandboxFn& child_fn);

// A payload's buffer handed back once its bytes are sent, by a worker that answers its requests one
// after another on this thread: the next child's result is read into it — memory already in place —
// instead of into fresh pages, which the kernel zeroes first (on a virtual machine a large share of
// what a large result costs). One buffer of at most 256 MiB is kept, never inherited by a child
// (MADV_DONTFORK: it counts against no child's address space). It keeps its length, so that the
// next result of the same size is read over it without being zeroed first; no byte of it is ever
// reported as a later result's.
void recycle_result_buffer(std::string&& buffer);

// Appends the last lines of the captured stderr (and stdout) to `d` as notes, so that a crash
// report shows what the kernel printed just before it.
Diagnostic with_output_notes(Diagnostic d, const SandboxOutput& output);

// True when this binary was built with AddressSanitizer. Such builds do not apply RLIMIT_AS (ASan
// reserves terabytes of shadow address space up front) and add the calls ASan's runtime makes to
// the seccomp allow-list (docs/sandbox.md).
constexpr bool sandbox_sanitizer_build() {
#if defined(__SANITIZE_ADDRESS__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return true;
#else
  return false;
#endif
#else
  return false;
#endif
}

}  // namespace nki_agent
