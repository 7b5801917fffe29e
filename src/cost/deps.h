// cost/deps.h — the dependencies between CostOps through memory, and the on-chip allocations the
// scheduler must respect.
//
// Program order is the trace's order. Every read depends on the latest write of each overlapping
// region (RAW). On chip, a write that is not an in-place update gets fresh storage — the compiler
// allocates every tile declared in a loop body anew and multi-buffers it — so it waits for nobody
// (no WAR/WAW); an in-place update (a matmul accumulating into its PSUM tile, `t[...] += x`)
// waits for the region's writer and readers. In HBM every write waits for the region's earlier
// writer (WAW) and readers (WAR).
//
// Each fresh on-chip write opens an allocation (bytes per partition; PSUM: whole banks) that lives
// until the last instruction that reads or updates what it holds. A matmul into a PSUM tile that
// was read by a non-PE instruction since its last write starts a new accumulation group, i.e. a
// fresh write.
#pragma once

#include <vector>

#include "cost/lower.h"

namespace nki_agent {

enum class DepKind : uint8_t { kRaw, kWar, kWaw };

struct DepEdge {
  uint32_t op;  // the earlier op
  DepKind kind;
};

struct Allocation {
  Buffer buffer = Buffer::kSbuf;
  int64_t bytes_per_partition = 0;
  int banks = 0;          // PSUM banks it needs
  uint32_t first_op = 0;  // the op that opens it
  uint32_t last_op = 0;   // the last op that reads or updates it
};

struct DependenceGraph {
  // preds[pred_begin[i], pred_begin[i + 1]) are op i's dependencies, each on an earlier op.
  std::vector<uint32_t> pred_begin;
  std::vector<DepEdge> preds;
  std::vector<Allocation> allocations;
  std::vector<int32_t> opens;           // per op: the allocation it opens, or -1
  std::vector<uint32_t> release_begin;  // per op (+1): releases[release_begin[i], ...) end with op i
  std::vector<uint32_t> releases;
  int64_t raw = 0, war = 0, waw = 0;

  size_t num_preds(uint32_t i) const { return pred_begin[i + 1] - pred_begin[i]; }
};

DependenceGraph analyze_dependences(const CostProgram& prog, const HardwareSpec& hw);

}  // namespace nki_agent
