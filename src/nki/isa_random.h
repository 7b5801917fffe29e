// nki/isa_random.h — the instructions that draw random numbers: nisa.rng (random bits), nl.rand
// (uniform values, the same instruction) and nisa.dropout, and the one that seeds them
// (nisa.set_rng_seed, nl.random_seed). They draw from the launch's generator
// (ExecContext::rng: Philox seeded with 0, in program order), so a kernel call gives the same values
// on every run, and never the device PRNG's values. They check, trace and compute like the rest of
// the instruction core (nki/isa.h); a timing-only run draws nothing. Nothing here prices them.
#pragma once

#include "nki/isa.h"
#include "nki/isa_vector.h"

namespace nki_agent {

// nisa.rng on the Vector or GpSimd engine: 32 random bits per element of dst, truncated to its
// integer type's least significant bits (int8, int16, int32, uint8, uint16 or uint32). GpSimd
// writes SBUF only.
Result<void> isa_rng(ExecContext& ctx, const Access& dst, Engine engine, const SourceLoc& loc);

// nl.rand: dst (a float type) filled with values uniform in [0, 1), rounded into its type (bfloat16
// may round a value up to 1.0). One rng instruction on the Vector engine.
Result<void> isa_rand_uniform(ExecContext& ctx, const Access& dst, const SourceLoc& loc);

// nisa.dropout on the Vector engine: each element of data is kept where a uniform [0, 1) draw is at
// least the drop probability of its partition (a number, or a [P, 1] tile), else 0; no rescaling.
// prob 1 drops every element and prob 0 none. dst has data's dtype and shape; integer data takes a
// float32 prob tile.
Result<void> isa_dropout(ExecContext& ctx, const Access& dst, const Access& data, const ScalarOperand& prob,
                         const SourceLoc& loc);

// nisa.set_rng_seed / nl.random_seed on the Vector engine: the launch's generator restarts from the
// value of a [1, 1] integer or float tile (its integer part, as 32 bits), so the draws after it repeat
// whenever the same seed is set again. It reads the tile and writes none.
Result<void> isa_set_rng_seed(ExecContext& ctx, const Access& seed, const SourceLoc& loc);

}  // namespace nki_agent
