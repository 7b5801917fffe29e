#include "runtime/shared_memory.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <list>
#include <mutex>
#include <new>

#include "core/huge_pages.h"
#include "core/mapping_pool.h"

namespace nki_agent {
namespace {

constexpr int kRequiredSeals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE;

Diagnostic shm_error(const std::string& what) {
  return Diagnostic::error(std::string(kSharedMemoryError), what,
                           "the machine may be short of memory, or a memory limit is too low for the inputs");
}

int64_t page_rounded(int64_t n) {
  const int64_t page = ::sysconf(_SC_PAGESIZE);
  return (std::max<int64_t>(n, 1) + page - 1) / page * page;
}

}  // namespace

// The copies a worker keeps of buffers marked reused (adopt with a key), the most recently used
// last. Never destroyed (storages may outlive static destruction); a forked child forgets them.
class KeptCopies {
 public:
  static KeptCopies& get() {
    static auto* k = new KeptCopies();
    return *k;
  }

  // The copy kept under `key`, if it has `size` bytes (else it is dropped: the key was reused for
  // something else, which a sender never does).
  std::shared_ptr<SharedMemory> find(uint64_t key, int64_t size) {
    std::lock_guard lock(mu_);
    for (auto it = kept_.begin(); it != kept_.end(); ++it) {
      if (it->mem->reuse_key_ != key) continue;
      if (it->mem->byte_size() != size) {
        drop(it);
        return nullptr;
      }
      kept_.splice(kept_.end(), kept_, it);
      if (!inherit(*it, true)) {  // it must reach the child: drop it, read the bytes again
        drop(it);
        return nullptr;
      }
      ++stats_.hits;
      return it->mem;
    }
    return nullptr;
  }

  // Keeps `m` under its reuse key.
  void keep(const std::shared_ptr<SharedMemory>& m) {
    std::lock_guard lock(mu_);
    if (m->mapped_ > limit_) return;
    kept_.push_back(Kept{m, true});
    stats_.bytes += m->mapped_;
    ++stats_.misses;
    trim();
  }

  void rest() {
    std::lock_guard lock(mu_);
    for (Kept& k : kept_)
      if (k.inherited && k.mem.use_count() == 1) (void)inherit(k, false);
    trim();
  }

  KeptCopiesStats stats() {
    std::lock_guard lock(mu_);
    KeptCopiesStats s = stats_;
    s.entries = static_cast<int64_t>(kept_.size());
    return s;
  }

  void set_limit(int64_t bytes) {
    std::lock_guard lock(mu_);
    limit_ = bytes;
    trim();
  }

 private:
  struct Kept {
    std::shared_ptr<SharedMemory> mem;  // under mem->reuse_key_
    bool inherited = true;              // not MADV_DONTFORK
  };

  KeptCopies() {
    ::pthread_atfork(nullptr, nullptr, [] { get().forget_after_fork(); });
  }

  static bool inherit(Kept& k, bool inherited) {
    if (k.inherited == inherited) return true;
    if (::madvise(k.mem->data_, static_cast<size_t>(k.mem->mapped_), inherited ? MADV_DOFORK : MADV_DONTFORK) != 0)
      return false;
    k.inherited = inherited;
    return true;
  }

  void drop(std::list<Kept>::iterator it) {
    stats_.bytes -= it->mem->mapped_;
    (void)inherit(*it, true);  // its memory goes back to the pool inheritable, as the pool expects
    kept_.erase(it);
  }

  // The least recently used copies beyond the limit that no request holds.
  void trim() {
    for (auto it = kept_.begin(); it != kept_.end() && stats_.bytes > limit_;) {
      auto next = std::next(it);
      if (it->mem.use_count() == 1) drop(it);
      it = next;
    }
  }

  // In a forked child, which keeps nothing: another thread of the parent may have held the lock,
  // and the copies at rest were not inherited — they are forgotten, never freed. The copies its
  // request carries are its own copy-on-write views: they are freed with the request's last
  // reference, into this process's pool, where its next tensors of their size find them.
  void forget_after_fork() {
    new (&mu_) std::mutex();
    for (Kept& k : kept_) {
      if (k.inherited)
        k.mem.reset();
      else
        new (&k.mem) std::shared_ptr<SharedMemory>();  // abandons the reference
    }
    new (&kept_) std::list<Kept>();  // abandons the nodes
    stats_ = {};
  }

  std::mutex mu_;
  std::list<Kept> kept_;
  KeptCopiesStats stats_;
  int64_t limit_ = kKeptCopiesMaxBytes;
};

void rest_kept_copies() {
  KeptCopies::get().rest();
}

KeptCopiesStats kept_copies_stats() {
  return KeptCopies::get().stats();
}

void set_kept_copies_limit(int64_t bytes) {
  KeptCopies::get().set_limit(bytes);
}

void SharedMemory::mark_reused() {
  static std::atomic<uint64_t> next{1};
  if (reuse_key_ == 0 && !adopted_) reuse_key_ = next.fetch_add(1, std::memory_order_relaxed);
}

Result<std::shared_ptr<SharedMemory>> SharedMemory::create(int64_t nbytes) {
  if (nbytes < 0) return fail(shm_error("negative shared memory size"));
  OwnedFd fd(::memfd_create("nki-agent-shared", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!fd.valid()) return fail(shm_error(fmt::format("memfd_create: {}", std::strerror(errno))));
  if (::ftruncate(fd.get(), std::max<int64_t>(nbytes, 1)) != 0)
    return fail(shm_error(fmt::format("sizing {} bytes of shared memory: {}", nbytes, std::strerror(errno))));
  const int64_t mapped = page_rounded(nbytes);
  void* p = ::mmap(nullptr, static_cast<size_t>(mapped), PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  if (p == MAP_FAILED)
    return fail(shm_error(fmt::format("mapping {} bytes of shared memory: {}", nbytes, std::strerror(errno))));
  std::shared_ptr<SharedMemory> m(new SharedMemory());
  m->fd_ = std::move(fd);
  m->data_ = static_cast<uint8_t*>(p);
  m->size_ = nbytes;
  m->mapped_ = mapped;
  return m;
}

Result<std::shared_ptr<SharedMemory>> SharedMemory::adopt(OwnedFd fd, uint64_t reuse_key) {
  const int seals = ::fcntl(fd.get(), F_GET_SEALS);
  if (seals < 0 || (seals & kRequiredSeals) != kRequiredSeals)
    return fail(shm_error("a received descriptor is not a sealed memfd"));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || st.st_size <= 0)
    return fail(shm_error("a received shared memory buffer has no size"));
  if (st.st_size <= kAdoptCopyMaxBytes) {
    if (reuse_key == 0) return adopt_copy(fd, st.st_size);
    if (auto kept = KeptCopies::get().find(reuse_key, st.st_size)) return kept;
    auto m = adopt_copy(fd, st.st_size);
    if (!m) return m;
    (*m)->reuse_key_ = reuse_key;
    KeptCopies::get().keep(*m);
    return m;
  }
  const int64_t mapped = page_rounded(st.st_size);
  void* p = ::mmap(nullptr, static_cast<size_t>(mapped), PROT_READ | PROT_WRITE, MAP_PRIVATE, fd.get(), 0);
  if (p == MAP_FAILED)
    return fail(shm_error(fmt::format("mapping {} received bytes: {}", st.st_size, std::strerror(errno))));
  std::shared_ptr<SharedMemory> m(new SharedMemory());
  m->data_ = static_cast<uint8_t*>(p);
  m->size_ = st.st_size;
  m->mapped_ = mapped;
  m->sealed_ = true;
  m->adopted_ = true;
  return m;  // `fd` closes here: the mapping stays
}

Result<std::shared_ptr<SharedMemory>> SharedMemory::adopt_copy(const OwnedFd& fd, int64_t size) {
  // A whole number of huge pages: the kernel then places the mapping on a 2 MiB boundary, and
  // every block of it can be a huge page (core/huge_pages.h).
  const int64_t mapped = size >= static_cast<int64_t>(kHugeBufferMinBytes)
                             ? static_cast<int64_t>(huge_page_rounded(static_cast<size_t>(size)))
                             : page_rounded(size);
  // The memory of an earlier request's buffer of this size when there is one (core/mapping_pool.h):
  // a verification sends the same shapes seed after seed.
  const PooledMapping room = take_mapping(static_cast<size_t>(mapped));
  if (room.data == nullptr)
    return fail(shm_error(fmt::format("room for {} received bytes: {}", size, std::strerror(errno))));
  void* p = room.data;
  // The bytes are overwritten below; what lies past them is zeroed, as fresh memory would be, so
  // that nothing of an earlier request's buffer reaches this one's child.
  if (room.reused) std::memset(static_cast<uint8_t*>(p) + size, 0, static_cast<size_t>(mapped - size));
  std::shared_ptr<SharedMemory> m(new SharedMemory());  // returns p to the pool if the copy fails
  m->data_ = static_cast<uint8_t*>(p);
  m->size_ = size;
  m->mapped_ = mapped;
  m->sealed_ = true;
  m->adopted_ = true;
  m->pooled_ = true;
  for (int64_t done = 0; done < size;) {
    const ssize_t r = ::pread(fd.get(), m->data_ + done, static_cast<size_t>(size - done), done);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0)
      return fail(shm_error(fmt::format("reading {} received bytes: {}", size,
                                        r == 0 ? "the buffer ended early" : std::strerror(errno))));
    done += r;
  }
  return m;
}

SharedMemory::~SharedMemory() {
  if (data_ && pooled_)
    give_mapping(data_, static_cast<size_t>(mapped_));
  else if (data_)
    ::munmap(data_, static_cast<size_t>(mapped_));
}

Result<void> SharedMemory::write(int64_t offset, const void* data, int64_t n) {
  if (sealed_ || !fd_.valid() || offset < 0 || n < 0 || offset > size_ || n > size_ - offset)
    return fail(shm_error("a write outside writable shared memory"));
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::pwrite(fd_.get(), p, static_cast<size_t>(n), offset);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return fail(shm_error(fmt::format("writing shared memory: {}", std::strerror(errno))));
    p += w;
    offset += w;
    n -= w;
  }
  return {};
}

Result<void> SharedMemory::seal() {
  if (sealed_ || !fd_.valid()) return fail(shm_error("this shared memory is sealed already"));
  // The writable shared mapping is replaced in place by a private read-only one of the same pages
  // (no copy: a private mapping reads the memfd's pages until written, and it cannot be written).
  void* p = ::mmap(data_, static_cast<size_t>(mapped_), PROT_READ, MAP_PRIVATE | MAP_FIXED, fd_.get(), 0);
  if (p == MAP_FAILED) return fail(shm_error(fmt::format("remapping shared memory: {}", std::strerror(errno))));
  if (::fcntl(fd_.get(), F_ADD_SEALS, kRequiredSeals | F_SEAL_SEAL) != 0)
    return fail(shm_error(fmt::format("sealing shared memory: {}", std::strerror(errno))));
  sealed_ = true;
  return {};
}

}  // namespace nki_agent
