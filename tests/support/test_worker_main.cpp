// nkia-test-worker — the real worker loop (runtime/zygote.h) with the hostile handlers of
// tests/support/hostile_handlers.h, for the sandbox and worker-pool tests. Never shipped.
//
// NKIA_TEST_WORKER_WARMUP=fail makes its warm-up fail (to test how the pool reports that);
// NKIA_TEST_WORKER_WARMUP=hang makes it hang (to test the startup deadline);
// NKIA_TEST_WORKER_WARMUP=thread leaves a thread running (the zygote must refuse to serve).
#include <unistd.h>

#include <thread>

#include <cstdlib>
#include <cstring>

#include "runtime/zygote.h"
#include "support/hostile_handlers.h"

#include <string>

int main(int argc, char** argv) {
  // Read before worker_main() restricts the environment to the allow-list (the pool passes it
  // deliberately, through WorkerPoolOptions::environment).
  static const std::string warmup_mode =
      std::getenv("NKIA_TEST_WORKER_WARMUP") ? std::getenv("NKIA_TEST_WORKER_WARMUP") : "";
  nki_agent::HandlerRegistry registry;
  nki_agent::register_builtin_handlers(registry);
  nki_agent::testing::register_hostile_handlers(registry);
  registry.set_warmup([]() -> nki_agent::Result<void> {
    const std::string& mode = warmup_mode;
    if (mode == "fail")
      return nki_agent::fail("nkia_test_warmup_failed", "the test warm-up failed on purpose", "unset it");
    if (mode == "hang")
      while (true) ::sleep(1000);
    if (mode == "thread")
      std::thread([] {
        while (true) ::sleep(1000);
      }).detach();
    return {};
  });
  return nki_agent::worker_main(argc, argv, registry);
}
