// runtime/received_bytes.h — bytes read from a worker into memory of their own, which tensors view.
//
// A kernel's outputs are most of a reply's bytes. Read into a std::string, they are zeroed first,
// land on fresh pages (which the OS kernel zeroes as well) and are copied once more into tensors.
// ReceivedBytes is memory the read writes first: 64-byte aligned, and when large a mapping from
// core/mapping_pool.h sized in whole huge pages, so that the next reply of about the same size
// reuses it in place. It is an ExternalMemory: the outputs' tensors view it (npy_view) and keep it
// alive; it goes back to the pool with the last of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "tensor/tensor.h"

namespace nki_agent {

class ReceivedBytes final : public ExternalMemory {
 public:
  // `n` bytes, not initialised; null when the system refuses the memory.
  static std::shared_ptr<ReceivedBytes> make(int64_t n);
  ~ReceivedBytes() override;
  ReceivedBytes(const ReceivedBytes&) = delete;
  ReceivedBytes& operator=(const ReceivedBytes&) = delete;

  uint8_t* bytes() override { return data_; }
  int64_t byte_size() const override { return size_; }
  std::string_view view() const { return {reinterpret_cast<const char*>(data_), static_cast<size_t>(size_)}; }
  // Keeps the first `n` bytes (at most byte_size()); the memory stays as it is.
  void truncate(int64_t n);

 private:
  ReceivedBytes() = default;
  uint8_t* data_ = nullptr;
  int64_t size_ = 0;
  size_t mapped_ = 0;  // > 0: a pooled mapping of this size; 0: aligned_alloc
};

}  // namespace nki_agent
