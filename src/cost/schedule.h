// cost/schedule.h — replays a CostProgram on the NeuronCore model: one in-order queue per compute
// engine, DMA queues whose transfers run on the DMA engines, PSUM banks, the generation's
// concurrency limits, and semaphore latency between engines. The result gives every op its start
// and end, and why it started when it did.
//
// The rules (docs/cost-model.md has the numbers):
//  - A compute op starts when its engine is free, its dependencies are done (plus the semaphore
//    latency when they ran elsewhere), its PSUM banks are free, and no engine that shares its memory
//    port (NCv2: DVE/POOL on SBUF, DVE/ACT on PSUM) is using it. It lasts its cost, plus the
//    dependency overhead when it reads the output of the op just before it on the same engine.
//  - A DMA is triggered in order on its queue once its dependencies are done and at most
//    max_inflight_per_queue DMAs of the queue are still running; its data starts trigger_latency
//    later and moves on each DMA engine its partitions map to, in the first free gap of that engine.
//  - A fresh PSUM allocation takes the banks that free earliest; it waits for them. A fresh SBUF
//    tile waits until the live tiles leave room for it (a DMA waits before its trigger).
//  - TensorE throttling (trn2): after an idle gap, the PE runs slower until it has been busy for
//    the ramp time.
#pragma once

#include <vector>

#include "cost/deps.h"

namespace nki_agent {

// What decided an op's start.
enum class StartReason : uint8_t {
  kNone,         // nothing: it started at time 0
  kEngine,       // the previous op on its engine (or the previous trigger on its DMA queue)
  kDependency,   // a dependency (by_op)
  kPsumBank,     // waiting for a PSUM bank (by_op released it)
  kConcurrency,  // a shared SBUF/PSUM port was in use
  kInflight,     // its DMA queue had max_inflight_per_queue DMAs running (by_op the one it waited for)
  kDmaEngine,    // the DMA engines were busy (by_op the transfer before it, when known)
  kSbufSpace,    // its new tile had to wait for SBUF space
};

struct OpTiming {
  double start = 0, end = 0;  // DMA: first byte moved, last byte moved
  double trigger = 0;         // DMA: when it was triggered
  double ready = 0;           // when its dependencies allowed it to start
  StartReason reason = StartReason::kNone;
  uint32_t by_op = 0xffffffffu;  // the op behind `reason`
};

// One DMA engine's share of a transfer.
struct DmaSlice {
  uint32_t op;
  uint16_t engine;
  double start, end;
};

struct ScheduleOptions {
  bool keep_dma_slices = true;  // record each DMA engine's transfers (Perfetto tracks, per-engine stats)
};

struct Schedule {
  std::vector<OpTiming> ops;
  std::vector<DmaSlice> dma_slices;
  double total_ns = 0;
  double pe_throttle_ns = 0;               // time the TensorE lost to throttling
  int64_t psum_oversubscribed = 0;         // PSUM allocations that found all banks held by live tiles
  int64_t sbuf_oversubscribed = 0;         // SBUF tiles that could not fit even once everything placed had ended
  std::vector<double> dma_engine_busy_ns;  // per DMA engine
};

Schedule schedule_program(const CostProgram& prog, const DependenceGraph& deps, const HardwareSpec& hw,
                          const ScheduleOptions& options = {});

}  // namespace nki_agent
