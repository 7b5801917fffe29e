// The Python RL adapters (python/nki_agent_rl: verl, TRL, the client) against the real
// `nki-agent serve` program: the server is started as a user starts it, the adapters' unittest
// suite (tests/python) runs against it with Debian's python3, and SIGTERM must drain and exit 0.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <regex>
#include <string>
#include <thread>

#include "support/cli_runner.h"
#include "support/test_files.h"

namespace fs = std::filesystem;

namespace nki_agent {
namespace {

TEST(RlAdapters, ThePythonAdaptersPassAgainstARunningServerThatDrainsOnSigterm) {
  const fs::path dir = fs::temp_directory_path() / ("nkia_rl_adapters_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string log = (dir / "serve.log").string();
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    const std::string tasks = std::string(NKIA_SOURCE_DIR) + "/tests/tasks";
    const std::string cache = testing::shared_cache();
    ::execl(NKIA_CLI, NKIA_CLI, "serve", "--port", "0", "--workers", "2", "--tasks", tasks.c_str(), "--cache",
            cache.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // The port the server chose, from its first line.
  std::string port;
  const std::regex listening(R"(listening on http://127\.0\.0\.1:(\d+))");
  for (int i = 0; i < 600 && port.empty(); ++i) {
    std::smatch m;
    const std::string text = testing::read_text(log);
    if (std::regex_search(text, m, listening))
      port = m[1];
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_FALSE(port.empty()) << testing::read_text(log);

  const std::string env = "NKIA_SERVE_URL=http://127.0.0.1:" + port + " NKIA_SOURCE_DIR=" + NKIA_SOURCE_DIR;
  const std::string cmd = env + " " NKIA_PYTHON " -m unittest discover -s " NKIA_SOURCE_DIR "/tests/python -v 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  const std::string out = testing::read_all(p);
  const int status = ::pclose(p);
  EXPECT_EQ(WEXITSTATUS(status), 0) << out;
  EXPECT_NE(out.find("OK"), std::string::npos) << out;
  EXPECT_EQ(out.find("skipped"), std::string::npos) << "tests were skipped against a running server:\n" << out;

  ::kill(pid, SIGTERM);
  int wstatus = 0;
  pid_t done = 0;
  for (int i = 0; i < 300 && done == 0; ++i) {
    done = ::waitpid(pid, &wstatus, WNOHANG);
    if (done == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (done == 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &wstatus, 0);
    ADD_FAILURE() << "the server did not exit within 30 s of SIGTERM";
  } else {
    EXPECT_TRUE(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) << testing::read_text(log);
  }
  EXPECT_NE(testing::read_text(log).find("SIGTERM, draining"), std::string::npos) << testing::read_text(log);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace nki_agent
