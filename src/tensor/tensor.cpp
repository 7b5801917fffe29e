#include "tensor/tensor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <stdexcept>

#include "core/huge_pages.h"
#include "core/mapping_pool.h"
#include "tensor/strided.h"

namespace nki_agent {

namespace {

constexpr size_t kStorageAlign = 64;  // a cache line; also what AVX-512 loads like

[[noreturn]] void bad_arg(const std::string& msg) {
  throw std::invalid_argument(msg);
}

int normalize_axis(int axis, int ndim, const char* what) {
  int a = axis < 0 ? axis + ndim : axis;
  if (a < 0 || a >= ndim) bad_arg(fmt::format("{}: axis {} out of range for {} dimensions", what, axis, ndim));
  return a;
}

}  // namespace

// ---- shapes -------------------------------------------------------------------------------------

std::string shape_str(const Shape& s) {
  return fmt::format("[{}]", fmt::join(s, ", "));
}

Strides contiguous_strides(const Shape& s) {
  Strides st(s.size());
  int64_t acc = 1;
  for (size_t i = s.size(); i-- > 0;) {
    st[i] = acc;
    acc *= std::max<int64_t>(s[i], 1);
  }
  return st;
}

bool shapes_broadcastable(const Shape& a, const Shape& b) {
  size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (da != db && da != 1 && db != 1) return false;
  }
  return true;
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  if (!shapes_broadcastable(a, b))
    bad_arg(fmt::format("shapes {} and {} do not broadcast", shape_str(a), shape_str(b)));
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    out[n - 1 - i] = da == 1 ? db : da;
  }
  return out;
}

// ---- storage ------------------------------------------------------------------------------------

namespace {
// Under AddressSanitizer every storage stays a heap allocation, whose bounds it checks.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
}  // namespace

Storage::Storage(int64_t nbytes, bool zero_fill) : nbytes_(nbytes) {
  if (nbytes < 0) bad_arg("negative storage size");
  size_t n = static_cast<size_t>(std::max<int64_t>(nbytes, 1));
  // Large tensors are mappings of their own on transparent huge pages (core/huge_pages.h), apart
  // from the heap (a forked kernel process would copy the zygote's heap pages on write, 4 KiB at a
  // time), and go back to the mapping pool when freed: the next tensor of the size, in the next case
  // of a verification, reuses the memory instead of faulting in fresh pages (core/mapping_pool.h).
  if (n >= kHugeBufferMinBytes && !kAddressSanitizer) {
    n = huge_page_rounded(n);
    const PooledMapping m = take_mapping(n);
    if (m.data == nullptr) throw std::bad_alloc();
    data_ = static_cast<uint8_t*>(m.data);
    mapped_ = n;
    if (m.reused && zero_fill) std::memset(data_, 0, n);  // fresh memory reads as zeros already
    return;
  }
  n = (n + kStorageAlign - 1) / kStorageAlign * kStorageAlign;
  data_ = static_cast<uint8_t*>(std::aligned_alloc(kStorageAlign, n));
  if (!data_) throw std::bad_alloc();
  if (zero_fill) std::memset(data_, 0, n);
}

Storage::Storage(std::shared_ptr<ExternalMemory> memory, int64_t offset, int64_t nbytes)
    : nbytes_(nbytes), external_(std::move(memory)), external_offset_(offset) {
  if (!external_) bad_arg("no external memory");
  if (offset < 0 || nbytes < 0 || offset % static_cast<int64_t>(kStorageAlign) != 0 ||
      offset > external_->byte_size() || nbytes > external_->byte_size() - offset)
    bad_arg("storage outside its external memory, or misaligned");
  data_ = external_->bytes() + offset;
}

Storage::~Storage() {
  if (external_) return;
  if (mapped_ > 0)
    give_mapping(data_, mapped_);
  else
    std::free(data_);
}

// ---- construction -------------------------------------------------------------------------------

Tensor::Tensor(std::shared_ptr<Storage> storage, DType dtype, Shape shape, Strides strides, int64_t offset)
    : storage_(std::move(storage)),
      dtype_(dtype),
      shape_(std::move(shape)),
      strides_(std::move(strides)),
      offset_(offset) {
  if (shape_.size() != strides_.size()) bad_arg("shape and strides differ in rank");
  for (int64_t d : shape_)
    if (d < 0) bad_arg(fmt::format("negative dimension in shape {}", shape_str(shape_)));
}

static Tensor allocate(const Shape& shape, DType dtype, bool zero_fill) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) bad_arg(fmt::format("negative dimension in shape {}", shape_str(shape)));
    if (d > 0 && n > std::numeric_limits<int64_t>::max() / 8 / d)
      bad_arg(fmt::format("shape {} is too large", shape_str(shape)));
    n *= d;
  }
  auto st = std::make_shared<Storage>(n * dtype_size(dtype), zero_fill);
  return Tensor(std::move(st), dtype, shape, contiguous_strides(shape), 0);
}

Tensor Tensor::empty(const Shape& shape, DType dtype) {
  return allocate(shape, dtype, true);
}
Tensor Tensor::uninitialized(const Shape& shape, DType dtype) {
  return allocate(shape, dtype, false);
}

Tensor Tensor::full(const Shape& shape, DType dtype, double value) {
  Tensor t = empty(shape, dtype);
  t.fill(value);
  return t;
}

Tensor Tensor::from_f32(const Shape& shape, std::span<const float> values, DType dtype) {
  Tensor t = empty(shape, dtype);
  if (static_cast<int64_t>(values.size()) != t.numel())
    bad_arg(fmt::format("{} values given for shape {}", values.size(), shape_str(shape)));
  convert_from_f32(values.data(), t.data(), dtype, t.numel());
  return t;
}

Tensor Tensor::from_i64(const Shape& shape, std::span<const int64_t> values, DType dtype) {
  Tensor t = empty(shape, dtype);
  if (static_cast<int64_t>(values.size()) != t.numel())
    bad_arg(fmt::format("{} values given for shape {}", values.size(), shape_str(shape)));
  auto* p = static_cast<uint8_t*>(t.data());
  for (int64_t i = 0, n = t.numel(); i < n; ++i) store_i64(p + i * t.itemsize(), dtype, values[i]);
  return t;
}

// ---- properties ---------------------------------------------------------------------------------

int64_t Tensor::dim(int axis) const {
  return shape_[normalize_axis(axis, ndim(), "dim")];
}

bool Tensor::is_contiguous() const {
  if (numel() == 0) return true;
  int64_t expect = 1;
  for (int i = ndim() - 1; i >= 0; --i) {
    if (shape_[i] == 1) continue;
    if (strides_[i] != expect) return false;
    expect *= shape_[i];
  }
  return true;
}

void* Tensor::data() {
  return storage_ ? storage_->data() + offset_ * itemsize() : nullptr;
}
const void* Tensor::data() const {
  return storage_ ? storage_->data() + offset_ * itemsize() : nullptr;
}

const void* Tensor::ptr_at(std::span<const int64_t> index) const {
  if (static_cast<int>(index.size()) != ndim())
    bad_arg(fmt::format("index of rank {} for a tensor of rank {}", index.size(), ndim()));
  int64_t off = 0;
  for (int i = 0; i < ndim(); ++i) {
    if (index[i] < 0 || index[i] >= shape_[i])
      bad_arg(fmt::format("index {} out of range for axis {} of size {}", index[i], i, shape_[i]));
    off += index[i] * strides_[i];
  }
  return static_cast<const uint8_t*>(data()) + off * itemsize();
}

void* Tensor::ptr_at(std::span<const int64_t> index) {
  return const_cast<void*>(static_cast<const Tensor*>(this)->ptr_at(index));
}

float Tensor::get_f32(std::span<const int64_t> index) const {
  return load_f32(ptr_at(index), dtype_);
}
void Tensor::set_f32(std::span<const int64_t> index, float v) {
  store_f32(ptr_at(index), dtype_, v);
}

double Tensor::item() const {
  if (numel() != 1) bad_arg(fmt::format("item() of a tensor of shape {}", shape_str(shape_)));
  if (dtype_is_int(dtype_)) return static_cast<double>(load_i64(data(), dtype_));
  return load_f32(data(), dtype_);
}

// ---- views --------------------------------------------------------------------------------------

Tensor Tensor::slice(int axis, Slice s) const {
  int a = normalize_axis(axis, ndim(), "slice");
  if (s.step == 0) bad_arg("slice step cannot be zero");
  const int64_t n = shape_[a];
  int64_t start, stop;
  // Python's slice.indices(): clip into range, defaults depend on the step's sign.
  auto clip = [&](int64_t v, int64_t lo, int64_t hi) {
    if (v < 0) v += n;
    return std::clamp(v, lo, hi);
  };
  if (s.step > 0) {
    start = s.start == Slice::kNone ? 0 : clip(s.start, 0, n);
    stop = s.stop == Slice::kNone ? n : clip(s.stop, 0, n);
  } else {
    start = s.start == Slice::kNone ? n - 1 : clip(s.start, -1, n - 1);
    stop = s.stop == Slice::kNone ? -1 : clip(s.stop, -1, n - 1);
  }
  int64_t len = 0;
  if (s.step > 0 && stop > start) len = (stop - start + s.step - 1) / s.step;
  if (s.step < 0 && start > stop) len = (start - stop + (-s.step) - 1) / (-s.step);
  Tensor v = *this;
  v.shape_[a] = len;
  v.strides_[a] = strides_[a] * s.step;
  if (len > 0) v.offset_ = offset_ + start * strides_[a];
  return v;
}

Tensor Tensor::slice(int axis, int64_t start, int64_t stop, int64_t step) const {
  return slice(axis, Slice{start, stop, step});
}

Tensor Tensor::select(int axis, int64_t i) const {
  int a = normalize_axis(axis, ndim(), "select");
  int64_t idx = i < 0 ? i + shape_[a] : i;
  if (idx < 0 || idx >= shape_[a])
    bad_arg(fmt::format("index {} out of range for axis {} of size {}", i, a, shape_[a]));
  Tensor v = *this;
  v.offset_ = offset_ + idx * strides_[a];
  v.shape_.erase(v.shape_.begin() + a);
  v.strides_.erase(v.strides_.begin() + a);
  return v;
}

Tensor Tensor::transpose(std::span<const int> perm) const {
  if (static_cast<int>(perm.size()) != ndim())
    bad_arg(fmt::format("transpose: permutation of {} axes for a tensor of rank {}", perm.size(), ndim()));
  std::vector<bool> seen(ndim(), false);
  Tensor v = *this;
  for (int i = 0; i < ndim(); ++i) {
    int p = normalize_axis(perm[i], ndim(), "transpose");
    if (seen[p]) bad_arg("transpose: repeated axis in permutation");
    seen[p] = true;
    v.shape_[i] = shape_[p];
    v.strides_[i] = strides_[p];
  }
  return v;
}

Tensor Tensor::transpose() const {
  std::vector<int> perm(ndim());
  for (int i = 0; i < ndim(); ++i) perm[i] = ndim() - 1 - i;
  return transpose(perm);
}

Tensor Tensor::swapaxes(int a, int b) const {
  std::vector<int> perm(ndim());
  for (int i = 0; i < ndim(); ++i) perm[i] = i;
  std::swap(perm[normalize_axis(a, ndim(), "swapaxes")], perm[normalize_axis(b, ndim(), "swapaxes")]);
  return transpose(perm);
}

Tensor Tensor::expand_dims(int axis) const {
  int a = normalize_axis(axis, ndim() + 1, "expand_dims");
  Tensor v = *this;
  v.shape_.insert(v.shape_.begin() + a, 1);
  v.strides_.insert(v.strides_.begin() + a, 0);
  return v;
}

Tensor Tensor::squeeze(int axis) const {
  int a = normalize_axis(axis, ndim(), "squeeze");
  if (shape_[a] != 1) bad_arg(fmt::format("squeeze: axis {} has size {}, not 1", a, shape_[a]));
  Tensor v = *this;
  v.shape_.erase(v.shape_.begin() + a);
  v.strides_.erase(v.strides_.begin() + a);
  return v;
}

Tensor Tensor::broadcast_to(const Shape& shape) const {
  if (shape.size() < shape_.size() || broadcast_shapes(shape_, shape) != shape)
    bad_arg(fmt::format("cannot broadcast shape {} to {}", shape_str(shape_), shape_str(shape)));
  Tensor v = *this;
  size_t lead = shape.size() - shape_.size();
  v.shape_ = shape;
  v.strides_.assign(shape.size(), 0);
  for (size_t i = 0; i < shape_.size(); ++i)
    v.strides_[lead + i] = (shape_[i] == 1 && shape[lead + i] != 1) ? 0 : strides_[i];
  return v;
}

Tensor Tensor::reshape(const Shape& shape) const {
  Shape target = shape;
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == -1) {
      if (infer >= 0) bad_arg("reshape: more than one -1 dimension");
      infer = static_cast<int>(i);
    } else if (target[i] < 0) {
      bad_arg(fmt::format("reshape: negative dimension in {}", shape_str(shape)));
    } else {
      known *= target[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || numel() % known != 0)
      bad_arg(fmt::format("cannot reshape {} into {}", shape_str(shape_), shape_str(shape)));
    target[infer] = numel() / known;
  }
  if (shape_numel(target) != numel())
    bad_arg(fmt::format("cannot reshape {} ({} elements) into {}", shape_str(shape_), numel(), shape_str(shape)));

  // A view is possible when each run of merged source axes is itself contiguous (NumPy's rule).
  Strides new_strides(target.size());
  bool viewable = true;
  {
    // Drop size-1 source axes: they constrain nothing.
    Shape os;
    Strides ost;
    for (int i = 0; i < ndim(); ++i)
      if (shape_[i] != 1) {
        os.push_back(shape_[i]);
        ost.push_back(strides_[i]);
      }
    size_t oi = 0, ni = 0;
    while (ni < target.size() && viewable) {
      if (target[ni] == 1) {
        new_strides[ni++] = 0;
        continue;
      }
      if (oi >= os.size()) {
        viewable = false;
        break;
      }
      // Grow a group of source axes [oi, oj) and target axes [ni, nj) with equal element counts.
      size_t oj = oi + 1, nj = ni + 1;
      int64_t op = os[oi], np = target[ni];
      while (op != np) {
        if (op < np) {
          if (oj >= os.size()) {
            viewable = false;
            break;
          }
          op *= os[oj++];
        } else {
          if (nj >= target.size()) {
            viewable = false;
            break;
          }
          np *= target[nj++];
        }
      }
      if (!viewable) break;
      for (size_t k = oi; k + 1 < oj; ++k)
        if (ost[k] != ost[k + 1] * os[k + 1]) viewable = false;
      if (!viewable) break;
      int64_t st = ost[oj - 1];
      for (size_t k = nj; k-- > ni;) {
        new_strides[k] = st;
        st *= target[k];
      }
      oi = oj;
      ni = nj;
    }
    if (viewable && oi != os.size()) viewable = false;
  }
  if (numel() == 0) {
    viewable = true;
    new_strides = contiguous_strides(target);
  }
  if (viewable) return Tensor(storage_, dtype_, target, new_strides, offset_);
  Tensor c = copy();
  return Tensor(c.storage_, dtype_, target, contiguous_strides(target), 0);
}

Tensor Tensor::view_as(DType dtype) const {
  if (dtype_size(dtype) != itemsize())
    bad_arg(fmt::format("view_as: {} and {} differ in size", dtype_name(dtype_), dtype_name(dtype)));
  if (!is_contiguous()) bad_arg("view_as needs a contiguous tensor");
  Tensor v = *this;
  v.dtype_ = dtype;
  return v;
}

// ---- copies -------------------------------------------------------------------------------------

Tensor Tensor::copy() const {
  Tensor out = uninitialized(shape_, dtype_);
  out.assign(*this);
  return out;
}

Tensor Tensor::contiguous() const {
  return is_contiguous() ? *this : copy();
}

Tensor Tensor::astype(DType dtype, Fp8Overflow ovf) const {
  Tensor out = uninitialized(shape_, dtype);
  out.assign(*this, ovf);
  return out;
}

namespace {

// n elements of type T from s (element stride ss) to d (stride ds).
template <typename T>
void copy_strided(uint8_t* d, int64_t ds, const uint8_t* s, int64_t ss, int64_t n) {
  T* out = reinterpret_cast<T*>(d);
  const T* in = reinterpret_cast<const T*>(s);
  for (int64_t i = 0; i < n; ++i) out[i * ds] = in[i * ss];
}

}  // namespace

void Tensor::assign(const Tensor& src_in, Fp8Overflow ovf) {
  if (!defined() || !src_in.defined()) bad_arg("assign on an undefined tensor");
  Tensor src = src_in.broadcast_to(shape_);
  // A source overlapping this view (x[...] = x[::-1]) is read in full before anything is written,
  // as NumPy does; the identical view is a no-op copy and needs no snapshot.
  const bool same_view = src_in.storage_ == storage_ && src_in.dtype_ == dtype_ && src_in.shape_ == shape_ &&
                         src_in.strides_ == strides_ && src_in.offset_ == offset_;
  if (src.storage_ == storage_ && !same_view) src = src_in.copy().broadcast_to(shape_);
  const DType sd = src.dtype_, dd = dtype_;
  const int64_t ssz = src.itemsize(), dsz = itemsize();
  // Integers and bool travel as int64 so that large int32/uint32 values stay exact.
  const bool int_path = !dtype_is_float(sd) && !dtype_is_float(dd);
  // The source no longer overlaps this view (or is it), so the elements may be visited in this
  // view's memory order: a store through a transposed view writes runs, not a column at a time.
  Tensor reordered;
  const Tensor* dst = this;
  if (!in_memory_order(*this)) {
    const std::vector<int> order = memory_order(*this);
    reordered = transpose(order);
    dst = &reordered;
    src = src.transpose(order);
  }
  std::vector<float> buf;
  for_each_row({dst, &src}, [&](const RowPtrs& p, int64_t n, const int64_t* st) {
    auto* d = static_cast<uint8_t*>(p[0]);
    const auto* s = static_cast<const uint8_t*>(p[1]);
    const int64_t ds = st[0] * dsz, ss = st[1] * ssz;
    if (sd == dd && ds == dsz && ss == ssz) {
      std::memmove(d, s, static_cast<size_t>(n * dsz));
    } else if (sd == dd) {  // the same type: the bytes, whatever the strides
      switch (dsz) {
        case 1: copy_strided<uint8_t>(d, st[0], s, st[1], n); break;
        case 2: copy_strided<uint16_t>(d, st[0], s, st[1], n); break;
        case 4: copy_strided<uint32_t>(d, st[0], s, st[1], n); break;
        case 8: copy_strided<uint64_t>(d, st[0], s, st[1], n); break;
        default:
          for (int64_t i = 0; i < n; ++i) std::memcpy(d + i * ds, s + i * ss, static_cast<size_t>(dsz));
      }
    } else if (int_path) {
      for (int64_t i = 0; i < n; ++i) store_i64(d + i * ds, dd, load_i64(s + i * ss, sd));
    } else if (ds == dsz && ss == ssz) {
      buf.resize(static_cast<size_t>(n));
      convert_to_f32(s, sd, buf.data(), n);
      convert_from_f32(buf.data(), d, dd, n, ovf);
    } else {
      for (int64_t i = 0; i < n; ++i) store_f32(d + i * ds, dd, load_f32(s + i * ss, sd), ovf);
    }
  });
}

void Tensor::fill(double value) {
  Tensor one = empty({}, dtype_);
  if (dtype_is_float(dtype_)) {
    store_f32(one.data(), dtype_, f32_from_f64(value));
  } else if (dtype_ == DType::kBool || std::isnan(value)) {
    store_i64(one.data(), dtype_, (dtype_ == DType::kBool && value != 0) ? 1 : 0);
  } else {
    // Integers: truncate toward zero and saturate, exactly (no detour through float32).
    const auto [lo, hi] = int_dtype_range(dtype_);
    store_i64(one.data(), dtype_, static_cast<int64_t>(std::clamp(std::trunc(value), double(lo), double(hi))));
  }
  // The element's bytes, repeated: no conversion per element, in memory order.
  const int64_t isz = itemsize();
  Tensor reordered;
  const Tensor* dst = this;
  if (!in_memory_order(*this)) {
    reordered = transpose(memory_order(*this));
    dst = &reordered;
  }
  for_each_row({dst}, [&](const RowPtrs& p, int64_t n, const int64_t* st) {
    auto* d = static_cast<uint8_t*>(p[0]);
    const int64_t step = st[0];
    auto fill_as = [&](auto v) {
      std::memcpy(&v, one.data(), sizeof(v));
      auto* t = reinterpret_cast<decltype(v)*>(d);
      if (step == 1) {
        std::fill(t, t + n, v);
      } else {
        for (int64_t i = 0; i < n; ++i) t[i * step] = v;
      }
    };
    switch (isz) {
      case 1: fill_as(uint8_t{}); break;
      case 2: fill_as(uint16_t{}); break;
      case 4: fill_as(uint32_t{}); break;
      case 8: fill_as(uint64_t{}); break;
      default:
        for (int64_t i = 0; i < n; ++i) std::memcpy(d + i * step * isz, one.data(), static_cast<size_t>(isz));
    }
  });
}

std::vector<float> Tensor::to_f32_vector() const {
  std::vector<float> out(static_cast<size_t>(numel()));
  if (out.empty()) return out;
  Tensor c = astype(DType::kFloat32);
  std::memcpy(out.data(), c.data(), out.size() * sizeof(float));
  return out;
}

std::vector<int64_t> Tensor::to_i64_vector() const {
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(numel()));
  const int64_t isz = itemsize();
  for_each_row({this}, [&](const RowPtrs& p, int64_t n, const int64_t* st) {
    const auto* s = static_cast<const uint8_t*>(p[0]);
    for (int64_t i = 0; i < n; ++i) out.push_back(load_i64(s + i * st[0] * isz, dtype_));
  });
  return out;
}

std::string Tensor::to_string(int max_elems) const {
  if (!defined()) return "Tensor(undefined)";
  std::string s = fmt::format("Tensor({}, {}, [", dtype_name(dtype_), shape_str(shape_));
  std::vector<float> v = to_f32_vector();
  for (size_t i = 0; i < v.size() && static_cast<int>(i) < max_elems; ++i)
    s += fmt::format("{}{:g}", i ? ", " : "", v[i]);
  if (static_cast<int64_t>(v.size()) > max_elems) s += ", ...";
  return s + "])";
}

}  // namespace nki_agent
