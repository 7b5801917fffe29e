// runtime/seccomp_policy.h — the system-call filter a sandboxed child runs under.
//
// An allow-list: a child may compute (memory, time, randomness, signals to itself) and use the
// four fds it was given (stdin = /dev/null, stdout/stderr capture pipes, the result pipe); nothing
// else. Three outcomes for a call that is not allowed:
//   EPERM   the default, for calls an ordinary program makes and should see fail cleanly (open,
//           socket, fork, clone for a thread, kill of another process …): CPython turns it into a
//           PermissionError/OSError the kernel author sees with a line number.
//   ENOSYS  clone3 only, so that glibc falls back to clone, which then gets EPERM.
//   KILL    calls that only an escape attempt makes (execve, ptrace, process_vm_*, io_uring,
//           bpf, mount, …): SECCOMP_RET_TRAP, whose SIGSYS handler reports the call's number
//           and then dies by SIGSYS. The call never runs, whatever the child does with SIGSYS.
// The tables in seccomp_policy.cpp are the policy; docs/sandbox.md lists them.
//
// This file must never install a filter in a process other than a sandbox child, and never
// allow a call that opens, creates or names a file, socket or process.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.h"

namespace nki_agent {

// Installs the filter in the calling process (the sandbox child, single-threaded, after fork).
// `self_pid` is its own pid: kill/tgkill/tkill are allowed on it alone. `sanitizer_runtime` adds
// the few calls ASan's runtime needs. Returns an empty string on success, else what failed.
std::string install_seccomp_filter(int self_pid, bool sanitizer_runtime);

// The filter of a reference child (tasks/reference.h, a task's PyTorch reference that is not
// ours): the same tables, plus threads of its own process (clone with CLONE_THREAD) and no signal
// to any process. Not installed here: the raw BPF program (struct sock_filter[], 8 bytes an
// instruction, this machine's byte order) for the child to load with prctl(PR_SET_SECCOMP) after
// PR_SET_NO_NEW_PRIVS. Code: nkia_sandbox_setup.
Result<std::string> reference_child_filter_bpf();

// "execve" for a syscall number of this architecture, "syscall 1234" when unknown.
std::string syscall_name(int nr);

// The names in the policy tables, for tests and docs. Unconditionally allowed ones first, then
// those allowed with argument checks.
std::vector<std::string_view> seccomp_allowed_syscalls();
std::vector<std::string_view> seccomp_killing_syscalls();

}  // namespace nki_agent
