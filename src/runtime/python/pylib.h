// runtime/python/pylib.h — the Python half of the kernel host (src/runtime/python/pylib/*.py),
// compiled into the binary so that a worker needs no files on disk to serve NKI modules.
#pragma once

#include <string_view>
#include <vector>

namespace nki_agent {

struct PylibFile {
  std::string_view path;  // relative to pylib/, e.g. "nki/language.py"
  std::string_view source;
};

const std::vector<PylibFile>& pylib_files();

}  // namespace nki_agent
