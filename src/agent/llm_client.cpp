// The LLM client (agent/llm.h): one HTTP attempt after another until a reply, a non-retryable
// failure, the deadline, the cancellation flag or the last retry.
//
// Retry policy. Worth another attempt: 408, 409, 425, 429, 5xx (529 "overloaded" included, and
// the HTML error page a proxy or gateway sends in place of the server's answer), a failed
// connection, a connection dropped or reset in the middle of the answer, Anthropic's
// overloaded_error event, and an answer that is not the protocol: a 2xx body that is not JSON (an
// HTML page from a proxy or a captive portal, a cut-off body), JSON without the protocol's fields
// (no choices, no content blocks), an event stream that cannot be decoded. The wait before retry k
// (1-based) is backoff_initial_s * 2^(k-1), capped at backoff_max_s, times a random factor in
// [0.5, 1] so that parallel agents hitting one rate limit do not come back in lockstep; a
// Retry-After header in seconds replaces it. A wait that would end past the deadline is not
// started: the call fails with nkia_llm_timeout at once. When the last attempt fails too, the
// call fails with nkia_llm_protocol when that attempt's answer was not the protocol, else with
// nkia_llm_retries; either message names the endpoint, the number of attempts and what the last
// answer was.
//
// Streams. A stream that breaks (the connection drops or resets, the stream ends without its
// final event, an event cannot be decoded, the server reports overload) before any reply text
// arrived is retried like any other failed attempt: nothing of it has been shown or kept. One that
// breaks after reply text arrived is not retried: that text already went to the TextSink (the
// terminal shows it as it streams), and another attempt would be a second, different reply shown
// after the first. The reply so far is the answer, with stop_reason "truncated" and only the tool
// calls whose arguments arrived whole; the agent loop carries on with it and asks the model for a
// shorter reply, so the episode goes on. An error the server reports inside the stream ("context
// length exceeded") fails the call as it would in a status line.
//
// The API key is only ever put in a request header. Every message built from a server's answer
// has the key blanked out, in case a server echoes it back.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <random>
#include <thread>

#include "agent/http.h"
#include "agent/llm_config.h"
#include "agent/llm_protocol.h"
#include "core/log.h"
#include "core/text.h"

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

// Whitespace runs as one space, trimmed.
std::string collapse_space(std::string_view s) {
  std::string out;
  bool space = false;
  for (const char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

// An HTML page: said so by its Content-Type, or starting with a tag.
bool is_html(const HttpResponse& r) {
  if (to_lower(r.header("content-type")).find("html") != std::string::npos) return true;
  const size_t first = r.body.find_first_not_of(" \t\r\n");
  return first != std::string::npos && r.body[first] == '<';
}

// "an HTML page titled \"502 Bad Gateway\"", from the page's <title> (else its first text).
std::string html_summary(const std::string& body) {
  const std::string low = to_lower(body);
  std::string title;
  if (size_t open = low.find("<title"); open != std::string::npos) {
    const size_t start = low.find('>', open);
    const size_t end = start == std::string::npos ? start : low.find("</title", start);
    if (end != std::string::npos) title = collapse_space(std::string_view(body).substr(start + 1, end - start - 1));
  }
  if (title.empty()) {
    std::string text;  // the page without its tags
    bool in_tag = false;
    for (const char c : body) {
      if (c == '<') in_tag = true;
      if (!in_tag) text += c;
      if (c == '>') {
        in_tag = false;
        text += ' ';
      }
    }
    title = collapse_space(text);
  }
  if (title.empty()) return "an HTML page";
  return fmt::format("an HTML page titled \"{}\"", snippet(title.substr(0, 200)));
}

// What the answer's body says, in words: the server's error message, an HTML page's title, the
// start of anything else.
std::string describe_body(const HttpResponse& r) {
  if (r.body.find_first_not_of(" \t\r\n") == std::string::npos) return "an empty body";
  json j = parse_untrusted_json(r.body);
  if (!j.is_discarded()) {
    std::string m = error_message_of(j);
    if (!m.empty()) return snippet(m);
  }
  if (is_html(r)) return html_summary(r.body) + " (a proxy or gateway answered, not the model server)";
  return snippet(r.body);
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
    bool off_protocol = false;                  // the answer arrived but is not the protocol
    bool deadline = false;                      // the deadline passed during the attempt
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

      // Never the URL, the headers or the body: they can carry the API key.
      NKIA_LOG_DEBUG("llm {}: request, attempt {} ({} messages, {} bytes)", config_.name, attempt, req.messages.size(),
                     body.size());
      Attempt a = one_attempt(body, remaining, cancel, on_text);
      if (a.deadline) return timed_out(attempt, last_why);
      if (a.final) {
        if (*a.final) {
          (*a.final)->attempts = attempt;
          (*a.final)->seconds = seconds_between(t0, Clock::now());
        }
        NKIA_LOG_DEBUG("llm {}: {} after {:.3f} s", config_.name,
                       *a.final ? std::string("reply") : a.final->error().code, seconds_between(t0, Clock::now()));
        return std::move(*a.final);
      }
      last_why = redact(a.retry_why, key_);
      NKIA_LOG_INFO("llm {}: attempt {} failed: {}", config_.name, attempt, last_why);
      if (attempt >= max_attempts) return out_of_attempts(a, attempt, last_why);

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

  // The last attempt failed in a way another attempt might have cured.
  Result<ChatResponse> out_of_attempts(const Attempt& a, int attempts, const std::string& why) const {
    const std::string tries = fmt::format("{} attempt{}", attempts, attempts == 1 ? "" : "s");
    if (a.off_protocol)
      return fail("nkia_llm_protocol",
                  redact(fmt::format("{} {}: no usable answer after {}: {}", config_.provider, protocol_->url(config_),
                                     tries, why),
                         key_),
                  fmt::format("the answers are not the {} protocol: check base_url and provider (a proxy, a "
                              "gateway or another service may be answering there); raise max_retries for a flaky "
                              "server",
                              config_.provider == "anthropic" ? "Anthropic Messages" : "OpenAI chat completions"));
    return fail(
        "nkia_llm_retries",
        redact(fmt::format("{} {} still failing after {}: {}", config_.provider, protocol_->url(config_), tries, why),
               key_),
        "check that the server is up and the model name is right; raise max_retries or timeout_s for a "
        "busy server");
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
    bool stopped = false;       // the decoder asked to stop (an error event) or SSE broke
    bool text_arrived = false;  // reply text went to the TextSink: this attempt is the reply
    const TextSink sink = [&](std::string_view delta) {
      text_arrived = true;
      if (on_text) on_text(delta);
    };
    auto deliver = [&]() {
      for (const auto& ev : events) {
        if (stopped) break;
        if (!decoder->on_event(ev, sink)) stopped = true;
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
      a.deadline = true;
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
      if (decoder->error && !decoder->error_retryable) {
        decoder->error->message = redact(fmt::format("{}: {}", where, decoder->error->message), key_);
        a.final = fail(std::move(*decoder->error));
        return a;
      }
      ChatResponse so_far = decoder->finish();
      if (so_far.stop_reason != "truncated" || text_arrived) {
        // Whole, or cut after reply text was shown: the reply is what arrived (see the file comment).
        a.final = std::move(so_far);
        return a;
      }
      // Broken before any reply text: nothing was shown, so another attempt is safe.
      if (decoder->error) {
        a.retry_why = decoder->error->message;
        a.off_protocol = decoder->error->code == "nkia_llm_protocol";
      } else if (sse.failed()) {
        a.retry_why = sse.error();
        a.off_protocol = true;
      } else if (r.outcome == HttpOutcome::kTransport) {
        a.retry_why = fmt::format("the stream broke off ({})", r.error);
      } else {
        a.retry_why = "the stream ended without its final event";
        a.off_protocol = true;
      }
      a.retry_why += " before any reply text";
      return a;
    }

    if (r.outcome != HttpOutcome::kOk) {
      a.retry_why = fmt::format("{} ({})", r.connect_failed ? "cannot connect" : "the connection failed", r.error);
      if (r.status > 0) a.retry_why = fmt::format("HTTP {} then {}", r.status, a.retry_why);
      return a;
    }
    if (r.status < 200 || r.status >= 300) {
      const std::string msg = redact(describe_body(r), key_);
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
      a.off_protocol = true;
      a.retry_why = fmt::format("HTTP {} but the answer is not JSON: {}", r.status, describe_body(r));
      return a;
    }
    Result<ChatResponse> parsed = protocol_->parse(j);
    if (!parsed) {
      a.off_protocol = true;
      a.retry_why = fmt::format("HTTP {} but {}", r.status, parsed.error().message);
      return a;
    }
    if (on_text && !parsed->text.empty()) on_text(parsed->text);  // the whole reply as one delta
    a.final = std::move(parsed);
    return a;
  }

  Result<ChatResponse> cancelled_result() const {
    return fail("nkia_llm_cancelled", fmt::format("the call to {} was cancelled", config_.name));
  }

  // The deadline passed: during an attempt, or before a retry could start. `last_why`: why the
  // last failed attempt failed ("" when none did: the reply was too slow).
  Result<ChatResponse> timed_out(int attempts, const std::string& last_why) const {
    std::string msg =
        fmt::format("{} {}: no complete reply within the {:.3g} s deadline after {} attempt{}", config_.provider,
                    protocol_->url(config_), config_.timeout_s, attempts, attempts == 1 ? "" : "s");
    if (!last_why.empty()) msg += "; last: " + last_why;
    return fail("nkia_llm_timeout", redact(msg, key_),
                last_why.empty() ? "raise timeout_s, or lower max_tokens"
                                 : "raise timeout_s, or check that the server is reachable");
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
  return parse_json_bounded(text, kMaxJsonDepth);
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
