// tests/support/hostile_handlers.h — handlers that behave like hostile kernels, for the sandbox tests.
//
// They exist only in test code: the test worker program (nkia-test-worker) registers them, and
// test_sandbox.cpp runs some directly through run_sandboxed. Each one either does something a
// kernel must not be able to do and reports what happened ("denied errno=1 ..."), or misbehaves
// in a way the sandbox must contain (hang, crash, flood, exhaust memory). None of them may send
// traffic anywhere but 127.0.0.1 or write outside a path the test gives it.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>

#include "runtime/zygote.h"

namespace nki_agent::testing {

inline std::string errno_text(const char* what) {
  return std::string(what) + " errno=" + std::to_string(errno) + " (" + std::strerror(errno) + ")";
}

inline int64_t parse_count(const std::string& payload, int64_t fallback) {
  char* end = nullptr;
  long long v = std::strtoll(payload.c_str(), &end, 10);
  return end == payload.c_str() ? fallback : v;
}

[[noreturn]] inline void spin_forever() {
  volatile uint64_t x = 0;
  while (true) x = x + 1;
}

// Not inlined, a frame that cannot be a tail call: recursion until the stack runs out.
inline volatile int g_recursion_limit = INT_MAX;
[[gnu::noinline]] inline int recurse(int depth) {
  volatile char pad[256];
  pad[0] = static_cast<char>(depth);
  if (depth >= g_recursion_limit) return 0;
  return recurse(depth + 1) + pad[0];
}

inline void* thread_body(void*) {
  return nullptr;
}

// A store into the never-mapped first page: a real SIGSEGV. Not through nullptr itself, which
// UBSan (the CI's sanitizer build) catches and reports before the fault happens.
// The address is read from a volatile so that GCC does not see (and warn about) a constant one.
inline void null_page_store() {
  static volatile uintptr_t address = 16;
  volatile int* p = reinterpret_cast<volatile int*>(address);
  *p = 1;
}

inline Result<std::string> hostile_open_passwd(const std::string&) {
  int fd = ::open("/etc/passwd", O_RDONLY);
  if (fd < 0) return errno_text("denied");
  char buf[64] = {};
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  return "opened, read " + std::to_string(n) + " bytes";
}

inline Result<std::string> hostile_write_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0600);
  if (fd < 0) return errno_text("denied");
  ssize_t n = ::write(fd, "pwned\n", 6);
  ::close(fd);
  return "wrote " + std::to_string(n) + " bytes";
}

inline Result<std::string> hostile_connect(const std::string& port) {
  int s = ::socket(AF_INET, SOCK_STREAM, 0);
  if (s < 0) return errno_text("denied");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(parse_count(port, 9)));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);  // 127.0.0.1 only
  int rc = ::connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  std::string out = rc == 0 ? std::string("connected") : errno_text("connect failed");
  ::close(s);
  return out;
}

inline Result<std::string> hostile_fork_bomb(const std::string&) {
  int ok = 0, first_errno = 0;
  for (int i = 0; i < 64; ++i) {
    pid_t p = ::fork();
    if (p == 0) ::_exit(0);
    if (p > 0) {
      ++ok;
      ::waitpid(p, nullptr, 0);
    } else if (first_errno == 0) {
      first_errno = errno;
    }
  }
  return "forks=" + std::to_string(ok) + " errno=" + std::to_string(first_errno);
}

inline Result<std::string> hostile_thread(const std::string&) {
  pthread_t t;
  int rc = ::pthread_create(&t, nullptr, thread_body, nullptr);
  if (rc == 0) {
    ::pthread_join(t, nullptr);
    return std::string("thread started");
  }
  return "thread refused rc=" + std::to_string(rc);
}

inline Result<std::string> hostile_kill_parent(const std::string&) {
  if (::kill(::getppid(), SIGKILL) != 0) return errno_text("kill denied");
  return std::string("killed parent");
}

inline Result<std::string> hostile_signal_tricks(const std::string&) {
  for (int sig : {SIGTERM, SIGALRM, SIGINT, SIGHUP, SIGXCPU}) ::signal(sig, SIG_IGN);
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGTERM, SIGALRM, SIGINT, SIGHUP}) sigaddset(&set, sig);
  ::sigprocmask(SIG_BLOCK, &set, nullptr);
  (void)::setsid();       // leave the process group the parent kills: refused
  (void)::setpgid(0, 0);  // likewise
  spin_forever();
}

inline Result<std::string> hostile_allocate(const std::string& gib) {
  const int64_t bytes = parse_count(gib, 8) << 30;
  char* p = new char[static_cast<size_t>(bytes)];
  for (int64_t i = 0; i < bytes; i += 4096) p[i] = 1;  // touch every page
  const char last = p[bytes - 1];
  delete[] p;
  return "allocated " + std::to_string(last);
}

inline Result<std::string> hostile_print_flood(const std::string&) {
  static char block[64 * 1024];
  std::memset(block, 'y', sizeof block);
  for (int64_t written = 0; written < (int64_t{1} << 30);) {
    ssize_t n = ::write(1, block, sizeof block);
    if (n <= 0) break;
    written += n;
  }
  return std::string("printed");
}

// Registers every hostile handler under the names the tests use.
inline void register_hostile_handlers(HandlerRegistry& r) {
  r.register_handler("busy_loop", [](const std::string&) -> Result<std::string> { spin_forever(); });
  r.register_handler("sleep_forever", [](const std::string&) -> Result<std::string> {
    while (true) ::sleep(1000);
  });
  r.register_handler("allocate_gib", hostile_allocate);
  r.register_handler("fork_bomb", hostile_fork_bomb);
  r.register_handler("open_passwd", hostile_open_passwd);
  r.register_handler("write_file", hostile_write_file);
  r.register_handler("connect_local", hostile_connect);
  r.register_handler("exec_shell", [](const std::string&) -> Result<std::string> {
    ::execl("/bin/sh", "sh", "-c", "exit 0", static_cast<char*>(nullptr));
    return errno_text("exec failed");
  });
  r.register_handler("ptrace_parent", [](const std::string&) -> Result<std::string> {
    ::syscall(SYS_ptrace, 16 /* PTRACE_ATTACH */, ::getppid(), 0, 0);
    return errno_text("ptrace failed");
  });
  r.register_handler("segfault", [](const std::string&) -> Result<std::string> {
    null_page_store();
    return std::string("survived");
  });
  r.register_handler("stderr_then_segfault", [](const std::string&) -> Result<std::string> {
    std::fputs("about to crash\n", stderr);
    std::fflush(stderr);
    null_page_store();
    return std::string("survived");
  });
  r.register_handler("abort", [](const std::string&) -> Result<std::string> { std::abort(); });
  r.register_handler("exit7", [](const std::string&) -> Result<std::string> { ::_exit(7); });
  r.register_handler("print_flood", hostile_print_flood);
  r.register_handler("big_result", [](const std::string& n) -> Result<std::string> {
    return std::string(static_cast<size_t>(parse_count(n, 1 << 20)), 'x');
  });
  r.register_handler("kill_parent", hostile_kill_parent);
  r.register_handler("signal_tricks", hostile_signal_tricks);
  r.register_handler("deep_recursion",
                     [](const std::string&) -> Result<std::string> { return std::to_string(recurse(0)); });
  r.register_handler("spawn_thread", hostile_thread);
  r.register_handler("print_and_return", [](const std::string& p) -> Result<std::string> {
    std::printf("out:%s\n", p.c_str());
    std::fprintf(stderr, "err:%s\n", p.c_str());
    return "done:" + p;
  });
  r.register_handler("kernel_error", [](const std::string&) -> Result<std::string> {
    Diagnostic d = Diagnostic::error("err_test_kernel", "the kernel reported an error", "fix the kernel");
    d.at({"kernel.py", 12, 3});
    return fail(std::move(d));
  });
  r.register_handler("throw", [](const std::string&) -> Result<std::string> { throw std::runtime_error("boom"); });
}

}  // namespace nki_agent::testing
