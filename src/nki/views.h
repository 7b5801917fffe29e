// nki/views.h — indexing NKI tensors into access patterns: basic keys (t[0:128, i, ...]), index
// tiles (nl.arange / nl.mgrid: affine keys), reshape / broadcast_to / permute views and the hardware
// access patterns of t.ap(...), each refusing what NKI refuses with its catalogue code.
//
// A view never copies: the result shares its tensor's storage, so writes through it land. The
// front end parses its key objects into these types; it never checks a bound itself.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/diagnostic.h"
#include "nki/isa.h"

namespace nki_agent {

// One item of a basic index key.
struct IndexItem {
  enum class Kind : uint8_t {
    kIndex,     // an integer: selects one position, dropping the axis
    kSlice,     // start:stop:step (nl.ds(start, size))
    kNewAxis,   // None: a new axis of size 1
    kEllipsis,  // ...: the axes the other items do not name
    kOther,     // anything else: refused (type_name names it)
  };
  Kind kind = Kind::kIndex;
  int64_t index = 0;
  Slice slice;
  std::string type_name;
};

// `base` indexed with `key`; `what` names the tensor in Diagnostics. A static index or slice past
// a dimension is err_tensor_access_out_of_bound, not a silent clip.
Result<Tensor> index_view(const Tensor& base, std::span<const IndexItem> key, const std::string& what);

// One indexed dimension of an affine key: a constant plus coefficient * (position along an axis of
// the index space), for each (axis, coefficient) that appears.
using AffineDim = std::pair<int64_t, std::vector<std::pair<int64_t, int64_t>>>;

// The access pattern that index tiles select over an index space of shape `space`: every indexed
// dimension adds its coefficients times its stride to the strides of the index-space axes, and its
// constant to the offset; dimensions the key leaves out follow as they are.
Result<Tensor> affine_index(const Tensor& base, const std::vector<AffineDim>& dims, const std::vector<int64_t>& space,
                            const std::string& what);

// The tensor's name for Diagnostics ("tensor" when it has none).
std::string tensor_label(const Access& a);

// t.reshape(shape): the same elements in a new shape. On-chip tensors keep their partition
// dimension; the view must be expressible with strides (no copy: writes must land).
Result<Access> reshape_view(const Access& a, const Shape& shape);
// t.broadcast_to(shape): dimensions of size 1 repeated.
Result<Access> broadcast_view(const Access& a, const Shape& shape);
// t.permute(perm): the axes reordered; on-chip tensors keep the partition axis first.
Result<Access> permute_view(const Access& a, const std::vector<int>& perm);

// An access pattern: [step, num] pairs, outermost first, steps in elements.
using ApPattern = std::vector<std::pair<int64_t, int64_t>>;

// t.ap(pattern=[[step, num], ...], offset=0): the hardware access pattern over the whole tensor's
// storage (the current view is ignored). For SBUF/PSUM the first pair is the partition dimension
// and its step must be the per-partition element count.
Result<Access> pattern_view(const Access& a, const ApPattern& pattern, int64_t offset);

// The whole tensor of `a` read as elements of another type (t.ap(..., dtype=d), t.view(d)): the same
// bytes, the last axis rescaled by the size ratio (a [P, 1] float32 tile is a [P, 4] float8 one), as
// an alias NkiTensor sharing the storage, the trace identity and the live range. The tensor is
// settled first (its poison and pending copies land) and the alias's written elements are those
// whose bytes the original's written elements cover. Writes through the alias land in the original's
// bytes, and the original's flags follow them (nki/aliases.h). The own type gives `a` back. A size
// that does not divide is nkia_bad_shape.
Result<Access> retyped_view(const Access& a, DType to);

// .ap()'s dynamic offset (scalar_offset) counts indices of `indirect_dim`: the elements of one,
// prod(shape[indirect_dim + 1:]).
Result<int64_t> ap_offset_unit(const Access& a, int64_t indirect_dim);
// A scalar_offset given as a tile: a 1 x 1 integer tensor.
Result<void> check_offset_tile(const Access& a, const Access& offset);
// The value a scalar_offset tile holds, read now (instructions run in program order); 0 in a
// timing-only run, which computes no values.
int64_t offset_tile_value(const ExecContext& ctx, const Access& offset);

// t.ap(pattern=[[row, P], [step, num], ...], offset, vector_offset=idx, indirect_dim=0): vector
// indirection, partition p of the access reading (or writing) row idx[p] of the HBM tensor t: the
// elements offset + idx[p] * row + sum(step * i) over the remaining pairs, where row is the size of
// one index of axis 0 (prod(t.shape[1:])) and must be the first pair's step, and P the partitions of
// idx. Checked in three steps, as the front end meets the parts: the pattern (scalar_offset must
// not be given too), the index tile, then the rows the pattern reaches, as a view [rows, num...].
Result<void> check_indirect_pattern(const Access& a, const ApPattern& pattern, bool has_scalar_offset,
                                    int64_t indirect_dim);
Result<void> check_indirect_index(const Access& a, const ApPattern& pattern, const Access& index);
Result<Access> indirect_rows(const Access& a, const ApPattern& pattern, int64_t offset);
// The shape of the access an indirect pattern makes: [P, num...].
Shape indirect_shape(const ApPattern& pattern);

}  // namespace nki_agent
