// runtime/python/py_errors.h — how a C++ failure inside the NKI core reaches kernel code.
//
// A kernel's mistakes leave the core as Diagnostics and enter Python as _nkia.errors.NkiError with
// their code (py_core.cpp). Anything else that escapes the core while an instruction runs — an
// InternalError (a broken invariant), a std:: exception from a library, a precondition of the
// tensor library that no coded check caught — is a bug in nki-agent, not in the kernel. The
// translator registered here turns each of those into the Python exception
// `_nkia_core.InternalError`, whose `code` is nkia_internal: the runner reports it under that code
// (never as the kernel's own nkia_python_exception), the run ends with it even when the kernel
// catches it, and the CLI exits with code 3.
//
// pybind11's own exceptions (py::value_error, py::cast_error, …: deliberate Python errors) and
// std::bad_alloc (MemoryError: the sandbox's memory limit) keep their usual translation.
// Registering does no I/O and needs the interpreter running.
#pragma once

namespace nki_agent {

// Registers the translator; call once, after the interpreter started (python_host_init).
void register_core_exception_translator();

}  // namespace nki_agent
