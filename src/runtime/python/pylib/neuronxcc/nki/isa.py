"""neuronxcc.nki.isa (legacy dialect): instructions that return their result tile, as simulated
by nki-agent. They lower onto the same instruction core as nki.isa."""
import builtins

import _nkia_core as core
from _nkia import isa_common, lang
from _nkia.isa_common import (dge_mode, engine, get_nc_version, gpsimd_engine, matmul_perf_mode,  # noqa: F401
                              nc_version, oob_mode, reduce_cmd, scalar_engine, tensor_engine, unknown_engine,
                              vector_engine)


def _out(shape, dtype, default):
    return lang._tile(shape, dtype or default, lang.sbuf)


def tensor_tensor(data1, data2, op, dtype=None, mask=None, engine=None, **kwargs):
    out = _out(lang.result_shape(data1, data2), dtype, core.promote(data1.dtype, data2.dtype))
    m = lang._Mask(mask, out.shape)
    if not m.empty:
        core.tensor_tensor(m(out), m(data1), m(data2), lang.op_name(op))
    return m.mark(out)


def tensor_scalar(data, op0, operand0, reverse0=False, op1=None, operand1=None, reverse1=False, dtype=None,
                  mask=None, **kwargs):
    out = _out(data.shape, dtype, data.dtype)
    m = lang._Mask(mask, data.shape)
    if m.empty:
        return m.mark(out)
    isa_common.tensor_scalar(m(out), m(data), op0, m(operand0), reverse0, op1, m(operand1), reverse1)
    return m.mark(out)


def scalar_tensor_tensor(data, op0, operand0, op1, operand1, reverse0=False, reverse1=False, dtype=None, mask=None,
                         **kwargs):
    out = _out(data.shape, dtype, data.dtype)
    m = lang._Mask(mask, data.shape)
    if m.empty:
        return m.mark(out)
    name0, operand0, reverse0 = isa_common._scalar_step(op0, m(operand0), reverse0)
    core.scalar_tensor_tensor(m(out), m(data), name0, operand0, reverse0, lang.op_name(op1), m(operand1),
                              bool(reverse1))
    return m.mark(out)


def reciprocal(data, dtype=None, mask=None, **kwargs):
    out = _out(data.shape, dtype, data.dtype)
    m = lang._Mask(mask, data.shape)
    if not m.empty:
        core.reciprocal(m(out), m(data))
    return m.mark(out)


def iota(expr, dtype, mask=None, **kwargs):
    """Materialises an index expression (nl.arange / nl.mgrid arithmetic) into an SBUF tile."""
    const, terms = expr.affine()
    out = lang._tile(expr.shape, dtype, lang.sbuf)
    m = lang._Mask(mask, out.shape)
    if not m.empty:
        core.iota(m(out), _shifted(const, terms, m), terms)
    return m.mark(out)


def _shifted(const, terms, m):
    """An affine expression's constant on the mask's box, whose positions start at the box's corner."""
    return const + sum(coef * m.box[axis][0] for axis, coef in terms)


def affine_select(pred, on_true_tile, on_false_value, mask=None, dtype=None, **kwargs):
    """Where the index predicate (e.g. iy < ix) holds, on_true_tile; elsewhere on_false_value."""
    if not isinstance(pred, lang.Predicate):
        raise lang.NkiError("nkia_bad_operand", "affine_select needs an index predicate such as iy < ix",
                            "compare index tiles built with nl.arange or nl.mgrid")
    const, terms = pred.expr.affine()
    out = _out(on_true_tile.shape, dtype, on_true_tile.dtype)
    m = lang._Mask(mask, out.shape)
    if not m.empty:
        core.affine_select(m(out), _shifted(const, terms, m), terms, pred.op, m(on_true_tile), float(on_false_value))
    return m.mark(out)


def activation(op, data, bias=None, scale=1.0, dtype=None, mask=None, reduce_op=None, reduce_res=None,
               reduce_cmd=None, **kwargs):
    out = _out(data.shape, dtype, data.dtype)
    m = lang._Mask(mask, data.shape)
    if not m.empty:
        isa_common.activation(m(out), op, m(data), m(bias), m(scale),
                              m(reduce_res, [0, None]) if reduce_res is not None else None, reduce_op)
    return m.mark(out)


def tensor_copy(src, dtype=None, mask=None, engine=None, **kwargs):
    out = _out(src.shape, dtype, src.dtype)
    m = lang._Mask(mask, src.shape)
    if not m.empty:
        core.tensor_copy(m(out), m(src), isa_common.engine_name(engine))
    return m.mark(out)


def memset(shape, value, dtype, mask=None, engine=None, **kwargs):
    out = _out(shape, dtype, dtype)
    m = lang._Mask(mask, out.shape)
    if not m.empty:
        core.memset(m(out), float(value), isa_common.engine_name(engine))
    return m.mark(out)


def nc_matmul(stationary, moving, mask=None, perf_mode=None, **kwargs):
    """stationary[K, M].T @ moving[K, N] into PSUM (float32); `psum += nc_matmul(...)` accumulates.
    perf_mode="double_row_gen3" (trn2, FP8): stationary [128, 2, M], moving [128, 2, N]."""
    return lang.PendingMatmul(stationary, moving, isa_common.perf_mode_name(perf_mode, kwargs))


def nc_transpose(data, mask=None, dtype=None, engine=None, **kwargs):
    small = data.shape[0] <= 32 and data.shape[1] <= 32
    eng = isa_common.engine_name(engine) if engine is not None else ("vector" if small else "tensor")
    if eng == "tensor":
        lang._no_pe_transpose("nisa.nc_transpose on the Tensor engine")
    core.check_transpose(data, eng)
    out = lang._tile((data.shape[1], data.shape[0]), dtype or data.dtype, lang.psum if eng == "tensor" else lang.sbuf)
    core.nc_transpose(out, data, eng)
    return out


def tensor_reduce(op, data, axis, mask=None, dtype=None, negate=False, keepdims=False, **kwargs):
    return lang._reduce(lang.op_name(op), data, axis, dtype, keepdims, negate, mask=mask)


def tensor_tensor_scan(data0, data1, initial, op0, op1, reverse0=False, reverse1=False, dtype=None, mask=None,
                       **kwargs):
    out = _out(data0.shape, dtype, data0.dtype)
    m = lang._Mask(mask, data0.shape)
    if not m.empty:
        core.tensor_tensor_scan(m(out), m(data0), m(data1), m(initial) if lang._is_tensor(initial) else float(initial),
                                lang.op_name(op0), lang.op_name(op1), bool(reverse0), bool(reverse1))
    return m.mark(out)


def bn_stats(data, mask=None, dtype=None, **kwargs):
    out = _out((data.shape[0], 6), dtype, lang.float32)
    m = lang._Mask(mask, data.shape)
    if not m.empty:
        core.bn_stats(m(out, [0, None]), m(data))
    return m.mark(out)


def bn_aggr(data, mask=None, dtype=None, **kwargs):
    out = _out((data.shape[0], 2), dtype, lang.float32)
    m = lang._Mask(mask, data.shape)
    if not m.empty:
        core.bn_aggr(m(out, [0, None]), m(data, [0, None]))
    return m.mark(out)


def activation_reduce(op, data, reduce_op, reduce_res, bias=None, scale=1.0, mask=None, dtype=None, **kwargs):
    out = _out(data.shape, dtype, data.dtype)
    m = lang._Mask(mask, data.shape)
    if not m.empty:
        isa_common.activation(m(out), op, m(data), m(bias), m(scale), m(reduce_res, [0, None]), reduce_op)
    return m.mark(out)


def max8(src, mask=None, dtype=None, **kwargs):
    """The 8 largest values of each partition of src, descending, as a new [P, 8] tile."""
    out = _out((src.shape[0], 8), dtype, src.dtype)
    core.max8(out, src)
    return out


def nc_find_index8(data, vals, mask=None, dtype=None, **kwargs):
    """[P, 8] uint32: the index of the first occurrence of each of vals[p, 0:8] in data[p]."""
    out = _out((data.shape[0], 8), dtype, lang.uint32)
    core.find_index8(out, data, vals)
    return out


def nc_match_replace8(data, vals, imm, dst_idx=None, mask=None, dtype=None, **kwargs):
    """data with the first occurrence of each of vals[p, 0:8] replaced by imm (indices to dst_idx)."""
    out = _out(data.shape, dtype, data.dtype)
    core.match_replace8(out, data, vals, float(imm), dst_idx)
    return out


def nc_stream_shuffle(src, dst, shuffle_mask, dtype=None, mask=None, **kwargs):
    """Within each 32-partition quadrant, dst partition i = src partition shuffle_mask[i] (255: keep)."""
    core.stream_shuffle(dst, src, [int(m) for m in shuffle_mask])


def range_select(on_true_tile, comp_op0, comp_op1, bound0, bound1, reduce_cmd=None, reduce_res=None, reduce_op=None,
                 range_start=0, on_false_value=None, mask=None, dtype=None, **kwargs):
    out = _out(on_true_tile.shape, dtype, on_true_tile.dtype)
    fill = float(on_false_value) if on_false_value is not None else float(lang.fp32.min)
    core.range_select(out, on_true_tile, lang.op_name(comp_op0), lang.op_name(comp_op1), bound0, bound1,
                      float(range_start), fill, reduce_res)
    return out


def select_reduce(dst, predicate, on_true, on_false, reduce_res=None, reduce_cmd=None, reduce_op=None,
                  reverse_pred=False, mask=None, dtype=None, **kwargs):
    core.select_reduce(dst, predicate, on_true, on_false if lang._is_tensor(on_false) else float(on_false),
                       bool(reverse_pred), reduce_res)
    return dst


def tensor_copy_predicated(src, dst, predicate, reverse_pred=False, mask=None, dtype=None, **kwargs):
    core.copy_predicated(dst, src if lang._is_tensor(src) else float(src), predicate, bool(reverse_pred))
    return dst


def tensor_partition_reduce(op, data, mask=None, dtype=None, **kwargs):
    out = lang._tile((1,) + tuple(data.shape[1:]), dtype or data.dtype, lang.sbuf)
    core.partition_reduce(out, lang.op_name(op), data)
    return out


def tensor_scalar_reduce(data, op0, operand0, reduce_op, reduce_res, reverse0=False, mask=None, dtype=None, **kwargs):
    # One instruction: its result, read here for the reduction, becomes the kernel's afterwards.
    out = lang._tile(data.shape, dtype or data.dtype, lang.sbuf, origin="scratch")
    isa_common.tensor_scalar(out, data, op0, operand0, reverse0)
    core.tensor_reduce(reduce_res, lang.op_name(reduce_op), out, list(range(1, len(out.shape))), False)
    core.mark_result(out)
    return out


def local_gather(src_buffer, index, num_elem_per_idx=1, num_valid_indices=None, mask=None, **kwargs):
    """Per 16-partition group, gathers num_elem_per_idx contiguous elements of every partition at each
    of the group's indices (uint16 element offsets): a new [P, n, num_elem_per_idx] tile of
    src_buffer's dtype, n = num_valid_indices (default: all the group's indices)."""
    if mask is not None:
        raise lang.NkiError("nkia_bad_operand", "local_gather with mask= is not simulated",
                            "gather the whole tile and mask the operations that use the result")
    k = int(num_elem_per_idx)
    per_group = 16 * (index.shape[1] if len(index.shape) == 2 else _free_elements(index))
    n = per_group if num_valid_indices is None else int(num_valid_indices)
    out = lang._tile((src_buffer.shape[0], builtins.max(n, 1), k), src_buffer.dtype, lang.sbuf)
    core.local_gather(out, src_buffer, index, k, None if num_valid_indices is None else n)
    return out


def _free_elements(t):
    n = 1
    for d in t.shape[1:]:
        n *= int(d)
    return n


def dma_copy(dst, src, mask=None, dst_rmw_op=None, oob_mode=None, dge_mode=None, **kwargs):
    """Copies src into dst through a DMA queue (HBM <-> SBUF, or within one memory); with
    dst_rmw_op=nl.add the DMA engine accumulates: dst += src."""
    if isinstance(dst, lang._IndirectRows) or isinstance(src, lang._IndirectRows):
        lang._dma_copy_indirect(dst, src, dst_rmw_op, oob_mode, mask)
        return
    rmw = lang.op_name(dst_rmw_op) if dst_rmw_op is not None else ""
    m = lang._Mask(mask, dst.shape)
    if not m.empty:
        core.dma_copy(m(dst), m(src), rmw)


def dma_transpose(src, axes=None, mask=None, dtype=None, dge_mode=None, **kwargs):
    """A new SBUF tile holding src with its axes permuted by the DMA engines: (1, 0) of a 2-D source,
    (2, 1, 0) of a 3-D one, (3, 1, 2, 0) of a 4-D one (the default for the rank)."""
    if mask is not None:
        raise lang.NkiError("nkia_bad_operand", "dma_transpose with mask= is not simulated",
                            "index the source down to the part to transpose instead of masking it")
    if isinstance(src, lang._IndirectRows):
        out = _out([int(src.shape[1]), int(src.shape[0])], dtype, src.dtype)
        lang._dma_transpose_gather(out, src, axes, kwargs.get("oob_mode"))
        return out
    shape = [int(d) for d in src.shape]
    perm = list(axes) if axes is not None else {2: [1, 0], 3: [2, 1, 0], 4: [3, 1, 2, 0]}.get(len(shape), [])
    out_shape = [shape[a] for a in perm] if sorted(perm) == list(range(len(shape))) else shape[::-1]
    out = _out(out_shape, dtype, src.dtype)
    core.dma_transpose(out, src, [int(a) for a in axes] if axes is not None else [])
    return out
