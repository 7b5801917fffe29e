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

struct TargetSpec {
  std::string name;         // "trn1", "trn2"
  std::string core;         // "NeuronCore-v2", ...
  std::string description;  // one line for listings
  int core_version = 2;     // the NeuronCore generation: 2 (trn1), 3 (trn2)
  // [limits]
  int partitions = 128;                  // pmax: partitions of SBUF and PSUM
  int64_t sbuf_bytes_per_partition = 0;  // usable SBUF bytes per partition (the compiler keeps the rest)
  int64_t psum_bytes_per_partition = 0;
  int psum_banks = 0;
  int64_t psum_bank_bytes = 0;
  int psum_fmax = 0;                  // fp32 elements of one PSUM bank
  int psum_min_align = 0;             // bytes: PSUM free-dimension address alignment
  int gemm_stationary_fmax = 0;       // matmul stationary (lhs) free size
  int gemm_moving_fmax = 0;           // matmul moving (rhs) free size
  int engine_fmax_sbuf = 0;           // elements per partition a Vector/Scalar operand reads from SBUF
  int engine_fmax_psum = 0;           // ... from PSUM
  int bn_stats_fmax = 0;              // bn_stats input free size
  int max8_fmax = 0;                  // max8 / nc_find_index8 / nc_match_replace8 elements per partition
  int gpsimd_partition_group = 0;     // partitions per GpSimd core (local_gather's index groups)
  int gpsimd_gather_max_indices = 0;  // local_gather indices per GpSimd core
};

// Generated from data/targets/*.toml by nkia_embed() (cmake/embed_files.cmake): {name, text},
// sorted by name.
struct EmbeddedTarget {
  std::string_view name;
  std::string_view toml;
};
const std::vector<EmbeddedTarget>& embedded_targets();

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
