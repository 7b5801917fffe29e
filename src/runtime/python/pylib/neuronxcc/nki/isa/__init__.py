"""neuronxcc.nki.isa (legacy dialect): instructions that return their result tile, as simulated
by nki-agent. Each one that nki.isa (the current dialect, which writes a destination it is given)
also has is derived from it by _returns_tile: allocate the result tile, resolve mask=, run the
current-dialect instruction into the tile, mark what it wrote. The rest are the legacy dialect's
own: iota and affine_select over index expressions, nc_matmul's pending result, tensor_reduce as
an nl reduction, and the instructions that take their destination (dst=) as nki.isa does."""
import builtins
import functools
import inspect

import _nkia_core as core
from _nkia import buffers, index, isa_common, lang, operands
from _nkia.isa_common import (dge_mode, dma_engine, engine, get_nc_version, gpsimd_engine,  # noqa: F401
                              matmul_perf_mode, nc_version, oob_mode, reduce_cmd, scalar_engine, tensor_engine,
                              unknown_engine, vector_engine)
from _nkia.multicore import core_barrier, sendrecv  # noqa: F401 - the two cores of LNC=2
from nki import isa as current


class _NewTile:
    """The result tile a legacy call makes: its shape, its dtype when the call names none, the
    index space its mask= is resolved against (the tile's shape unless given) and its buffer."""

    __slots__ = ("shape", "dtype", "space", "buffer")

    def __init__(self, shape, dtype, space=None, buffer=None):
        self.shape, self.dtype = shape, dtype
        self.space = shape if space is None else space
        self.buffer = buffer or lang.sbuf


def _returns_tile(instruction, masked=True, axes=None, scratch=False, dma=False):
    """Derives a legacy instruction from the current-dialect `instruction` (nki.isa's, whose first
    parameter is the destination). The decorated function has the legacy signature; it checks what
    only the legacy form checks and returns the _NewTile the call makes. The legacy call then
    allocates that tile (in the compiler's memory), resolves mask= over the tile's index space
    (`masked` instructions only: the others ignore mask=) and, unless the mask selects nothing,
    runs `instruction` with the tile as the destination and each argument both signatures name,
    restricted to the mask's box; `axes` maps an argument's axes onto the index space where they
    differ ({"dst": [0, None]}: only the tile's partition axis lies in it). It returns the tile,
    marked with the part it wrote. With `scratch` the tile is allocated as part of the
    instruction's work (the instruction reads its own result) and becomes the kernel's after it.
    A `dma` instruction (unmasked) assigned straight into an SBUF tile of its result's shape and
    dtype (``t[key] = nisa.dma_transpose(...)``) writes t[key] itself instead: the compiler folds
    the assignment's copy into the DMA (_nkia.operands.PendingLoad)."""
    if scratch and masked:
        raise TypeError("a scratch result is for instructions that ignore mask=")
    axes = axes or {}
    into = [n for n, p in inspect.signature(instruction).parameters.items()
            if n != "dst" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    origin = "scratch" if scratch else "result"

    def derive(signature):
        params = inspect.signature(signature).parameters
        names = list(params)
        # The arguments both signatures name lead the instruction's parameters (passed in its order);
        # those only it names come from the legacy call's **kwargs.
        shared = [n for n in into if n in params]
        if shared != into[:len(shared)]:
            raise TypeError(f"legacy {signature.__name__}: {shared} must be the first parameters of "
                            f"nki.isa.{instruction.__name__} after dst")
        picks = [(names.index(n), n, None if params[n].default is params[n].empty else params[n].default,
                  axes.get(n)) for n in shared]
        only_current = into[len(shared):]
        dtype_at = names.index("dtype") if "dtype" in params else None
        mask_at = names.index("mask") if masked else None
        dst_axes = axes.get("dst")

        @functools.wraps(signature)
        def legacy(*args, **kwargs):
            spec = signature(*args, **kwargs)
            given = len(args)
            dtype = None if dtype_at is None else args[dtype_at] if dtype_at < given else kwargs.get("dtype")
            values = [args[i] if i < given else kwargs.get(n, d) for i, n, d, _ in picks]
            extra = {n: kwargs[n] for n in only_current if n in kwargs} if kwargs else {}
            if dma and mask_at is None and operands.assigned_target(2) is not None:
                def issue(t):
                    instruction(t, *values, **extra)
                    return t
                return operands.PendingLoad(spec.shape, lang.dtype_name(dtype or spec.dtype), None, issue)
            out = buffers.new_tile(spec.shape, dtype or spec.dtype, spec.buffer, origin)
            if mask_at is None:
                instruction(out, *values, **extra)
                if scratch:
                    core.mark_result(out)
                return out
            m = index.Mask(args[mask_at] if mask_at < given else kwargs.get("mask"), spec.space)
            if not m.empty:
                instruction(m(out, dst_axes),
                            *[m(v, pick[3]) if operands.is_tensor(v) else v for v, pick in zip(values, picks)],
                            **extra)
            return m.mark(out)

        return legacy

    return derive


def _out(shape, dtype, default):
    return buffers.new_tile(shape, dtype or default, lang.sbuf)


@_returns_tile(current.tensor_tensor)
def tensor_tensor(data1, data2, op, dtype=None, mask=None, engine=None, **kwargs):
    return _NewTile(lang.result_shape(data1, data2), core.promote(data1.dtype, data2.dtype))


@_returns_tile(current.tensor_scalar)
def tensor_scalar(data, op0, operand0, reverse0=False, op1=None, operand1=None, reverse1=False, dtype=None,
                  mask=None, **kwargs):
    return _NewTile(data.shape, data.dtype)


@_returns_tile(current.scalar_tensor_tensor)
def scalar_tensor_tensor(data, op0, operand0, op1, operand1, reverse0=False, reverse1=False, dtype=None, mask=None,
                         **kwargs):
    return _NewTile(data.shape, data.dtype)


@_returns_tile(current.reciprocal)
def reciprocal(data, dtype=None, mask=None, **kwargs):
    return _NewTile(data.shape, data.dtype)


def iota(expr, dtype, mask=None, **kwargs):
    """Materialises an index expression (nl.arange / nl.mgrid arithmetic) into an SBUF tile."""
    const, terms = expr.affine()
    out = buffers.new_tile(expr.shape, dtype, lang.sbuf)
    m = index.Mask(mask, out.shape)
    if not m.empty:
        core.iota(m(out), _shifted(const, terms, m), terms)
    return m.mark(out)


def _shifted(const, terms, m):
    """An affine expression's constant on the mask's box, whose positions start at the box's corner."""
    return const + sum(coef * m.box[axis][0] for axis, coef in terms)


def affine_select(pred, on_true_tile, on_false_value, mask=None, dtype=None, **kwargs):
    """Where the index predicate (e.g. iy < ix) holds, on_true_tile; elsewhere on_false_value."""
    if not isinstance(pred, index.Predicate):
        raise lang.NkiError("nkia_bad_operand", "affine_select needs an index predicate such as iy < ix",
                            "compare index tiles built with nl.arange or nl.mgrid")
    const, terms = pred.expr.affine()
    on_true_tile = lang.staged_to_sbuf(on_true_tile)  # GpSimd cannot read PSUM: the compiler copies it
    out = _out(on_true_tile.shape, dtype, on_true_tile.dtype)
    m = index.Mask(mask, out.shape)
    if not m.empty:
        core.affine_select(m(out), _shifted(const, terms, m), terms, pred.op, m(on_true_tile), float(on_false_value))
    return m.mark(out)


@_returns_tile(current.activation, axes={"reduce_res": [0, None]})
def activation(op, data, bias=None, scale=1.0, dtype=None, mask=None, reduce_op=None, reduce_res=None,
               reduce_cmd=None, **kwargs):
    return _NewTile(data.shape, data.dtype)


@_returns_tile(current.tensor_copy)
def tensor_copy(src, dtype=None, mask=None, engine=None, **kwargs):
    return _NewTile(src.shape, src.dtype)


@_returns_tile(current.memset)
def memset(shape, value, dtype, mask=None, engine=None, **kwargs):
    return _NewTile(shape, dtype)


def nc_matmul(stationary, moving, mask=None, perf_mode=None, **kwargs):
    """stationary[K, M].T @ moving[K, N] into PSUM (float32); `psum += nc_matmul(...)` accumulates.
    perf_mode="double_row_gen3" (trn2, FP8): stationary [128, 2, M], moving [128, 2, N]. An operand in
    PSUM (a Tensor-engine nc_transpose's result) is copied to SBUF first, as the compiler legalises it
    (docs/nki-semantics.md "PSUM operands")."""
    return operands.PendingMatmul(lang.staged_to_sbuf(stationary), lang.staged_to_sbuf(moving),
                                  isa_common.perf_mode_name(perf_mode, kwargs))


@_returns_tile(current.nc_transpose, masked=False)
def nc_transpose(data, mask=None, dtype=None, engine=None, **kwargs):
    """Into PSUM on the Tensor engine, or into SBUF on the Vector engine (the default for tiles of
    at most 32 x 32)."""
    small = data.shape[0] <= 32 and data.shape[1] <= 32
    eng = isa_common.engine_name(engine) if engine is not None else ("vector" if small else "tensor")
    if eng == "tensor":
        buffers.no_pe_transpose("nisa.nc_transpose on the Tensor engine")
    core.check_transpose(data, eng)
    return _NewTile((data.shape[1], data.shape[0]), data.dtype, buffer=lang.psum if eng == "tensor" else lang.sbuf)


def tensor_reduce(op, data, axis, mask=None, dtype=None, negate=False, keepdims=False, **kwargs):
    return lang.reduce(lang.op_name(op), data, axis, dtype, keepdims, negate, mask=mask)


@_returns_tile(current.tensor_tensor_scan)
def tensor_tensor_scan(data0, data1, initial, op0, op1, reverse0=False, reverse1=False, dtype=None, mask=None,
                       **kwargs):
    return _NewTile(data0.shape, data0.dtype)


@_returns_tile(current.bn_stats, axes={"dst": [0, None]})
def bn_stats(data, mask=None, dtype=None, **kwargs):
    return _NewTile((data.shape[0], 6), lang.float32, space=data.shape)


@_returns_tile(current.bn_aggr, axes={"dst": [0, None], "data": [0, None]})
def bn_aggr(data, mask=None, dtype=None, **kwargs):
    return _NewTile((data.shape[0], 2), lang.float32, space=data.shape)


@_returns_tile(current.activation_reduce, axes={"reduce_res": [0, None]})
def activation_reduce(op, data, reduce_op, reduce_res, bias=None, scale=1.0, mask=None, dtype=None, **kwargs):
    return _NewTile(data.shape, data.dtype)


@_returns_tile(current.max8, axes={"dst": [0, None]})
def max8(src, mask=None, dtype=None, **kwargs):
    """The 8 largest values of each partition of src (of the part mask= selects), descending, as a
    new [P, 8] tile."""
    return _NewTile((src.shape[0], 8), src.dtype, space=src.shape)


@_returns_tile(current.nc_find_index8, masked=False)
def nc_find_index8(data, vals, mask=None, dtype=None, **kwargs):
    """[P, 8] uint32: the index of the first occurrence of each of vals[p, 0:8] in data[p]."""
    return _NewTile((data.shape[0], 8), lang.uint32)


@_returns_tile(current.nc_match_replace8, axes={"vals": [0, None], "dst_idx": [0, None]})
def nc_match_replace8(data, vals, imm, dst_idx=None, mask=None, dtype=None, **kwargs):
    """data with the first occurrence of each of vals[p, 0:8] replaced by imm (indices to dst_idx),
    within the part of data mask= selects."""
    return _NewTile(data.shape, data.dtype)


def nc_stream_shuffle(src, dst, shuffle_mask, dtype=None, mask=None, **kwargs):
    """Within each 32-partition quadrant, dst partition i = src partition shuffle_mask[i] (255: keep)."""
    current.nc_stream_shuffle(dst, src, shuffle_mask)


@_returns_tile(current.range_select, masked=False)
def range_select(on_true_tile, comp_op0, comp_op1, bound0, bound1, reduce_cmd=None, reduce_res=None, reduce_op=None,
                 range_start=0, on_false_value=None, mask=None, dtype=None, **kwargs):
    return _NewTile(on_true_tile.shape, on_true_tile.dtype)


def select_reduce(dst, predicate, on_true, on_false, reduce_res=None, reduce_cmd=None, reduce_op=None,
                  reverse_pred=False, mask=None, dtype=None, **kwargs):
    current.select_reduce(dst, predicate, on_true, on_false, reduce_res, reduce_cmd, reduce_op, reverse_pred)
    return dst


def tensor_copy_predicated(src, dst, predicate, reverse_pred=False, mask=None, dtype=None, **kwargs):
    current.tensor_copy_predicated(dst, src, predicate, reverse_pred)
    return dst


@_returns_tile(current.tensor_partition_reduce, masked=False)
def tensor_partition_reduce(op, data, mask=None, dtype=None, **kwargs):
    return _NewTile((1,) + tuple(data.shape[1:]), data.dtype)


# One instruction: its result, read here for the reduction, becomes the kernel's afterwards.
@_returns_tile(current.tensor_scalar_reduce, masked=False, scratch=True)
def tensor_scalar_reduce(data, op0, operand0, reduce_op, reduce_res, reverse0=False, mask=None, dtype=None, **kwargs):
    return _NewTile(data.shape, data.dtype)


@_returns_tile(current.sequence_bounds, masked=False)
def sequence_bounds(segment_ids, dtype=None, **kwargs):
    """A new [1, 2, F] tile of each element's segment start and end (segment_ids [1, F], 0 = padding)."""
    return _NewTile((segment_ids.shape[0], 2) + tuple(segment_ids.shape[1:]), dtype or segment_ids.dtype)


@_returns_tile(current.dropout)
def dropout(data, prob, dtype=None, mask=None, **kwargs):
    """A new tile of data with each element replaced by 0 with probability prob (a number or a
    [P, 1] tile); the kept elements are not rescaled."""
    return _NewTile(data.shape, data.dtype)


def tensor_scalar_cumulative(dst, src, op0, op1, imm0, imm1=None, reduce_cmd=isa_common.reduce_cmd.reset_reduce,
                             **kwargs):
    """As nki.isa's: it writes the destination it is given (dst=)."""
    isa_common.tensor_scalar_cumulative(dst, src, op0, op1, imm0, imm1, reduce_cmd)


@_returns_tile(current.local_gather, masked=False)
def local_gather(src_buffer, index, num_elem_per_idx=1, num_valid_indices=None, mask=None, **kwargs):
    """Per GpSimd partition group (16 partitions), gathers num_elem_per_idx contiguous elements of
    every partition at each of the group's indices (uint16 element offsets): a new
    [P, n, num_elem_per_idx] tile of src_buffer's dtype, n = num_valid_indices (default: all the
    group's indices)."""
    if mask is not None:
        raise lang.NkiError("nkia_bad_operand", "local_gather with mask= is not simulated",
                            "gather the whole tile and mask the operations that use the result")
    k = int(num_elem_per_idx)
    group = core.target_limit("gpsimd_partition_group")  # partitions per GpSimd core
    per_group = group * (index.shape[1] if len(index.shape) == 2 else _free_elements(index))
    n = per_group if num_valid_indices is None else int(num_valid_indices)
    return _NewTile((src_buffer.shape[0], builtins.max(n, 1), k), src_buffer.dtype)


def _free_elements(t):
    n = 1
    for d in t.shape[1:]:
        n *= int(d)
    return n


def dma_copy(dst, src, mask=None, dst_rmw_op=None, oob_mode=None, dge_mode=None, **kwargs):
    """Copies src into dst through a DMA queue (HBM <-> SBUF, or within one memory); with
    dst_rmw_op=nl.add the DMA engine accumulates: dst += src."""
    if isinstance(dst, operands.IndirectRows) or isinstance(src, operands.IndirectRows):
        isa_common.dma_copy_indirect(dst, src, dst_rmw_op, oob_mode, mask)
        return
    rmw = lang.op_name(dst_rmw_op) if dst_rmw_op is not None else ""
    m = index.Mask(mask, dst.shape)
    if not m.empty:
        core.dma_copy(m(dst), m(src), rmw)


@_returns_tile(current.dma_transpose, masked=False, dma=True)
def dma_transpose(src, axes=None, mask=None, dtype=None, dge_mode=None, **kwargs):
    """A new SBUF tile holding src with its axes permuted by the DMA engines: (1, 0) of a 2-D source,
    (2, 1, 0) of a 3-D one, (3, 1, 2, 0) of a 4-D one (the default for the rank)."""
    if mask is not None:
        raise lang.NkiError("nkia_bad_operand", "dma_transpose with mask= is not simulated",
                            "index the source down to the part to transpose instead of masking it")
    if isinstance(src, operands.IndirectRows):
        return _NewTile([int(src.shape[1]), int(src.shape[0])], src.dtype)
    shape = [int(d) for d in src.shape]
    perm = list(axes) if axes is not None else core.dma_transpose_axes(len(shape))
    return _NewTile([shape[a] for a in perm] if sorted(perm) == list(range(len(shape))) else shape[::-1], src.dtype)
