#include "nki/nki_tensor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

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
  if (!t.poison_pending) return;
  t.poison_pending = false;
  if (t.all_written) return;
  if (!t.written_mask.defined()) return poison(t.data);  // nothing written yet
  // The elements whose flag is 0 (make_nki_tensor's data and the mask are contiguous; copies
  // otherwise).
  const Tensor mask = t.written_mask.contiguous();
  Tensor data = t.data.contiguous();
  Tensor one = Tensor::uninitialized({1}, data.dtype());
  poison(one);
  const auto size = static_cast<size_t>(data.itemsize());
  const auto* flags = static_cast<const uint8_t*>(mask.data());
  auto* bytes = static_cast<uint8_t*>(data.data());
  const int64_t n = std::min(data.numel(), mask.numel());
  for (int64_t i = 0; i < n;) {
    const void* z = std::memchr(flags + i, 0, static_cast<size_t>(n - i));
    if (!z) break;
    i = static_cast<const uint8_t*>(z) - flags;
    for (; i < n && flags[i] == 0; ++i) std::memcpy(bytes + static_cast<size_t>(i) * size, one.data(), size);
  }
  if (data.storage() != t.data.storage()) t.data.assign(data);
}

std::shared_ptr<NkiTensor> make_nki_tensor(const Shape& shape, DType dtype, Buffer buffer, std::string name,
                                           bool poisoned) {
  auto t = std::make_shared<NkiTensor>();
  t->data = Tensor::uninitialized(shape, dtype);
  t->poison_pending = poisoned;
  t->all_written = false;
  t->buffer = buffer;
  t->name = std::move(name);
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
