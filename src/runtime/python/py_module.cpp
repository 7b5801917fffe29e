// The `_nkia_core` module: what the Python half of the kernel host calls into C++ for. The NKI
// semantics core will grow it with tiles, access patterns and instructions.
#include <fmt/format.h>
#include <pybind11/embed.h>
#include <pybind11/stl.h>

#include "runtime/python/hbm_tensor.h"
#include "runtime/python/py_convert.h"

namespace py = pybind11;

namespace nki_agent {

namespace {
thread_local LaunchContext* t_launch = nullptr;

// Runs `func` once per SPMD instance (serially, as on one NeuronCore) and returns the first
// instance's result: outputs are shared_hbm tensors, the same objects in every instance.
py::object launch(py::function func, py::list args, py::dict kwargs, std::vector<int64_t> grid) {
  if (t_launch) throw py::value_error("a kernel launch is already running on this thread");
  LaunchContext ctx;
  ctx.grid = grid;
  ctx.program_id.assign(grid.size(), 0);
  t_launch = &ctx;
  struct Reset {
    ~Reset() { t_launch = nullptr; }
  } reset;
  int64_t instances = 1;
  for (int64_t g : grid) instances *= g;
  py::object first;
  for (int64_t i = 0; i < instances; ++i) {
    int64_t rem = i;
    for (size_t d = grid.size(); d-- > 0;) {
      ctx.program_id[d] = rem % grid[d];
      rem /= grid[d];
    }
    py::object r = func(*args, **kwargs);
    if (i == 0) first = r;
  }
  return first;
}
}  // namespace

LaunchContext* current_launch() { return t_launch; }

// Called by python_host_init so that the linker keeps this file, and with it the registration of
// the embedded module below, when the host comes from a static library.
void link_nkia_core_module() {}

}  // namespace nki_agent

PYBIND11_EMBEDDED_MODULE(_nkia_core, m) {
  using namespace nki_agent;
  m.doc() = "nki-agent's C++ core, as the NKI modules see it";

  py::list narrow;
  for (int i = 0; i < kNumDTypes; ++i)
    if (dtype_is_numpy_foreign(static_cast<DType>(i))) narrow.append(std::string(dtype_name(static_cast<DType>(i))));
  m.attr("NARROW_DTYPES") = py::tuple(narrow);

  py::class_<HbmTensor, std::shared_ptr<HbmTensor>>(m, "Tensor")
      .def_static(
          "from_numpy",
          [](py::handle arr, const std::string& dtype, const std::string& name) {
            auto t = numpy_to_tensor(arr, dtype, name.empty() ? "argument" : name);
            if (!t) throw py::value_error(t.error().message);
            auto h = std::make_shared<HbmTensor>();
            h->data = std::move(*t);
            h->name = name;
            return h;
          },
          py::arg("array"), py::arg("dtype") = "", py::arg("name") = "")
      .def_property_readonly("shape", [](const HbmTensor& h) { return py::tuple(py::cast(h.data.shape())); })
      .def_property_readonly("dtype", [](const HbmTensor& h) { return std::string(dtype_name(h.data.dtype())); })
      .def_property_readonly("ndim", [](const HbmTensor& h) { return h.data.ndim(); })
      .def_property_readonly("name", [](const HbmTensor& h) { return h.name; })
      .def_property_readonly("buffer", [](const HbmTensor& h) { return h.buffer; })
      .def_readwrite("written", &HbmTensor::written)
      .def("numpy", [](const HbmTensor& h) { return tensor_to_numpy(h.data); })
      .def("__repr__", [](const HbmTensor& h) {
        return fmt::format("<nki tensor '{}' {}{} in {}>", h.name, dtype_name(h.data.dtype()), shape_str(h.data.shape()),
                           h.buffer);
      });

  py::class_<LaunchContext>(m, "LaunchContext")
      .def_readonly("grid", &LaunchContext::grid)
      .def_readonly("program_id", &LaunchContext::program_id);
  m.def("current_context", [] { return current_launch(); }, py::return_value_policy::reference);
  m.def("launch", &launch, py::arg("func"), py::arg("args"), py::arg("kwargs"), py::arg("grid"));
}
