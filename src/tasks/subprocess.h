// tasks/subprocess.h — trusted helper programs (Debian's Python with PyTorch) in their own process.
//
// The verifier's Python helpers (the PyTorch reference worker, the static policy checker) never
// run inside nki-agent: they are separate processes started with fork + execve, in their own
// process group, with rlimits (address space, CPU time, file size, no core files), a clean
// environment, stdin/stdout pipes and a wall-clock deadline after which the whole group gets
// SIGKILL. These helpers run our own code (task.py is ours) on data we generated, so they are not
// under the kernel sandbox's seccomp filter (PyTorch needs threads and files); the limits only
// contain accidents — a runaway reference, a hostile kernel source that makes the parser blow up.
//
// This file must never leave a child running or unreaped after its owner is gone, never block on a
// child's stderr (it is drained while waiting), and never let a child's output grow without bound.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/diagnostic.h"

namespace nki_agent {

struct ProcessLimits {
  double wall_seconds = 60;                         // per request (HelperProcess) or for the whole run (run_process)
  double cpu_seconds = 600;                         // RLIMIT_CPU of the child, over its life
  int64_t address_space_bytes = int64_t{16} << 30;  // RLIMIT_AS
  int64_t max_file_bytes = int64_t{8} << 30;        // RLIMIT_FSIZE
  int64_t max_output_bytes = 64 << 20;              // stdout kept; more is an error
  int64_t stderr_tail_bytes = 16 << 10;             // the end of stderr kept, for messages
};

// The environment helpers get: PATH, HOME, LANG and one-thread settings for the numeric libraries;
// nothing else of ours (no PYTHONPATH, no PYTHONHOME).
std::vector<std::string> helper_environment(int threads);

struct ProcessResult {
  std::string out;       // stdout
  std::string err_tail;  // the end of stderr
  int exit_status = -1;  // exit code, or -signal
};

// Runs argv to completion with `input` on stdin. Codes: nkia_helper_spawn (cannot start),
// nkia_helper_timeout, nkia_helper_output_limit. A non-zero exit is not an error here: the caller
// reads exit_status.
Result<ProcessResult> run_process(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                                  const std::string& input, const ProcessLimits& limits);

// A long-lived helper that answers one line per request line (JSON lines).
class HelperProcess {
 public:
  static Result<std::unique_ptr<HelperProcess>> spawn(const std::vector<std::string>& argv,
                                                      const std::vector<std::string>& env, const ProcessLimits& limits);
  ~HelperProcess();  // closes stdin, gives the child a moment to exit, then kills the group
  HelperProcess(const HelperProcess&) = delete;
  HelperProcess& operator=(const HelperProcess&) = delete;

  // Writes `line` (a newline is added) and reads one line back within `seconds`. On a timeout or
  // the child's death the helper is killed and every later request fails. Codes:
  // nkia_helper_timeout, nkia_helper_died, nkia_helper_output_limit.
  Result<std::string> request(const std::string& line, double seconds);
  const std::string& stderr_tail() const { return err_tail_; }
  bool alive() const { return pid_ > 0; }

 private:
  HelperProcess() = default;
  void kill_and_reap();
  Result<void> pump(int64_t deadline_ms, bool want_line);

  pid_t pid_ = -1;
  int in_fd_ = -1, out_fd_ = -1, err_fd_ = -1;
  ProcessLimits limits_;
  std::string out_buf_;
  std::string err_tail_;
  int exit_status_ = -1000;  // kNotReaped
};

}  // namespace nki_agent
