// agent/http.h — one HTTP POST (or GET) over libcurl, the way the LLM clients need it.
//
// A request carries a JSON body and headers, a deadline for the whole transfer, a connect timeout
// and a cancellation flag. The transfer runs on a curl multi handle polled in short slices, so a
// cancelled or expired request ends within about 50 ms even while the server sends nothing.
// A 2xx answer whose Content-Type is the streaming type goes to a callback chunk by chunk (as the
// network delivers it); any other answer is collected into the body, capped so that a hostile
// server cannot exhaust memory. This layer knows nothing of LLM protocols or retries: it reports
// what happened and leaves the decision to the caller (agent/llm_client.cpp).
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace nki_agent {

struct HttpRequest {
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;                  // sent as-is (the caller sets Content-Type)
  bool get = false;                  // a GET (no body) instead of a POST: health checks, metrics
  double timeout_s = 60;             // the whole transfer, connect included
  double connect_timeout_s = 10;
  const std::atomic<bool>* cancel = nullptr;  // may be null
  // Streaming: a 2xx answer whose Content-Type starts with stream_content_type is handed to
  // on_data as it arrives instead of being collected; on_data returns false to abort the transfer.
  std::function<bool(std::string_view chunk)> on_data;
  std::string stream_content_type = "text/event-stream";
  size_t max_body_bytes = size_t{32} << 20;  // beyond this (collected or streamed) the transfer aborts
};

enum class HttpOutcome {
  kOk,         // a complete answer arrived (any status)
  kTimeout,    // the deadline (timeout_s) passed
  kCancelled,  // the cancellation flag was set
  kAborted,    // on_data asked to stop
  kTooLarge,   // the answer exceeded max_body_bytes
  kTransport,  // could not connect, connection reset, a cut chunked body, TLS failure, ...
};

struct HttpResponse {
  HttpOutcome outcome = HttpOutcome::kTransport;
  std::string error;                           // for every outcome but kOk: what went wrong, in words (curl's message)
  bool connect_failed = false;                 // kTransport/kTimeout before a connection was made
  long status = 0;                             // 0 when no status line arrived
  std::map<std::string, std::string> headers;  // names lower-cased; the last of repeated headers wins
  std::string body;                            // the collected body (not the streamed part)
  size_t streamed_bytes = 0;                   // bytes handed to on_data
  bool streamed = false;                       // the answer went to on_data

  std::string header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? std::string() : it->second;
  }
};

// Performs one POST (or GET). Never throws for network or server behaviour; thread-safe (one curl handle
// per call).
HttpResponse http_post(const HttpRequest& req);

std::string_view http_outcome_name(HttpOutcome o);

}  // namespace nki_agent
