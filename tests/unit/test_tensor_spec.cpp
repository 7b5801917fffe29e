// "name=dtype[d0,d1]" specs, as the CLI takes them.
#include <gtest/gtest.h>

#include "tensor/tensor_spec.h"

namespace nki_agent {
namespace {

TEST(TensorSpec, ParsesNameTypeAndShape) {
  auto s = parse_tensor_spec("a=bfloat16[128,512]");
  ASSERT_TRUE(s) << s.error().format();
  EXPECT_EQ(s->name, "a");
  EXPECT_EQ(s->dtype, DType::kBFloat16);
  EXPECT_EQ(s->shape, (Shape{128, 512}));
  EXPECT_EQ(s->to_string(), "a=bfloat16[128, 512]");
}

TEST(TensorSpec, AcceptsAliasesSpacesScalarsAndTrailingComma) {
  auto s = parse_tensor_spec("  x_1 = fp8_e4m3 [ 4 , 8 ] ");
  ASSERT_TRUE(s) << s.error().format();
  EXPECT_EQ(s->name, "x_1");
  EXPECT_EQ(s->dtype, DType::kFloat8E4M3);
  EXPECT_EQ(s->shape, (Shape{4, 8}));
  auto scalar = parse_tensor_spec("s=float32[]");
  ASSERT_TRUE(scalar);
  EXPECT_TRUE(scalar->shape.empty());
  auto one = parse_tensor_spec("v=int32[5,]");
  ASSERT_TRUE(one);
  EXPECT_EQ(one->shape, (Shape{5}));
}

TEST(TensorSpec, RejectsMalformedSpecsWithAHint) {
  for (const char* bad :
       {"", "a", "=float32[1]", "a=float32", "a=float64[2]", "a=float32[2,x]", "a=float32[-1]", "a b=float32[1]",
        "a=float32[1,,2]", "a=float32[65536,65536,2]", "a=float32[99999999999999999999]"}) {
    auto s = parse_tensor_spec(bad);
    ASSERT_FALSE(s) << bad;
    EXPECT_EQ(s.error().code, "nkia_bad_tensor_spec") << bad;
    EXPECT_FALSE(s.error().hint.empty());
  }
}

}  // namespace
}  // namespace nki_agent
