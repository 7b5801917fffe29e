// tensor/rng.h — seeded random numbers whose streams are bit-identical on every machine and compiler.
//
// Tests, benchmarks and weight initialisation need inputs that a run on another machine (or a
// golden file written last year) reproduces exactly. So this module never uses std:: distributions
// (their algorithms differ between standard libraries) or libm transcendentals (their last bits
// differ between libm versions), and the build keeps -ffp-contract=off so no a*b+c gets fused.
//
// Generator: Philox4x32-10 (Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as easy as
// 1, 2, 3", SC'11), a counter-based generator: each 128-bit counter is encrypted under a 64-bit key
// into four 32-bit outputs. Here
//   key     = the 64-bit seed (low word, high word)
//   counter = (block index low, block index high, stream low, stream high)
// so (seed, stream) pairs name independent streams of 2^64 blocks each; stream_id() hashes a name
// (FNV-1a 64) to give each named weight its own stream.
//
// Derived values, all from the u32 sequence in order:
//   next_u64      two u32s, the first is the low half
//   uniform       (next_u64 >> 11) * 2^-53, in [0, 1)
//   uniform_f32   (next_u32 >> 8) * 2^-24, in [0, 1)
//   normal        Marsaglia's polar method on pairs of uniform(); the second value of each pair is
//                 kept and returned by the next call. It needs log and sqrt: sqrt is std::sqrt, which
//                 IEEE 754 requires to be correctly rounded; log is our own det_log(), written in plain
//                 double arithmetic (exponent by bit operations, then the atanh series), so it gives
//                 the same bits everywhere.
//   integers      uniform in [low, high) by rejection (no modulo bias): ranges up to 2^32 draw one
//                 u32 per try, wider ones one u64.
// Tensor fills write each element of a (possibly strided) view in C order through store_f32 /
// store_i64, so narrow types get their own rounding (bf16 values are RNE-rounded float32 draws,
// and a bf16 fill equals the float32 fill of the same Rng rounded to bf16). Rounding may carry a
// value of fill_uniform up to `high` itself, as NumPy's float64 draws cast to float32 can.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "tensor/tensor.h"

namespace nki_agent {

using PhiloxCounter = std::array<uint32_t, 4>;
using PhiloxKey = std::array<uint32_t, 2>;

// One Philox4x32-10 block: the 10-round encryption of `counter` under `key`.
PhiloxCounter philox4x32_10(PhiloxCounter counter, PhiloxKey key);
// The blocks of `count` consecutive counters {first + i (64 bits), stream (64 bits)}, i < count:
// block i's four words land in out[4 i .. 4 i + 3], the same bits as philox4x32_10 gives them.
// Computed a lane per block, so that the compiler vectorises the rounds (several times faster than
// a call per block).
void philox4x32_10_blocks(uint64_t first, uint64_t stream, PhiloxKey key, int64_t count, uint32_t* out);

// Natural log in plain IEEE double arithmetic: the same bits on every platform. Error below 1 ulp
// (0.95 ulp worst on a sweep checked against 60-digit decimal logs; ~5% of results are not
// correctly rounded, so it can differ from std::log by 1 ulp). log(0) = -inf, log(x<0) = NaN,
// log(inf) = inf; subnormals are handled.
double det_log(double x);

class Rng {
 public:
  explicit Rng(uint64_t seed, uint64_t stream = 0);

  // A stable 64-bit hash (FNV-1a) of a name, for Rng(seed, Rng::stream_id("layer0.wq")).
  static uint64_t stream_id(std::string_view name);

  uint64_t seed() const { return seed_; }
  uint64_t stream() const { return stream_; }

  uint32_t next_u32();
  uint64_t next_u64();
  double uniform();     // [0, 1), 53 random bits
  float uniform_f32();  // [0, 1), 24 random bits
  double normal();      // standard normal
  // Uniform in [low, high); throws std::invalid_argument unless low < high.
  int64_t integers(int64_t low, int64_t high);

  // Fill every element of the view `t` in C order. Values go through store_f32 (uniform, normal)
  // or store_i64 (integers), so they are rounded, truncated or wrapped into t's dtype by its rules.
  void fill_uniform(Tensor& t, double low, double high);
  void fill_normal(Tensor& t, double mean, double stddev);
  void fill_integers(Tensor& t, int64_t low, int64_t high);

 private:
  void refill();

  uint64_t seed_;
  uint64_t stream_;
  uint64_t block_ = 0;      // index of the next block to generate
  PhiloxCounter buf_{};     // outputs of the current block
  int pos_ = 4;             // next unused word of buf_ (4: empty)
  bool has_spare_ = false;  // polar method: second normal of the last pair
  double spare_ = 0.0;
};

Tensor random_uniform(const Shape& shape, DType dtype, Rng& rng, double low = 0.0, double high = 1.0);
Tensor random_normal(const Shape& shape, DType dtype, Rng& rng, double mean = 0.0, double stddev = 1.0);
Tensor random_integers(const Shape& shape, DType dtype, Rng& rng, int64_t low, int64_t high);

}  // namespace nki_agent
