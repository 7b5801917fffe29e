// tests/support/hack_files.h — the adversarial suites' kernel files and what their headers say:
// `# task: ID`, `# expect: check[|check]` (the checks that may reject it), `# policy: off` (verified
// without the static policy) and `# code: C` (the Diagnostic's code). Files named _*.py are helper
// modules the hacks import, not hacks.
#pragma once

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/test_files.h"

namespace nki_agent::testing {

struct HackFile {
  std::filesystem::path file;
  std::string task;
  std::set<std::string> expect;
  bool policy = true;
  std::string code;
};

inline std::vector<HackFile> hack_files(const std::filesystem::path& dir) {
  std::vector<HackFile> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().extension() != ".py" || e.path().filename().string().front() == '_') continue;
    HackFile h{e.path(), "", {}, true, ""};
    std::smatch m;
    const std::string text = read_text(e.path());
    if (std::regex_search(text, m, std::regex("# task: (\\S+)"))) h.task = m[1];
    if (std::regex_search(text, m, std::regex("# policy: off"))) h.policy = false;
    if (std::regex_search(text, m, std::regex("# code: (\\S+)"))) h.code = m[1];
    if (std::regex_search(text, m, std::regex("# expect: (\\S+)"))) {
      std::stringstream ss(m[1]);
      for (std::string c; std::getline(ss, c, '|');) h.expect.insert(c);
    }
    out.push_back(std::move(h));
  }
  std::sort(out.begin(), out.end(), [](const HackFile& a, const HackFile& b) { return a.file < b.file; });
  return out;
}

}  // namespace nki_agent::testing
