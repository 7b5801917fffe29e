// runtime/protocol.h — the framed messages between the host (WorkerPool) and a worker zygote.
//
// One AF_UNIX stream socket per worker. Every message is a frame:
//   u32 magic 'N','K','W','1' · u32 header_bytes · u64 body_bytes   (16 bytes, little-endian)
//   header: a JSON object (1 .. kMaxFrameHeaderBytes bytes)
//   body:   binary sections (0 .. kMaxFrameBodyBytes bytes) whose lengths the header gives
// Messages (every header has "type" and "version": 1; unknown keys are an error):
//   worker → host, once, after its warm-up:
//     ready    {"pid", "handlers": [names], "sanitizer": bool}
//     error    {"diagnostic"}                  the warm-up failed; the worker then exits
//   host → worker:
//     request  {"id", "handler", "limits": {SandboxLimits fields}, "payload_bytes",
//               "attachments" (optional: how many sealed memfds came with the frame),
//               "attachment_keys" (optional: each attachment's reuse key, 0 for none)}   body: payload
//   A request's attachments (runtime/shared_memory.h) travel as SCM_RIGHTS descriptors on the
//   frame's first byte: large inputs reach the worker without a copy through the socket. An
//   attachment with a reuse key is read by a worker once and kept (SharedMemory::adopt).
//   worker → host, one per request:
//     response {"id", "diagnostic" (absent on success), "wall_seconds", "cpu_seconds",
//               "peak_rss_bytes", "payload_bytes", "stdout_bytes", "stdout_total",
//               "stderr_bytes", "stderr_total"}          body: payload · stdout · stderr
// Both sides validate every field: the host is trusted, but a wrong frame must be a Diagnostic,
// never a crash, a huge allocation or a desynchronised stream.
//
// This file must never allocate a body before its bytes arrive (a body read into memory of its own
// is a mapping whose pages are taken as bytes arrive), nor block past a given deadline.
#pragma once

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.h"
#include "core/owned_fd.h"
#include "runtime/received_bytes.h"
#include "runtime/sandbox.h"
#include "runtime/shared_memory.h"

namespace nki_agent {

inline constexpr uint32_t kFrameMagic = 0x31574B4E;  // "NKW1" in little-endian byte order
inline constexpr int kProtocolVersion = 1;
inline constexpr size_t kFramePrefixBytes = 16;
// A header carries limits, counts and at most one Diagnostic (a traceback's notes included).
inline constexpr uint32_t kMaxFrameHeaderBytes = 1 << 20;
// A request's payload: the kernel's sources and small inputs (large inputs are attachments).
inline constexpr int64_t kMaxRequestPayloadBytes = 256 * kMiB;
// Most shared memory buffers one request carries.
inline constexpr size_t kMaxAttachments = 40;
// The largest body either side sends: a result payload plus both captures at their ceilings.
inline constexpr int64_t kMaxFrameBodyBytes = kMaxOutputBytesCeiling + 2 * kMaxCaptureBytesCeiling;
// Handler names: [A-Za-z0-9_.-], at most this long.
inline constexpr size_t kMaxHandlerNameBytes = 64;

// Diagnostic codes of the worker layer.
inline constexpr std::string_view kWorkerBadFrame = "nkia_worker_bad_frame";
inline constexpr std::string_view kWorkerUnknownHandler = "nkia_worker_unknown_handler";
inline constexpr std::string_view kWorkerNotFound = "nkia_worker_not_found";
inline constexpr std::string_view kWorkerStartup = "nkia_worker_startup";
inline constexpr std::string_view kWorkerDied = "nkia_worker_died";
inline constexpr std::string_view kWorkerHung = "nkia_worker_hung";
// Transport outcomes of read_frame/write_frame (mapped to the worker codes by their callers).
inline constexpr std::string_view kFrameEof = "nkia_frame_eof";  // peer closed between frames
inline constexpr std::string_view kFrameTimeout = "nkia_frame_timeout";
inline constexpr std::string_view kFrameIo = "nkia_frame_io";  // read/write error, EOF mid-frame

using Deadline = std::optional<std::chrono::steady_clock::time_point>;  // nullopt: wait forever

// NOLINTNEXTLINE(bugprone-exception-escape): flagged through nlohmann::json's noexcept move
struct Frame {
  nlohmann::json header;                       // always an object
  std::string body;                            // empty when the body went to body_memory
  std::shared_ptr<ReceivedBytes> body_memory;  // the body, when read_frame was asked to read it there
  std::vector<OwnedFd> fds;                    // descriptors that came with it (only when the reader asked for them)
};

struct WorkerRequest {
  std::string handler;  // a name registered in the worker
  std::string payload;  // the handler's input bytes
  SandboxLimits limits;
  // Sealed shared memory the payload refers to: the host's buffers to send, or in the worker the
  // buffers received, mapped copy-on-write.
  Attachments attachments;
  // The host's own wish, not sent: the response's payload is read into memory of its own
  // (WorkerResponse::payload_memory) instead of WorkerResponse::payload.
  bool payload_in_memory = false;
};

bool valid_handler_name(std::string_view name);

// A frame as the parts it is sent in: the 16-byte prefix and the header in `head`, then the
// sections as views of the caller's bytes, which must outlive it. write_frame sends the parts
// with one gathering write, so a large section (a kernel's outputs) is never copied into a frame.
struct FrameParts {
  std::string head;
  std::vector<std::string_view> sections;
};
// Throws InternalError if the header would exceed its cap (the caller built it) — never for
// anything read from a peer.
FrameParts frame_parts(const nlohmann::json& header, std::initializer_list<std::string_view> sections);
// A frame's parts in one buffer.
std::string joined(const FrameParts& parts);
// The same frame in one buffer: the prefix, the header and the sections.
std::string encode_frame(const nlohmann::json& header, std::initializer_list<std::string_view> sections);

// Parses a prefix: kWorkerBadFrame for a wrong magic or a size beyond the caps.
struct FramePrefix {
  uint32_t header_bytes = 0;
  uint64_t body_bytes = 0;
};
Result<FramePrefix> parse_frame_prefix(std::string_view prefix16);
// Parses a header: kWorkerBadFrame unless it is one JSON object.
Result<nlohmann::json> parse_frame_header(std::string_view text);

// Reads one whole frame. kFrameEof (clean close before a frame), kFrameTimeout, kFrameIo, or
// kWorkerBadFrame (the stream cannot be trusted any more). With `take_fds` (a socket only) the
// descriptors sent with the frame land in Frame::fds, at most kMaxAttachments (more is
// kWorkerBadFrame); without it the system closes any that come.
// With `body_in_memory`, the body is read into Frame::body_memory (runtime/received_bytes.h).
Result<Frame> read_frame(int fd, Deadline deadline, bool take_fds = false, bool body_in_memory = false);
// Writes all bytes (send with MSG_NOSIGNAL: a dead peer is kFrameIo, never SIGPIPE), and `fds`
// with the first of them (SCM_RIGHTS; at most kMaxAttachments).
Result<void> write_frame(int fd, std::string_view bytes, Deadline deadline, const std::vector<int>& fds = {});
// Writes a frame's parts, in order, as one stream of bytes (no descriptors).
Result<void> write_frame(int fd, const FrameParts& frame, Deadline deadline);

nlohmann::json limits_to_json(const SandboxLimits& limits);
Result<SandboxLimits> limits_from_json(const nlohmann::json& j);  // strict, then validate_limits

std::string encode_request(uint64_t id, const WorkerRequest& request);
// The descriptors to send with encode_request's frame: the attachments' memfds, which must be
// sealed (InternalError otherwise: the host built them).
std::vector<int> request_fds(const WorkerRequest& request);
// kWorkerBadFrame / kSandboxBadLimits / kSharedMemoryError; `id` is set whenever the header has a
// usable one. Takes the frame by value so that a caller can move a large body into the payload
// without a copy. The frame's descriptors must be exactly its "attachments".
Result<WorkerRequest> decode_request(Frame frame, uint64_t* id);

std::string encode_response(uint64_t id, const SandboxReport& report);
// encode_response's frame as parts whose sections view `report`'s output (what the zygote sends).
FrameParts response_parts(uint64_t id, const SandboxReport& report);
// kWorkerBadFrame unless it is a well-formed response to request `expected_id`. With
// `payload_memory`, the payload goes there (the frame's body memory itself when it has one) and
// SandboxOutput::payload stays empty.
Result<SandboxReport> decode_response(Frame frame, uint64_t expected_id,
                                      std::shared_ptr<ReceivedBytes>* payload_memory = nullptr);

std::string encode_ready(int pid, const std::vector<std::string>& handlers, bool sanitizer);
std::string encode_startup_error(const Diagnostic& d);

}  // namespace nki_agent
