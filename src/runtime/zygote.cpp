#include "runtime/zygote.h"

#include <dirent.h>
#include <malloc.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "runtime/protocol.h"
#include "runtime/sandbox.h"
#include "runtime/worker_env.h"

namespace nki_agent {
namespace {

// The socket's fd in a worker program, set by the host's posix_spawn file actions.
constexpr int kWorkerSocketFd = 3;
// Thread-pool sizes of the numeric libraries a warm-up may load (NumPy's OpenBLAS starts its pool
// when it is loaded). Forced to 1: the zygote must stay single-threaded, and the sandboxed
// children cannot start threads anyway.
constexpr const char* kThreadPoolEnv[] = {"OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"};

int thread_count() {
  int n = 0;
  if (DIR* d = ::opendir("/proc/self/task")) {
    while (const dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') ++n;
    ::closedir(d);
  }
  return n;
}

// Hands the zygote's free heap memory back to the kernel. The heap keeps freed blocks for reuse
// (py_host.cpp raises glibc's trim threshold for the kernels' tiles), and a forked child that
// reuses one of them writes to a page it shares with the zygote: a copy-on-write fault, with a TLB
// flush, instead of a fresh page. After the trim a child's allocations land on fresh pages.
void release_free_heap() {
  ::malloc_trim(0);
}

SandboxReport error_report(Diagnostic d) {
  SandboxReport r;
  r.error = std::move(d);
  return r;
}

}  // namespace

void HandlerRegistry::register_handler(std::string name, Handler fn) {
  if (!valid_handler_name(name)) throw InternalError("invalid handler name: " + name);
  if (!fn) throw InternalError("empty handler: " + name);
  if (!handlers_.emplace(name, std::move(fn)).second) throw InternalError("duplicate handler: " + name);
}

void HandlerRegistry::register_handler(std::string name, PayloadHandler fn) {
  if (!fn) throw InternalError("empty handler: " + name);
  register_handler(
      std::move(name),
      [fn = std::move(fn)](const std::string& payload, const Attachments& attachments) -> Result<std::string> {
        if (!attachments.empty())
          return fail(std::string(kWorkerBadFrame), "this handler takes no shared memory",
                      "send the request's bytes in its payload");
        return fn(payload);
      });
}

const Handler* HandlerRegistry::find(std::string_view name) const {
  auto it = handlers_.find(name);
  return it == handlers_.end() ? nullptr : &it->second;
}

std::vector<std::string> HandlerRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& [name, fn] : handlers_) out.push_back(name);
  return out;
}

void register_builtin_handlers(HandlerRegistry& registry) {
  registry.register_handler("echo", [](const std::string& payload) -> Result<std::string> { return payload; });
}

int serve_worker(const HandlerRegistry& registry, int fd) {
  // A host that went away must be a write error, not a signal; children must stay reapable.
  std::signal(SIGPIPE, SIG_IGN);
  std::signal(SIGCHLD, SIG_DFL);

  for (const char* var : kThreadPoolEnv) ::setenv(var, "1", 1);
  auto warm = registry.warm_up();
  // fork() copies only the calling thread: children of a multi-threaded zygote would inherit locks
  // that threads missing in them hold (a BLAS call would hang until the deadline).
  if (const int threads = thread_count(); warm && threads > 1)
    warm = fail(std::string(kWorkerStartup),
                fmt::format("the worker's warm-up left {} threads running; a zygote must be single-threaded", threads),
                "start no threads in the warm-up; keep OPENBLAS_NUM_THREADS / OMP_NUM_THREADS at 1");
  if (!warm) {
    (void)write_frame(fd, encode_startup_error(warm.error()), std::nullopt);
    return kWorkerExitWarmupFailed;
  }
  release_free_heap();
  if (!write_frame(fd, encode_ready(static_cast<int>(::getpid()), registry.names(), sandbox_sanitizer_build()),
                   std::nullopt))
    return kWorkerExitIo;

  while (true) {
    auto frame = read_frame(fd, std::nullopt, /*take_fds=*/true);
    if (!frame) {
      if (frame.error().code == kFrameEof) return kWorkerExitOk;
      if (frame.error().code == kWorkerBadFrame) {
        // The stream is out of step: say why (best effort), then stop.
        (void)write_frame(fd, encode_response(0, error_report(frame.error())), std::nullopt);
        return kWorkerExitBadStream;
      }
      return kWorkerExitIo;
    }
    uint64_t id = 0;
    auto request = decode_request(std::move(*frame), &id);
    SandboxReport report;
    if (!request) {
      report = error_report(request.error());
    } else if (const Handler* handler = registry.find(request->handler); handler == nullptr) {
      report = error_report(Diagnostic::error(std::string(kWorkerUnknownHandler),
                                              "the worker has no handler named '" + request->handler + "'",
                                              "use one of the worker's handlers (nki-agent-worker --list-handlers)"));
    } else {
      // The attachments are mapped here, before the fork: the child inherits the mappings, never a
      // descriptor; they are unmapped when this request ends.
      const std::string& payload = request->payload;
      const Attachments& attachments = request->attachments;
      report = run_sandboxed_report(request->limits,
                                    [handler, &payload, &attachments] { return (*handler)(payload, attachments); });
    }
    if (!write_frame(fd, response_parts(id, report), std::nullopt)) return kWorkerExitIo;
    if (request) request->attachments.clear();  // copies kept for later requests now rest
    rest_kept_copies();
    recycle_result_buffer(std::move(report.output.payload));  // the next result lands in memory in place
    release_free_heap();                                      // while the host reads the response, before the next fork
  }
}

int worker_main(int argc, char** argv, const HandlerRegistry& registry) {
  if (argc == 2 && std::strcmp(argv[1], "--list-handlers") == 0) {
    for (const auto& n : registry.names()) std::printf("%s\n", n.c_str());
    return kWorkerExitOk;
  }
  struct stat st {};
  if (argc != 1 || ::fstat(kWorkerSocketFd, &st) != 0 || !S_ISSOCK(st.st_mode)) {
    std::fprintf(stderr,
                 "%s: runs sandboxed requests for nki-agent over the socket at fd 3; nki-agent starts it.\n"
                 "usage: %s [--list-handlers]\n",
                 argv[0], argv[0]);
    return kWorkerExitUsage;
  }
  restrict_own_environment();  // whoever started it, no host variable reaches a kernel
  return serve_worker(registry, kWorkerSocketFd);
}

}  // namespace nki_agent
