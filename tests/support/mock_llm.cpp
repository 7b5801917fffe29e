// The loopback LLM server of the tests (mock_llm.h).
#include "support/mock_llm.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <deque>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace nki_agent::testing {

namespace {

using nlohmann::json;

// Splits s into n pieces, never inside a UTF-8 sequence (each piece must stay valid JSON text).
std::vector<std::string> split(const std::string& s, size_t n) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 1; i <= n; ++i) {
    size_t end = i == n ? s.size() : s.size() * i / n;
    while (end < s.size() && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) ++end;
    if (end > start) out.push_back(s.substr(start, end - start));
    start = std::max(start, end);
  }
  return out;
}

std::string data_event(const json& j) {
  return "data: " + j.dump() + "\n\n";
}
std::string named_event(const std::string& name, const json& j) {
  return "event: " + name + "\ndata: " + j.dump() + "\n\n";
}

std::string stop_reason_of(const MockReply& r) {
  if (!r.stop_reason.empty()) return r.stop_reason;
  return r.tool_calls.empty() ? "end_turn" : "tool_use";
}

std::string openai_finish(const std::string& stop) {
  if (stop == "tool_use") return "tool_calls";
  if (stop == "max_tokens") return "length";
  return "stop";  // end_turn; a refusal is marked by the refusal field
}

// Arguments as the Anthropic API holds them: an object. Malformed text cannot exist there in a
// JSON reply, so it goes out as a string (the client must not mistake it for an object).
json anthropic_input(const std::string& raw) {
  json j = json::parse(raw, nullptr, false);
  return j.is_discarded() ? json(raw) : j;
}

std::vector<std::string> openai_stream(const MockReply& r, const std::string& model) {
  auto chunk = [&](json delta, json finish) {
    return data_event(
        {{"id", "chatcmpl-mock"},
         {"object", "chat.completion.chunk"},
         {"model", model},
         {"choices", json::array({{{"index", 0}, {"delta", std::move(delta)}, {"finish_reason", finish}}})}});
  };
  const std::string stop = stop_reason_of(r);
  std::vector<std::string> ev;
  ev.push_back(chunk({{"role", "assistant"}, {"content", ""}}, nullptr));
  for (const auto& piece : split(r.text, 3))
    ev.push_back(chunk({{stop == "refusal" ? "refusal" : "content", piece}}, nullptr));
  for (size_t i = 0; i < r.tool_calls.size(); ++i) {
    const auto& c = r.tool_calls[i];
    ev.push_back(chunk({{"tool_calls", json::array({{{"index", i},
                                                     {"id", c.id},
                                                     {"type", "function"},
                                                     {"function", {{"name", c.name}, {"arguments", ""}}}}})}},
                       nullptr));
    auto halves = split(c.arguments, 2);
    const bool last = i + 1 == r.tool_calls.size();
    for (size_t h = 0; h < halves.size(); ++h) {
      if (r.truncate && last && h == 1) return ev;
      ev.push_back(
          chunk({{"tool_calls", json::array({{{"index", i}, {"function", {{"arguments", halves[h]}}}}})}}, nullptr));
    }
  }
  if (r.truncate) return ev;
  ev.push_back(chunk(json::object(), openai_finish(stop)));
  ev.push_back(data_event({{"id", "chatcmpl-mock"},
                           {"object", "chat.completion.chunk"},
                           {"model", model},
                           {"choices", json::array()},
                           {"usage",
                            {{"prompt_tokens", r.input_tokens},
                             {"completion_tokens", r.output_tokens},
                             {"total_tokens", r.input_tokens + r.output_tokens}}}}));
  ev.push_back("data: [DONE]\n\n");
  return ev;
}

json openai_json(const MockReply& r, const std::string& model) {
  const std::string stop = stop_reason_of(r);
  json msg = {{"role", "assistant"}, {"content", r.text}};
  if (stop == "refusal") {
    msg["content"] = nullptr;
    msg["refusal"] = r.text;
  }
  if (!r.tool_calls.empty()) {
    json calls = json::array();
    for (const auto& c : r.tool_calls)
      calls.push_back(
          {{"id", c.id}, {"type", "function"}, {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
    msg["tool_calls"] = std::move(calls);
  }
  return {
      {"id", "chatcmpl-mock"},
      {"object", "chat.completion"},
      {"model", model},
      {"choices", json::array({{{"index", 0}, {"message", std::move(msg)}, {"finish_reason", openai_finish(stop)}}})},
      {"usage",
       {{"prompt_tokens", r.input_tokens},
        {"completion_tokens", r.output_tokens},
        {"total_tokens", r.input_tokens + r.output_tokens}}}};
}

std::vector<std::string> anthropic_stream(const MockReply& r, const std::string& model) {
  std::vector<std::string> ev;
  ev.push_back(named_event("message_start", {{"type", "message_start"},
                                             {"message",
                                              {{"id", "msg_mock"},
                                               {"type", "message"},
                                               {"role", "assistant"},
                                               {"model", model},
                                               {"content", json::array()},
                                               {"stop_reason", nullptr},
                                               {"usage", {{"input_tokens", r.input_tokens}, {"output_tokens", 1}}}}}}));
  ev.push_back(named_event("ping", {{"type", "ping"}}));
  int index = 0;
  if (!r.text.empty()) {
    ev.push_back(named_event(
        "content_block_start",
        {{"type", "content_block_start"}, {"index", index}, {"content_block", {{"type", "text"}, {"text", ""}}}}));
    for (const auto& piece : split(r.text, 3))
      ev.push_back(named_event(
          "content_block_delta",
          {{"type", "content_block_delta"}, {"index", index}, {"delta", {{"type", "text_delta"}, {"text", piece}}}}));
    if (r.truncate && r.tool_calls.empty()) return ev;
    ev.push_back(named_event("content_block_stop", {{"type", "content_block_stop"}, {"index", index}}));
    ++index;
  }
  for (size_t i = 0; i < r.tool_calls.size(); ++i, ++index) {
    const auto& c = r.tool_calls[i];
    ev.push_back(named_event(
        "content_block_start",
        {{"type", "content_block_start"},
         {"index", index},
         {"content_block", {{"type", "tool_use"}, {"id", c.id}, {"name", c.name}, {"input", json::object()}}}}));
    auto halves = split(c.arguments, 2);
    const bool last = i + 1 == r.tool_calls.size();
    for (size_t h = 0; h < halves.size(); ++h) {
      if (r.truncate && last && h == 1) return ev;
      ev.push_back(
          named_event("content_block_delta", {{"type", "content_block_delta"},
                                              {"index", index},
                                              {"delta", {{"type", "input_json_delta"}, {"partial_json", halves[h]}}}}));
    }
    if (r.truncate && last) return ev;
    ev.push_back(named_event("content_block_stop", {{"type", "content_block_stop"}, {"index", index}}));
  }
  if (r.truncate) return ev;
  ev.push_back(
      named_event("message_delta", {{"type", "message_delta"},
                                    {"delta", {{"stop_reason", stop_reason_of(r)}, {"stop_sequence", nullptr}}},
                                    {"usage", {{"output_tokens", r.output_tokens}}}}));
  ev.push_back(named_event("message_stop", {{"type", "message_stop"}}));
  return ev;
}

json anthropic_json(const MockReply& r, const std::string& model) {
  json content = json::array();
  if (!r.text.empty()) content.push_back({{"type", "text"}, {"text", r.text}});
  for (const auto& c : r.tool_calls)
    content.push_back({{"type", "tool_use"}, {"id", c.id}, {"name", c.name}, {"input", anthropic_input(c.arguments)}});
  return {{"id", "msg_mock"},
          {"type", "message"},
          {"role", "assistant"},
          {"model", model},
          {"content", std::move(content)},
          {"stop_reason", stop_reason_of(r)},
          {"stop_sequence", nullptr},
          {"usage", {{"input_tokens", r.input_tokens}, {"output_tokens", r.output_tokens}}}};
}

// The whole answer to `r` as one body and its Content-Type, as handle() would send it.
std::pair<std::string, std::string> whole_answer(const MockReply& r, bool anthropic, bool stream,
                                                 const std::string& model) {
  if (!r.raw_body.empty()) return {r.raw_body, r.raw_content_type};
  if (r.status < 200 || r.status >= 300)
    return {json({{"type", "error"}, {"error", {{"type", "mock_error"}, {"message", r.text}}}}).dump(),
            "application/json"};
  if (!stream) return {(anthropic ? anthropic_json(r, model) : openai_json(r, model)).dump(), "application/json"};
  std::string body;
  for (const auto& e : anthropic ? anthropic_stream(r, model) : openai_stream(r, model)) body += e;
  return {body, "text/event-stream"};
}

// The server's end of the connection from 127.0.0.1:peer_port to local_port: httplib does not hand
// a handler its socket, so it is found among the process's descriptors by its address pair.
int connection_fd(int local_port, int peer_port) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    int fd = -1;
    try {
      fd = std::stoi(entry.path().filename().string());
    } catch (...) {
      continue;
    }
    sockaddr_in local{}, peer{};
    socklen_t ll = sizeof local, pl = sizeof peer;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &ll) != 0 || local.sin_family != AF_INET) continue;
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &pl) != 0) continue;
    if (ntohs(local.sin_port) == local_port && ntohs(peer.sin_port) == peer_port) return fd;
  }
  return -1;
}

// Resets the connection (RST, not FIN): SO_LINGER of zero, then the socket is closed by putting
// /dev/null in its place, so that httplib's own later writes and close act on that, and the
// descriptor number is never free for another thread to reuse meanwhile.
void reset_connection(int fd) {
  linger lg{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
  const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd < 0) return;
  ::dup2(null_fd, fd);
  ::close(null_fd);
}

}  // namespace

struct MockLlmServer::Impl {
  httplib::Server server;
  std::thread thread;
  int port = -1;
  std::atomic<bool> stopping{false};
  mutable std::mutex mu;
  std::deque<MockReply> script;
  std::vector<MockRequest> seen;
  int next_id = 1;

  // Sleeps up to `s` seconds, waking early when the server stops.
  void pause(double s) const {
    using Clock = std::chrono::steady_clock;
    const Clock::time_point until =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
    for (auto now = Clock::now(); !stopping && now < until; now = Clock::now())
      std::this_thread::sleep_for(std::min<Clock::duration>(std::chrono::milliseconds(5), until - now));
  }

  void handle(const httplib::Request& req, httplib::Response& res, bool anthropic) {
    MockRequest rec;
    rec.path = req.path;
    for (const auto& [k, v] : req.headers) {
      std::string name = k;
      for (auto& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      rec.headers[name] = v;
    }
    rec.body = json::parse(req.body, nullptr, false);
    const bool stream = rec.body.is_object() && rec.body.value("stream", false) == true;
    const std::string model = rec.body.is_object() ? rec.body.value("model", "mock-model") : "mock-model";

    MockReply r;
    size_t number = 0;
    bool have = false;
    {
      std::lock_guard<std::mutex> lock(mu);
      seen.push_back(std::move(rec));
      number = seen.size();
      if (!script.empty()) {
        r = std::move(script.front());
        script.pop_front();
        have = true;
        for (auto& c : r.tool_calls)
          if (c.id.empty()) c.id = (anthropic ? "toolu_mock_" : "call_mock_") + std::to_string(next_id++);
      }
    }
    if (!have) {
      res.status = 500;
      const std::string msg =
          "mock LLM: the script ran out of replies (request #" + std::to_string(number) + " to " + req.path + ")";
      res.set_content(json({{"type", "error"}, {"error", {{"type", "mock_script_empty"}, {"message", msg}}}}).dump(),
                      "application/json");
      return;
    }
    if (r.delay_s > 0) pause(r.delay_s);
    res.status = r.status;
    for (const auto& [k, v] : r.headers) res.set_header(k.c_str(), v);
    if (r.cut_after_bytes >= 0) {
      auto [body, type] = whole_answer(r, anthropic, stream, model);
      const size_t cut = std::min(body.size(), static_cast<size_t>(r.cut_after_bytes));
      const bool reset = r.reset;
      const int peer_port = req.remote_port;
      const size_t length = body.size();
      res.set_content_provider(
          length, type, [this, body = std::move(body), cut, reset, peer_port](size_t, size_t, httplib::DataSink& sink) {
            if (cut > 0 && !sink.write(body.data(), cut)) return false;
            pause(0.02);  // let the client read the part before the connection ends
            if (reset) {
              const int fd = connection_fd(port, peer_port);
              if (fd >= 0) reset_connection(fd);
            }
            return false;  // httplib ends the connection with the body unfinished
          });
      return;
    }
    if (!r.raw_body.empty()) {
      res.set_content(r.raw_body, r.raw_content_type);
      return;
    }
    if (r.status < 200 || r.status >= 300) {
      res.set_content(json({{"type", "error"}, {"error", {{"type", "mock_error"}, {"message", r.text}}}}).dump(),
                      "application/json");
      return;
    }
    if (!stream) {
      res.set_content((anthropic ? anthropic_json(r, model) : openai_json(r, model)).dump(), "application/json");
      return;
    }
    auto events =
        std::make_shared<std::vector<std::string>>(anthropic ? anthropic_stream(r, model) : openai_stream(r, model));
    const bool cut = r.truncate;
    res.set_chunked_content_provider("text/event-stream", [this, events, cut](size_t, httplib::DataSink& sink) {
      for (const auto& e : *events) {
        // Every event in two writes with a pause between, so that lines arrive cut in two.
        const size_t half = e.size() / 2;
        if (!sink.write(e.data(), half)) return false;
        pause(0.001);
        if (!sink.write(e.data() + half, e.size() - half)) return false;
        if (stopping) return false;
      }
      if (cut) return false;  // drops the connection without the chunked terminator
      sink.done();
      return true;
    });
  }
};

MockLlmServer::MockLlmServer() : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.server.set_keep_alive_timeout(1);
  m.server.Post("/v1/chat/completions",
                [&m](const httplib::Request& req, httplib::Response& res) { m.handle(req, res, false); });
  m.server.Post("/v1/messages",
                [&m](const httplib::Request& req, httplib::Response& res) { m.handle(req, res, true); });
  m.port = m.server.bind_to_any_port("127.0.0.1");
  if (m.port <= 0) throw std::runtime_error("mock LLM: cannot bind a port on 127.0.0.1");
  m.thread = std::thread([&m] { m.server.listen_after_bind(); });
  for (int i = 0; i < 500 && !m.server.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  if (!m.server.is_running()) {
    m.server.stop();
    m.thread.join();
    throw std::runtime_error("mock LLM: the server did not start");
  }
}

MockLlmServer::~MockLlmServer() {
  impl_->stopping = true;
  impl_->server.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

void MockLlmServer::push(MockReply reply) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->script.push_back(std::move(reply));
}

std::vector<MockRequest> MockLlmServer::requests() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->seen;
}

size_t MockLlmServer::request_count() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->seen.size();
}

size_t MockLlmServer::replies_left() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->script.size();
}

int MockLlmServer::port() const {
  return impl_->port;
}

std::string MockLlmServer::base_url() const {
  return "http://127.0.0.1:" + std::to_string(impl_->port) + "/v1";
}

}  // namespace nki_agent::testing
