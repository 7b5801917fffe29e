// runtime/python/kernel_handler.h — plugs the embedded CPython kernel host into a worker program:
// the warm-up starts the interpreter (so every forked child is warm) and the "kernel" handler runs
// one encoded KernelCall inside the sandboxed child.
#pragma once

#include "runtime/zygote.h"

namespace nki_agent {

void register_kernel_handler(HandlerRegistry& registry);

}  // namespace nki_agent
