// runtime/worker_env.h — the environment a worker (and so every kernel) runs with.
//
// Kernels are hostile, and whatever is in a process's environment is readable from Python by many
// routes (os.environ, a module's globals found through object.__subclasses__(), ctypes' getenv).
// So a worker never gets the host's environment: it gets one built from an allow-list — fixed
// values for the locale and the numeric libraries' thread pools, and, copied from the host when
// set, only the variables that change how the process itself computes or is checked
// (OpenBLAS's CPU-type overrides, the sanitizers' options). API keys, tokens, paths and every
// other host variable stay out. docs/sandbox.md states the policy.
//
// This file must never copy a host variable that is not on the allow-list below.
#pragma once

#include <string>
#include <vector>

namespace nki_agent {

// The environment for a worker, from `host` (a NULL-terminated array as `environ` is).
std::vector<std::string> worker_environment(const char* const* host);

// Replaces this process's own environment with worker_environment(environ): a worker started by
// other means than WorkerPool (by hand, from a shell full of secrets) holds no host variable
// either. Call before anything (CPython) copies the environment.
void restrict_own_environment();

// The names copied from the host when set; everything else is dropped.
const std::vector<std::string>& worker_environment_passthrough();

}  // namespace nki_agent
