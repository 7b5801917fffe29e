// The process's cache of generated inputs (tasks/input_cache.h): the same bits generate_input()
// draws, kept as sealed shared memory, bounded, least recently used evicted first.
#include <gtest/gtest.h>

#include "runtime/shared_memory.h"
#include "tasks/input_cache.h"

namespace nki_agent {
namespace {

TaskArg arg(const std::string& name) {
  TaskArg a;
  a.name = name;
  a.torch_dtype = "float32";
  return a;
}

bool in_sealed_memory(const Tensor& t) {
  const auto* m = dynamic_cast<const SharedMemory*>(t.storage()->external().get());
  return m != nullptr && m->sealed();
}

TEST(InputCache, GivesGenerateInputsBitsAndKeepsThem) {
  InputCache cache(int64_t{64} << 20);
  const Shape big{1024, 512};  // 2 MiB of float32
  const Tensor first = cache.input(arg("x"), big, 3, InputProfile::kLarge, "prompt", 100);
  const Tensor drawn = generate_input(arg("x"), big, 3, InputProfile::kLarge, "prompt", 100);
  EXPECT_EQ(first.to_f32_vector(), drawn.to_f32_vector());
  EXPECT_TRUE(in_sealed_memory(first));
  const Tensor again = cache.input(arg("x"), big, 3, InputProfile::kLarge, "prompt", 100);
  EXPECT_EQ(again.storage(), first.storage());  // the same pages, not a new draw
  EXPECT_EQ(cache.stats().hits, 1);
  EXPECT_EQ(cache.stats().misses, 1);
  // Every coordinate of the draw is part of the key.
  EXPECT_NE(cache.input(arg("x"), big, 4, InputProfile::kLarge, "prompt", 100).storage(), first.storage());
  EXPECT_NE(cache.input(arg("y"), big, 3, InputProfile::kLarge, "prompt", 100).storage(), first.storage());
  EXPECT_NE(cache.input(arg("x"), big, 3, InputProfile::kNormal, "prompt", 100).storage(), first.storage());
  EXPECT_NE(cache.input(arg("x"), big, 3, InputProfile::kLarge, "ragged", 100).storage(), first.storage());
  EXPECT_NE(cache.input(arg("x"), big, 3, InputProfile::kLarge, "prompt", 4).storage(), first.storage());
  TaskArg ranged = arg("x");
  ranged.dist = Dist::kUniform;
  ranged.low = 0;
  ranged.high = 2;
  EXPECT_NE(cache.input(ranged, big, 3, InputProfile::kLarge, "prompt", 100).storage(), first.storage());
  EXPECT_EQ(cache.stats().misses, 7);
}

TEST(InputCache, SmallInputsAreDrawnEachTime) {
  InputCache cache(int64_t{64} << 20);
  const Tensor a = cache.input(arg("x"), {16, 16}, 0, InputProfile::kNormal, "prompt", 100);
  const Tensor b = cache.input(arg("x"), {16, 16}, 0, InputProfile::kNormal, "prompt", 100);
  EXPECT_NE(a.storage(), b.storage());
  EXPECT_EQ(a.to_f32_vector(), b.to_f32_vector());
  EXPECT_EQ(cache.stats().entries, 0);
}

TEST(InputCache, StaysWithinItsBudget) {
  InputCache cache(int64_t{5} << 20);  // two 2 MiB inputs fit, three do not
  const Shape big{1024, 512};
  const Tensor s0 = cache.input(arg("x"), big, 0, InputProfile::kNormal, "prompt", 100);
  (void)cache.input(arg("x"), big, 1, InputProfile::kNormal, "prompt", 100);
  (void)cache.input(arg("x"), big, 0, InputProfile::kNormal, "prompt", 100);  // seed 0 used last
  (void)cache.input(arg("x"), big, 2, InputProfile::kNormal, "prompt", 100);  // evicts seed 1
  EXPECT_EQ(cache.stats().entries, 2);
  EXPECT_LE(cache.stats().bytes, int64_t{5} << 20);
  EXPECT_EQ(cache.input(arg("x"), big, 0, InputProfile::kNormal, "prompt", 100).storage(), s0.storage());
  const int64_t misses = cache.stats().misses;
  (void)cache.input(arg("x"), big, 1, InputProfile::kNormal, "prompt", 100);
  EXPECT_EQ(cache.stats().misses, misses + 1);  // it was evicted
  InputCache off(0);
  (void)off.input(arg("x"), big, 0, InputProfile::kNormal, "prompt", 100);
  EXPECT_EQ(off.stats().entries, 0);
}

}  // namespace
}  // namespace nki_agent
