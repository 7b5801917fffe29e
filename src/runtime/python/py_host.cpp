#include "runtime/python/py_host.h"

#include <fmt/format.h>
#include <pybind11/embed.h>
#include <pybind11/stl.h>

#include <malloc.h>

#include <filesystem>
#include <map>

#include "nki/nki_tensor.h"
#include "nki/target.h"
#include "nki/written.h"
#include "runtime/python/launch.h"
#include "runtime/python/py_convert.h"
#include "runtime/python/py_errors.h"
#include "runtime/python/pylib.h"
#include "runtime/python/replay.h"
#include "runtime/python/warm_up.h"
#include "runtime/shared_memory.h"

namespace py = pybind11;
namespace fs = std::filesystem;

namespace nki_agent {

void link_nkia_core_module();  // py_core.cpp

namespace {

// Serves the embedded pylib sources as modules, then warms the interpreter up: NumPy, the NKI
// modules and the allow-listed standard modules are imported now, so a forked child finds them in
// sys.modules and never needs the file system.
constexpr const char* kBootstrap = R"py(
import sys, importlib.abc, importlib.util

class _PylibFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, files):
        self.mods = {}
        for path, src in files.items():
            name, pkg = path[:-3].replace("/", "."), False
            if name.endswith(".__init__"):
                name, pkg = name[: -len(".__init__")], True
            self.mods[name] = (path, src, pkg)

    def find_spec(self, fullname, path=None, target=None):
        m = self.mods.get(fullname)
        if m is None:
            return None
        spec = importlib.util.spec_from_loader(fullname, self, is_package=m[2])
        spec.origin = "<nki-agent>/" + m[0]
        return spec

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        path, src, _ = self.mods[module.__name__]
        module.__file__ = "<nki-agent>/" + path
        exec(compile(src, module.__file__, "exec", dont_inherit=True), module.__dict__)

sys.meta_path.insert(0, _PylibFinder(_pylib_files))
sys.dont_write_bytecode = True

import numpy
import _nkia.policy, _nkia.loader, _nkia.kernel, _nkia.runner
import nki, nki.language, nki.isa, nki.typing, nki.compiler
import neuronxcc.nki, neuronxcc.nki.language, neuronxcc.nki.isa, neuronxcc.nki.typing, neuronxcc.nki.compiler
_nkia.policy.preload()
_nkia.policy.install()
)py";

bool g_ready = false;
Result<void> g_init_result;
thread_local RunScope* t_run = nullptr;

Diagnostic python_error(const char* what, const py::error_already_set& e) {
  return Diagnostic::error("nkia_internal_python", fmt::format("{}: {}", what, e.what()),
                           "this is a bug in nki-agent's kernel host; please report it");
}

std::string input_name(const KernelCall& call, size_t i) {
  return i < call.input_names.size() ? call.input_names[i] : std::string();
}

}  // namespace

std::shared_ptr<NkiTensor> run_argument(const Tensor& t, std::string name) {
  const auto* shared = dynamic_cast<const SharedMemory*>(t.storage() ? t.storage()->external().get() : nullptr);
  const bool own_copy = shared != nullptr && shared->writable() && shared->fd() < 0 && t.is_contiguous();
  return argument_tensor(own_copy ? t : t.copy(), std::move(name));
}

OutputStores output_stores_of(const NkiTensor& t) {
  OutputStores stores;
  stores.known = true;
  stores.unstored = unstored_runs(t, kMaxUnstoredRuns + 1);
  stores.truncated = stores.unstored.size() > kMaxUnstoredRuns;
  if (stores.truncated) stores.unstored.resize(kMaxUnstoredRuns);
  return stores;
}

// The warm-up (runtime/python/warm_up.h): whatever CPython, NumPy and the pylib initialise lazily is
// initialised here, once, and not again in every forked child.
static void warm_up_paths() {
  for (const KernelCall& c : warm_up_calls()) (void)python_run(c);
}

// ---- the interpreter ----------------------------------------------------------------------------

Result<void> python_host_init() {
  if (g_ready) return g_init_result;
  g_ready = true;
  // Kernels allocate and drop tiles of up to megabytes at a high rate. By default glibc maps each
  // large block anew and unmaps it when freed, so every tile costs page faults on fresh, zeroed
  // pages (half the time of a tiled matmul, docs/perf.md); keeping freed blocks up to 32 MiB in the
  // heap (and up to 1 GiB of free heap before trimming) lets the next tile reuse them.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  link_nkia_core_module();
  try {
    // Isolated from PYTHON* environment variables and the user's site, with Debian's python3.11
    // as the program: its prefix holds the stdlib and NumPy, whatever python3 is first on PATH.
    PyConfig config;
    PyConfig_InitIsolatedConfig(&config);
    config.install_signal_handlers = 0;
    PyStatus status = PyConfig_SetString(&config, &config.program_name, L"" NKIA_EMBED_PYTHON);
    if (PyStatus_Exception(status)) {
      PyConfig_Clear(&config);
      g_init_result = fail(
          Diagnostic::error("nkia_internal_python", "configuring the embedded Python failed", "reinstall python3.11"));
      return g_init_result;
    }
    py::initialize_interpreter(&config, 0, nullptr, /*add_program_dir_to_path=*/false);
    py::dict files;
    for (const auto& f : pylib_files()) files[py::str(std::string(f.path))] = py::str(std::string(f.source));
    py::dict g = py::module_::import("__main__").attr("__dict__");
    g["_pylib_files"] = files;
    py::exec(kBootstrap, g);
    register_core_exception_translator();
    g_init_result = {};
    warm_up_paths();
    // Everything that exists now is shared with every forked child. Freezing it keeps the
    // collector from walking (and so copying, page by page) those objects in each child.
    py::module_ gc = py::module_::import("gc");
    gc.attr("collect")();
    gc.attr("freeze")();
  } catch (const py::error_already_set& e) {
    g_init_result = fail(python_error("starting the kernel host failed", e));
  } catch (const std::exception& e) {
    g_init_result = fail(Diagnostic::error("nkia_internal_python", fmt::format("starting Python failed: {}", e.what()),
                                           "check that python3.11 and python3-numpy are installed"));
  }
  return g_init_result;
}

bool python_host_ready() {
  return g_ready && g_init_result.has_value();
}

// ---- runs and their launches ---------------------------------------------------------------------

RunScope* current_run() {
  return t_run;
}

void begin_launch(Launch& launch) {
  if (!t_run) return;
  launch.exec.target = t_run->target;
  launch.exec.compute = t_run->compute;
  launch.exec.eager_state = t_run->eager_state;
  launch.exec.trace.set_recording(t_run->collect_trace);
}

void end_launch(Launch& launch) noexcept {
  if (!t_run) return;
  if (t_run->collect_trace) t_run->trace.append(std::move(launch.exec.trace));
  t_run->warnings.merge(std::move(launch.exec.warnings));
}

Result<KernelOutcome> python_run(const KernelCall& call, Recording* record) {
  if (!python_host_ready()) return fail("nkia_internal_python", "python_run before python_host_init");
  RunScope scope;
  if (!call.target.empty()) {
    auto target = target_by_name(call.target);
    if (!target) return fail(target.error());
    scope.target = *target;
  }
  scope.compute = call.compute;
  scope.collect_trace = call.collect_trace;
  scope.eager_state = call.eager_state;
  scope.recording = record;
  if (t_run) return fail("nkia_internal_python", "python_run inside another python_run");
  t_run = &scope;
  struct Reset {
    ~Reset() { t_run = nullptr; }
  } reset;
  try {
    py::dict files;
    for (const auto& [p, s] : call.src.files) files[py::str(p)] = py::str(s);
    // The inputs enter as HBM tensors of the core, never as NumPy arrays: a kernel entry gets them
    // as they are (no array holding their values exists for kernel code to find), and the runner
    // turns them into arrays only for a host function.
    py::list args;
    for (size_t i = 0; i < call.inputs.size(); ++i) {
      auto t = run_argument(call.inputs[i], input_name(call, i));
      if (record) record->add_input(t);
      args.append(py::cast(std::move(t)));
    }
    // Zero inputs are the kernel's own from the start (no copy): fresh memory, which costs no page
    // until something writes it.
    for (size_t i = 0; i < call.zero_inputs.size(); ++i) {
      auto t = argument_tensor(Tensor::zeros(call.zero_inputs[i].shape, call.zero_inputs[i].dtype),
                               input_name(call, call.inputs.size() + i));
      if (record) record->add_input(t);
      args.append(py::cast(std::move(t)));
    }
    py::dict kwargs;
    for (const auto& [k, v] : call.kwargs) kwargs[py::str(k)] = py::str(v);
    py::object run = py::module_::import("_nkia.runner").attr("run");
    py::tuple r = run(files, call.src.main_path, call.entry, args, py::cast(call.input_names), kwargs,
                      py::cast(call.grid), call.kernel_only);
    const std::string status = r[0].cast<std::string>();
    // A failure that ends the run (RunScope::fatal) is its verdict even when the kernel caught it.
    auto fatal = [&]() {
      Diagnostic d = std::move(*scope.fatal);
      if (!d.loc.file.empty()) d.loc.file = call.src.real_path(d.loc.file);
      return fail(std::move(d));
    };
    if (scope.fatal && (status == "ok" || r[1].cast<py::dict>()["code"].cast<std::string>() != scope.fatal->code))
      return fatal();
    KernelOutcome out;
    out.printed = r[2].cast<std::string>();
    for (py::handle n : r[3].cast<py::list>()) {
      Diagnostic note = Diagnostic::error("nkia_inputs_bound_by_position", n.cast<std::string>(),
                                          "name the inputs after the entry's parameters to bind them by name");
      note.severity = Severity::kNote;
      scope.warnings.add(std::move(note));
    }
    if (status != "ok") {
      py::dict d = r[1].cast<py::dict>();
      Diagnostic diag = Diagnostic::error(d["code"].cast<std::string>(), d["message"].cast<std::string>(),
                                          d["hint"].cast<std::string>());
      std::string file = d["file"].cast<std::string>();
      if (!file.empty()) diag.at({call.src.real_path(file), d["line"].cast<int>(), d["col"].cast<int>()});
      for (auto n : d["notes"]) diag.with_note(n.cast<std::string>());
      if (!out.printed.empty()) diag.with_note("printed before the error:\n" + out.printed);
      return fail(std::move(diag));
    }
    int idx = 0;
    std::vector<std::shared_ptr<NkiTensor>> returned;  // for the recording: null for what is no tensor
    for (py::handle o : r[1].cast<py::list>()) {
      OutputStores stores;
      returned.push_back(py::isinstance<NkiTensor>(o) ? o.cast<std::shared_ptr<NkiTensor>>() : nullptr);
      if (py::isinstance<NkiTensor>(o))  // which elements the kernel stored to, before the copy
        stores = output_stores_of(o.cast<const NkiTensor&>());
      auto t = object_to_tensor(o, fmt::format("output {}", idx));
      if (!t) return fail(t.error());
      out.output_stores.push_back(std::move(stores));
      out.output_specs.push_back({fmt::format("out{}", idx++), t->dtype(), t->shape()});
      if (call.want_outputs && !call.compute) {  // a timing-only run computed no values: they read as poison
        Tensor none = Tensor::uninitialized(t->shape(), t->dtype());
        poison(none);
        out.outputs.push_back(std::move(none));
      } else if (call.want_outputs) {
        out.outputs.push_back(std::move(*t));
      }
    }
    // Records name the kernel's files as the interpreter knows them (relative to the root): give
    // them the paths Diagnostics carry.
    out.trace = std::move(scope.trace);
    if (!call.src.root.empty() || !call.src.roots.empty()) {
      std::map<std::string, std::string> full;
      for (auto& rec : out.trace.mutable_records()) {
        if (rec.loc.file.empty()) continue;
        auto [it, added] = full.try_emplace(rec.loc.file);
        if (added) it->second = call.src.real_path(rec.loc.file);
        rec.loc.file = it->second;
      }
    }
    out.warnings = scope.warnings.take();
    for (Diagnostic& w : out.warnings)
      if (!w.loc.file.empty()) w.loc.file = call.src.real_path(w.loc.file);
    if (record) record->finish(returned, out);
    return out;
  } catch (const py::error_already_set& e) {
    return fail(python_error("running the kernel failed inside the host", e));
  }
}

}  // namespace nki_agent
