// tests/support/cli_runner.h — runs the nki-agent program as a user's shell would, for the tests
// of its commands: stdout captured, stderr dropped or merged into it, the exit code decoded.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace nki_agent::testing {

struct CliRun {
  int exit_code = -1;  // -1: not started, or ended by a signal
  std::string out;
};

enum class Stderr { kDrop, kMerge };

// `args` go to the shell as written (quote what holds spaces); `env` ("NAME=value ...") prefixes
// the command.
inline CliRun run_cli(const std::string& args, Stderr err = Stderr::kDrop, const std::string& env = "") {
  CliRun r;
  const std::string cmd =
      (env.empty() ? "" : env + " ") + NKIA_CLI + " " + args + (err == Stderr::kMerge ? " 2>&1" : " 2>/dev/null");
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int st = ::pclose(p);
  r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

}  // namespace nki_agent::testing
