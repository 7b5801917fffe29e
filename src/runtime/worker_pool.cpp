#include "runtime/worker_pool.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string_view>
#include <thread>

#include "core/log.h"
#include "runtime/worker_env.h"

extern char** environ;  // NOLINT: POSIX declares it nowhere in a header

namespace nki_agent {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kWorkerProgram = "nki-agent-worker";
constexpr int kWorkerSocketFd = 3;  // where the worker expects its socket (zygote.cpp)
constexpr int kFdParkingBase = 10;  // a socket end that happens to be fd 3 is moved above this
// More workers than this is a configuration error (each is a process with its own memory).
constexpr int kMaxWorkers = 1024;
// How often finish_shutdown() looks whether a worker has exited.
constexpr auto kShutdownPoll = std::chrono::milliseconds(2);

Clock::time_point after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const char* abbrev = ::sigabbrev_np(WTERMSIG(status));
    return abbrev ? fmt::format("killed by SIG{}", abbrev) : fmt::format("killed by signal {}", WTERMSIG(status));
  }
  return "ended";
}

const char* kBugHint = "this is a fault in nki-agent's worker, not in the kernel; the pool starts a new worker";

}  // namespace

Result<std::string> locate_worker(const std::string& explicit_path) {
  auto runnable = [](const std::string& p) { return !p.empty() && ::access(p.c_str(), X_OK) == 0; };
  auto not_found = [](const std::string& where) {
    return fail(std::string(kWorkerNotFound), "cannot find the worker program: " + where,
                "build the nki-agent-worker target (it is built next to nki-agent), or set NKIA_WORKER to its path");
  };
  if (!explicit_path.empty()) {
    if (runnable(explicit_path)) return explicit_path;
    return not_found(explicit_path + " (from the pool options) is not an executable file");
  }
  if (const char* env = std::getenv("NKIA_WORKER"); env != nullptr && *env != '\0') {
    if (runnable(env)) return std::string(env);
    return not_found(std::string(env) + " (from NKIA_WORKER) is not an executable file");
  }
  char self[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return not_found("/proc/self/exe is unreadable and NKIA_WORKER is not set");
  std::string dir(self, static_cast<size_t>(n));
  dir.erase(dir.find_last_of('/') + 1);
  std::string candidate = dir + kWorkerProgram;
  if (runnable(candidate)) return candidate;
  return not_found(candidate + " does not exist and NKIA_WORKER is not set");
}

// ---- WorkerProcess ----

Result<std::unique_ptr<WorkerProcess>> WorkerProcess::spawn(const std::string& path, double startup_seconds,
                                                            const std::vector<std::string>& environment) {
  auto startup_failure = [&path](const std::string& what) {
    return fail(std::string(kWorkerStartup), fmt::format("cannot start the worker program {}: {}", path, what),
                "check that the worker program belongs to this build of nki-agent");
  };
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return startup_failure(std::strerror(errno));
  int child_end = sv[1];
  if (child_end == kWorkerSocketFd) {  // dup2 onto itself would keep FD_CLOEXEC
    child_end = ::fcntl(sv[1], F_DUPFD_CLOEXEC, kFdParkingBase);
    ::close(sv[1]);
  }
  std::unique_ptr<WorkerProcess> w(new WorkerProcess());
  w->fd_ = sv[0];

  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  ::posix_spawn_file_actions_init(&fa);
  ::posix_spawnattr_init(&attr);
  ::posix_spawn_file_actions_adddup2(&fa, child_end, kWorkerSocketFd);
  ::posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  ::posix_spawn_file_actions_addclosefrom_np(&fa, kWorkerSocketFd + 1);  // no host fd leaks in
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  sigdelset(&all, SIGKILL);
  sigdelset(&all, SIGSTOP);
  ::posix_spawnattr_setsigmask(&attr, &none);
  ::posix_spawnattr_setsigdefault(&attr, &all);  // nothing the host ignores stays ignored
  ::posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::string arg0 = path;
  char* argv[] = {arg0.data(), nullptr};
  std::vector<std::string> env = worker_environment(environ);  // an allow-list, never the host's
  env.insert(env.end(), environment.begin(), environment.end());
  std::vector<char*> envp;
  envp.reserve(env.size() + 1);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  const int rc = child_end < 0 ? errno : ::posix_spawn(&pid, path.c_str(), &fa, &attr, argv, envp.data());
  ::posix_spawn_file_actions_destroy(&fa);
  ::posix_spawnattr_destroy(&attr);
  if (child_end >= 0) ::close(child_end);
  if (rc != 0) {
    w->reaped_ = true;  // nothing to reap
    return startup_failure(std::strerror(rc));
  }
  w->pid_ = pid;

  auto ready = read_frame(w->fd_, after(startup_seconds));
  if (!ready) {
    const std::string code = ready.error().code;
    const std::string how = w->kill_and_reap();
    if (code == kFrameTimeout)
      return fail(std::string(kWorkerStartup),
                  fmt::format("the worker program {} was not ready within {:g} s", path, startup_seconds),
                  "its warm-up hangs or is too slow for this machine; raise WorkerPoolOptions::startup_seconds");
    if (code == kWorkerBadFrame) return fail(ready.error());
    return startup_failure(fmt::format("it {} before it was ready", how));
  }
  const nlohmann::json& h = ready->header;
  if (h.value("type", "") == "error" && h.contains("diagnostic") && h["diagnostic"].is_object()) {
    Diagnostic d = Diagnostic::from_json(h["diagnostic"]);
    w->finish_shutdown();
    if (d.code.empty()) d.code = std::string(kWorkerStartup);
    return fail(d.with_note("reported by the worker's warm-up, before any request"));
  }
  const bool ok = h.value("type", "") == "ready" && h.value("version", 0) == kProtocolVersion && h.contains("pid") &&
                  h["pid"].is_number_integer() && h["pid"].get<int64_t>() == pid && h.contains("handlers") &&
                  h["handlers"].is_array() && h.contains("sanitizer") && h["sanitizer"].is_boolean() &&
                  ready->body.empty();
  if (!ok) {
    w->kill_and_reap();
    return startup_failure("its first message was not a valid 'ready' frame");
  }
  for (const auto& name : h["handlers"])
    if (name.is_string()) w->handlers_.push_back(name.get<std::string>());
  w->sanitizer_ = h["sanitizer"].get<bool>();
  NKIA_LOG_DEBUG("worker {} started: {}", pid, path);
  return w;
}

WorkerProcess::~WorkerProcess() {
  if (!reaped_) {
    begin_shutdown();
    finish_shutdown();
  }
  if (fd_ >= 0) ::close(fd_);
}

bool WorkerProcess::healthy() {
  if (!usable_ || reaped_) return false;
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, 0) != 0) return false;  // an idle worker never speaks first: EOF or garbage
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid_)
    return false;
  return true;
}

Diagnostic WorkerProcess::lost(std::string_view code, const std::string& what, const WorkerRequest& request) {
  const int pid = pid_;
  const std::string how = kill_and_reap();
  if (code == kFrameTimeout)
    return Diagnostic::error(std::string(kWorkerHung),
                             fmt::format("the worker (pid {}) did not answer request '{}' in time (the kernel's "
                                         "deadline was {:g} s); it was killed",
                                         pid, request.handler, request.limits.wall_seconds),
                             kBugHint);
  if (code == kWorkerBadFrame)
    return Diagnostic::error(
        std::string(kWorkerBadFrame),
        fmt::format("the worker (pid {}) answered request '{}' with a malformed frame: {}", pid, request.handler, what),
        kBugHint);
  return Diagnostic::error(
      std::string(kWorkerDied),
      fmt::format("the worker (pid {}) died while running request '{}': it {}", pid, request.handler, how), kBugHint);
}

WorkerReport WorkerProcess::call(uint64_t id, const WorkerRequest& request, Clock::time_point deadline) {
  WorkerReport out;
  out.response.worker_pid = pid_;
  if (auto w = write_frame(fd_, encode_request(id, request), deadline, request_fds(request)); !w) {
    out.error = lost(w.error().code, w.error().message, request);
    return out;
  }
  auto frame = read_frame(fd_, deadline, /*take_fds=*/false, request.payload_in_memory);
  if (!frame) {
    out.error = lost(frame.error().code == kFrameEof ? std::string_view(kFrameIo) : frame.error().code,
                     frame.error().message, request);
    return out;
  }
  auto rep = decode_response(std::move(*frame), id, request.payload_in_memory ? &out.response.payload_memory : nullptr);
  if (!rep) {
    out.error = lost(kWorkerBadFrame, rep.error().message, request);
    return out;
  }
  out.error = std::move(rep->error);
  static_cast<SandboxOutput&>(out.response) = std::move(rep->output);
  return out;
}

void WorkerProcess::begin_shutdown() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void WorkerProcess::finish_shutdown() {
  if (reaped_) return;
  const auto deadline = after(kWorkerShutdownGraceSeconds);
  int status = 0;
  while (Clock::now() < deadline) {
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_ || (r < 0 && errno != EINTR)) {
      if (r == pid_) NKIA_LOG_DEBUG("worker {} {}", pid_, describe_status(status));
      reaped_ = true;
      usable_ = false;
      return;
    }
    std::this_thread::sleep_for(kShutdownPoll);
  }
  kill_and_reap();
}

std::string WorkerProcess::kill_and_reap() {
  usable_ = false;
  begin_shutdown();
  if (reaped_) return "was already gone";
  ::kill(pid_, SIGKILL);
  int status = 0;
  pid_t r;
  while ((r = ::waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  std::string how = r == pid_ ? describe_status(status) : std::string("could not be reaped");
  NKIA_LOG_DEBUG("worker {} killed: it {}", pid_, how);
  return how;
}

// ---- WorkerPool ----

WorkerPool::WorkerPool(WorkerPoolOptions options, std::string path)
    : options_(std::move(options)), path_(std::move(path)) {}

Result<std::unique_ptr<WorkerPool>> WorkerPool::create(WorkerPoolOptions options) {
  auto path = locate_worker(options.worker_path);
  if (!path) return fail(path.error());
  int n = options.workers > 0 ? options.workers : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (n > kMaxWorkers || !(options.startup_seconds > 0) || !(options.backstop_slack_seconds > 0))
    return fail(std::string(kSandboxBadLimits), fmt::format("invalid worker pool options ({} workers)", n),
                fmt::format("use 1 to {} workers and positive startup/backstop times", kMaxWorkers));
  NKIA_LOG_DEBUG("worker pool: starting {} worker(s) of {}", n, *path);
  const auto t0 = Clock::now();
  std::unique_ptr<WorkerPool> pool(new WorkerPool(std::move(options), std::move(*path)));
  pool->slots_.resize(static_cast<size_t>(n));
  // Start them side by side: the future Python warm-up takes seconds each.
  std::vector<std::thread> starters;
  std::vector<std::optional<Diagnostic>> errors(pool->slots_.size());
  for (size_t i = 0; i < pool->slots_.size(); ++i)
    starters.emplace_back([&pool, &errors, i] {
      auto w = WorkerProcess::spawn(pool->path_, pool->options_.startup_seconds, pool->options_.environment);
      if (w)
        pool->slots_[i].process = std::move(*w);
      else
        errors[i] = w.error();
    });
  for (auto& t : starters) t.join();
  for (auto& e : errors)
    if (e) return fail(*e);  // the pool's destructor stops the ones that did start
  for (auto& s : pool->slots_) s.pid = s.process->pid();
  pool->started_ = n;
  NKIA_LOG_DEBUG("worker pool: {} worker(s) ready in {:.3f} s", n,
                 std::chrono::duration<double>(Clock::now() - t0).count());
  return pool;
}

WorkerPool::~WorkerPool() {
  NKIA_LOG_DEBUG("worker pool: stopping {} worker(s)", slots_.size());
  for (auto& s : slots_)
    if (s.process) s.process->begin_shutdown();
  for (auto& s : slots_)
    if (s.process) s.process->finish_shutdown();
}

size_t WorkerPool::acquire(const WorkerRequest& request) {
  std::vector<uint64_t> keys;
  for (const auto& m : request.attachments)
    if (m && m->reuse_key() != 0) keys.push_back(m->reuse_key());
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    // The free worker that was sent the most of these buffers before: it kept copies of them.
    size_t best = slots_.size();
    size_t best_known = 0;
    for (size_t i = 0; i < slots_.size(); ++i) {
      if (slots_[i].busy) continue;
      const auto& seen = slots_[i].recent_keys;
      const auto known = static_cast<size_t>(std::count_if(
          keys.begin(), keys.end(), [&](uint64_t k) { return std::find(seen.begin(), seen.end(), k) != seen.end(); }));
      if (best == slots_.size() || known > best_known) {
        best = i;
        best_known = known;
      }
    }
    if (best < slots_.size()) {
      Slot& slot = slots_[best];
      slot.busy = true;
      for (uint64_t k : keys)
        if (std::find(slot.recent_keys.begin(), slot.recent_keys.end(), k) == slot.recent_keys.end())
          slot.recent_keys.push_back(k);
      if (slot.recent_keys.size() > kRecentKeysPerWorker)
        slot.recent_keys.erase(slot.recent_keys.begin(),
                               slot.recent_keys.end() - static_cast<std::ptrdiff_t>(kRecentKeysPerWorker));
      return best;
    }
    free_cv_.wait(lock);
  }
}

void WorkerPool::release(size_t slot, int pid) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    slots_[slot].busy = false;
    slots_[slot].pid = pid;
    if (pid == 0) slots_[slot].recent_keys.clear();  // no worker: nothing kept
  }
  free_cv_.notify_one();
}

WorkerReport WorkerPool::call_report(const WorkerRequest& request) {
  WorkerReport out;
  if (!valid_handler_name(request.handler)) {
    out.error = Diagnostic::error(std::string(kWorkerUnknownHandler),
                                  fmt::format("'{}' is not a valid handler name", request.handler),
                                  "handler names are 1 to 64 characters of [A-Za-z0-9_.-]");
    return out;
  }
  if (auto v = validate_limits(request.limits); !v) {
    out.error = v.error();
    return out;
  }
  if (static_cast<int64_t>(request.payload.size()) > kMaxRequestPayloadBytes) {
    out.error = Diagnostic::error(
        std::string(kSandboxBadLimits),
        fmt::format("the request payload of {} bytes exceeds 256 MiB", request.payload.size()), "pass smaller inputs");
    return out;
  }
  const size_t idx = acquire(request);
  uint64_t id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    id = next_id_++;
  }
  std::unique_ptr<WorkerProcess>& proc = slots_[idx].process;
  if (proc && !proc->healthy()) {
    proc->kill_and_reap();
    proc.reset();
  }
  if (!proc) {
    NKIA_LOG_DEBUG("worker pool: slot {} starts a fresh worker", idx);
    auto fresh = WorkerProcess::spawn(path_, options_.startup_seconds, options_.environment);
    if (!fresh) {
      release(idx, 0);
      out.error = fresh.error();
      return out;
    }
    proc = std::move(*fresh);
    std::lock_guard<std::mutex> lock(mu_);
    ++started_;
  }
  out = proc->call(id, request, after(request.limits.wall_seconds + options_.backstop_slack_seconds));
  if (!proc->usable()) proc.reset();
  release(idx, proc ? proc->pid() : 0);
  return out;
}

Result<WorkerResponse> WorkerPool::call(const WorkerRequest& request) {
  WorkerReport r = call_report(request);
  if (r.error) return fail(with_output_notes(std::move(*r.error), r.response));
  return std::move(r.response);
}

std::vector<int> WorkerPool::worker_pids() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<int> out;
  for (const auto& s : slots_) out.push_back(s.pid);
  return out;
}

int64_t WorkerPool::workers_started() const {
  std::lock_guard<std::mutex> lock(mu_);
  return started_;
}

}  // namespace nki_agent
