// nki-agent-worker — the warm worker (zygote) program nki-agent's WorkerPool starts.
//
// It serves sandboxed requests over the socket at fd 3 (runtime/zygote.h): the built-in handlers
// and the embedded CPython kernel host's "kernel" handler, whose warm-up imports CPython, NumPy
// and the NKI modules once so that every forked child starts warm. Hostile test handlers never go
// in this program: they live in tests/support/test_worker_main.cpp (nkia-test-worker).
#include "runtime/python/kernel_handler.h"
#include "runtime/zygote.h"

int main(int argc, char** argv) {
  nki_agent::HandlerRegistry registry;
  nki_agent::register_builtin_handlers(registry);
  nki_agent::register_kernel_handler(registry);
  return nki_agent::worker_main(argc, argv, registry);
}
