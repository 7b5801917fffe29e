// The `_nkia_core` module: what the Python half of the kernel host calls into C++ for. This file
// holds the module itself, raising Diagnostics as NkiError, the kernel's source location, and the
// launch: running a kernel per SPMD instance, its loops and the tensors it creates, each converted
// from Python and handed to the launch's rules (nki/launch.h). The tensor classes are in
// py_tensor.cpp, the instructions in py_isa.cpp.
#include "runtime/python/py_core.h"

#include <fmt/format.h>
#include <pybind11/embed.h>
#include <pybind11/stl.h>

#include <frameobject.h>

#include <unordered_map>

#include "runtime/python/launch.h"
#include "runtime/python/py_convert.h"
#include "runtime/python/replay.h"

namespace py = pybind11;

namespace nki_agent {

namespace {

thread_local Launch* t_launch = nullptr;

bool value_dependent(std::string_view code) {
  return code == "nkia_indirect_index_out_of_bounds";
}

TensorOrigin parse_origin(const std::string& name) {
  if (name == "result") return TensorOrigin::kResult;
  if (name == "scratch") return TensorOrigin::kScratch;
  return TensorOrigin::kExplicit;
}

// A placement from the front end: None, or (direct, [(bank, start_partition, byte_offset), ...]) with
// one place per logical block (nki/placement.h).
std::optional<Placement> parse_placement(py::handle h) {
  if (h.is_none()) return std::nullopt;
  auto t = h.cast<py::tuple>();
  Placement p;
  p.direct = t[0].cast<bool>();
  for (py::handle e : t[1].cast<py::list>()) {
    auto [bank, partition, offset] = e.cast<std::tuple<int64_t, int64_t, int64_t>>();
    p.tiles.push_back(TilePlace{bank, partition, offset});
  }
  return p;
}

// `blocks`: leading block dimensions before the partition dimension (legacy nl.par_dim).
// `origin`: "explicit" (the kernel's nl.ndarray / nl.zeros ...), "result" (an nl / nisa call's result
// tile) or "scratch" (part of one instruction's emulation); `placement`: see parse_placement.
std::shared_ptr<NkiTensor> new_tensor(const std::vector<int64_t>& shape, const std::string& dtype,
                                      const std::string& buffer, const std::string& name, int blocks,
                                      bool auto_allocated, const std::string& origin, py::handle placement) {
  Launch& launch = launch_or_raise("ndarray");
  TensorRequest r;
  r.buffer = parse_buffer(buffer);
  r.shape = Shape(shape.begin(), shape.end());
  check(check_tensor_shape(launch.exec, r.shape, r.buffer, blocks));  // before the dtype, as NKI reports
  r.dtype = parse_dtype(dtype);
  r.name = name;
  r.blocks = blocks;
  r.auto_allocated = auto_allocated;
  r.origin = parse_origin(origin);
  r.placement = parse_placement(placement);
  auto t = check(launch.new_tensor(r, caller_loc()));
  // A placement changes no value (nki/placement.h): its rules were checked by the recorded run.
  if (Recording* rec = current_recording()) rec->add_created(t);
  return t;
}

// Runs `func` once per SPMD instance and returns the first instance's result: outputs are shared_hbm
// tensors, the same objects in every instance. A launch of one instance or of the two cores of LNC=2
// runs under _nkia.multicore (synchronisation between the cores, and the ranks of its collectives);
// larger grids run their instances one after another, as on one NeuronCore.
py::object launch(py::function func, py::list args, py::dict kwargs, std::vector<int64_t> grid,
                  const std::string& platform_target) {
  if (t_launch) throw py::value_error("a kernel launch is already running on this thread");
  Launch ctx(grid);
  if (Recording* rec = current_recording()) rec->begin_launch();
  begin_launch(ctx);
  // @nki.jit(platform_target="trn2") compiles the kernel for that target, whatever the run's default.
  if (!platform_target.empty()) ctx.exec.target = check(target_by_name(platform_target));
  // A launch made by the kernel file's own module-level code (a test driver run at import) computes
  // its values even in a timing-only run: the host code that made it goes on to read them.
  if (!ctx.exec.compute && py::module_::import("_nkia.policy").attr("LOADING").cast<bool>()) ctx.exec.compute = true;
  t_launch = &ctx;
  struct Reset {
    Launch& ctx;
    ~Reset() {
      ctx.switch_rank(0);  // rank 0's trace is the launch's (nki/launch.h, ranks)
      end_launch(ctx);     // the trace goes to the run's, even from a failed launch
      t_launch = nullptr;
    }
  } reset{ctx};
  py::object first;
  if (ctx.instances() <= 2) {
    // One instance, or the two cores of LNC=2: _nkia.multicore runs them side by side, handing over
    // where they synchronise, and runs more ranks of them when a collective's replica group names
    // them (it calls begin_instance / end_instance itself).
    py::object cores = py::module_::import("_nkia.multicore");
    if (cores.attr("AVAILABLE").cast<bool>()) {
      first = cores.attr("run_cores")(func, args, kwargs, ctx.instances());
      ctx.switch_rank(0);
      ctx.finish();
      return first;
    }
  }
  for (int64_t i = 0, n = ctx.instances(); i < n; ++i) {
    ctx.begin_instance(i);
    py::object r = func(*args, **kwargs);
    check(ctx.end_instance());
    if (i == 0) first = r;
  }
  ctx.finish();
  return first;
}

}  // namespace

[[noreturn]] void raise(const Diagnostic& d) {
  if (value_dependent(d.code)) end_run_with(d);
  py::object cls = py::module_::import("_nkia.errors").attr("NkiError");
  py::object err = cls(d.code, d.message, d.hint);
  if (d.loc.known()) err.attr("loc") = py::make_tuple(d.loc.file, d.loc.line);
  PyErr_SetObject(cls.ptr(), err.ptr());
  throw py::error_already_set();
}

void end_run_with(const Diagnostic& d) {
  RunScope* run = current_run();
  if (run == nullptr || run->fatal) return;
  run->fatal = d;
  if (!run->fatal->loc.known()) run->fatal->at(caller_loc());
}

namespace {

// What caller_loc needs of a code object, found once: its file, whether that is the pylib's
// (skipped), and the line of each instruction offset asked about. CPython finds a line by walking
// the code's line table from its start, and every instruction a kernel issues asks: 4% of a
// convolution's time went there. The code objects are kept alive (the map holds a reference), so
// their addresses are never reused; a kernel process holds a few hundred of them.
struct CodeLines {
  std::string file;
  bool internal = false;
  std::unordered_map<int, int> line_at;  // instruction offset -> line
};

std::unordered_map<PyCodeObject*, CodeLines>& code_lines() {
  static auto* m = new std::unordered_map<PyCodeObject*, CodeLines>();  // lives as long as the interpreter
  return *m;
}

}  // namespace

SourceLoc caller_loc() {
  SourceLoc loc;
  PyFrameObject* f = PyEval_GetFrame();
  while (f) {
    PyCodeObject* code = PyFrame_GetCode(f);  // a new reference: the map keeps it, or it is dropped
    auto [it, fresh] = code_lines().try_emplace(code);
    if (fresh) {
      it->second.file = py::str(code->co_filename);
      it->second.internal = it->second.file.starts_with("<nki-agent>");
    } else {
      Py_DECREF(code);
    }
    CodeLines& c = it->second;
    if (!c.internal) {
      auto [line, first] = c.line_at.try_emplace(PyFrame_GetLasti(f), 0);
      if (first) line->second = PyFrame_GetLineNumber(f);
      loc.file = c.file;
      loc.line = line->second;
      break;
    }
    f = PyFrame_GetBack(f);  // a new reference since 3.9; the frames stay alive on the stack
    Py_XDECREF(f);
  }
  return loc;
}

Launch& launch_or_raise(const char* api) {
  if (!t_launch) raise(outside_kernel_error(api));
  return *t_launch;
}

ExecContext& exec_or_raise(const char* api) {
  ExecContext& ctx = launch_or_raise(api).exec;
  if (Recording* r = current_recording()) r->taint(fmt::format("{} is not recorded for replays", api));
  return ctx;
}

void refuse_value_read_in_kernel(const char* what) {
  const RunScope* run = current_run();
  const bool sealed = run != nullptr && run->values_sealed;
  if (t_launch == nullptr && !sealed) return;
  raise(nki_error("nkia_trace_time_value_read",
                  fmt::format("{}: a kernel cannot read its tensors' values; NKI traces a kernel with shapes and "
                              "dtypes only, and the values exist on the device after the launch{}",
                              what, t_launch ? "" : " (this run's entry is the kernel, so it has no host side)"),
                  "compute with nl / nisa instructions on tiles; control flow and constants must come from "
                  "shapes, dtypes and arguments, never from data; read results in a host function after the "
                  "kernel returns"));
}

Access to_access(py::handle h, const char* role) {
  Access a;
  if (py::isinstance<Access>(h)) {
    a = h.cast<Access>();
  } else if (py::isinstance<NkiTensor>(h)) {
    a = whole(h.cast<std::shared_ptr<NkiTensor>>());
  } else if (PyObject* tile = PyObject_GetAttrString(h.ptr(), "_nkia_tile")) {
    // A deferred result (a legacy matmul awaiting `psum += ...`) used as an operand: materialise it.
    // Materialising may fail with the operand's own error (an access past the end: IndexedRef).
    return to_access(py::reinterpret_steal<py::object>(tile), role);
  } else if (!PyErr_ExceptionMatches(PyExc_AttributeError)) {
    throw py::error_already_set();
  } else {
    PyErr_Clear();
    raise(nki_error("nkia_bad_operand",
                    fmt::format("operand '{}' is a {}, not an NKI tensor", role,
                                py::str(py::type::handle_of(h).attr("__name__")).cast<std::string>()),
                    "pass a tensor or a slice of one (load HBM data with nl.load first)"));
  }
  check(t_launch ? t_launch->admit(a, role) : check_writable(a, role));
  return a;
}

Buffer parse_buffer(const std::string& name) {
  if (name == "sbuf") return Buffer::kSbuf;
  if (name == "psum") return Buffer::kPsum;
  if (name == "shared_hbm") return Buffer::kSharedHbm;
  if (name == "hbm" || name == "private_hbm") return Buffer::kPrivateHbm;
  raise(nki_error("nkia_unknown_buffer", fmt::format("unknown buffer '{}'", name),
                  "use nl.sbuf, nl.psum, nl.hbm, nl.private_hbm or nl.shared_hbm"));
}

DType parse_dtype(const std::string& name) {
  auto t = dtype_from_name(name);
  if (!t)
    raise(nki_error("nkia_unknown_dtype", fmt::format("unknown dtype '{}'", name),
                    "use an nl dtype such as nl.float32, nl.bfloat16 or nl.int32"));
  return *t;
}

Launch* current_launch() {
  return t_launch;
}

void register_launch(py::module_& m) {
  py::class_<Launch>(m, "LaunchContext")
      .def_readonly("grid", &Launch::grid)
      .def_readonly("program_id", &Launch::program_id)
      .def_property_readonly("target", [](const Launch& c) { return std::string(c.exec.target->name); })
      .def_property_readonly("trace_size", [](const Launch& c) { return c.exec.trace.size(); })
      .def_property_readonly("direct_allocation", [](const Launch& c) { return c.alloc.direct(); });
  m.def(
      "current_context", [] { return current_launch(); }, py::return_value_policy::reference);
  m.def("launch", &launch, py::arg("func"), py::arg("args"), py::arg("kwargs"), py::arg("grid"),
        py::arg("platform_target") = "");
  // The entry of the run is a kernel: from now on nothing in the run reads values from Python (the
  // outputs leave as HBM tensors). There is no way back.
  m.def("seal_values", [] {
    if (RunScope* run = current_run()) run->values_sealed = true;
  });
  m.def("values_sealed", [] { return current_run() != nullptr && current_run()->values_sealed; });
  // Whether the running launch computes values (false in a timing-only run).
  m.def("launch_computes", [] { return t_launch != nullptr && t_launch->exec.compute; });
  // The running target's limits (nl.tile_size, nisa.get_nc_version): the running launch's (which its
  // platform_target may choose), else the run's, else trn1. `key` is a [limits] key or
  // "core_version".
  m.def("target_limit", [](std::string_view key) -> int64_t {
    const TargetSpec& t = t_launch ? *t_launch->exec.target : current_run() ? *current_run()->target : target_trn1();
    if (key == "core_version") return t.core_version;
    for (const TargetLimit& l : kTargetLimits)
      if (key == l.key) return t.*l.field;
    throw py::key_error(std::string(key));
  });
  // An argument tensor made by the host without a name takes its parameter's, for diagnostics.
  m.def("name_argument", [](const std::shared_ptr<NkiTensor>& t, const std::string& name) {
    if (t->kernel_argument && t->name.empty()) t->name = name;
  });

  m.def("promote", [](const std::string& a, const std::string& b) {
    return std::string(dtype_name(promote_types(parse_dtype(a), parse_dtype(b))));
  });
  m.def("scalar_dtype", [](py::handle v) {
    ScalarKind k = py::isinstance<py::bool_>(v) ? ScalarKind::kBool
                                                : (py::isinstance<py::int_>(v) ? ScalarKind::kInt : ScalarKind::kFloat);
    return std::string(dtype_name(scalar_dtype(k)));
  });
  // The loops of nl.affine_range / nl.sequential_range (Launch::loop_begin): the Python iterator
  // calls loop_begin once, loop_next before each iteration, loop_done after the last and loop_end
  // when the loop is left. The current dialect unrolls loops with Python's scoping.
  m.def(
      "loop_begin",
      [](bool affine, bool scoped) {
        return launch_or_raise(affine ? "affine_range" : "sequential_range").loop_begin(affine, scoped);
      },
      py::arg("affine"), py::arg("scoped"));
  m.def("loop_next", [](int64_t id) {
    if (t_launch) check(t_launch->loop_next(id));
  });
  m.def("loop_done", [](int64_t id) {
    if (t_launch) check(t_launch->loop_done(id));
  });
  m.def("loop_end", [](int64_t id) {
    if (t_launch) t_launch->loop_end(id);
  });
  // The two logical cores of an LNC=2 launch (Launch::park / resume; _nkia.multicore schedules them).
  py::class_<Launch::InstanceState, std::shared_ptr<Launch::InstanceState>>(m, "ParkedInstance");
  m.def(
      "begin_instance", [](int64_t i, int64_t rank) { launch_or_raise("an LNC=2 launch").begin_instance(i, rank); },
      py::arg("i"), py::arg("rank") = 0);
  m.def("launch_rank", [] { return launch_or_raise("nki.collectives.rank_id").rank(); });
  m.def("end_instance", [] { check(launch_or_raise("an LNC=2 launch").end_instance()); });
  m.def("park_instance",
        [] { return std::make_shared<Launch::InstanceState>(launch_or_raise("an LNC=2 launch").park()); });
  m.def("resume_instance", [](const std::shared_ptr<Launch::InstanceState>& s) {
    launch_or_raise("an LNC=2 launch").resume(std::move(*s));
  });
  m.def("set_immutable", [](const std::shared_ptr<NkiTensor>& t, bool v) { t->immutable = v; });
  m.def("ndarray", &new_tensor, py::arg("shape"), py::arg("dtype"), py::arg("buffer"), py::arg("name") = "",
        py::arg("blocks") = 0, py::arg("auto_allocated") = true, py::arg("origin") = "explicit",
        py::arg("placement") = py::none());
  // A scratch tile an instruction's emulation read becomes the result the kernel sees.
  m.def("mark_result", [](const std::shared_ptr<NkiTensor>& t) {
    if (t_launch) t_launch->mark_result(t, caller_loc());
  });
  // (file, line) of the innermost frame in the kernel's own files, or None.
  m.def("caller_location", []() -> py::object {
    const SourceLoc loc = caller_loc();
    if (loc.file.empty()) return py::none();
    return py::make_tuple(loc.file, loc.line);
  });
  // A returned output with elements that hold no data: the run's warning (unwritten_output_warning).
  m.def("warn_unwritten_output", [](const std::shared_ptr<NkiTensor>& t, const std::string& file, int line) {
    RunScope* run = current_run();
    if (!run) return;
    if (auto d = unwritten_output_warning(t, SourceLoc{file, line, 0})) run->warnings.add(std::move(*d));
  });
  m.def("constant", [](py::handle arr, const std::string& dtype) {
    exec_or_raise("shared_constant");
    auto t = numpy_to_tensor(arr, dtype, "constant");
    if (!t) raise(t.error());
    return constant_tensor(std::move(*t));
  });
  // nl.static_cast on the host: the values of a NumPy array rounded into an NKI dtype, as a NumPy
  // array (a TypedArray for the types NumPy lacks); the same conversion a kernel argument gets.
  m.def("host_cast", [](py::handle arr, const std::string& dtype) {
    auto t = numpy_to_tensor(arr, dtype, "nl.static_cast");
    if (!t) raise(t.error());
    return tensor_to_numpy(*t);
  });
}

// Called by python_host_init so that the linker keeps this file, and with it the registration of
// the embedded module below, when the host comes from a static library.
void link_nkia_core_module() {}

}  // namespace nki_agent

PYBIND11_EMBEDDED_MODULE(_nkia_core, m) {
  using namespace nki_agent;
  m.doc() = "nki-agent's C++ core, as the NKI modules see it";
  register_tensor_classes(m);
  register_launch(m);
  register_isa(m);
  register_numpy_dtypes(m);
}
