// Helper processes with rlimits and deadlines (tasks/subprocess.h).
//
// stdin is one end of a socketpair rather than a pipe, so that writing to a child that died can
// use MSG_NOSIGNAL instead of raising SIGPIPE in nki-agent. Between fork and execve the child only
// makes system calls (dup2, setpgid, setrlimit, close_range, execve): nki-agent may have threads,
// and anything else (malloc, locks) is unsafe there.
#include "tasks/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>

namespace nki_agent {

namespace {

int64_t now_ms() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

struct Spawned {
  pid_t pid = -1;
  int in_fd = -1, out_fd = -1, err_fd = -1;
};

// exit_status_ before the child has been reaped.
constexpr int kNotReaped = -1000;

std::string describe_exit(int status) {
  if (status == kNotReaped) return "ended";
  if (status >= 0) return fmt::format("exited with status {}", status);
  const char* abbrev = ::sigabbrev_np(-status);
  return abbrev ? fmt::format("was killed by SIG{}", abbrev) : fmt::format("was killed by signal {}", -status);
}

int decode_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return -WTERMSIG(status);
  return kNotReaped;
}

Result<Spawned> spawn_child(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                            const ProcessLimits& limits) {
  if (argv.empty()) return fail("nkia_helper_spawn", "no program to run");
  int in_pair[2] = {-1, -1}, out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in_pair) != 0 || ::pipe2(out_pipe, O_CLOEXEC) != 0 ||
      ::pipe2(err_pipe, O_CLOEXEC) != 0) {
    int e = errno;
    for (int fd : {in_pair[0], in_pair[1], out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]})
      if (fd >= 0) ::close(fd);
    return fail("nkia_helper_spawn", fmt::format("cannot create pipes: {}", std::strerror(e)));
  }
  // Everything the child needs, prepared before fork.
  std::vector<char*> cargv, cenv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  for (const auto& e : env) cenv.push_back(const_cast<char*>(e.c_str()));
  cenv.push_back(nullptr);
  auto rl = [](double v) { return static_cast<rlim_t>(v); };
  const rlimit as_limit{rl(limits.address_space_bytes), rl(limits.address_space_bytes)};
  const rlim_t cpu = rl(std::ceil(std::max(1.0, limits.cpu_seconds)));
  const rlimit cpu_limit{cpu, cpu + 1};
  const rlimit fsize_limit{rl(limits.max_file_bytes), rl(limits.max_file_bytes)};
  const rlimit core_limit{0, 0};

  pid_t pid = ::fork();
  if (pid < 0) {
    int e = errno;
    for (int fd : {in_pair[0], in_pair[1], out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) ::close(fd);
    return fail("nkia_helper_spawn", fmt::format("fork failed: {}", std::strerror(e)));
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    if (::dup2(in_pair[1], 0) < 0 || ::dup2(out_pipe[1], 1) < 0 || ::dup2(err_pipe[1], 2) < 0) ::_exit(126);
    ::syscall(SYS_close_range, 3U, ~0U, 0U);
    ::setrlimit(RLIMIT_AS, &as_limit);
    ::setrlimit(RLIMIT_CPU, &cpu_limit);
    ::setrlimit(RLIMIT_FSIZE, &fsize_limit);
    ::setrlimit(RLIMIT_CORE, &core_limit);
    for (int sig : {SIGPIPE, SIGXFSZ, SIGXCPU, SIGINT, SIGTERM}) ::signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execve(cargv[0], cargv.data(), cenv.data());
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also from the parent, so the group exists before any kill
  ::close(in_pair[1]);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  Spawned s{pid, in_pair[0], out_pipe[0], err_pipe[0]};
  ::fcntl(s.out_fd, F_SETFL, O_NONBLOCK);
  ::fcntl(s.err_fd, F_SETFL, O_NONBLOCK);
  return s;
}

void keep_tail(std::string& tail, const char* data, size_t n, int64_t cap) {
  tail.append(data, n);
  if (static_cast<int64_t>(tail.size()) > cap) tail.erase(0, tail.size() - static_cast<size_t>(cap));
}

// Reads what is available on fd; false at EOF.
bool drain(int fd, std::string& into, int64_t cap_tail, bool tail_only) {
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      if (tail_only)
        keep_tail(into, buf, static_cast<size_t>(n), cap_tail);
      else
        into.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    return true;  // EAGAIN
  }
}

bool send_all(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    off += static_cast<size_t>(n);
  }
  return true;
}

void kill_group(pid_t pid) {
  if (pid > 0) {
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
  }
}

// Waits until the child has exited without reaping it: while it is a zombie its process-group id
// cannot be reused, so killing the group afterwards never hits a stranger.
void wait_exited(pid_t pid) {
  siginfo_t info{};
  while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
  }
}

// True when the child has exited (it stays unreaped).
bool has_exited(pid_t pid) {
  siginfo_t info{};
  info.si_pid = 0;
  if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT | WNOHANG) < 0) return errno != EINTR;
  return info.si_pid == pid;
}

int reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return kNotReaped;
  }
  return decode_status(status);
}

}  // namespace

std::vector<std::string> helper_environment(int threads) {
  std::vector<std::string> env = {"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "PYTHONHASHSEED=0",
                                  "PYTHONDONTWRITEBYTECODE=1"};
  const char* home = std::getenv("HOME");
  env.push_back(std::string("HOME=") + (home ? home : "/tmp"));
  const char* tmp = std::getenv("TMPDIR");
  if (tmp) env.push_back(std::string("TMPDIR=") + tmp);
  for (const char* v : {"OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"})
    env.push_back(fmt::format("{}={}", v, std::max(1, threads)));
  return env;
}

Result<ProcessResult> run_process(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                                  const std::string& input, const ProcessLimits& limits) {
  auto s = spawn_child(argv, env, limits);
  if (!s) return fail(s.error());
  const bool sent = send_all(s->in_fd, input);
  ::shutdown(s->in_fd, SHUT_WR);
  ProcessResult r;
  const int64_t deadline = now_ms() + static_cast<int64_t>(limits.wall_seconds * 1000);
  bool out_open = true, err_open = true;
  std::optional<Diagnostic> error;
  while (out_open || err_open) {
    int64_t left = deadline - now_ms();
    if (left <= 0) {
      error = Diagnostic::error("nkia_helper_timeout",
                                fmt::format("{} did not finish within {} s", argv[0], limits.wall_seconds));
      break;
    }
    pollfd fds[2] = {{out_open ? s->out_fd : -1, POLLIN, 0}, {err_open ? s->err_fd : -1, POLLIN, 0}};
    int n = ::poll(fds, 2, static_cast<int>(std::min<int64_t>(left, 1000)));
    if (n < 0 && errno != EINTR) break;
    if (out_open && (fds[0].revents & (POLLIN | POLLHUP | POLLERR))) out_open = drain(s->out_fd, r.out, 0, false);
    if (err_open && (fds[1].revents & (POLLIN | POLLHUP | POLLERR)))
      err_open = drain(s->err_fd, r.err_tail, limits.stderr_tail_bytes, true);
    if (static_cast<int64_t>(r.out.size()) > limits.max_output_bytes) {
      error = Diagnostic::error("nkia_helper_output_limit",
                                fmt::format("{} wrote more than {} bytes", argv[0], limits.max_output_bytes));
      break;
    }
  }
  if (error) kill_group(s->pid);
  int in = s->in_fd, out = s->out_fd, err = s->err_fd;
  close_fd(in);
  close_fd(out);
  close_fd(err);
  wait_exited(s->pid);
  kill_group(s->pid);  // anything the child left in its group
  r.exit_status = reap(s->pid);
  if (error) return fail(std::move(*error));
  if (!sent && r.exit_status == 0)
    return fail("nkia_helper_died", fmt::format("{} stopped reading its input", argv[0]));
  return r;
}

Result<std::unique_ptr<HelperProcess>> HelperProcess::spawn(const std::vector<std::string>& argv,
                                                            const std::vector<std::string>& env,
                                                            const ProcessLimits& limits) {
  auto s = spawn_child(argv, env, limits);
  if (!s) return fail(s.error());
  std::unique_ptr<HelperProcess> h(new HelperProcess());
  h->pid_ = s->pid;
  h->in_fd_ = s->in_fd;
  h->out_fd_ = s->out_fd;
  h->err_fd_ = s->err_fd;
  h->limits_ = limits;
  return h;
}

HelperProcess::~HelperProcess() {
  if (pid_ > 0) {
    close_fd(in_fd_);  // EOF: a well-behaved helper exits by itself
    const int64_t deadline = now_ms() + 2000;
    while (now_ms() < deadline && !has_exited(pid_)) {
      if (err_fd_ >= 0) drain(err_fd_, err_tail_, limits_.stderr_tail_bytes, true);
      ::usleep(5000);
    }
    kill_and_reap();  // kills the group (whatever the helper left in it, or the helper itself), reaps
  }
  close_fd(in_fd_);
  close_fd(out_fd_);
  close_fd(err_fd_);
}

void HelperProcess::kill_and_reap() {
  if (pid_ <= 0) return;
  kill_group(pid_);
  exit_status_ = reap(pid_);
  pid_ = -1;
  close_fd(in_fd_);
}

Result<void> HelperProcess::pump(int64_t deadline_ms, bool want_line) {
  while (true) {
    if (want_line && out_buf_.find('\n') != std::string::npos) return {};
    if (static_cast<int64_t>(out_buf_.size()) > limits_.max_output_bytes) {
      kill_and_reap();
      return fail("nkia_helper_output_limit",
                  fmt::format("the helper wrote a line longer than {} bytes", limits_.max_output_bytes));
    }
    int64_t left = deadline_ms - now_ms();
    if (left <= 0) {
      kill_and_reap();
      return fail("nkia_helper_timeout", "the helper did not answer in time");
    }
    pollfd fds[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
    int n = ::poll(fds, 2, static_cast<int>(std::min<int64_t>(left, 1000)));
    if (n < 0 && errno != EINTR) {
      kill_and_reap();
      return fail("nkia_helper_died", fmt::format("poll failed: {}", std::strerror(errno)));
    }
    if (err_fd_ >= 0 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR)))
      if (!drain(err_fd_, err_tail_, limits_.stderr_tail_bytes, true)) close_fd(err_fd_);
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      if (!drain(out_fd_, out_buf_, 0, false) && out_buf_.find('\n') == std::string::npos) {
        if (err_fd_ >= 0) drain(err_fd_, err_tail_, limits_.stderr_tail_bytes, true);
        kill_and_reap();
        return fail("nkia_helper_died", fmt::format("the helper {}", describe_exit(exit_status_)));
      }
    }
  }
}

Result<std::string> HelperProcess::request(const std::string& line, double seconds) {
  if (pid_ <= 0)
    return fail("nkia_helper_died", fmt::format("the helper is not running (it {})", describe_exit(exit_status_)));
  const int64_t deadline = now_ms() + static_cast<int64_t>(seconds * 1000);
  if (!send_all(in_fd_, line + "\n")) {
    if (err_fd_ >= 0) drain(err_fd_, err_tail_, limits_.stderr_tail_bytes, true);
    kill_and_reap();
    return fail("nkia_helper_died",
                fmt::format("the helper stopped reading requests (it {})", describe_exit(exit_status_)));
  }
  if (auto ok = pump(deadline, true); !ok) return fail(ok.error());
  size_t nl = out_buf_.find('\n');
  std::string answer = out_buf_.substr(0, nl);
  out_buf_.erase(0, nl + 1);
  return answer;
}

}  // namespace nki_agent
