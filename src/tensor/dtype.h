// tensor/dtype.h — the element types NeuronCore kernels see, and exact conversions between them.
//
// Narrow floats (bfloat16, float16, the float8 formats) are stored as their raw bits and converted
// through float32 with round-to-nearest-even, as the engines do when they write an output. tfloat32
// is stored as a float32 whose low 13 mantissa bits are dropped (RNE) when it is used.
//
// float8 formats (bias, range, specials — see docs/dtypes.md for the full table):
//   float8_e4m3    1S 4E 3M, bias 7, IEEE-style: exp 15 holds ±inf (mantissa 0) and NaN. Max 240.
//                  The format of nl.float8_e4m3 on NeuronCore-v2/v3 (trn1, trn2).
//   float8_e4m3fn  1S 4E 3M, bias 7, OCP "fn": no inf, NaN only S.1111.111. Max 448. NeuronCore-v4.
//   float8_e5m2    1S 5E 2M, bias 15, IEEE-style: ±inf and NaN. Max 57344.
//   float4_e2m1fn  1S 2E 1M, bias 1, no inf or NaN: 0, 0.5, 1, 1.5, 2, 3, 4, 6. Only inside float4_e2m1fn_x4.
//   float8_e8m0fnu 8E, bias 127, unsigned: 2^(e - 127) for e < 255, NaN for 0xFF (OCP MX scale).
// The packed x4 types (OCP MX data, four values per element, value j in byte j or nibble j) have no
// scalar value: they move as their bits (load_i64/store_i64 read and write the unsigned integer of
// the element; load_f32 gives that integer as a float); packed_lane_* reach the values inside.
// Overflow policy (Fp8Overflow): kNonSaturating (the default, as ml_dtypes and nki.simulate behave)
// sends a value that rounds beyond the largest finite to ±inf, or to NaN for float8_e4m3fn which
// has no inf; kSaturating clamps it to ±max finite (inf inputs too). NaN stays NaN either way.
//
// This header must never depend on the rest of tensor/: everything else builds on it.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace nki_agent {

enum class DType : uint8_t {
  kFloat32,
  kBFloat16,
  kFloat16,
  kTFloat32,      // stored in 4 bytes as float32; 10-bit mantissa when used
  kFloat8E4M3,    // IEEE-style e4m3 (trn1/trn2)
  kFloat8E4M3FN,  // OCP e4m3fn (trn3)
  kFloat8E5M2,
  kInt8,
  kInt16,
  kInt32,
  kUInt8,
  kUInt16,
  kUInt32,
  kBool,            // stored as uint8, 0 or 1
  kFloat8E4M3FNx4,  // float8_e4m3fn_x4: four float8_e4m3fn values in 4 bytes (MX data, NeuronCore-v4)
  kFloat8E5M2x4,    // float8_e5m2_x4: four float8_e5m2 values in 4 bytes
  kFloat4E2M1FNx4,  // float4_e2m1fn_x4: four float4_e2m1fn values in 2 bytes (value j in bits 4j..4j+3)
  kFloat8E8M0,      // float8_e8m0fnu: an MX scale 2^(e - 127); 0xFF is NaN; no sign, zero or inf
};
inline constexpr int kNumDTypes = 18;

enum class Fp8Overflow : uint8_t { kNonSaturating, kSaturating };

// Size of one element in bytes.
int dtype_size(DType t);
bool dtype_is_float(DType t);   // every floating type, tfloat32 and float8 included
bool dtype_is_int(DType t);     // signed or unsigned integer (not bool)
bool dtype_is_signed(DType t);  // float types and signed integers
// The packed x4 types (float8_e4m3fn_x4, float8_e5m2_x4, float4_e2m1fn_x4): not float, not int.
bool dtype_is_packed(DType t);
inline constexpr int kPackedLanes = 4;  // values per packed element
// Types NumPy has no dtype for: bfloat16, tfloat32 and the float8 formats. They cross into NumPy
// as float32 values (or raw bits with a tag, in .npy files).
bool dtype_is_numpy_foreign(DType t);
// Canonical name as NKI spells it: "float32", "bfloat16", "float8_e4m3", "uint8", "bool", ...
// (a view of a string literal, so .data() is NUL-terminated)
std::string_view dtype_name(DType t);
// Parses a canonical name or a common alias ("bf16", "fp16", "half", "fp32", "float", "fp8_e4m3",
// "tf32", "bool_", "int", ...). Empty on an unknown name.
std::optional<DType> dtype_from_name(std::string_view name);

// ---- scalar conversions -------------------------------------------------------------------------
// Every X_from_f32 rounds to nearest, ties to even, keeps the sign of zero, and maps NaN to the
// format's canonical quiet NaN. Subnormals of the target are produced (no flush to zero).
uint16_t bf16_from_f32(float x);
float bf16_to_f32(uint16_t bits);
uint16_t fp16_from_f32(float x);
float fp16_to_f32(uint16_t bits);
float tf32_round(float x);
// double → float32, round to nearest even, overflowing to ±inf as an IEEE conversion does (a plain
// C++ cast of a double beyond float's range is undefined behaviour).
float f32_from_f64(double d);  // float32 rounded (RNE) to a 10-bit mantissa; the result is a float32
uint8_t fp8e4m3_from_f32(float x, Fp8Overflow ovf = Fp8Overflow::kNonSaturating);
float fp8e4m3_to_f32(uint8_t bits);
uint8_t fp8e4m3fn_from_f32(float x, Fp8Overflow ovf = Fp8Overflow::kNonSaturating);
float fp8e4m3fn_to_f32(uint8_t bits);
uint8_t fp8e5m2_from_f32(float x, Fp8Overflow ovf = Fp8Overflow::kNonSaturating);
float fp8e5m2_to_f32(uint8_t bits);
// float4_e2m1fn: a 4-bit code (sign in bit 3), RNE. The format has no inf or NaN: magnitudes past 6
// (inf included) saturate to ±6, and NaN gives +6.
uint8_t fp4e2m1_from_f32(float x);
float fp4e2m1_to_f32(uint8_t code);
// float8_e8m0fnu: 2^(e - 127); NaN for 0xFF. Encoding rounds the exponent to nearest (a mantissa of
// 1.5 or more rounds up), clamps to [2^-127, 2^127]; NaN, inf, zero and negatives give 0xFF, 0, 0xFF.
float e8m0_to_f32(uint8_t bits);
uint8_t e8m0_from_f32(float x);

// Value j (0..3) of the packed element at p, of packed type t, as float32; and its write (RNE into
// the lane's format, fp8 overflow by `ovf`).
float packed_lane_load(const void* p, DType t, int j);
void packed_lane_store(void* p, DType t, int j, float v, Fp8Overflow ovf = Fp8Overflow::kSaturating);
// The scalar format of one lane: float8_e4m3fn / float8_e5m2; float4_e2m1fn has none (nullopt).
std::optional<DType> packed_lane_dtype(DType t);

// The value range of an integer type (bool: 0..1); {0, 0} for float types.
struct IntRange {
  int64_t lo, hi;
};
constexpr IntRange int_dtype_range(DType t) {
  switch (t) {
    case DType::kInt8: return {-128, 127};
    case DType::kInt16: return {-32768, 32767};
    case DType::kInt32: return {-2147483648LL, 2147483647LL};
    case DType::kUInt8: return {0, 255};
    case DType::kUInt16: return {0, 65535};
    case DType::kUInt32: return {0, 4294967295LL};
    case DType::kBool: return {0, 1};
    default: return {0, 0};
  }
}

// Largest finite value of a float type (as float32), e.g. 240 for float8_e4m3.
float dtype_max_finite(DType t);

// ---- element access through raw storage ---------------------------------------------------------
// Reads the element at p (of type t) as float32. Integers convert exactly where float32 can hold
// them (int32/uint32 beyond 2^24 round to nearest).
float load_f32(const void* p, DType t);
// Writes v (float32) as type t: floats round to nearest even (fp8 by `ovf`); integers truncate toward
// zero and saturate at the type's range, NaN becomes 0 (the engines' float→int conversion);
// bool stores v != 0.
void store_f32(void* p, DType t, float v, Fp8Overflow ovf = Fp8Overflow::kNonSaturating);
// Integer element access: reads any type as int64 (floats truncate toward zero, NaN → 0), and writes
// an int64 with wrap-around (two's complement, like NumPy's astype on integers) into integer types
// and bool (v != 0); float types receive the nearest float32 then their own rounding.
int64_t load_i64(const void* p, DType t);
void store_i64(void* p, DType t, int64_t v);

// Bulk conversions over contiguous runs (the hot path of every elementwise op and cast).
void convert_to_f32(const void* src, DType t, float* dst, int64_t n);
void convert_from_f32(const float* src, void* dst, DType t, int64_t n, Fp8Overflow ovf = Fp8Overflow::kNonSaturating);

// ---- type promotion -----------------------------------------------------------------------------
// The result type of a binary operation on two tensors, by NKI's rules (nki-spec §3.9):
//   (float, int) → the float;  (float, float) → the wider, or one covering both:
//   (fp16, bf16) → fp32, (fp8_e4m3, fp8_e5m2) → bf16, (fp8, fp16) → fp16, (fp8, bf16) → bf16,
//   (tf32, fp32) → fp32, (tf32, 16-bit) → tf32;
//   (int, int) → the wider, or a signed type covering both: (int8, uint8) → int16,
//   (int8, uint16) → int32, (int32, uint32) → float32 (no 64-bit integers on the hardware);
//   bool with anything → the other type.
DType promote_types(DType a, DType b);

// The type a Python scalar takes in arithmetic with a tensor: bool → uint8, int → int32,
// float → float32 ("weakly typed" scalars widen: (int8, 2) → int32, (fp16, 1.2) → fp32).
enum class ScalarKind : uint8_t { kBool, kInt, kFloat };
DType scalar_dtype(ScalarKind k);

}  // namespace nki_agent
