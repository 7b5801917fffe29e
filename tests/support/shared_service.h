// tests/support/shared_service.h — the KernelService a test suite shares: two sandboxed workers
// (the build's own worker program), started once before the suite's first test and stopped after
// its last. Tests that run kernels derive their fixture from SharedServiceTest and use service_.
// A suite that must prepare the workers' environment first calls start_service() itself.
#pragma once

#include <gtest/gtest.h>

#include "runtime/kernel_service.h"

namespace nki_agent::testing {

class SharedServiceTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { start_service(); }
  static void TearDownTestSuite() { stop_service(); }

  static void start_service() {
    KernelServiceOptions o;
    o.workers = 2;
    o.worker_path = NKIA_WORKER_BIN;
    auto s = KernelService::create(o);
    ASSERT_TRUE(s) << s.error().format();
    service_ = s->release();
  }
  static void stop_service() {
    delete service_;
    service_ = nullptr;
  }

  // One kernel run's limits in a test: `seconds` of wall-clock and CPU time, 4 GiB of address space.
  static SandboxLimits limits(double seconds = 5) {
    SandboxLimits l;
    l.wall_seconds = seconds;
    l.cpu_seconds = seconds;
    l.address_space_bytes = int64_t{4} << 30;
    return l;
  }

  static inline KernelService* service_ = nullptr;
};

}  // namespace nki_agent::testing
