// runtime/sandbox_child.h — internal to run_sandboxed: the child's side and the result-pipe format.
//
// The child writes records to fd 3: [kind: 1 byte][length: u32 little-endian][body]. Exactly one
// of kResult / kDiagnostic / kOutOfMemory / kSetupFailed ends a run it finishes itself; kSyscall
// and kStackOverflow come from its signal handlers just before it dies. The parent trusts none of
// it beyond "this is what the child says": a malformed stream only misreports the child's own end.
//
// Nothing here may be used outside src/runtime/sandbox*.cpp.
#pragma once

#include <sys/types.h>

#include <cstdint>

#include "runtime/sandbox.h"

namespace nki_agent::sandbox_detail {

// The child's fds: 0 = /dev/null, 1 = stdout pipe, 2 = stderr pipe, 3 = result pipe. Nothing else.
inline constexpr int kResultFd = 3;

enum class RecordKind : uint8_t {
  kResult = 'R',         // body: the payload
  kDiagnostic = 'D',     // body: Diagnostic JSON from child_fn
  kOutOfMemory = 'M',    // body: empty; child_fn threw std::bad_alloc (RLIMIT_AS)
  kSetupFailed = 'F',    // body: text; the confinement could not be set up, child_fn never ran
  kSyscall = 'S',        // body: i32 syscall number, u32 audit arch; from the SIGSYS handler
  kStackOverflow = 'O',  // body: u64 fault address; from the SIGSEGV handler
};
inline constexpr size_t kRecordHeaderBytes = 5;

// Exit statuses the child uses for its own reasons.
inline constexpr int kExitSetupFailed = 125;  // with a kSetupFailed record
inline constexpr int kExitParentGone = 126;   // the parent died between fork and PDEATHSIG

struct ChildPlan {
  pid_t parent_pid = 0;
  int stdin_fd = -1;  // /dev/null, opened by the parent
  int stdout_fd = -1;
  int stderr_fd = -1;
  int result_fd = -1;
  const SandboxLimits* limits = nullptr;
};

// Runs in the child right after fork(): confines the process, runs `fn`, writes its record and
// _exit()s. Never returns, never throws, never runs atexit handlers.
[[noreturn]] void child_main(const ChildPlan& plan, const SandboxFn& fn) noexcept;

}  // namespace nki_agent::sandbox_detail
