#include "runtime/protocol.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <fmt/format.h>
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstring>

#include "core/huge_pages.h"

namespace nki_agent {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// Bodies are read in pieces of this size into room reserved once: only the pages of bytes that
// really arrived are ever touched.
constexpr size_t kBodyChunkBytes = 1 << 20;
// A Diagnostic sent in a header is clamped to these sizes (a hostile child writes its own).
constexpr size_t kMaxDiagTextBytes = size_t{8} * 1024;
constexpr size_t kMaxDiagNotes = 64;
constexpr size_t kMaxDiagNoteBytes = 1024;
constexpr size_t kMaxDiagCodeBytes = 128;

Diagnostic bad_frame(const std::string& what) {
  return Diagnostic::error(std::string(kWorkerBadFrame), "malformed worker frame: " + what,
                           "host and worker disagree on the protocol: rebuild nki-agent and its worker "
                           "from one tree");
}

void put_le(std::string& s, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t get_le(std::string_view s, size_t pos, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[pos + static_cast<size_t>(i)]);
  return v;
}

std::string dump(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

// Exactly `required` keys plus any of `optional`, nothing else.
Result<void> check_keys(const json& j, std::initializer_list<std::string_view> required,
                        std::initializer_list<std::string_view> optional = {}) {
  if (!j.is_object()) return fail(bad_frame("expected a JSON object"));
  for (auto k : required)
    if (!j.contains(k)) return fail(bad_frame(fmt::format("missing field '{}'", k)));
  for (const auto& [k, v] : j.items()) {
    const bool known = std::find(required.begin(), required.end(), k) != required.end() ||
                       std::find(optional.begin(), optional.end(), k) != optional.end();
    if (!known) return fail(bad_frame(fmt::format("unknown field '{}'", k)));
  }
  return {};
}

Result<uint64_t> get_count(const json& j, const char* key, uint64_t max) {
  const json& v = j.at(key);
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
    return fail(bad_frame(fmt::format("'{}' is not a non-negative integer", key)));
  const auto n = v.get<uint64_t>();
  if (n > max) return fail(bad_frame(fmt::format("'{}' = {} exceeds {}", key, n, max)));
  return n;
}

Result<double> get_seconds(const json& j, const char* key) {
  const json& v = j.at(key);
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0)
    return fail(bad_frame(fmt::format("'{}' is not a non-negative number", key)));
  return v.get<double>();
}

Result<void> check_type(const json& h, std::string_view type) {
  const json& t = h.at("type");
  const json& v = h.at("version");
  if (!t.is_string() || t.get<std::string>() != type)
    return fail(bad_frame(fmt::format("expected a '{}' message", type)));
  if (!v.is_number_integer() || v.get<int64_t>() != kProtocolVersion)
    return fail(bad_frame(fmt::format("unsupported protocol version (this side speaks {})", kProtocolVersion)));
  return {};
}

std::string clamp_text(std::string s, size_t max) {
  if (s.size() > max) {
    s.resize(max);
    s += " [truncated]";
  }
  return s;
}

// A Diagnostic small enough for any header, whatever the child put in it.
json clamped_diagnostic(const Diagnostic& d) {
  Diagnostic c = d;
  c.code = clamp_text(c.code, kMaxDiagCodeBytes);
  c.message = clamp_text(c.message, kMaxDiagTextBytes);
  c.hint = clamp_text(c.hint, kMaxDiagTextBytes);
  c.loc.file = clamp_text(c.loc.file, kMaxDiagNoteBytes);
  if (c.notes.size() > kMaxDiagNotes) c.notes.resize(kMaxDiagNotes);
  for (auto& n : c.notes) n = clamp_text(n, kMaxDiagNoteBytes);
  return c.to_json();
}

Result<Diagnostic> diagnostic_from(const json& j) {
  if (!j.is_object() || !j.contains("code") || !j["code"].is_string() || j["code"].get<std::string>().empty() ||
      !j.contains("message") || !j["message"].is_string())
    return fail(bad_frame("'diagnostic' is not a Diagnostic"));
  return Diagnostic::from_json(j);
}

// Waits until fd is ready for `events` or the deadline passes. false: timed out.
Result<bool> wait_ready(int fd, short events, Deadline deadline) {
  while (true) {
    int timeout = -1;
    if (deadline) {
      auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline - Clock::now()).count();
      if (left <= 0) return false;
      timeout = static_cast<int>(std::min<int64_t>(left, 60'000));
    }
    pollfd p{fd, events, 0};
    int r = ::poll(&p, 1, timeout);
    if (r > 0) return true;
    if (r < 0 && errno != EINTR)
      return fail(std::string(kFrameIo), fmt::format("poll on the worker socket: {}", std::strerror(errno)));
  }
}

Diagnostic timeout_diag() {
  return Diagnostic::error(std::string(kFrameTimeout), "no complete frame before the deadline");
}

// Reads exactly n bytes. at_boundary: a close before the first byte is kFrameEof, not an error.
// Receives into buf, collecting the descriptors that come with the bytes into *fds (MSG_CTRUNC —
// more than the control buffer holds — is a bad frame; the system closed the rest).
ssize_t receive(int fd, char* buf, size_t n, std::vector<OwnedFd>* fds, bool* truncated) {
  if (fds == nullptr) return ::read(fd, buf, n);
  iovec iov{buf, n};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxAttachments)];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  const ssize_t r = ::recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
  if (r < 0) return r;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int received = -1;
      std::memcpy(&received, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      fds->emplace_back(received);
    }
  }
  if ((msg.msg_flags & MSG_CTRUNC) != 0) *truncated = true;
  return r;
}

Result<void> read_exact(int fd, char* buf, size_t n, Deadline deadline, bool at_boundary,
                        std::vector<OwnedFd>* fds = nullptr) {
  size_t got = 0;
  bool truncated = false;
  while (got < n) {
    auto ready = wait_ready(fd, POLLIN, deadline);
    if (!ready) return fail(ready.error());
    if (!*ready) return fail(timeout_diag());
    ssize_t r = receive(fd, buf + got, n - got, fds, &truncated);
    if (truncated || (fds != nullptr && fds->size() > kMaxAttachments))
      return fail(bad_frame(fmt::format("more than {} descriptors came with a frame", kMaxAttachments)));
    if (r > 0) {
      got += static_cast<size_t>(r);
    } else if (r == 0) {
      if (at_boundary && got == 0) return fail(std::string(kFrameEof), "the peer closed the connection");
      return fail(std::string(kFrameIo), "the peer closed the connection in the middle of a frame");
    } else if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) {
      return fail(std::string(kFrameIo), fmt::format("read from the worker socket: {}", std::strerror(errno)));
    }
  }
  return {};
}

}  // namespace

bool valid_handler_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxHandlerNameBytes) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '-';
  });
}

FrameParts frame_parts(const json& header, std::initializer_list<std::string_view> sections) {
  const std::string h = dump(header);
  if (h.empty() || h.size() > kMaxFrameHeaderBytes) throw InternalError("worker frame header too large");
  uint64_t body = 0;
  for (auto s : sections) body += s.size();
  if (body > static_cast<uint64_t>(kMaxFrameBodyBytes)) throw InternalError("worker frame body too large");
  FrameParts out;
  out.head.reserve(kFramePrefixBytes + h.size());
  put_le(out.head, kFrameMagic, 4);
  put_le(out.head, h.size(), 4);
  put_le(out.head, body, 8);
  out.head += h;
  out.sections.assign(sections.begin(), sections.end());
  return out;
}

std::string joined(const FrameParts& parts) {
  size_t n = parts.head.size();
  for (auto s : parts.sections) n += s.size();
  std::string out;
  out.reserve(n);
  out += parts.head;
  for (auto s : parts.sections) out.append(s);
  return out;
}

std::string encode_frame(const json& header, std::initializer_list<std::string_view> sections) {
  return joined(frame_parts(header, sections));
}

Result<FramePrefix> parse_frame_prefix(std::string_view p) {
  if (p.size() != kFramePrefixBytes) return fail(bad_frame("short prefix"));
  if (get_le(p, 0, 4) != kFrameMagic) return fail(bad_frame("wrong magic number"));
  FramePrefix out;
  out.header_bytes = static_cast<uint32_t>(get_le(p, 4, 4));
  out.body_bytes = get_le(p, 8, 8);
  if (out.header_bytes == 0 || out.header_bytes > kMaxFrameHeaderBytes)
    return fail(bad_frame(fmt::format("header size {} is not in [1, {}]", out.header_bytes, kMaxFrameHeaderBytes)));
  if (out.body_bytes > static_cast<uint64_t>(kMaxFrameBodyBytes))
    return fail(bad_frame(fmt::format("body size {} exceeds {}", out.body_bytes, kMaxFrameBodyBytes)));
  return out;
}

Result<json> parse_frame_header(std::string_view text) {
  json h = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (h.is_discarded()) return fail(bad_frame("the header is not valid JSON"));
  if (!h.is_object()) return fail(bad_frame("the header is not a JSON object"));
  if (!h.contains("type") || !h.contains("version")) return fail(bad_frame("the header has no type or version"));
  return h;
}

Result<Frame> read_frame(int fd, Deadline deadline, bool take_fds, bool body_in_memory) {
  char prefix[kFramePrefixBytes];
  std::vector<OwnedFd> fds;
  // Descriptors ride on a frame's first byte, so they arrive with its prefix.
  if (auto r = read_exact(fd, prefix, sizeof prefix, deadline, true, take_fds ? &fds : nullptr); !r)
    return fail(r.error());
  auto p = parse_frame_prefix(std::string_view(prefix, sizeof prefix));
  if (!p) return fail(p.error());
  std::string header(p->header_bytes, '\0');
  if (auto r = read_exact(fd, header.data(), header.size(), deadline, false); !r) return fail(r.error());
  auto h = parse_frame_header(header);
  if (!h) return fail(h.error());
  Frame f;
  f.header = std::move(*h);
  f.fds = std::move(fds);
  if (body_in_memory) {
    if (auto m = ReceivedBytes::make(static_cast<int64_t>(p->body_bytes))) {
      if (auto r =
              read_exact(fd, reinterpret_cast<char*>(m->bytes()), static_cast<size_t>(p->body_bytes), deadline, false);
          !r)
        return fail(r.error());
      f.body_memory = std::move(m);
      return f;
    }
  }
  // The whole body's room at once, advised huge pages before anything is written: growing it as it
  // comes would copy what came so far into fresh memory at each doubling (parse_frame_prefix
  // bounded the size).
  reserve_on_huge_pages(f.body, static_cast<size_t>(p->body_bytes));
  while (f.body.size() < p->body_bytes) {
    const size_t old = f.body.size();
    const size_t chunk = static_cast<size_t>(std::min<uint64_t>(kBodyChunkBytes, p->body_bytes - old));
    f.body.resize(old + chunk);
    if (auto r = read_exact(fd, f.body.data() + old, chunk, deadline, false); !r) return fail(r.error());
  }
  return f;
}

namespace {

// Sends the parts in order as one stream of bytes, with `fds` on the first of them (SCM_RIGHTS; a
// retry after EAGAIN sends them again: nothing was sent then).
Result<void> send_parts(int fd, std::vector<iovec> iov, Deadline deadline, const std::vector<int>& fds) {
  if (fds.size() > kMaxAttachments) throw InternalError("too many descriptors for one worker frame");
  std::erase_if(iov, [](const iovec& v) { return v.iov_len == 0; });
  if (!fds.empty() && iov.empty()) throw InternalError("descriptors need a byte to ride on");
  const int flags = MSG_NOSIGNAL | (deadline ? MSG_DONTWAIT : 0);
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxAttachments)];
  bool fds_sent = fds.empty();
  size_t first = 0;  // the parts before it are sent; iov[first] is advanced past what was
  while (first < iov.size()) {
    msghdr msg{};
    msg.msg_iov = iov.data() + first;
    msg.msg_iovlen = std::min<size_t>(iov.size() - first, IOV_MAX);
    if (!fds_sent) {
      msg.msg_control = control;
      msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
      cmsghdr* c = CMSG_FIRSTHDR(&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
      std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
    }
    const ssize_t w = ::sendmsg(fd, &msg, flags);
    if (w > 0) {
      fds_sent = true;
      auto left = static_cast<size_t>(w);
      while (left > 0 && left >= iov[first].iov_len) left -= iov[first++].iov_len;
      if (left > 0) {
        iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + left;
        iov[first].iov_len -= left;
      }
      continue;
    }
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      auto ready = wait_ready(fd, POLLOUT, deadline);
      if (!ready) return fail(ready.error());
      if (!*ready) return fail(timeout_diag());
      continue;
    }
    return fail(std::string(kFrameIo), fmt::format("write to the worker socket: {}", std::strerror(errno)));
  }
  return {};
}

iovec part(std::string_view s) {
  return iovec{const_cast<char*>(s.data()), s.size()};
}

}  // namespace

Result<void> write_frame(int fd, std::string_view bytes, Deadline deadline, const std::vector<int>& fds) {
  return send_parts(fd, {part(bytes)}, deadline, fds);
}

Result<void> write_frame(int fd, const FrameParts& frame, Deadline deadline) {
  std::vector<iovec> iov{part(frame.head)};
  for (auto s : frame.sections) iov.push_back(part(s));
  return send_parts(fd, std::move(iov), deadline, {});
}

json limits_to_json(const SandboxLimits& l) {
  return json{{"wall_seconds", l.wall_seconds},
              {"cpu_seconds", l.cpu_seconds},
              {"address_space_bytes", l.address_space_bytes},
              {"max_output_bytes", l.max_output_bytes},
              {"max_log_bytes", l.max_log_bytes},
              {"capture_bytes", l.capture_bytes},
              {"max_file_bytes", l.max_file_bytes},
              {"seccomp", l.seccomp}};
}

Result<SandboxLimits> limits_from_json(const json& j) {
  if (auto k = check_keys(j, {"wall_seconds", "cpu_seconds", "address_space_bytes", "max_output_bytes", "max_log_bytes",
                              "capture_bytes", "max_file_bytes", "seccomp"});
      !k)
    return fail(k.error());
  SandboxLimits l;
  auto secs = [&](const char* key, double* out) -> Result<void> {
    auto v = get_seconds(j, key);
    if (!v) return fail(v.error());
    *out = *v;
    return {};
  };
  auto bytes = [&](const char* key, int64_t* out) -> Result<void> {
    auto v = get_count(j, key, static_cast<uint64_t>(INT64_MAX));
    if (!v) return fail(v.error());
    *out = static_cast<int64_t>(*v);
    return {};
  };
  for (auto r : {secs("wall_seconds", &l.wall_seconds), secs("cpu_seconds", &l.cpu_seconds),
                 bytes("address_space_bytes", &l.address_space_bytes), bytes("max_output_bytes", &l.max_output_bytes),
                 bytes("max_log_bytes", &l.max_log_bytes), bytes("capture_bytes", &l.capture_bytes),
                 bytes("max_file_bytes", &l.max_file_bytes)})
    if (!r) return fail(r.error());
  if (!j.at("seccomp").is_boolean()) return fail(bad_frame("'seccomp' is not a boolean"));
  l.seccomp = j.at("seccomp").get<bool>();
  if (auto v = validate_limits(l); !v) return fail(v.error());
  return l;
}

std::string encode_request(uint64_t id, const WorkerRequest& r) {
  json h{{"type", "request"},    {"version", kProtocolVersion},        {"id", id},
         {"handler", r.handler}, {"limits", limits_to_json(r.limits)}, {"payload_bytes", r.payload.size()}};
  if (!r.attachments.empty()) h["attachments"] = r.attachments.size();
  if (std::any_of(r.attachments.begin(), r.attachments.end(), [](const auto& m) { return m && m->reuse_key() != 0; })) {
    json keys = json::array();
    for (const auto& m : r.attachments) keys.push_back(m ? m->reuse_key() : 0);
    h["attachment_keys"] = std::move(keys);
  }
  return encode_frame(h, {r.payload});
}

std::vector<int> request_fds(const WorkerRequest& r) {
  if (r.attachments.size() > kMaxAttachments) throw InternalError("too many attachments for one request");
  std::vector<int> fds;
  for (const auto& m : r.attachments) {
    if (!m || !m->sealed() || m->fd() < 0) throw InternalError("a request's attachment is not sealed shared memory");
    fds.push_back(m->fd());
  }
  return fds;
}

Result<WorkerRequest> decode_request(Frame f, uint64_t* id) {
  *id = 0;
  const json& h = f.header;
  if (h.contains("id") && h["id"].is_number_unsigned()) *id = h["id"].get<uint64_t>();
  if (auto k = check_keys(h, {"type", "version", "id", "handler", "limits", "payload_bytes"},
                          {"attachments", "attachment_keys"});
      !k)
    return fail(k.error());
  if (auto t = check_type(h, "request"); !t) return fail(t.error());
  if (auto v = get_count(h, "id", UINT64_MAX); !v) return fail(v.error());
  if (!h["handler"].is_string() || !valid_handler_name(h["handler"].get<std::string>()))
    return fail(bad_frame("'handler' is not a valid handler name"));
  auto n = get_count(h, "payload_bytes", static_cast<uint64_t>(kMaxRequestPayloadBytes));
  if (!n) return fail(n.error());
  if (*n != f.body.size()) return fail(bad_frame("'payload_bytes' does not match the body"));
  auto limits = limits_from_json(h["limits"]);
  if (!limits) return fail(limits.error());
  uint64_t attached = 0;
  if (h.contains("attachments")) {
    auto a = get_count(h, "attachments", kMaxAttachments);
    if (!a) return fail(a.error());
    attached = *a;
  }
  if (attached != f.fds.size())
    return fail(bad_frame(fmt::format("{} descriptors came with a request of {} attachments", f.fds.size(), attached)));
  std::vector<uint64_t> keys(attached, 0);
  if (h.contains("attachment_keys")) {
    const json& k = h["attachment_keys"];
    if (!k.is_array() || k.size() != attached ||
        !std::all_of(k.begin(), k.end(), [](const json& v) { return v.is_number_unsigned(); }))
      return fail(bad_frame("'attachment_keys' is not one number per attachment"));
    for (size_t i = 0; i < attached; ++i) keys[i] = k[i].get<uint64_t>();
  }
  WorkerRequest r;
  r.handler = h["handler"].get<std::string>();
  r.payload = std::move(f.body);
  r.limits = *limits;
  for (size_t i = 0; i < f.fds.size(); ++i) {
    auto m = SharedMemory::adopt(std::move(f.fds[i]), keys[i]);
    if (!m) return fail(m.error());
    r.attachments.push_back(std::move(*m));
  }
  return r;
}

std::string encode_response(uint64_t id, const SandboxReport& rep) {
  return joined(response_parts(id, rep));
}

FrameParts response_parts(uint64_t id, const SandboxReport& rep) {
  const SandboxOutput& o = rep.output;
  json h{{"type", "response"},
         {"version", kProtocolVersion},
         {"id", id},
         {"wall_seconds", o.wall_seconds},
         {"cpu_seconds", o.cpu_seconds},
         {"peak_rss_bytes", std::max<int64_t>(0, o.peak_rss_bytes)},
         {"payload_bytes", o.payload.size()},
         {"stdout_bytes", o.stdout_capture.bytes.size()},
         {"stdout_total", std::max<int64_t>(0, o.stdout_capture.total_bytes)},
         {"stderr_bytes", o.stderr_capture.bytes.size()},
         {"stderr_total", std::max<int64_t>(0, o.stderr_capture.total_bytes)}};
  if (rep.error) h["diagnostic"] = clamped_diagnostic(*rep.error);
  return frame_parts(h, {o.payload, o.stdout_capture.bytes, o.stderr_capture.bytes});
}

Result<SandboxReport> decode_response(Frame f, uint64_t expected_id, std::shared_ptr<ReceivedBytes>* payload_memory) {
  const json& h = f.header;
  if (auto k = check_keys(h,
                          {"type", "version", "id", "wall_seconds", "cpu_seconds", "peak_rss_bytes", "payload_bytes",
                           "stdout_bytes", "stdout_total", "stderr_bytes", "stderr_total"},
                          {"diagnostic"});
      !k)
    return fail(k.error());
  if (auto t = check_type(h, "response"); !t) return fail(t.error());
  auto id = get_count(h, "id", UINT64_MAX);
  if (!id) return fail(id.error());
  if (*id != expected_id) return fail(bad_frame(fmt::format("response to request {}, expected {}", *id, expected_id)));
  const auto max_body = static_cast<uint64_t>(kMaxFrameBodyBytes);
  auto pay = get_count(h, "payload_bytes", max_body);
  auto out = get_count(h, "stdout_bytes", max_body);
  auto err = get_count(h, "stderr_bytes", max_body);
  auto out_total = get_count(h, "stdout_total", static_cast<uint64_t>(INT64_MAX));
  auto err_total = get_count(h, "stderr_total", static_cast<uint64_t>(INT64_MAX));
  auto rss = get_count(h, "peak_rss_bytes", static_cast<uint64_t>(INT64_MAX));
  auto wall = get_seconds(h, "wall_seconds");
  auto cpu = get_seconds(h, "cpu_seconds");
  for (const Diagnostic* e :
       {pay ? nullptr : &pay.error(), out ? nullptr : &out.error(), err ? nullptr : &err.error(),
        out_total ? nullptr : &out_total.error(), err_total ? nullptr : &err_total.error(),
        rss ? nullptr : &rss.error(), wall ? nullptr : &wall.error(), cpu ? nullptr : &cpu.error()})
    if (e) return fail(*e);
  const std::string_view body = f.body_memory ? f.body_memory->view() : std::string_view(f.body);
  if (*pay + *out + *err != body.size()) return fail(bad_frame("section sizes do not add up to the body"));
  if (*out_total < *out || *err_total < *err) return fail(bad_frame("a stream's total is below its captured size"));
  SandboxReport rep;
  if (h.contains("diagnostic")) {
    auto d = diagnostic_from(h["diagnostic"]);
    if (!d) return fail(d.error());
    rep.error = std::move(*d);
  } else if (*pay > static_cast<uint64_t>(kMaxOutputBytesCeiling)) {
    return fail(bad_frame("payload larger than any limit allows"));
  }
  SandboxOutput& o = rep.output;
  o.wall_seconds = *wall;
  o.cpu_seconds = *cpu;
  o.peak_rss_bytes = static_cast<int64_t>(*rss);
  o.stdout_capture.bytes.assign(body.substr(*pay, *out));
  o.stdout_capture.total_bytes = static_cast<int64_t>(*out_total);
  o.stdout_capture.truncated = *out_total > *out;
  o.stderr_capture.bytes.assign(body.substr(*pay + *out, *err));
  // The payload is the body's head: it keeps that buffer, no copy.
  if (payload_memory != nullptr) {
    if (!f.body_memory) {
      f.body_memory = ReceivedBytes::make(static_cast<int64_t>(*pay));
      if (!f.body_memory) return fail(bad_frame("no memory for the payload"));
      std::copy_n(f.body.data(), *pay, f.body_memory->bytes());
    }
    f.body_memory->truncate(static_cast<int64_t>(*pay));
    *payload_memory = std::move(f.body_memory);
  } else if (f.body_memory) {
    o.payload.assign(body.substr(0, *pay));
  } else {
    f.body.resize(*pay);
    o.payload = std::move(f.body);
  }
  o.stderr_capture.total_bytes = static_cast<int64_t>(*err_total);
  o.stderr_capture.truncated = *err_total > *err;
  return rep;
}

std::string encode_ready(int pid, const std::vector<std::string>& handlers, bool sanitizer) {
  json h{
      {"type", "ready"}, {"version", kProtocolVersion}, {"pid", pid}, {"handlers", handlers}, {"sanitizer", sanitizer}};
  return encode_frame(h, {});
}

std::string encode_startup_error(const Diagnostic& d) {
  json h{{"type", "error"}, {"version", kProtocolVersion}, {"diagnostic", clamped_diagnostic(d)}};
  return encode_frame(h, {});
}

}  // namespace nki_agent
