#include "nki/aliases.h"

#include <algorithm>

#include "nki/nki_tensor.h"
#include "nki/written.h"

namespace nki_agent {

namespace {

// Flags over `from` (elements of from_size bytes, the whole tensor, contiguous) as flags over `shape`
// (elements of to_size bytes over the same bytes): 1 where every `from` element the bytes lie in is 1.
// An undefined `from` is all 0 (nothing written yet).
Tensor remap_flags(const Tensor& from, const Shape& from_shape, int64_t from_size, const Shape& shape,
                   int64_t to_size) {
  const Tensor in = from.defined() ? from.contiguous() : Tensor::zeros(from_shape, DType::kUInt8);
  const auto* f = static_cast<const uint8_t*>(in.data());
  const int64_t n_in = in.numel();
  Tensor out = Tensor::zeros(shape, DType::kUInt8);
  auto* o = static_cast<uint8_t*>(out.data());
  for (int64_t j = 0, n = out.numel(); j < n; ++j) {
    uint8_t all = 1;
    const int64_t first = j * to_size / from_size, last = std::min(n_in - 1, ((j + 1) * to_size - 1) / from_size);
    for (int64_t b = first; b <= last; ++b) all &= f[b];
    o[j] = all;
  }
  return out;
}

// The alias's written state as its origin's, element sizes converted.
void copy_state_to_alias(const NkiTensor& o, NkiTensor& a) {
  const int64_t os = o.data.itemsize(), as = a.data.itemsize();
  a.writes.all_written = o.writes.all_written;
  a.writes.written_mask =
      o.writes.all_written ? Tensor() : remap_flags(o.writes.written_mask, o.data.shape(), os, a.data.shape(), as);
  a.writes.all_stored = o.writes.all_stored;
  a.writes.stored_mask =
      o.writes.all_stored ? Tensor() : remap_flags(o.writes.stored_mask, o.data.shape(), os, a.data.shape(), as);
  if (!a.writes.stale_origin.known() && o.writes.stale_origin.known()) {
    a.writes.stale_origin = o.writes.stale_origin;
    a.writes.stale_what = o.writes.stale_what;
  }
}

// t's flags as a mask of its shape (a copy): all 1 when `all` says so, all 0 when no mask was made yet.
Tensor flags_of(bool all, const Tensor& mask, const NkiTensor& t) {
  if (all) return Tensor::full(t.data.shape(), DType::kUInt8, 1);
  return mask.defined() ? mask.contiguous().copy() : Tensor::zeros(t.data.shape(), DType::kUInt8);
}

}  // namespace

void sync_alias_from_origin(NkiTensor& t) {
  if (!t.origin) return;
  settle(*t.origin);
  copy_state_to_alias(*t.origin, t);
  t.written = t.written || t.origin->written;
}

void sync_origin_from_alias(const Access& dst) {
  NkiTensor& a = *dst.tensor;
  if (!a.origin || dst.view.storage() != a.data.storage()) return;
  NkiTensor& o = *a.origin;
  o.written = true;
  const int64_t os = o.data.itemsize(), as = a.data.itemsize();
  // The alias elements the write reached.
  Tensor touched = Tensor::zeros(a.data.shape(), DType::kUInt8);
  Tensor(touched.storage(), DType::kUInt8, dst.view.shape(), dst.view.strides(), dst.view.offset() - a.data.offset())
      .fill(1);
  const auto* t = static_cast<const uint8_t*>(touched.data());
  const Tensor aw = flags_of(a.writes.all_written, a.writes.written_mask, a);
  const auto* w = static_cast<const uint8_t*>(aw.data());
  Tensor ow = flags_of(o.writes.all_written, o.writes.written_mask, o);
  Tensor ost = flags_of(o.writes.all_stored, o.writes.stored_mask, o);
  auto* owp = static_cast<uint8_t*>(ow.data());
  auto* osp = static_cast<uint8_t*>(ost.data());
  const int64_t n_alias = touched.numel();
  for (int64_t i = 0, n = ow.numel(); i < n; ++i) {
    const int64_t first = i * os / as, last = std::min(n_alias - 1, ((i + 1) * os - 1) / as);
    bool reached = false;
    uint8_t all = 1;
    for (int64_t j = first; j <= last; ++j) {
      reached = reached || t[j];
      all &= w[j];
    }
    if (!reached) continue;
    owp[i] = all;
    osp[i] = 1;
  }
  const bool full = all_ones(ow), stored = all_ones(ost);
  o.writes.all_written = full;
  o.writes.written_mask = full ? Tensor() : ow;
  o.writes.all_stored = stored;
  o.writes.stored_mask = stored ? Tensor() : ost;
  if (full) o.lazy.poison_pending = false;
  if (!o.writes.stale_origin.known() && a.writes.stale_origin.known()) {
    o.writes.stale_origin = a.writes.stale_origin;
    o.writes.stale_what = a.writes.stale_what;
  }
}

}  // namespace nki_agent
