// nki/target.h — the NeuronCore facts the instruction core checks kernels against, per target.
//
// One file describes a target: data/targets/<t>.toml, compiled in. Its [target] table names it and
// its [limits] table holds what a kernel must respect to compile at all (each number with its
// source, nki-spec §2); the cost model reads its timing data from the same file (cost/hardware.h).
// Adding a target is adding that file.
//
// Never: a limit written here or anywhere in C++ or Python instead of in the target's file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.h"

namespace nki_agent {

// The [limits] table: key, lowest and highest value a file may give, meaning. One list: the struct's
// fields, the file's keys, the reader's checks and what nl.tile_size sees come from it.
#define NKIA_TARGET_LIMITS(X)                                                                                  \
  X(partitions, 1, 1024, "pmax: partitions of SBUF and PSUM")                                                  \
  X(sbuf_bytes_per_partition, 1, kLimitBytes, "usable SBUF bytes per partition (the compiler keeps the rest)") \
  X(psum_bytes_per_partition, 1, kLimitBytes, "PSUM bytes per partition")                                      \
  X(psum_banks, 1, 1024, "PSUM banks per partition")                                                           \
  X(psum_bank_bytes, 4, kLimitBytes, "bytes of one PSUM bank per partition")                                   \
  X(psum_fmax, 1, kLimitBytes / 4, "fp32 elements of one PSUM bank")                                           \
  X(psum_min_align, 1, 4096, "PSUM free-dimension address alignment, bytes")                                   \
  X(gemm_stationary_fmax, 1, 1 << 20, "matmul stationary (lhs) free size")                                     \
  X(gemm_moving_fmax, 1, 1 << 20, "matmul moving (rhs) free size")                                             \
  X(engine_fmax_sbuf, 1, 1 << 24, "elements per partition a Vector/Scalar operand reads from SBUF")            \
  X(engine_fmax_psum, 1, 1 << 24, "elements per partition a Vector/Scalar operand reads from PSUM")            \
  X(bn_stats_fmax, 1, 1 << 20, "bn_stats input free size")                                                     \
  X(max8_fmax, 8, 1 << 24, "max8 / nc_find_index8 / nc_match_replace8 elements per partition")                 \
  X(gpsimd_partition_group, 1, 1024, "partitions per GpSimd core (local_gather's index groups)")               \
  X(gpsimd_gather_max_indices, 1, 1 << 24, "local_gather indices per GpSimd core")

inline constexpr int64_t kLimitBytes = int64_t{1} << 30;

struct TargetSpec {
  std::string name;         // "trn1", "trn2"
  std::string core;         // "NeuronCore-v2", ...
  std::string description;  // one line for listings
  int core_version = 2;     // the NeuronCore generation: 2 (trn1), 3 (trn2)
#define NKIA_TARGET_LIMIT_FIELD(key, lo, hi, doc) int64_t key = 0;
  NKIA_TARGET_LIMITS(NKIA_TARGET_LIMIT_FIELD)
#undef NKIA_TARGET_LIMIT_FIELD
};

struct TargetLimit {
  const char* key;
  int64_t TargetSpec::*field;
  int64_t lo, hi;
  const char* doc;
};
inline constexpr TargetLimit kTargetLimits[] = {
#define NKIA_TARGET_LIMIT_ROW(key, lo, hi, doc) {#key, &TargetSpec::key, lo, hi, doc},
    NKIA_TARGET_LIMITS(NKIA_TARGET_LIMIT_ROW)
#undef NKIA_TARGET_LIMIT_ROW
};

// Generated from data/targets/*.toml by nkia_embed() (cmake/embed_files.cmake): {name, text},
// sorted by name.
struct EmbeddedTarget {
  std::string_view name;
  std::string_view toml;
};
const std::vector<EmbeddedTarget>& embedded_targets();
// The compiled-in file of target `name` ("trn1"), the whole description; empty when there is none.
std::string_view target_text(std::string_view name);

// Reads the [target] and [limits] tables of a target description (the other tables are the cost
// model's). Codes nkia_hardware_syntax and nkia_hardware_invalid, naming the field.
Result<TargetSpec> parse_target(std::string_view toml_text, std::string_view origin);

// Every compiled-in target, parsed once, by name. Code nkia_unknown_target, listing the names.
Result<const TargetSpec*> target_by_name(std::string_view name);
// The compiled-in targets' names, sorted.
std::vector<std::string> target_names();
// trn1, the default target.
const TargetSpec& target_trn1();

}  // namespace nki_agent
