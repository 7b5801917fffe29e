#include "runtime/worker_env.h"

#include <cstdlib>
#include <cstring>
#include <string_view>

extern char** environ;  // NOLINT: POSIX declares it nowhere in a header

namespace nki_agent {
namespace {

// Set to these values whatever the host has. The thread pools must be one thread at spawn time: a
// BLAS linked into the worker starts its pool before main(), and a zygote must be single-threaded.
// malloc advises transparent huge pages for its large blocks (glibc 2.35+; older ones ignore the
// tunable): the buffers of a large case (outputs, replies, the simulator's per-element state) fault
// once per 2 MiB instead of once per 4 KiB page, which on a virtual machine is most of their cost.
constexpr std::string_view kFixed[] = {
    "LANG=C.UTF-8",
    "LC_ALL=C.UTF-8",
    "PATH=/usr/bin:/bin",
    "OPENBLAS_NUM_THREADS=1",
    "OMP_NUM_THREADS=1",
    "MKL_NUM_THREADS=1",
    "GLIBC_TUNABLES=glibc.malloc.hugetlb=1",
};

}  // namespace

const std::vector<std::string>& worker_environment_passthrough() {
  // OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE: some machines need them for OpenBLAS to pick a kernel
  // that computes correctly. The sanitizer options: how a sanitizer build reports and suppresses.
  static const std::vector<std::string> names = {"OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "ASAN_OPTIONS",
                                                 "UBSAN_OPTIONS",     "LSAN_OPTIONS",     "TSAN_OPTIONS"};
  return names;
}

std::vector<std::string> worker_environment(const char* const* host) {
  std::vector<std::string> env;
  for (auto f : kFixed) env.emplace_back(f);
  if (host == nullptr) return env;
  for (const char* const* e = host; *e != nullptr; ++e) {
    const std::string_view kv(*e);
    const size_t eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view name = kv.substr(0, eq);
    for (const std::string& allowed : worker_environment_passthrough())
      if (name == allowed) {
        env.emplace_back(kv);
        break;
      }
  }
  return env;
}

void restrict_own_environment() {
  std::vector<std::string> env = worker_environment(environ);
  // The original strings (on the initial stack, where /proc/self/environ also reads them) are
  // wiped, not only unlinked: memory that kernel code can read must not keep them.
  for (char** e = environ; e != nullptr && *e != nullptr; ++e)
    for (char* c = *e; *c != '\0'; ++c) *c = '\0';
  ::clearenv();
  for (const std::string& kv : env) {
    const size_t eq = kv.find('=');
    ::setenv(kv.substr(0, eq).c_str(), kv.c_str() + eq + 1, 1);
  }
}

}  // namespace nki_agent
