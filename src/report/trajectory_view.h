// report/trajectory_view.h — an agent trajectory (agent/trajectory.h JSON Lines) condensed for the
// report: the messages, tool calls and tool results in order, each text cut to a bounded length,
// so that a report of 250 tasks stays a file a browser opens; and the run's last failure. Reads the
// file; renders nothing.
#pragma once

#include <string>
#include <vector>

namespace nki_agent {

struct TrajectoryEvent {
  std::string kind;   // "prompt", "assistant", "tool_call", "tool_result", "user", "model_error", "end", ...
  int turn = 0;       // 0: before the first turn
  std::string title;  // "turn 2: verify (error)"
  std::string text;   // cut to the limit, with a note when cut
  bool is_error = false;
};

struct TrajectoryView {
  std::string path;
  bool found = false;      // the file was there and readable
  bool truncated = false;  // events were left out past the total limit
  std::vector<TrajectoryEvent> events;
  // The last failed tool result of the run (read from every line, past the limits too): a failed
  // verification's check and message, or a compile failure's Diagnostic code and message. A
  // row's own stored check comes first; this fills in for rows that stored none.
  std::string last_check, last_code, last_message;
};

struct TrajectoryLimits {
  size_t text_chars = 4000;    // per event
  size_t total_chars = 60000;  // per trajectory; later events are left out
};

// The trajectory at `path` (empty path: not found). Lines that are not JSON are skipped.
TrajectoryView read_trajectory_view(const std::string& path, const TrajectoryLimits& limits = {});

}  // namespace nki_agent
