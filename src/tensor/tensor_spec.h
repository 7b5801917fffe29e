// tensor/tensor_spec.h — "name=dtype[d0,d1,...]" argument specs, as the CLI takes them
// (--random 'a=float32[128,512]', --shapes 'x=bfloat16[4096,1024]').
#pragma once

#include <string>
#include <string_view>

#include "core/diagnostic.h"
#include "tensor/tensor.h"

namespace nki_agent {

struct TensorSpec {
  std::string name;
  DType dtype = DType::kFloat32;
  Shape shape;

  std::string to_string() const;  // back to "name=dtype[d0, d1]"
};

// Largest element count a spec may ask for: 2^31 elements (8 GiB of float32) — bigger is a typo.
inline constexpr int64_t kMaxSpecElements = int64_t{1} << 31;

// Parses "name=dtype[d0,d1,...]" (whitespace allowed around tokens; "name=dtype[]" is a scalar).
// Code nkia_bad_tensor_spec, with a hint showing the expected form.
Result<TensorSpec> parse_tensor_spec(std::string_view text);

}  // namespace nki_agent
