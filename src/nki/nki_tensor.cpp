#include "nki/nki_tensor.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <optional>

namespace nki_agent {

std::string_view buffer_name(Buffer b) {
  switch (b) {
    case Buffer::kSharedHbm: return "shared_hbm";
    case Buffer::kPrivateHbm: return "private_hbm";
    case Buffer::kSbuf: return "sbuf";
    case Buffer::kPsum: return "psum";
  }
  return "?";
}

bool buffer_is_hbm(Buffer b) {
  return b == Buffer::kSharedHbm || b == Buffer::kPrivateHbm;
}
bool buffer_is_on_chip(Buffer b) {
  return b == Buffer::kSbuf || b == Buffer::kPsum;
}

void poison(Tensor& t) {
  t.fill(dtype_is_float(t.dtype()) ? NAN : static_cast<double>(kPoisonInt));
}

void settle_poison(NkiTensor& t) {
  if (!t.lazy.poison_pending) return;
  t.lazy.poison_pending = false;
  if (t.writes.all_written) return;
  if (!t.writes.written_mask.defined()) return poison(t.data);  // nothing written yet
  // The elements whose flag is 0 (make_nki_tensor's data and the mask are contiguous; copies
  // otherwise).
  const Tensor mask = t.writes.written_mask.contiguous();
  Tensor data = t.data.contiguous();
  Tensor one = Tensor::uninitialized({1}, data.dtype());
  poison(one);
  const auto size = static_cast<size_t>(data.itemsize());
  const auto* flags = static_cast<const uint8_t*>(mask.data());
  const auto* value = static_cast<const uint8_t*>(one.data());
  auto* bytes = static_cast<uint8_t*>(data.data());
  const int64_t n = std::min(data.numel(), mask.numel());
  for (int64_t i = 0; i < n;) {
    const void* z = std::memchr(flags + i, 0, static_cast<size_t>(n - i));
    if (!z) break;
    i = static_cast<const uint8_t*>(z) - flags;
    int64_t end = i;
    while (end < n && flags[end] == 0) ++end;
    // The run [i, end) gets the poison value: one element, then the filled prefix doubled.
    uint8_t* run = bytes + static_cast<size_t>(i) * size;
    const size_t run_bytes = static_cast<size_t>(end - i) * size;
    std::memcpy(run, value, size);
    for (size_t done = size; done < run_bytes;) {
      const size_t step = std::min(done, run_bytes - done);
      std::memcpy(run + done, run, step);
      done += step;
    }
    i = end;
  }
  if (data.storage() != t.data.storage()) t.data.assign(data);
}

namespace {

bool same_view(const Tensor& a, const Tensor& b) {
  return a.storage() == b.storage() && a.offset() == b.offset() && a.shape() == b.shape() && a.strides() == b.strides();
}

// Carries out t's first `count` pending copies, in order.
void carry_out(NkiTensor& t, size_t count) {
  count = std::min(count, t.lazy.pending_copies.size());
  for (size_t i = 0; i < count; ++i) {
    Tensor dst = t.lazy.pending_copies[i].dst;
    dst.assign(t.lazy.pending_copies[i].src);
  }
  t.lazy.pending_copies.erase(t.lazy.pending_copies.begin(),
                              t.lazy.pending_copies.begin() + static_cast<std::ptrdiff_t>(count));
}

}  // namespace

void settle(NkiTensor& t) {
  if (t.origin) settle(*t.origin);  // an alias's bytes are its origin's
  settle_poison(t);
  carry_out(t, t.lazy.pending_copies.size());
}

bool defer_copy(const Access& dst, const Access& src, const Tensor& from) {
  NkiTensor& t = *dst.tensor;
  // An alias's bytes are read through its origin, which knows nothing of the alias's pending copies.
  if (!buffer_is_on_chip(t.buffer) || !buffer_is_hbm(src.buffer()) || src.tensor == dst.tensor || t.origin ||
      from.dtype() != dst.dtype() || from.shape() != dst.view.shape())
    return false;
  std::optional<std::vector<int64_t>> box = view_box(dst.view, t.data);
  if (!box) return false;
  // Each write into t looks at every pending copy: a tile loaded in thousands of small pieces
  // carries them out now and then instead of keeping them all.
  constexpr size_t kMaxPendingCopies = 256;
  if (t.lazy.pending_copies.size() >= kMaxPendingCopies) carry_out(t, t.lazy.pending_copies.size());
  t.lazy.pending_copies.push_back(PendingCopy{dst.view, from, src.tensor, std::move(*box)});
  auto& to = src.tensor->lazy.copied_to;
  if (to.empty() || to.back().lock() != dst.tensor) {
    if (to.size() >= 64 && (to.size() & (to.size() - 1)) == 0)  // now and then, forget tensors gone
      std::erase_if(to, [](const std::weak_ptr<NkiTensor>& w) { return w.expired(); });
    to.push_back(dst.tensor);
  }
  return true;
}

void before_write(const Access& dst) {
  NkiTensor& t = *dst.tensor;
  if (t.origin) {  // a write through an alias lands in its origin's bytes: settle them first
    before_write(whole(t.origin));
    settle(*t.origin);
  }
  if (!t.lazy.pending_copies.empty()) {
    const std::optional<std::vector<int64_t>> box = view_box(dst.view, t.data);
    size_t upto = 0;
    for (size_t i = 0; i < t.lazy.pending_copies.size(); ++i)
      if (!box || boxes_intersect(*box, t.lazy.pending_copies[i].box)) upto = i + 1;
    carry_out(t, upto);
  }
  if (!t.lazy.copied_to.empty()) {
    const std::vector<std::weak_ptr<NkiTensor>> to = std::move(t.lazy.copied_to);
    t.lazy.copied_to.clear();
    for (const auto& w : to)
      if (auto p = w.lock()) carry_out(*p, p->lazy.pending_copies.size());
  }
}

Tensor read_view(const Access& a) {
  NkiTensor& t = *a.tensor;
  if (t.origin) settle(*t.origin);
  settle_poison(t);
  if (t.lazy.pending_copies.empty()) return a.view;
  if (const std::optional<std::vector<int64_t>> box = view_box(a.view, t.data)) {
    for (size_t i = t.lazy.pending_copies.size(); i-- > 0;) {  // the last copy into these elements
      const PendingCopy& c = t.lazy.pending_copies[i];
      if (!boxes_intersect(*box, c.box)) continue;
      if (same_view(c.dst, a.view)) return c.src;
      settle(t);
      return a.view;
    }
    return a.view;  // no copy pending into these elements
  }
  settle(t);
  return a.view;
}

namespace {

// Tensor identities: a process-wide counter (kernels of several threads may trace at once).
std::shared_ptr<NkiTensor> new_tensor() {
  static std::atomic<uint64_t> next{1};
  auto t = std::make_shared<NkiTensor>();
  t->id = next.fetch_add(1, std::memory_order_relaxed);
  return t;
}

}  // namespace

std::shared_ptr<NkiTensor> make_nki_tensor(const Shape& shape, DType dtype, Buffer buffer, std::string name,
                                           Poison poison) {
  auto t = new_tensor();
  t->data = poison == Poison::kZeros ? Tensor::empty(shape, dtype) : Tensor::uninitialized(shape, dtype);
  t->lazy.poison_pending = poison == Poison::kLazy || poison == Poison::kNow;
  t->writes.all_written = false;
  t->writes.all_stored = !buffer_is_hbm(buffer);
  t->buffer = buffer;
  t->name = std::move(name);
  if (poison == Poison::kNow) settle_poison(*t);
  return t;
}

std::shared_ptr<NkiTensor> argument_tensor(Tensor data, std::string name) {
  auto t = new_tensor();
  t->data = std::move(data);
  t->name = std::move(name);
  t->buffer = Buffer::kSharedHbm;
  t->kernel_argument = true;
  return t;
}

std::shared_ptr<NkiTensor> constant_tensor(Tensor data) {
  auto t = new_tensor();
  t->data = std::move(data);
  t->name = "constant";
  t->buffer = Buffer::kSharedHbm;
  t->written = true;
  return t;
}

int64_t Access::partitions() const {
  return view.ndim() == 0 ? 1 : view.shape()[0];
}

int64_t Access::start_partition() const {
  if (view.ndim() == 0 || tensor->data.ndim() == 0) return 0;
  // The position of the view's first element along the tensor's partition axis (axis 0, or the one
  // after the block dimensions).
  const int64_t elem = view.offset() - tensor->data.offset();
  const auto axis = static_cast<size_t>(tensor->blocks < tensor->data.ndim() ? tensor->blocks : 0);
  const int64_t row = tensor->data.strides()[axis];
  const int64_t n = tensor->data.shape()[axis];
  return row > 0 && n > 0 ? (elem / row) % n : 0;
}

int64_t Access::partition_stride() const {
  if (tensor->data.ndim() == 0) return 0;
  const auto axis = static_cast<size_t>(tensor->blocks < tensor->data.ndim() ? tensor->blocks : 0);
  return tensor->data.strides()[axis];
}

int64_t Access::free_bytes() const {
  const int64_t p = partitions();
  return p > 0 ? view.numel() / p * view.itemsize() : 0;
}

std::string Access::describe() const {
  return fmt::format("{}{} ({}, {})", tensor->name.empty() ? "tensor" : tensor->name, shape_str(view.shape()),
                     buffer_name(tensor->buffer), dtype_name(view.dtype()));
}

Access whole(const std::shared_ptr<NkiTensor>& t) {
  return Access{t, t->data};
}

}  // namespace nki_agent
