// tests/support/cli_runner.h — runs the nki-agent program as a user's shell would, for the tests
// of its commands: stdout captured, stderr dropped, merged into it or captured on its own, the exit
// code decoded. Nothing here checks what the program printed: the tests do.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <string>

namespace nki_agent::testing {

struct CliRun {
  int exit_code = -1;  // -1: not started, or ended by a signal
  std::string out;     // stdout (and stderr with Stderr::kMerge)
  std::string err;     // stderr, with Stderr::kSeparate only
};

enum class Stderr { kDrop, kMerge, kSeparate };

// The whole of an open stream, read to its end.
inline std::string read_all(FILE* f) {
  std::string s;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) s.append(buf.data(), n);
  return s;
}

// `args` go to the shell as written (quote what holds spaces); `env` ("NAME=value ...", or words
// such as "env -u NAME") prefixes the command.
inline CliRun run_cli(const std::string& args, Stderr err = Stderr::kDrop, const std::string& env = "") {
  CliRun r;
  std::string err_path;
  if (err == Stderr::kSeparate) {
    char path[] = "/tmp/nkia_cli_stderr_XXXXXX";
    const int fd = ::mkstemp(path);
    if (fd < 0) return r;
    ::close(fd);
    err_path = path;
  }
  const std::string redirect = err == Stderr::kMerge  ? " 2>&1"
                               : err == Stderr::kDrop ? " 2>/dev/null"
                                                      : " 2>" + err_path;
  const std::string cmd = (env.empty() ? "" : env + " ") + NKIA_CLI + " " + args + redirect;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    r.out = read_all(p);
    const int st = ::pclose(p);
    r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }
  if (!err_path.empty()) {
    if (FILE* e = std::fopen(err_path.c_str(), "r")) {
      r.err = read_all(e);
      std::fclose(e);
    }
    std::remove(err_path.c_str());
  }
  return r;
}

}  // namespace nki_agent::testing
