// tests/support/test_files.h — the files tests read: a file's whole text, and the reference cache
// every test program shares (under the build folder; content-addressed, so sharing is safe).
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace nki_agent::testing {

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline std::string shared_cache() {
  return (std::filesystem::path(NKIA_CLI).parent_path() / "test-cache" / "references").string();
}

}  // namespace nki_agent::testing
