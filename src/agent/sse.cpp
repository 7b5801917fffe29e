// Incremental Server-Sent Events parser (agent/sse.h), after the WHATWG event-stream rules.
#include "agent/sse.h"

#include <fmt/format.h>

namespace nki_agent {

void SseParser::feed(std::string_view bytes, std::vector<SseEvent>& out) {
  if (failed()) return;
  if (!started_ && !bytes.empty()) {
    // A UTF-8 byte-order mark may open the stream; it can itself arrive split, so wait for 3 bytes.
    partial_.append(bytes);
    if (partial_.size() < 3 && std::string_view("\xEF\xBB\xBF").substr(0, partial_.size()) == partial_) return;
    started_ = true;
    std::string head = std::move(partial_);
    partial_.clear();
    if (head.rfind("\xEF\xBB\xBF", 0) == 0) head.erase(0, 3);
    feed(head, out);
    return;
  }
  size_t start = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    const char c = bytes[i];
    if (c != '\n' && c != '\r') {
      after_cr_ = false;
      continue;
    }
    if (c == '\n' && after_cr_) {  // the \n of a \r\n whose \r ended the previous line
      after_cr_ = false;
      start = i + 1;
      continue;
    }
    after_cr_ = c == '\r';
    if (partial_.empty()) {
      line(bytes.substr(start, i - start), out);
    } else {
      partial_.append(bytes.substr(start, i - start));
      std::string l = std::move(partial_);
      partial_.clear();
      line(l, out);
    }
    if (failed()) return;
    start = i + 1;
  }
  if (start < bytes.size()) {
    partial_.append(bytes.substr(start));
    if (partial_.size() > max_line_) {
      error_ = fmt::format("an event-stream line is longer than {} bytes", max_line_);
      partial_.clear();
    }
  }
}

void SseParser::finish(std::vector<SseEvent>& out) {
  if (failed()) return;
  partial_.clear();
  if (has_fields_) dispatch(out);
}

void SseParser::line(std::string_view l, std::vector<SseEvent>& out) {
  if (l.empty()) {
    dispatch(out);
    return;
  }
  if (l.front() == ':') return;  // a comment
  std::string_view field = l, value;
  if (const size_t colon = l.find(':'); colon != std::string_view::npos) {
    field = l.substr(0, colon);
    value = l.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    if (has_data_) pending_.data += '\n';
    pending_.data.append(value);
    has_data_ = true;
    has_fields_ = true;
    if (pending_.data.size() > max_line_) error_ = fmt::format("an event is longer than {} bytes", max_line_);
  } else if (field == "event") {
    pending_.event = std::string(value);
    has_fields_ = true;
  } else if (field == "id") {
    pending_.id = std::string(value);
    has_fields_ = true;
  }
  // "retry" and unknown fields are ignored, as the standard says.
}

void SseParser::dispatch(std::vector<SseEvent>& out) {
  // By the standard an event without data is not dispatched; its name is forgotten.
  if (has_data_) out.push_back(std::move(pending_));
  pending_ = SseEvent{};
  has_data_ = false;
  has_fields_ = false;
}

}  // namespace nki_agent
