// agent/trajectory.h — every turn of an agent run as JSON Lines, ready for SFT export.
//
// One JSON object per line, each with "type", "run" (the run id), "t" (seconds since the run
// began), and:
//   start        task, level, prompt_version, dialect, model(s), seed, simulator version, options,
//                the system prompt and the first user message
//   model_call   turn, model, stop_reason, usage, cost_usd, seconds, attempts, the assistant
//                message (text and tool calls) or the error
//   tool         turn, name, call id, arguments (the kernel by content hash plus its text),
//                the content the model read, is_error, the structured result, seconds
//   message      turn, a user message the loop added (feedback on a reply without a tool call)
//   end          the SolveResult
// Lines are flushed as written: a killed run keeps every line up to its last event.
#pragma once

#include <cstdio>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "core/diagnostic.h"

namespace nki_agent {

class TrajectoryWriter {
 public:
  // Appends to `path` (created with its folders), or starts it afresh with `truncate`. Code
  // nkia_trajectory_io.
  static Result<std::unique_ptr<TrajectoryWriter>> open(const std::string& path, bool truncate = false);
  ~TrajectoryWriter();
  TrajectoryWriter(const TrajectoryWriter&) = delete;
  TrajectoryWriter& operator=(const TrajectoryWriter&) = delete;

  void write(const nlohmann::json& event);  // one line; errors are remembered, not thrown
  const std::string& path() const { return path_; }
  bool ok() const { return ok_; }

 private:
  TrajectoryWriter(std::FILE* f, std::string path) : f_(f), path_(std::move(path)) {}
  std::FILE* f_;
  std::string path_;
  std::mutex mu_;
  bool ok_ = true;
};

}  // namespace nki_agent
