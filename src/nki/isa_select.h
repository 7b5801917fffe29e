// nki/isa_select.h — the Vector and GpSimd instructions that search, select and move data between
// partitions: max8, nc_find_index8, nc_match_replace8, nc_stream_shuffle, range_select,
// select_reduce, tensor_copy_predicated, tensor_partition_reduce, local_gather and sequence_bounds
// (nki-spec §4.4, §4.5).
//
// Like the rest of the instruction core (nki/isa.h) each call validates its operands, appends
// its InstructionRecord to the trace, and computes unless the context is timing-only. Values are
// compared and selected as float32, as the engines do, and rounded once into the destination.
#pragma once

#include <array>
#include <optional>
#include <vector>

#include "nki/isa.h"

namespace nki_agent {

// dst[P, 8] = the 8 largest values of each partition of src (all its free elements), descending.
// 8 <= free elements <= 16384.
Result<void> isa_max8(ExecContext& ctx, const Access& dst, const Access& src, const SourceLoc& loc);

// dst[P, 8] (uint32 or uint16) = for each of the 8 values vals[p, :], the index of its first
// occurrence in data[p] (flattened free axes); a value repeated in vals (max8's ties) takes its
// successive occurrences in ascending order, as nc_match_replace8's documentation describes this
// instruction. A value that does not occur gives the all-ones index (the documented sentinel).
Result<void> isa_find_index8(ExecContext& ctx, const Access& dst, const Access& data, const Access& vals,
                             const SourceLoc& loc);

// dst = data with the first occurrence of each of the 8 values vals[p, :] replaced by `imm`; their
// indices go to dst_idx ([P, 8], integer) when given. The values are taken from the last to the
// first, so a value repeated in vals replaces successive occurrences with its highest slot holding
// the earliest (data [1, 2, 3, 4, 8 x 7], vals [3, 8 x 7] -> dst_idx [2, 10, 9, 8, 7, 6, 5, 4]).
Result<void> isa_match_replace8(ExecContext& ctx, const Access& dst, const Access& data, const Access& vals, double imm,
                                const std::optional<Access>& dst_idx, const SourceLoc& loc);

// Within each 32-partition quadrant q: dst partition q*32+i = src partition q*32+mask[i], or left
// unchanged where mask[i] is 255. Same dtype and elements per partition.
Result<void> isa_stream_shuffle(ExecContext& ctx, const Access& dst, const Access& src,
                                const std::vector<int64_t>& mask, const SourceLoc& loc);

// dst = on_true where cmp0(idx, bound0) and cmp1(idx, bound1), else on_false_value, with idx =
// range_start + the element's free index and the bounds [P, 1] tiles; reduce_res[P, 1], when given,
// gets the row maximum of the float32 selection (before dst's downcast).
Result<void> isa_range_select(ExecContext& ctx, const Access& dst, const Access& on_true, BinaryOp cmp0, BinaryOp cmp1,
                              const Access& bound0, const Access& bound1, double range_start, double on_false_value,
                              const std::optional<Access>& reduce_res, const SourceLoc& loc);

// dst = predicate != 0 (== 0 with reverse) ? on_true : on_false, on_false a number or a [P, 1]
// tile; reduce_res[P, 1], when given, gets the row maximum of the float32 selection.
Result<void> isa_select_reduce(ExecContext& ctx, const Access& dst, const Access& predicate, const Access& on_true,
                               double on_false_value, const std::optional<Access>& on_false_tile, bool reverse,
                               const std::optional<Access>& reduce_res, const SourceLoc& loc);

// Where predicate != 0 (== 0 with reverse), dst = src (a tile, or the number `value` when src is
// absent); elsewhere dst keeps its contents.
Result<void> isa_copy_predicated(ExecContext& ctx, const Access& dst, const std::optional<Access>& src, double value,
                                 const Access& predicate, bool reverse, const SourceLoc& loc);

// dst[1, F...] = the reduction of data[P, F...] across its partitions (add, max, min, bitwise
// and/or), on the GpSimd engine.
Result<void> isa_partition_reduce(ExecContext& ctx, const Access& dst, BinaryOp op, const Access& data,
                                  const SourceLoc& loc);

// dst[p, ...] = data[p].flat[indices[p].flat[k]] for each k, reshaped to dst's (= indices') shape:
// a gather within each partition. indices are uint32 (or int32); an index past a partition's
// elements is nkia_indirect_index_out_of_bounds (the hardware would return garbage).
Result<void> isa_gather_flattened(ExecContext& ctx, const Access& dst, const Access& data, const Access& indices,
                                  const SourceLoc& loc);

// nisa.local_gather on the GpSimd engine: each 16-partition group of src gathers, per partition,
// num_elem_per_idx (k) contiguous free elements at each of the group's indices. The group's
// indices are its 16 rows of the uint16 `index` tile read partition first (column by column) and cut
// to num_valid_indices (n; default all of them); an index is an element offset into the partition's
// flattened free elements. dst[p] = the n * k gathered elements in order (same dtype as src, no
// conversion). src and index span the same multiple of 16 partitions; k is 1, 2, 4, 8, 16 or 32;
// n <= 4096. An element past the partition's end is nkia_indirect_index_out_of_bounds (undefined on
// the hardware).
Result<void> isa_local_gather(ExecContext& ctx, const Access& dst, const Access& src, const Access& index,
                              int64_t num_elem_per_idx, std::optional<int64_t> num_valid_indices, const SourceLoc& loc);

// nisa.sequence_bounds on the GpSimd engine: for a [1, F] tile of segment ids (float32 or int32, 0
// = padding), dst[1, 2, F] holds each element's segment bounds: row 0 the index where its run of
// equal ids starts, row 1 the index past its end; a padding element gets start F and end -1. dst is
// float32 or int32; one partition only.
Result<void> isa_sequence_bounds(ExecContext& ctx, const Access& dst, const Access& segment_ids, const SourceLoc& loc);

// nisa.nonzero_with_count on the GpSimd engine (NeuronCore-v3 and later): each of the eight GpSimd
// cores works on its first partition only (partitions 0, 16, ..., 112 of the tile): for src[p, 0:T]
// it writes dst[p, 0:T + 1] = the positions i of the nonzero elements, plus index_offset, in
// ascending order, then padding_val up to T, then the count N of nonzero elements. The other
// partitions of dst keep their values. src is float32 or int32 (a NaN counts as nonzero), dst int32
// or uint32 with one more element per partition than src and the same partitions.
Result<void> isa_nonzero_with_count(ExecContext& ctx, const Access& dst, const Access& src, int64_t index_offset,
                                    int64_t padding_val, const SourceLoc& loc);

// An indirect DMA over the rows (axis 0) of an HBM tensor: gather (dst[p] = src_rows[index[p]])
// or scatter (dst_rows[index[p]] = src[p]). `rows` is the HBM side with its axis 0 whole; `index`
// an int32/uint32 SBUF tile with one row number per partition. Out-of-range rows are
// nkia_indirect_index_out_of_bounds, or skipped with `skip_oob` (oob_mode.skip). With `rmw` (nl.add
// only, dst_rmw_op=) the destination accumulates: each row is dst + src in float32, rounded once into
// dst's type, partition after partition, so rows named twice add both.
Result<void> isa_dma_indirect(ExecContext& ctx, const Access& tile, const Access& rows, const Access& index,
                              bool gather, bool skip_oob, const SourceLoc& loc,
                              std::optional<BinaryOp> rmw = std::nullopt);

// A DMA gather-transpose (nisa.dma_transpose of t.ap(..., vector_offset=index)): the R rows of E
// elements that `index` names, read from `rows` (an HBM [rows, E] view), land transposed in dst, an
// SBUF [E, R] tile: dst[e, r] = rows[index_flat[r], e]. `index` is an int32/uint32 SBUF tile [R, 1],
// or [128, N] with R = 128 * N read column by column (index_flat = index.T.flatten(), as the DMA
// engines do). Out-of-range rows as isa_dma_indirect.
Result<void> isa_dma_transpose_gather(ExecContext& ctx, const Access& dst, const Access& rows, const Access& index,
                                      bool skip_oob, const SourceLoc& loc);

}  // namespace nki_agent
