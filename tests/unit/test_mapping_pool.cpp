// core/mapping_pool.h: a mapping given back serves the next request of its size; a forked child
// starts with an empty pool and never sees what the parent's idle mappings held; large tensor
// storage goes through the pool.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "core/huge_pages.h"
#include "core/mapping_pool.h"
#include "tensor/tensor.h"

namespace nki_agent {
namespace {

constexpr size_t kBytes = 6 * kHugePageBytes;

TEST(MappingPool, AGivenMappingServesTheNextRequestOfItsSize) {
  PooledMapping a = take_mapping(kBytes);
  ASSERT_NE(a.data, nullptr);
  std::memset(a.data, 0x5a, kBytes);
  give_mapping(a.data, kBytes);
  PooledMapping other = take_mapping(kBytes + kHugePageBytes);  // another size: fresh memory
  ASSERT_NE(other.data, nullptr);
  EXPECT_FALSE(other.reused);
  EXPECT_EQ(static_cast<unsigned char*>(other.data)[0], 0);
  PooledMapping b = take_mapping(kBytes);
  EXPECT_TRUE(b.reused);
  EXPECT_EQ(b.data, a.data);
  EXPECT_EQ(static_cast<unsigned char*>(b.data)[kBytes - 1], 0x5a);  // what it held: the caller's to clear
  give_mapping(b.data, kBytes);
  give_mapping(other.data, kBytes + kHugePageBytes);
}

TEST(MappingPool, AForkedChildStartsEmptyAndCannotReachTheIdleMappings) {
  PooledMapping a = take_mapping(kBytes);
  ASSERT_NE(a.data, nullptr);
  std::memset(a.data, 0x77, kBytes);
  give_mapping(a.data, kBytes);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    PooledMapping c = take_mapping(kBytes);  // the parent's idle mapping is not the child's
    int code = c.data == nullptr ? 2 : (c.reused ? 3 : 0);
    if (code == 0 && static_cast<unsigned char*>(c.data)[0] != 0) code = 4;
    give_mapping(c.data, kBytes);
    ::_exit(code);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  PooledMapping b = take_mapping(kBytes);  // still the parent's
  EXPECT_TRUE(b.reused);
  EXPECT_EQ(static_cast<unsigned char*>(b.data)[0], 0x77);
  give_mapping(b.data, kBytes);
}

TEST(MappingPool, LargeTensorsReuseMemoryAndZerosStayZero) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "under AddressSanitizer every storage is a heap allocation";
#endif
  const Shape shape{3, 1024, 1024};  // 12 MiB of float32
  const uint8_t* first = nullptr;
  {
    Tensor t = Tensor::full(shape, DType::kFloat32, 7.0);
    first = static_cast<const uint8_t*>(t.data());
  }
  Tensor z = Tensor::zeros(shape, DType::kFloat32);
  EXPECT_EQ(static_cast<const uint8_t*>(z.data()), first);  // the same memory, zeroed again
  const auto* v = z.data_as<float>();
  for (int64_t i = 0; i < z.numel(); i += 4099) ASSERT_EQ(v[i], 0.0f) << i;
  EXPECT_EQ(v[z.numel() - 1], 0.0f);
}

}  // namespace
}  // namespace nki_agent
