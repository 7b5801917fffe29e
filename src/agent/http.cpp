// One HTTP POST over libcurl (agent/http.h).
//
// curl_easy_perform waits up to a second between progress callbacks while a server is silent,
// which would make cancellation slow; the transfer therefore runs on a multi handle polled in
// 50 ms slices, checking the flag and the deadline between polls. The progress callback checks
// the flag too, so a cancel during a busy transfer ends it at once.
#include "agent/http.h"

#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <mutex>

#include "core/text.h"

namespace nki_agent {

namespace {

constexpr int kPollSliceMs = 50;

void global_init_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// What the callbacks see; they run on the calling thread inside curl_multi_perform.
struct Transfer {
  const HttpRequest* req = nullptr;
  CURL* easy = nullptr;
  HttpResponse* resp = nullptr;
  bool decided = false;  // whether this response streams, decided at its first body byte
  bool streaming = false;
  HttpOutcome abort_reason = HttpOutcome::kOk;  // set when a callback stopped the transfer
};

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

size_t on_header(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t len = size * n;
  std::string_view line(data, len);
  // A new status line (after a 100 Continue, say) starts a new set of headers.
  if (line.substr(0, 5) == "HTTP/") {
    t->resp->headers.clear();
    t->decided = false;
    return len;
  }
  const size_t colon = line.find(':');
  if (colon != std::string_view::npos && t->resp->headers.size() < 256)
    t->resp->headers[to_lower(trim(line.substr(0, colon)))] = trim(line.substr(colon + 1));
  return len;
}

size_t on_body(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t len = size * n;
  HttpResponse& r = *t->resp;
  if (!t->decided) {
    t->decided = true;
    long status = 0;
    curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
    const char* ctype = nullptr;
    curl_easy_getinfo(t->easy, CURLINFO_CONTENT_TYPE, &ctype);
    const std::string want = to_lower(t->req->stream_content_type);
    t->streaming = t->req->on_data && status >= 200 && status < 300 && ctype != nullptr && !want.empty() &&
                   to_lower(ctype).rfind(want, 0) == 0;
  }
  if (r.body.size() + r.streamed_bytes + len > t->req->max_body_bytes) {
    t->abort_reason = HttpOutcome::kTooLarge;
    return 0;  // anything but len makes curl stop with CURLE_WRITE_ERROR
  }
  if (!t->streaming) {
    r.body.append(data, len);
    return len;
  }
  r.streamed = true;
  r.streamed_bytes += len;
  bool go_on = false;
  try {
    go_on = t->req->on_data(std::string_view(data, len));
  } catch (...) {
    go_on = false;  // an exception must not unwind through curl's C frames
  }
  if (!go_on) {
    t->abort_reason = HttpOutcome::kAborted;
    return 0;
  }
  return len;
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(user);
  if (t->req->cancel && t->req->cancel->load(std::memory_order_relaxed)) {
    t->abort_reason = HttpOutcome::kCancelled;
    return 1;
  }
  return 0;
}

long to_ms(double s) {
  return static_cast<long>(std::clamp(std::ceil(s * 1000.0), 1.0, 2.0e9));
}

}  // namespace

std::string_view http_outcome_name(HttpOutcome o) {
  switch (o) {
    case HttpOutcome::kOk: return "ok";
    case HttpOutcome::kTimeout: return "timeout";
    case HttpOutcome::kCancelled: return "cancelled";
    case HttpOutcome::kAborted: return "aborted";
    case HttpOutcome::kTooLarge: return "too large";
    case HttpOutcome::kTransport: return "transport error";
  }
  return "?";
}

HttpResponse http_post(const HttpRequest& req) {
  global_init_once();
  HttpResponse resp;
  const auto t0 = std::chrono::steady_clock::now();
  const auto deadline = t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                 std::chrono::duration<double>(std::max(req.timeout_s, 0.0)));
  if (req.cancel && req.cancel->load()) {
    resp.outcome = HttpOutcome::kCancelled;
    resp.error = "cancelled before the request was sent";
    return resp;
  }

  CURL* easy = curl_easy_init();
  CURLM* multi = curl_multi_init();
  if (!easy || !multi) {
    if (easy) curl_easy_cleanup(easy);
    if (multi) curl_multi_cleanup(multi);
    resp.error = "cannot create a curl handle";
    return resp;
  }
  Transfer t;
  t.req = &req;
  t.easy = easy;
  t.resp = &resp;

  curl_slist* hdrs = nullptr;
  for (const auto& h : req.headers) hdrs = curl_slist_append(hdrs, h.c_str());
  // curl would otherwise send "Expect: 100-continue" for larger bodies and wait for the server's
  // interim answer, which some servers never give.
  hdrs = curl_slist_append(hdrs, "Expect:");

  char errbuf[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(easy, CURLOPT_URL, req.url.c_str());
  if (req.get) {
    curl_easy_setopt(easy, CURLOPT_HTTPGET, 1L);
  } else {
    curl_easy_setopt(easy, CURLOPT_POST, 1L);
    curl_easy_setopt(easy, CURLOPT_POSTFIELDS, req.body.data());
    curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
  }
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, hdrs);
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);  // threads: no SIGALRM for DNS timeouts
  curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, errbuf);
  // The curl-side timeout is a backstop a little past ours; the poll loop enforces the deadline.
  curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, to_ms(req.timeout_s + 0.5));
  curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, to_ms(std::min(req.connect_timeout_s, req.timeout_s)));
  curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(easy, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(easy, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(easy, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(easy, CURLOPT_XFERINFODATA, &t);
  curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);  // an API endpoint does not redirect a POST
  // Proxies from the environment apply, but never to loopback: a local model server (or the
  // tests' mock) reached through a proxy would be the proxy's own loopback.
  std::string no_proxy = "127.0.0.1,localhost,::1";
  for (const char* var : {"no_proxy", "NO_PROXY"})
    if (const char* v = std::getenv(var); v && *v) {
      no_proxy = std::string(v) + "," + no_proxy;
      break;
    }
  curl_easy_setopt(easy, CURLOPT_NOPROXY, no_proxy.c_str());
  curl_multi_add_handle(multi, easy);

  bool finished = false;
  CURLcode code = CURLE_OK;
  HttpOutcome loop_outcome = HttpOutcome::kOk;
  for (;;) {
    int running = 0;
    const CURLMcode mc = curl_multi_perform(multi, &running);
    if (mc != CURLM_OK) {
      resp.error = curl_multi_strerror(mc);
      loop_outcome = HttpOutcome::kTransport;
      break;
    }
    if (running == 0) {
      int left = 0;
      while (CURLMsg* msg = curl_multi_info_read(multi, &left)) {
        if (msg->msg == CURLMSG_DONE && msg->easy_handle == easy) {
          code = msg->data.result;
          finished = true;
        }
      }
      if (!finished) {
        resp.error = "the transfer ended without a result";
        loop_outcome = HttpOutcome::kTransport;
      }
      break;
    }
    if (req.cancel && req.cancel->load(std::memory_order_relaxed)) {
      loop_outcome = HttpOutcome::kCancelled;
      break;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      loop_outcome = HttpOutcome::kTimeout;
      break;
    }
    curl_multi_poll(multi, nullptr, 0, kPollSliceMs, nullptr);
  }

  curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &resp.status);
  curl_off_t connect_us = 0;
  curl_easy_getinfo(easy, CURLINFO_CONNECT_TIME_T, &connect_us);
  const bool connected = connect_us > 0 || resp.status > 0;

  if (loop_outcome == HttpOutcome::kCancelled) {
    resp.outcome = HttpOutcome::kCancelled;
    resp.error = "cancelled";
  } else if (loop_outcome == HttpOutcome::kTimeout) {
    resp.outcome = HttpOutcome::kTimeout;
    resp.error = fmt::format("no complete answer within {:.3g} s", req.timeout_s);
  } else if (loop_outcome != HttpOutcome::kOk) {
    resp.outcome = loop_outcome;
  } else if (code == CURLE_OK) {
    resp.outcome = HttpOutcome::kOk;
  } else if (t.abort_reason != HttpOutcome::kOk) {
    resp.outcome = t.abort_reason;
    resp.error = t.abort_reason == HttpOutcome::kTooLarge
                     ? fmt::format("the answer exceeds {} bytes", req.max_body_bytes)
                     : std::string(http_outcome_name(t.abort_reason));
  } else {
    const bool past_deadline = std::chrono::steady_clock::now() >= deadline;
    resp.outcome = code == CURLE_OPERATION_TIMEDOUT && past_deadline ? HttpOutcome::kTimeout : HttpOutcome::kTransport;
    resp.error = errbuf[0] ? std::string(errbuf) : std::string(curl_easy_strerror(code));
  }
  resp.connect_failed = resp.outcome != HttpOutcome::kOk && !connected;

  curl_multi_remove_handle(multi, easy);
  curl_easy_cleanup(easy);
  curl_multi_cleanup(multi);
  curl_slist_free_all(hdrs);
  return resp;
}

}  // namespace nki_agent
