#include "runtime/python/py_convert.h"

#include <fmt/format.h>
#include <pybind11/numpy.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "nki/nki_tensor.h"

namespace py = pybind11;

namespace nki_agent {

namespace {

// The NumPy type that holds a dtype's values exactly: the same name, float32 for the others; the
// packed x4 types' bits as the unsigned integer of their size (as kernels pass them in).
const char* numpy_name(DType t) {
  if (dtype_is_packed(t)) return dtype_size(t) == 4 ? "uint32" : "uint16";
  return dtype_is_numpy_foreign(t) ? "float32" : dtype_name(t).data();
}

Diagnostic bad_value(const std::string& what, const std::string& msg) {
  return Diagnostic::error("nkia_bad_kernel_value", fmt::format("{}: {}", what, msg),
                           "kernels take and return NumPy arrays or NKI tensors of 8/16/32-bit types");
}

}  // namespace

py::object tensor_to_numpy(const Tensor& t) {
  py::module_ np = py::module_::import("numpy");
  Tensor c = dtype_is_numpy_foreign(t.dtype()) ? t.astype(DType::kFloat32) : t.contiguous();
  py::array arr(np.attr("dtype")(numpy_name(t.dtype())), std::vector<py::ssize_t>(t.shape().begin(), t.shape().end()));
  if (c.nbytes() > 0) std::memcpy(arr.mutable_data(), c.data(), static_cast<size_t>(c.nbytes()));
  if (dtype_is_numpy_foreign(t.dtype()))
    return py::module_::import("_nkia.kernel").attr("TypedArray")(arr, std::string(dtype_name(t.dtype())));
  return arr;
}

Result<Tensor> numpy_to_tensor(py::handle obj, const std::string& dtype_name_override, const std::string& what) {
  // C order, keeping 0-d arrays 0-d (np.ascontiguousarray would make them 1-d).
  py::array arr = py::array::ensure(obj, py::array::c_style);
  if (!arr) return fail(bad_value(what, "not an array"));
  py::dtype dt = arr.dtype();
  const char kind = dt.kind();
  const int64_t size = static_cast<int64_t>(dt.itemsize());
  Shape shape(arr.shape(), arr.shape() + arr.ndim());
  if (dt.byteorder() == '>') return fail(bad_value(what, "big-endian arrays are not supported"));

  DType src;
  if (kind == 'f' && size == 4)
    src = DType::kFloat32;
  else if (kind == 'f' && size == 2)
    src = DType::kFloat16;
  else if (kind == 'f' && size == 8)
    src = DType::kFloat32;  // narrowed below
  else if (kind == 'b')
    src = DType::kBool;
  else if (kind == 'i' && size == 1)
    src = DType::kInt8;
  else if (kind == 'i' && size == 2)
    src = DType::kInt16;
  else if (kind == 'i' && (size == 4 || size == 8))
    src = DType::kInt32;
  else if (kind == 'u' && size == 1)
    src = DType::kUInt8;
  else if (kind == 'u' && size == 2)
    src = DType::kUInt16;
  else if (kind == 'u' && (size == 4 || size == 8))
    src = DType::kUInt32;
  else
    return fail(
        bad_value(what, fmt::format("NumPy dtype '{}' has no NKI counterpart", py::str(dt).cast<std::string>())));

  Tensor t = Tensor::uninitialized(shape, src);
  const int64_t n = t.numel();
  if (size == 8) {
    const void* p = arr.data();
    for (int64_t i = 0; i < n; ++i) {
      if (kind == 'f') {
        const double d = static_cast<const double*>(p)[i];
        t.data_as<float>()[i] = f32_from_f64(d);
      } else {
        const int64_t v =
            kind == 'i' ? static_cast<const int64_t*>(p)[i] : static_cast<int64_t>(static_cast<const uint64_t*>(p)[i]);
        const auto [lo, hi] = int_dtype_range(src);
        if (v < lo || v > hi || (kind == 'u' && static_cast<const uint64_t*>(p)[i] > static_cast<uint64_t>(hi)))
          return fail(bad_value(what, fmt::format("the 64-bit value {} does not fit in {}", v, dtype_name(src))));
        store_i64(static_cast<uint8_t*>(t.data()) + i * t.itemsize(), src, v);
      }
    }
  } else if (n > 0) {
    std::memcpy(t.data(), arr.data(), static_cast<size_t>(t.nbytes()));
  }
  if (!dtype_name_override.empty()) {
    auto target = dtype_from_name(dtype_name_override);
    if (!target) return fail(bad_value(what, fmt::format("unknown dtype '{}'", dtype_name_override)));
    if (*target != t.dtype()) t = t.astype(*target);
  }
  return t;
}

Result<Tensor> object_to_tensor(py::handle o, const std::string& what) {
  if (py::isinstance<NkiTensor>(o)) {
    NkiTensor& t = o.cast<NkiTensor&>();
    settle(t);
    return t.data;
  }
  if (py::isinstance<Access>(o)) return o.cast<Access&>().view.copy();
  if (py::isinstance(o, py::module_::import("numpy").attr("generic")))  // np.float32(1.5), np.int8(3)
    return numpy_to_tensor(py::module_::import("numpy").attr("asarray")(o), "", what);
  if (py::isinstance<py::array>(o)) {
    std::string nd;
    if (py::hasattr(o, "nki_dtype") && !o.attr("nki_dtype").is_none())
      nd = py::str(o.attr("nki_dtype")).cast<std::string>();
    return numpy_to_tensor(o, nd, what);
  }
  if (py::isinstance<py::bool_>(o)) return Tensor::full({}, DType::kBool, o.cast<bool>());
  if (py::isinstance<py::int_>(o)) {
    Tensor t = Tensor::empty({}, DType::kInt32);
    long long v = 0;
    try {
      v = o.cast<long long>();
    } catch (const py::cast_error&) {
      return fail(bad_value(what, "integer out of range"));
    }
    if (v < INT32_MIN || v > INT32_MAX) return fail(bad_value(what, fmt::format("{} does not fit in int32", v)));
    store_i64(t.data(), DType::kInt32, v);
    return t;
  }
  if (py::isinstance<py::float_>(o)) return Tensor::full({}, DType::kFloat32, o.cast<double>());
  return fail(bad_value(
      what, fmt::format("a {} is not an array", py::str(py::type::handle_of(o).attr("__name__")).cast<std::string>())));
}

}  // namespace nki_agent
