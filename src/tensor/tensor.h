// tensor/tensor.h — strided n-d arrays over shared byte storage.
//
// A Tensor is a view: (storage, dtype, shape, strides in elements, offset in elements). Slicing,
// transposing, broadcasting and most reshapes make new views of the same storage; copy(),
// contiguous() and astype() make new storage. Strides may be zero (broadcast) or negative
// (reversed slices). Element types are those of dtype.h; narrow floats are stored as their bits.
//
// Contract violations by the caller (an axis out of range, shapes that do not broadcast) throw
// std::invalid_argument with a plain message: callers that take shapes from users check them first
// and turn them into Diagnostics. Fresh storage from empty() is zero-filled.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tensor/dtype.h"

namespace nki_agent {

using Shape = std::vector<int64_t>;
using Strides = std::vector<int64_t>;  // in elements, not bytes

inline int64_t shape_numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}
std::string shape_str(const Shape& s);  // "[128, 512]"
Strides contiguous_strides(const Shape& s);
// NumPy broadcasting of two shapes; throws std::invalid_argument when they are incompatible.
Shape broadcast_shapes(const Shape& a, const Shape& b);
bool shapes_broadcastable(const Shape& a, const Shape& b);

// Memory that a Storage views without owning its allocation: a mapping shared with another
// process (runtime/shared_memory.h). The storages that view it keep it alive.
class ExternalMemory {
 public:
  virtual ~ExternalMemory() = default;
  virtual uint8_t* bytes() = 0;
  virtual int64_t byte_size() const = 0;
};

// Bytes shared by the views of one allocation. 64-byte aligned; an allocation of 4 MiB or more is a
// mapping of its own on transparent huge pages where the system offers them (tensor.cpp).
class Storage {
 public:
  explicit Storage(int64_t nbytes, bool zero_fill = true);
  // `nbytes` of `memory` from `offset` (a multiple of 64, within its size; std::invalid_argument
  // otherwise). Whether they may be written is the memory's affair: a sealed mapping is read-only.
  Storage(std::shared_ptr<ExternalMemory> memory, int64_t offset, int64_t nbytes);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  int64_t nbytes() const { return nbytes_; }
  // The memory viewed (null for an allocation of its own), and where in it this storage begins.
  const std::shared_ptr<ExternalMemory>& external() const { return external_; }
  int64_t external_offset() const { return external_offset_; }

 private:
  uint8_t* data_ = nullptr;
  int64_t nbytes_ = 0;
  std::shared_ptr<ExternalMemory> external_;
  int64_t external_offset_ = 0;
  size_t mapped_ = 0;  // the length of data_'s own mapping; 0 for a heap allocation
};

// A Python-style slice along one axis: start/stop may be negative (counted from the end) and are
// clipped; kNone selects the default for the step's direction. step must not be zero.
struct Slice {
  static constexpr int64_t kNone = INT64_MIN;
  int64_t start = kNone;
  int64_t stop = kNone;
  int64_t step = 1;
};

class Tensor {
 public:
  Tensor() = default;  // an undefined tensor: defined() is false

  static Tensor empty(const Shape& shape, DType dtype);  // zero-filled
  // Contents unspecified: for outputs whose every element is written before it is read.
  static Tensor uninitialized(const Shape& shape, DType dtype);
  static Tensor zeros(const Shape& shape, DType dtype) { return empty(shape, dtype); }
  static Tensor full(const Shape& shape, DType dtype, double value);
  // Values are rounded into `dtype` by store_f32 rules.
  static Tensor from_f32(const Shape& shape, std::span<const float> values, DType dtype = DType::kFloat32);
  static Tensor from_i64(const Shape& shape, std::span<const int64_t> values, DType dtype = DType::kInt32);
  // Wraps existing storage (for views built by other modules, e.g. .npy loading).
  Tensor(std::shared_ptr<Storage> storage, DType dtype, Shape shape, Strides strides, int64_t offset);

  bool defined() const { return storage_ != nullptr; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  const Strides& strides() const { return strides_; }
  int64_t offset() const { return offset_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  int64_t dim(int axis) const;  // negative axes count from the end
  int64_t numel() const { return shape_numel(shape_); }
  int64_t itemsize() const { return dtype_size(dtype_); }
  int64_t nbytes() const { return numel() * itemsize(); }
  bool is_contiguous() const;  // C order, no gaps (size-1 axes may have any stride)
  const std::shared_ptr<Storage>& storage() const { return storage_; }

  // Pointer to the element at offset 0 of this view (strides are applied by the caller).
  void* data();
  const void* data() const;
  template <typename T>
  T* data_as() {
    return static_cast<T*>(data());
  }
  template <typename T>
  const T* data_as() const {
    return static_cast<const T*>(data());
  }
  // Pointer to the element at a full index (negative indices not allowed here).
  const void* ptr_at(std::span<const int64_t> index) const;
  void* ptr_at(std::span<const int64_t> index);

  float get_f32(std::span<const int64_t> index) const;
  void set_f32(std::span<const int64_t> index, float v);
  double item() const;  // the single element of a 1-element tensor, as double

  // ---- views (share storage) ----
  Tensor slice(int axis, Slice s) const;
  Tensor slice(int axis, int64_t start, int64_t stop, int64_t step = 1) const;
  Tensor select(int axis, int64_t i) const;  // drops the axis; negative i counts from the end
  Tensor transpose(std::span<const int> perm) const;
  Tensor transpose() const;  // reverses all axes (the matrix transpose for 2-D)
  Tensor swapaxes(int a, int b) const;
  Tensor expand_dims(int axis) const;
  Tensor squeeze(int axis) const;  // the axis must have size 1
  Tensor broadcast_to(const Shape& shape) const;
  // A view when the strides allow it, else a contiguous copy. One dimension may be -1.
  Tensor reshape(const Shape& shape) const;
  // Reinterprets the bytes of a contiguous tensor as another type of the same size (bf16 ↔ uint16).
  Tensor view_as(DType dtype) const;

  // ---- copies ----
  Tensor copy() const;        // contiguous, same dtype
  Tensor contiguous() const;  // *this when already contiguous, else copy()
  Tensor astype(DType dtype, Fp8Overflow ovf = Fp8Overflow::kNonSaturating) const;
  // Copies src (broadcast to this shape, converted to this dtype) into this view in place.
  void assign(const Tensor& src, Fp8Overflow ovf = Fp8Overflow::kNonSaturating);
  void fill(double value);

  std::vector<float> to_f32_vector() const;  // C order
  std::vector<int64_t> to_i64_vector() const;
  std::string to_string(int max_elems = 64) const;  // for messages and debugging

 private:
  std::shared_ptr<Storage> storage_;
  DType dtype_ = DType::kFloat32;
  Shape shape_;
  Strides strides_;
  int64_t offset_ = 0;
};

}  // namespace nki_agent
