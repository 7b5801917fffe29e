// NumPy dtypes for the NKI float types NumPy lacks (bfloat16, tfloat32, the float8 formats), as the
// toolchain's nl dtypes are NumPy dtypes: `np.dtype(nl.bfloat16).itemsize` is 2 and
// `arr.astype(nl.bfloat16)` rounds into bfloat16. Each is a legacy NumPy user dtype holding the
// element's bits as the core stores them, converted with the core's load_f32 / store_f32 (round to
// nearest even). They convert to and from NumPy's numeric types, cast safely to float32 and float64
// (NumPy's arithmetic takes them there), and compare and test truth; indexing one element gives a
// Python float. _nkia.numpy_dtypes names them in NumPy's type dictionary.
#include <pybind11/pybind11.h>

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <cstring>
#include <string>
#include <type_traits>
#include <utility>

#include "runtime/python/py_core.h"
#include "tensor/dtype.h"

namespace py = pybind11;

namespace nki_agent {

namespace {

constexpr int kMaxTypes = 8;

struct NumpyNarrow {
  DType dtype = DType::kFloat32;
  PyArray_ArrFuncs funcs;
  PyArray_Descr descr;
  int typenum = -1;
};

NumpyNarrow g_types[kMaxTypes];
int g_count = 0;

template <int I>
DType dt() {
  return g_types[I].dtype;
}

template <int I>
PyObject* getitem(void* data, void*) {
  return PyFloat_FromDouble(load_f32(data, dt<I>()));
}

template <int I>
int setitem(PyObject* item, void* data, void*) {
  const double v = PyFloat_AsDouble(item);
  if (v == -1.0 && PyErr_Occurred()) return -1;
  store_f32(data, dt<I>(), static_cast<float>(v));
  return 0;
}

void swap_bytes(char* p, int n) {
  for (int i = 0; i < n / 2; ++i) std::swap(p[i], p[n - 1 - i]);
}

template <int I>
void copyswapn(void* dst, npy_intp dstride, void* src, npy_intp sstride, npy_intp n, int swap, void*) {
  if (!src) return;
  const int size = dtype_size(dt<I>());
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  for (npy_intp i = 0; i < n; ++i) {
    std::memmove(d + i * dstride, s + i * sstride, static_cast<size_t>(size));
    if (swap) swap_bytes(d + i * dstride, size);
  }
}

template <int I>
void copyswap(void* dst, void* src, int swap, void*) {
  if (!src) return;
  const int size = dtype_size(dt<I>());
  std::memmove(dst, src, static_cast<size_t>(size));
  if (swap) swap_bytes(static_cast<char*>(dst), size);
}

template <int I>
npy_bool nonzero(void* data, void*) {
  return load_f32(data, dt<I>()) != 0.0f;
}

template <int I>
int compare(const void* a, const void* b, void*) {
  const float x = load_f32(a, dt<I>()), y = load_f32(b, dt<I>());
  return x < y ? -1 : (x > y ? 1 : 0);
}

// From the narrow type into NumPy's type C (through float32, which holds every value exactly).
template <int I, typename C>
void to_numpy(void* from, void* to, npy_intp n, void*, void*) {
  const int size = dtype_size(dt<I>());
  const char* f = static_cast<const char*>(from);
  C* t = static_cast<C*>(to);
  for (npy_intp i = 0; i < n; ++i) {
    const float v = load_f32(f + i * size, dt<I>());
    if constexpr (std::is_same_v<C, npy_bool>)
      t[i] = v != 0.0f;
    else if constexpr (std::is_integral_v<C>)
      t[i] = v != v ? C{0} : static_cast<C>(static_cast<long double>(v));
    else
      t[i] = static_cast<C>(v);
  }
}

// From NumPy's type C into the narrow type, rounding to nearest even.
template <int I, typename C>
void from_numpy(void* from, void* to, npy_intp n, void*, void*) {
  const int size = dtype_size(dt<I>());
  const C* f = static_cast<const C*>(from);
  char* t = static_cast<char*>(to);
  for (npy_intp i = 0; i < n; ++i) store_f32(t + i * size, dt<I>(), static_cast<float>(f[i]));
}

template <int I>
void half_to(void* from, void* to, npy_intp n, void*, void*) {
  const int size = dtype_size(dt<I>());
  const char* f = static_cast<const char*>(from);
  char* t = static_cast<char*>(to);
  for (npy_intp i = 0; i < n; ++i) store_f32(t + i * size, dt<I>(), load_f32(f + i * 2, DType::kFloat16));
}

template <int I>
void to_half(void* from, void* to, npy_intp n, void*, void*) {
  const int size = dtype_size(dt<I>());
  const char* f = static_cast<const char*>(from);
  char* t = static_cast<char*>(to);
  for (npy_intp i = 0; i < n; ++i) store_f32(t + i * 2, DType::kFloat16, load_f32(f + i * size, dt<I>()));
}

template <int I, typename C>
void set_to(int npy_type) {
  g_types[I].funcs.cast[npy_type] = to_numpy<I, C>;
}

template <int I, typename C>
bool register_from(int npy_type) {
  return PyArray_RegisterCastFunc(PyArray_DescrFromType(npy_type), g_types[I].typenum, from_numpy<I, C>) == 0;
}

template <int I>
int register_type(PyObject* scalar_type, DType t) {
  NumpyNarrow& n = g_types[I];
  n.dtype = t;
  PyArray_InitArrFuncs(&n.funcs);
  n.funcs.getitem = getitem<I>;
  n.funcs.setitem = setitem<I>;
  n.funcs.copyswapn = copyswapn<I>;
  n.funcs.copyswap = copyswap<I>;
  n.funcs.nonzero = nonzero<I>;
  n.funcs.compare = compare<I>;
  set_to<I, npy_float>(NPY_FLOAT);
  set_to<I, npy_double>(NPY_DOUBLE);
  set_to<I, npy_longdouble>(NPY_LONGDOUBLE);
  set_to<I, npy_bool>(NPY_BOOL);
  set_to<I, npy_byte>(NPY_BYTE);
  set_to<I, npy_ubyte>(NPY_UBYTE);
  set_to<I, npy_short>(NPY_SHORT);
  set_to<I, npy_ushort>(NPY_USHORT);
  set_to<I, npy_int>(NPY_INT);
  set_to<I, npy_uint>(NPY_UINT);
  set_to<I, npy_long>(NPY_LONG);
  set_to<I, npy_ulong>(NPY_ULONG);
  set_to<I, npy_longlong>(NPY_LONGLONG);
  set_to<I, npy_ulonglong>(NPY_ULONGLONG);
  std::memset(static_cast<void*>(&n.descr), 0, sizeof(n.descr));
  Py_SET_REFCNT(&n.descr, 1);
  Py_SET_TYPE(&n.descr, &PyArrayDescr_Type);
  Py_INCREF(scalar_type);
  n.descr.typeobj = reinterpret_cast<PyTypeObject*>(scalar_type);
  n.descr.kind = 'V';
  n.descr.type = static_cast<char>('a' + I);
  n.descr.byteorder = '=';
  n.descr.flags = NPY_NEEDS_PYAPI | NPY_USE_GETITEM | NPY_USE_SETITEM;
  n.descr.elsize = dtype_size(t);
  n.descr.alignment = dtype_size(t);
  n.descr.f = &n.funcs;
  n.descr.hash = -1;
  n.typenum = PyArray_RegisterDataType(&n.descr);
  if (n.typenum < 0) return -1;
  bool ok = register_from<I, npy_float>(NPY_FLOAT) && register_from<I, npy_double>(NPY_DOUBLE) &&
            register_from<I, npy_longdouble>(NPY_LONGDOUBLE) && register_from<I, npy_bool>(NPY_BOOL) &&
            register_from<I, npy_byte>(NPY_BYTE) && register_from<I, npy_ubyte>(NPY_UBYTE) &&
            register_from<I, npy_short>(NPY_SHORT) && register_from<I, npy_ushort>(NPY_USHORT) &&
            register_from<I, npy_int>(NPY_INT) && register_from<I, npy_uint>(NPY_UINT) &&
            register_from<I, npy_long>(NPY_LONG) && register_from<I, npy_ulong>(NPY_ULONG) &&
            register_from<I, npy_longlong>(NPY_LONGLONG) && register_from<I, npy_ulonglong>(NPY_ULONGLONG);
  // float16 is past the ArrFuncs cast table (NumPy keeps it in the dtype's cast dictionary).
  ok = ok && PyArray_RegisterCastFunc(PyArray_DescrFromType(NPY_HALF), n.typenum, half_to<I>) == 0 &&
       PyArray_RegisterCastFunc(&n.descr, NPY_HALF, to_half<I>) == 0;
  // Every value is exact in float32 and float64: NumPy's functions take these arrays there.
  ok = ok && PyArray_RegisterCanCast(&n.descr, NPY_FLOAT, NPY_NOSCALAR) == 0 &&
       PyArray_RegisterCanCast(&n.descr, NPY_DOUBLE, NPY_NOSCALAR) == 0;
  return ok ? n.typenum : -1;
}

using Registrar = int (*)(PyObject*, DType);
constexpr Registrar kRegistrars[kMaxTypes] = {register_type<0>, register_type<1>, register_type<2>, register_type<3>,
                                              register_type<4>, register_type<5>, register_type<6>, register_type<7>};

}  // namespace

void register_numpy_dtypes(py::module_& m) {
  // register_numpy_dtype(scalar_type, name): makes `scalar_type` (a subclass of numpy.generic) the
  // scalar type of a new NumPy dtype holding the NKI float type `name`; returns its type number.
  m.def("register_numpy_dtype", [](py::handle scalar_type, const std::string& name) {
    static bool imported = false;
    if (!imported) {
      if (_import_array() < 0) throw py::error_already_set();
      imported = true;
    }
    auto t = dtype_from_name(name);
    if (!t || !dtype_is_numpy_foreign(*t) || dtype_is_packed(*t))
      throw py::value_error("no NumPy dtype is made for '" + name + "'");
    if (g_count >= kMaxTypes) throw py::value_error("too many NumPy dtypes");
    const int typenum = kRegistrars[g_count](scalar_type.ptr(), *t);
    if (typenum < 0) {
      if (PyErr_Occurred()) throw py::error_already_set();
      throw py::value_error("NumPy refused the dtype '" + name + "'");
    }
    ++g_count;
    return typenum;
  });
}

}  // namespace nki_agent
