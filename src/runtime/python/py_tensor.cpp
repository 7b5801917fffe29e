// The `_nkia_core` classes Tensor (an NkiTensor) and View (an Access into one), and the conversion
// of their Python arguments — index keys, shapes, access patterns — into the core's view functions
// (nki/views.h). The two classes have the same view methods; they are defined once, below, for both.
#include <fmt/format.h>
#include <pybind11/stl.h>

#include "nki/error_catalogue.h"
#include "nki/views.h"
#include "runtime/python/py_convert.h"
#include "runtime/python/py_core.h"

namespace py = pybind11;

namespace nki_agent {

namespace {

// A Python index key (ints, slices, Ellipsis, None, or a tuple of them) as the core's items.
std::vector<IndexItem> index_key(py::handle key) {
  const bool many = py::isinstance<py::tuple>(key);
  const size_t n = many ? static_cast<size_t>(PyTuple_GET_SIZE(key.ptr())) : 1;
  std::vector<IndexItem> items(n);
  for (size_t k = 0; k < n; ++k) {
    py::handle it = many ? py::handle(PyTuple_GET_ITEM(key.ptr(), static_cast<Py_ssize_t>(k))) : key;
    IndexItem& item = items[k];
    if (it.is(py::ellipsis())) {
      item.kind = IndexItem::Kind::kEllipsis;
    } else if (it.is_none()) {
      item.kind = IndexItem::Kind::kNewAxis;
    } else if (PySlice_Check(it.ptr())) {
      // The slice's own fields (no attribute lookups: every instruction's operands are sliced).
      const auto* sl = reinterpret_cast<const PySliceObject*>(it.ptr());
      auto get = [](PyObject* o, int64_t none) -> int64_t {
        return o == Py_None ? none : py::handle(o).cast<int64_t>();
      };
      item.kind = IndexItem::Kind::kSlice;
      item.slice = Slice{get(sl->start, Slice::kNone), get(sl->stop, Slice::kNone), get(sl->step, 1)};
    } else if (py::isinstance<py::int_>(it) || py::hasattr(it, "__index__")) {
      item.kind = IndexItem::Kind::kIndex;
      item.index = py::int_(py::reinterpret_borrow<py::object>(it)).cast<int64_t>();
    } else {
      item.kind = IndexItem::Kind::kOther;
      item.type_name = py::str(py::type::handle_of(it).attr("__name__")).cast<std::string>();
    }
  }
  return items;
}

// A shape given as separate ints or as one tuple/list: t.reshape(2, 64) or t.reshape((2, 64)).
std::vector<int64_t> shape_arg(const py::args& args) {
  if (args.size() == 1 && !py::isinstance<py::int_>(args[0]) && !py::hasattr(args[0], "__index__"))
    return args[0].cast<std::vector<int64_t>>();
  return args.cast<std::vector<int64_t>>();
}

// t.reshape(...)'s shape: positional as shape_arg takes it, or the keyword shape= (the documented
// signature is reshape(self, shape)); anything else is a TypeError, as Python raises it.
std::vector<int64_t> shape_or_keyword(const py::args& args, const py::kwargs& kwargs, const char* method) {
  if (kwargs.empty()) return shape_arg(args);
  if (!args.empty() || kwargs.size() != 1 || !kwargs.contains("shape"))
    throw py::type_error(fmt::format("{}() takes the shape, positionally or as shape=", method));
  py::handle shape = kwargs["shape"];
  if (py::isinstance<py::int_>(shape) || py::hasattr(shape, "__index__")) return {shape.cast<int64_t>()};
  return shape.cast<std::vector<int64_t>>();
}

Shape to_shape(const std::vector<int64_t>& v) {
  return Shape(v.begin(), v.end());
}

// .ap(dtype=) / .view(dtype): the element type the access reads. The tensor's own type (nki-library's
// TensorView passes it always) is the plain access; another type reads the tensor's bytes as that type
// (retyped_view: the pattern then counts elements of the new type).
Access retyped(const Access& a, py::handle dtype) {
  if (dtype.is_none()) return a;
  const auto name = py::module_::import("_nkia.dtypes").attr("dtype_name")(dtype).cast<std::string>();
  return check(retyped_view(a, parse_dtype(name)));  // an unknown type is nkia_unknown_dtype
}

// Whether a .view() key is an element type (t.view(nl.float8_e5m2), as NumPy's ndarray.view takes
// one) rather than an index: a dtype name, a NumPy scalar type or a NumPy dtype.
bool is_dtype_key(py::handle key) {
  if (PyTuple_Check(key.ptr()) || PySlice_Check(key.ptr()) || PyLong_Check(key.ptr()) || key.is_none() ||
      key.is(py::ellipsis()))
    return false;  // an index (every instruction's operands are indexed: no NumPy lookups for them)
  if (py::isinstance<py::str>(key)) return true;
  if (PyType_Check(key.ptr())) return py::module_::import("numpy").attr("issubdtype")(key, "generic").cast<bool>();
  return py::isinstance(key, py::module_::import("numpy").attr("dtype"));
}

// t.ap(pattern, offset, scalar_offset=, vector_offset=, indirect_dim=, dtype=): a vector_offset makes an
// indirect access (_nkia.operands.IndirectAp: the rows as an HBM view, and the index as given, for
// nisa.dma_copy to gather from or scatter into). A scalar_offset is an int (a loop variable of a
// dynamic loop) or a 1 x 1 tile whose value is read now; an offset read from a tile makes the view's
// bounds depend on a value, so a bounds error then ends the run (end_run_with).
py::object ap_view(const Access& a, const ApPattern& pattern, int64_t offset, py::handle scalar_offset,
                   py::handle vector_offset, int64_t indirect_dim) {
  if (!vector_offset.is_none()) {
    check(check_indirect_pattern(a, pattern, !scalar_offset.is_none(), indirect_dim));
    const Access index = to_access(vector_offset, "vector_offset");
    check(check_indirect_index(a, pattern, index));
    const Access rows = check(indirect_rows(a, pattern, offset));
    return py::module_::import("_nkia.operands")
        .attr("IndirectAp")(rows, vector_offset, py::tuple(py::cast(indirect_shape(pattern))));
  }
  int64_t dynamic = 0;
  bool from_tile = false;
  if (!scalar_offset.is_none()) {
    const int64_t unit = check(ap_offset_unit(a, indirect_dim));
    int64_t value = 0;
    if (py::isinstance<py::int_>(scalar_offset) && !py::isinstance<py::bool_>(scalar_offset)) {
      value = scalar_offset.cast<int64_t>();
    } else if (py::hasattr(scalar_offset, "_nkia_register")) {
      // A register (nisa.register_alloc, a dynamic loop's variable): its constant, or, loaded from
      // memory, a value only the run knows: 0 in a timing-only run, refused in a computing one.
      py::object v = scalar_offset.attr("value");
      if (v.is_none() && exec_or_raise("ap").compute)
        raise(nki_error("nkia_dynamic_loop_not_computed",
                        "a register loaded from memory is used as a scalar_offset; nki-agent does not carry "
                        "run-time register values",
                        "pass the one-element tile the register was loaded from as the scalar_offset"));
      value = v.is_none() ? 0 : v.cast<int64_t>();
    } else {
      from_tile = !py::isinstance<py::int_>(scalar_offset);
      const Access s = to_access(scalar_offset, "scalar_offset");
      check(check_offset_tile(a, s));
      value = offset_tile_value(exec_or_raise("ap"), s);
    }
    dynamic = value * unit;
  }
  Result<Access> v = pattern_view(a, pattern, offset + dynamic);
  if (!v && from_tile) end_run_with(v.error());
  return py::cast(check(std::move(v)));
}

// t.base_tensor: the tensor whose storage a tensor or view reads — the tensor a retyped alias
// (.view(dtype), .ap(dtype=)) reinterprets, else the tensor itself (nki-library reads it to allocate
// and copy weights in their stored type, gate_up_projection_mx.py).
std::shared_ptr<NkiTensor> base_of(const std::shared_ptr<NkiTensor>& t) {
  return t->origin ? t->origin : t;
}

// The access a Tensor (all of it) or a View stands for.
Access access_of(const std::shared_ptr<NkiTensor>& t) {
  return whole(t);
}
const Access& access_of(const Access& a) {
  return a;
}

// The view methods of Tensor and View: numpy, view, affine_view, reshape, broadcast_to, permute, ap.
// `Self` is how pybind hands the object over; `numpy_what` names the method in the refusal.
template <class Self, class Class>
void def_view_methods(Class& cls, const char* numpy_what) {
  cls.def("numpy",
          [numpy_what](const Self& self) {
            refuse_value_read_in_kernel(numpy_what);
            const Access& a = access_of(self);
            settle(*a.tensor);
            return tensor_to_numpy(a.view);
          })
      .def("view",
           [](const Self& self, py::handle key) {
             const Access& a = access_of(self);
             if (is_dtype_key(key)) return retyped(a, key);
             const std::vector<IndexItem> items = index_key(key);
             return Access{a.tensor, check(index_view(a.view, items, tensor_label(a)))};
           })
      .def("affine_view",
           [](const Self& self, const std::vector<AffineDim>& dims, const std::vector<int64_t>& space) {
             const Access& a = access_of(self);
             return Access{a.tensor, check(affine_index(a.view, dims, space, tensor_label(a)))};
           })
      .def("reshape",
           [](const Self& self, py::args shape, py::kwargs kwargs) {
             return check(reshape_view(access_of(self), to_shape(shape_or_keyword(shape, kwargs, "reshape"))));
           })
      .def("broadcast_to",
           [](const Self& self, std::vector<int64_t> shape) {
             return check(broadcast_view(access_of(self), to_shape(shape)));
           })
      .def("permute",
           [](const Self& self, py::args perm) {
             auto p = shape_arg(perm);
             return check(permute_view(access_of(self), std::vector<int>(p.begin(), p.end())));
           })
      .def(
          "ap",
          [](const Self& self, ApPattern pattern, int64_t offset, py::handle scalar_offset, py::handle vector_offset,
             int64_t indirect_dim, py::handle dtype) {
            return ap_view(retyped(access_of(self), dtype), pattern, offset, scalar_offset, vector_offset,
                           indirect_dim);
          },
          py::arg("pattern"), py::arg("offset") = 0, py::arg("scalar_offset") = py::none(),
          py::arg("vector_offset") = py::none(), py::arg("indirect_dim") = 0, py::arg("dtype") = py::none());
}

}  // namespace

void register_tensor_classes(py::module_& m) {
  py::list narrow;
  for (int i = 0; i < kNumDTypes; ++i)
    if (dtype_is_numpy_foreign(static_cast<DType>(i))) narrow.append(std::string(dtype_name(static_cast<DType>(i))));
  m.attr("NARROW_DTYPES") = py::tuple(narrow);

  py::class_<NkiTensor, std::shared_ptr<NkiTensor>> tensor(m, "Tensor", py::dynamic_attr());
  tensor
      .def_static(
          "from_numpy",
          [](py::handle arr, const std::string& dtype, const std::string& name) {
            auto t = numpy_to_tensor(arr, dtype, name.empty() ? "argument" : name);
            if (!t) throw py::value_error(t.error().message);
            return argument_tensor(std::move(*t), name);
          },
          py::arg("array"), py::arg("dtype") = "", py::arg("name") = "")
      .def_property_readonly("shape", [](const NkiTensor& h) { return py::tuple(py::cast(h.data.shape())); })
      .def_property_readonly("dtype_str", [](const NkiTensor& h) { return std::string(dtype_name(h.data.dtype())); })
      .def_property_readonly("ndim", [](const NkiTensor& h) { return h.data.ndim(); })
      .def_property_readonly("name", [](const NkiTensor& h) { return h.name; })
      .def_property_readonly("buffer", [](const NkiTensor& h) { return std::string(buffer_name(h.buffer)); })
      .def_property_readonly("base_tensor", [](const std::shared_ptr<NkiTensor>& t) { return base_of(t); })
      .def_readonly("kernel_argument", &NkiTensor::kernel_argument)
      .def_readonly("blocks", &NkiTensor::blocks)
      .def_readwrite("written", &NkiTensor::written);
  def_view_methods<std::shared_ptr<NkiTensor>>(tensor, "Tensor.numpy()");
  tensor.def("__repr__", [](const NkiTensor& h) {
    return fmt::format("<nki tensor '{}' {}{} in {}>", h.name, dtype_name(h.data.dtype()), shape_str(h.data.shape()),
                       buffer_name(h.buffer));
  });

  py::class_<Access> view(m, "View", py::dynamic_attr());
  view.def_property_readonly("shape", [](const Access& a) { return py::tuple(py::cast(a.view.shape())); })
      .def_property_readonly("dtype_str", [](const Access& a) { return std::string(dtype_name(a.view.dtype())); })
      .def_property_readonly("ndim", [](const Access& a) { return a.view.ndim(); })
      .def_property_readonly("buffer", [](const Access& a) { return std::string(buffer_name(a.buffer())); })
      .def_property_readonly("tensor", [](const Access& a) { return a.tensor; })
      .def_property_readonly("base_tensor", [](const Access& a) { return base_of(a.tensor); });
  def_view_methods<Access>(view, "View.numpy()");
  view.def("__repr__", [](const Access& a) { return fmt::format("<nki view {}>", a.describe()); });

  // nl.device_print's values: the tile's elements as NumPy when the run computes, None in a trace
  // (shapes only). A debug print: the values go to the kernel's output and nowhere into the kernel.
  m.def("printed_values", [](py::handle t) -> py::object {
    ExecContext& ctx = exec_or_raise("device_print");
    const Access a = to_access(t, "tensor");
    if (!ctx.compute) return py::none();
    settle(*a.tensor);
    return tensor_to_numpy(a.view);
  });
}

}  // namespace nki_agent
