// tensor/dtype.cpp — element types: names, exact narrow-float rounding, raw access, bulk casts.
//
// Every narrow-float encoder works on the float32 bits: it rounds to nearest even in a format with
// the target's mantissa and an unbounded exponent, then applies the overflow rule. Subnormal
// results come from one float add against a constant whose ulp is the target's subnormal step, so
// the FPU does the variable-width rounding. That needs MXCSR's default round-to-nearest mode, which
// nothing in this project changes (FTZ/DAZ would not matter: the sum is normal, and float32
// subnormal inputs round to zero in every target that takes this path). Decoders of 8- and 16-bit
// floats are lookup tables. The bulk converters switch on the type once and run a loop the compiler
// can vectorize at -O2 with baseline SSE2 (blocks of a fixed trip count, see kBlock).
//
// Must never depend on the rest of tensor/.
#include "tensor/dtype.h"

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "core/diagnostic.h"

namespace nki_agent {
namespace {

// ---- bits -----------------------------------------------------------------------------------------

constexpr uint32_t kF32AbsMask = 0x7FFFFFFFu;
constexpr uint32_t kF32Inf = 0x7F800000u;
constexpr uint32_t kF32QuietNaN = 0x7FC00000u;

constexpr uint32_t f32_bits(float x) {
  return std::bit_cast<uint32_t>(x);
}
constexpr float f32_from_bits(uint32_t b) {
  return std::bit_cast<float>(b);
}
// 2^e as a float32, for e in the normal range.
constexpr float pow2f(int e) {
  return f32_from_bits(static_cast<uint32_t>(e + 127) << 23);
}

[[noreturn]] void invalid_dtype(DType t) {
  internal_fail(__FILE__, __LINE__, "invalid DType value " + std::to_string(static_cast<int>(t)));
}

// Unaligned element access; the compiler makes each a plain load or store.
template <typename T>
inline T load_raw(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <typename T>
inline void store_raw(void* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

// The loops below run whole blocks of this many elements, then a scalar tail: GCC's -O2 cost model
// ("very cheap") vectorizes only loops whose trip count is a known multiple of the vector width.
constexpr int64_t kBlock = 32;

// d[j] = fn(s[j]) for one block. Restrict parameters (not locals) are what GCC keeps after
// inlining, so the block needs no runtime alias check. Byte pointers: no alignment is assumed.
template <typename Src, typename Dst, typename Fn>
inline void map_block(const unsigned char* __restrict s, unsigned char* __restrict d, Fn fn) {
  for (int64_t j = 0; j < kBlock; ++j) {
    store_raw<Dst>(d + j * sizeof(Dst), fn(load_raw<Src>(s + j * sizeof(Src))));
  }
}

// d[i] = fn(s[i]) for i < n.
template <typename Src, typename Dst, typename Fn>
inline void map_run(const void* src, void* dst, int64_t n, Fn fn) {
  const auto* s = static_cast<const unsigned char*>(src);
  auto* d = static_cast<unsigned char*>(dst);
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    map_block<Src, Dst>(s + i * sizeof(Src), d + i * sizeof(Dst), fn);
  }
  for (; i < n; ++i) store_raw<Dst>(d + i * sizeof(Dst), fn(load_raw<Src>(s + i * sizeof(Src))));
}

// c ? a : b without a branch. GCC sinks a float op used by only one arm of a ?: into a branch,
// and under -ftrapping-math (the default) it will not if-convert that branch back, which stops
// vectorization; a mask select keeps every op unconditional.
inline uint32_t select_bits(bool c, uint32_t a, uint32_t b) {
  const uint32_t m = 0u - static_cast<uint32_t>(c);
  return (a & m) | (b & ~m);
}

inline float select_f32(bool c, float a, float b) {
  return f32_from_bits(select_bits(c, f32_bits(a), f32_bits(b)));
}

// a < b for bit patterns below 2^31 (magnitudes), as a signed compare: SSE2 has no unsigned one.
inline bool below(uint32_t a, uint32_t b) {
  return static_cast<int32_t>(a) < static_cast<int32_t>(b);
}
inline bool is_nan_abs(uint32_t a) {
  return below(kF32Inf, a);
}  // a: float32 bits without the sign

// ---- bfloat16 ----------------------------------------------------------------------------------------

constexpr uint32_t kBf16QuietNaN = 0x7FC0;

inline uint16_t encode_bf16(float x) {
  const uint32_t b = f32_bits(x);
  // RNE on the 16 dropped bits; a carry into the exponent gives inf at the top, as IEEE does.
  const uint32_t rounded = (b + 0x7FFFu + ((b >> 16) & 1u)) >> 16;
  const uint32_t nan = ((b >> 16) & 0x8000u) | kBf16QuietNaN;
  return static_cast<uint16_t>(is_nan_abs(b & kF32AbsMask) ? nan : rounded);
}

inline float decode_bf16(uint16_t h) {
  return f32_from_bits(static_cast<uint32_t>(h) << 16);
}

// ---- float16 -----------------------------------------------------------------------------------------

constexpr uint32_t kFp16QuietNaN = 0x7E00;
constexpr uint32_t kFp16Inf = 0x7C00;
constexpr uint32_t kFp16Rebias = static_cast<uint32_t>(127 - 15) << 23;
constexpr uint32_t kFp16MinNormalF32 = static_cast<uint32_t>(127 - 14) << 23;  // 2^-14
// 0.5 has ulp 2^-24, the float16 subnormal step.
constexpr float kFp16SubnormalMagic = 0.5f;

inline uint16_t encode_fp16(float x) {
  const uint32_t b = f32_bits(x);
  const uint32_t a = b & kF32AbsMask;
  const uint32_t sign = (b >> 16) & 0x8000u;
  // Normal result: rebias the exponent, RNE on the 13 dropped bits; values past 65504 carry into
  // exponent 31 and clamp to inf (so does inf itself).
  uint32_t normal = (a - kFp16Rebias + 0xFFFu + ((a >> 13) & 1u)) >> 13;
  normal = normal > kFp16Inf ? kFp16Inf : normal;
  // Subnormal result (and the round-up into the smallest normal): the FPU rounds a + 0.5.
  const uint32_t sub = f32_bits(f32_from_bits(a) + kFp16SubnormalMagic) - f32_bits(kFp16SubnormalMagic);
  uint32_t r = select_bits(below(a, kFp16MinNormalF32), sub, normal);
  r = select_bits(is_nan_abs(a), kFp16QuietNaN, r);
  return static_cast<uint16_t>(sign | r);
}

// Exact; NaN payloads are kept (shifted up), as NumPy, Imath and Eigen do.
inline float decode_fp16_bits(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1Fu;
  const uint32_t m = h & 0x3FFu;
  if (e == 0x1F) return f32_from_bits(sign | kF32Inf | (m << 13));
  if (e != 0) return f32_from_bits(sign | ((e + 112) << 23) | (m << 13));
  return f32_from_bits(sign | f32_bits(static_cast<float>(m) * pow2f(-24)));  // subnormal: m·2^-24
}

// All 65,536 float16 values; built on first use (thread-safe static init), 256 KiB.
struct Fp16Table {
  float value[1 << 16];
  Fp16Table() {
    for (uint32_t h = 0; h < (1u << 16); ++h) value[h] = decode_fp16_bits(static_cast<uint16_t>(h));
  }
};

const float* fp16_table() {
  static const Fp16Table table;
  return table.value;
}

// ---- float8 ------------------------------------------------------------------------------------------

// 1 sign bit, 7 - man_bits exponent bits. Codes below are magnitudes (the sign is bit 7).
struct Fp8Format {
  int man_bits;
  int bias;
  bool has_inf;       // IEEE-style: the top exponent holds inf (mantissa 0) and NaN
  uint32_t max_code;  // largest finite magnitude
  uint32_t inf_code;  // what non-saturating overflow gives: inf, or NaN where there is no inf
  uint32_t nan_code;  // canonical NaN
};

constexpr Fp8Format kE4M3{3, 7, true, 0x77, 0x78, 0x7F};     // max 1.875·2^7 = 240
constexpr Fp8Format kE4M3FN{3, 7, false, 0x7E, 0x7F, 0x7F};  // max 1.75·2^8 = 448; 0x7F is NaN
constexpr Fp8Format kE5M2{2, 15, true, 0x7B, 0x7C, 0x7E};    // max 1.75·2^15 = 57344

template <Fp8Format F, bool kSaturate>
inline uint8_t encode_fp8(float x) {
  constexpr int kShift = 23 - F.man_bits;
  constexpr uint32_t kRebias = static_cast<uint32_t>(127 - F.bias) << 23;
  constexpr uint32_t kMinNormal = static_cast<uint32_t>(128 - F.bias) << 23;  // 2^(1-bias)
  // A float whose ulp is the subnormal step 2^(1-bias-man_bits).
  constexpr float kMagic = pow2f(1 - F.bias - F.man_bits + 23);
  constexpr uint32_t kOverflow = kSaturate ? F.max_code : F.inf_code;
  const uint32_t b = f32_bits(x);
  const uint32_t a = b & kF32AbsMask;
  const uint32_t sign = (b >> 24) & 0x80u;
  const uint32_t normal = (a - kRebias + ((1u << (kShift - 1)) - 1u) + ((a >> kShift) & 1u)) >> kShift;
  const uint32_t sub = f32_bits(f32_from_bits(a) + kMagic) - f32_bits(kMagic);
  uint32_t r = select_bits(below(a, kMinNormal), sub, normal);
  r = select_bits(r > F.max_code, kOverflow, r);  // also ±inf inputs
  r = select_bits(is_nan_abs(a), F.nan_code, r);
  return static_cast<uint8_t>(sign | r);
}

// NaN codes decode to float32's quiet NaN with the sign kept (payloads are not meaningful here).
constexpr float decode_fp8_bits(uint32_t c, Fp8Format f) {
  const uint32_t sign = (c & 0x80u) << 24;
  const uint32_t exp_mask = (1u << (7 - f.man_bits)) - 1u;
  const uint32_t e = (c >> f.man_bits) & exp_mask;
  const uint32_t m = c & ((1u << f.man_bits) - 1u);
  const uint32_t mag = c & 0x7Fu;
  if (f.has_inf && e == exp_mask) return f32_from_bits(sign | (m == 0 ? kF32Inf : kF32QuietNaN));
  if (!f.has_inf && mag == f.nan_code) return f32_from_bits(sign | kF32QuietNaN);
  if (e == 0) {  // subnormal: m · 2^(1 - bias - man_bits), exact
    return f32_from_bits(sign | f32_bits(static_cast<float>(m) * pow2f(1 - f.bias - f.man_bits)));
  }
  return f32_from_bits(sign | ((e - f.bias + 127) << 23) | (m << (23 - f.man_bits)));
}

constexpr std::array<float, 256> make_fp8_table(Fp8Format f) {
  std::array<float, 256> t{};
  for (uint32_t c = 0; c < 256; ++c) t[c] = decode_fp8_bits(c, f);
  return t;
}

constexpr std::array<float, 256> kE4M3Table = make_fp8_table(kE4M3);
constexpr std::array<float, 256> kE4M3FNTable = make_fp8_table(kE4M3FN);
constexpr std::array<float, 256> kE5M2Table = make_fp8_table(kE5M2);
static_assert(kE4M3Table[kE4M3.max_code] == 240.0f && kE4M3Table[kE4M3.inf_code] > 3e38f);
static_assert(kE4M3FNTable[kE4M3FN.max_code] == 448.0f);
static_assert(kE5M2Table[kE5M2.max_code] == 57344.0f && kE5M2Table[kE5M2.inf_code] > 3e38f);

template <Fp8Format F>
inline uint8_t encode_fp8(float x, Fp8Overflow ovf) {
  return ovf == Fp8Overflow::kSaturating ? encode_fp8<F, true>(x) : encode_fp8<F, false>(x);
}

template <Fp8Format F>
void encode_fp8_run(const float* src, void* dst, int64_t n, Fp8Overflow ovf) {
  if (ovf == Fp8Overflow::kSaturating) {
    map_run<float, uint8_t>(src, dst, n, [](float v) { return encode_fp8<F, true>(v); });
  } else {
    map_run<float, uint8_t>(src, dst, n, [](float v) { return encode_fp8<F, false>(v); });
  }
}

// ---- float4_e2m1fn (inside float4_e2m1fn_x4) and float8_e8m0fnu (MX scales) ---------------------------

// 1S 2E 1M, bias 1: magnitudes 0, 0.5 (the one subnormal), 1, 1.5, 2, 3, 4, 6; no inf or NaN.
constexpr Fp8Format kE2M1{1, 1, false, 0x7, 0x7, 0x7};
constexpr uint32_t kFp4MaxCode = 0x7;

constexpr std::array<float, 16> make_fp4_table() {
  std::array<float, 16> t{};
  for (uint32_t c = 0; c < 16; ++c) {
    const uint32_t e = (c >> 1) & 0x3u, m = c & 1u;
    const float mag = e == 0 ? 0.5f * static_cast<float>(m) : pow2f(static_cast<int>(e) - 1) * (1.0f + 0.5f * m);
    t[c] = (c & 0x8u) ? -mag : mag;
  }
  return t;
}
constexpr std::array<float, 16> kFp4Table = make_fp4_table();
static_assert(kFp4Table[kFp4MaxCode] == 6.0f && kFp4Table[0x1] == 0.5f && kFp4Table[0xF] == -6.0f);

// RNE on the float32 bits as encode_fp8 does (a 1-bit mantissa, bias 1), saturating; NaN gives +6.
inline uint8_t encode_fp4(float x) {
  constexpr int kShift = 23 - kE2M1.man_bits;
  constexpr uint32_t kRebias = static_cast<uint32_t>(127 - kE2M1.bias) << 23;
  constexpr uint32_t kMinNormal = static_cast<uint32_t>(128 - kE2M1.bias) << 23;  // 1.0
  constexpr float kMagic = pow2f(1 - kE2M1.bias - kE2M1.man_bits + 23);
  const uint32_t b = f32_bits(x);
  const uint32_t a = b & kF32AbsMask;
  if (is_nan_abs(a)) return static_cast<uint8_t>(kFp4MaxCode);
  const uint32_t sign = (b >> 28) & 0x8u;
  const uint32_t normal = (a - kRebias + ((1u << (kShift - 1)) - 1u) + ((a >> kShift) & 1u)) >> kShift;
  const uint32_t sub = f32_bits(f32_from_bits(a) + kMagic) - f32_bits(kMagic);
  uint32_t r = below(a, kMinNormal) ? sub : normal;
  r = r > kFp4MaxCode ? kFp4MaxCode : r;
  return static_cast<uint8_t>(sign | r);
}

constexpr uint8_t kE8M0NaN = 0xFF;
const float kE8M0Max = pow2f(127);

inline float decode_e8m0(uint8_t c) {
  if (c == kE8M0NaN) return std::numeric_limits<float>::quiet_NaN();
  if (c == 0) return f32_from_bits(0x00400000u);  // 2^-127, a float32 subnormal
  return f32_from_bits(static_cast<uint32_t>(c) << 23);
}

// The nearest power of two (a mantissa of 1.5 or more rounds the exponent up), in [2^-127, 2^127].
inline uint8_t encode_e8m0(float x) {
  if (!(x >= 0.0f) || std::isinf(x)) return kE8M0NaN;  // NaN, negatives, inf
  if (x == 0.0f) return 0;
  int e = 0;
  const float m = std::frexp(x, &e);  // x = m * 2^e, m in [0.5, 1)
  int code = (e - 1) + 127 + (m >= 0.75f ? 1 : 0);
  code = code < 0 ? 0 : (code > 254 ? 254 : code);
  return static_cast<uint8_t>(code);
}

// ---- tfloat32 ----------------------------------------------------------------------------------------

inline float round_tf32(float x) {
  const uint32_t b = f32_bits(x);
  constexpr uint32_t kDropMask = (1u << 13) - 1u;
  const uint32_t rounded = (b + 0xFFFu + ((b >> 13) & 1u)) & ~kDropMask;
  // A NaN keeps its sign and stays a (quiet) NaN after the low bits go.
  const uint32_t nan = (b & ~kDropMask) | kF32QuietNaN;
  return f32_from_bits(is_nan_abs(b & kF32AbsMask) ? nan : rounded);
}

// ---- integers ----------------------------------------------------------------------------------------

// float → integer as the engines convert: truncate toward zero, saturate, NaN → 0. Written as
// selects over 32-bit lanes (SSE2 has float → int32 only) so the bulk loops vectorize; every
// float op is unconditional because -ftrapping-math stops GCC from if-converting a guarded one.
constexpr float kTwo31 = 2147483648.0f;
constexpr float kTwo32 = 4294967296.0f;

template <typename T>
inline T float_to_int(float v) {
  constexpr T kMax = std::numeric_limits<T>::max();
  if constexpr (sizeof(T) < 4) {
    // Bounds are exact floats; anything in [min, max + 1] fits an int32.
    constexpr float kLo = static_cast<float>(std::numeric_limits<T>::min());
    constexpr float kHi = static_cast<float>(kMax) + 1.0f;
    float c = v < kLo ? kLo : v;
    c = c > kHi ? kHi : c;
    c = v != v ? 0.0f : c;
    const int32_t w = static_cast<int32_t>(c);
    return static_cast<T>(w > kMax ? kMax : w);
  } else if constexpr (std::is_signed_v<T>) {
    float c = v < -kTwo31 ? -kTwo31 : v;
    c = (c >= kTwo31 || v != v) ? 0.0f : c;  // NaN → 0; too large is fixed up below
    const int32_t w = static_cast<int32_t>(c);
    return v >= kTwo31 ? kMax : w;
  } else {
    const float c = select_f32(v > 0.0f, v, 0.0f);  // negatives and NaN → 0
    const bool high = c >= kTwo31;
    // Take 2^31 off the high half (exact: floats ≥ 2^31 step by ≥ 256) and add it back as an int.
    float low = select_f32(high, c - kTwo31, c);
    low = select_f32(low < kTwo31, low, 0.0f);  // only when v ≥ 2^32, fixed up below
    const auto w = static_cast<uint32_t>(static_cast<int32_t>(low));
    return select_bits(v >= kTwo32, kMax, w + select_bits(high, 0x80000000u, 0u));
  }
}

inline int64_t float_to_i64(float v) {
  constexpr float kTwo63 = 9223372036854775808.0f;
  if (v != v) return 0;
  if (v >= kTwo63) return std::numeric_limits<int64_t>::max();
  if (v < -kTwo63) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

inline uint8_t to_bool(float v) {
  return v != 0.0f ? 1 : 0;
}

}  // namespace

// ---- type facts --------------------------------------------------------------------------------------

int dtype_size(DType t) {
  switch (t) {
    case DType::kFloat32:
    case DType::kTFloat32:
    case DType::kInt32:
    case DType::kUInt32:
    case DType::kFloat8E4M3FNx4:
    case DType::kFloat8E5M2x4: return 4;
    case DType::kFloat4E2M1FNx4:
    case DType::kBFloat16:
    case DType::kFloat16:
    case DType::kInt16:
    case DType::kUInt16: return 2;
    case DType::kFloat8E4M3:
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E5M2:
    case DType::kInt8:
    case DType::kUInt8:
    case DType::kBool:
    case DType::kFloat8E8M0: return 1;
  }
  invalid_dtype(t);
}

bool dtype_is_float(DType t) {
  switch (t) {
    case DType::kFloat32:
    case DType::kBFloat16:
    case DType::kFloat16:
    case DType::kTFloat32:
    case DType::kFloat8E4M3:
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E5M2:
    case DType::kFloat8E8M0: return true;
    default: return false;
  }
}

bool dtype_is_packed(DType t) {
  return t == DType::kFloat8E4M3FNx4 || t == DType::kFloat8E5M2x4 || t == DType::kFloat4E2M1FNx4;
}

bool dtype_is_int(DType t) {
  switch (t) {
    case DType::kInt8:
    case DType::kInt16:
    case DType::kInt32:
    case DType::kUInt8:
    case DType::kUInt16:
    case DType::kUInt32: return true;
    default: return false;
  }
}

bool dtype_is_numpy_foreign(DType t) {
  return dtype_is_float(t) && t != DType::kFloat32 && t != DType::kFloat16;
}

bool dtype_is_signed(DType t) {
  return (dtype_is_float(t) && t != DType::kFloat8E8M0) || t == DType::kInt8 || t == DType::kInt16 ||
         t == DType::kInt32;
}

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::kFloat32: return "float32";
    case DType::kBFloat16: return "bfloat16";
    case DType::kFloat16: return "float16";
    case DType::kTFloat32: return "tfloat32";
    case DType::kFloat8E4M3: return "float8_e4m3";
    case DType::kFloat8E4M3FN: return "float8_e4m3fn";
    case DType::kFloat8E5M2: return "float8_e5m2";
    case DType::kInt8: return "int8";
    case DType::kInt16: return "int16";
    case DType::kInt32: return "int32";
    case DType::kUInt8: return "uint8";
    case DType::kUInt16: return "uint16";
    case DType::kUInt32: return "uint32";
    case DType::kBool: return "bool";
    case DType::kFloat8E4M3FNx4: return "float8_e4m3fn_x4";
    case DType::kFloat8E5M2x4: return "float8_e5m2_x4";
    case DType::kFloat4E2M1FNx4: return "float4_e2m1fn_x4";
    case DType::kFloat8E8M0: return "float8_e8m0fnu";
  }
  invalid_dtype(t);
}

std::optional<DType> dtype_from_name(std::string_view name) {
  struct Alias {
    std::string_view name;
    DType type;
  };
  static constexpr Alias kAliases[] = {
      {"float32", DType::kFloat32},
      {"fp32", DType::kFloat32},
      {"float", DType::kFloat32},
      {"f32", DType::kFloat32},
      {"bfloat16", DType::kBFloat16},
      {"bf16", DType::kBFloat16},
      {"float16", DType::kFloat16},
      {"fp16", DType::kFloat16},
      {"half", DType::kFloat16},
      {"f16", DType::kFloat16},
      {"tfloat32", DType::kTFloat32},
      {"tf32", DType::kTFloat32},
      {"float8_e4m3", DType::kFloat8E4M3},
      {"fp8_e4m3", DType::kFloat8E4M3},
      {"e4m3", DType::kFloat8E4M3},
      {"float8_e4m3fn", DType::kFloat8E4M3FN},
      {"fp8_e4m3fn", DType::kFloat8E4M3FN},
      {"e4m3fn", DType::kFloat8E4M3FN},
      {"float8_e5m2", DType::kFloat8E5M2},
      {"fp8_e5m2", DType::kFloat8E5M2},
      {"e5m2", DType::kFloat8E5M2},
      {"int8", DType::kInt8},
      {"i8", DType::kInt8},
      {"int16", DType::kInt16},
      {"i16", DType::kInt16},
      {"int32", DType::kInt32},
      {"i32", DType::kInt32},
      {"int", DType::kInt32},
      {"uint8", DType::kUInt8},
      {"u8", DType::kUInt8},
      {"uint16", DType::kUInt16},
      {"u16", DType::kUInt16},
      {"uint32", DType::kUInt32},
      {"u32", DType::kUInt32},
      {"bool", DType::kBool},
      {"bool_", DType::kBool},
      {"float8_e4m3fn_x4", DType::kFloat8E4M3FNx4},
      {"float8_e5m2_x4", DType::kFloat8E5M2x4},
      {"float4_e2m1fn_x4", DType::kFloat4E2M1FNx4},
      {"float8_e8m0fnu", DType::kFloat8E8M0},
      {"e8m0", DType::kFloat8E8M0},
  };
  for (const Alias& a : kAliases) {
    if (a.name == name) return a.type;
  }
  return std::nullopt;
}

float dtype_max_finite(DType t) {
  switch (t) {
    case DType::kFloat32: return std::numeric_limits<float>::max();
    case DType::kBFloat16: return decode_bf16(0x7F7F);
    case DType::kFloat16: return 65504.0f;
    case DType::kTFloat32: return f32_from_bits(0x7F7FE000u);
    case DType::kFloat8E4M3: return kE4M3Table[kE4M3.max_code];
    case DType::kFloat8E4M3FN: return kE4M3FNTable[kE4M3FN.max_code];
    case DType::kFloat8E5M2: return kE5M2Table[kE5M2.max_code];
    // Integers: their largest value, rounded to float32 (int32/uint32 round up to 2^31 / 2^32).
    case DType::kInt8: return 127.0f;
    case DType::kInt16: return 32767.0f;
    case DType::kInt32: return static_cast<float>(std::numeric_limits<int32_t>::max());
    case DType::kUInt8: return 255.0f;
    case DType::kUInt16: return 65535.0f;
    case DType::kUInt32: return static_cast<float>(std::numeric_limits<uint32_t>::max());
    case DType::kBool: return 1.0f;
    case DType::kFloat8E8M0: return kE8M0Max;
    // Packed types: the largest value of one lane.
    case DType::kFloat8E4M3FNx4: return kE4M3FNTable[kE4M3FN.max_code];
    case DType::kFloat8E5M2x4: return kE5M2Table[kE5M2.max_code];
    case DType::kFloat4E2M1FNx4: return kFp4Table[kFp4MaxCode];
  }
  invalid_dtype(t);
}

// ---- scalar conversions ------------------------------------------------------------------------------

uint16_t bf16_from_f32(float x) {
  return encode_bf16(x);
}
float bf16_to_f32(uint16_t bits) {
  return decode_bf16(bits);
}
uint16_t fp16_from_f32(float x) {
  return encode_fp16(x);
}
float fp16_to_f32(uint16_t bits) {
  return fp16_table()[bits];
}
float f32_from_f64(double d) {
  constexpr double kFltMax = std::numeric_limits<float>::max();
  constexpr double kOverflow = kFltMax + 0x1p103;  // FLT_MAX + half an ulp: rounds to inf (ties even)
  if (std::isfinite(d) && std::fabs(d) > kFltMax) {
    const double mag = std::fabs(d) >= kOverflow ? std::numeric_limits<double>::infinity() : kFltMax;
    return static_cast<float>(std::copysign(mag, d));
  }
  return static_cast<float>(d);
}

float tf32_round(float x) {
  return round_tf32(x);
}

uint8_t fp8e4m3_from_f32(float x, Fp8Overflow ovf) {
  return encode_fp8<kE4M3>(x, ovf);
}
float fp8e4m3_to_f32(uint8_t bits) {
  return kE4M3Table[bits];
}
uint8_t fp8e4m3fn_from_f32(float x, Fp8Overflow ovf) {
  return encode_fp8<kE4M3FN>(x, ovf);
}
float fp8e4m3fn_to_f32(uint8_t bits) {
  return kE4M3FNTable[bits];
}
uint8_t fp8e5m2_from_f32(float x, Fp8Overflow ovf) {
  return encode_fp8<kE5M2>(x, ovf);
}
float fp8e5m2_to_f32(uint8_t bits) {
  return kE5M2Table[bits];
}
uint8_t fp4e2m1_from_f32(float x) {
  return encode_fp4(x);
}
float fp4e2m1_to_f32(uint8_t code) {
  return kFp4Table[code & 0xFu];
}
float e8m0_to_f32(uint8_t bits) {
  return decode_e8m0(bits);
}
uint8_t e8m0_from_f32(float x) {
  return encode_e8m0(x);
}

std::optional<DType> packed_lane_dtype(DType t) {
  switch (t) {
    case DType::kFloat8E4M3FNx4: return DType::kFloat8E4M3FN;
    case DType::kFloat8E5M2x4: return DType::kFloat8E5M2;
    default: return std::nullopt;
  }
}

float packed_lane_load(const void* p, DType t, int j) {
  const auto* b = static_cast<const uint8_t*>(p);
  switch (t) {
    case DType::kFloat8E4M3FNx4: return kE4M3FNTable[b[j]];
    case DType::kFloat8E5M2x4: return kE5M2Table[b[j]];
    case DType::kFloat4E2M1FNx4: return kFp4Table[(b[j / 2] >> (4 * (j % 2))) & 0xFu];
    default: invalid_dtype(t);
  }
}

void packed_lane_store(void* p, DType t, int j, float v, Fp8Overflow ovf) {
  auto* b = static_cast<uint8_t*>(p);
  switch (t) {
    case DType::kFloat8E4M3FNx4: b[j] = encode_fp8<kE4M3FN>(v, ovf); return;
    case DType::kFloat8E5M2x4: b[j] = encode_fp8<kE5M2>(v, ovf); return;
    case DType::kFloat4E2M1FNx4: {
      const int shift = 4 * (j % 2);
      b[j / 2] = static_cast<uint8_t>((b[j / 2] & ~(0xFu << shift)) | (encode_fp4(v) << shift));
      return;
    }
    default: invalid_dtype(t);
  }
}

// ---- element access ----------------------------------------------------------------------------------

float load_f32(const void* p, DType t) {
  switch (t) {
    case DType::kFloat32: return load_raw<float>(p);
    case DType::kBFloat16: return decode_bf16(load_raw<uint16_t>(p));
    case DType::kFloat16: return fp16_table()[load_raw<uint16_t>(p)];
    case DType::kTFloat32: return round_tf32(load_raw<float>(p));
    case DType::kFloat8E4M3: return kE4M3Table[load_raw<uint8_t>(p)];
    case DType::kFloat8E4M3FN: return kE4M3FNTable[load_raw<uint8_t>(p)];
    case DType::kFloat8E5M2: return kE5M2Table[load_raw<uint8_t>(p)];
    case DType::kInt8: return static_cast<float>(load_raw<int8_t>(p));
    case DType::kInt16: return static_cast<float>(load_raw<int16_t>(p));
    case DType::kInt32: return static_cast<float>(load_raw<int32_t>(p));
    case DType::kUInt8: return static_cast<float>(load_raw<uint8_t>(p));
    case DType::kUInt16: return static_cast<float>(load_raw<uint16_t>(p));
    case DType::kUInt32: return static_cast<float>(load_raw<uint32_t>(p));
    case DType::kBool: return load_raw<uint8_t>(p) != 0 ? 1.0f : 0.0f;
    case DType::kFloat8E8M0: return decode_e8m0(load_raw<uint8_t>(p));
    case DType::kFloat8E4M3FNx4:
    case DType::kFloat8E5M2x4: return static_cast<float>(load_raw<uint32_t>(p));
    case DType::kFloat4E2M1FNx4: return static_cast<float>(load_raw<uint16_t>(p));
  }
  invalid_dtype(t);
}

void store_f32(void* p, DType t, float v, Fp8Overflow ovf) {
  switch (t) {
    case DType::kFloat32: return store_raw(p, v);
    case DType::kBFloat16: return store_raw(p, encode_bf16(v));
    case DType::kFloat16: return store_raw(p, encode_fp16(v));
    case DType::kTFloat32: return store_raw(p, round_tf32(v));
    case DType::kFloat8E4M3: return store_raw(p, encode_fp8<kE4M3>(v, ovf));
    case DType::kFloat8E4M3FN: return store_raw(p, encode_fp8<kE4M3FN>(v, ovf));
    case DType::kFloat8E5M2: return store_raw(p, encode_fp8<kE5M2>(v, ovf));
    case DType::kInt8: return store_raw(p, float_to_int<int8_t>(v));
    case DType::kInt16: return store_raw(p, float_to_int<int16_t>(v));
    case DType::kInt32: return store_raw(p, float_to_int<int32_t>(v));
    case DType::kUInt8: return store_raw(p, float_to_int<uint8_t>(v));
    case DType::kUInt16: return store_raw(p, float_to_int<uint16_t>(v));
    case DType::kUInt32: return store_raw(p, float_to_int<uint32_t>(v));
    case DType::kBool: return store_raw(p, to_bool(v));
    case DType::kFloat8E8M0: return store_raw(p, encode_e8m0(v));
    case DType::kFloat8E4M3FNx4:
    case DType::kFloat8E5M2x4: return store_raw(p, float_to_int<uint32_t>(v));
    case DType::kFloat4E2M1FNx4: return store_raw(p, float_to_int<uint16_t>(v));
  }
  invalid_dtype(t);
}

int64_t load_i64(const void* p, DType t) {
  switch (t) {
    case DType::kInt8: return load_raw<int8_t>(p);
    case DType::kInt16: return load_raw<int16_t>(p);
    case DType::kInt32: return load_raw<int32_t>(p);
    case DType::kUInt8: return load_raw<uint8_t>(p);
    case DType::kUInt16: return load_raw<uint16_t>(p);
    case DType::kUInt32: return load_raw<uint32_t>(p);
    case DType::kBool: return load_raw<uint8_t>(p) != 0 ? 1 : 0;
    case DType::kFloat8E4M3FNx4:
    case DType::kFloat8E5M2x4: return load_raw<uint32_t>(p);
    case DType::kFloat4E2M1FNx4: return load_raw<uint16_t>(p);
    default: return float_to_i64(load_f32(p, t));
  }
}

void store_i64(void* p, DType t, int64_t v) {
  // Integer conversions are modular in C++20: exactly NumPy's wrap-around.
  switch (t) {
    case DType::kInt8: return store_raw(p, static_cast<int8_t>(v));
    case DType::kInt16: return store_raw(p, static_cast<int16_t>(v));
    case DType::kInt32: return store_raw(p, static_cast<int32_t>(v));
    case DType::kUInt8: return store_raw(p, static_cast<uint8_t>(v));
    case DType::kUInt16: return store_raw(p, static_cast<uint16_t>(v));
    case DType::kUInt32: return store_raw(p, static_cast<uint32_t>(v));
    case DType::kBool: return store_raw(p, static_cast<uint8_t>(v != 0 ? 1 : 0));
    case DType::kFloat8E4M3FNx4:
    case DType::kFloat8E5M2x4: return store_raw(p, static_cast<uint32_t>(v));
    case DType::kFloat4E2M1FNx4: return store_raw(p, static_cast<uint16_t>(v));
    default: return store_f32(p, t, static_cast<float>(v));
  }
}

// ---- bulk conversions --------------------------------------------------------------------------------

namespace {

// The bulk loops of each kind of type, one instantiation per element type.
template <typename T>
void ints_to_f32(const void* src, float* dst, int64_t n) {
  map_run<T, float>(src, dst, n, [](T v) { return static_cast<float>(v); });
}

template <typename T>
void f32_to_ints(const float* src, void* dst, int64_t n) {
  map_run<float, T>(src, dst, n, [](float v) { return float_to_int<T>(v); });
}

void table_to_f32(const void* src, const float* table, float* dst, int64_t n) {
  map_run<uint8_t, float>(src, dst, n, [table](uint8_t c) { return table[c]; });
}

}  // namespace

void convert_to_f32(const void* src, DType t, float* dst, int64_t n) {
  if (n <= 0) return;
  switch (t) {
    case DType::kFloat32: std::memmove(dst, src, static_cast<size_t>(n) * sizeof(float)); return;
    case DType::kBFloat16: return map_run<uint16_t, float>(src, dst, n, [](uint16_t h) { return decode_bf16(h); });
    case DType::kFloat16: {
      const float* table = fp16_table();
      return map_run<uint16_t, float>(src, dst, n, [table](uint16_t h) { return table[h]; });
    }
    case DType::kTFloat32: return map_run<float, float>(src, dst, n, [](float v) { return round_tf32(v); });
    case DType::kFloat8E4M3: return table_to_f32(src, kE4M3Table.data(), dst, n);
    case DType::kFloat8E4M3FN: return table_to_f32(src, kE4M3FNTable.data(), dst, n);
    case DType::kFloat8E5M2: return table_to_f32(src, kE5M2Table.data(), dst, n);
    case DType::kInt8: return ints_to_f32<int8_t>(src, dst, n);
    case DType::kInt16: return ints_to_f32<int16_t>(src, dst, n);
    case DType::kInt32: return ints_to_f32<int32_t>(src, dst, n);
    case DType::kUInt8: return ints_to_f32<uint8_t>(src, dst, n);
    case DType::kUInt16: return ints_to_f32<uint16_t>(src, dst, n);
    case DType::kUInt32: return ints_to_f32<uint32_t>(src, dst, n);
    case DType::kBool: return map_run<uint8_t, float>(src, dst, n, [](uint8_t v) { return v != 0 ? 1.0f : 0.0f; });
    case DType::kFloat8E8M0: return map_run<uint8_t, float>(src, dst, n, [](uint8_t c) { return decode_e8m0(c); });
    case DType::kFloat8E4M3FNx4:
    case DType::kFloat8E5M2x4: return ints_to_f32<uint32_t>(src, dst, n);
    case DType::kFloat4E2M1FNx4: return ints_to_f32<uint16_t>(src, dst, n);
  }
  invalid_dtype(t);
}

void convert_from_f32(const float* src, void* dst, DType t, int64_t n, Fp8Overflow ovf) {
  if (n <= 0) return;
  switch (t) {
    case DType::kFloat32: std::memmove(dst, src, static_cast<size_t>(n) * sizeof(float)); return;
    case DType::kBFloat16: return map_run<float, uint16_t>(src, dst, n, [](float v) { return encode_bf16(v); });
    case DType::kFloat16: return map_run<float, uint16_t>(src, dst, n, [](float v) { return encode_fp16(v); });
    case DType::kTFloat32: return map_run<float, float>(src, dst, n, [](float v) { return round_tf32(v); });
    case DType::kFloat8E4M3: return encode_fp8_run<kE4M3>(src, dst, n, ovf);
    case DType::kFloat8E4M3FN: return encode_fp8_run<kE4M3FN>(src, dst, n, ovf);
    case DType::kFloat8E5M2: return encode_fp8_run<kE5M2>(src, dst, n, ovf);
    case DType::kInt8: return f32_to_ints<int8_t>(src, dst, n);
    case DType::kInt16: return f32_to_ints<int16_t>(src, dst, n);
    case DType::kInt32: return f32_to_ints<int32_t>(src, dst, n);
    case DType::kUInt8: return f32_to_ints<uint8_t>(src, dst, n);
    case DType::kUInt16: return f32_to_ints<uint16_t>(src, dst, n);
    case DType::kUInt32: return f32_to_ints<uint32_t>(src, dst, n);
    case DType::kBool: return map_run<float, uint8_t>(src, dst, n, [](float v) { return to_bool(v); });
    case DType::kFloat8E8M0: return map_run<float, uint8_t>(src, dst, n, [](float v) { return encode_e8m0(v); });
    case DType::kFloat8E4M3FNx4:
    case DType::kFloat8E5M2x4: return f32_to_ints<uint32_t>(src, dst, n);
    case DType::kFloat4E2M1FNx4: return f32_to_ints<uint16_t>(src, dst, n);
  }
  invalid_dtype(t);
}

// ---- type promotion ----------------------------------------------------------------------------------

namespace {

// The result of a binary op on each pair of types (nki-spec §3.9); symmetric. Rows and columns
// follow the DType order. The short names exist only so the matrix reads as one (docs/dtypes.md
// shows the same matrix).
constexpr DType F32 = DType::kFloat32, BF16 = DType::kBFloat16, F16 = DType::kFloat16, TF32 = DType::kTFloat32,
                E4M3 = DType::kFloat8E4M3, E4FN = DType::kFloat8E4M3FN, E5M2 = DType::kFloat8E5M2, I8 = DType::kInt8,
                I16 = DType::kInt16, I32 = DType::kInt32, U8 = DType::kUInt8, U16 = DType::kUInt16,
                U32 = DType::kUInt32, BOOL = DType::kBool, Q8 = DType::kFloat8E4M3FNx4, Q5 = DType::kFloat8E5M2x4,
                Q4 = DType::kFloat4E2M1FNx4, E8M0 = DType::kFloat8E8M0;

// The packed x4 types take part in no arithmetic (the instructions refuse them); their rows only
// keep the matrix whole: a packed type with itself is itself, with anything else float32.
// float8_e8m0fnu promotes as the float8 types do, and with them to bfloat16.
constexpr DType kPromote[kNumDTypes][kNumDTypes] = {
    //        F32   BF16  F16   TF32  E4M3  E4FN  E5M2  I8    I16   I32   U8    U16   U32   BOOL  Q8   Q5   Q4   E8M0
    /*F32 */ {F32, F32, F32, F32, F32, F32, F32, F32, F32, F32, F32, F32, F32, F32, F32, F32, F32, F32},
    /*BF16*/ {F32, BF16, F32, TF32, BF16, BF16, BF16, BF16, BF16, BF16, BF16, BF16, BF16, BF16, F32, F32, F32, BF16},
    /*F16 */ {F32, F32, F16, TF32, F16, F16, F16, F16, F16, F16, F16, F16, F16, F16, F32, F32, F32, F16},
    /*TF32*/ {F32, TF32, TF32, TF32, TF32, TF32, TF32, TF32, TF32, TF32, TF32, TF32, TF32, TF32, F32, F32, F32, TF32},
    /*E4M3*/ {F32, BF16, F16, TF32, E4M3, BF16, BF16, E4M3, E4M3, E4M3, E4M3, E4M3, E4M3, E4M3, F32, F32, F32, BF16},
    /*E4FN*/ {F32, BF16, F16, TF32, BF16, E4FN, BF16, E4FN, E4FN, E4FN, E4FN, E4FN, E4FN, E4FN, F32, F32, F32, BF16},
    /*E5M2*/ {F32, BF16, F16, TF32, BF16, BF16, E5M2, E5M2, E5M2, E5M2, E5M2, E5M2, E5M2, E5M2, F32, F32, F32, BF16},
    /*I8  */ {F32, BF16, F16, TF32, E4M3, E4FN, E5M2, I8, I16, I32, I16, I32, F32, I8, F32, F32, F32, E8M0},
    /*I16 */ {F32, BF16, F16, TF32, E4M3, E4FN, E5M2, I16, I16, I32, I16, I32, F32, I16, F32, F32, F32, E8M0},
    /*I32 */ {F32, BF16, F16, TF32, E4M3, E4FN, E5M2, I32, I32, I32, I32, I32, F32, I32, F32, F32, F32, E8M0},
    /*U8  */ {F32, BF16, F16, TF32, E4M3, E4FN, E5M2, I16, I16, I32, U8, U16, U32, U8, F32, F32, F32, E8M0},
    /*U16 */ {F32, BF16, F16, TF32, E4M3, E4FN, E5M2, I32, I32, I32, U16, U16, U32, U16, F32, F32, F32, E8M0},
    /*U32 */ {F32, BF16, F16, TF32, E4M3, E4FN, E5M2, F32, F32, F32, U32, U32, U32, U32, F32, F32, F32, E8M0},
    /*BOOL*/ {F32, BF16, F16, TF32, E4M3, E4FN, E5M2, I8, I16, I32, U8, U16, U32, BOOL, F32, F32, F32, E8M0},
    /*Q8  */ {F32, F32, F32, F32, F32, F32, F32, F32, F32, F32, F32, F32, F32, F32, Q8, F32, F32, F32},
    /*Q5  */ {F32, F32, F32, F32, F32, F32, F32, F32, F32, F32, F32, F32, F32, F32, F32, Q5, F32, F32},
    /*Q4  */ {F32, F32, F32, F32, F32, F32, F32, F32, F32, F32, F32, F32, F32, F32, F32, F32, Q4, F32},
    /*E8M0*/ {F32, BF16, F16, TF32, BF16, BF16, BF16, E8M0, E8M0, E8M0, E8M0, E8M0, E8M0, E8M0, F32, F32, F32, E8M0},
};

constexpr bool is_symmetric(const DType (&table)[kNumDTypes][kNumDTypes]) {
  for (int i = 0; i < kNumDTypes; ++i) {
    for (int j = 0; j < kNumDTypes; ++j) {
      if (table[i][j] != table[j][i]) return false;
    }
  }
  return true;
}
static_assert(is_symmetric(kPromote));

}  // namespace

DType promote_types(DType a, DType b) {
  const auto ia = static_cast<unsigned>(a);
  const auto ib = static_cast<unsigned>(b);
  if (ia >= static_cast<unsigned>(kNumDTypes)) invalid_dtype(a);
  if (ib >= static_cast<unsigned>(kNumDTypes)) invalid_dtype(b);
  return kPromote[ia][ib];
}

DType scalar_dtype(ScalarKind k) {
  switch (k) {
    case ScalarKind::kBool: return DType::kUInt8;
    case ScalarKind::kInt: return DType::kInt32;
    case ScalarKind::kFloat: return DType::kFloat32;
  }
  internal_fail(__FILE__, __LINE__, "invalid ScalarKind value " + std::to_string(static_cast<int>(k)));
}

}  // namespace nki_agent
