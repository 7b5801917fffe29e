// cost/lower.h — from an instruction trace to the cost model's program: one CostOp per hardware
// instruction with its engine (or DMA queue), its cost on the target, the memory regions it reads
// and writes, and the facts the profile counts (flops, bytes, descriptors).
//
// Four things happen besides costing:
//  - Assignment copies are folded. The NKI front ends lower `t[...] = nl.load(...)` (and any
//    `t[...] = <op>`) to the op into a fresh temporary tile plus a tensor_copy into t; the NKI
//    compiler writes the op straight into t. A tensor_copy that reads exactly the destination of
//    the instruction just before it, where that temporary is never read again, is dropped and the
//    producer takes its destination (and its dtype: engines and DMAs convert on the way out).
//  - A memset that zeroes a PSUM tile right before matmuls accumulate into it is dropped: the
//    compiler sets the first matmul's psum-zero flag instead.
//  - A copy of a tile onto itself (what `t[...] += x` leaves after the update in place) is dropped.
//  - Regions get a "space": the tensor's identity (OperandRecord::tensor_id); traces recorded
//    without one (older --from-trace files) fall back to (memory, name, dtype, partition pitch).
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "core/diagnostic.h"
#include "cost/hardware.h"
#include "nki/trace.h"

namespace nki_agent {

// The elements an operand touches, as the dependency analysis compares them.
struct Footprint {
  uint32_t space = 0;  // interned (memory, tensor name, dtype, pitch); equal spaces may alias
  Buffer buffer = Buffer::kSbuf;
  int32_t elem_bytes = 1;
  int32_t p0 = 0, p1 = 1;  // partitions [p0, p1) on chip; HBM: [0, 1)
  int64_t lo = 0, hi = 0;  // bounding interval of elements, within a partition (on chip) or the tensor (HBM)
  // When rows > 0 the elements are exactly lo + r * pitch + [0, run) for r < rows (a 2-level
  // pattern); rows == 0: only the bounding interval is known.
  int64_t pitch = 0, rows = 0, run = 0;

  bool empty() const { return hi <= lo || p1 <= p0; }
  int64_t bytes_per_partition() const { return (hi - lo) * elem_bytes; }
  // The bytes it holds in each partition: the 2-level pattern's own elements where it is known,
  // not the span (a block of columns written into a wider tile holds only its columns).
  int64_t held_bytes_per_partition() const {
    return rows > 0 ? std::min(hi - lo, rows * run) * elem_bytes : bytes_per_partition();
  }
};
// Whether two footprints may share an element (exact for 2-level patterns of equal pitch,
// conservative otherwise).
bool footprints_overlap(const Footprint& a, const Footprint& b);
// Whether a covers every element of b (conservative: false when unsure).
bool footprint_covers(const Footprint& a, const Footprint& b);

// The DMA queues, by direction (neuron-profile names its queues qSyncIO..., per trigger engine).
enum class DmaQueue : uint8_t { kLoad, kStore, kOnChip, kHbm };
inline constexpr int kNumDmaQueues = 4;
std::string_view dma_queue_name(DmaQueue q);  // "qLoad" (HBM->SBUF), "qStore", "qOnChip", "qHbm"

inline constexpr uint32_t kNoRule = 0xffffffffu;

struct CostOp {
  uint32_t record = 0;  // index of its trace record (the producer's, when a copy was folded into it)
  Engine engine = Engine::kVector;
  DmaQueue queue = DmaQueue::kLoad;  // DMA only
  bool rmw = false;                  // it writes a region it also reads (in place)
  bool matmul = false;               // nc_matmul
  bool transpose = false;            // a PE transpose (nc_transpose on the TensorE)
  bool fp32_matmul = false;
  bool reads_psum = false, writes_psum = false;
  uint8_t exclusive = 0;     // bit g: it uses the memory of HardwareSpec::concurrency[g]
  uint32_t rule = kNoRule;   // the cost rule that priced it (compute engines)
  double cycles = 0;         // engine cycles (compute)
  double access_cycles = 0;  // of which operand setup (EngineSpec::access_overhead_cycles per operand)
  double duration_ns = 0;    // compute: busy time on its engine; DMA: each DMA engine's busy time
  // DMA transfer.
  uint16_t dma_first_engine = 0, dma_engines = 0;
  int64_t dma_bytes = 0;         // bytes moved
  int64_t dma_descriptors = 0;   // contiguous DMA buffers
  int64_t dma_partitions = 0;    // on-chip partitions (0: HBM to HBM)
  double dma_gather_factor = 1;  // the share of the rate its HBM runs at a pitch allow (1: contiguous)
  // Facts for the profile.
  double flops = 0;                                               // 2*K*M*N per matmul (transposes included)
  int64_t moving_free = 0, stationary_free = 0, contraction = 0;  // matmul shape
  int64_t hbm_read_bytes = 0, hbm_write_bytes = 0;
  int64_t sbuf_read_bytes = 0, sbuf_write_bytes = 0, psum_read_bytes = 0, psum_write_bytes = 0;
  // Footprints: footprints[first_footprint, +n_reads) are read, the next n_writes written.
  uint32_t first_footprint = 0;
  uint16_t n_reads = 0, n_writes = 0;
};

struct CostProgram {
  std::vector<CostOp> ops;
  std::vector<Footprint> footprints;
  std::vector<std::string> space_names;  // index: Footprint::space ("sbuf:bfloat16:pitch512", "shared_hbm:rhs")
  int64_t folded_copies = 0;
  int64_t folded_psum_zeroing = 0;          // PSUM memsets folded into the first matmul of their group
  std::map<std::string, int64_t> unpriced;  // "engine:opcode" priced by no rule (costed as N cycles)
  int64_t dropped_records = 0;              // the trace's own dropped count
};

// Lowers every record of `trace`. Code nkia_profile_empty when the trace holds no instruction.
Result<CostProgram> lower_trace(const Trace& trace, const HardwareSpec& hw);

}  // namespace nki_agent
