// nkia-shards: 2 (short tests, each of which would otherwise start a process of its own)
//
// tests/unit/test_npy.cpp — .npy reading and writing: in-process round trips, the header format,
// NumPy interop both ways (tests/oracle/npy_roundtrip.py), and hostile input.
#include "tensor/npy.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/python_oracle.h"
#include "tensor/rng.h"

namespace nki_agent {
namespace {

using testing::ScratchDir;

const std::vector<DType> kAllDTypes = {DType::kFloat32,    DType::kBFloat16,     DType::kFloat16,    DType::kTFloat32,
                                       DType::kFloat8E4M3, DType::kFloat8E4M3FN, DType::kFloat8E5M2, DType::kInt8,
                                       DType::kInt16,      DType::kInt32,        DType::kUInt8,      DType::kUInt16,
                                       DType::kUInt32,     DType::kBool};

bool is_narrow(DType d) {
  return d == DType::kBFloat16 || d == DType::kTFloat32 || d == DType::kFloat8E4M3 || d == DType::kFloat8E4M3FN ||
         d == DType::kFloat8E5M2;
}

// Element bits in C order, widened to uint64.
std::vector<uint64_t> bits_of(const Tensor& t) {
  const Tensor c = t.contiguous();
  const auto* p = static_cast<const uint8_t*>(c.data());
  const auto isz = static_cast<size_t>(c.itemsize());
  std::vector<uint64_t> out(static_cast<size_t>(c.numel()));
  for (size_t i = 0; i < out.size(); ++i) std::memcpy(&out[i], p + i * isz, isz);
  return out;
}

// Deterministic contents for any dtype: random values over the type's range plus float specials.
Tensor sample(const Shape& shape, DType d, uint64_t seed) {
  Rng r(seed, static_cast<uint64_t>(d));
  Tensor t = Tensor::empty(shape, d);
  if (dtype_is_float(d)) {
    r.fill_normal(t, 0.0, 4.0);
    if (t.numel() >= 4) {
      Tensor flat = t.reshape({-1});
      const float specials[] = {std::numeric_limits<float>::quiet_NaN(), -0.0f, std::numeric_limits<float>::infinity(),
                                -1e-30f};
      for (int64_t i = 0; i < 4; ++i) {
        const int64_t idx[] = {i * 3 % t.numel()};
        flat.set_f32(idx, specials[i]);
      }
    }
  } else {
    const IntRange range = int_dtype_range(d);
    r.fill_integers(t, range.lo, range.hi + 1);
  }
  return t;
}

// Loaded tensors are C-contiguous. (Zero-size ones are skipped: Tensor::is_contiguous() says false
// for the strides Tensor::empty() gives a shape like {3, 0}.)
bool c_order(const Tensor& t) {
  return t.numel() == 0 || t.is_contiguous();
}

void expect_same_tensor(const Tensor& got, const Tensor& want, const std::string& what) {
  EXPECT_EQ(got.dtype(), want.dtype()) << what;
  EXPECT_EQ(got.shape(), want.shape()) << what;
  EXPECT_TRUE(c_order(got)) << what;
  EXPECT_EQ(bits_of(got), bits_of(want)) << what;
}

// A whole .npy file around `header` (padded with spaces and '\n' to 64 bytes unless raw) and `data`.
std::vector<uint8_t> make_npy(std::string header, const std::vector<uint8_t>& data, int major = 1, bool raw = false) {
  const size_t pre = major == 1 ? 10 : 12;
  if (!raw) {
    const size_t hlen = header.size() + 1;
    header.append((64 - (pre + hlen) % 64) % 64, ' ');
    header += '\n';
  }
  std::vector<uint8_t> f = {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<uint8_t>(major), 0};
  for (size_t b = 0; b < pre - 8; ++b) f.push_back(static_cast<uint8_t>(header.size() >> (8 * b)));
  f.insert(f.end(), header.begin(), header.end());
  f.insert(f.end(), data.begin(), data.end());
  return f;
}

template <typename T>
std::vector<uint8_t> bytes_of(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

std::string header_of(const std::vector<uint8_t>& file) {
  const size_t pre = file[6] == 1 ? 10 : 12;
  size_t len = file[8] | file[9] << 8;
  if (pre == 12) len |= size_t{file[10]} << 16 | size_t{file[11]} << 24;
  return std::string(file.begin() + static_cast<long>(pre), file.begin() + static_cast<long>(pre + len));
}

Result<Tensor> parse(const std::vector<uint8_t>& b) {
  return npy_parse(b, "test.npy");
}

void expect_code(const Result<Tensor>& r, const std::string& code, const std::string& what = "") {
  ASSERT_FALSE(r.has_value()) << what << ": expected " << code;
  EXPECT_EQ(r.error().code, code) << what << ": " << r.error().format();
  EXPECT_FALSE(r.error().message.empty()) << what;
}

// ---- in-process round trips ---------------------------------------------------------------------

TEST(NpyRoundTrip, EveryDTypeAndShape) {
  const std::vector<Shape> shapes = {{}, {1}, {7}, {3, 5}, {2, 3, 4}, {0}, {4, 0, 3}, {1, 1, 1, 1, 2}};
  for (DType d : kAllDTypes)
    for (const Shape& s : shapes) {
      const Tensor t = sample(s, d, 1);
      const std::vector<uint8_t> file = npy_serialize(t);
      Result<Tensor> back = parse(file);
      ASSERT_TRUE(back.has_value()) << dtype_name(d) << shape_str(s) << ": " << back.error().format();
      expect_same_tensor(*back, t, std::string(dtype_name(d)) + shape_str(s));
    }
}

TEST(NpyRoundTrip, AppendWritesTheSerializedBytesAndSizeSaysHowMany) {
  for (DType d : kAllDTypes)
    for (NarrowAs narrow : {NarrowAs::kRawBits, NarrowAs::kFloat32}) {
      const Tensor base = sample({6, 5, 4}, d, 3);
      for (const Tensor& t : {base, base.transpose(), base.slice(1, 1, 4)}) {
        const std::vector<uint8_t> want = npy_serialize(t, {narrow});
        std::string out = "prefix";
        npy_serialize_append(t, out, {narrow});
        ASSERT_EQ(out.size(), 6 + want.size()) << dtype_name(d);
        EXPECT_EQ(npy_serialized_size(t, {narrow}), want.size()) << dtype_name(d);
        EXPECT_EQ(out.substr(0, 6), "prefix");
        EXPECT_EQ(std::memcmp(want.data(), out.data() + 6, want.size()), 0) << dtype_name(d);
      }
    }
}

TEST(NpyRoundTrip, StridedViewsAreWrittenInCOrder) {
  for (DType d : {DType::kFloat32, DType::kBFloat16, DType::kInt8, DType::kBool, DType::kFloat8E5M2}) {
    const Tensor base = sample({6, 5, 4}, d, 2);
    const std::vector<Tensor> views = {
        base.transpose(),
        base.slice(1, Slice{Slice::kNone, Slice::kNone, -2}),
        base.select(2, 1).transpose(),
        base.slice(0, 1, 5, 3).swapaxes(0, 2),
        base.select(0, 0).select(0, 0).expand_dims(0).broadcast_to({3, 4}),
    };
    for (const Tensor& v : views) {
      Result<Tensor> back = parse(npy_serialize(v));
      ASSERT_TRUE(back.has_value()) << back.error().format();
      expect_same_tensor(*back, v.copy(), std::string(dtype_name(d)) + " view " + shape_str(v.shape()));
    }
  }
}

TEST(NpyRoundTrip, SaveAndLoadFiles) {
  ScratchDir dir;
  for (DType d : kAllDTypes) {
    const Tensor t = sample({3, 4}, d, 3);
    const std::string path = dir.file(std::string(dtype_name(d)) + ".npy");
    ASSERT_TRUE(npy_save(path, t.transpose()).has_value());
    Result<Tensor> back = npy_load(path);
    ASSERT_TRUE(back.has_value()) << back.error().format();
    expect_same_tensor(*back, t.transpose().copy(), std::string(dtype_name(d)));
    // npy_save writes exactly npy_serialize's bytes.
    std::ifstream in(path, std::ios::binary);
    const std::vector<uint8_t> disk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(disk, npy_serialize(t.transpose()));
  }
}

TEST(NpyRoundTrip, NarrowAsFloat32WritesValues) {
  for (DType d : kAllDTypes) {
    if (!is_narrow(d)) continue;
    const Tensor t = sample({5, 3}, d, 4);
    const std::vector<uint8_t> file = npy_serialize(t, NpyOptions{.narrow_as = NarrowAs::kFloat32});
    const std::string header = header_of(file);
    EXPECT_NE(header.find("'descr': '<f4'"), std::string::npos) << header;
    EXPECT_EQ(header.find("nki_agent"), std::string::npos) << header;
    Result<Tensor> back = parse(file);
    ASSERT_TRUE(back.has_value());
    expect_same_tensor(*back, t.astype(DType::kFloat32), std::string(dtype_name(d)));
  }
}

// ---- the written format -------------------------------------------------------------------------

// Bytes at an offset of 64-byte aligned memory (an ExternalMemory, as a received reply is).
class HeldBytes final : public ExternalMemory {
 public:
  explicit HeldBytes(size_t n)
      : data_(static_cast<uint8_t*>(std::aligned_alloc(64, (n + 63) / 64 * 64 + 64))), size_(n) {}
  ~HeldBytes() override { std::free(data_); }
  uint8_t* bytes() override { return data_; }
  int64_t byte_size() const override { return static_cast<int64_t>(size_); }

 private:
  uint8_t* data_;
  size_t size_;
};

std::shared_ptr<HeldBytes> holding(const std::vector<uint8_t>& image, size_t at) {
  auto m = std::make_shared<HeldBytes>(at + image.size());
  std::memcpy(m->bytes() + at, image.data(), image.size());
  return m;
}

// npy_view gives a tensor over the bytes where they lie when they can be its storage, and a copy
// otherwise (misaligned, Fortran order, a dtype written converted); the values are npy_parse's.
TEST(NpyView, ViewsAlignedElementsAndCopiesTheRest) {
  Tensor t = Tensor::from_f32(
      {3, 7}, std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21});
  const std::vector<uint8_t> image = npy_serialize(t);
  auto in = [](const Tensor& v, const std::shared_ptr<HeldBytes>& m) {
    const auto* p = static_cast<const uint8_t*>(v.data());
    return p >= m->bytes() && p < m->bytes() + m->byte_size();
  };
  {
    auto m = holding(image, 128);
    auto v = npy_view(m, 128, static_cast<int64_t>(image.size()), "x");
    ASSERT_TRUE(v) << v.error().format();
    EXPECT_TRUE(in(*v, m)) << "aligned elements are viewed";
    EXPECT_EQ(v->to_f32_vector(), t.to_f32_vector());
    EXPECT_EQ(v->shape(), t.shape());
    EXPECT_EQ(v->dtype(), DType::kFloat32);
  }
  {
    auto m = holding(image, 8);  // the elements at 8 + 64: not on a 64-byte boundary
    auto v = npy_view(m, 8, static_cast<int64_t>(image.size()), "x");
    ASSERT_TRUE(v) << v.error().format();
    EXPECT_FALSE(in(*v, m));
    EXPECT_EQ(v->to_f32_vector(), t.to_f32_vector());
  }
  {  // bf16 travels as tagged raw bits: viewed, and still bf16
    Tensor b = t.astype(DType::kBFloat16);
    const std::vector<uint8_t> bi = npy_serialize(b);
    auto m = holding(bi, 0);
    auto v = npy_view(m, 0, static_cast<int64_t>(bi.size()), "b");
    ASSERT_TRUE(v) << v.error().format();
    EXPECT_EQ(v->dtype(), DType::kBFloat16);
    EXPECT_EQ(v->to_f32_vector(), b.to_f32_vector());
  }
  {  // a float64 file is converted: a copy
    std::string text = "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }";
    text.append(64 - (10 + text.size() + 1) % 64, ' ');
    text += '\n';
    std::vector<uint8_t> f8 = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<uint8_t>(text.size()), 0};
    f8.insert(f8.end(), text.begin(), text.end());
    for (double d : {1.5, -2.0}) {
      uint8_t raw[8];
      std::memcpy(raw, &d, 8);
      f8.insert(f8.end(), raw, raw + 8);
    }
    auto m = holding(f8, 0);
    auto v = npy_view(m, 0, static_cast<int64_t>(f8.size()), "f8");
    ASSERT_TRUE(v) << v.error().format();
    EXPECT_FALSE(in(*v, m));
    EXPECT_EQ(v->to_f32_vector(), (std::vector<float>{1.5f, -2.0f}));
  }
  {  // a broken image is npy_parse's diagnostic
    std::vector<uint8_t> cut(image.begin(), image.end() - 4);
    auto m = holding(cut, 0);
    auto v = npy_view(m, 0, static_cast<int64_t>(cut.size()), "cut");
    ASSERT_FALSE(v);
    EXPECT_EQ(v.error().code, "nkia_npy_size_mismatch");
  }
  auto m = holding(image, 0);
  EXPECT_THROW((void)npy_view(m, 64, static_cast<int64_t>(image.size()), "x"), std::invalid_argument);
}

TEST(NpyFormat, HeaderLayoutMatchesNumPy) {
  const Tensor t = Tensor::zeros({2, 3}, DType::kFloat32);
  const std::vector<uint8_t> file = npy_serialize(t);
  ASSERT_GE(file.size(), 10u);
  EXPECT_EQ(std::string(file.begin(), file.begin() + 6), "\x93NUMPY");
  EXPECT_EQ(file[6], 1);
  EXPECT_EQ(file[7], 0);
  const std::string header = header_of(file);
  // The dict as NumPy's repr writes it, 20 growth spaces for the first axis, padding, '\n'.
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  EXPECT_EQ(header.substr(0, dict.size()), dict);
  EXPECT_EQ(header.back(), '\n');
  EXPECT_EQ(header.find_first_not_of(' ', dict.size()), header.size() - 1);
  EXPECT_EQ((10 + header.size()) % 64, 0u);
  EXPECT_EQ(file.size(), 10 + header.size() + 24);
  EXPECT_NE(header_of(npy_serialize(Tensor::zeros({}, DType::kInt8)))
                .find("'descr': '|i1', 'fortran_order': False, 'shape': ()"),
            std::string::npos);
  EXPECT_NE(header_of(npy_serialize(Tensor::zeros({5}, DType::kBool)))
                .find("'descr': '|b1', 'fortran_order': False, 'shape': (5,)"),
            std::string::npos);
}

TEST(NpyFormat, NarrowTypesCarryATag) {
  const std::vector<std::pair<DType, std::string>> cases = {{DType::kBFloat16, "<u2"},
                                                            {DType::kFloat8E4M3, "|u1"},
                                                            {DType::kFloat8E4M3FN, "|u1"},
                                                            {DType::kFloat8E5M2, "|u1"},
                                                            {DType::kTFloat32, "<f4"}};
  for (const auto& [d, descr] : cases) {
    const std::string header = header_of(npy_serialize(Tensor::zeros({2, 3}, d)));
    const std::string want =
        "{'descr': '" + descr +
        "', 'fortran_order': False, 'shape': (2, 3), } # nki_agent dtype=" + std::string(dtype_name(d));
    EXPECT_EQ(header.substr(0, want.size()), want);
  }
  // Types NumPy has need no tag.
  for (DType d : kAllDTypes)
    if (!is_narrow(d)) {
      EXPECT_EQ(header_of(npy_serialize(Tensor::zeros({2}, d))).find('#'), std::string::npos);
    }
}

TEST(NpyFormat, Version2OnlyForHugeHeaders) {
  // 30000 axes of size 1 make a header of ~90 kB, more than version 1.0's uint16 length holds.
  const Shape many(30000, 1);
  const Tensor t = Tensor::full(many, DType::kFloat16, 1.5);
  const std::vector<uint8_t> file = npy_serialize(t);
  EXPECT_EQ(file[6], 2);
  const std::string header = header_of(file);
  EXPECT_GT(header.size(), 65535u);
  EXPECT_EQ((12 + header.size()) % 64, 0u);
  Result<Tensor> back = parse(file);
  ASSERT_TRUE(back.has_value()) << back.error().format();
  EXPECT_EQ(back->shape(), many);
  EXPECT_EQ(back->item(), 1.5);
  EXPECT_EQ(npy_serialize(Tensor::zeros({1000, 1000}, DType::kFloat32))[6], 1);
}

// ---- headers the reader must understand -----------------------------------------------------------

TEST(NpyParse, HeaderVariants) {
  const std::vector<int16_t> v = {1, -2, 3, -4, 5, -6};
  const std::vector<std::string> headers = {
      "{'descr': '<i2', 'fortran_order': False, 'shape': (2, 3), }",
      "{\"descr\": \"<i2\", \"fortran_order\": False, \"shape\": (2, 3)}",
      "{'shape':(2,3),'descr':'<i2','fortran_order':False}",
      "  {  'descr' :\t'<i2' ,\n 'fortran_order'  : False ,'shape' : ( 2 , 3 , ) , }  ",
      "{'descr': '<i2', 'fortran_order': False, 'shape': (2L, 3L), }",
      "{'descr': '<i2', 'fortran_order': False, 'shape': (+2, 3), }",
      "{'descr': '<i2', 'fortran_order': False, 'shape': (2, 3), } # someone's comment",
      "{'descr': '<i2', 'fortran_order': False, 'shape': (2, 3), } # nki_agentish words",
      "{'descr': '=i2', 'fortran_order': False, 'shape': (2, 3), }",
  };
  for (const std::string& h : headers) {
    Result<Tensor> r = parse(make_npy(h, bytes_of(v)));
    ASSERT_TRUE(r.has_value()) << h << ": " << r.error().format();
    EXPECT_EQ(r->dtype(), DType::kInt16);
    EXPECT_EQ(r->shape(), (Shape{2, 3}));
    EXPECT_EQ(r->to_i64_vector(), (std::vector<int64_t>{1, -2, 3, -4, 5, -6})) << h;
  }
  // The header need not be padded or end in '\n'.
  EXPECT_TRUE(parse(make_npy("{'descr':'<i2','fortran_order':False,'shape':(6,)}", bytes_of(v), 1, true)).has_value());
  // Versions 2.0 and 3.0 differ only in the length field (and 3.0's utf-8, which we read as bytes).
  for (int major : {2, 3}) {
    Result<Tensor> r = parse(make_npy("{'descr': '<i2', 'fortran_order': False, 'shape': (6,), }", bytes_of(v), major));
    ASSERT_TRUE(r.has_value()) << major;
    EXPECT_EQ(r->shape(), (Shape{6}));
  }
}

TEST(NpyParse, ScalarsAndEmpty) {
  Result<Tensor> s =
      parse(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", bytes_of(std::vector<float>{2.5f})));
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->ndim(), 0);
  EXPECT_EQ(s->item(), 2.5);
  for (const char* h : {"{'descr': '<f4', 'fortran_order': False, 'shape': (0,), }",
                        "{'descr': '<f4', 'fortran_order': True, 'shape': (3, 0, 2), }",
                        "{'descr': '<i8', 'fortran_order': False, 'shape': (0, 1000000000000), }"}) {
    Result<Tensor> e = parse(make_npy(h, {}));
    ASSERT_TRUE(e.has_value()) << h << ": " << e.error().format();
    EXPECT_EQ(e->numel(), 0);
  }
}

TEST(NpyParse, FortranOrder) {
  // Element (i, j, k) of shape (2, 3, 4) has value 100i + 10j + k; Fortran order varies i fastest.
  std::vector<int32_t> data;
  for (int k = 0; k < 4; ++k)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 2; ++i) data.push_back(100 * i + 10 * j + k);
  Result<Tensor> r = parse(make_npy("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3, 4), }", bytes_of(data)));
  ASSERT_TRUE(r.has_value()) << r.error().format();
  EXPECT_EQ(r->shape(), (Shape{2, 3, 4}));
  EXPECT_TRUE(r->is_contiguous());
  std::vector<int64_t> want;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) want.push_back(100 * i + 10 * j + k);
  EXPECT_EQ(r->to_i64_vector(), want);
  // Fortran bf16 through the tag.
  const std::vector<uint16_t> raw = {0x3f80, 0x4000, 0x4040, 0x4080, 0x40a0, 0x40c0};  // 1..6, column-major
  Result<Tensor> b = parse(
      make_npy("{'descr': '<u2', 'fortran_order': True, 'shape': (2, 3), } # nki_agent dtype=bfloat16", bytes_of(raw)));
  ASSERT_TRUE(b.has_value()) << b.error().format();
  EXPECT_EQ(b->dtype(), DType::kBFloat16);
  EXPECT_EQ(b->to_f32_vector(), (std::vector<float>{1, 3, 5, 2, 4, 6}));
}

TEST(NpyParse, SixtyFourBitTypesConvert) {
  const std::vector<double> f8 = {1.0, -0.0, 0.1, 1e300, -1e300, 3.4028235677973366e38, 1e-50};
  Result<Tensor> f = parse(make_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (7,), }", bytes_of(f8)));
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->dtype(), DType::kFloat32);
  const std::vector<float> fv = f->to_f32_vector();
  EXPECT_EQ(fv[0], 1.0f);
  EXPECT_TRUE(std::signbit(fv[1]));
  EXPECT_EQ(fv[2], 0.1f);
  EXPECT_EQ(fv[3], std::numeric_limits<float>::infinity());
  EXPECT_EQ(fv[4], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(fv[5], std::numeric_limits<float>::infinity());  // FLT_MAX + half an ulp: a tie, to even
  EXPECT_EQ(fv[6], 0.0f);

  const std::vector<int64_t> i8 = {-2147483648LL, 2147483647LL, 0, -5};
  Result<Tensor> i = parse(make_npy("{'descr': '<i8', 'fortran_order': False, 'shape': (4,), }", bytes_of(i8)));
  ASSERT_TRUE(i.has_value());
  EXPECT_EQ(i->dtype(), DType::kInt32);
  EXPECT_EQ(i->to_i64_vector(), i8);
  const std::vector<uint64_t> u8 = {0, 2147483647ULL};
  Result<Tensor> u = parse(make_npy("{'descr': '<u8', 'fortran_order': False, 'shape': (2,), }", bytes_of(u8)));
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->dtype(), DType::kInt32);

  expect_code(parse(make_npy("{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }",
                             bytes_of(std::vector<int64_t>{0, 2147483648LL}))),
              "nkia_npy_value_range");
  expect_code(parse(make_npy("{'descr': '<u8', 'fortran_order': False, 'shape': (1,), }",
                             bytes_of(std::vector<uint64_t>{~0ULL}))),
              "nkia_npy_value_range");
}

TEST(NpyParse, BoolBytesNormalised) {
  Result<Tensor> r = parse(make_npy("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", {0, 1, 7}));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->to_i64_vector(), (std::vector<int64_t>{0, 1, 1}));
}

// ---- hostile and broken input --------------------------------------------------------------------

TEST(NpyErrors, PreambleAndVersion) {
  expect_code(parse({}), "nkia_npy_truncated_header", "empty");
  expect_code(parse({0x93, 'N', 'U'}), "nkia_npy_truncated_header", "short magic");
  expect_code(parse({'P', 'K', 3, 4, 0, 0, 0, 0, 0, 0, 0, 0}), "nkia_npy_bad_magic", "zip");
  std::vector<uint8_t> ok = npy_serialize(Tensor::zeros({2}, DType::kInt32));
  for (auto [major, minor] : {std::pair{0, 0}, {4, 0}, {1, 1}, {2, 5}, {255, 255}}) {
    std::vector<uint8_t> b = ok;
    b[6] = static_cast<uint8_t>(major);
    b[7] = static_cast<uint8_t>(minor);
    expect_code(parse(b), "nkia_npy_unsupported_version", std::to_string(major) + "." + std::to_string(minor));
  }
  std::vector<uint8_t> long_header = ok;
  long_header[8] = 0xff;
  long_header[9] = 0xff;
  expect_code(parse(long_header), "nkia_npy_truncated_header", "header beyond the file");
  std::vector<uint8_t> v2 = {0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 0xff, 0xff, 0xff, 0xff, '{', '}'};
  expect_code(parse(v2), "nkia_npy_truncated_header", "4 GiB header");
}

TEST(NpyErrors, MalformedHeaders) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "nkia_npy_bad_header"},
      {"[1, 2]", "nkia_npy_bad_header"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), ", "nkia_npy_bad_header"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3) 'x': 1}", "nkia_npy_bad_header"},
      {"{'descr': '<f4', 'fortran_order': False}", "nkia_npy_bad_header"},
      {"{'descr': '<f4', 'shape': (6,)}", "nkia_npy_bad_header"},
      {"{'fortran_order': False, 'shape': (6,)}", "nkia_npy_bad_header"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (6,), 'extra': 1}", "nkia_npy_bad_header"},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (6,)}", "nkia_npy_bad_header"},
      {"{'descr': '<f4', 'fortran_order': 0, 'shape': (6,)}", "nkia_npy_bad_header"},
      {"{'descr': '<f4', 'fortran_order': false, 'shape': (6,)}", "nkia_npy_bad_header"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': [6]}", "nkia_npy_bad_header"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': 6}", "nkia_npy_bad_header"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (6.0,)}", "nkia_npy_bad_header"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': ('6',)}", "nkia_npy_bad_header"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (6,,)}", "nkia_npy_bad_header"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (6 7)}", "nkia_npy_bad_header"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (0x6,)}", "nkia_npy_bad_header"},
      {"{'descr': <f4, 'fortran_order': False, 'shape': (6,)}", "nkia_npy_bad_header"},
      {"{'descr': '<f4, 'fortran_order': False, 'shape': (6,)}", "nkia_npy_bad_header"},
      {"{'descr': '<f4\\n', 'fortran_order': False, 'shape': (6,)}", "nkia_npy_bad_header"},
      {"{descr: '<f4', 'fortran_order': False, 'shape': (6,)}", "nkia_npy_bad_header"},
      {"{1: '<f4', 'fortran_order': False, 'shape': (6,)}", "nkia_npy_bad_header"},
      {"{'descr': 5, 'fortran_order': False, 'shape': (6,)}", "nkia_npy_bad_header"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (6,)} trailing", "nkia_npy_bad_header"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (6,)}}", "nkia_npy_bad_header"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': __import__('os')}", "nkia_npy_bad_header"},
      {std::string("{'descr': '<f4'") + '\0' + ", 'fortran_order': False, 'shape': (6,)}", "nkia_npy_bad_header"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-6,)}", "nkia_npy_bad_shape"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", "nkia_npy_bad_shape"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296)}", "nkia_npy_bad_shape"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4294967296, 4294967296)}", "nkia_npy_bad_shape"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (1152921504606846976,)}", "nkia_npy_bad_shape"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 1048576)}", "nkia_npy_size_mismatch"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (9223372036854775807,)}", "nkia_npy_bad_shape"},
  };
  const std::vector<uint8_t> data(24, 0);  // six float32
  for (const auto& [h, code] : cases) expect_code(parse(make_npy(h, data)), code, h);
}

TEST(NpyErrors, DeepNestingIsRefusedNotRecursed) {
  const std::string deep = "{'descr': '<f4', 'fortran_order': False, 'shape': " + std::string(100000, '(') + "}";
  expect_code(parse(make_npy(deep, {}, 2)), "nkia_npy_bad_header");
}

TEST(NpyErrors, UnsupportedTypes) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"'<c8'", "nkia_npy_unsupported_dtype"},
      {"'<U3'", "nkia_npy_unsupported_dtype"},
      {"'|S4'", "nkia_npy_unsupported_dtype"},
      {"'<M8[ns]'", "nkia_npy_unsupported_dtype"},
      {"'|V2'", "nkia_npy_unsupported_dtype"},
      {"'<f16'", "nkia_npy_unsupported_dtype"},
      {"'<i3'", "nkia_npy_unsupported_dtype"},
      {"''", "nkia_npy_unsupported_dtype"},
      {"'<'", "nkia_npy_unsupported_dtype"},
      {"'<f'", "nkia_npy_unsupported_dtype"},
      {"'<f4x'", "nkia_npy_unsupported_dtype"},
      {"'float32'", "nkia_npy_unsupported_dtype"},
      {"[('a', '<f4'), ('b', '<i4')]", "nkia_npy_unsupported_dtype"},
      {"'>f4'", "nkia_npy_big_endian"},
      {"'>i2'", "nkia_npy_big_endian"},
      {"'>u4'", "nkia_npy_big_endian"},
      {"'|O'", "nkia_npy_object_array"},
  };
  for (const auto& [descr, code] : cases) {
    Result<Tensor> r =
        parse(make_npy("{'descr': " + descr + ", 'fortran_order': False, 'shape': (1,), }", {0, 0, 0, 0}));
    expect_code(r, code, descr);
    if (!r && code == "nkia_npy_unsupported_dtype") {
      EXPECT_NE(r.error().message.find("supported: <f4"), std::string::npos) << r.error().message;
    }
  }
  // One-byte types have no byte order: '>i1' is fine.
  EXPECT_TRUE(parse(make_npy("{'descr': '>i1', 'fortran_order': False, 'shape': (1,), }", {5})).has_value());
}

TEST(NpyErrors, Tags) {
  auto with_tag = [&](const std::string& descr, const std::string& tag) {
    const std::vector<uint8_t> one_element(static_cast<size_t>(descr.back() - '0'), 0);
    return parse(make_npy("{'descr': '" + descr + "', 'fortran_order': False, 'shape': (1,), } " + tag, one_element));
  };
  expect_code(with_tag("<u2", "# nki_agent dtype=bfloat17"), "nkia_npy_bad_tag", "unknown");
  expect_code(with_tag("|u1", "# nki_agent dtype=bfloat16"), "nkia_npy_bad_tag", "width");
  expect_code(with_tag("<i2", "# nki_agent dtype=bfloat16"), "nkia_npy_bad_tag", "signed carrier");
  expect_code(with_tag("<u2", "# nki_agent dtype=float8_e5m2"), "nkia_npy_bad_tag", "fp8 on u2");
  expect_code(with_tag("<u2", "# nki_agent dtype=float16"), "nkia_npy_bad_tag", "float16 is <f2");
  expect_code(with_tag("<u2", "# nki_agent bfloat16"), "nkia_npy_bad_tag", "no key");
  expect_code(with_tag("<u2", "# nki_agent dtype=bfloat16 extra"), "nkia_npy_bad_tag", "extra word");
  expect_code(with_tag("<u2", "# nki_agent dtype=bfloat16\n# nki_agent dtype=bfloat16"), "nkia_npy_bad_tag", "two");
  for (const auto& [descr, name, d] : {std::tuple{"<u2", "bfloat16", DType::kBFloat16},
                                       {"<u2", "bf16", DType::kBFloat16},
                                       {"|u1", "float8_e4m3", DType::kFloat8E4M3},
                                       {"|u1", "float8_e4m3fn", DType::kFloat8E4M3FN},
                                       {"<u1", "float8_e5m2", DType::kFloat8E5M2},
                                       {"<f4", "tfloat32", DType::kTFloat32},
                                       {"<u2", "uint16", DType::kUInt16}}) {
    Result<Tensor> r = with_tag(descr, std::string("#   nki_agent   dtype=") + name + "  ");
    ASSERT_TRUE(r.has_value()) << name << ": " << r.error().format();
    EXPECT_EQ(r->dtype(), d) << name;
  }
}

TEST(NpyErrors, DataSizeMustMatch) {
  const std::vector<uint8_t> good = npy_serialize(Tensor::zeros({2, 3}, DType::kFloat32));
  std::vector<uint8_t> shorter(good.begin(), good.end() - 1);
  expect_code(parse(shorter), "nkia_npy_size_mismatch", "short");
  std::vector<uint8_t> longer = good;
  longer.push_back(0);
  expect_code(parse(longer), "nkia_npy_size_mismatch", "long");
  // A shape promising ~4 TiB in a tiny file is refused before anything is allocated.
  expect_code(parse(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1048576, 1048576), }", {1, 2, 3, 4})),
              "nkia_npy_size_mismatch", "huge");
}

TEST(NpyErrors, TruncatedAtEveryOffset) {
  const std::vector<std::vector<uint8_t>> files = {
      npy_serialize(sample({3, 4}, DType::kFloat32, 5)),
      npy_serialize(sample({2, 3}, DType::kBFloat16, 5)),
      npy_serialize(sample({}, DType::kInt8, 5)),
      npy_serialize(Tensor::zeros({0, 3}, DType::kInt16)),
      make_npy("{'descr': '<i8', 'fortran_order': True, 'shape': (2, 2), }", bytes_of(std::vector<int64_t>{1, 2, 3, 4}),
               2),
  };
  for (const std::vector<uint8_t>& f : files) {
    ASSERT_TRUE(parse(f).has_value());
    for (size_t n = 0; n < f.size(); ++n) {
      const std::vector<uint8_t> cut(f.begin(), f.begin() + static_cast<long>(n));
      Result<Tensor> r = npy_parse(cut, "cut.npy");
      ASSERT_FALSE(r.has_value()) << "prefix of " << n << " bytes";
      EXPECT_EQ(r.error().loc.file, "cut.npy");
    }
  }
}

TEST(NpyErrors, LoadAgreesWithParseOnEveryPrefix) {
  // npy_load reads the preamble, header and payload separately; a truncated file must give it the
  // same answer as npy_parse of the same bytes. The second file has a 0-byte header length.
  ScratchDir dir;
  const std::vector<std::vector<uint8_t>> files = {
      npy_serialize(sample({2, 3}, DType::kFloat8E5M2, 12)),
      make_npy("", {}, 1, true),
      make_npy("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 2), }", bytes_of(std::vector<double>{1, 2, 3, 4}),
               3),
  };
  for (const std::vector<uint8_t>& f : files)
    for (size_t n = 0; n <= f.size(); ++n) {
      const std::vector<uint8_t> cut(f.begin(), f.begin() + static_cast<long>(n));
      const std::string path = dir.file("cut.npy");
      {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(cut.data()), static_cast<std::streamsize>(cut.size()));
      }
      Result<Tensor> from_file = npy_load(path);
      Result<Tensor> from_bytes = npy_parse(cut, path);
      ASSERT_EQ(from_file.has_value(), from_bytes.has_value()) << n;
      if (from_file) {
        EXPECT_EQ(bits_of(*from_file), bits_of(*from_bytes));
      } else {
        EXPECT_EQ(from_file.error().code, from_bytes.error().code) << n;
        EXPECT_EQ(from_file.error().message, from_bytes.error().message) << n;
      }
    }
}

TEST(NpyErrors, RandomCorruptionNeverCrashes) {
  // Byte flips in the header of valid files, and random garbage after a valid magic: every result
  // is a tensor or a Diagnostic (ASan/UBSan builds check that nothing else happens).
  const std::vector<std::vector<uint8_t>> files = {
      npy_serialize(sample({3, 4}, DType::kFloat32, 6)), npy_serialize(sample({2, 5}, DType::kFloat8E4M3, 6)),
      make_npy("{'descr': '<u8', 'fortran_order': True, 'shape': (2, 2), }",
               bytes_of(std::vector<uint64_t>{1, 2, 3, 4}))};
  Rng r(99);
  const std::string alphabet = "{}()[],:'\"#-+0123456789 \n<>|=fiubLTrueFalsnkagtdyp_";
  int ok = 0, failed = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::vector<uint8_t> f = files[static_cast<size_t>(r.integers(0, static_cast<int64_t>(files.size())))];
    const int64_t flips = r.integers(1, 4);
    for (int64_t k = 0; k < flips; ++k) {
      const auto pos = static_cast<size_t>(r.integers(0, std::min<int64_t>(static_cast<int64_t>(f.size()), 90)));
      f[pos] = r.integers(0, 2)
                   ? static_cast<uint8_t>(
                         alphabet[static_cast<size_t>(r.integers(0, static_cast<int64_t>(alphabet.size())))])
                   : static_cast<uint8_t>(r.next_u32());
    }
    Result<Tensor> res = parse(f);
    if (res) {
      ++ok;
      EXPECT_LE(res->nbytes(), static_cast<int64_t>(f.size()));
    } else {
      ++failed;
      EXPECT_FALSE(res.error().code.empty());
    }
  }
  for (int iter = 0; iter < 2000; ++iter) {
    std::vector<uint8_t> f = {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<uint8_t>(r.integers(1, 4)), 0};
    const int64_t n = r.integers(0, 200);
    for (int64_t k = 0; k < n; ++k) f.push_back(static_cast<uint8_t>(r.next_u32()));
    Result<Tensor> res = parse(f);
    if (!res) {
      EXPECT_FALSE(res.error().code.empty());
    }
  }
  EXPECT_GT(ok, 0);
  EXPECT_GT(failed, 0);
}

TEST(NpyErrors, FilesystemProblems) {
  ScratchDir dir;
  Result<Tensor> missing = npy_load(dir.file("missing.npy"));
  expect_code(missing, "nkia_npy_not_found");
  EXPECT_EQ(missing.error().loc.file, dir.file("missing.npy"));
  expect_code(npy_load(dir.path()), "nkia_npy_unreadable", "directory");
  if (geteuid() != 0) {  // root reads through permissions
    const std::string locked = dir.file("locked.npy");
    ASSERT_TRUE(npy_save(locked, Tensor::zeros({2}, DType::kFloat32)).has_value());
    std::filesystem::permissions(locked, std::filesystem::perms::none);
    expect_code(npy_load(locked), "nkia_npy_unreadable", "no permission");
  }
  const Tensor t = Tensor::zeros({2}, DType::kFloat32);
  Result<void> w1 = npy_save(dir.file("no/such/folder/x.npy"), t);
  ASSERT_FALSE(w1.has_value());
  EXPECT_EQ(w1.error().code, "nkia_npy_unwritable");
  Result<void> w2 = npy_save(dir.path(), t);
  ASSERT_FALSE(w2.has_value());
  EXPECT_EQ(w2.error().code, "nkia_npy_unwritable");
  EXPECT_THROW(npy_serialize(Tensor()), std::invalid_argument);
}

TEST(NpyErrors, DiagnosticsNameTheFile) {
  Result<Tensor> r = npy_parse(std::vector<uint8_t>{'h', 'e', 'l', 'l', 'o', '!', 0, 0, 0, 0}, "weights/w0.npy");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().loc.file, "weights/w0.npy");
  EXPECT_EQ(r.error().format().rfind("weights/w0.npy: error[nkia_npy_bad_magic]", 0), 0u) << r.error().format();
  EXPECT_FALSE(r.error().hint.empty());
}

// ---- NumPy interop ------------------------------------------------------------------------------

TEST(NpyNumPy, NumPyLoadsOurFiles) {
  ScratchDir dir;
  nlohmann::json manifest = nlohmann::json::array();
  auto add = [&](const std::string& name, const Tensor& t, NpyOptions opts = {}) {
    ASSERT_TRUE(npy_save(dir.file(name), t, opts).has_value());
    const bool as_f32 = is_narrow(t.dtype()) && opts.narrow_as == NarrowAs::kFloat32;
    const Tensor content = as_f32 ? t.astype(DType::kFloat32) : t.copy();
    std::string descr;
    switch (content.dtype()) {
      case DType::kFloat32:
      case DType::kTFloat32: descr = "<f4"; break;
      case DType::kFloat16: descr = "<f2"; break;
      case DType::kBFloat16:
      case DType::kUInt16: descr = "<u2"; break;
      case DType::kInt8: descr = "|i1"; break;
      case DType::kInt16: descr = "<i2"; break;
      case DType::kInt32: descr = "<i4"; break;
      case DType::kUInt32: descr = "<u4"; break;
      case DType::kBool: descr = "|b1"; break;
      default: descr = "|u1"; break;  // uint8 and the float8 formats
    }
    nlohmann::json e = {{"file", name}, {"descr", descr}, {"shape", t.shape()}, {"bits", bits_of(content)}};
    if (is_narrow(t.dtype()) && !as_f32) e["tag"] = dtype_name(t.dtype());
    manifest.push_back(e);
  };
  for (DType d : kAllDTypes) {
    const std::string n(dtype_name(d));
    add(n + "_2d.npy", sample({3, 5}, d, 7));
    add(n + "_3d_transposed.npy", sample({2, 3, 4}, d, 8).transpose());
    add(n + "_scalar.npy", sample({}, d, 9));
    add(n + "_empty.npy", Tensor::zeros({2, 0, 3}, d));
    add(n + "_long.npy", sample({1000}, d, 10).slice(0, 999, Slice::kNone, -7));
    if (is_narrow(d)) add(n + "_as_f32.npy", sample({4, 4}, d, 11), NpyOptions{.narrow_as = NarrowAs::kFloat32});
  }
  {
    std::ofstream out(dir.file("manifest.json"));
    out << manifest.dump();
  }
  const testing::PythonRun run = testing::run_python(testing::oracle_script("npy_roundtrip.py"), {"check", dir.path()});
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("0 failures"), std::string::npos) << run.output;
}

TEST(NpyNumPy, WeLoadNumPyFiles) {
  ScratchDir dir;
  const testing::PythonRun run = testing::run_python(testing::oracle_script("npy_roundtrip.py"), {"write", dir.path()});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::ifstream in(dir.file("numpy_manifest.json"));
  const nlohmann::json manifest = nlohmann::json::parse(in);
  ASSERT_GT(manifest.size(), 80u);
  int loaded = 0, refused = 0;
  for (const nlohmann::json& e : manifest) {
    const std::string name = e["file"];
    Result<Tensor> r = npy_load(dir.file(name));
    if (e.contains("error")) {
      expect_code(r, e["error"].get<std::string>(), name);
      ++refused;
      continue;
    }
    ASSERT_TRUE(r.has_value()) << name << ": " << r.error().format();
    EXPECT_EQ(dtype_name(r->dtype()), e["dtype"].get<std::string>()) << name;
    EXPECT_EQ(r->shape(), e["shape"].get<Shape>()) << name;
    EXPECT_TRUE(c_order(*r)) << name;
    EXPECT_EQ(bits_of(*r), e["bits"].get<std::vector<uint64_t>>()) << name;
    ++loaded;
  }
  EXPECT_GT(loaded, 70);
  EXPECT_GT(refused, 10);
}

}  // namespace
}  // namespace nki_agent
