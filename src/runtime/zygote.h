// runtime/zygote.h — the worker program's side: named handlers, a warm-up, and the serve loop.
//
// A worker program (nki-agent-worker, or the test worker) is started by the host with
// posix_spawn and talks to it over the socket at fd 3 (protocol.h). It runs its warm-up once — the
// future Python host imports CPython, NumPy and the nki modules here, so that every request
// starts warm — then, for each request, forks a sandboxed child (run_sandboxed_report) that runs
// the named handler on the payload, and answers with the result or the Diagnostic.
//
// The zygote is single-threaded and must survive anything a child does: it never runs a handler
// itself, never holds shared writable mappings a child could scribble on, and treats a malformed
// request as a Diagnostic (or, when the stream is out of step, as the end of the conversation).
// It must never start threads: fork() from a multi-threaded zygote would hand children held locks.
// serve_worker sets OPENBLAS_NUM_THREADS / OMP_NUM_THREADS / MKL_NUM_THREADS to 1 before the warm-up
// and refuses to serve (kWorkerStartup) if the warm-up left more than one thread running.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.h"
#include "runtime/reply.h"
#include "runtime/shared_memory.h"

namespace nki_agent {

// Runs in the sandboxed child: the request payload and the shared memory that came with it in,
// the result bytes (or a Diagnostic) out.
using Handler = std::function<Result<Reply>(const std::string& payload, const Attachments& attachments)>;
using PayloadHandler = std::function<Result<std::string>(const std::string& payload)>;
// Runs once in the zygote before the first request.
using WarmupFn = std::function<Result<void>()>;

class HandlerRegistry {
 public:
  // Throws InternalError for an invalid name (see valid_handler_name) or a duplicate: handlers are
  // registered by code at startup, so either is a bug.
  void register_handler(std::string name, Handler fn);
  // A handler that takes no attachments (a request with some gets a kWorkerBadFrame Diagnostic).
  void register_handler(std::string name, PayloadHandler fn);
  void set_warmup(WarmupFn fn) { warmup_ = std::move(fn); }

  const Handler* find(std::string_view name) const;
  std::vector<std::string> names() const;
  Result<void> warm_up() const { return warmup_ ? warmup_() : Result<void>{}; }

 private:
  std::map<std::string, Handler, std::less<>> handlers_;
  WarmupFn warmup_;
};

// The handlers every worker has: "echo" (returns its payload).
void register_builtin_handlers(HandlerRegistry& registry);

// Exit statuses of serve_worker.
inline constexpr int kWorkerExitOk = 0;            // the host closed the socket
inline constexpr int kWorkerExitUsage = 2;         // not started by a host (no socket at fd 3)
inline constexpr int kWorkerExitWarmupFailed = 3;  // after sending the warm-up Diagnostic
inline constexpr int kWorkerExitBadStream = 4;     // a frame it could not resynchronise after
inline constexpr int kWorkerExitIo = 5;            // the socket failed

// Serves requests on `fd` until the host closes it. Returns an exit status above.
int serve_worker(const HandlerRegistry& registry, int fd);

// The whole main() of a worker program: `--list-handlers` prints the names, no argument serves the
// socket at fd 3.
int worker_main(int argc, char** argv, const HandlerRegistry& registry);

}  // namespace nki_agent
