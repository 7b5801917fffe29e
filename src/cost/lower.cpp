// Lowering a trace to CostOps: footprints, spaces, costs by rule, DMA descriptors, and the folding
// of assignment copies (lower.h).
#include "cost/lower.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace nki_agent {

namespace {

// Dims of a view with size-1 axes dropped, innermost last.
struct Dim {
  int64_t n, s;
};

// The 2-level shape of the elements offset + sum(i_d * s_d) over dims [first, ndim): run, rows,
// pitch and the bounding interval.
void pattern_of(const OperandRecord& o, size_t first, int64_t base, Footprint& f) {
  std::vector<Dim> dims;
  int64_t lo = base, hi = base;
  for (size_t d = first; d < o.shape.size(); ++d) {
    const int64_t n = o.shape[d], s = d < o.strides.size() ? o.strides[d] : 0;
    if (n <= 0) {
      f.lo = f.hi = base;  // empty
      return;
    }
    if (n == 1) continue;
    lo += std::min<int64_t>(0, (n - 1) * s);
    hi += std::max<int64_t>(0, (n - 1) * s);
    dims.push_back({n, s});
  }
  f.lo = lo;
  f.hi = hi + 1;
  // Exact 2-level description when the dims collapse to rows of a contiguous run.
  int64_t run = 1;
  size_t k = dims.size();
  while (k > 0 && dims[k - 1].s == run) {
    run *= dims[k - 1].n;
    --k;
  }
  if (k == 0) {
    f.rows = 1;
    f.run = run;
    f.pitch = run;
  } else if (k == 1 && dims[0].s > 0 && dims[0].s >= run) {
    f.rows = dims[0].n;
    f.pitch = dims[0].s;
    f.run = run;
  } else {
    f.rows = 0;  // only the bounding interval
  }
}

// The innermost contiguous run, in elements, of dims [first, ndim).
int64_t contiguous_run(const OperandRecord& o, size_t first) {
  int64_t run = 1;
  for (size_t d = o.shape.size(); d-- > first;) {
    const int64_t n = o.shape[d], s = d < o.strides.size() ? o.strides[d] : 0;
    if (n == 1) continue;
    if (s != run) break;
    run *= n;
  }
  return run;
}

// The stride, in elements, between consecutive contiguous runs of dims [0, ndim): the stride of
// the innermost dim the run stops at (0 when the whole operand is one run).
int64_t run_pitch(const OperandRecord& o) {
  int64_t run = 1;
  for (size_t d = o.shape.size(); d-- > 0;) {
    const int64_t n = o.shape[d], s = d < o.strides.size() ? o.strides[d] : 0;
    if (n == 1) continue;
    if (s != run) return s < 0 ? -s : s;
    run *= n;
  }
  return 0;
}

int64_t numel_of(const OperandRecord& o) {
  int64_t n = 1;
  for (int64_t d : o.shape) n *= d;
  return n;
}

// Elements per partition (on-chip); all elements for HBM.
int64_t per_partition(const OperandRecord& o) {
  const int64_t n = numel_of(o);
  if (!buffer_is_on_chip(o.buffer) || o.shape.empty()) return n;
  return o.shape[0] > 0 ? n / o.shape[0] : 0;
}

// Stride of the innermost axis with more than one element, in elements (1 when none).
int64_t minor_stride(const OperandRecord& o) {
  for (size_t d = o.shape.size(); d-- > 0;)
    if (o.shape[d] > 1) return d < o.strides.size() ? std::llabs(o.strides[d]) : 1;
  return 1;
}

// nc_matmul in the ordinary mode, or in double-row mode (nki/isa_matmul_modes.h).
bool is_matmul(const InstructionRecord& r) {
  return r.opcode() == Opcode::kNcMatmul || r.opcode() == Opcode::kNcMatmulMx;
}

bool is_double_row(const InstructionRecord& r) {
  return is_matmul(r) && r.op.sub[0] == AluOp(OpMode::kDoubleRow);
}

// Where an operand is read from, as the cost rules see it: a tile broadcast along the partitions
// (`broadcast_to`: partition stride 0 over more than one partition) is the result of a TensorE
// ones-matmul, which lands in PSUM (nki-spec §2: broadcast_to "lowered to a PE ones-matmul").
Buffer rule_buffer(const OperandRecord& o) {
  if (o.buffer == Buffer::kSbuf && !o.shape.empty() && o.shape[0] > 1 && !o.strides.empty() && o.strides[0] == 0)
    return Buffer::kPsum;
  return o.buffer;
}

bool same_operand(const OperandRecord& a, const OperandRecord& b) {
  return a.buffer == b.buffer && a.tensor == b.tensor && a.tensor_id == b.tensor_id && a.dtype == b.dtype &&
         a.shape == b.shape && a.strides == b.strides && a.offset == b.offset && a.start_partition == b.start_partition;
}

class Lowerer {
 public:
  Lowerer(const Trace& trace, const HardwareSpec& hw) : records_(trace.records()), hw_(hw) {}

  Result<CostProgram> run(int64_t dropped) {
    prog_.dropped_records = dropped;
    if (records_.empty())
      return fail("nkia_profile_empty", "the kernel executed no instruction: there is nothing to profile",
                  "check that the entry function issues NKI instructions (loads, compute, stores)");
    prog_.ops.reserve(records_.size());
    // The last record that reads each tensor (traces that know tensor identities).
    for (size_t i = 0; i < records_.size(); ++i)
      for (const OperandRecord& o : records_[i].operands)
        if (o.tensor_id != 0 && !o.is_write) last_read_[o.tensor_id] = i;
    for (size_t i = 0; i < records_.size(); ++i) {
      const InstructionRecord& r = records_[i];
      if (r.operands.empty()) continue;  // nothing to cost or order
      if (zeroes_accumulator(i)) {
        ++prog_.folded_psum_zeroing;
        continue;
      }
      // `t[...] += x` reaches the trace as the update in place and a copy of t onto itself.
      if (r.opcode() == Opcode::kTensorCopy && r.operands.size() >= 2 && r.operands[0].tensor_id != 0 &&
          same_operand(r.operands[0], r.operands[1])) {
        ++prog_.folded_copies;
        continue;
      }
      const OperandRecord* dst_override = nullptr;
      if (i + 1 < records_.size() && foldable(i)) {
        dst_override = &records_[i + 1].operands[0];
        ++prog_.folded_copies;
      }
      lower(static_cast<uint32_t>(i), dst_override);
      if (dst_override) ++i;  // the copy is gone
    }
    if (prog_.ops.empty())
      return fail("nkia_profile_empty", "the trace holds no instruction with operands: there is nothing to profile",
                  "check that the entry function issues NKI instructions (loads, compute, stores)");
    return std::move(prog_);
  }

 private:
  // A memset of a PSUM tile whose next use is a matmul accumulating into it: the compiler sets the
  // matmul's psum-zero flag instead (neuron-profile shows it as psum_zero= on the MATMUL).
  bool zeroes_accumulator(size_t i) {
    const InstructionRecord& r = records_[i];
    if (r.opcode() != Opcode::kMemset || r.operands.empty() || r.operands[0].buffer != Buffer::kPsum) return false;
    const Footprint fz = footprint(r.operands[0]);
    constexpr size_t kWindow = 64;
    for (size_t j = i + 1; j < records_.size() && j < i + 1 + kWindow; ++j) {
      const InstructionRecord& n = records_[j];
      for (size_t k = 0; k < n.operands.size(); ++k) {
        const OperandRecord& o = n.operands[k];
        if (o.buffer != Buffer::kPsum) continue;
        const Footprint fo = footprint(o);
        if (!footprints_overlap(fo, fz)) continue;
        // The first use: a matmul that writes the whole zeroed tile.
        return is_matmul(n) && k == 0 && footprint_covers(fo, fz);
      }
    }
    return false;
  }

  // Record i+1 copies exactly what record i wrote into an unnamed on-chip temporary that nothing
  // else reads before it is written again (looking a bounded way ahead).
  bool foldable(size_t i) {
    const InstructionRecord& p = records_[i];
    const InstructionRecord& c = records_[i + 1];
    if (c.opcode() != Opcode::kTensorCopy || c.operands.size() < 2 || p.operands.empty()) return false;
    const OperandRecord& tmp = p.operands[0];
    const OperandRecord& src = c.operands[1];
    const OperandRecord& dst = c.operands[0];
    if (!tmp.is_write || !buffer_is_on_chip(tmp.buffer) || !tmp.tensor.empty() || !same_operand(tmp, src)) return false;
    if (buffer_is_hbm(dst.buffer)) return false;
    // A DMA can only deliver into SBUF; a matmul only into PSUM.
    if (p.engine == Engine::kDma && dst.buffer != Buffer::kSbuf) return false;
    if (is_matmul(p) || p.opcode() == Opcode::kNcTranspose) return false;
    // The producer must not read its own temporary (then it was not fresh).
    for (size_t k = 1; k < p.operands.size(); ++k)
      if (same_operand(p.operands[k], tmp)) return false;
    // With tensor identities the answer is exact: the copy must be the temporary's last reader.
    if (tmp.tensor_id != 0) {
      auto it = last_read_.find(tmp.tensor_id);
      return it != last_read_.end() && it->second == i + 1;
    }
    Footprint ft = footprint(tmp);
    // The destination is indistinguishable from the temporary (same space, same elements): later
    // reads of either find the folded producer, as they should.
    Footprint fd = footprint(dst);
    if (fd.space == ft.space && fd.p0 == ft.p0 && fd.p1 == ft.p1 && fd.lo == ft.lo && fd.hi == ft.hi &&
        fd.rows == ft.rows && fd.pitch == ft.pitch && fd.run == ft.run)
      return true;
    constexpr size_t kWindow = 64;
    for (size_t j = i + 2; j < records_.size() && j < i + 2 + kWindow; ++j) {
      const InstructionRecord& r = records_[j];
      bool rewritten = false;
      for (const OperandRecord& o : r.operands) {
        if (o.buffer != tmp.buffer || o.tensor != tmp.tensor || o.dtype != tmp.dtype) continue;
        Footprint fo = footprint(o);
        if (fo.space != ft.space || !footprints_overlap(fo, ft)) continue;
        if (!o.is_write) return false;  // read again: not a pure temporary
        if (footprint_covers(fo, ft)) rewritten = true;
      }
      if (rewritten) return true;
    }
    return true;
  }

  uint32_t intern(const std::string& key) {
    auto [it, fresh] = spaces_.try_emplace(key, static_cast<uint32_t>(prog_.space_names.size()));
    if (fresh) prog_.space_names.push_back(key);
    return it->second;
  }

  Footprint footprint(const OperandRecord& o) {
    Footprint f;
    f.buffer = o.buffer;
    f.elem_bytes = dtype_size(o.dtype);
    if (buffer_is_on_chip(o.buffer)) {
      const int64_t pitch = o.strides.empty() ? 0 : o.strides[0];
      const int64_t parts = o.shape.empty() ? 1 : o.shape[0];
      f.p0 = static_cast<int32_t>(o.start_partition);
      f.p1 = static_cast<int32_t>(o.start_partition + std::max<int64_t>(parts, 0));
      // A tensor's identity when the trace has it; else (memory, name, dtype, partition pitch).
      f.space =
          o.tensor_id != 0
              ? intern(fmt::format("{}:#{}", buffer_name(o.buffer), o.tensor_id))
              : intern(fmt::format("{}:{}:{}:pitch{}", buffer_name(o.buffer), o.tensor, dtype_name(o.dtype), pitch));
      const int64_t base = o.offset - o.start_partition * pitch;
      pattern_of(o, 1, base, f);
    } else {
      // Named HBM tensors are told apart by name; unnamed ones by dtype and their largest stride.
      int64_t maxs = 0;
      for (size_t d = 0; d < o.strides.size(); ++d)
        if (d < o.shape.size() && o.shape[d] > 1) maxs = std::max<int64_t>(maxs, std::llabs(o.strides[d]));
      // Named HBM tensors (the kernel's arguments) by name, which holds across launches; the
      // kernel's own by identity.
      f.space = !o.tensor.empty()  ? intern(fmt::format("{}:{}", buffer_name(o.buffer), o.tensor))
                : o.tensor_id != 0 ? intern(fmt::format("{}:#{}", buffer_name(o.buffer), o.tensor_id))
                : o.tensor.empty()
                    ? intern(fmt::format("{}::{}:stride{}", buffer_name(o.buffer), dtype_name(o.dtype), maxs))
                    : intern(fmt::format("{}:{}", buffer_name(o.buffer), o.tensor));
      f.p0 = 0;
      f.p1 = 1;
      pattern_of(o, 0, o.offset, f);
    }
    return f;
  }

  const CostRule* find_rule(const InstructionRecord& r, const std::vector<const OperandRecord*>& ops, uint32_t& index) {
    for (size_t k = 0; k < hw_.rules.size(); ++k) {
      const CostRule& rule = hw_.rules[k];
      if (!rule.matches(r.engine, r.op)) continue;
      if (!rule.dtypes.empty()) {
        bool ok = true;
        for (const OperandRecord* o : ops)
          if (std::find(rule.dtypes.begin(), rule.dtypes.end(), o->dtype) == rule.dtypes.end()) ok = false;
        if (!ok) continue;
      }
      if (rule.all_sbuf) {
        bool all = true;
        for (const OperandRecord* o : ops) all = all && rule_buffer(*o) == Buffer::kSbuf;
        if (all != *rule.all_sbuf) continue;
      }
      if (rule.mixed_psum_sbuf_inputs) {
        bool psum = false, sbuf = false;
        for (size_t k2 = 1; k2 < ops.size(); ++k2) {
          psum = psum || rule_buffer(*ops[k2]) == Buffer::kPsum;
          sbuf = sbuf || rule_buffer(*ops[k2]) == Buffer::kSbuf;
        }
        if ((psum && sbuf) != *rule.mixed_psum_sbuf_inputs) continue;
      }
      if (rule.unit_stride) {
        bool unit = true;
        for (const OperandRecord* o : ops) unit = unit && minor_stride(*o) == 1;
        if (unit != *rule.unit_stride) continue;
      }
      index = static_cast<uint32_t>(k);
      return &rule;
    }
    return nullptr;
  }

  void cost_compute(const InstructionRecord& r, const std::vector<const OperandRecord*>& ops, CostOp& op) {
    const EngineSpec& eng = hw_.engine(r.engine);
    int64_t n = 0;
    bool strided = false;
    for (const OperandRecord* o : ops) {
      n = std::max(n, per_partition(*o));
      if (minor_stride(*o) * dtype_size(o->dtype) > eng.strided_threshold_bytes) strided = true;
    }
    uint32_t idx = kNoRule;
    const CostRule* rule = find_rule(r, ops, idx);
    double cycles;
    if (!rule) {
      prog_.unpriced[fmt::format("{}:{}", engine_name(r.engine), r.opcode_text())]++;
      cycles = std::max<double>(64, static_cast<double>(n));
    } else if (rule->model == CostRule::Model::kMatmul && ops.size() >= 3) {
      const double ns = static_cast<double>(op.stationary_free), nm = static_cast<double>(op.moving_free);
      cycles = std::max(std::min(rule->init, ns), nm);
      if (op.fp32_matmul) cycles *= rule->fp32_factor;
    } else if (rule->model == CostRule::Model::kPeTranspose && ops.size() >= 2) {
      const OperandRecord& src = *ops[1];
      const double p = src.shape.empty() ? 1.0 : static_cast<double>(src.shape[0]);
      const double f = static_cast<double>(per_partition(src));
      cycles = std::max(p, std::min(64.0, f));
      if (src.dtype == DType::kFloat32) cycles *= rule->fp32_factor;  // a transpose is a matmul: fp32 takes 4 passes
    } else {
      cycles = std::max(rule->min_cycles, rule->fixed + rule->per_element * static_cast<double>(n)) + rule->extra;
      if (strided) cycles *= eng.strided_factor;
    }
    op.access_cycles = eng.access_overhead_cycles * static_cast<double>(ops.size());
    cycles += op.access_cycles;
    op.rule = idx;
    op.cycles = cycles;
    op.duration_ns = cycles / eng.clock_ghz;
  }

  void cost_dma(const InstructionRecord& r, const OperandRecord& dst, const OperandRecord& src, CostOp& op) {
    const DmaSpec& d = hw_.dma;
    const bool src_hbm = buffer_is_hbm(src.buffer), dst_hbm = buffer_is_hbm(dst.buffer);
    op.queue = src_hbm && !dst_hbm   ? DmaQueue::kLoad
               : !src_hbm && dst_hbm ? DmaQueue::kStore
               : src_hbm             ? DmaQueue::kHbm
                                     : DmaQueue::kOnChip;
    const OperandRecord* chip = !dst_hbm ? &dst : !src_hbm ? &src : nullptr;
    const int64_t numel = std::max<int64_t>(1, numel_of(dst));
    const int64_t elem = std::max(dtype_size(src.dtype), dtype_size(dst.dtype));
    op.dma_bytes = std::max(src.bytes, dst.bytes);
    // DMA buffers are contiguous runs of each side: an HBM run goes on across partitions when the
    // rows touch (a [128, 512] tile of a [*, 512] tensor is one run), an on-chip run never does.
    const int64_t run_src = std::max<int64_t>(1, contiguous_run(src, src_hbm ? 0 : 1));
    const int64_t run_dst = std::max<int64_t>(1, contiguous_run(dst, dst_hbm ? 0 : 1));
    const int64_t run = std::min(run_src, run_dst);
    op.dma_descriptors = (numel + run - 1) / run;
    int64_t engines = d.engines, first = 0, parts = 0;
    if (chip && !chip->shape.empty()) {
      parts = std::max<int64_t>(1, chip->shape[0]);
      first = chip->start_partition / d.partitions_per_engine;
      const int64_t last = (chip->start_partition + parts - 1) / d.partitions_per_engine;
      first = std::min<int64_t>(first, d.engines - 1);
      engines = std::clamp<int64_t>(last - first + 1, 1, d.engines - first);
    }
    op.dma_partitions = parts;
    op.dma_first_engine = static_cast<uint16_t>(first);
    op.dma_engines = static_cast<uint16_t>(engines);
    // The busiest engine's share: its elements, and the buffers of each side they span (at least one).
    const int64_t per_engine = (numel + engines - 1) / engines;
    auto buffers = [&](int64_t side_run) { return std::max<int64_t>(1, (per_engine + side_run - 1) / side_run); };
    const int64_t per_engine_buffers = buffers(run_src) + buffers(run_dst);
    double bw = d.engine_bytes_per_ns();
    if (r.opcode() == Opcode::kDmaTranspose) bw *= d.transpose_efficiency;
    // dma_copy:add (dst_rmw_op) reads dst too
    const bool accumulates = r.opcode() == Opcode::kDmaCopy && r.op.sub[0] == AluOp(BinaryOp::kAdd);
    if (accumulates) bw *= d.compute_efficiency;
    // HBM runs at a pitch (a gather or a scatter) move slower the farther apart they are.
    if (d.gather_pitch_exponent > 0 && d.gather_pitch_ref_bytes > 0)
      for (const OperandRecord* side : {&src, &dst})
        if (buffer_is_hbm(side->buffer)) {
          const int64_t side_run = side == &src ? run_src : run_dst;
          if (side_run >= per_engine) continue;
          const int64_t pitch = run_pitch(*side) * dtype_size(side->dtype);
          if (pitch > d.gather_pitch_ref_bytes)
            op.dma_gather_factor *=
                std::pow(d.gather_pitch_ref_bytes / static_cast<double>(pitch), d.gather_pitch_exponent);
        }
    bw *= op.dma_gather_factor;
    // Runs shorter than a burst cost a burst.
    const int64_t runs = (per_engine + run - 1) / run;
    const int64_t moved = std::max(per_engine * elem, runs * d.min_descriptor_bytes);
    op.duration_ns = d.transfer_overhead_ns + static_cast<double>(per_engine_buffers) * d.descriptor_overhead_ns +
                     static_cast<double>(moved) / bw;
    if (src_hbm) op.hbm_read_bytes = src.bytes;
    if (dst_hbm) op.hbm_write_bytes = dst.bytes;
    if (dst_hbm && accumulates) op.hbm_read_bytes += dst.bytes;
  }

  void lower(uint32_t index, const OperandRecord* dst_override) {
    const InstructionRecord& r = records_[index];
    CostOp op;
    op.record = index;
    op.engine = r.engine;
    std::vector<const OperandRecord*> ops;
    for (const OperandRecord& o : r.operands) ops.push_back(&o);
    if (dst_override) ops[0] = dst_override;
    const OperandRecord& dst = *ops[0];
    op.matmul = r.engine == Engine::kTensor && is_matmul(r) && ops.size() >= 3;
    op.transpose = r.engine == Engine::kTensor && r.opcode() == Opcode::kNcTranspose && ops.size() >= 2;
    if (op.matmul) {
      const OperandRecord& st = *ops[1];
      const OperandRecord& mv = *ops[2];
      // Double row: [128, 2, M] x [128, 2, N] streams two rows of K per partition, K = 256.
      const int64_t rows = is_double_row(r) && st.shape.size() == 3 ? std::max<int64_t>(st.shape[1], 1) : 1;
      // MX: each x4 element holds 4 values of K, so K = 4 x partitions at the cycles of an ordinary
      // matmul of the same M and N: the 4x throughput of BF16 (nki-spec §6.2).
      const int64_t packed = r.opcode() == Opcode::kNcMatmulMx ? kPackedLanes : 1;
      op.contraction = (st.shape.empty() ? 1 : st.shape[0]) * rows * packed;
      op.stationary_free = per_partition(st) / rows;
      op.moving_free = per_partition(mv) / rows;
      op.fp32_matmul = st.dtype == DType::kFloat32 || mv.dtype == DType::kFloat32;
      op.flops = 2.0 * static_cast<double>(op.contraction) * static_cast<double>(op.stationary_free) *
                 static_cast<double>(op.moving_free);
    } else if (op.transpose) {
      const OperandRecord& src = *ops[1];
      const double p = src.shape.empty() ? 1.0 : static_cast<double>(src.shape[0]);
      op.contraction = static_cast<int64_t>(p);
      op.stationary_free = per_partition(src);
      op.moving_free = static_cast<int64_t>(p);
      op.flops = 2.0 * p * static_cast<double>(per_partition(src)) * p;
    }
    if (r.engine == Engine::kDma) {
      if (ops.size() >= 2)
        cost_dma(r, dst, *ops[1], op);
      else
        op.duration_ns = 0;
    } else {
      cost_compute(r, ops, op);
    }
    // Footprints and memory traffic: reads first, then the write(s).
    op.first_footprint = static_cast<uint32_t>(prog_.footprints.size());
    Footprint wf;
    bool have_write = false;
    for (size_t k = 0; k < ops.size(); ++k) {
      const OperandRecord& o = *ops[k];
      const bool write = k == 0 ? dst.is_write || dst_override : o.is_write;
      if (o.buffer == Buffer::kSbuf) (write ? op.sbuf_write_bytes : op.sbuf_read_bytes) += o.bytes;
      if (o.buffer == Buffer::kPsum) {
        (write ? op.psum_write_bytes : op.psum_read_bytes) += o.bytes;
        (write ? op.writes_psum : op.reads_psum) = true;
      }
      Footprint f = footprint(o);
      if (f.empty()) continue;
      if (write) {
        wf = f;
        have_write = true;
      } else {
        prog_.footprints.push_back(f);
        ++op.n_reads;
      }
    }
    if (have_write) {
      for (uint32_t k = op.first_footprint; k < op.first_footprint + op.n_reads; ++k)
        if (prog_.footprints[k].space == wf.space && footprints_overlap(prog_.footprints[k], wf)) op.rmw = true;
      prog_.footprints.push_back(wf);
      op.n_writes = 1;
    }
    // Concurrency groups (NCv2 shared SBUF/PSUM ports).
    for (size_t g = 0; g < hw_.concurrency.size(); ++g) {
      const ConcurrencyGroup& cg = hw_.concurrency[g];
      if (std::find(cg.engines.begin(), cg.engines.end(), r.engine) == cg.engines.end()) continue;
      for (const OperandRecord* o : ops)
        if (o->buffer == cg.memory) op.exclusive |= static_cast<uint8_t>(1u << g);
    }
    prog_.ops.push_back(op);
  }

  const std::vector<InstructionRecord>& records_;
  std::unordered_map<uint64_t, size_t> last_read_;  // tensor id -> the last record reading it
  const HardwareSpec& hw_;
  CostProgram prog_;
  std::unordered_map<std::string, uint32_t> spaces_;
};

// Whether row patterns a (rows x run at pitch) and the single run [s, s + len) share an element.
bool rows_hit_run(const Footprint& a, int64_t s, int64_t len) {
  if (a.pitch <= 0) return true;
  // Rows r with a.lo + r*pitch < s + len and a.lo + r*pitch + run > s.
  const int64_t p = a.pitch;
  auto floor_div = [](int64_t x, int64_t y) { return x >= 0 ? x / y : -((-x + y - 1) / y); };
  int64_t r_lo = floor_div(s - a.lo - a.run, p) + 1;  // first r with a.lo + r p + run > s
  int64_t r_hi = floor_div(s + len - 1 - a.lo, p);    // last r with a.lo + r p <= s + len - 1
  r_lo = std::max<int64_t>(r_lo, 0);
  r_hi = std::min<int64_t>(r_hi, a.rows - 1);
  return r_lo <= r_hi;
}

}  // namespace

bool footprints_overlap(const Footprint& a, const Footprint& b) {
  if (a.space != b.space) return false;
  if (a.p1 <= b.p0 || b.p1 <= a.p0) return false;
  if (a.hi <= b.lo || b.hi <= a.lo) return false;
  if (a.rows == 0 || b.rows == 0) return true;
  if (a.rows == 1) return rows_hit_run(b, a.lo, a.run);
  if (b.rows == 1) return rows_hit_run(a, b.lo, b.run);
  if (a.pitch != b.pitch || a.run > a.pitch || b.run > b.pitch) return true;
  // Same pitch: rows and columns of one grid.
  auto floor_div = [](int64_t x, int64_t y) { return x >= 0 ? x / y : -((-x + y - 1) / y); };
  const int64_t p = a.pitch;
  const int64_t ra = floor_div(a.lo, p), ca = a.lo - ra * p;
  const int64_t rb = floor_div(b.lo, p), cb = b.lo - rb * p;
  if (ca + a.run > p || cb + b.run > p) return true;  // runs wrap a row: stay conservative
  if (ra + a.rows <= rb || rb + b.rows <= ra) return false;
  return ca < cb + b.run && cb < ca + a.run;
}

bool footprint_covers(const Footprint& a, const Footprint& b) {
  if (a.space != b.space || a.p0 > b.p0 || a.p1 < b.p1) return false;
  if (a.rows == 1) return a.lo <= b.lo && b.hi <= a.hi;  // a is one contiguous run
  if (a.rows > 1 && b.rows >= 1 && a.pitch == b.pitch && a.run == b.run && a.lo == b.lo && a.rows >= b.rows)
    return true;
  return false;
}

std::string_view dma_queue_name(DmaQueue q) {
  switch (q) {
    case DmaQueue::kLoad: return "qLoad";
    case DmaQueue::kStore: return "qStore";
    case DmaQueue::kOnChip: return "qOnChip";
    case DmaQueue::kHbm: return "qHbm";
  }
  return "q?";
}

Result<CostProgram> lower_trace(const Trace& trace, const HardwareSpec& hw) {
  return Lowerer(trace, hw).run(trace.dropped());
}

}  // namespace nki_agent
