#include "nki/views.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "nki/aliases.h"
#include "nki/checks.h"

namespace nki_agent {

Result<Tensor> index_view(const Tensor& base, std::span<const IndexItem> key, const std::string& what) {
  using Kind = IndexItem::Kind;
  int consumed = 0, ellipses = 0;
  for (const IndexItem& it : key) {
    if (it.kind == Kind::kEllipsis)
      ++ellipses;
    else if (it.kind != Kind::kNewAxis)
      ++consumed;
  }
  if (ellipses > 1)
    return fail(nki_error("nkia_bad_index", "an index may hold only one '...'", "remove the extra '...'"));
  if (consumed > base.ndim())
    return fail(nki_error("err_tensor_access_out_of_bound",
                          fmt::format("{} has {} dimensions but is indexed with {}", what, base.ndim(), consumed),
                          "index each dimension at most once"));
  Tensor v = base;
  int axis = 0;  // the next axis of v to index
  for (const IndexItem& it : key) {
    switch (it.kind) {
      case Kind::kEllipsis:
        axis += base.ndim() - consumed;  // '...' keeps the axes the other items do not name
        break;
      case Kind::kNewAxis: v = v.expand_dims(axis++); break;
      case Kind::kSlice: {
        const Slice& s = it.slice;
        const int64_t n = v.shape()[static_cast<size_t>(axis)];
        // A static slice beyond the dimension is an out-of-bound access, not a silent clip.
        if (s.step > 0 && s.stop != Slice::kNone && s.stop > n)
          return fail(nki_error("err_tensor_access_out_of_bound",
                                fmt::format("out-of-bound access for {} on dimension {}: index range [{}, {}] exceeds "
                                            "dimension size of {}",
                                            what, axis, s.start == Slice::kNone ? 0 : s.start, s.stop - 1, n),
                                "shrink the slice, or handle the ragged last tile with a smaller tile or a mask"));
        if (s.step == 0)
          return fail(nki_error("nkia_bad_index", "slice step cannot be zero", "use a step of 1 or more"));
        v = v.slice(axis++, s);
        break;
      }
      case Kind::kIndex: {
        const int64_t i = it.index;
        const int64_t n = v.shape()[static_cast<size_t>(axis)];
        if (i < -n || i >= n)
          return fail(
              nki_error("err_tensor_access_out_of_bound",
                        fmt::format("out-of-bound access for {} on dimension {}: index {} exceeds dimension size of {}",
                                    what, axis, i, n),
                        "index within the tensor's shape"));
        v = v.select(axis, i);
        break;
      }
      case Kind::kOther:
        return fail(nki_error("nkia_bad_index", fmt::format("cannot index {} with a {}", what, it.type_name),
                              "index with integers, slices (or nl.ds(start, size)) and '...'"));
    }
  }
  return v;
}

Result<Tensor> affine_index(const Tensor& base, const std::vector<AffineDim>& dims, const std::vector<int64_t>& space,
                            const std::string& what) {
  if (dims.size() > static_cast<size_t>(base.ndim()))
    return fail(nki_error("err_tensor_access_out_of_bound",
                          fmt::format("{} has {} dimensions but is indexed with {}", what, base.ndim(), dims.size()),
                          "index each dimension at most once"));
  Shape shape(space.begin(), space.end());
  Strides strides(shape.size(), 0);
  int64_t offset = base.offset();
  for (size_t d = 0; d < dims.size(); ++d) {
    const auto& [constant, terms] = dims[d];
    const int64_t stride = base.strides()[d];
    int64_t lo = constant, hi = constant;
    for (const auto& [axis, coef] : terms) {
      if (axis < 0 || axis >= static_cast<int64_t>(shape.size()))
        return fail(nki_error("nkia_bad_index", "an index tile refers to an axis the index space lacks",
                              "reshape index tiles with [:, None] or [None, :]"));
      const int64_t span = coef * (shape[static_cast<size_t>(axis)] - 1);
      lo += std::min<int64_t>(0, span);
      hi += std::max<int64_t>(0, span);
      strides[static_cast<size_t>(axis)] += coef * stride;
    }
    const int64_t n = base.shape()[d];
    if (lo < 0 || hi >= n)
      return fail(nki_error("err_tensor_access_out_of_bound",
                            fmt::format("out-of-bound access for {} on dimension {}: index range [{}, {}] exceeds "
                                        "dimension size of {}",
                                        what, d, lo, hi, n),
                            "shrink the index range, or cover the ragged last tile with a mask"));
    offset += constant * stride;
  }
  for (size_t d = dims.size(); d < static_cast<size_t>(base.ndim()); ++d) {
    shape.push_back(base.shape()[d]);
    strides.push_back(base.strides()[d]);
  }
  return Tensor(base.storage(), base.dtype(), shape, strides, offset);
}

std::string tensor_label(const Access& a) {
  return a.tensor->name.empty() ? "tensor" : a.tensor->name;
}

namespace {

// Whether every element of an on-chip view lies in one partition (`t[0, :]`, a row): such a view
// may take a leading partition dimension of 1, whatever its rank.
bool within_one_partition(const Access& a) {
  const int64_t row = a.partition_stride();
  if (row <= 0 || a.view.numel() == 0) return false;
  int64_t lo = a.view.offset();
  int64_t hi = lo;
  for (int64_t d = 0; d < a.view.ndim(); ++d) {
    const int64_t span = a.view.strides()[static_cast<size_t>(d)] * (a.view.shape()[static_cast<size_t>(d)] - 1);
    (span < 0 ? lo : hi) += span;
  }
  const int64_t base = a.tensor->data.offset();
  return (lo - base) / row == (hi - base) / row;
}

}  // namespace

Result<Access> reshape_view(const Access& a, const Shape& shape) {
  Tensor v;
  try {
    v = a.view.reshape(shape);
  } catch (const std::invalid_argument& e) {
    return fail(nki_error("nkia_bad_shape", fmt::format("cannot reshape {}: {}", tensor_label(a), e.what()),
                          "reshape to a shape with the same number of elements"));
  }
  if (v.storage() != a.view.storage())
    return fail(nki_error("nkia_bad_shape",
                          fmt::format("reshaping {} from {} to {} needs a copy; a reshaped tensor must be a view",
                                      tensor_label(a), shape_str(a.view.shape()), shape_str(v.shape())),
                          "reshape the whole (contiguous) tensor, or copy the data into a tensor of the new shape"));
  if (buffer_is_on_chip(a.buffer()) && (v.ndim() == 0 || a.view.ndim() == 0 || v.shape()[0] != a.view.shape()[0]) &&
      !(v.ndim() >= 1 && v.shape()[0] == 1 && within_one_partition(a)))
    return fail(
        nki_error("nkia_bad_shape",
                  fmt::format("reshaping {} from {} to {} changes its partition dimension", tensor_label(a),
                              shape_str(a.view.shape()), shape_str(v.shape())),
                  "keep dimension 0 (the partitions) of an SBUF/PSUM tensor; reshape only the free dimensions"));
  return Access{a.tensor, v};
}

Result<Access> broadcast_view(const Access& a, const Shape& shape) {
  try {
    return Access{a.tensor, a.view.broadcast_to(shape)};
  } catch (const std::invalid_argument& e) {
    return fail(nki_error("nkia_bad_shape", fmt::format("cannot broadcast {}: {}", tensor_label(a), e.what()),
                          "broadcast only dimensions of size 1"));
  }
}

Result<Access> permute_view(const Access& a, const std::vector<int>& perm) {
  std::vector<bool> seen(static_cast<size_t>(a.view.ndim()), false);
  bool ok = perm.size() == seen.size();
  for (int p : perm) {
    if (!ok || p < 0 || p >= a.view.ndim() || seen[static_cast<size_t>(p)]) {
      ok = false;
      break;
    }
    seen[static_cast<size_t>(p)] = true;
  }
  if (!ok)
    return fail(nki_error(
        "nkia_bad_shape",
        fmt::format("{} is not a permutation of the {} axes of {}",
                    shape_str(std::vector<int64_t>(perm.begin(), perm.end())), a.view.ndim(), tensor_label(a)),
        "name every axis exactly once"));
  if (buffer_is_on_chip(a.buffer()) && !perm.empty() && perm[0] != 0)
    return fail(nki_error("nkia_bad_shape", fmt::format("permuting {} moves its partition dimension", tensor_label(a)),
                          "keep axis 0 (the partitions) first; transpose across partitions with nisa.nc_transpose"));
  return Access{a.tensor, a.view.transpose(perm)};
}

Result<Access> pattern_view(const Access& a, const ApPattern& pattern, int64_t offset) {
  const Tensor& base = a.tensor->data;
  const std::string what = tensor_label(a);
  if (pattern.empty())
    return fail(nki_error("nkia_bad_index", fmt::format("{}.ap() needs at least one [step, num] pair", what),
                          "write t.ap(pattern=[[step, num], ...], offset=0)"));
  Shape shape;
  Strides strides;
  int64_t lo = offset, hi = offset;
  for (const auto& [step, num] : pattern) {
    if (num <= 0)
      return fail(nki_error("nkia_bad_index",
                            fmt::format("{}.ap(): a pattern count must be positive, got {}", what, num),
                            "give every [step, num] pair num >= 1"));
    shape.push_back(num);
    strides.push_back(step);
    lo += std::min<int64_t>(0, step * (num - 1));
    hi += std::max<int64_t>(0, step * (num - 1));
  }
  const int64_t total = base.numel();
  if (buffer_is_on_chip(a.buffer()) && base.ndim() > 0) {
    const int64_t per_partition = base.shape()[0] ? total / base.shape()[0] : 0;
    if (pattern[0].first != per_partition && pattern[0].second > 1)
      return fail(nki_error("nkia_bad_index",
                            fmt::format("{}.ap(): the partition step is {} but each partition of {} holds {} elements",
                                        what, pattern[0].first, shape_str(base.shape()), per_partition),
                            "make the first [step, num] pair [elements per partition, partitions]"));
  }
  if (lo < 0 || hi >= total)
    return fail(nki_error("err_tensor_access_out_of_bound",
                          fmt::format("out-of-bound access for {}: the access pattern reaches elements [{}, {}] of a "
                                      "tensor of {} elements",
                                      what, lo, hi, total),
                          "keep offset + sum(step * (num - 1)) within the tensor"));
  return Access{a.tensor, Tensor(base.storage(), base.dtype(), shape, strides, base.offset() + offset)};
}

Result<Access> retyped_view(const Access& a, DType to) {
  const NkiTensor& t = *a.tensor;
  const Tensor& base = t.data;
  if (to == base.dtype()) return a;
  const int64_t from_size = base.itemsize(), to_size = dtype_size(to);
  const Shape& shape = base.shape();
  const int64_t last_bytes = (shape.empty() ? 1 : shape.back()) * from_size;
  if (!base.is_contiguous() || last_bytes % to_size != 0 || (base.offset() * from_size) % to_size != 0)
    return fail(nki_error("nkia_bad_shape",
                          fmt::format("{} cannot be read as {}: the {} bytes of its last axis do not hold a whole "
                                      "number of {}-byte elements",
                                      tensor_label(a), dtype_name(to), last_bytes, to_size),
                          "reinterpret a tensor whose last axis holds whole elements of the new type"));
  settle(*a.tensor);
  Shape retyped = shape.empty() ? Shape{1} : shape;
  retyped.back() = last_bytes / to_size;
  auto alias = std::make_shared<NkiTensor>();
  alias->data = Tensor(base.storage(), to, retyped, contiguous_strides(retyped), base.offset() * from_size / to_size);
  alias->buffer = t.buffer;
  alias->name = t.name;
  alias->id = t.id;  // the same tensor in the trace: dependencies on its writes hold
  alias->kernel_argument = t.kernel_argument;
  alias->immutable = t.immutable;
  alias->origin = t.origin ? t.origin : a.tensor;
  alias->blocks = t.blocks;
  alias->launch = t.launch;
  sync_alias_from_origin(*alias);
  return Access{alias, alias->data};
}

Result<int64_t> ap_offset_unit(const Access& a, int64_t indirect_dim) {
  // A reshape of the whole tensor (`t.reshape((1, n)).ap(...)`, as nki-library's indexed_flatten
  // does) is the tensor under that shape: its axes are the ones indirect_dim counts.
  const Tensor& base = a.tensor->data;
  const bool whole = a.view.numel() == base.numel() && a.view.is_contiguous() && a.view.offset() == base.offset();
  const Shape& shape = whole ? a.view.shape() : base.shape();
  if (indirect_dim < 0 || indirect_dim >= static_cast<int64_t>(shape.size()))
    return fail(nki_error(
        "nkia_bad_index",
        fmt::format("{}.ap(): indirect_dim {} is not an axis of {}", tensor_label(a), indirect_dim, shape_str(shape)),
        "give indirect_dim the axis that scalar_offset indexes (0 for rows)"));
  int64_t row = 1;
  for (size_t d = static_cast<size_t>(indirect_dim) + 1; d < shape.size(); ++d) row *= shape[d];
  return row;
}

Result<void> check_offset_tile(const Access& a, const Access& s) {
  if (s.view.numel() != 1 || dtype_is_float(s.dtype()))
    return fail(nki_error("nkia_bad_operand",
                          fmt::format("{}.ap(scalar_offset=...) takes a 1 x 1 integer tensor or an int, not {}",
                                      tensor_label(a), s.describe()),
                          "hold the offset in a [1, 1] nl.int32 SBUF tile (or pass a loop variable)"));
  return {};
}

int64_t offset_tile_value(const ExecContext& ctx, const Access& s) {
  if (!ctx.compute) return 0;
  settle(*s.tensor);  // its poison and pending copies, as any read
  return static_cast<int64_t>(s.view.item());
}

Result<void> check_indirect_pattern(const Access& a, const ApPattern& pattern, bool has_scalar_offset,
                                    int64_t indirect_dim) {
  const std::string what = tensor_label(a);
  auto bad = [&](const std::string& message, const std::string& hint) {
    return fail(nki_error("nkia_bad_operand", message, hint));
  };
  if (has_scalar_offset)
    return bad(fmt::format("{}.ap() takes scalar_offset or vector_offset, not both", what),
               "index one row per partition with vector_offset, or move the whole access with scalar_offset");
  if (!buffer_is_hbm(a.buffer()))
    return bad(fmt::format("{}.ap(vector_offset=...) indexes rows of an HBM tensor, but {} is in {}", what, what,
                           buffer_name(a.buffer())),
               "call .ap(vector_offset=idx, indirect_dim=0) on the HBM side of the dma_copy");
  const Shape& shape = a.tensor->data.shape();
  if (indirect_dim != 0 || shape.empty())
    return bad(fmt::format("{}.ap(vector_offset=...) indexes axis 0 only, not indirect_dim={}", what, indirect_dim),
               "pass indirect_dim=0: each partition's index names a row (an index of axis 0)");
  int64_t row = 1;
  for (size_t d = 1; d < shape.size(); ++d) row *= shape[d];
  // The first pair counts the indexed rows; its step is not what the index multiplies (the row size
  // is: indirect_rows), so any step is accepted, as device-tested kernels pass other ones.
  if (pattern.size() < 2)
    return bad(fmt::format("{}.ap(vector_offset=...) takes a pattern [[{}, P], [step, num], ...]: the indexed rows, "
                           "then the elements of each row",
                           what, row),
               fmt::format("write pattern=[[{}, P], [1, F]] to move F elements of each indexed row", row));
  return {};
}

// One row number per index of the first pair: an [R, 1] tile (dma_copy: R partitions), or for a
// gather-transpose a [128, N] one read column by column (R = 128 * N).
Result<void> check_indirect_index(const Access& a, const ApPattern& pattern, const Access& index) {
  if (!buffer_is_on_chip(index.buffer()) || index.view.ndim() != 2 || index.view.numel() != pattern[0].second ||
      (index.shape()[1] != 1 && index.shape()[0] != 128))
    return fail(nki_error(
        "nkia_indirect_index_tile",
        fmt::format("{}.ap(vector_offset={}) needs an SBUF [{}, 1] tile: one row number for each of the pattern's {} "
                    "rows ([128, {}] for a dma_transpose gathering more than 128)",
                    tensor_label(a), index.describe(), pattern[0].second, pattern[0].second, pattern[0].second / 128),
        "load the row numbers into an SBUF tile of shape [R, 1] (an integer dtype)"));
  return {};
}

// The rows as a view [rows, num...]: every row whose elements the pattern keeps inside the tensor.
Result<Access> indirect_rows(const Access& a, const ApPattern& pattern, int64_t offset) {
  // Row idx[p] starts idx[p] rows of the tensor in (the size of one index of axis 0), whatever step
  // the pattern's first pair gives.
  int64_t row = 1;
  for (size_t d = 1; d < a.tensor->data.shape().size(); ++d) row *= a.tensor->data.shape()[d];
  int64_t reach = offset;
  for (size_t k = 1; k < pattern.size(); ++k) reach += std::max<int64_t>(0, pattern[k].first * (pattern[k].second - 1));
  const int64_t numel = a.tensor->data.numel();
  const int64_t rows = std::min(a.tensor->data.shape()[0], reach < numel ? (numel - 1 - reach) / row + 1 : 0);
  if (rows <= 0)
    return fail(nki_error("err_tensor_access_out_of_bound",
                          fmt::format("out-of-bound access for {}: the pattern with offset {} reaches past the "
                                      "tensor's end in every row",
                                      tensor_label(a), offset),
                          "keep offset + sum(step * (num - 1)) within one row"));
  ApPattern rows_pattern = pattern;
  rows_pattern[0] = {row, rows};
  return pattern_view(a, rows_pattern, offset);
}

Shape indirect_shape(const ApPattern& pattern) {
  Shape out{pattern[0].second};
  for (size_t k = 1; k < pattern.size(); ++k) out.push_back(pattern[k].second);
  return out;
}

}  // namespace nki_agent
