// The LLM client (agent/llm.h): one HTTP attempt after another until a reply, a non-retryable
// failure, the deadline, the cancellation flag or the last retry.
//
// Retry policy. Worth another attempt: 408, 409, 425, 429, 5xx (529 "overloaded" included), a
// failed connection or a connection dropped before any reply arrived, and Anthropic's
// overloaded_error event. The wait before retry k (1-based) is backoff_initial_s * 2^(k-1), capped
// at backoff_max_s, times a random factor in [0.5, 1] so that parallel agents hitting one rate
// limit do not come back in lockstep; a Retry-After header in seconds replaces it. A wait that
// would end past the deadline is not started: the call fails with nkia_llm_timeout at once.
//
// A stream that breaks after reply bytes arrived is not retried: its text already went to the
// TextSink, and the truncated reply (stop_reason "truncated") is the caller's to judge.
//
// The API key is only ever put in a request header. Every message built from a server's answer
// has the key blanked out, in case a server echoes it back.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <random>
#include <thread>

#include "agent/http.h"
#include "agent/llm_config.h"
#include "agent/llm_protocol.h"

namespace nki_agent {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr size_t kSnippetChars = 500;
constexpr auto kSleepSlice = std::chrono::milliseconds(20);

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

bool retryable_status(long s) {
  return s == 408 || s == 409 || s == 425 || s == 429 || s >= 500;
}

std::string redact(std::string s, const std::string& key) {
  if (key.empty()) return s;
  for (size_t at = s.find(key); at != std::string::npos; at = s.find(key, at)) s.replace(at, key.size(), "[api key]");
  return s;
}

std::string snippet(const std::string& s) {
  std::string out = s.substr(0, kSnippetChars);
  if (s.size() > kSnippetChars) out += "…";
  return out;
}

// The server's error message, or the start of the body when it is not the usual JSON shape.
std::string body_message(const std::string& body) {
  json j = parse_untrusted_json(body);
  if (!j.is_discarded()) {
    std::string m = error_message_of(j);
    if (!m.empty()) return snippet(m);
  }
  return snippet(body);
}

// Retry-After in seconds (an HTTP date is not honoured; the backoff applies instead).
std::optional<double> retry_after_s(const HttpResponse& r) {
  const std::string v = r.header("retry-after");
  if (v.empty()) return std::nullopt;
  char* end = nullptr;
  const double s = std::strtod(v.c_str(), &end);
  if (end == v.c_str() || *end != '\0' || !std::isfinite(s) || s < 0) return std::nullopt;
  return s;
}

double jitter_factor() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.5, 1.0)(rng);
}

class HttpLlmClient final : public LlmClient {
 public:
  HttpLlmClient(LlmConfig config, std::unique_ptr<LlmProtocol> protocol, std::string key)
      : config_(std::move(config)), protocol_(std::move(protocol)), key_(std::move(key)) {}

  const LlmConfig& config() const override { return config_; }

  Result<ChatResponse> chat(const ChatRequest& req, const std::atomic<bool>* cancel, const TextSink& on_text) override {
    try {
      return chat_attempts(req, cancel, on_text);
    } catch (const std::exception& e) {
      // nlohmann or the allocator; a server's answer must never escape as an exception.
      return fail("nkia_llm_protocol", redact(fmt::format("cannot handle the answer: {}", e.what()), key_));
    }
  }

 private:
  // What one attempt came to.
  struct Attempt {
    std::optional<Result<ChatResponse>> final;  // set: the call ends with this
    std::string retry_why;                      // otherwise: why another attempt may help
    std::optional<double> retry_after;          // the server's wish, seconds
  };

  Result<ChatResponse> chat_attempts(const ChatRequest& req, const std::atomic<bool>* cancel, const TextSink& on_text) {
    const auto t0 = Clock::now();
    const auto deadline =
        t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(config_.timeout_s));
    const std::string body =
        protocol_->body(config_, req, config_.stream).dump(-1, ' ', false, json::error_handler_t::replace);
    const int max_attempts = std::max(config_.max_retries, 0) + 1;
    std::string last_why;
    for (int attempt = 1;; ++attempt) {
      if (cancel && cancel->load()) return cancelled_result();
      const double remaining = seconds_between(Clock::now(), deadline);
      if (remaining <= 0) return timed_out(attempt - 1, last_why);

      Attempt a = one_attempt(body, remaining, cancel, on_text);
      if (a.final) {
        if (*a.final) {
          (*a.final)->attempts = attempt;
          (*a.final)->seconds = seconds_between(t0, Clock::now());
        }
        return std::move(*a.final);
      }
      last_why = a.retry_why;
      if (attempt >= max_attempts)
        return fail("nkia_llm_retries",
                    redact(fmt::format("{} {} still failing after {} attempt{}: {}", config_.provider,
                                       protocol_->url(config_), attempt, attempt == 1 ? "" : "s", last_why),
                           key_),
                    "check that the server is up and the model name is right; raise max_retries or timeout_s "
                    "for a busy server");

      double wait =
          std::min(config_.backoff_initial_s * std::pow(2.0, attempt - 1), config_.backoff_max_s) * jitter_factor();
      if (a.retry_after) wait = *a.retry_after;
      if (seconds_between(Clock::now(), deadline) <= wait) return timed_out(attempt, last_why);
      const auto wake = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(wait));
      while (Clock::now() < wake) {
        if (cancel && cancel->load()) return cancelled_result();
        std::this_thread::sleep_for(std::min<Clock::duration>(kSleepSlice, wake - Clock::now()));
      }
    }
  }

  Attempt one_attempt(const std::string& body, double remaining, const std::atomic<bool>* cancel,
                      const TextSink& on_text) {
    HttpRequest hr;
    hr.url = protocol_->url(config_);
    hr.headers = protocol_->headers(key_);
    hr.headers.push_back("Content-Type: application/json");
    if (config_.stream) hr.headers.push_back("Accept: text/event-stream");
    hr.body = body;
    hr.timeout_s = remaining;
    hr.connect_timeout_s = config_.connect_timeout_s;
    hr.cancel = cancel;

    std::unique_ptr<StreamDecoder> decoder;
    SseParser sse;
    std::vector<SseEvent> events;
    bool stopped = false;  // the decoder asked to stop (an error event) or SSE broke
    size_t delivered = 0;  // events the decoder has seen
    auto deliver = [&]() {
      for (const auto& ev : events) {
        if (stopped) break;
        ++delivered;
        if (!decoder->on_event(ev, on_text)) stopped = true;
      }
      events.clear();
    };
    if (config_.stream) {
      decoder = protocol_->decoder();
      hr.on_data = [&](std::string_view chunk) {
        sse.feed(chunk, events);
        deliver();
        if (sse.failed()) stopped = true;
        // After the final event nothing more is needed; stop reading at once.
        return !stopped && !decoder->complete();
      };
    }

    HttpResponse r = http_post(hr);
    Attempt a;
    const std::string where = fmt::format("{} {}", config_.provider, hr.url);

    if (r.outcome == HttpOutcome::kCancelled) {
      a.final = cancelled_result();
      return a;
    }
    if (r.outcome == HttpOutcome::kTimeout) {
      a.final = fail("nkia_llm_timeout",
                     fmt::format("{}: no complete reply within the {:.3g} s deadline", where, config_.timeout_s),
                     "raise timeout_s, or lower max_tokens");
      return a;
    }
    if (r.outcome == HttpOutcome::kTooLarge) {
      a.final = fail("nkia_llm_protocol", fmt::format("{}: {}", where, r.error));
      return a;
    }

    if (r.streamed) {
      // A 2xx event stream. It ends cleanly, stops at our request, or breaks off.
      if (!stopped) {
        sse.finish(events);
        deliver();
      }
      if (decoder->error) {
        if (decoder->error_retryable) {
          a.retry_why = redact(decoder->error->message, key_);
          return a;
        }
        decoder->error->message = redact(fmt::format("{}: {}", where, decoder->error->message), key_);
        a.final = fail(std::move(*decoder->error));
        return a;
      }
      if (sse.failed()) {
        a.final = fail("nkia_llm_protocol", fmt::format("{}: {}", where, sse.error()));
        return a;
      }
      if (r.outcome == HttpOutcome::kTransport && delivered == 0) {
        // Broken before the first event: nothing reached the TextSink, so a retry is safe.
        a.retry_why = fmt::format("the stream broke before its first event ({})", r.error);
        return a;
      }
      // A transport error here came after reply events: the reply is truncated, not retried.
      a.final = decoder->finish();
      return a;
    }

    if (r.outcome != HttpOutcome::kOk) {
      a.retry_why = fmt::format("{} ({})", r.connect_failed ? "cannot connect" : "the connection failed", r.error);
      if (r.status > 0) a.retry_why = fmt::format("HTTP {} then {}", r.status, a.retry_why);
      return a;
    }
    if (r.status < 200 || r.status >= 300) {
      const std::string msg = redact(body_message(r.body), key_);
      if (retryable_status(r.status)) {
        a.retry_why = fmt::format("HTTP {}: {}", r.status, msg);
        a.retry_after = retry_after_s(r);
        return a;
      }
      a.final = fail("nkia_llm_http", fmt::format("{} answered HTTP {}: {}", where, r.status, msg),
                     r.status == 401 || r.status == 403
                         ? fmt::format("set the API key in ${} (the key is read from the environment only)",
                                       config_.api_key_env.empty() ? std::string("<api_key_env>") : config_.api_key_env)
                         : std::string());
      return a;
    }

    // A 2xx JSON answer: asked for (no streaming), or a server that ignores "stream".
    json j = parse_untrusted_json(r.body);
    if (j.is_discarded()) {
      a.final = fail("nkia_llm_protocol",
                     redact(fmt::format("{}: the answer is not JSON: {}", where, snippet(r.body)), key_));
      return a;
    }
    Result<ChatResponse> parsed = protocol_->parse(j);
    if (!parsed) {
      parsed.error().message = redact(fmt::format("{}: {}", where, parsed.error().message), key_);
    } else if (on_text && !parsed->text.empty()) {
      on_text(parsed->text);  // the whole reply as one delta, so the display works either way
    }
    a.final = std::move(parsed);
    return a;
  }

  Result<ChatResponse> cancelled_result() const {
    return fail("nkia_llm_cancelled", fmt::format("the call to {} was cancelled", config_.name));
  }

  Result<ChatResponse> timed_out(int attempts, const std::string& last_why) const {
    std::string msg = fmt::format("{} {}: no reply within the {:.3g} s deadline after {} attempt{}", config_.provider,
                                  protocol_->url(config_), config_.timeout_s, attempts, attempts == 1 ? "" : "s");
    if (!last_why.empty()) msg += "; last: " + last_why;
    return fail("nkia_llm_timeout", redact(msg, key_), "raise timeout_s, or check that the server is reachable");
  }

  LlmConfig config_;
  std::unique_ptr<LlmProtocol> protocol_;
  std::string key_;
};

}  // namespace

std::string join_url(const std::string& base_url, const std::string& path) {
  std::string b = base_url;
  while (!b.empty() && b.back() == '/') b.pop_back();
  return b + "/" + path;
}

std::string error_message_of(const json& answer) {
  if (!answer.is_object()) return {};
  auto e = answer.find("error");
  if (e == answer.end()) return {};
  if (e->is_string()) return e->get<std::string>();
  if (e->is_object()) {
    auto m = e->find("message");
    if (m != e->end() && m->is_string()) return m->get<std::string>();
  }
  return {};
}

json parse_untrusted_json(std::string_view text) {
  // One pass over the text, counting brackets outside strings.
  int depth = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) return json(json::value_t::discarded);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return json::parse(text, nullptr, false);
}

std::optional<json> arguments_object(const std::string& raw) {
  json j = parse_untrusted_json(raw);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  return j;
}

void drop_cut_tool_call(std::vector<ToolCall>& calls) {
  if (!calls.empty() && !arguments_object(calls.back().arguments)) calls.pop_back();
}

Result<std::unique_ptr<LlmClient>> make_llm_client(const LlmConfig& config) {
  if (auto ok = validate_llm_config(config); !ok) return fail(std::move(ok.error()));
  std::unique_ptr<LlmProtocol> protocol =
      config.provider == "anthropic" ? make_anthropic_protocol() : make_openai_protocol();
  std::string key = llm_api_key(config, [](const std::string& var) -> std::optional<std::string> {
    const char* v = std::getenv(var.c_str());
    return v ? std::optional<std::string>(v) : std::nullopt;
  });
  if (auto ok = check_llm_key(config, key); !ok) return fail(std::move(ok.error()));
  return std::unique_ptr<LlmClient>(std::make_unique<HttpLlmClient>(config, std::move(protocol), std::move(key)));
}

}  // namespace nki_agent
