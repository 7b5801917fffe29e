#include "nki/placement.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "nki/checks.h"

namespace nki_agent {

struct AllocationTracker::Info {
  std::string name;  // "'k_loaded' (allocated at line 12)"
  int64_t nblocks = 1;
};

namespace {

std::string at_line(const SourceLoc& loc) {
  return loc.line > 0 ? fmt::format("line {}", loc.line) : "the kernel";
}

std::string label(const NkiTensor& t) {
  return t.name.empty() ? "a tensor" : fmt::format("'{}'", t.name);
}

std::string tile_desc(const NkiTensor& t) {
  return fmt::format("{} {} ({}, {})", label(t), shape_str(t.data.shape()), buffer_name(t.buffer),
                     dtype_name(t.data.dtype()));
}

int64_t block_count(const NkiTensor& t) {
  int64_t n = 1;
  for (int i = 0; i < t.blocks && i < t.data.ndim(); ++i) n *= t.data.shape()[static_cast<size_t>(i)];
  return n;
}

Diagnostic mixed(std::string message) {
  return nki_error("nkia_direct_allocation_mixed", std::move(message),
                   "place every on-chip tensor of this kernel yourself: create it with nl.ndarray(..., "
                   "buffer=ncc.sbuf.mod_alloc(base_addr=<free byte offset>)) (ncc.psum.mod_alloc(base_bank=<bank>) "
                   "for PSUM) and assign results into it, t[...] = nl.exp(x); or drop direct allocation from the "
                   "whole kernel (nl.sbuf / nl.psum everywhere)");
}

}  // namespace

Result<void> AllocationTracker::on_create(const ExecContext& ctx, const std::shared_ptr<NkiTensor>& t,
                                          TensorOrigin origin, const Placement* placement, bool check,
                                          const SourceLoc& loc) {
  const bool on_chip = buffer_is_on_chip(t->buffer);
  if (placement && placement->direct) {
    if (!direct_) {
      if (first_auto_)
        return fail(mixed(fmt::format(
            "{} is placed by the kernel (direct allocation), but {} at {} was allocated by the compiler: a kernel "
            "either places all of its SBUF/PSUM tensors or none",
            tile_desc(*t), first_auto_->second, at_line(first_auto_->first))));
      if (first_hbm_)
        return fail(nki_error("nkia_direct_allocation_internal_hbm",
                              fmt::format("{} makes this a direct-allocation kernel, whose HBM tensors can only be "
                                          "its inputs, outputs and constants, but it created {} at {}",
                                          tile_desc(*t), first_hbm_->second, at_line(first_hbm_->first)),
                              "keep intermediate data on chip in placed SBUF tensors, or make the HBM tensor an "
                              "output (buffer=nl.shared_hbm, returned by the kernel)"));
      direct_ = true;
      first_direct_loc_ = loc;
    }
  } else if (on_chip && !placement && origin != TensorOrigin::kScratch) {
    if (direct_ && origin == TensorOrigin::kExplicit)
      return fail(
          mixed(fmt::format("{} is allocated by the compiler (buffer=nl.{}), but this kernel places its "
                            "on-chip tensors itself (direct allocation since {}): auto- and "
                            "direct-allocated tensors cannot be mixed",
                            tile_desc(*t), buffer_name(t->buffer), at_line(first_direct_loc_))));
    if (direct_) {
      implicit_[t.get()] = Implicit{t, loc};
      if (implicit_.size() + placed_.size() > sweep_at_) sweep();
    } else if (!first_auto_) {
      first_auto_ = std::make_pair(loc, tile_desc(*t));
    }
  } else if (t->buffer == Buffer::kPrivateHbm) {
    if (direct_)
      return fail(nki_error("nkia_direct_allocation_internal_hbm",
                            fmt::format("{} is an HBM tensor that is neither an input, an output nor a constant; "
                                        "direct-allocation kernels (direct allocation since {}) cannot have one",
                                        tile_desc(*t), at_line(first_direct_loc_)),
                            "keep intermediate data on chip in placed SBUF tensors, or make it an output "
                            "(buffer=nl.shared_hbm, returned by the kernel)"));
    if (!first_hbm_) first_hbm_ = std::make_pair(loc, tile_desc(*t));
  }
  if (!placement || placement->tiles.empty() || !on_chip) return {};

  const int blocks = std::clamp(t->blocks, 0, t->data.ndim() - 1);
  const int64_t partitions = t->data.ndim() > 0 ? t->data.shape()[static_cast<size_t>(blocks)] : 0;
  const int64_t nblocks = block_count(*t);
  const int64_t block_elems = nblocks > 0 ? t->data.numel() / nblocks : 0;
  const int64_t tile_bytes = partitions > 0 ? block_elems / partitions * t->data.itemsize() : 0;
  if (check)
    if (auto r = check_places(ctx, *t, *placement, partitions, tile_bytes); !r) return r;
  if (partitions <= 0 || tile_bytes <= 0 || nblocks <= 0) return {};

  Placed p;
  p.tensor = t;
  p.id = next_id_++;
  p.nblocks = static_cast<int>(nblocks);
  p.block_elems = block_elems;
  auto info = std::make_shared<Info>();
  info->name = fmt::format("{} (allocated at {})", label(*t), at_line(loc));
  info->nblocks = nblocks;
  p.info = std::move(info);
  p.first.assign(static_cast<size_t>(nblocks), -1);
  p.slot.assign(static_cast<size_t>(nblocks), -1);
  for (int64_t b = 0; b < nblocks; ++b) {
    const TilePlace& tp = placement->tiles[static_cast<size_t>(b) % placement->tiles.size()];
    const int64_t byte0 = tp.bank >= 0 ? tp.bank * ctx.target->psum_bank_bytes + tp.byte_offset : tp.byte_offset;
    p.slot[static_cast<size_t>(b)] =
        slot_of(t->buffer, tp.start_partition, tp.start_partition + partitions, byte0, byte0 + tile_bytes);
  }
  placed_[t.get()] = std::move(p);
  if (implicit_.size() + placed_.size() > sweep_at_) sweep();
  return {};
}

Result<void> AllocationTracker::check_places(const ExecContext& ctx, const NkiTensor& t, const Placement& p,
                                             int64_t partitions, int64_t tile_bytes) const {
  const TargetSpec& tg = *ctx.target;
  const bool psum = t.buffer == Buffer::kPsum;
  std::set<std::tuple<int64_t, int64_t, int64_t>> seen;
  auto out_of_range = [&](std::string what, std::string hint) {
    return fail(
        nki_error("nkia_allocation_out_of_range", fmt::format("{} is placed {}", tile_desc(t), what), std::move(hint)));
  };
  for (const TilePlace& tp : p.tiles) {
    if (!seen.insert({tp.bank, tp.start_partition, tp.byte_offset}).second) continue;
    const int64_t sp = tp.start_partition, off = tp.byte_offset;
    if (sp < 0 || sp + partitions > tg.partitions)
      return out_of_range(fmt::format("on partitions [{}, {}), past the {} partitions of {}", sp, sp + partitions,
                                      tg.partitions, psum ? "PSUM" : "SBUF"),
                          "start the tile at partition 0 (base_partition / the allocator's start partition), or "
                          "give it fewer partitions");
    if (partitions > 0 && sp % (partitions > 64 ? 128 : partitions > 32 ? 64 : 32) != 0)
      return fail(nki_error("nkia_partition_start_alignment",
                            fmt::format("{} is placed at partition {}, but a tile of {} partitions starts at {}",
                                        tile_desc(t), sp, partitions,
                                        partitions > 64   ? "partition 0"
                                        : partitions > 32 ? "partition 0 or 64"
                                                          : "partition 0, 32, 64 or 96"),
                            "start tiles of more than 64 partitions at 0, of 33-64 at 0 or 64, of up to 32 at a "
                            "multiple of 32"));
    if (!psum) {
      if (off < 0 || off + tile_bytes > tg.sbuf_bytes_per_partition)
        return out_of_range(fmt::format("at bytes [{}, {}) of each partition, past the {} usable SBUF bytes per "
                                        "partition of {} ({})",
                                        off, off + tile_bytes, tg.sbuf_bytes_per_partition, tg.name, tg.core),
                            fmt::format("keep base_addr + tile bytes x num_free_tiles within {} "
                                        "(nl.tile_size.total_available_sbuf_size): shrink the tiles, use fewer "
                                        "buffers, or reuse the bytes of tiles that are no longer live",
                                        tg.sbuf_bytes_per_partition));
      continue;
    }
    if (tp.bank >= 0) {  // legacy: a bank and a byte within it
      if (tp.bank >= tg.psum_banks)
        return out_of_range(
            fmt::format("in PSUM bank {}, but PSUM has {} banks (0 to {})", tp.bank, tg.psum_banks, tg.psum_banks - 1),
            "use base_bank (and base_bank + num_bank_tiles - 1) between 0 and 7");
      if (off < 0 || off + tile_bytes > tg.psum_bank_bytes)
        return out_of_range(fmt::format("at bytes [{}, {}) of PSUM bank {}, past the bank's {} bytes: a PSUM tile "
                                        "lies within one bank",
                                        off, off + tile_bytes, tp.bank, tg.psum_bank_bytes),
                            "keep each PSUM tile within 2 KiB per partition (512 float32) starting at base_addr 0 of "
                            "its bank, and give further tiles banks of their own (num_bank_tiles)");
      if (off % tg.psum_min_align != 0)
        return fail(nki_error("nkia_allocation_misaligned",
                              fmt::format("{} is placed at byte {} of PSUM bank {}, which is not a multiple of {} "
                                          "(nl.tile_size.psum_min_align)",
                                          tile_desc(t), off, tp.bank, tg.psum_min_align),
                              fmt::format("place PSUM tiles at a multiple of {} bytes within their bank (base_addr=0 "
                                          "normally)",
                                          tg.psum_min_align)));
    } else {  // current dialect: a byte offset within the partition's PSUM
      if (off < 0 || off + tile_bytes > tg.psum_bytes_per_partition)
        return out_of_range(fmt::format("at bytes [{}, {}) of PSUM, past its {} bytes per partition", off,
                                        off + tile_bytes, tg.psum_bytes_per_partition),
                            "give address=(partition, bank * 2048) with a bank from 0 to 7, and a tile that ends "
                            "within PSUM");
      if (off % tg.psum_bank_bytes != 0)
        return fail(nki_error("nkia_allocation_misaligned",
                              fmt::format("{} is placed at PSUM byte {}, which is not on a bank boundary (a multiple "
                                          "of {})",
                                          tile_desc(t), off, tg.psum_bank_bytes),
                              "give PSUM tensors address=(partition, bank * 2048)"));
    }
  }
  return {};
}

int AllocationTracker::slot_of(Buffer memory, int64_t p0, int64_t p1, int64_t b0, int64_t b1) {
  const auto key = std::make_tuple(static_cast<int>(memory), p0, p1, b0, b1);
  if (auto it = slot_index_.find(key); it != slot_index_.end()) return it->second;
  constexpr size_t kMaxSlots = 1 << 16;  // past it, new places are not tracked
  if (slots_.size() >= kMaxSlots) return -1;
  const int id = static_cast<int>(slots_.size());
  Slot s;
  s.memory = memory;
  s.p0 = p0, s.p1 = p1, s.b0 = b0, s.b1 = b1;
  s.overlaps.push_back(id);
  for (size_t i = 0; i < slots_.size(); ++i) {
    Slot& o = slots_[i];
    if (o.memory == memory && p0 < o.p1 && o.p0 < p1 && b0 < o.b1 && o.b0 < b1) {
      o.overlaps.push_back(id);
      s.overlaps.push_back(static_cast<int>(i));
    }
  }
  slots_.push_back(std::move(s));
  slot_index_.emplace(key, id);
  return id;
}

void AllocationTracker::sweep() {
  std::erase_if(placed_, [](const auto& kv) { return kv.second.tensor.expired(); });
  std::erase_if(implicit_, [](const auto& kv) { return kv.second.tensor.expired(); });
  sweep_at_ = std::max<size_t>(1024, 2 * (placed_.size() + implicit_.size()));
}

void AllocationTracker::mark_result(const std::shared_ptr<NkiTensor>& t, const SourceLoc& loc) {
  if (!buffer_is_on_chip(t->buffer)) return;
  if (direct_)
    implicit_[t.get()] = Implicit{t, loc};
  else if (!first_auto_)
    first_auto_ = std::make_pair(loc, tile_desc(*t));
}

Result<void> AllocationTracker::on_access(const Access& a, bool write, bool assigned, int64_t now) {
  if (placed_.empty() && implicit_.empty()) return {};
  const NkiTensor* key = a.tensor.get();
  if (direct_ && !write && !assigned) {
    if (auto it = implicit_.find(key); it != implicit_.end()) {
      if (it->second.tensor.lock().get() == key) {
        Diagnostic d = mixed(fmt::format(
            "{} created here is allocated by the compiler and then read by another instruction, but this kernel "
            "places its on-chip tensors itself (direct allocation since {}): the result of an nl / nisa call must "
            "be assigned into a placed tensor (t[...] = ...) before anything uses it",
            tile_desc(*a.tensor), at_line(first_direct_loc_)));
        d.loc = it->second.loc;
        return fail(std::move(d));
      }
      implicit_.erase(it);
    }
  }
  auto it = placed_.find(key);
  if (it == placed_.end()) return {};
  Placed& p = it->second;
  if (p.tensor.lock().get() != key) {  // a dead tensor's entry, its address reused
    placed_.erase(it);
    return {};
  }
  // The logical blocks the view touches (all of them in between, for a view across blocks), and
  // whether it covers one block whole.
  int64_t b_lo = 0, b_hi = 0;
  bool whole_block = false;
  {
    const Tensor& v = a.view;
    const Tensor& d = a.tensor->data;
    if (v.numel() == 0) return {};
    const int64_t block_bytes = std::max<int64_t>(1, p.block_elems * d.itemsize());
    if (p.nblocks > 1) {
      int64_t lo = v.offset() * v.itemsize() - d.offset() * d.itemsize(), hi = lo;
      for (int i = 0; i < v.ndim(); ++i) {
        const int64_t n = v.shape()[static_cast<size_t>(i)], s = v.strides()[static_cast<size_t>(i)] * v.itemsize();
        if (n > 1) (s > 0 ? hi : lo) += s * (n - 1);
      }
      b_lo = std::clamp<int64_t>(lo / block_bytes, 0, p.nblocks - 1);
      b_hi = std::clamp<int64_t>(hi / block_bytes, 0, p.nblocks - 1);
    }
    whole_block = b_lo == b_hi && v.numel() * v.itemsize() == block_bytes;
  }
  for (int64_t b = b_lo; b <= b_hi; ++b) {
    const int s = p.slot[static_cast<size_t>(b)];
    if (s < 0) continue;
    int64_t& first = p.first[static_cast<size_t>(b)];
    if (first < 0) first = now;
    // The instruction that overwrote the block whole also reads it: the conflict stands.
    if (!write && p.reset_block == b && p.reset_at == now) return fail(p.reset_conflict);
    for (int s2 : slots_[static_cast<size_t>(s)].overlaps) {
      const Slot& o = slots_[static_cast<size_t>(s2)];
      const bool mine = o.cur_tensor == p.id && o.cur_block == b;
      const int64_t other_last = mine ? o.prev_last : o.cur_last;
      if (other_last <= first) continue;
      const auto& other = mine ? o.prev_info : o.cur_info;
      const int64_t other_block = mine ? o.prev_block : o.cur_block;
      const Slot& ms = slots_[static_cast<size_t>(s)];
      const std::string me = p.nblocks > 1 ? fmt::format("block {} of {}", b, p.info->name) : p.info->name;
      const std::string them = !other               ? std::string("another tile")
                               : other->nblocks > 1 ? fmt::format("block {} of {}", other_block, other->name)
                                                    : other->name;
      Diagnostic d = nki_error(
          "nkia_allocation_overlap",
          fmt::format("{} ({} partitions [{}, {}), bytes [{}, {})) is used here while it holds data, but {}, placed "
                      "over the same bytes ({} partitions [{}, {}), bytes [{}, {})), was used after it was first "
                      "accessed: on the device one overwrote the other",
                      me, buffer_name(ms.memory), ms.p0, ms.p1, ms.b0, ms.b1, them, buffer_name(o.memory), o.p0, o.p1,
                      o.b0, o.b1),
          "give tiles that are live at the same time disjoint addresses (an allocation covers base_addr up to "
          "base_addr + tile bytes x num_free_tiles), or give a rotating allocation more physical tiles "
          "(num_free_tiles / num_bank_tiles) than the blocks it keeps live at once");
      // An SBUF block written whole starts over: what it held before is dead (a PSUM destination
      // may be accumulated into, so it does not). If the same instruction reads it, the conflict stands.
      if (write && whole_block && ms.memory == Buffer::kSbuf) {
        first = now;
        p.reset_block = b;
        p.reset_at = now;
        p.reset_conflict = std::move(d);
        break;
      }
      return fail(std::move(d));
    }
    Slot& ms = slots_[static_cast<size_t>(s)];
    if (ms.cur_tensor == p.id && ms.cur_block == b) {
      ms.cur_last = now;
    } else {
      ms.prev_block = ms.cur_block;
      ms.prev_last = ms.cur_last;
      ms.prev_info = ms.cur_info;
      ms.cur_tensor = p.id;
      ms.cur_block = b;
      ms.cur_last = now;
      ms.cur_info = p.info;
    }
  }
  return {};
}

}  // namespace nki_agent
