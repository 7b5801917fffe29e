// Profile metrics, the critical path, insights, and the JSON and text forms (profile.h).
#include "cost/profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <unordered_map>

namespace nki_agent {

namespace {

constexpr uint32_t kNone = 0xffffffffu;

std::string human_bytes(double b) {
  if (b >= double(int64_t{1} << 30)) return fmt::format("{:.2f} GiB", b / double(int64_t{1} << 30));
  if (b >= double(1 << 20)) return fmt::format("{:.2f} MiB", b / double(1 << 20));
  if (b >= double(1 << 10)) return fmt::format("{:.2f} KiB", b / double(1 << 10));
  return fmt::format("{:.0f} B", b);
}

std::string human_time(double ns) {
  if (ns >= 1e6) return fmt::format("{:.3f} ms", ns / 1e6);
  if (ns >= 1e3) return fmt::format("{:.2f} us", ns / 1e3);
  return fmt::format("{:.0f} ns", ns);
}

std::string where(const SourceLoc& loc) {
  if (loc.file.empty() && loc.line == 0) return "?";
  std::string f = loc.file;
  size_t slash = f.rfind('/');
  if (slash != std::string::npos) f = f.substr(slash + 1);
  return fmt::format("{}:{}", f.empty() ? "?" : f, loc.line);
}

// Busy time of a set of intervals (their union).
double union_length(std::vector<std::pair<double, double>>& iv) {
  std::sort(iv.begin(), iv.end());
  double total = 0, s = -1, e = -1;
  for (const auto& [a, b] : iv) {
    if (a > e) {
      if (e > s) total += e - s;
      s = a;
      e = b;
    } else {
      e = std::max(e, b);
    }
  }
  if (e > s) total += e - s;
  return total;
}

class Builder {
 public:
  Builder(const Trace& trace, const CostProgram& prog, const DependenceGraph& deps, const Schedule& sched,
          const HardwareSpec& hw)
      : trace_(trace), prog_(prog), deps_(deps), s_(sched), hw_(hw) {}

  Profile run() {
    p_.target = hw_.target.name;
    p_.core = hw_.target.core;
    p_.hardware_origin = hw_.origin;
    p_.total_ns = s_.total_ns;
    p_.instructions = static_cast<int64_t>(prog_.ops.size());
    p_.folded_copies = prog_.folded_copies;
    p_.dropped_records = prog_.dropped_records;
    p_.psum_oversubscribed = s_.psum_oversubscribed;
    p_.sbuf_oversubscribed = s_.sbuf_oversubscribed;
    p_.folded_psum_zeroing = prog_.folded_psum_zeroing;
    p_.raw_deps = deps_.raw;
    p_.war_deps = deps_.war;
    p_.waw_deps = deps_.waw;
    p_.unpriced = prog_.unpriced;
    p_.pe_throttle_ns = s_.pe_throttle_ns;
    for (int e = 0; e < kNumEngines; ++e) {
      EngineStats st;
      st.name = std::string(engine_name(static_cast<Engine>(e)));
      p_.engines.push_back(st);
    }
    counts();
    waits();
    critical_path();
    memory_peaks();
    rates();
    hot_lines();
    insights();
    return std::move(p_);
  }

 private:
  const SourceLoc& loc_of(uint32_t i) const { return trace_.records()[prog_.ops[i].record].loc; }
  // The op's instruction text, formatted once per distinct instruction.
  const std::string& opcode_of(uint32_t i) const {
    const InstrOp& op = trace_.records()[prog_.ops[i].record].op;
    auto [it, fresh] = texts_.try_emplace(op.key());
    if (fresh) it->second = instruction_text(op);
    return it->second;
  }

  // Engine-time an op costs, DMA normalised to the whole set of DMA engines.
  double busy_of(uint32_t i) const {
    const CostOp& op = prog_.ops[i];
    if (op.engine != Engine::kDma) return s_.ops[i].end - s_.ops[i].start;
    return op.duration_ns * op.dma_engines / std::max(1, hw_.dma.engines);
  }

  void counts() {
    std::vector<std::pair<double, double>> dma_iv;
    for (uint32_t i = 0; i < prog_.ops.size(); ++i) {
      const CostOp& op = prog_.ops[i];
      EngineStats& st = p_.engines[static_cast<size_t>(op.engine)];
      ++st.instructions;
      auto& oc = st.opcodes[opcode_of(i)];
      ++oc.first;
      oc.second += busy_of(i);
      if (op.engine == Engine::kDma) {
        ++p_.dma_count;
        p_.dma_bytes += op.dma_bytes;
        p_.dma_descriptors += op.dma_descriptors;
        auto& q = p_.dma_queues[std::string(dma_queue_name(op.queue))];
        ++q.first;
        q.second += op.dma_bytes;
        if (op.dma_partitions > 0 && op.dma_bytes / op.dma_partitions < 2048) ++p_.small_dmas;
      } else {
        st.active_ns += s_.ops[i].end - s_.ops[i].start;
      }
      p_.hbm_read_bytes += op.hbm_read_bytes;
      p_.hbm_write_bytes += op.hbm_write_bytes;
      p_.sbuf_read_bytes += op.sbuf_read_bytes;
      p_.sbuf_write_bytes += op.sbuf_write_bytes;
      p_.psum_read_bytes += op.psum_read_bytes;
      p_.psum_write_bytes += op.psum_write_bytes;
      if (op.matmul) {
        ++p_.matmuls;
        if (op.fp32_matmul) ++p_.fp32_matmuls;
        if (op.moving_free < 512) ++p_.small_moving_matmuls;
        p_.model_flops += op.flops;
        p_.adjusted_flops += op.flops * (op.fp32_matmul ? 4.0 : 1.0);
      }
      if (op.transpose) {
        ++p_.transposes;
        p_.transpose_flops += op.flops;
        p_.adjusted_flops += op.flops;
      }
    }
    for (const DmaSlice& d : s_.dma_slices) dma_iv.emplace_back(d.start, d.end);
    if (dma_iv.empty())  // slices not kept: the DMAs' own spans
      for (uint32_t i = 0; i < prog_.ops.size(); ++i)
        if (prog_.ops[i].engine == Engine::kDma) dma_iv.emplace_back(s_.ops[i].start, s_.ops[i].end);
    p_.engines[static_cast<size_t>(Engine::kDma)].active_ns = union_length(dma_iv);
    p_.dma_engine_busy_ns = s_.dma_engine_busy_ns;
    double busy = 0;
    for (double b : s_.dma_engine_busy_ns) busy += b;
    if (p_.total_ns > 0 && !s_.dma_engine_busy_ns.empty())
      p_.dma_engine_utilization = busy / (p_.total_ns * static_cast<double>(s_.dma_engine_busy_ns.size()));
  }

  // Idle gaps before each compute instruction, by what it waited for.
  void waits() {
    double last_end[kNumComputeEngines] = {};
    for (uint32_t i = 0; i < prog_.ops.size(); ++i) {
      const CostOp& op = prog_.ops[i];
      if (op.engine == Engine::kDma) continue;
      const size_t e = static_cast<size_t>(op.engine);
      const OpTiming& t = s_.ops[i];
      const double gap = t.start - last_end[e];
      last_end[e] = t.end;
      if (gap <= 1e-9) continue;
      EngineStats& st = p_.engines[e];
      switch (t.reason) {
        case StartReason::kDependency:
          if (t.by_op != kNone && prog_.ops[t.by_op].engine == Engine::kDma)
            st.wait_dma_ns += gap;
          else
            st.wait_engines_ns += gap;
          break;
        case StartReason::kPsumBank: st.wait_psum_ns += gap; break;
        case StartReason::kSbufSpace: st.wait_sbuf_ns += gap; break;
        case StartReason::kConcurrency: st.wait_port_ns += gap; break;
        default: st.wait_engines_ns += gap; break;
      }
    }
  }

  void critical_path() {
    if (prog_.ops.empty()) return;
    uint32_t x = 0;
    for (uint32_t i = 0; i < prog_.ops.size(); ++i)
      if (s_.ops[i].end > s_.ops[x].end) x = i;
    double cursor = s_.ops[x].end;
    on_path_.assign(prog_.ops.size(), 0.0);
    size_t guard = 0;
    // Walking back from the last op to end: each op's own span, the latency before it (semaphores,
    // a DMA's trigger latency) and, at the chain's head, idle time from 0.
    while (x != kNone && guard++ <= prog_.ops.size()) {
      const OpTiming& t = s_.ops[x];
      const uint32_t prev = t.by_op;
      const bool follow =
          prev != kNone && prev < x && t.reason != StartReason::kNone && t.reason != StartReason::kConcurrency;
      const double prev_end = follow ? std::min(s_.ops[prev].end, cursor) : 0.0;
      const double begin = std::min(cursor, std::max(t.start, prev_end));
      const double own = cursor - begin;
      on_path_[x] += own;
      p_.engines[static_cast<size_t>(prog_.ops[x].engine)].critical_ns += own;
      // Before its start: latency back to the predecessor (or the trigger of a head DMA), idle before that.
      const double issued = prog_.ops[x].engine == Engine::kDma ? std::min(begin, t.trigger) : begin;
      const double waited_from = follow ? prev_end : issued;
      p_.critical_latency_ns += std::max(0.0, begin - waited_from);
      if (!follow) {
        p_.critical_idle_ns += std::max(0.0, issued);
        break;
      }
      cursor = prev_end;
      x = prev;
    }
  }

  // Live on-chip bytes over time: allocations from their first op's start to their last op's end.
  void memory_peaks() {
    std::vector<std::pair<double, int64_t>> sbuf, psum;
    for (const Allocation& a : deps_.allocations) {
      const double s = s_.ops[a.first_op].start, e = std::max(s_.ops[a.last_op].end, s);
      if (a.buffer == Buffer::kSbuf) {
        sbuf.emplace_back(s, a.bytes_per_partition);
        sbuf.emplace_back(e, -a.bytes_per_partition);
      } else if (a.buffer == Buffer::kPsum) {
        psum.emplace_back(s, a.banks);
        psum.emplace_back(e, -a.banks);
      }
    }
    auto peak = [](std::vector<std::pair<double, int64_t>>& ev) {
      std::sort(ev.begin(), ev.end(), [](const auto& a, const auto& b) {
        return a.first < b.first || (a.first == b.first && a.second < b.second);  // frees first
      });
      int64_t cur = 0, best = 0;
      for (const auto& [t, d] : ev) {
        cur += d;
        best = std::max(best, cur);
      }
      return best;
    };
    p_.peak_sbuf_bytes_per_partition = peak(sbuf);
    p_.peak_psum_banks = static_cast<int>(peak(psum));
  }

  void rates() {
    const double peak = hw_.pe_peak_flops_per_ns();
    const double hbm = static_cast<double>(p_.hbm_read_bytes + p_.hbm_write_bytes);
    if (p_.total_ns > 0) {
      p_.hfu = p_.adjusted_flops / (peak * p_.total_ns);
      double model_adjusted = p_.adjusted_flops - p_.transpose_flops;
      p_.mfu = model_adjusted / (peak * p_.total_ns);
      p_.mbu = hbm / (hw_.hbm_bytes_per_ns * p_.total_ns);
    }
    p_.arithmetic_intensity = hbm > 0 ? p_.model_flops / hbm : 0;
    p_.machine_balance = peak / hw_.hbm_bytes_per_ns;
    p_.compute_bound_ns = p_.adjusted_flops / peak;
    p_.memory_bound_ns = hbm / hw_.hbm_bytes_per_ns;
    p_.roofline_ns = std::max(p_.compute_bound_ns, p_.memory_bound_ns);
  }

  void hot_lines() {
    std::unordered_map<std::string, size_t> index;
    std::vector<std::map<std::string, int64_t>> opcodes;
    for (uint32_t i = 0; i < prog_.ops.size(); ++i) {
      const SourceLoc& loc = loc_of(i);
      const std::string key = fmt::format("{}\n{}", loc.file, loc.line);
      auto [it, fresh] = index.try_emplace(key, p_.lines.size());
      if (fresh) {
        LineStats ls;
        ls.file = loc.file;
        ls.line = loc.line;
        p_.lines.push_back(ls);
        opcodes.emplace_back();
      }
      LineStats& ls = p_.lines[it->second];
      ++ls.instructions;
      ls.busy_ns += busy_of(i);
      ls.critical_ns += on_path_[i];
      ++ls.engines[std::string(engine_name(prog_.ops[i].engine))];
      ++opcodes[it->second][opcode_of(i)];
    }
    for (size_t k = 0; k < p_.lines.size(); ++k) {
      int64_t best = -1;
      for (const auto& [op, n] : opcodes[k])
        if (n > best) {
          best = n;
          p_.lines[k].opcode = op;
        }
    }
    std::stable_sort(p_.lines.begin(), p_.lines.end(), [](const LineStats& a, const LineStats& b) {
      return a.critical_ns > b.critical_ns || (a.critical_ns == b.critical_ns && a.busy_ns > b.busy_ns);
    });
  }

  // The lines (most instructions first) of the ops that satisfy `pred`.
  template <typename P>
  std::vector<std::string> lines_where(P&& pred, size_t most = 3) const {
    std::map<std::string, int64_t> n;
    for (uint32_t i = 0; i < prog_.ops.size(); ++i)
      if (pred(i)) ++n[where(loc_of(i))];
    std::vector<std::pair<int64_t, std::string>> v;
    for (const auto& [w, c] : n) v.emplace_back(-c, w);
    std::sort(v.begin(), v.end());
    std::vector<std::string> out;
    for (size_t k = 0; k < v.size() && k < most; ++k) out.push_back(v[k].second);
    return out;
  }

  void add(std::string code, Severity sev, std::string msg, std::string hint, std::vector<std::string> lines = {}) {
    p_.insights.push_back({std::move(code), sev, std::move(msg), std::move(hint), std::move(lines)});
  }

  void insights() {
    const double total = std::max(p_.total_ns, 1e-9);
    const EngineStats& pe = p_.engines[static_cast<size_t>(Engine::kTensor)];
    // Bound: what limits the kernel.
    if (p_.roofline_ns > 0 && p_.total_ns > 0) {
      const bool mem = p_.memory_bound_ns >= p_.compute_bound_ns;
      const double eff = p_.roofline_ns / total;
      if (eff < 0.5)
        add("far_from_roofline", Severity::kWarning,
            fmt::format("the kernel takes {}, {:.1f}x its roofline bound of {} ({}-bound: arithmetic intensity {:.0f} "
                        "flop/B against a machine balance of {:.0f})",
                        human_time(total), total / p_.roofline_ns, human_time(p_.roofline_ns),
                        mem ? "memory" : "compute", p_.arithmetic_intensity, p_.machine_balance),
            mem ? "move fewer bytes (reuse loaded tiles) and keep the DMA engines busy with large transfers"
                : "keep the TensorE fed: overlap loads with compute and raise the arithmetic intensity by blocking");
    }
    // Small DMAs.
    if (p_.small_dmas > 0) {
      double small_bytes = 0;
      for (const CostOp& op : prog_.ops)
        if (op.engine == Engine::kDma && op.dma_partitions > 0 && op.dma_bytes / op.dma_partitions < 2048)
          small_bytes += static_cast<double>(op.dma_bytes);
      const double share = static_cast<double>(p_.small_dmas) / std::max<int64_t>(1, p_.dma_count);
      add("small_dma", share > 0.25 ? Severity::kWarning : Severity::kNote,
          fmt::format("{} of {} DMAs ({:.0f}%, {} of the DMA bytes) move less than 2 KiB per partition", p_.small_dmas,
                      p_.dma_count, share * 100, human_bytes(small_bytes)),
          "load and store wider tiles: at least 2 KiB per partition (512 fp32 / 1024 bf16 elements), 4 KiB to "
          "saturate the DMA engines; coalesce adjacent transfers into one",
          lines_where([&](uint32_t i) {
            const CostOp& op = prog_.ops[i];
            return op.engine == Engine::kDma && op.dma_partitions > 0 && op.dma_bytes / op.dma_partitions < 2048;
          }));
    }
    // Gathers and scatters: HBM runs far apart move slower than a contiguous stream.
    {
      double gather_ns = 0, dma_ns = 0;
      for (const CostOp& op : prog_.ops) {
        if (op.engine != Engine::kDma) continue;
        const double ns = op.duration_ns * op.dma_engines;
        dma_ns += ns;
        if (op.dma_gather_factor < 0.9) gather_ns += ns;
      }
      if (dma_ns > 0 && gather_ns >= 0.1 * dma_ns)
        add("strided_dma", gather_ns >= 0.5 * dma_ns ? Severity::kWarning : Severity::kNote,
            fmt::format("{:.0f}% of the DMA engines' time goes to transfers whose HBM side is rows far apart (a "
                        "gather or scatter at a pitch), which move at a fraction of a contiguous stream's rate",
                        gather_ns / dma_ns * 100),
            "make each transfer contiguous in HBM: tile along the minor dimension so that a tile's rows are "
            "adjacent (a [128, F] tile of a [*, F] tensor), or load whole rows and slice on chip",
            lines_where([&](uint32_t i) {
              const CostOp& op = prog_.ops[i];
              return op.engine == Engine::kDma && op.dma_gather_factor < 0.9;
            }));
    }
    // Engines idle waiting on DMA.
    for (int e = 0; e < kNumComputeEngines; ++e) {
      const EngineStats& st = p_.engines[static_cast<size_t>(e)];
      if (st.instructions == 0 || st.wait_dma_ns < 0.1 * total) continue;
      add("engine_waits_on_dma", Severity::kWarning,
          fmt::format("the {} engine waits {} ({:.0f}% of the kernel) for DMAs to finish", st.name,
                      human_time(st.wait_dma_ns), st.wait_dma_ns / total * 100),
          "overlap data movement with compute: hoist loads out of inner loops, reuse loaded tiles (blocking), and "
          "issue the next tile's loads before this tile's compute",
          lines_where([&](uint32_t i) {
            const OpTiming& t = s_.ops[i];
            return prog_.ops[i].engine == static_cast<Engine>(e) && t.reason == StartReason::kDependency &&
                   t.by_op != kNone && prog_.ops[t.by_op].engine == Engine::kDma;
          }));
    }
    // Matmul shapes.
    if (p_.small_moving_matmuls > 0)
      add("matmul_small_moving", Severity::kWarning,
          fmt::format("{} of {} matmuls stream fewer than 512 moving columns; each still pays the 64-cycle minimum and "
                      "leaves the TensorE under-used",
                      p_.small_moving_matmuls, p_.matmuls),
          "give nc_matmul a [128, 512] moving tile (nl.tile_size.gemm_moving_fmax) and a [128, 128] stationary one",
          lines_where([&](uint32_t i) { return prog_.ops[i].matmul && prog_.ops[i].moving_free < 512; }));
    if (p_.fp32_matmuls > 0)
      add("fp32_matmul", Severity::kWarning,
          fmt::format("{} of {} matmuls take float32 operands, which run at a quarter of the bf16 rate",
                      p_.fp32_matmuls, p_.matmuls),
          "cast the operands to bfloat16 (or fp8) before the matmul; PSUM still accumulates in float32",
          lines_where([&](uint32_t i) { return prog_.ops[i].fp32_matmul; }));
    if (p_.transpose_flops > 0.1 * (p_.model_flops + p_.transpose_flops))
      add("transpose_flops", Severity::kNote,
          fmt::format("PE transposes are {:.0f}% of the TensorE's flops",
                      100 * p_.transpose_flops / (p_.model_flops + p_.transpose_flops)),
          "choose layouts that need fewer transposes (swap stationary and moving, load data pre-transposed)",
          lines_where([&](uint32_t i) { return prog_.ops[i].transpose; }));
    // PSUM evictions on the critical path, and PE waits for PSUM banks.
    double evict = 0;
    for (uint32_t i = 0; i < prog_.ops.size(); ++i)
      if (prog_.ops[i].reads_psum && prog_.ops[i].engine != Engine::kTensor) evict += on_path_[i];
    if (evict > 0.05 * total)
      add("psum_eviction_critical", Severity::kWarning,
          fmt::format("PSUM evictions (PSUM -> SBUF copies and reads) are {} ({:.0f}%) of the critical path",
                      human_time(evict), evict / total * 100),
          "evict with fewer, larger instructions, split evictions between ACT and DVE, and give the accumulators "
          "more PSUM banks so the TensorE need not wait for them",
          lines_where([&](uint32_t i) {
            return prog_.ops[i].reads_psum && prog_.ops[i].engine != Engine::kTensor && on_path_[i] > 0;
          }));
    if (pe.wait_psum_ns > 0.05 * total)
      add("psum_bank_pressure", Severity::kWarning,
          fmt::format("the TensorE waits {} ({:.0f}%) for a free PSUM bank", human_time(pe.wait_psum_ns),
                      pe.wait_psum_ns / total * 100),
          "evict accumulators sooner or keep fewer of them live (8 banks of 2 KiB per partition)");
    if (p_.psum_oversubscribed > 0)
      add("psum_oversubscribed", Severity::kWarning,
          fmt::format("{} PSUM tiles were opened while all {} banks held tiles still to be read",
                      p_.psum_oversubscribed, hw_.target.psum_banks),
          "read (evict) PSUM accumulators before opening more than 8 of them");
    if (p_.sbuf_oversubscribed > 0 || p_.peak_sbuf_bytes_per_partition > hw_.target.sbuf_bytes_per_partition)
      add("sbuf_oversubscribed", Severity::kWarning,
          fmt::format(
              "live SBUF tiles need {} per partition at their peak, more than the {} available ({} tiles found no "
              "room): the compiler would spill to HBM",
              human_bytes(static_cast<double>(p_.peak_sbuf_bytes_per_partition)),
              human_bytes(static_cast<double>(hw_.target.sbuf_bytes_per_partition)), p_.sbuf_oversubscribed),
          "shrink the blocks held in SBUF at once, or free tiles earlier (declare them inside the loop that uses "
          "them)");
    const EngineStats& port_dve = p_.engines[static_cast<size_t>(Engine::kVector)];
    if (port_dve.wait_port_ns + p_.engines[static_cast<size_t>(Engine::kGpSimd)].wait_port_ns +
            p_.engines[static_cast<size_t>(Engine::kScalar)].wait_port_ns >
        0.05 * total)
      add("shared_port_conflicts", Severity::kNote,
          "engines waited on each other for a shared SBUF/PSUM port (NCv2: DVE and POOL share SBUF, DVE and ACT share "
          "PSUM)",
          "move work between engines so that DVE and POOL (or DVE and ACT on PSUM) are not busy at the same time");
    if (p_.pe_throttle_ns > 0.05 * total)
      add("pe_throttled", Severity::kNote,
          fmt::format("TensorE throttling after idle gaps cost {}", human_time(p_.pe_throttle_ns)),
          "keep the TensorE busy without gaps longer than ~3 us");
    if (p_.dropped_records > 0)
      add("truncated_trace", Severity::kWarning,
          fmt::format("the trace kept {} instructions and dropped {}: the profile covers the kept ones only",
                      trace_.size(), p_.dropped_records),
          "profile a smaller problem size");
    if (!p_.unpriced.empty()) {
      std::string names;
      for (const auto& [k, v] : p_.unpriced) names += (names.empty() ? "" : ", ") + k;
      add("unpriced_instructions", Severity::kNote,
          fmt::format("no cost rule matched {}: costed as max(64, N) cycles", names),
          "add a [[rules]] entry for them to the hardware description");
    }
  }

  const Trace& trace_;
  const CostProgram& prog_;
  const DependenceGraph& deps_;
  const Schedule& s_;
  const HardwareSpec& hw_;
  Profile p_;
  std::vector<double> on_path_;
  mutable std::unordered_map<uint32_t, std::string> texts_;  // opcode_of
};

}  // namespace

Profile build_profile(const Trace& trace, const CostProgram& prog, const DependenceGraph& deps, const Schedule& sched,
                      const HardwareSpec& hw) {
  return Builder(trace, prog, deps, sched, hw).run();
}

nlohmann::json profile_to_json(const Profile& p, size_t max_lines) {
  using nlohmann::json;
  const double total = std::max(p.total_ns, 1e-9);
  json engines = json::object();
  for (const EngineStats& e : p.engines) {
    json ops = json::object();
    for (const auto& [k, v] : e.opcodes) ops[k] = {{"instructions", v.first}, {"busy_ns", v.second}};
    engines[e.name] = {{"active_time_ns", e.active_ns},         {"active_time_percent", 100 * e.active_ns / total},
                       {"instructions", e.instructions},        {"critical_path_ns", e.critical_ns},
                       {"wait_dma_ns", e.wait_dma_ns},          {"wait_engines_ns", e.wait_engines_ns},
                       {"wait_psum_ns", e.wait_psum_ns},        {"wait_sbuf_ns", e.wait_sbuf_ns},
                       {"wait_shared_port_ns", e.wait_port_ns}, {"opcodes", ops}};
  }
  json queues = json::object();
  for (const auto& [q, v] : p.dma_queues) queues[q] = {{"dmas", v.first}, {"bytes", v.second}};
  json lines = json::array();
  for (size_t k = 0; k < p.lines.size() && k < max_lines; ++k) {
    const LineStats& l = p.lines[k];
    lines.push_back({{"file", l.file},
                     {"line", l.line},
                     {"instructions", l.instructions},
                     {"busy_ns", l.busy_ns},
                     {"critical_path_ns", l.critical_ns},
                     {"critical_path_percent", 100 * l.critical_ns / total},
                     {"engines", l.engines},
                     {"opcode", l.opcode}});
  }
  json insights = json::array();
  for (const Insight& in : p.insights)
    insights.push_back({{"code", in.code},
                        {"severity", std::string(severity_name(in.severity))},
                        {"message", in.message},
                        {"hint", in.hint},
                        {"lines", in.lines}});
  const double hbm = static_cast<double>(p.hbm_read_bytes + p.hbm_write_bytes);
  json summary = {
      {"total_time", p.total_ns * 1e-9},
      {"total_time_ns", p.total_ns},
      {"instructions", p.instructions},
      {"hfu_estimated_percent", 100 * p.hfu},
      {"mfu_estimated_percent", 100 * p.mfu},
      {"mbu_estimated_percent", 100 * p.mbu},
      {"dma_active_time_percent", 100 * p.engines[static_cast<size_t>(Engine::kDma)].active_ns / total},
      {"dma_engine_utilization_percent", 100 * p.dma_engine_utilization},
      {"hbm_read_bytes", p.hbm_read_bytes},
      {"hbm_write_bytes", p.hbm_write_bytes},
      {"sbuf_read_bytes", p.sbuf_read_bytes},
      {"sbuf_write_bytes", p.sbuf_write_bytes},
      {"psum_read_bytes", p.psum_read_bytes},
      {"psum_write_bytes", p.psum_write_bytes},
      {"dma_transfers", p.dma_count},
      {"dma_bytes", p.dma_bytes},
      {"dma_descriptors", p.dma_descriptors},
      {"average_dma_size", p.dma_count ? static_cast<double>(p.dma_bytes) / p.dma_count : 0.0},
      {"average_descriptor_size", p.dma_descriptors ? static_cast<double>(p.dma_bytes) / p.dma_descriptors : 0.0},
      {"small_dma_transfers", p.small_dmas},
      {"model_flops", p.model_flops},
      {"transpose_flops", p.transpose_flops},
      {"raw_flops", p.model_flops + p.transpose_flops},
      {"adjusted_flops", p.adjusted_flops},
      {"matmul_instructions", p.matmuls},
      {"fp32_matmul_instructions", p.fp32_matmuls},
      {"mm_arithmetic_intensity", p.arithmetic_intensity},
      {"peak_flops_bandwidth_ratio", p.machine_balance},
      {"roofline_time_ns", p.roofline_ns},
      {"roofline_compute_ns", p.compute_bound_ns},
      {"roofline_memory_ns", p.memory_bound_ns},
      {"roofline_bound", p.memory_bound_ns >= p.compute_bound_ns ? "memory" : "compute"},
      {"roofline_efficiency_percent", 100 * p.roofline_ns / total},
      {"achieved_hbm_bytes_per_ns", hbm / total},
      {"peak_sbuf_bytes_per_partition", p.peak_sbuf_bytes_per_partition},
      {"peak_psum_banks", p.peak_psum_banks},
      {"pe_throttle_ns", p.pe_throttle_ns},
      {"critical_path_latency_ns", p.critical_latency_ns},
      {"critical_path_idle_ns", p.critical_idle_ns},
  };
  json model = {{"folded_assignment_copies", p.folded_copies},
                {"folded_psum_zeroing", p.folded_psum_zeroing},
                {"sbuf_oversubscribed", p.sbuf_oversubscribed},
                {"dropped_trace_records", p.dropped_records},
                {"dependencies", {{"raw", p.raw_deps}, {"war", p.war_deps}, {"waw", p.waw_deps}}},
                {"psum_oversubscribed", p.psum_oversubscribed},
                {"unpriced", p.unpriced}};
  return {{"target", p.target},
          {"core", p.core},
          {"hardware", p.hardware_origin},
          {"summary", summary},
          {"engines", engines},
          {"dma_queues", queues},
          {"dma_engine_busy_ns", p.dma_engine_busy_ns},
          {"hot_lines", lines},
          {"insights", insights},
          {"model", model}};
}

std::string profile_to_text(const Profile& p, size_t max_lines) {
  const double total = std::max(p.total_ns, 1e-9);
  std::string out;
  auto line = [&](std::string s) {
    out += s;
    out += '\n';
  };
  line(fmt::format("  latency      {} on {} ({}), {} instructions", human_time(p.total_ns), p.target, p.core,
                   p.instructions));
  line(fmt::format("  utilisation  HFU {:.2f}%  MFU {:.2f}%  MBU {:.2f}%", 100 * p.hfu, 100 * p.mfu, 100 * p.mbu));
  line(fmt::format("  roofline     {} ({}-bound: {:.1f} flop/B vs machine balance {:.0f}); kernel at {:.1f}% of it",
                   human_time(p.roofline_ns), p.memory_bound_ns >= p.compute_bound_ns ? "memory" : "compute",
                   p.arithmetic_intensity, p.machine_balance, 100 * p.roofline_ns / total));
  line(fmt::format("  hbm          read {}  write {}  ({:.1f} GB/s achieved)", human_bytes(double(p.hbm_read_bytes)),
                   human_bytes(double(p.hbm_write_bytes)), double(p.hbm_read_bytes + p.hbm_write_bytes) / total));
  line(fmt::format("  dma          {} transfers, {}, average {} ({} under 2 KiB/partition), engines {:.0f}% busy",
                   p.dma_count, human_bytes(double(p.dma_bytes)),
                   human_bytes(p.dma_count ? double(p.dma_bytes) / p.dma_count : 0.0), p.small_dmas,
                   100 * p.dma_engine_utilization));
  line(fmt::format("  sbuf / psum  peak {} per partition live; peak {} PSUM banks",
                   human_bytes(double(p.peak_sbuf_bytes_per_partition)), p.peak_psum_banks));
  line("  engines      active        share  instructions  waiting on DMA  critical path");
  for (const EngineStats& e : p.engines) {
    if (e.instructions == 0) continue;
    line(fmt::format("    {:<8} {:>12} {:>7.1f}% {:>13} {:>15} {:>14}", e.name, human_time(e.active_ns),
                     100 * e.active_ns / total, e.instructions, e.name == "dma" ? "-" : human_time(e.wait_dma_ns),
                     human_time(e.critical_ns)));
  }
  if (!p.lines.empty()) {
    line("  hot lines    critical path   engine time  instructions  opcode");
    for (size_t k = 0; k < p.lines.size() && k < max_lines; ++k) {
      const LineStats& l = p.lines[k];
      std::string f = l.file;
      size_t slash = f.rfind('/');
      if (slash != std::string::npos) f = f.substr(slash + 1);
      line(fmt::format("    {:<22} {:>7.1f}% {:>13} {:>13}  {}", fmt::format("{}:{}", f, l.line),
                       100 * l.critical_ns / total, human_time(l.busy_ns), l.instructions, l.opcode));
    }
  }
  if (!p.insights.empty()) {
    line("  insights");
    for (const Insight& in : p.insights) {
      line(fmt::format("    [{}] {}: {}", severity_name(in.severity), in.code, in.message));
      if (!in.lines.empty()) {
        std::string at;
        for (const auto& l : in.lines) at += (at.empty() ? "" : ", ") + l;
        line(fmt::format("        at {}", at));
      }
      line(fmt::format("        hint: {}", in.hint));
    }
  }
  if (p.folded_copies > 0 || p.folded_psum_zeroing > 0)
    line(
        fmt::format("  model        folded {} assignment copies into their producers and {} PSUM zeroings into matmuls "
                    "(as the compiler does)",
                    p.folded_copies, p.folded_psum_zeroing));
  return out;
}

}  // namespace nki_agent
