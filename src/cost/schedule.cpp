// The list scheduler (schedule.h). Ops are placed in program order — every dependency is earlier
// in program order, so it is already placed — onto in-order engines and interval timelines for the
// resources that can be shared out of order (DMA engines, NCv2 memory ports).
#include "cost/schedule.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>

namespace nki_agent {

namespace {

constexpr uint32_t kNone = 0xffffffffu;
constexpr double kInf = std::numeric_limits<double>::infinity();

// Busy intervals of one resource, disjoint and merged when they touch.
class Timeline {
 public:
  // The earliest s >= t with [s, s + d) free.
  double find_slot(double t, double d) const {
    auto it = busy_.upper_bound(t);
    if (it != busy_.begin()) {
      auto prev = std::prev(it);
      if (prev->second > t) t = prev->second;
    }
    while (it != busy_.end() && it->first < t + d) {
      t = std::max(t, it->second);
      ++it;
    }
    return t;
  }

  // Work of length d that may be split over the free gaps from t on (a DMA engine serves its queues
  // round-robin, so a transfer interleaves with the others rather than waiting for a gap that
  // holds it whole): marks the pieces busy, calls piece(s, e) for each, and returns [first, end).
  template <typename Piece>
  std::pair<double, double> fill(double t, double d, Piece&& piece) {
    constexpr double kMinGap = 1e-3;  // ns: gaps shorter than this are not worth a piece
    double first = -1, left = d;
    auto it = busy_.upper_bound(t);
    if (it != busy_.begin()) {
      auto prev = std::prev(it);
      if (prev->second > t) t = prev->second;
    }
    while (left > 0) {
      const double gap_end = it == busy_.end() ? kInf : it->first;
      const double take = std::min(left, gap_end - t);
      if (take >= kMinGap || (it == busy_.end() && take > 0)) {
        if (first < 0) first = t;
        piece(t, t + take);
        left -= take;
        const double s = t, e = t + take;
        insert(s, e);
        it = busy_.upper_bound(e);
        t = e;
        if (left <= 0) break;
        if (it != busy_.begin()) {
          auto prev = std::prev(it);
          if (prev->second > t) t = prev->second;
        }
        continue;
      }
      if (it == busy_.end()) break;
      t = std::max(t, it->second);
      ++it;
    }
    if (first < 0) first = t;
    return {first, t};
  }

  void insert(double s, double e) {
    if (e <= s) return;
    auto it = busy_.upper_bound(s);
    if (it != busy_.begin()) {
      auto prev = std::prev(it);
      if (prev->second >= s - 1e-9) {
        s = prev->first;
        e = std::max(e, prev->second);
        it = busy_.erase(prev);
      }
    }
    while (it != busy_.end() && it->first <= e + 1e-9) {
      e = std::max(e, it->second);
      it = busy_.erase(it);
    }
    busy_.emplace(s, e);
  }

 private:
  std::map<double, double> busy_;
};

// SBUF capacity (bytes per partition) over time: tiles whose last user is not placed yet count as
// live forever; the others free at their last user's end. A new tile waits for enough frees.
class CapacityGate {
 public:
  explicit CapacityGate(int64_t capacity) : capacity_(capacity) {}

  // The earliest t >= t0 at which `bytes` more fit; t0 when they never will (over = true).
  double admit(double t0, int64_t bytes, bool& over) const {
    const int64_t room = capacity_ - pending_ - bytes;
    if (room < 0) {
      over = true;
      return t0;
    }
    int64_t after = 0;  // bytes freed strictly after the release being looked at
    int steps = 0;
    for (auto it = frees_.rbegin(); it != frees_.rend() && it->first > t0; ++it) {
      after += it->second;
      if (after > room) return it->first;
      if (++steps > 100000) break;  // pathological tile counts: stop looking
    }
    return t0;
  }
  void open(int64_t bytes) { pending_ += bytes; }
  void close(double at, int64_t bytes) {
    pending_ -= bytes;
    frees_[at] += bytes;
  }

 private:
  int64_t capacity_;
  int64_t pending_ = 0;  // live tiles whose release time is not known yet
  std::map<double, int64_t> frees_;
};

class Scheduler {
 public:
  Scheduler(const CostProgram& prog, const DependenceGraph& deps, const HardwareSpec& hw, const ScheduleOptions& opt)
      : prog_(prog), deps_(deps), hw_(hw), opt_(opt), sbuf_(hw.target.sbuf_bytes_per_partition) {
    dma_engines_.resize(static_cast<size_t>(hw.dma.engines));
    dma_last_op_.assign(static_cast<size_t>(hw.dma.engines), kNone);
    dma_last_end_.assign(static_cast<size_t>(hw.dma.engines), 0.0);
    groups_.resize(hw.concurrency.size());
    bank_free_.assign(static_cast<size_t>(hw.target.psum_banks), 0.0);
    bank_owner_.assign(static_cast<size_t>(hw.target.psum_banks), -1);
    bank_released_by_.assign(static_cast<size_t>(hw.target.psum_banks), kNone);
    alloc_banks_.resize(deps.allocations.size());
    s_.dma_engine_busy_ns.assign(static_cast<size_t>(hw.dma.engines), 0.0);
  }

  Schedule run() {
    const size_t n = prog_.ops.size();
    s_.ops.resize(n);
    if (opt_.keep_dma_slices) {
      size_t slices = 0;
      for (const CostOp& op : prog_.ops)
        if (op.engine == Engine::kDma) slices += op.dma_engines;
      s_.dma_slices.reserve(slices);
    }
    for (uint32_t i = 0; i < n; ++i) {
      if (prog_.ops[i].engine == Engine::kDma)
        place_dma(i);
      else
        place_compute(i);
      release(i);
      s_.total_ns = std::max(s_.total_ns, s_.ops[i].end);
    }
    return std::move(s_);
  }

 private:
  // When the dependencies of op i allow it to start, and the latest of them.
  void readiness(uint32_t i, bool is_dma, OpTiming& t) {
    const CostOp& op = prog_.ops[i];
    t.ready = hw_.launch_overhead_ns;  // nothing runs before the launch is done
    for (uint32_t k = deps_.pred_begin[i]; k < deps_.pred_begin[i + 1]; ++k) {
      const uint32_t p = deps_.preds[k].op;
      const CostOp& pop = prog_.ops[p];
      // DMA triggers include the semaphore wait in their trigger latency; compute ops waiting on
      // another engine (or on a DMA) pay the semaphore latency.
      const bool cross = pop.engine != op.engine || pop.engine == Engine::kDma;
      const double at = s_.ops[p].end + (cross && !is_dma ? hw_.semaphore_latency_ns : 0.0);
      if (at > t.ready || (t.by_op == kNone && at >= t.ready)) {
        t.ready = at;
        t.by_op = p;
      }
    }
    t.reason = t.by_op == kNone ? StartReason::kNone : StartReason::kDependency;
  }

  bool depends_on(uint32_t i, uint32_t p) const {
    if (p == kNone) return false;
    for (uint32_t k = deps_.pred_begin[i]; k < deps_.pred_begin[i + 1]; ++k)
      if (deps_.preds[k].op == p && deps_.preds[k].kind == DepKind::kRaw) return true;
    return false;
  }

  void place_compute(uint32_t i) {
    const CostOp& op = prog_.ops[i];
    const size_t e = static_cast<size_t>(op.engine);
    const EngineSpec& eng = hw_.engine(op.engine);
    OpTiming& t = s_.ops[i];
    readiness(i, false, t);
    double start = t.ready;
    auto bump = [&](double at, StartReason why, uint32_t by) {
      if (at > start) {
        start = at;
        t.reason = why;
        t.by_op = by;
      }
    };
    bump(engine_free_[e], StartReason::kEngine, engine_last_[e]);
    double dur = op.duration_ns;
    // The drain after a RAW on the previous op overlaps this op's operand setup (the measured
    // dependent issue interval, nki-spec §6.3, holds both).
    if (depends_on(i, engine_last_[e]))
      dur += std::max(0.0, eng.dependency_overhead_cycles - op.access_cycles) / eng.clock_ghz;
    // PSUM banks for a fresh PSUM allocation: the ones that free first.
    const int32_t a = deps_.opens[i];
    if (a >= 0 && deps_.allocations[static_cast<size_t>(a)].buffer == Buffer::kPsum) {
      const Allocation& al = deps_.allocations[static_cast<size_t>(a)];
      std::vector<size_t> order(bank_free_.size());
      for (size_t b = 0; b < order.size(); ++b) order[b] = b;
      std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return bank_free_[x] < bank_free_[y]; });
      const size_t need = std::min<size_t>(static_cast<size_t>(std::max(1, al.banks)), order.size());
      double free_at = 0;
      uint32_t by = kNone;
      for (size_t k = 0; k < need; ++k) {
        const size_t b = order[k];
        if (std::isinf(bank_free_[b])) {
          ++s_.psum_oversubscribed;  // every bank holds a tile still to be read: do not wait forever
          continue;
        }
        double at = bank_free_[b];
        if (bank_released_by_[b] != kNone && prog_.ops[bank_released_by_[b]].engine != op.engine)
          at += hw_.semaphore_latency_ns;
        if (at > free_at) {
          free_at = at;
          by = bank_released_by_[b];
        }
      }
      bump(free_at, StartReason::kPsumBank, by);
      for (size_t k = 0; k < need; ++k) {
        const size_t b = order[k];
        bank_free_[b] = kInf;
        bank_owner_[b] = a;
        alloc_banks_[static_cast<size_t>(a)].push_back(static_cast<uint16_t>(b));
      }
    }
    // A fresh SBUF tile: room for it.
    if (a >= 0 && deps_.allocations[static_cast<size_t>(a)].buffer == Buffer::kSbuf)
      bump(admit_sbuf(a, start), StartReason::kSbufSpace, kNone);
    // TensorE throttling: after an idle gap the PE starts slow and ramps up.
    if (op.engine == Engine::kTensor && eng.throttle_ramp_ns > 0 && eng.throttle_start_utilization < 1.0) {
      const bool first = engine_last_[e] == kNone;
      if (first || start - engine_free_[e] >= eng.throttle_idle_ns) ramp_left_ = eng.throttle_ramp_ns;
      if (ramp_left_ > 0) {
        const double covered = std::min(dur, ramp_left_);
        const double mean_util = (eng.throttle_start_utilization + 1.0) / 2.0;
        const double extra = covered * (1.0 / mean_util - 1.0);
        s_.pe_throttle_ns += extra;
        dur += extra;
        ramp_left_ -= covered;
      }
    }
    // Shared memory ports (NCv2): find a gap free in every group this op belongs to.
    if (op.exclusive) {
      for (int round = 0; round < 16; ++round) {
        double s = start;
        for (size_t g = 0; g < groups_.size(); ++g)
          if (op.exclusive & (1u << g)) s = std::max(s, groups_[g].find_slot(s, dur));
        bool stable = true;
        for (size_t g = 0; g < groups_.size(); ++g)
          if ((op.exclusive & (1u << g)) && groups_[g].find_slot(s, dur) != s) stable = false;
        if (s > start) {
          start = s;
          t.reason = StartReason::kConcurrency;
          t.by_op = kNone;
        }
        if (stable) break;
      }
      for (size_t g = 0; g < groups_.size(); ++g)
        if (op.exclusive & (1u << g)) groups_[g].insert(start, start + dur);
    }
    t.start = start;
    t.end = start + dur;
    engine_free_[e] = t.end;
    engine_last_[e] = i;
  }

  void place_dma(uint32_t i) {
    const CostOp& op = prog_.ops[i];
    const DmaSpec& d = hw_.dma;
    const size_t q = static_cast<size_t>(op.queue);
    OpTiming& t = s_.ops[i];
    readiness(i, true, t);
    double trigger = t.ready;
    auto bump = [&](double at, StartReason why, uint32_t by) {
      if (at > trigger) {
        trigger = at;
        t.reason = why;
        t.by_op = by;
      }
    };
    bump(queue_trigger_[q], StartReason::kEngine, queue_last_[q]);
    std::deque<uint32_t>& inflight = inflight_[q];
    if (d.max_inflight_per_queue > 0 && inflight.size() >= static_cast<size_t>(d.max_inflight_per_queue)) {
      const uint32_t oldest = inflight.front();
      inflight.pop_front();
      bump(s_.ops[oldest].end, StartReason::kInflight, oldest);
    }
    const int32_t a = deps_.opens[i];
    if (a >= 0 && deps_.allocations[static_cast<size_t>(a)].buffer == Buffer::kSbuf)
      bump(admit_sbuf(a, trigger), StartReason::kSbufSpace, kNone);
    t.trigger = trigger;
    const double data = trigger + d.trigger_latency_ns;
    double first = kInf, last = data;
    uint32_t blocker = kNone;
    for (uint16_t k = 0; k < op.dma_engines; ++k) {
      const size_t e = static_cast<size_t>(op.dma_first_engine) + k;
      if (e >= dma_engines_.size()) break;
      const uint32_t before = dma_last_op_[e];
      const double before_end = dma_last_end_[e];
      const auto [s, end] = dma_engines_[e].fill(data, op.duration_ns, [&](double ps, double pe) {
        if (opt_.keep_dma_slices) s_.dma_slices.push_back({i, static_cast<uint16_t>(e), ps, pe});
      });
      if (s > data && before != kNone && std::abs(before_end - s) < 1e-6) blocker = before;
      first = std::min(first, s);
      last = std::max(last, end);
      s_.dma_engine_busy_ns[e] += op.duration_ns;
      if (end >= dma_last_end_[e]) {
        dma_last_end_[e] = end;
        dma_last_op_[e] = i;
      }
    }
    if (std::isinf(first)) first = data;
    if (first > data + 1e-9) {
      t.reason = StartReason::kDmaEngine;
      t.by_op = blocker;
    }
    t.start = first;
    t.end = last;
    queue_trigger_[q] = trigger;
    queue_last_[q] = i;
    inflight.push_back(i);
  }

  // When SBUF allocation a, opened by an op ready at t, fits; it is then open.
  double admit_sbuf(int32_t a, double t) {
    const Allocation& al = deps_.allocations[static_cast<size_t>(a)];
    bool over = false;
    const double at = sbuf_.admit(t, al.bytes_per_partition, over);
    if (over) ++s_.sbuf_oversubscribed;
    sbuf_.open(al.bytes_per_partition);
    return at;
  }

  // Allocations whose last user is op i end with it.
  void release(uint32_t i) {
    for (uint32_t k = deps_.release_begin[i]; k < deps_.release_begin[i + 1]; ++k) {
      const uint32_t a = deps_.releases[k];
      const Allocation& al = deps_.allocations[a];
      if (al.buffer == Buffer::kSbuf) sbuf_.close(s_.ops[i].end, al.bytes_per_partition);
      for (uint16_t b : alloc_banks_[a])
        if (bank_owner_[b] == static_cast<int32_t>(a)) {
          bank_free_[b] = s_.ops[i].end;
          bank_released_by_[b] = i;
          bank_owner_[b] = -1;
        }
    }
  }

  const CostProgram& prog_;
  const DependenceGraph& deps_;
  const HardwareSpec& hw_;
  const ScheduleOptions& opt_;
  Schedule s_;
  double engine_free_[kNumComputeEngines] = {};
  uint32_t engine_last_[kNumComputeEngines] = {kNone, kNone, kNone, kNone};
  double queue_trigger_[kNumDmaQueues] = {};
  uint32_t queue_last_[kNumDmaQueues] = {kNone, kNone, kNone, kNone};
  std::deque<uint32_t> inflight_[kNumDmaQueues];
  std::vector<Timeline> dma_engines_;
  std::vector<uint32_t> dma_last_op_;
  std::vector<double> dma_last_end_;
  std::vector<Timeline> groups_;
  std::vector<double> bank_free_;
  std::vector<int32_t> bank_owner_;
  std::vector<uint32_t> bank_released_by_;
  std::vector<std::vector<uint16_t>> alloc_banks_;
  double ramp_left_ = 0;
  CapacityGate sbuf_;
};

}  // namespace

Schedule schedule_program(const CostProgram& prog, const DependenceGraph& deps, const HardwareSpec& hw,
                          const ScheduleOptions& options) {
  return Scheduler(prog, deps, hw, options).run();
}

}  // namespace nki_agent
