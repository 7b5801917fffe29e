// runtime/python/py_convert.h — moving arrays between our Tensors and Python objects
// (internal to runtime/python; needs pybind11).
//
// NumPy has no bfloat16 or float8: a Tensor of such a type crosses into Python as a float32
// TypedArray carrying the exact values and its `nki_dtype`, and comes back as that type.
// float64 and int64 arrays are narrowed (float32 with RNE; int32 when every value fits, else a
// Diagnostic), since the hardware has no 64-bit types.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "core/diagnostic.h"
#include "tensor/tensor.h"

namespace nki_agent {

pybind11::object tensor_to_numpy(const Tensor& t);
// Accepts a NumPy array (or TypedArray), an HBM tensor of _nkia_core, or a Python scalar.
// `what` names the value in Diagnostics ("output 0").
Result<Tensor> object_to_tensor(pybind11::handle o, const std::string& what);
// A NumPy array as a Tensor; `dtype_name` (may be empty) overrides the element type, as a
// TypedArray's nki_dtype does.
Result<Tensor> numpy_to_tensor(pybind11::handle arr, const std::string& dtype_name, const std::string& what);

}  // namespace nki_agent
