// Large kernel inputs cross into the worker as sealed shared memory (runtime/shared_memory.h):
// the memory itself, descriptors riding on worker frames, the call's references into it, and a
// kernel run end to end on an input larger than the socket's payload limit.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <vector>

#include "runtime/kernel_call.h"
#include "runtime/protocol.h"
#include "runtime/shared_memory.h"
#include "support/shared_service.h"

namespace nki_agent {
namespace {

std::shared_ptr<SharedMemory> filled(int64_t n, uint8_t first) {
  auto m = SharedMemory::create(n);
  EXPECT_TRUE(m) << m.error().format();
  for (int64_t i = 0; i < n; ++i) (*m)->bytes()[i] = static_cast<uint8_t>(first + i);
  return *m;
}

// A sealed buffer's descriptor as another process receives it (dup: the sender keeps its own).
Result<std::shared_ptr<SharedMemory>> received(const SharedMemory& m) {
  return SharedMemory::adopt(OwnedFd(::fcntl(m.fd(), F_DUPFD_CLOEXEC, 0)));
}

TEST(SharedMemory, WritesThroughTheDescriptorLandInTheMapping) {
  auto m = SharedMemory::create(10000);
  ASSERT_TRUE(m) << m.error().format();
  std::vector<uint8_t> src(5000);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 7);
  ASSERT_TRUE((*m)->write(4000, src.data(), static_cast<int64_t>(src.size())));
  EXPECT_EQ(std::memcmp((*m)->bytes() + 4000, src.data(), src.size()), 0);
  EXPECT_EQ((*m)->bytes()[3999], 0);
  EXPECT_FALSE((*m)->write(6000, src.data(), static_cast<int64_t>(src.size()))) << "past the end";
  EXPECT_FALSE((*m)->write(-1, src.data(), 1));
  ASSERT_TRUE((*m)->seal());
  EXPECT_FALSE((*m)->write(0, src.data(), 1)) << "sealed memory takes no writes";
  EXPECT_EQ(std::memcmp((*m)->bytes() + 4000, src.data(), src.size()), 0);
}

TEST(SharedMemory, SealingFreezesTheBytesInPlace) {
  auto m = filled(10000, 7);
  uint8_t* before = m->bytes();
  ASSERT_TRUE(m->seal());
  EXPECT_TRUE(m->sealed());
  EXPECT_FALSE(m->writable());
  EXPECT_EQ(m->bytes(), before);  // the same address: views made before sealing stay valid
  EXPECT_EQ(m->bytes()[9999], static_cast<uint8_t>(7 + 9999));
  const int seals = ::fcntl(m->fd(), F_GET_SEALS);
  EXPECT_EQ(seals & (F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL),
            F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
  // Nobody can write the memfd any more: not through the descriptor, not by a shared mapping.
  EXPECT_LT(::pwrite(m->fd(), "x", 1, 0), 0);
  EXPECT_EQ(::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd(), 0), MAP_FAILED);
  EXPECT_NE(::ftruncate(m->fd(), 1), 0);
  EXPECT_FALSE(m->seal());  // once
}

TEST(SharedMemory, WritingASealedBufferFaults) {
  auto m = filled(4096, 0);
  ASSERT_TRUE(m->seal());
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    m->bytes()[0] = 1;  // must fault
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  // A fault kills the child (SIGSEGV), or, under AddressSanitizer, its handler reports and exits.
  const bool faulted = WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) != 0);
  EXPECT_TRUE(faulted) << "a write into sealed shared memory went through";
}

TEST(SharedMemory, AdoptedMemoryIsACopyOnWriteView) {
  auto m = filled(5000, 3);
  ASSERT_TRUE(m->seal());
  auto r = received(*m);
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ((*r)->byte_size(), 5000);
  EXPECT_EQ((*r)->fd(), -1);  // closed once mapped
  EXPECT_TRUE((*r)->writable());
  EXPECT_EQ(std::memcmp((*r)->bytes(), m->bytes(), 5000), 0);
  (*r)->bytes()[0] = 99;  // its own page now
  EXPECT_EQ(m->bytes()[0], 3);
  auto again = received(*m);
  ASSERT_TRUE(again);
  EXPECT_EQ((*again)->bytes()[0], 3);
}

// Up to kAdoptCopyMaxBytes a received buffer is read into the worker's own memory, beyond it mapped:
// either way the bytes are the sender's and writes stay private.
TEST(SharedMemory, AdoptedBuffersAboveTheCopyLimitAreMapped) {
  for (const int64_t n : {int64_t{5} << 20, kAdoptCopyMaxBytes + 4096}) {
    auto m = SharedMemory::create(n);  // sparse: only the pages written below take memory
    ASSERT_TRUE(m) << m.error().format();
    const uint8_t head = 17, tail = 42;
    ASSERT_TRUE((*m)->write(0, &head, 1));
    ASSERT_TRUE((*m)->write(n - 1, &tail, 1));
    ASSERT_TRUE((*m)->seal());
    auto r = received(**m);
    ASSERT_TRUE(r) << r.error().format();
    EXPECT_EQ((*r)->byte_size(), n);
    EXPECT_EQ((*r)->bytes()[0], head);
    EXPECT_EQ((*r)->bytes()[n / 2], 0);
    EXPECT_EQ((*r)->bytes()[n - 1], tail);
    (*r)->bytes()[n - 1] = 1;
    EXPECT_EQ((*m)->bytes()[n - 1], tail) << n;
  }
}

// Whether a forked child finds `check()` true (it runs in the child, which exits with the answer).
bool true_in_forked_child(const std::function<bool()>& check) {
  const pid_t pid = ::fork();
  if (pid < 0) return false;
  if (pid == 0) ::_exit(check() ? 0 : 1);
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// A copied buffer's memory is reused by the next received buffer of the same size, which holds its
// own bytes: nothing of the earlier buffer shows through.
TEST(SharedMemory, CopiedBuffersReuseTheirMemory) {
  const int64_t n = (int64_t{6} << 20) + 123;
  auto first = filled(n + 500, 1);  // longer, on as many huge pages
  ASSERT_TRUE(first->seal());
  const uint8_t* at = nullptr;
  {
    auto r = received(*first);
    ASSERT_TRUE(r) << r.error().format();
    at = (*r)->bytes();
    (*r)->bytes()[n - 1] = 200;  // a private write: it must not reach the next buffer
  }
  auto second = filled(n, 9);
  ASSERT_TRUE(second->seal());
  auto r = received(*second);
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ((*r)->bytes(), at) << "the same memory, taken from the pool";
  EXPECT_EQ(std::memcmp((*r)->bytes(), second->bytes(), static_cast<size_t>(n)), 0);
  // Past its bytes, nothing of the longer buffer before it (the mapping runs to the huge page's end).
  EXPECT_EQ(std::count((*r)->bytes() + n, (*r)->bytes() + n + 500, 0), 500);
  // Idle memory is not inherited by forked children; memory in use again is.
  EXPECT_TRUE(true_in_forked_child([&] {
    return std::memcmp((*r)->bytes(), second->bytes(), static_cast<size_t>(n)) == 0;
  })) << "a child could not read a reused buffer";
  auto other = filled(n - 4096 * 600, 5);  // another size: memory of its own
  ASSERT_TRUE(other->seal());
  auto o = received(*other);
  ASSERT_TRUE(o) << o.error().format();
  EXPECT_NE((*o)->bytes(), at);
  EXPECT_EQ(std::memcmp((*o)->bytes(), other->bytes(), static_cast<size_t>(n - 4096 * 600)), 0);
}

// Whether [p, p + n) is mapped in this process (madvise fails with ENOMEM on unmapped memory).
bool mapped(const void* p, size_t n) {
  return ::madvise(const_cast<void*>(p), n, MADV_NORMAL) == 0;
}

Result<std::shared_ptr<SharedMemory>> received_as(const SharedMemory& m, uint64_t key) {
  return SharedMemory::adopt(OwnedFd(::fcntl(m.fd(), F_DUPFD_CLOEXEC, 0)), key);
}

// A buffer marked reused is read by a worker once: the next request with its key gets the same
// memory without a read; while no request holds it, a forked child does not inherit it.
TEST(SharedMemory, CopiesOfReusedBuffersAreKeptAndReadOnce) {
  const int64_t n = (int64_t{3} << 20) + 77;
  auto first = filled(n, 3);
  first->mark_reused();
  ASSERT_NE(first->reuse_key(), 0u);
  ASSERT_TRUE(first->seal());
  auto other = filled(n, 50);  // the same size, other bytes, not marked
  EXPECT_EQ(other->reuse_key(), 0u);
  ASSERT_TRUE(other->seal());
  const KeptCopiesStats before = kept_copies_stats();
  const uint8_t* at = nullptr;
  {
    auto r = received_as(*first, first->reuse_key());
    ASSERT_TRUE(r) << r.error().format();
    EXPECT_EQ((*r)->reuse_key(), first->reuse_key());
    EXPECT_EQ(std::memcmp((*r)->bytes(), first->bytes(), static_cast<size_t>(n)), 0);
    at = (*r)->bytes();
  }
  EXPECT_EQ(kept_copies_stats().misses, before.misses + 1);
  rest_kept_copies();
  // At rest: not in a forked child, still here.
  EXPECT_TRUE(true_in_forked_child([&] { return !mapped(at, 4096); })) << "a forked child inherited a copy at rest";
  EXPECT_TRUE(mapped(at, 4096));
  {
    // Under the first buffer's key, another descriptor of the same size is not read at all: the
    // kept copy answers (a sender never reuses a key; this shows that nothing was read).
    auto r = received_as(*other, first->reuse_key());
    ASSERT_TRUE(r) << r.error().format();
    EXPECT_EQ((*r)->bytes(), at);
    EXPECT_EQ(std::memcmp((*r)->bytes(), first->bytes(), static_cast<size_t>(n)), 0);
    EXPECT_EQ(kept_copies_stats().hits, before.hits + 1);
    // In use again: a forked child reads it.
    EXPECT_TRUE(true_in_forked_child([&] {
      return std::memcmp((*r)->bytes(), first->bytes(), static_cast<size_t>(n)) == 0;
    })) << "a child could not read a kept copy in use";
  }
  {  // without a key, or with another one, a copy of its own
    auto r = received(*other);
    ASSERT_TRUE(r) << r.error().format();
    EXPECT_NE((*r)->bytes(), at);
    EXPECT_EQ(std::memcmp((*r)->bytes(), other->bytes(), static_cast<size_t>(n)), 0);
  }
  {  // a key kept for another size is not answered with the wrong bytes
    auto shorter = filled(n - 5000, 9);
    ASSERT_TRUE(shorter->seal());
    auto r = received_as(*shorter, first->reuse_key());
    ASSERT_TRUE(r) << r.error().format();
    EXPECT_EQ(std::memcmp((*r)->bytes(), shorter->bytes(), static_cast<size_t>(n - 5000)), 0);
  }
  rest_kept_copies();
}

// Beyond the limit, the least recently used copies no request holds are dropped.
TEST(SharedMemory, KeptCopiesStayWithinTheirLimit) {
  const int64_t n = int64_t{2} << 20;
  std::vector<std::shared_ptr<SharedMemory>> sent;
  for (int i = 0; i < 4; ++i) {
    sent.push_back(filled(n, static_cast<uint8_t>(i)));
    sent.back()->mark_reused();
    ASSERT_TRUE(sent.back()->seal());
  }
  set_kept_copies_limit(2 * n);
  const int64_t misses = kept_copies_stats().misses;
  auto adopt_all = [&](std::initializer_list<int> which) {
    for (int i : which) {
      auto r = received_as(*sent[static_cast<size_t>(i)], sent[static_cast<size_t>(i)]->reuse_key());
      ASSERT_TRUE(r) << r.error().format();
      EXPECT_EQ((*r)->bytes()[1], static_cast<uint8_t>(i + 1));
    }
    rest_kept_copies();
  };
  adopt_all({0, 1, 2});  // 0 is dropped when 2 arrives
  EXPECT_LE(kept_copies_stats().bytes, 2 * n);
  EXPECT_EQ(kept_copies_stats().misses, misses + 3);
  adopt_all({1, 2});  // kept
  EXPECT_EQ(kept_copies_stats().misses, misses + 3);
  adopt_all({0});  // read again
  EXPECT_EQ(kept_copies_stats().misses, misses + 4);
  set_kept_copies_limit(0);
  EXPECT_EQ(kept_copies_stats().entries, 0);
  set_kept_copies_limit(kKeptCopiesMaxBytes);
}

TEST(SharedMemory, AdoptRefusesWhatIsNotASealedMemfd) {
  auto unsealed = filled(100, 0);
  auto r = SharedMemory::adopt(OwnedFd(::fcntl(unsealed->fd(), F_DUPFD_CLOEXEC, 0)));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, kSharedMemoryError);
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  ::close(p[1]);
  EXPECT_FALSE(SharedMemory::adopt(OwnedFd(p[0])));
  EXPECT_FALSE(SharedMemory::adopt(OwnedFd(::open("/proc/self/exe", O_RDONLY | O_CLOEXEC))));
}

// ---- descriptors on worker frames ----

struct SocketPair {
  OwnedFd a, b;
  SocketPair() {
    int sv[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    a.reset(sv[0]);
    b.reset(sv[1]);
  }
};

Deadline soon() {
  return std::chrono::steady_clock::now() + std::chrono::seconds(5);
}

WorkerRequest request_with(Attachments a) {
  WorkerRequest r;
  r.handler = "echo";
  r.payload = "payload";
  r.attachments = std::move(a);
  return r;
}

TEST(SharedFrames, AttachmentsRideOnARequest) {
  auto m1 = filled(3000, 1), m2 = filled(70000, 2);
  ASSERT_TRUE(m1->seal());
  ASSERT_TRUE(m2->seal());
  const WorkerRequest sent = request_with({m1, m2});
  SocketPair s;
  ASSERT_TRUE(write_frame(s.a.get(), encode_request(9, sent), soon(), request_fds(sent)));
  auto f = read_frame(s.b.get(), soon(), /*take_fds=*/true);
  ASSERT_TRUE(f) << f.error().format();
  EXPECT_EQ(f->fds.size(), 2u);
  uint64_t id = 0;
  auto got = decode_request(std::move(*f), &id);
  ASSERT_TRUE(got) << got.error().format();
  EXPECT_EQ(id, 9u);
  ASSERT_EQ(got->attachments.size(), 2u);
  EXPECT_EQ(got->attachments[1]->byte_size(), 70000);
  EXPECT_EQ(std::memcmp(got->attachments[1]->bytes(), m2->bytes(), 70000), 0);
  EXPECT_EQ(got->attachments[0]->reuse_key(), 0u);
  EXPECT_EQ(got->attachments[1]->reuse_key(), 0u);
}

// A buffer marked reused travels with its key; a worker keeps its copy under it.
TEST(SharedFrames, ReuseKeysRideWithTheirAttachments) {
  auto m1 = filled(3000, 1), m2 = filled(70000, 2);
  m2->mark_reused();
  ASSERT_TRUE(m1->seal());
  ASSERT_TRUE(m2->seal());
  const WorkerRequest sent = request_with({m1, m2});
  const std::string frame = encode_request(4, sent);
  EXPECT_NE(frame.find("\"attachment_keys\""), std::string::npos);
  for (int round = 0; round < 2; ++round) {
    SocketPair s;
    ASSERT_TRUE(write_frame(s.a.get(), frame, soon(), request_fds(sent)));
    auto f = read_frame(s.b.get(), soon(), /*take_fds=*/true);
    ASSERT_TRUE(f) << f.error().format();
    uint64_t id = 0;
    auto got = decode_request(std::move(*f), &id);
    ASSERT_TRUE(got) << got.error().format();
    ASSERT_EQ(got->attachments.size(), 2u);
    EXPECT_EQ(got->attachments[0]->reuse_key(), 0u);
    EXPECT_EQ(got->attachments[1]->reuse_key(), m2->reuse_key());
    EXPECT_EQ(std::memcmp(got->attachments[1]->bytes(), m2->bytes(), 70000), 0);
  }
  rest_kept_copies();
  // Keys that do not match the attachments are a bad frame.
  for (const char* keys : {"[1]", "[1, -2]", "[1, \"2\"]", "7"}) {
    SocketPair s;
    auto bad = nlohmann::json::parse(frame.substr(kFramePrefixBytes, frame.size() - kFramePrefixBytes - 7));
    bad["attachment_keys"] = nlohmann::json::parse(keys);
    ASSERT_TRUE(write_frame(s.a.get(), encode_frame(bad, {"payload"}), soon(), request_fds(sent)));
    auto f = read_frame(s.b.get(), soon(), true);
    ASSERT_TRUE(f);
    uint64_t id = 0;
    auto r = decode_request(std::move(*f), &id);
    ASSERT_FALSE(r) << keys;
    EXPECT_EQ(r.error().code, kWorkerBadFrame) << keys;
  }
}

TEST(SharedFrames, DescriptorsMustMatchTheHeader) {
  auto m = filled(100, 0);
  ASSERT_TRUE(m->seal());
  uint64_t id = 0;
  {  // descriptors the header does not announce
    SocketPair s;
    ASSERT_TRUE(write_frame(s.a.get(), encode_request(1, request_with({})), soon(), {m->fd()}));
    auto f = read_frame(s.b.get(), soon(), true);
    ASSERT_TRUE(f);
    auto r = decode_request(std::move(*f), &id);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, kWorkerBadFrame);
  }
  {  // announced, not sent
    SocketPair s;
    ASSERT_TRUE(write_frame(s.a.get(), encode_request(1, request_with({m})), soon()));
    auto f = read_frame(s.b.get(), soon(), true);
    ASSERT_TRUE(f);
    auto r = decode_request(std::move(*f), &id);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, kWorkerBadFrame);
  }
  {  // an unsealed memfd is refused
    auto open_memory = filled(100, 0);
    SocketPair s;
    // One attachment announced, and an unsealed descriptor sent in its place.
    WorkerRequest announced = request_with({m});
    ASSERT_TRUE(write_frame(s.a.get(), encode_request(1, announced), soon(), {open_memory->fd()}));
    auto f = read_frame(s.b.get(), soon(), true);
    ASSERT_TRUE(f);
    auto r = decode_request(std::move(*f), &id);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, kSharedMemoryError);
  }
  {  // a reader that takes none lets the system close them
    SocketPair s;
    ASSERT_TRUE(write_frame(s.a.get(), encode_request(1, request_with({m})), soon(), {m->fd()}));
    auto f = read_frame(s.b.get(), soon());
    ASSERT_TRUE(f);
    EXPECT_TRUE(f->fds.empty());
  }
  // The host refuses to send what is not sealed.
  auto open_memory = filled(10, 0);
  EXPECT_THROW((void)request_fds(request_with({open_memory})), InternalError);
}

// ---- a call's inputs in shared memory ----

Tensor counting(const Shape& shape) {
  Tensor t = Tensor::empty(shape, DType::kFloat32);
  auto* p = t.data_as<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<float>(i % 1000003);
  return t;
}

TEST(SharedCalls, LargeInputsTravelAsReferences) {
  KernelCall c;
  c.entry = "kernel";
  c.inputs = {counting({600, 512}), counting({3, 4}), counting({1000, 300})};
  auto shared = share_large_inputs(c);
  ASSERT_TRUE(shared) << shared.error().format();
  ASSERT_EQ(shared->size(), 1u);  // the two large ones, in one buffer
  EXPECT_TRUE((*shared)[0]->sealed());
  EXPECT_EQ(c.inputs[0].storage()->external(), c.inputs[2].storage()->external());
  EXPECT_FALSE(c.inputs[1].storage()->external());
  const std::string wire = encode_call(c, *shared);
  EXPECT_LT(wire.size(), size_t{64} << 10);  // the large data is not in the bytes
  // Sharing again adds nothing: they live there already.
  auto again = share_large_inputs(c);
  ASSERT_TRUE(again);
  ASSERT_EQ(again->size(), 1u);
  EXPECT_EQ((*again)[0], (*shared)[0]);

  Attachments there;
  for (const auto& m : *shared) {
    auto r = received(*m);
    ASSERT_TRUE(r);
    there.push_back(*r);
  }
  auto back = decode_call(wire, there);
  ASSERT_TRUE(back) << back.error().format();
  ASSERT_EQ(back->inputs.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(back->inputs[i].shape(), c.inputs[i].shape());
    EXPECT_EQ(back->inputs[i].to_f32_vector(), c.inputs[i].to_f32_vector()) << i;
  }
  EXPECT_EQ(back->inputs[2].storage()->external(), there[0]);
  // Without the buffers the references cannot resolve.
  auto lost = decode_call(wire);
  ASSERT_FALSE(lost);
  EXPECT_EQ(lost.error().code, "nkia_worker_protocol");
}

TEST(SharedCalls, ReferencesOutsideTheirBufferAreRefused) {
  KernelCall c;
  c.entry = "kernel";
  c.inputs = {counting({1024, 1024})};
  auto shared = share_large_inputs(c);
  ASSERT_TRUE(shared);
  const std::string wire = encode_call(c, *shared);
  // The header is JSON after an 8-byte length: rewrite one field at a time.
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= static_cast<uint64_t>(static_cast<uint8_t>(wire[i])) << (8 * i);
  const nlohmann::json header = nlohmann::json::parse(wire.substr(8, n));
  auto with = [&](const char* key, const nlohmann::json& v) {
    nlohmann::json h = header;
    h["inputs"][0][key] = v;
    std::string text = h.dump(), out;
    for (int i = 0; i < 8; ++i) out += static_cast<char>((text.size() >> (8 * i)) & 0xff);
    return out + text + wire.substr(8 + n);
  };
  Attachments there{*received(*(*shared)[0])};
  ASSERT_TRUE(decode_call(with("offset", 0), there));
  for (auto [key, value] :
       std::vector<std::pair<const char*, nlohmann::json>>{{"attachment", 1},
                                                           {"base", 64},  // past the end once the size is added
                                                           {"base", 3},   // misaligned
                                                           {"bytes", uint64_t{1} << 40},
                                                           {"offset", 1},  // the shape no longer fits
                                                           {"shape", {1024, 1025}},
                                                           {"shape", {-1, 4}},
                                                           {"dtype", "float99"}}) {
    auto r = decode_call(with(key, value), there);
    ASSERT_FALSE(r) << key << " = " << value.dump();
    EXPECT_EQ(r.error().code, "nkia_worker_protocol") << key;
  }
}

// ---- end to end ----

class SharedInputsRun : public testing::SharedServiceTest {};

constexpr const char* kCornerKernel = R"(import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(big):
    n = big.shape[0]
    first = nl.ndarray((128, 4), dtype=big.dtype, buffer=nl.shared_hbm)
    last = nl.ndarray((128, 4), dtype=big.dtype, buffer=nl.shared_hbm)
    nl.store(first, value=nl.load(big[0:128, 0:4]))
    nl.store(last, value=nl.load(big[n - 128:n, 508:512]))
    return first, last
)";

constexpr const char* kOverwriteKernel = R"(import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.typing as nt


@nki.jit
def kernel(x: nt.mutable_tensor):
    seen = nl.ndarray((128, 4), dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(seen, value=nl.load(x[0:128, 0:4]))
    nl.store(x[0:128, 0:4], value=nl.zeros((128, 4), dtype=x.dtype))
    return seen, x
)";

SandboxLimits large_limits() {
  return SandboxLimits::for_kernel(60, 8192, true);
}

TEST_F(SharedInputsRun, AnInputLargerThanTheSocketLimitArrivesWhole) {
  const int64_t rows = (kMaxRequestPayloadBytes / (512 * 4)) + 4096;  // ~264 MiB of float32
  KernelCall c;
  c.src = kernel_files_from_source(kCornerKernel);
  c.entry = "kernel";
  c.kernel_only = true;
  c.collect_trace = false;
  c.inputs = {counting({rows, 512})};
  ASSERT_GT(c.inputs[0].nbytes(), kMaxRequestPayloadBytes);
  auto r = service_->run(c, large_limits());
  ASSERT_TRUE(r) << r.error().format();
  ASSERT_EQ(r->outputs.size(), 2u);
  const Tensor expect_first = c.inputs[0].slice(0, 0, 128).slice(1, 0, 4).contiguous();
  const Tensor expect_last = c.inputs[0].slice(0, rows - 128, rows).slice(1, 508, 512).contiguous();
  EXPECT_EQ(r->outputs[0].to_f32_vector(), expect_first.to_f32_vector());
  EXPECT_EQ(r->outputs[1].to_f32_vector(), expect_last.to_f32_vector());
}

TEST_F(SharedInputsRun, AKernelsWritesToAnInputStayInItsRun) {
  KernelCall c;
  c.src = kernel_files_from_source(kOverwriteKernel);
  c.entry = "kernel";
  c.kernel_only = true;
  c.collect_trace = false;
  c.inputs = {counting({1024, 512})};
  auto shared = share_large_inputs(c);  // held across runs, as cached inputs are
  ASSERT_TRUE(shared);
  ASSERT_EQ(shared->size(), 1u);
  const std::vector<float> original = c.inputs[0].slice(0, 0, 128).slice(1, 0, 4).contiguous().to_f32_vector();
  for (int round = 0; round < 2; ++round) {
    auto r = service_->run(c, large_limits());
    ASSERT_TRUE(r) << r.error().format();
    ASSERT_EQ(r->outputs.size(), 2u);
    EXPECT_EQ(r->outputs[0].to_f32_vector(), original) << "round " << round << " saw an earlier run's write";
    EXPECT_EQ(r->outputs[1].slice(0, 0, 128).slice(1, 0, 4).contiguous().to_f32_vector(),
              std::vector<float>(128 * 4, 0.0f));
  }
  EXPECT_EQ(c.inputs[0].slice(0, 0, 128).slice(1, 0, 4).contiguous().to_f32_vector(), original);
}

}  // namespace
}  // namespace nki_agent
