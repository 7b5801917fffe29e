// runtime/worker_pool.h — the host's side: warm worker processes and a thread-safe call().
//
// A WorkerPool keeps N worker programs (zygotes, runtime/zygote.h) running, each started with
// posix_spawn — so it inherits no threads, locks or fds from the host — and connected by a
// socketpair. call() takes a free worker (blocking until one is free), sends the request, and
// waits for the answer until the kernel's own deadline plus a slack: a worker that does not answer
// by then is killed (the backstop for a hung zygote). A worker that died, hung or spoke garbage is
// reaped and replaced on the next call that needs it.
//
// The worker program is found at WorkerPoolOptions::worker_path, else $NKIA_WORKER, else
// `nki-agent-worker` next to the running executable (/proc/self/exe).
//
// This file must never leave a worker process running or unreaped after the pool is destroyed,
// never let a dead worker raise SIGPIPE in the host, and never run untrusted code in the host.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/diagnostic.h"
#include "runtime/protocol.h"
#include "runtime/sandbox.h"

namespace nki_agent {

// The future Python host imports CPython + NumPy in its warm-up: seconds, more on a loaded
// 2-core machine with several workers starting at once.
inline constexpr double kDefaultWorkerStartupSeconds = 60;
// After the kernel's deadline, how long the worker may take to kill, reap and answer: milliseconds
// normally; 5 s covers a loaded machine and a 256 MiB result crossing the socket.
inline constexpr double kDefaultBackstopSlackSeconds = 5;
// On shutdown, how long a worker may take to exit after its socket closes (LSan's leak check in
// sanitizer builds takes a while) before it is SIGKILLed.
inline constexpr double kWorkerShutdownGraceSeconds = 2;

struct WorkerPoolOptions {
  int workers = 0;          // 0: std::thread::hardware_concurrency()
  std::string worker_path;  // empty: $NKIA_WORKER, then nki-agent-worker beside /proc/self/exe
  double startup_seconds = kDefaultWorkerStartupSeconds;
  double backstop_slack_seconds = kDefaultBackstopSlackSeconds;
  // "NAME=value" entries the caller deliberately gives the workers, on top of the allow-listed
  // environment (runtime/worker_env.h); a worker program reads them before worker_main() restricts
  // its own environment to the allow-list again. Nothing of the host's environment is passed
  // otherwise.
  std::vector<std::string> environment;
};

struct WorkerResponse : SandboxOutput {
  int worker_pid = 0;  // the zygote that ran it
  // The payload, when the request asked for it in memory (WorkerRequest::payload_in_memory); then
  // `payload` is empty.
  std::shared_ptr<ReceivedBytes> payload_memory;
};

// Everything about one call; `error` is empty on success. The captures are filled whenever the
// worker answered.
struct WorkerReport {
  std::optional<Diagnostic> error;
  WorkerResponse response;
  bool ok() const { return !error.has_value(); }
};

// The path of the worker program (see the file comment). kWorkerNotFound when there is none.
Result<std::string> locate_worker(const std::string& explicit_path);

// One worker process and the host's end of its socket. Not thread-safe; WorkerPool serialises.
class WorkerProcess {
 public:
  // Starts the program and waits for its "ready" frame. kWorkerNotFound, kWorkerStartup, or the
  // Diagnostic its warm-up failed with.
  static Result<std::unique_ptr<WorkerProcess>> spawn(const std::string& path, double startup_seconds,
                                                      const std::vector<std::string>& environment = {});
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  int pid() const { return pid_; }
  int socket_fd() const { return fd_; }
  const std::vector<std::string>& handlers() const { return handlers_; }
  bool sanitizer() const { return sanitizer_; }
  // False once it died, hung or broke the protocol (it has then been killed and reaped).
  bool usable() const { return usable_; }

  // Idle and alive: not exited, nothing unexpected waiting on the socket.
  bool healthy();
  // One request, answered by `deadline` or the worker is killed (kWorkerHung).
  WorkerReport call(uint64_t id, const WorkerRequest& request, std::chrono::steady_clock::time_point deadline);
  // Closes the socket so the worker exits by itself; finish_shutdown() then waits for it.
  void begin_shutdown();
  void finish_shutdown();
  // SIGKILL and reap now. Returns how it ended ("exited with status 3", "killed by SIGKILL").
  std::string kill_and_reap();

 private:
  WorkerProcess() = default;
  Diagnostic lost(std::string_view code, const std::string& what, const WorkerRequest& request);

  int pid_ = -1;
  int fd_ = -1;
  bool reaped_ = false;
  bool usable_ = true;
  bool sanitizer_ = false;
  std::vector<std::string> handlers_;
};

class WorkerPool {
 public:
  // Locates the worker program and starts all workers (in parallel), waiting until each is ready.
  static Result<std::unique_ptr<WorkerPool>> create(WorkerPoolOptions options = {});
  // Closes every worker, waits for them, kills the stragglers. No call() may be running.
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Thread-safe. The sandbox's or the worker layer's Diagnostic on failure (with the tail of the
  // kernel's stderr as notes).
  Result<WorkerResponse> call(const WorkerRequest& request);
  WorkerReport call_report(const WorkerRequest& request);

  int size() const { return static_cast<int>(slots_.size()); }
  const std::string& worker_path() const { return path_; }
  // The pids of the running workers (0 for a slot waiting to be restarted).
  std::vector<int> worker_pids() const;
  // Workers started so far: size() at creation, plus one per replacement.
  int64_t workers_started() const;

 private:
  WorkerPool(WorkerPoolOptions options, std::string path);
  // A free slot (blocking until one is), preferring the worker that was sent the most of the
  // request's reused buffers (SharedMemory::mark_reused) before: it kept copies of them.
  size_t acquire(const WorkerRequest& request);
  void release(size_t slot, int pid);

  struct Slot {
    std::unique_ptr<WorkerProcess> process;  // touched only by the thread that holds the slot
    bool busy = false;
    int pid = 0;                        // mirror of process->pid() for worker_pids(), under mu_
    std::vector<uint64_t> recent_keys;  // reuse keys of the buffers sent to it lately, oldest first; under mu_
  };
  static constexpr size_t kRecentKeysPerWorker = 256;

  WorkerPoolOptions options_;
  std::string path_;
  mutable std::mutex mu_;
  std::condition_variable free_cv_;
  std::vector<Slot> slots_;
  uint64_t next_id_ = 1;  // under mu_
  int64_t started_ = 0;   // under mu_
};

}  // namespace nki_agent
