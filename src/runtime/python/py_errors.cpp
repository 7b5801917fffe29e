// runtime/python/py_errors.cpp — the pybind11 exception translator of the NKI core
// (runtime/python/py_errors.h).
#include "runtime/python/py_errors.h"

#include <fmt/format.h>
#include <pybind11/pybind11.h>

#include <exception>
#include <new>
#include <string>

#include "core/diagnostic.h"
#include "nki/error_catalogue.h"
#include "runtime/python/launch.h"

namespace py = pybind11;

namespace nki_agent {

namespace {

// _nkia_core.InternalError: an Exception subclass whose class attributes `code` and `hint` are
// what runner.py's _describe reads from any exception.
PyObject* g_internal_error = nullptr;

[[noreturn]] void raise_internal(const std::string& what) {
  Diagnostic d = nki_error(kInternalErrorCode, fmt::format("internal error in nki-agent's core: {}", what));
  // Caught by the kernel, it still ends the run: whatever the kernel does next runs on a core that
  // just broke an invariant.
  if (RunScope* run = current_run(); run != nullptr && !run->fatal) run->fatal = d;
  PyErr_SetString(g_internal_error, d.message.c_str());
  throw py::error_already_set();
}

void translate(std::exception_ptr p) {
  try {
    std::rethrow_exception(p);
  } catch (const py::builtin_exception&) {
    throw;  // a deliberate Python error: pybind11 translates it
  } catch (const std::bad_alloc&) {
    throw;  // MemoryError: the runner reports the sandbox's memory limit
  } catch (const InternalError& e) {
    raise_internal(e.what());
  } catch (const std::exception& e) {
    raise_internal(e.what());
  }
}

}  // namespace

void register_core_exception_translator() {
  if (g_internal_error != nullptr) return;
  const ErrorInfo* info = find_error(kInternalErrorCode);
  NKIA_ASSERT(info != nullptr);
  py::dict attrs;
  attrs["code"] = py::str(std::string(info->code));
  attrs["hint"] = py::str(std::string(info->hint));
  g_internal_error = PyErr_NewExceptionWithDoc(
      "_nkia_core.InternalError", "A failure inside nki-agent's C++ core: a bug in nki-agent, not in the kernel.",
      PyExc_Exception, attrs.ptr());
  if (g_internal_error == nullptr) throw py::error_already_set();
  py::register_exception_translator(translate);
}

}  // namespace nki_agent
