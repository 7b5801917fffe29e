// Dependency analysis over footprints (deps.h). Each memory space keeps the live "slots" — the
// distinct regions written (or, in HBM, read) so far — in an ordered map by the start of their
// bounding interval, so a lookup visits only the slots that can overlap.
#include "cost/deps.h"

#include <algorithm>
#include <map>

namespace nki_agent {

namespace {

constexpr uint32_t kNone = 0xffffffffu;
// Readers remembered per slot: the last one on each compute engine and each DMA queue (an engine
// runs in order, so its last reader finishes after its earlier ones).
constexpr int kSequencers = kNumComputeEngines + kNumDmaQueues;

int sequencer_of(const CostOp& op) {
  if (op.engine == Engine::kDma) return kNumComputeEngines + static_cast<int>(op.queue);
  return static_cast<int>(op.engine);
}

struct Slot {
  Footprint fp;
  uint32_t writer = kNone;
  int32_t alloc = -1;
  bool read_by_non_pe = false;  // read by a non-TensorE op since the last write
  bool live = true;
  uint32_t readers[kSequencers];
  Slot() { std::fill(std::begin(readers), std::end(readers), kNone); }
};

struct Space {
  std::multimap<int64_t, uint32_t> by_lo;  // bounding-interval start -> slot
  int64_t max_span = 0;
};

class Analyzer {
 public:
  Analyzer(const CostProgram& prog, const HardwareSpec& hw) : prog_(prog), hw_(hw) {
    spaces_.resize(prog.space_names.size());
  }

  DependenceGraph run() {
    const size_t n = prog_.ops.size();
    g_.pred_begin.reserve(n + 1);
    g_.opens.assign(n, -1);
    for (uint32_t i = 0; i < n; ++i) {
      g_.pred_begin.push_back(static_cast<uint32_t>(g_.preds.size()));
      visit(i);
      // Dedupe this op's edges (keep the first kind seen).
      auto b = g_.preds.begin() + g_.pred_begin.back();
      std::stable_sort(b, g_.preds.end(), [](const DepEdge& x, const DepEdge& y) { return x.op < y.op; });
      g_.preds.erase(std::unique(b, g_.preds.end(), [](const DepEdge& x, const DepEdge& y) { return x.op == y.op; }),
                     g_.preds.end());
    }
    g_.pred_begin.push_back(static_cast<uint32_t>(g_.preds.size()));
    for (const DepEdge& e : g_.preds) {
      if (e.kind == DepKind::kRaw) ++g_.raw;
      if (e.kind == DepKind::kWar) ++g_.war;
      if (e.kind == DepKind::kWaw) ++g_.waw;
    }
    // Releases, grouped by the op that ends each allocation.
    std::vector<uint32_t> count(n + 1, 0);
    for (const Allocation& a : g_.allocations) ++count[a.last_op];
    g_.release_begin.assign(n + 1, 0);
    for (size_t i = 0; i < n; ++i) g_.release_begin[i + 1] = g_.release_begin[i] + count[i];
    g_.releases.assign(g_.allocations.size(), 0);
    std::vector<uint32_t> fill(g_.release_begin.begin(), g_.release_begin.end() - 1);
    for (uint32_t a = 0; a < g_.allocations.size(); ++a) g_.releases[fill[g_.allocations[a].last_op]++] = a;
    return std::move(g_);
  }

 private:
  void edge(uint32_t from, uint32_t to, DepKind k) {
    if (from == kNone || from == to) return;
    g_.preds.push_back({from, k});
  }

  template <typename F>
  void for_overlapping(const Footprint& f, F&& fn) {
    Space& sp = spaces_[f.space];
    auto it = sp.by_lo.lower_bound(f.lo - sp.max_span);
    for (; it != sp.by_lo.end() && it->first < f.hi; ++it) {
      Slot& s = slots_[it->second];
      if (s.live && footprints_overlap(s.fp, f)) fn(it->second, s);
    }
  }

  uint32_t add_slot(const Footprint& f) {
    Space& sp = spaces_[f.space];
    slots_.emplace_back();
    slots_.back().fp = f;
    const uint32_t id = static_cast<uint32_t>(slots_.size() - 1);
    sp.by_lo.emplace(f.lo, id);
    sp.max_span = std::max(sp.max_span, f.hi - f.lo);
    return id;
  }

  void kill(uint32_t id) {
    Slot& s = slots_[id];
    s.live = false;
    Space& sp = spaces_[s.fp.space];
    auto [b, e] = sp.by_lo.equal_range(s.fp.lo);
    for (auto it = b; it != e; ++it)
      if (it->second == id) {
        sp.by_lo.erase(it);
        break;
      }
  }

  void touch(int32_t alloc, uint32_t i) {
    if (alloc >= 0)
      g_.allocations[static_cast<size_t>(alloc)].last_op =
          std::max(g_.allocations[static_cast<size_t>(alloc)].last_op, i);
  }

  void visit(uint32_t i) {
    const CostOp& op = prog_.ops[i];
    const int seq = sequencer_of(op);
    // Reads.
    for (uint32_t k = 0; k < op.n_reads; ++k) {
      const Footprint& f = prog_.footprints[op.first_footprint + k];
      bool any = false;
      for_overlapping(f, [&](uint32_t, Slot& s) {
        any = true;
        edge(s.writer, i, DepKind::kRaw);
        s.readers[seq] = i;
        if (op.engine != Engine::kTensor) s.read_by_non_pe = true;
        touch(s.alloc, i);
      });
      // HBM regions nobody wrote yet still remember their readers, for a later write's WAR.
      if (!any && buffer_is_hbm(f.buffer)) slots_[add_slot(f)].readers[seq] = i;
    }
    // The write.
    for (uint32_t k = 0; k < op.n_writes; ++k) {
      const Footprint& f = prog_.footprints[op.first_footprint + op.n_reads + k];
      const bool hbm = buffer_is_hbm(f.buffer);
      bool in_place = op.rmw;
      if (op.matmul && f.buffer == Buffer::kPsum) {
        // Accumulate unless the region was consumed since its last write (a new group).
        bool fresh = true;
        for_overlapping(f, [&](uint32_t, Slot& s) {
          if (s.writer != kNone && !s.read_by_non_pe) fresh = false;
        });
        in_place = !fresh;
      }
      int32_t inherited = -1;
      uint32_t exact = kNone;
      std::vector<uint32_t> covered;
      for_overlapping(f, [&](uint32_t id, Slot& s) {
        if (hbm || in_place) {
          edge(s.writer, i, DepKind::kWaw);
          for (uint32_t r : s.readers)
            if (r != kNone && r != i) edge(r, i, DepKind::kWar);
        }
        if (in_place && s.alloc >= 0 && inherited < 0) inherited = s.alloc;
        if (in_place) touch(s.alloc, i);
        if (s.fp.lo == f.lo && s.fp.hi == f.hi && s.fp.p0 == f.p0 && s.fp.p1 == f.p1 && s.fp.rows == f.rows &&
            s.fp.pitch == f.pitch && s.fp.run == f.run)
          exact = id;
        else if (footprint_covers(f, s.fp))
          covered.push_back(id);
      });
      for (uint32_t id : covered) kill(id);
      int32_t alloc = inherited;
      if (!hbm && alloc < 0) {
        Allocation a;
        a.buffer = f.buffer;
        // SBUF space is what the values hold; a PSUM value takes every bank its span touches.
        a.bytes_per_partition = f.buffer == Buffer::kSbuf ? f.held_bytes_per_partition() : f.bytes_per_partition();
        if (f.buffer == Buffer::kPsum)
          a.banks = static_cast<int>(std::max<int64_t>(
              1, (a.bytes_per_partition + hw_.target.psum_bank_bytes - 1) / hw_.target.psum_bank_bytes));
        a.first_op = a.last_op = i;
        alloc = static_cast<int32_t>(g_.allocations.size());
        g_.allocations.push_back(a);
        g_.opens[i] = alloc;
      }
      const uint32_t id = exact != kNone ? exact : add_slot(f);
      Slot& s = slots_[id];
      s.writer = i;
      s.alloc = alloc;
      s.read_by_non_pe = false;
      std::fill(std::begin(s.readers), std::end(s.readers), kNone);
    }
  }

  const CostProgram& prog_;
  const HardwareSpec& hw_;
  DependenceGraph g_;
  std::vector<Space> spaces_;
  std::vector<Slot> slots_;
};

}  // namespace

DependenceGraph analyze_dependences(const CostProgram& prog, const HardwareSpec& hw) {
  return Analyzer(prog, hw).run();
}

}  // namespace nki_agent
