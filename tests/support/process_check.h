// tests/support/process_check.h — "no stray processes" checks for the sandbox tests.
//
// SandboxProcessTest makes the test process a child subreaper, so that anything a sandbox child or
// a worker leaves behind (an orphaned grandchild) is re-parented to the test process instead of
// init. After each test it reaps zombies and requires that the test process has no live children:
// every worker was shut down and every sandbox child was killed and reaped.
#pragma once

#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace nki_agent::testing {

// The pids of this process's live (non-zombie) children, read from /proc/<pid>/stat.
inline std::vector<int> live_children() {
  std::vector<int> out;
  const int self = ::getpid();
  DIR* d = ::opendir("/proc");
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    const int pid = std::atoi(e->d_name);
    if (pid <= 0) continue;
    std::ifstream f(std::string("/proc/") + e->d_name + "/stat");
    std::string line;
    if (!std::getline(f, line)) continue;
    const size_t close = line.rfind(')');  // the command name may contain spaces and parentheses
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 1));
    char state = 0;
    int ppid = 0;
    rest >> state >> ppid;
    if (ppid == self && state != 'Z') out.push_back(pid);
  }
  ::closedir(d);
  return out;
}

class SandboxProcessTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); }

  void TearDown() override {
    // Children may need a moment to die after SIGKILL; three seconds is generous on a loaded host.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    std::vector<int> live;
    do {
      while (::waitpid(-1, nullptr, WNOHANG) > 0) {
      }
      live = live_children();
      if (live.empty()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    } while (std::chrono::steady_clock::now() < deadline);
    EXPECT_TRUE(live.empty()) << live.size() << " stray process(es) left, first pid " << live.front();
    for (int pid : live) ::kill(pid, SIGKILL);  // do not leak them into the next test either
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
  }
};

}  // namespace nki_agent::testing
