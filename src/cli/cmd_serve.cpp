// `nki-agent serve`: the reward service (docs/serve.md). SIGTERM or SIGINT drains: no new requests,
// the admitted ones finished, then exit 0.
#include <fmt/format.h>

#include <pthread.h>
#include <csignal>
#include <thread>

#include "cli/cli.h"
#include "serve/server.h"
#include "tasks/speed_cost.h"
#include "tasks/task_dirs.h"

namespace nki_agent::cli {

namespace {

struct ServeCliOptions {
  std::string host = "127.0.0.1";
  int port = serve::kDefaultPort;
  int workers = 0;
  int queue = 0;
  std::string tokens;
  std::vector<std::string> tasks;
  std::string cache;
  double max_body_mib = 8;
  double deadline = 600;
  double drain = 600;
  double timeout = kDefaultKernelSeconds;
  bool no_speed = false;
  bool no_inline = false;
  std::string inline_root;
};

int run_serve(const Context& ctx, const ServeCliOptions& o) {
  // Signals are taken by one thread (sigwait); every other thread, httplib's and the scorer's,
  // inherits the blocked mask. Child processes reset it.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  serve::ServeOptions so;
  so.host = o.host;
  so.port = o.port;
  so.workers = o.workers;
  so.queue = o.queue;
  so.tokens_file = o.tokens;
  so.max_body_bytes = static_cast<size_t>(o.max_body_mib * (1 << 20));
  so.deadline_seconds = o.deadline;
  so.scorer.task_roots = o.tasks.empty() ? std::vector<std::string>{default_task_root()} : o.tasks;
  so.scorer.verify.reference.cache_dir = o.cache;
  so.scorer.verify.kernel_seconds = o.timeout;
  so.scorer.inline_references = !o.no_inline;
  so.scorer.inline_tasks.root = o.inline_root;
  if (!o.no_speed) so.scorer.verify.speed = cost_speed_model();
  auto server = serve::RewardServer::create(std::move(so));
  if (!server) return report(ctx, server.error());

  const double drain = o.drain;
  serve::RewardServer* s = server->get();
  std::thread waiter([s, stop_signals, drain] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    std::fprintf(stderr, "nki-agent serve: %s, draining\n", sig == SIGTERM ? "SIGTERM" : "SIGINT");
    s->shutdown(drain);
  });
  std::fprintf(stderr, "nki-agent serve: listening on http://%s:%d\n", o.host.c_str(), (*server)->port());
  std::fflush(stderr);
  (*server)->run();
  // run() returns once shutdown() stopped the listener; a listener that failed by itself leaves the
  // waiter blocked, so it is woken.
  pthread_kill(waiter.native_handle(), SIGTERM);
  waiter.join();
  return kExitOk;
}

}  // namespace

void add_serve_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<ServeCliOptions>();
  auto* sub =
      app.add_subcommand("serve", "The reward service for RL trainers: HTTP JSON scoring of kernels (docs/serve.md)");
  sub->add_option("--host", o->host, "Address to bind (a non-loopback address needs --tokens)")->capture_default_str();
  sub->add_option("--port", o->port, "Port (0: any free port)")->capture_default_str()->check(CLI::Range(0, 65535));
  sub->add_option("--workers", o->workers, "Requests scored at once (default: one per core)")
      ->check(CLI::Range(1, 256));
  sub->add_option("--queue", o->queue, "Requests waiting for a worker before 429 (default: 4 x workers)")
      ->check(CLI::Range(1, 100000));
  sub->add_option("--tokens", o->tokens, "Bearer tokens, one per line (required off loopback)");
  sub->add_option("--tasks", o->tasks, "Task roots (repeatable; default: $NKIA_TASKS, ./tasks/nkibench, ./tasks)");
  sub->add_option("--cache", o->cache, "Reference cache folder (default: $XDG_CACHE_HOME/nki-agent/references)");
  sub->add_option("--max-body-mib", o->max_body_mib, "Largest request body")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 1024.0));
  sub->add_option("--deadline", o->deadline, "Seconds an admitted request may wait for a worker")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 86400.0));
  sub->add_option("--drain", o->drain, "Seconds SIGTERM waits for admitted requests")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 86400.0));
  sub->add_option("--timeout", o->timeout, "Wall-clock and CPU limit of one kernel run, in seconds")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 3600.0));
  sub->add_flag("--no-speed", o->no_speed, "Score without the simulated speed against the baseline");
  sub->add_flag("--no-inline-references", o->no_inline,
                "Refuse requests that carry their own reference (reference_code); score only the roots' tasks");
  sub->add_option("--inline-root", o->inline_root,
                  "Folder for the tasks made from inline references (default: $TMPDIR/nki-agent-inline-tasks-UID)");
  sub->callback([&ctx, o] { ctx.exit_code = run_serve(ctx, *o); });
}

}  // namespace nki_agent::cli
