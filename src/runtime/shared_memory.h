// runtime/shared_memory.h — anonymous memory (a memfd) that crosses into a worker without copies.
//
// The host fills a SharedMemory, seals it and sends its descriptor with a request (protocol.h,
// SCM_RIGHTS). Sealing makes the bytes immutable for everyone: the host's own mapping becomes
// read-only at the same address, and the memfd refuses writes, shrinking and growing, so a buffer
// the host keeps (cached inputs, reused by every verification of a task) cannot be changed by a
// worker, a child or the host itself. The worker adopts the descriptor and closes it before it
// forks: a sandboxed child holds no descriptor that reaches the shared pages, and may write its
// private copy of the bytes. Up to kAdoptCopyMaxBytes the worker reads the bytes into memory of
// its own on transparent huge pages, which a forked child reads without a page fault, and keeps
// that memory for the next request's buffers of the same size (at most 1 GiB idle); larger
// buffers are mapped copy-on-write, so that a worker never holds a second copy of them. A buffer
// its sender will send again (a cached input, mark_reused) comes with a key: the worker keeps its
// copy under that key and answers the next request carrying it with the same memory, read once
// per worker instead of once per request (at most kKeptCopiesMaxBytes, least recently used
// dropped first). Kept copies no request uses are not inherited by a forked child
// (MADV_DONTFORK, rest_kept_copies): a child sees only what its own request carries. (A memfd's
// pages are 4 KiB wherever shared memory gets no huge pages, Debian's default: reading 50 MB
// through such a mapping took 36 ms on a virtual machine, reading it into huge pages 12 ms and the
// reads that follow 2 ms; docs/perf.md.)
//
// This file must never map a received descriptor that is not a sealed memfd, nor leak a mapping
// or a descriptor.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "core/diagnostic.h"
#include "core/owned_fd.h"
#include "tensor/tensor.h"

namespace nki_agent {

inline constexpr std::string_view kSharedMemoryError = "nkia_shared_memory";
// The largest received buffer adopt() copies instead of mapping.
inline constexpr int64_t kAdoptCopyMaxBytes = int64_t{1} << 30;
// The most a worker keeps of copies of buffers marked reused.
inline constexpr int64_t kKeptCopiesMaxBytes = int64_t{1} << 30;

class KeptCopies;

class SharedMemory final : public ExternalMemory {
 public:
  // `nbytes` of zeroed, writable memory (at least one page is mapped). kSharedMemoryError when the
  // system refuses (memfd_create, ftruncate or mmap failing: memory limits).
  static Result<std::shared_ptr<SharedMemory>> create(int64_t nbytes);
  // A received descriptor, owned from now on: it must be a memfd sealed against writes, shrinking
  // and growing, else kSharedMemoryError. Copied (up to kAdoptCopyMaxBytes) or mapped
  // copy-on-write; the descriptor is closed at once. With a `reuse_key` (the sender's
  // reuse_key()), the copy is kept under it, and a copy kept before under the same key (of the
  // same size) is returned without reading the descriptor again.
  static Result<std::shared_ptr<SharedMemory>> adopt(OwnedFd fd, uint64_t reuse_key = 0);
  ~SharedMemory() override;
  SharedMemory(const SharedMemory&) = delete;
  SharedMemory& operator=(const SharedMemory&) = delete;

  uint8_t* bytes() override { return data_; }
  int64_t byte_size() const override { return size_; }
  // Copies `n` bytes to `offset` through the descriptor (pwrite), not through the mapping: the
  // system fills the pages without a page fault for each. Only before seal(), within the size.
  Result<void> write(int64_t offset, const void* data, int64_t n);
  // Ends writing: the mapping turns read-only in place (the same address, the same pages) and the
  // memfd is sealed. Only on memory from create(), once.
  Result<void> seal();
  bool sealed() const { return sealed_; }
  // Whether the bytes may be written through this mapping: memory from create() until sealed, and
  // adopted memory (its copy-on-write pages are this process's own).
  bool writable() const { return adopted_ || !sealed_; }
  // The memfd, to send (-1 for adopted memory, whose descriptor is closed).
  int fd() const { return fd_.get(); }
  // Says that these bytes will be sent again and again (the sender keeps them: cached inputs), so
  // that a worker may keep its copy: gives the memory a reuse_key() no other memory of this
  // process has. Only on memory from create().
  void mark_reused();
  // 0 unless marked reused (or, for adopted memory, unless adopted with a key).
  uint64_t reuse_key() const { return reuse_key_; }

 private:
  friend class KeptCopies;
  SharedMemory() = default;
  static Result<std::shared_ptr<SharedMemory>> adopt_copy(const OwnedFd& fd, int64_t size);
  OwnedFd fd_;
  uint8_t* data_ = nullptr;
  int64_t size_ = 0;      // what the bytes hold
  int64_t mapped_ = 0;    // what is mapped (size_ rounded up to pages, at least one)
  bool sealed_ = false;   // sealed by seal(), or adopted (sealed by its sender)
  bool adopted_ = false;  // from adopt(): a private copy, or mapped copy-on-write
  bool pooled_ = false;   // a private copy, whose memory goes back to adopt()'s pool for reuse
  uint64_t reuse_key_ = 0;
};

// Called by a worker when a request has ended, before the next fork: the kept copies (adopt with a
// key) that no request holds any more are not inherited by forked children (MADV_DONTFORK) until
// a request carries them again.
void rest_kept_copies();
struct KeptCopiesStats {
  int64_t hits = 0;    // adopt() answered with a kept copy
  int64_t misses = 0;  // read and kept
  int64_t bytes = 0;   // kept now
  int64_t entries = 0;
};
KeptCopiesStats kept_copies_stats();
// The kept copies' limit (kKeptCopiesMaxBytes unless changed; tests use small ones): copies beyond
// it are dropped, least recently used first.
void set_kept_copies_limit(int64_t bytes);

// The shared memory that came with one request, in order.
using Attachments = std::vector<std::shared_ptr<SharedMemory>>;

}  // namespace nki_agent
