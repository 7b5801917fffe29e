// agent/sse.h — an incremental parser of Server-Sent Events (the streaming format of LLM APIs).
//
// Bytes go in as the network delivers them, split anywhere (inside a line, between \r and \n);
// complete events come out. Lines end with \n, \r\n or \r; "data:" lines of one event are joined
// with \n; lines starting with ':' are comments (keep-alives); "event:" names the event and
// "id:" is kept. The parser never grows without bound: a line longer than max_line_bytes is an
// error (error() says so) and the rest of the stream is ignored.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace nki_agent {

struct SseEvent {
  std::string event;  // empty when the server named none ("message" by the standard)
  std::string data;   // the data lines joined with \n
  std::string id;
};

class SseParser {
 public:
  explicit SseParser(size_t max_line_bytes = size_t{16} << 20) : max_line_(max_line_bytes) {}

  // Parses the bytes; each event completed by them (a blank line) is appended to `out`.
  void feed(std::string_view bytes, std::vector<SseEvent>& out);
  // End of stream. A last event whose lines all ended but whose blank line never came is
  // delivered; a line cut off in the middle is dropped (it is a fragment, not data).
  void finish(std::vector<SseEvent>& out);

  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }

 private:
  void line(std::string_view l, std::vector<SseEvent>& out);
  void dispatch(std::vector<SseEvent>& out);

  size_t max_line_;
  std::string partial_;    // the current, unfinished line
  bool after_cr_ = false;  // the last byte was \r: a \n right after it belongs to the same break
  bool started_ = false;   // the byte-order mark is only skipped at the very start
  SseEvent pending_;
  bool has_data_ = false;    // a data: line arrived for pending_
  bool has_fields_ = false;  // any field arrived for pending_
  std::string error_;
};

}  // namespace nki_agent
