// Warm workers (runtime/zygote.h, runtime/worker_pool.h) and their wire protocol
// (runtime/protocol.h): every hostile handler of the test worker (nkia-test-worker) is contained
// with the right Diagnostic while the zygote and the host survive; many concurrent calls get the
// right verdicts; dead and hung workers are replaced; malformed frames are rejected on both sides.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/wait.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <thread>

#include "runtime/protocol.h"
#include "runtime/worker_pool.h"
#include "runtime/zygote.h"
#include "support/process_check.h"

namespace nki_agent {
namespace {

using testing::SandboxProcessTest;

constexpr double kShortWall = 0.5;

std::unique_ptr<WorkerPool> make_pool(int workers, double backstop_slack = kDefaultBackstopSlackSeconds) {
  WorkerPoolOptions o;
  o.workers = workers;
  o.worker_path = NKIA_TEST_WORKER;
  o.backstop_slack_seconds = backstop_slack;
  auto pool = WorkerPool::create(o);
  EXPECT_TRUE(pool) << pool.error().format();
  return pool ? std::move(*pool) : nullptr;
}

WorkerRequest req(std::string handler, std::string payload = {}, SandboxLimits limits = {}) {
  WorkerRequest r;
  r.handler = std::move(handler);
  r.payload = std::move(payload);
  r.limits = limits;
  return r;
}

SandboxLimits short_wall() {
  SandboxLimits l;
  l.wall_seconds = kShortWall;
  return l;
}

std::string code_of(const WorkerReport& r) {
  return r.error ? r.error->code : std::string("ok");
}

class WorkerPoolTest : public SandboxProcessTest {};

TEST_F(WorkerPoolTest, EchoRoundTripsBinaryPayloads) {
  auto pool = make_pool(2);
  ASSERT_TRUE(pool);
  EXPECT_EQ(pool->size(), 2);
  const std::string bin("x\0y\xfe\n", 5);
  auto r = pool->call(req("echo", bin));
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(r->payload, bin);
  auto pids = pool->worker_pids();
  EXPECT_NE(std::find(pids.begin(), pids.end(), r->worker_pid), pids.end());
  auto p = pool->call(req("print_and_return", "q"));
  ASSERT_TRUE(p) << p.error().format();
  EXPECT_EQ(p->payload, "done:q");
  EXPECT_EQ(p->stdout_capture.bytes, "out:q\n");
  EXPECT_EQ(p->stderr_capture.bytes, "err:q\n");
}

// Every hostile handler, one after another on one worker: the verdict is right and the same
// zygote answers the next echo.
TEST_F(WorkerPoolTest, HostileHandlersAreContainedAndTheZygoteSurvives) {
  auto pool = make_pool(1);
  ASSERT_TRUE(pool);
  const int zygote = pool->worker_pids().at(0);
  const std::string tmp =
      (std::filesystem::temp_directory_path() / ("nkia_pool_escape_" + std::to_string(::getpid()) + ".txt")).string();
  std::filesystem::remove(tmp);
  SandboxLimits small_memory;
  small_memory.address_space_bytes = 512 * kMiB;
  SandboxLimits small_result;
  small_result.max_output_bytes = 1 * kMiB;
  SandboxLimits small_log;
  small_log.max_log_bytes = 2 * kMiB;
  struct Case {
    const char* handler;
    std::string payload;
    SandboxLimits limits;
    std::string expect;  // a Diagnostic code, or "ok:<payload prefix>"
  };
  std::vector<Case> cases = {
      {"busy_loop", "", short_wall(), std::string(kSandboxTimeout)},
      {"sleep_forever", "", short_wall(), std::string(kSandboxTimeout)},
      {"signal_tricks", "", short_wall(), std::string(kSandboxTimeout)},
      {"fork_bomb", "", {}, "ok:forks=0 errno=1"},
      {"open_passwd", "", {}, "ok:denied errno=1 "},
      {"write_file", tmp, {}, "ok:denied errno=1 "},
      {"connect_local", "9", {}, "ok:denied errno=1 "},
      {"exec_shell", "", {}, std::string(kSandboxForbiddenSyscall)},
      {"ptrace_parent", "", {}, std::string(kSandboxForbiddenSyscall)},
      {"kill_parent", "", {}, "ok:kill denied errno=1 "},
      {"segfault", "", {}, std::string(kSandboxCrash)},
      {"abort", "", {}, std::string(kSandboxCrash)},
      {"deep_recursion", "", {}, std::string(kSandboxCrash)},
      {"exit7", "", {}, std::string(kSandboxExit)},
      {"print_flood", "", small_log, std::string(kSandboxOutputLimit)},
      {"big_result", std::to_string(2 * kMiB), small_result, std::string(kSandboxOutputLimit)},
      {"spawn_thread", "", {}, "ok:thread refused"},
      {"kernel_error", "", {}, "err_test_kernel"},
      {"no_such_handler", "", {}, std::string(kWorkerUnknownHandler)},
  };
  if (!sandbox_sanitizer_build())  // RLIMIT_AS is not applied under ASan
    cases.push_back({"allocate_gib", "2", small_memory, std::string(kSandboxMemoryLimit)});
  for (const auto& c : cases) {
    SCOPED_TRACE(c.handler);
    WorkerReport r = pool->call_report(req(c.handler, c.payload, c.limits));
    if (c.expect.rfind("ok:", 0) == 0) {
      ASSERT_TRUE(r.ok()) << r.error->format();
      EXPECT_EQ(r.response.payload.rfind(c.expect.substr(3), 0), 0u) << r.response.payload;
    } else {
      EXPECT_EQ(code_of(r), c.expect) << (r.error ? r.error->format() : r.response.payload);
    }
    auto echo = pool->call(req("echo", "still here"));
    ASSERT_TRUE(echo) << echo.error().format();
    EXPECT_EQ(echo->payload, "still here");
    EXPECT_EQ(echo->worker_pid, zygote) << "the zygote was replaced";
  }
  EXPECT_FALSE(std::filesystem::exists(tmp));
  EXPECT_EQ(pool->workers_started(), 1);
}

TEST_F(WorkerPoolTest, ManyConcurrentMixedCallsGetTheirOwnVerdicts) {
  constexpr int kWorkers = 4, kThreads = 8, kCalls = 200;
  auto pool = make_pool(kWorkers);
  ASSERT_TRUE(pool);
  const auto first_pids = pool->worker_pids();
  SandboxLimits timeout_limits;
  timeout_limits.wall_seconds = 0.3;
  std::atomic<int> next{0}, wrong{0};
  std::mutex mu;
  std::vector<std::string> failures;
  auto check = [&](bool ok, int i, const std::string& what) {
    if (ok) return;
    ++wrong;
    std::lock_guard<std::mutex> lock(mu);
    failures.push_back("call " + std::to_string(i) + ": " + what);
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      for (int i = next++; i < kCalls; i = next++) {
        const std::string tag = "p" + std::to_string(i);
        switch (i % 10) {
          case 5: {
            auto r = pool->call_report(req("segfault"));
            check(code_of(r) == kSandboxCrash, i, code_of(r));
            break;
          }
          case 6: {
            auto r = pool->call_report(req("exec_shell"));
            check(code_of(r) == kSandboxForbiddenSyscall, i, code_of(r));
            break;
          }
          case 7: {
            auto r = pool->call_report(req("open_passwd"));
            check(r.ok() && r.response.payload.rfind("denied errno=1", 0) == 0, i, code_of(r));
            break;
          }
          case 8: {
            auto r = pool->call_report(req("exit7"));
            check(code_of(r) == kSandboxExit, i, code_of(r));
            break;
          }
          case 9: {
            auto r = pool->call_report(req("sleep_forever", "", timeout_limits));
            check(code_of(r) == kSandboxTimeout, i, code_of(r));
            break;
          }
          default: {
            auto r = pool->call_report(req("echo", tag));
            check(r.ok() && r.response.payload == tag, i, r.ok() ? r.response.payload : code_of(r));
          }
        }
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0) << (failures.empty() ? "" : failures.front());
  EXPECT_EQ(pool->worker_pids(), first_pids) << "no zygote should have died";
  EXPECT_EQ(pool->workers_started(), kWorkers);
}

TEST_F(WorkerPoolTest, AKilledWorkerIsReplaced) {
  auto pool = make_pool(1);
  ASSERT_TRUE(pool);
  const int first = pool->worker_pids().at(0);
  ASSERT_EQ(::kill(first, SIGKILL), 0);
  // Wait until it is dead (without reaping it: that is the pool's job), so that the call below
  // finds a dead idle worker rather than racing its death.
  siginfo_t info{};
  ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(first), &info, WEXITED | WNOWAIT), 0);
  auto r = pool->call(req("echo", "after"));
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(r->payload, "after");
  EXPECT_NE(r->worker_pid, first);
  EXPECT_EQ(pool->workers_started(), 2);
}

TEST_F(WorkerPoolTest, AWorkerDyingMidCallIsReportedAndReplaced) {
  auto pool = make_pool(1);
  ASSERT_TRUE(pool);
  const int zygote = pool->worker_pids().at(0);
  SandboxLimits l;
  l.wall_seconds = 30;
  std::thread killer([zygote] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    ::kill(zygote, SIGKILL);
  });
  auto r = pool->call_report(req("sleep_forever", "", l));
  killer.join();
  EXPECT_EQ(code_of(r), kWorkerDied);
  EXPECT_NE(r.error->message.find("SIGKILL"), std::string::npos) << r.error->message;
  auto echo = pool->call(req("echo", "x"));
  ASSERT_TRUE(echo) << echo.error().format();
  EXPECT_NE(echo->worker_pid, zygote);
}

TEST_F(WorkerPoolTest, AHungWorkerHitsTheBackstop) {
  auto pool = make_pool(1, /*backstop_slack=*/0.5);
  ASSERT_TRUE(pool);
  const int zygote = pool->worker_pids().at(0);
  ASSERT_EQ(::kill(zygote, SIGSTOP), 0);  // a zygote that never answers
  SandboxLimits l;
  l.wall_seconds = 0.2;
  auto r = pool->call_report(req("echo", "x", l));
  EXPECT_EQ(code_of(r), kWorkerHung);
  auto echo = pool->call(req("echo", "y"));
  ASSERT_TRUE(echo) << echo.error().format();
  EXPECT_NE(echo->worker_pid, zygote);
}

TEST_F(WorkerPoolTest, BadRequestsAreRefusedBeforeReachingAWorker) {
  auto pool = make_pool(1);
  ASSERT_TRUE(pool);
  EXPECT_EQ(code_of(pool->call_report(req("bad name!"))), kWorkerUnknownHandler);
  EXPECT_EQ(code_of(pool->call_report(req(""))), kWorkerUnknownHandler);
  SandboxLimits l;
  l.wall_seconds = -1;
  EXPECT_EQ(code_of(pool->call_report(req("echo", "", l))), kSandboxBadLimits);
  EXPECT_TRUE(pool->call(req("echo", "fine")));
}

TEST_F(WorkerPoolTest, LocatesTheWorkerOrSaysWhereItLooked) {
  auto missing = locate_worker("/nonexistent/nki-agent-worker");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, kWorkerNotFound);
  EXPECT_NE(missing.error().message.find("/nonexistent/nki-agent-worker"), std::string::npos);
  const char* saved = std::getenv("NKIA_WORKER");
  const std::string saved_value = saved ? saved : "";
  ::setenv("NKIA_WORKER", NKIA_WORKER_BIN, 1);
  auto from_env = locate_worker("");
  ::unsetenv("NKIA_WORKER");
  ASSERT_TRUE(from_env) << from_env.error().format();
  EXPECT_EQ(*from_env, NKIA_WORKER_BIN);
  // The test binary lives in tests/, the worker one folder up: the default lookup misses it.
  auto beside = locate_worker("");
  if (!beside) {
    EXPECT_NE(beside.error().message.find("nki-agent-worker"), std::string::npos);
  }
  if (saved) ::setenv("NKIA_WORKER", saved_value.c_str(), 1);
}

TEST_F(WorkerPoolTest, TheShippedWorkerServesEcho) {
  WorkerPoolOptions o;
  o.workers = 1;
  o.worker_path = NKIA_WORKER_BIN;
  auto pool = WorkerPool::create(o);
  ASSERT_TRUE(pool) << pool.error().format();
  auto r = (*pool)->call(req("echo", "shipped"));
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(r->payload, "shipped");
  EXPECT_EQ(code_of((*pool)->call_report(req("segfault"))), kWorkerUnknownHandler);  // not in the product
}

TEST_F(WorkerPoolTest, WarmupFailureThreadsAndHangAreReported) {
  WorkerPoolOptions o;
  o.workers = 2;
  o.worker_path = NKIA_TEST_WORKER;
  // The workers' environment is the allow-list plus what the pool is given deliberately.
  o.environment = {"NKIA_TEST_WORKER_WARMUP=fail"};
  auto failed = WorkerPool::create(o);
  o.environment = {"NKIA_TEST_WORKER_WARMUP=thread"};
  auto threaded = WorkerPool::create(o);
  o.environment = {"NKIA_TEST_WORKER_WARMUP=hang"};
  o.startup_seconds = 0.3;
  auto hung = WorkerPool::create(o);
  // Set in the host only, it reaches no worker: the warm-up runs as usual.
  ::setenv("NKIA_TEST_WORKER_WARMUP", "fail", 1);
  o.environment.clear();
  o.startup_seconds = 30;
  auto host_only = WorkerPool::create(o);
  ::unsetenv("NKIA_TEST_WORKER_WARMUP");
  EXPECT_TRUE(host_only) << host_only.error().format();
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().code, "nkia_test_warmup_failed");
  ASSERT_FALSE(threaded);
  EXPECT_EQ(threaded.error().code, kWorkerStartup);
  EXPECT_NE(threaded.error().message.find("single-threaded"), std::string::npos) << threaded.error().message;
  ASSERT_FALSE(hung);
  EXPECT_EQ(hung.error().code, kWorkerStartup);
}

// ---- the wire protocol ----

Frame frame_of(const std::string& bytes) {
  int sv[2];
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  EXPECT_TRUE(write_frame(sv[0], bytes, std::nullopt));
  auto f = read_frame(sv[1], std::chrono::steady_clock::now() + std::chrono::seconds(5));
  ::close(sv[0]);
  ::close(sv[1]);
  EXPECT_TRUE(f) << f.error().format();
  return f ? std::move(*f) : Frame{};
}

// A frame's header and body (frames own their descriptors, so they do not copy).
Frame copy_of(const Frame& f) {
  Frame c;
  c.header = f.header;
  c.body = f.body;
  return c;
}

TEST(Protocol, RequestsAndResponsesRoundTrip) {
  WorkerRequest r = req("echo", std::string("a\0b", 3));
  r.limits.wall_seconds = 1.5;
  r.limits.seccomp = false;
  uint64_t id = 0;
  auto back = decode_request(frame_of(encode_request(42, r)), &id);
  ASSERT_TRUE(back) << back.error().format();
  EXPECT_EQ(id, 42u);
  EXPECT_EQ(back->handler, "echo");
  EXPECT_EQ(back->payload, r.payload);
  EXPECT_EQ(back->limits.wall_seconds, 1.5);
  EXPECT_FALSE(back->limits.seccomp);

  SandboxReport rep;
  rep.error = Diagnostic::error("err_x", "bad \xff utf-8", "hint");
  rep.output.stdout_capture = {"out", 10, true};
  rep.output.stderr_capture = {"err", 3, false};
  rep.output.wall_seconds = 0.25;
  auto dec = decode_response(frame_of(encode_response(7, rep)), 7);
  ASSERT_TRUE(dec) << dec.error().format();
  ASSERT_TRUE(dec->error);
  EXPECT_EQ(dec->error->code, "err_x");
  EXPECT_EQ(dec->output.stdout_capture.bytes, "out");
  EXPECT_TRUE(dec->output.stdout_capture.truncated);
  EXPECT_EQ(dec->output.stderr_capture.total_bytes, 3);
  EXPECT_EQ(dec->output.wall_seconds, 0.25);
  EXPECT_EQ(decode_response(frame_of(encode_response(7, rep)), 8).error().code, kWorkerBadFrame);
}

// The zygote sends a response as parts (its payload is not copied into one frame): the bytes on the
// wire are encode_response's, however the socket splits the gathering writes. The payload is larger
// than a socket's buffer, so the writer blocks and resumes in the middle of a part.
TEST(Protocol, AResponseSentInPartsIsTheEncodedFrame) {
  SandboxReport rep;
  rep.output.payload.resize(3 << 20);
  for (size_t i = 0; i < rep.output.payload.size(); ++i) rep.output.payload[i] = static_cast<char>(i * 31 + (i >> 12));
  rep.output.stdout_capture = {"out", 3, false};
  rep.output.stderr_capture = {"", 0, false};  // an empty section between two others
  rep.output.cpu_seconds = 0.5;
  const std::string whole = encode_response(9, rep);
  const FrameParts parts = response_parts(9, rep);
  EXPECT_EQ(parts.sections.size(), 3u);
  EXPECT_EQ(parts.sections[0].data(), rep.output.payload.data()) << "the payload is viewed, not copied";
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  std::string got;
  std::thread reader([&] {
    char buf[65536];
    for (ssize_t n; (n = ::read(sv[1], buf, sizeof buf)) > 0;) got.append(buf, static_cast<size_t>(n));
  });
  EXPECT_TRUE(write_frame(sv[0], parts, std::nullopt));
  ::close(sv[0]);
  reader.join();
  ::close(sv[1]);
  ASSERT_EQ(got.size(), whole.size());
  EXPECT_TRUE(got == whole);  // and encode_response's frames decode (RequestsAndResponsesRoundTrip)
}

// A host that asks for it reads a response's body into memory of its own (no string zeroed
// first): the payload is that memory's head, the captures are copied out; a body that came as a
// string is moved into such memory when the payload is wanted there.
TEST(Protocol, APayloadReadIntoMemoryOfItsOwn) {
  for (size_t n : {size_t{5000}, size_t{3} << 20}) {  // heap memory; a pooled mapping
    SandboxReport rep;
    rep.output.payload.resize(n);
    for (size_t i = 0; i < n; ++i) rep.output.payload[i] = static_cast<char>(i * 7 + (i >> 9));
    rep.output.stdout_capture = {"printed", 7, false};
    rep.output.stderr_capture = {"warned", 9, true};
    const std::string whole = encode_response(3, rep);
    auto read_back = [&whole](bool in_memory) {  // written by another thread: it is larger than a socket's buffer
      int sv[2];
      EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
      std::thread writer([&] { EXPECT_TRUE(write_frame(sv[0], whole, std::nullopt)); });
      auto f = read_frame(sv[1], std::chrono::steady_clock::now() + std::chrono::seconds(5), false, in_memory);
      writer.join();
      ::close(sv[0]);
      ::close(sv[1]);
      return f;
    };
    auto f = read_back(/*in_memory=*/true);
    ASSERT_TRUE(f) << f.error().format();
    EXPECT_TRUE(f->body.empty());
    ASSERT_TRUE(f->body_memory);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(f->body_memory->bytes()) % 64, 0u);
    const uint8_t* at = f->body_memory->bytes();
    std::shared_ptr<ReceivedBytes> payload;
    auto dec = decode_response(std::move(*f), 3, &payload);
    ASSERT_TRUE(dec) << dec.error().format();
    ASSERT_TRUE(payload);
    EXPECT_EQ(payload->bytes(), at) << "the frame's memory itself";
    EXPECT_TRUE(payload->view() == rep.output.payload);
    EXPECT_TRUE(dec->output.payload.empty());
    EXPECT_EQ(dec->output.stdout_capture.bytes, "printed");
    EXPECT_EQ(dec->output.stderr_capture.bytes, "warned");
    EXPECT_TRUE(dec->output.stderr_capture.truncated);
    // Read into memory, decoded as a string; read as a string, decoded into memory.
    auto g = read_back(/*in_memory=*/false);
    ASSERT_TRUE(g) << g.error().format();
    EXPECT_FALSE(g->body_memory);
    std::shared_ptr<ReceivedBytes> moved;
    auto from_string = decode_response(std::move(*g), 3, &moved);
    ASSERT_TRUE(from_string && moved);
    EXPECT_TRUE(moved->view() == rep.output.payload);
    auto h = read_back(/*in_memory=*/true);
    ASSERT_TRUE(h) << h.error().format();
    auto as_string = decode_response(std::move(*h), 3);
    ASSERT_TRUE(as_string) << as_string.error().format();
    EXPECT_TRUE(as_string->output.payload == rep.output.payload);
  }
}

TEST(Protocol, PartsToAClosedPeerAreAnIoError) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  ::close(sv[1]);
  SandboxReport rep;
  rep.output.payload = "x";
  auto r = write_frame(sv[0], response_parts(1, rep), std::nullopt);
  ::close(sv[0]);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, kFrameIo);
}

TEST(Protocol, MalformedPrefixesAndHeadersAreRejected) {
  std::string good = encode_request(1, req("echo", "x"));
  std::string bad_magic = good;
  bad_magic[0] = 'X';
  EXPECT_EQ(parse_frame_prefix(std::string_view(bad_magic).substr(0, 16)).error().code, kWorkerBadFrame);
  std::string huge_header = good;
  huge_header[7] = '\x7f';  // header_bytes ~ 2 GiB
  EXPECT_EQ(parse_frame_prefix(std::string_view(huge_header).substr(0, 16)).error().code, kWorkerBadFrame);
  std::string huge_body = good;
  huge_body[15] = '\x01';  // body_bytes ~ 2^56
  EXPECT_EQ(parse_frame_prefix(std::string_view(huge_body).substr(0, 16)).error().code, kWorkerBadFrame);
  std::string zero_header = good;
  zero_header[4] = zero_header[5] = zero_header[6] = zero_header[7] = 0;
  EXPECT_EQ(parse_frame_prefix(std::string_view(zero_header).substr(0, 16)).error().code, kWorkerBadFrame);
  EXPECT_FALSE(parse_frame_header("{not json"));
  EXPECT_FALSE(parse_frame_header("[1,2]"));
  EXPECT_FALSE(parse_frame_header("{\"x\":1}"));
}

TEST(Protocol, MalformedRequestsAreRejectedFieldByField) {
  const Frame good = frame_of(encode_request(3, req("echo", "abc")));
  uint64_t id = 0;
  ASSERT_TRUE(decode_request(copy_of(good), &id));
  auto expect_bad = [](Frame f, std::string_view code = kWorkerBadFrame) {
    uint64_t ignored = 0;
    auto r = decode_request(std::move(f), &ignored);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, code);
  };
  Frame f = copy_of(good);
  f.header["extra"] = 1;
  expect_bad(std::move(f));
  f = copy_of(good);
  f.header.erase("limits");
  expect_bad(std::move(f));
  f = copy_of(good);
  f.header["version"] = 2;
  expect_bad(std::move(f));
  f = copy_of(good);
  f.header["type"] = "response";
  expect_bad(std::move(f));
  f = copy_of(good);
  f.header["payload_bytes"] = 99;
  expect_bad(std::move(f));
  f = copy_of(good);
  f.header["handler"] = "../etc";
  expect_bad(std::move(f));
  f = copy_of(good);
  f.header["id"] = -1;
  expect_bad(std::move(f));
  f = copy_of(good);
  f.header["limits"]["wall_seconds"] = "10";
  expect_bad(std::move(f));
  f = copy_of(good);
  f.header["limits"]["unknown_limit"] = 1;
  expect_bad(std::move(f));
  f = copy_of(good);
  f.header["limits"]["address_space_bytes"] = 1;
  expect_bad(std::move(f), kSandboxBadLimits);
}

TEST(Protocol, ReadFrameSeparatesEofTruncationAndTimeout) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  auto soon = [] { return std::chrono::steady_clock::now() + std::chrono::milliseconds(50); };
  EXPECT_EQ(read_frame(sv[1], soon()).error().code, kFrameTimeout);  // nothing sent
  const std::string frame = encode_request(1, req("echo", "abcdef"));
  ASSERT_TRUE(write_frame(sv[0], std::string_view(frame).substr(0, frame.size() - 2), std::nullopt));
  ::close(sv[0]);
  EXPECT_EQ(read_frame(sv[1], soon()).error().code, kFrameIo);  // closed in the middle of a frame
  ::close(sv[1]);
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  ASSERT_TRUE(write_frame(sv[0], std::string_view(frame).substr(0, 20), std::nullopt));
  EXPECT_EQ(read_frame(sv[1], soon()).error().code, kFrameTimeout);  // incomplete and still open
  ::close(sv[0]);
  ::close(sv[1]);
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  ::close(sv[0]);
  EXPECT_EQ(read_frame(sv[1], soon()).error().code, kFrameEof);
  EXPECT_EQ(write_frame(sv[1], "x", soon()).error().code, kFrameIo);  // no SIGPIPE
  ::close(sv[1]);
}

// A live worker: a well-framed but invalid request gets a Diagnostic and the worker goes on; a
// frame with a wrong magic number ends the conversation (the stream cannot be resynchronised).
TEST_F(WorkerPoolTest, ALiveWorkerRejectsMalformedFrames) {
  auto w = WorkerProcess::spawn(NKIA_TEST_WORKER, 30);
  ASSERT_TRUE(w) << w.error().format();
  const int fd = (*w)->socket_fd();
  auto deadline = [] { return std::chrono::steady_clock::now() + std::chrono::seconds(10); };

  nlohmann::json h{{"type", "request"}, {"version", kProtocolVersion},  {"id", 5},
                   {"handler", "echo"}, {"limits", limits_to_json({})}, {"payload_bytes", 0},
                   {"surprise", true}};
  ASSERT_TRUE(write_frame(fd, encode_frame(h, {}), deadline()));
  auto f = read_frame(fd, deadline());
  ASSERT_TRUE(f) << f.error().format();
  auto rep = decode_response(std::move(*f), 5);
  ASSERT_TRUE(rep) << rep.error().format();
  ASSERT_TRUE(rep->error);
  EXPECT_EQ(rep->error->code, kWorkerBadFrame);

  WorkerReport ok = (*w)->call(6, req("echo", "alive"), deadline());
  ASSERT_TRUE(ok.ok()) << ok.error->format();
  EXPECT_EQ(ok.response.payload, "alive");

  ASSERT_TRUE(write_frame(fd, std::string(32, 'Z'), deadline()));
  auto last = read_frame(fd, deadline());
  ASSERT_TRUE(last) << last.error().format();
  auto bad = decode_response(std::move(*last), 0);
  ASSERT_TRUE(bad && bad->error);
  EXPECT_EQ(bad->error->code, kWorkerBadFrame);
  // It hung up: EOF, or ECONNRESET because it left the rest of the garbage unread.
  const std::string end = read_frame(fd, deadline()).error().code;
  EXPECT_TRUE(end == kFrameEof || end == kFrameIo) << end;
  (*w)->begin_shutdown();
  (*w)->finish_shutdown();
}

}  // namespace
}  // namespace nki_agent
