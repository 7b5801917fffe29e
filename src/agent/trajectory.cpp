// agent/trajectory.cpp — JSON Lines, one event per line, flushed as written.
#include "agent/trajectory.h"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

namespace nki_agent {

Result<std::unique_ptr<TrajectoryWriter>> TrajectoryWriter::open(const std::string& path, bool truncate) {
  std::error_code ec;
  auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  std::FILE* f = std::fopen(path.c_str(), truncate ? "we" : "ae");
  if (!f)
    return fail("nkia_trajectory_io", fmt::format("cannot open trajectory file {}: {}", path, std::strerror(errno)));
  return std::unique_ptr<TrajectoryWriter>(new TrajectoryWriter(f, path));
}

TrajectoryWriter::~TrajectoryWriter() {
  if (f_) std::fclose(f_);
}

void TrajectoryWriter::write(const nlohmann::json& event) {
  std::string line = event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  line += '\n';
  std::lock_guard<std::mutex> lock(mu_);
  if (std::fwrite(line.data(), 1, line.size(), f_) != line.size() || std::fflush(f_) != 0) ok_ = false;
}

}  // namespace nki_agent
