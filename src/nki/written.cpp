#include "nki/written.h"

#include "nki/aliases.h"
#include "nki/nki_tensor.h"

#include <cstring>

#include "tensor/ops.h"

namespace nki_agent {

namespace {

// Whether the flags can follow a's view: it views the tensor's own storage (make_nki_tensor makes
// that contiguous from offset 0, so a view's element offsets index the mask as well).
bool trackable(const Access& a) {
  return a.view.storage() == a.tensor->data.storage() && a.view.numel() > 0;
}

// The view of one of a's tensor's masks (written_mask, stored_mask) that a's view selects.
Tensor view_of(const Tensor& mask, const Access& a) {
  return Tensor(mask.storage(), DType::kUInt8, a.view.shape(), a.view.strides(),
                a.view.offset() - a.tensor->data.offset());
}

Tensor mask_of(const Access& a) {
  return view_of(a.tensor->writes.written_mask, a);
}

bool covers_whole(const Access& a) {
  const Tensor& d = a.tensor->data;
  return a.view.numel() >= d.numel() && a.view.is_contiguous() && a.view.offset() == d.offset();
}

// Every element `a` selects has been stored to (WrittenState::stored_mask).
void mark_stored(const Access& a) {
  NkiTensor& t = *a.tensor;
  if (t.writes.all_stored || !trackable(a)) return;
  if (covers_whole(a)) {
    t.writes.all_stored = true;
    t.writes.stored_mask = Tensor();
    return;
  }
  if (!t.writes.stored_mask.defined()) t.writes.stored_mask = Tensor::zeros(t.data.shape(), DType::kUInt8);
  view_of(t.writes.stored_mask, a).fill(1);
}

// mark_written of a view of an alias: its flags, then its origin's (nki/aliases.h). A whole-tensor
// write keeps the alias's mask (all ones) so that the origin's elements it reached are found.
void mark_alias_written(const Access& a) {
  NkiTensor& t = *a.tensor;
  if (!t.writes.all_written && trackable(a)) {
    if (!t.writes.written_mask.defined()) t.writes.written_mask = Tensor::zeros(t.data.shape(), DType::kUInt8);
    mask_of(a).fill(1);
  }
  sync_origin_from_alias(a);
}

}  // namespace

void mark_written(const Access& a) {
  NkiTensor& t = *a.tensor;
  t.written = true;
  mark_stored(a);
  if (t.origin) return mark_alias_written(a);
  if (t.writes.all_written || !trackable(a)) return;
  if (covers_whole(a)) {  // fresh data everywhere: no garbage left, and none to trace back
    t.writes.all_written = true;
    t.lazy.poison_pending = false;  // nothing left for the poison
    t.writes.written_mask = Tensor();
    t.writes.stale_origin = SourceLoc();
    t.writes.stale_what.clear();
    return;
  }
  if (!t.writes.written_mask.defined()) t.writes.written_mask = Tensor::zeros(t.data.shape(), DType::kUInt8);
  mask_of(a).fill(1);
}

void set_written(const Access& dst, const Tensor& flags) {
  if (!flags.defined() || !trackable(dst) || all_ones(flags)) return mark_written(dst);
  NkiTensor& t = *dst.tensor;
  t.written = true;
  mark_stored(dst);
  if (!t.writes.written_mask.defined())
    t.writes.written_mask = t.writes.all_written ? Tensor::full(t.data.shape(), DType::kUInt8, 1)
                                                 : Tensor::zeros(t.data.shape(), DType::kUInt8);
  t.writes.all_written = false;
  Tensor m = mask_of(dst);
  m.assign(flags.shape() == m.shape() ? flags : flags.reshape(m.shape()));
  sync_origin_from_alias(dst);
}

std::vector<std::pair<int64_t, int64_t>> unstored_runs(const NkiTensor& t, size_t max_runs) {
  std::vector<std::pair<int64_t, int64_t>> runs;
  if (t.writes.all_stored) return runs;
  const int64_t n = t.data.numel();
  if (!t.writes.stored_mask.defined()) return {{0, n}};
  const auto* m = static_cast<const uint8_t*>(t.writes.stored_mask.data());
  for (int64_t i = 0; i < n && runs.size() < max_runs;) {
    const void* z = std::memchr(m + i, 0, static_cast<size_t>(n - i));
    if (z == nullptr) break;
    const int64_t start = static_cast<const uint8_t*>(z) - m;
    int64_t end = start;
    while (end < n && m[end] == 0) ++end;
    runs.emplace_back(start, end - start);
    i = end;
  }
  return runs;
}

bool all_written(const Access& a) {
  return a.tensor->writes.all_written || !trackable(a) || !first_unwritten(a);
}

std::optional<std::vector<int64_t>> first_unwritten(const Access& a) {
  const NkiTensor& t = *a.tensor;
  if (t.writes.all_written || !trackable(a)) return std::nullopt;
  const Shape& shape = a.view.shape();
  const size_t nd = shape.size();
  std::vector<int64_t> pos(nd, 0);
  if (!t.writes.written_mask.defined()) return pos;  // nothing written yet
  const Tensor m = mask_of(a);
  const auto* base = static_cast<const uint8_t*>(m.data());
  const Strides& strides = m.strides();
  if (nd == 0) return *base ? std::nullopt : std::optional(pos);
  // Row by row along the last axis (memchr when it is contiguous).
  const int64_t inner = shape[nd - 1], inner_stride = strides[nd - 1];
  for (;;) {
    int64_t off = 0;
    for (size_t d = 0; d + 1 < nd; ++d) off += pos[d] * strides[d];
    const uint8_t* row = base + off;
    if (inner_stride == 1) {
      if (const void* z = std::memchr(row, 0, static_cast<size_t>(inner))) {
        pos[nd - 1] = static_cast<const uint8_t*>(z) - row;
        return pos;
      }
    } else {
      for (int64_t i = 0; i < inner; ++i)
        if (row[i * inner_stride] == 0) {
          pos[nd - 1] = i;
          return pos;
        }
    }
    size_t d = nd - 1;
    while (d-- > 0) {
      if (++pos[d] < shape[d]) break;
      pos[d] = 0;
    }
    if (d == static_cast<size_t>(-1)) return std::nullopt;
  }
}

Tensor written_flags(const Access& a) {
  const NkiTensor& t = *a.tensor;
  if (t.writes.all_written || !trackable(a)) return {};
  if (!t.writes.written_mask.defined()) return Tensor::zeros(a.view.shape(), DType::kUInt8);
  if (!first_unwritten(a)) return {};  // the common case: a tile written in parts, read whole
  return mask_of(a).copy();
}

std::optional<Tensor> aligned_flags(const Access& a, const Shape& shape) {
  const Tensor f = written_flags(a);
  if (!f.defined()) return Tensor();
  const int64_t n = shape_numel(shape);
  if (f.numel() == n) return f.reshape(shape);
  if (shape.empty()) return std::nullopt;
  if (f.numel() == 1 || f.numel() == shape[0]) {  // a [P, 1] operand (or one value) against [P, F...]
    Shape col(shape.size(), 1);
    col[0] = f.numel() == 1 ? 1 : shape[0];
    return f.reshape(col).broadcast_to(shape).copy();
  }
  return std::nullopt;
}

Tensor and_flags(const Tensor& a, const Tensor& b) {
  if (!a.defined()) return b;
  if (!b.defined()) return a;
  Tensor out = a.contiguous().copy();
  const Tensor bc = b.contiguous();
  uint8_t* o = out.data_as<uint8_t>();
  const uint8_t* q = bc.data_as<uint8_t>();
  for (int64_t i = 0, n = out.numel(); i < n; ++i) o[i] = static_cast<uint8_t>(o[i] & q[i]);
  return out;
}

Tensor reduce_flags(const Tensor& flags, std::span<const int> axes, bool& mixed) {
  const Tensor lo = reduce(ReduceOp::kMin, flags, axes, true, DType::kUInt8);
  const Tensor hi = reduce(ReduceOp::kMax, flags, axes, true, DType::kUInt8);
  const Tensor l = lo.contiguous(), h = hi.contiguous();
  const uint8_t* pl = l.data_as<uint8_t>();
  const uint8_t* ph = h.data_as<uint8_t>();
  for (int64_t i = 0, n = l.numel(); i < n; ++i)
    if (pl[i] != ph[i]) {
      mixed = true;
      break;
    }
  return l;
}

bool all_ones(const Tensor& flags) {
  if (!flags.defined()) return true;
  const Tensor c = flags.contiguous();
  return std::memchr(c.data(), 0, static_cast<size_t>(c.numel())) == nullptr;
}

}  // namespace nki_agent
