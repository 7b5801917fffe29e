// cost/profile.h — what a schedule adds up to, in the terms neuron-profile uses (nki-spec §7.4):
// total latency, engine active time and share, MFU/HFU, MBU, HBM traffic, DMA statistics,
// arithmetic intensity against the machine balance, the roofline bound, the source lines on the
// critical path, and insights in the spirit of the AWS profiler. Text and JSON forms.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cost/schedule.h"

namespace nki_agent {

struct EngineStats {
  std::string name;      // "tensor", "vector", "scalar", "gpsimd", "dma"
  double active_ns = 0;  // busy time (DMA: time any DMA engine moves data)
  int64_t instructions = 0;
  // Time the engine sat idle before an instruction, by what it was waiting for.
  double wait_dma_ns = 0, wait_engines_ns = 0, wait_psum_ns = 0, wait_sbuf_ns = 0, wait_port_ns = 0;
  double critical_ns = 0;                                     // its share of the critical path
  std::map<std::string, std::pair<int64_t, double>> opcodes;  // opcode -> (count, busy ns)
};

struct LineStats {
  std::string file;
  int line = 0;
  int64_t instructions = 0;
  double busy_ns = 0;      // engine time its instructions take (DMA: normalised to all DMA engines)
  double critical_ns = 0;  // time on the critical path
  std::map<std::string, int64_t> engines;
  std::string opcode;  // the most frequent one
};

struct Insight {
  std::string code;  // stable id: "small_dma", "engine_waits_on_dma", ...
  Severity severity = Severity::kNote;
  std::string message;
  std::string hint;
  std::vector<std::string> lines;  // "file:line" where it happens most
};

struct Profile {
  std::string target, core, hardware_origin;
  double total_ns = 0;
  std::vector<EngineStats> engines;  // tensor, vector, scalar, gpsimd, dma
  // DMA.
  int64_t dma_count = 0, dma_bytes = 0, dma_descriptors = 0, small_dmas = 0;
  double dma_engine_utilization = 0;                              // mean busy share of the DMA engines
  std::vector<double> dma_engine_busy_ns;                         // per DMA engine
  std::map<std::string, std::pair<int64_t, int64_t>> dma_queues;  // queue -> (DMAs, bytes)
  // Memory traffic.
  int64_t hbm_read_bytes = 0, hbm_write_bytes = 0, sbuf_read_bytes = 0, sbuf_write_bytes = 0;
  int64_t psum_read_bytes = 0, psum_write_bytes = 0;
  int64_t peak_sbuf_bytes_per_partition = 0;  // live tiles at the busiest moment
  int peak_psum_banks = 0;
  // Compute.
  int64_t matmuls = 0, fp32_matmuls = 0, small_moving_matmuls = 0, transposes = 0;
  double model_flops = 0, transpose_flops = 0, adjusted_flops = 0;
  double hfu = 0, mfu = 0, mbu = 0;  // fractions
  double arithmetic_intensity = 0;   // matmul flops per HBM byte
  double machine_balance = 0;        // peak flops per HBM byte
  double compute_bound_ns = 0, memory_bound_ns = 0, roofline_ns = 0;
  double pe_throttle_ns = 0;
  // Critical path: per line, and the time spent in latencies (semaphores, DMA trigger) and idle.
  double critical_latency_ns = 0, critical_idle_ns = 0;
  std::vector<LineStats> lines;  // every source line, most costly first
  std::vector<Insight> insights;
  // How the model saw the trace.
  int64_t instructions = 0, folded_copies = 0, folded_psum_zeroing = 0, dropped_records = 0;
  int64_t psum_oversubscribed = 0, sbuf_oversubscribed = 0;
  int64_t raw_deps = 0, war_deps = 0, waw_deps = 0;
  std::map<std::string, int64_t> unpriced;
};

Profile build_profile(const Trace& trace, const CostProgram& prog, const DependenceGraph& deps, const Schedule& sched,
                      const HardwareSpec& hw);

// Field names follow neuron-profile's where it has one (total_time in seconds,
// hfu_estimated_percent, mbu_estimated_percent, hbm_read_bytes, average_dma_size, ...).
nlohmann::json profile_to_json(const Profile& p, size_t max_lines = 20);
// A readable summary: totals, engines, memory, roofline, hot lines, insights.
std::string profile_to_text(const Profile& p, size_t max_lines = 10);

}  // namespace nki_agent
