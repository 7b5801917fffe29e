// nki/target.h — the NeuronCore facts the instruction core checks kernels against, per target.
//
// Numbers and their sources: nki-spec §2.1 and §2.4. The cost model keeps its own (timing) data in
// its hardware descriptions; these are the limits a kernel must respect to compile at all.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/diagnostic.h"

namespace nki_agent {

struct TargetSpec {
  std::string_view name;                 // "trn1", "trn2"
  std::string_view core;                 // "NeuronCore-v2", ...
  int core_version = 2;                  // the NeuronCore generation: 2 (trn1), 3 (trn2)
  int partitions = 128;                  // pmax: partitions of SBUF and PSUM
  int64_t sbuf_bytes_per_partition = 0;  // usable SBUF bytes per partition (the compiler keeps the rest)
  int64_t psum_bytes_per_partition = 16384;
  int psum_banks = 8;
  int64_t psum_bank_bytes = 2048;
  int psum_fmax = 512;             // fp32 elements of one PSUM bank
  int gemm_stationary_fmax = 128;  // matmul stationary (lhs) free size
  int gemm_moving_fmax = 512;      // matmul moving (rhs) free size
};

// trn1: NeuronCore-v2, usable SBUF 180,224 B per partition (nki-spec §2.1).
const TargetSpec& target_trn1();
// trn2: NeuronCore-v3, usable SBUF 212,984 B per partition.
const TargetSpec& target_trn2();
// "trn1" or "trn2"; code nkia_unknown_target otherwise.
Result<const TargetSpec*> target_by_name(std::string_view name);

}  // namespace nki_agent
