// runtime/python/py_core.h — what the files of the `_nkia_core` module share (internal to
// runtime/python; needs pybind11): raising a Diagnostic as the kernel's NkiError, the kernel's
// source location, the launch running on this thread, and Python objects as operands.
//
// The module is conversion only: Python objects become the core's types (Access, Shape, DType,
// Buffer, ...), the core (nki/launch.h, nki/views.h, nki/isa.h) applies the rules, and a failure
// comes back here to be raised. No NKI rule is written in these files.
#pragma once

#include <pybind11/pybind11.h>

#include <string>
#include <string_view>

#include "nki/launch.h"

namespace nki_agent {

// A failed rule becomes the Python exception _nkia.errors.NkiError(code, message, hint); it unwinds
// through the kernel's frames, so the runner reports it at the kernel's own line. A Diagnostic that
// carries its own location (a rule about the kernel as a whole, found after it ran) keeps it: the
// runner reports NkiError.loc instead of the raising line.
[[noreturn]] void raise(const Diagnostic& d);
inline void check(const Result<void>& r) {
  if (!r) raise(r.error());
}
template <class T>
T check(Result<T> r) {
  if (!r) raise(r.error());
  return std::move(*r);
}
// A Diagnostic whose message depends on the values of a tensor (an index a tile held) ends the run
// whatever the kernel does with its exception: caught and parsed, it would let kernel code read
// values (docs/sandbox.md, "Values at trace time"). The run reports it (RunScope::fatal).
void end_run_with(const Diagnostic& d);

// The innermost frame in the kernel's own files: where an instruction is issued from.
SourceLoc caller_loc();

// The launch running on this thread, or err_nki_api_outside_of_nki_kernel naming `api`.
Launch& launch_or_raise(const char* api);
// The running launch's context for an instruction recorded for replays (runtime/python/replay.h:
// issued through issue(), its operands admitted by to_access).
inline ExecContext& instruction_exec(const char* api) {
  return launch_or_raise(api).exec;
}
// The running launch's context for anything else; a run that reaches the core this way is not
// replayed (Recording::taint).
ExecContext& exec_or_raise(const char* api);

// A kernel never sees its tensors' values (docs/sandbox.md, "Values at trace time"): inside a
// launch, or anywhere in a run whose entry is the kernel itself, reading them from Python is
// refused. Every route to values from Python comes through here.
void refuse_value_read_in_kernel(const char* what);

// A Python operand (a View, a Tensor, or a deferred result holding one in `_nkia_tile`) as the
// instruction's operand `role`, admitted by the running launch (Launch::admit).
Access to_access(pybind11::handle h, const char* role);

// The names the front end passes.
Buffer parse_buffer(const std::string& name);
DType parse_dtype(const std::string& name);

// The parts of the module, each registering its functions and classes.
void register_tensor_classes(pybind11::module_& m);  // py_tensor.cpp: Tensor, View
void register_launch(pybind11::module_& m);          // py_core.cpp: launches, loops, tensors
void register_isa(pybind11::module_& m);             // py_isa.cpp: the instructions
void register_numpy_dtypes(pybind11::module_& m);    // py_numpy_dtypes.cpp: NumPy dtypes of nl types

}  // namespace nki_agent
