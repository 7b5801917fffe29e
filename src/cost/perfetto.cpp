// Chrome trace-event JSON for Perfetto (perfetto.h). Complete events ("ph":"X") on thread tracks
// of one process; times in microseconds with nanosecond decimals. Slices on one track never
// overlap (Perfetto requires nesting), so DMAs of one queue spread over lanes.
#include "cost/perfetto.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

namespace nki_agent {

namespace {

constexpr int kEngineTid = 1;       // compute engines: 1..4
constexpr int kQueueTid = 100;      // DMA queues: 100 + 32 * queue + lane
constexpr int kDmaEngineTid = 300;  // DMA engines: 300 + engine

std::string json_str(std::string_view s) {
  return nlohmann::json(std::string(s)).dump();
}

std::string engine_track(Engine e) {
  switch (e) {
    case Engine::kTensor: return "TensorE (PE)";
    case Engine::kVector: return "VectorE (DVE)";
    case Engine::kScalar: return "ScalarE (ACT)";
    case Engine::kGpSimd: return "GpSimdE (POOL)";
    case Engine::kDma: return "DMA";
  }
  return "?";
}

std::string short_loc(const SourceLoc& loc) {
  std::string f = loc.file;
  size_t slash = f.rfind('/');
  if (slash != std::string::npos) f = f.substr(slash + 1);
  return fmt::format("{}:{}", f, loc.line);
}

class Writer {
 public:
  explicit Writer(std::string& out) : out_(out) {}
  void meta(int tid, std::string_view key, const std::string& value_json) {
    sep();
    out_ += fmt::format(R"({{"name":"{}","ph":"M","pid":1,"tid":{},"args":{{"{}":{}}}}})", key, tid,
                        key == "thread_sort_index" ? "sort_index" : "name", value_json);
  }
  void raw(const std::string& event) {
    sep();
    out_ += event;
  }
  void slice(int tid, std::string_view name_json, double start_ns, double end_ns, const std::string& args) {
    sep();
    // Both ends on the same 1 ns grid, so that slices that touch do not overlap once printed.
    const double ts = std::round(start_ns), te = std::max(ts, std::round(end_ns));
    out_ += fmt::format(R"({{"name":{},"ph":"X","pid":1,"tid":{},"ts":{:.3f},"dur":{:.3f},"args":{{{}}}}})", name_json,
                        tid, ts / 1000.0, (te - ts) / 1000.0, args);
  }

 private:
  void sep() {
    if (!first_) out_ += ",\n";
    first_ = false;
  }
  std::string& out_;
  bool first_ = true;
};

}  // namespace

std::string perfetto_trace(const Trace& trace, const CostProgram& prog, const Schedule& sched, const HardwareSpec& hw,
                           const PerfettoOptions& options) {
  std::string out;
  out.reserve(prog.ops.size() * 220 + sched.dma_slices.size() * 120 + 4096);
  out += "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  Writer w(out);
  {
    std::string title = options.title.empty() ? fmt::format("{} ({})", hw.target.core, hw.target.name) : options.title;
    w.raw(fmt::format(R"({{"name":"process_name","ph":"M","pid":1,"args":{{"name":{}}}}})", json_str(title)));
    w.raw(R"({"name":"process_sort_index","ph":"M","pid":1,"args":{"sort_index":0}})");
  }
  // Track names, in display order.
  int order = 0;
  for (int e = 0; e < kNumComputeEngines; ++e) {
    w.meta(kEngineTid + e, "thread_name", json_str(engine_track(static_cast<Engine>(e))));
    w.meta(kEngineTid + e, "thread_sort_index", std::to_string(order++));
  }
  // Compute slices.
  std::vector<std::string> names(trace.records().size());
  auto name_of = [&](uint32_t rec) -> const std::string& {
    if (names[rec].empty()) names[rec] = json_str(trace.records()[rec].opcode_text());
    return names[rec];
  };
  for (uint32_t i = 0; i < prog.ops.size(); ++i) {
    const CostOp& op = prog.ops[i];
    if (op.engine == Engine::kDma) continue;
    const OpTiming& t = sched.ops[i];
    const SourceLoc& loc = trace.records()[op.record].loc;
    std::string args =
        fmt::format(R"("line":{},"file":{},"cycles":{:.0f})", json_str(short_loc(loc)), json_str(loc.file), op.cycles);
    if (op.flops > 0) args += fmt::format(R"(,"flops":{:.0f})", op.flops);
    w.slice(kEngineTid + static_cast<int>(op.engine), name_of(op.record), t.start, t.end, args);
  }
  // DMA queues: each DMA from its trigger to its last byte, in lanes that never overlap.
  std::vector<std::vector<double>> lanes(kNumDmaQueues);
  std::vector<int> lanes_used(kNumDmaQueues, 0);
  std::vector<std::string> queue_events;
  for (uint32_t i = 0; i < prog.ops.size(); ++i) {
    const CostOp& op = prog.ops[i];
    if (op.engine != Engine::kDma) continue;
    const OpTiming& t = sched.ops[i];
    const size_t q = static_cast<size_t>(op.queue);
    size_t lane = 0;
    while (lane < lanes[q].size() && lanes[q][lane] > t.trigger + 1e-9) ++lane;
    if (lane == lanes[q].size()) lanes[q].push_back(0);
    lane = std::min<size_t>(lane, 31);
    lanes[q][lane] = t.end;
    lanes_used[q] = std::max(lanes_used[q], static_cast<int>(lane) + 1);
    const SourceLoc& loc = trace.records()[op.record].loc;
    const double per_partition = op.dma_partitions ? static_cast<double>(op.dma_bytes) / op.dma_partitions : 0.0;
    std::string args = fmt::format(
        R"("line":{},"file":{},"bytes":{},"bytes_per_partition":{:.0f},"descriptors":{},"engines":{},"trigger_latency_ns":{:.0f})",
        json_str(short_loc(loc)), json_str(loc.file), op.dma_bytes, per_partition, op.dma_descriptors, op.dma_engines,
        t.start - t.trigger);
    w.slice(kQueueTid + 32 * static_cast<int>(q) + static_cast<int>(lane), name_of(op.record), t.trigger, t.end, args);
  }
  for (int q = 0; q < kNumDmaQueues; ++q)
    for (int lane = 0; lane < lanes_used[q]; ++lane) {
      const int tid = kQueueTid + 32 * q + lane;
      const std::string name = lane == 0 ? std::string(dma_queue_name(static_cast<DmaQueue>(q)))
                                         : fmt::format("{} #{}", dma_queue_name(static_cast<DmaQueue>(q)), lane + 1);
      w.meta(tid, "thread_name", json_str(name));
      w.meta(tid, "thread_sort_index", std::to_string(100 + q * 32 + lane));
    }
  // DMA engines: every transfer, or merged busy periods when there are too many.
  std::vector<bool> engine_used(static_cast<size_t>(hw.dma.engines), false);
  if (sched.dma_slices.size() <= options.max_dma_engine_slices) {
    for (const DmaSlice& d : sched.dma_slices) {
      engine_used[d.engine] = true;
      const SourceLoc& loc = trace.records()[prog.ops[d.op].record].loc;
      w.slice(kDmaEngineTid + d.engine, name_of(prog.ops[d.op].record), d.start, d.end,
              fmt::format(R"("line":{})", json_str(short_loc(loc))));
    }
  } else {
    std::vector<std::vector<std::pair<double, double>>> per(static_cast<size_t>(hw.dma.engines));
    for (const DmaSlice& d : sched.dma_slices) per[d.engine].emplace_back(d.start, d.end);
    for (size_t e = 0; e < per.size(); ++e) {
      auto& iv = per[e];
      if (iv.empty()) continue;
      engine_used[e] = true;
      std::sort(iv.begin(), iv.end());
      double s = iv[0].first, en = iv[0].second;
      auto flush = [&] { w.slice(kDmaEngineTid + static_cast<int>(e), "\"busy\"", s, en, R"("merged":true)"); };
      for (size_t k = 1; k < iv.size(); ++k) {
        if (iv[k].first > en + 1e-6) {
          flush();
          s = iv[k].first;
        }
        en = std::max(en, iv[k].second);
      }
      flush();
    }
  }
  for (size_t e = 0; e < engine_used.size(); ++e)
    if (engine_used[e]) {
      w.meta(kDmaEngineTid + static_cast<int>(e), "thread_name", json_str(fmt::format("DMA engine {}", e)));
      w.meta(kDmaEngineTid + static_cast<int>(e), "thread_sort_index", std::to_string(300 + e));
    }
  out += "\n]}\n";
  return out;
}

Result<void> write_perfetto_trace(const std::string& path, const Trace& trace, const CostProgram& prog,
                                  const Schedule& sched, const HardwareSpec& hw, const PerfettoOptions& options) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f)
    return fail("nkia_unwritable", fmt::format("cannot write the Perfetto trace to {}", path),
                "check the folder exists");
  const std::string doc = perfetto_trace(trace, prog, sched, hw, options);
  f.write(doc.data(), static_cast<std::streamsize>(doc.size()));
  f.close();
  if (!f)
    return fail("nkia_unwritable", fmt::format("cannot write the Perfetto trace to {}", path),
                "check the disk has room");
  return {};
}

}  // namespace nki_agent
