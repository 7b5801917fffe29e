// tests/support/python_oracle.h — runs Debian's Python (with NumPy) as an independent oracle.
//
// Tests write their cases to a scratch folder (usually as .npy), run a script from tests/oracle/
// with NKIA_PYTHON, and read the script's answers back. The pyenv Python first on PATH has no
// NumPy, so the interpreter is always the absolute path CMake was given.
#pragma once

#include <sys/wait.h>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace nki_agent::testing {

struct PythonRun {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

inline std::string oracle_script(const std::string& name) {
  return std::string(NKIA_SOURCE_DIR) + "/tests/oracle/" + name;
}

// Runs `NKIA_PYTHON script args...`; arguments are single-quoted for the shell.
inline PythonRun run_python(const std::string& script, const std::vector<std::string>& args = {}) {
  auto quote = [](const std::string& s) {
    std::string q = "'";
    for (char c : s) q += (c == '\'') ? std::string("'\\''") : std::string(1, c);
    return q + "'";
  };
  std::string cmd = quote(NKIA_PYTHON) + " " + quote(script);
  for (const auto& a : args) cmd += " " + quote(a);
  cmd += " 2>&1";
  PythonRun r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// A fresh scratch folder under the system temp dir, removed when the object dies.
class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "nkia-test-XXXXXX").string();
    path_ = mkdtemp(tmpl.data()) ? tmpl : std::string();
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace nki_agent::testing
