"""nki.isa (current dialect): instructions with an explicit destination, as simulated by nki-agent.
Each call runs on the C++ instruction core: it checks the operands, computes, and is traced."""
import _nkia_core as core
from _nkia import buffers, isa_common, lang, operands
from _nkia.isa_common import (dge_mode, dma_engine, engine, get_nc_version, gpsimd_engine,  # noqa: F401
                              matmul_perf_mode, nc_version, oob_mode, reduce_cmd, scalar_engine, tensor_engine,
                              unknown_engine, vector_engine)
from _nkia.multicore import core_barrier, sendrecv  # noqa: F401 - the two cores of LNC=2
from _nkia.registers import register_alloc, register_load, register_move, register_store  # noqa: F401


def dma_copy(dst, src, dst_rmw_op=None, oob_mode=None, **kwargs):
    if isinstance(dst, operands.IndirectRows) or isinstance(src, operands.IndirectRows):  # .ap(vector_offset=)
        isa_common.dma_copy_indirect(dst, src, dst_rmw_op, oob_mode)
        return
    core.dma_copy(dst, src, lang.op_name(dst_rmw_op) if dst_rmw_op is not None else "")


def dma_compute(dst, srcs, reduce_op, scales=None, unique_indices=True, oob_mode=None, **kwargs):
    """dst = srcs[0] + srcs[1] + ... computed by the DMA engines in float32 (reduce_op nl.add, every
    scale 1.0, as AWS documents). With a source of .ap(vector_offset=idx) it is a read-modify-write:
    dst (SBUF) += the rows idx names (gather RMW), or dst (the HBM rows idx names) += an SBUF source
    (scatter RMW), one accumulating DMA. Without one, a source that is dst itself is the accumulator
    and each other source is added into it by one accumulating DMA; otherwise the first source is
    copied into dst and the others are added (one DMA each)."""
    srcs = list(srcs)
    if lang.op_name(reduce_op) != "add":
        raise lang.NkiError("nkia_unsupported_operator",
                            f"dma_compute reduces with nl.add only, not {lang.op_name(reduce_op)}",
                            "pass reduce_op=nl.add (the only reduction the DMA engines perform)")
    if scales is not None and any(float(x) != 1.0 for x in scales):
        raise lang.NkiError("nkia_bad_operand", "dma_compute takes scales of 1.0 only",
                            "scale the sources on an engine first, or pass scales=None")
    if len(srcs) < 1:
        raise lang.NkiError("nkia_bad_operand", "dma_compute needs at least one source", "pass srcs=[a, b]")
    indirect = [x for x in srcs if isinstance(x, operands.IndirectRows)]
    if indirect or isinstance(dst, operands.IndirectRows):
        if len(srcs) != 2:
            raise lang.NkiError("nkia_bad_operand",
                                "a dma_compute read-modify-write (a source with vector_offset) takes exactly 2 sources",
                                "pass srcs=[the indexed access, the other operand]")
        if isinstance(dst, operands.IndirectRows):  # scatter RMW: the other source is the SBUF data
            data = next(x for x in srcs if not isinstance(x, operands.IndirectRows))
            isa_common.dma_copy_indirect(dst, data, lang.add, oob_mode)
        else:  # gather RMW: dst += the indexed rows
            isa_common.dma_copy_indirect(dst, indirect[0], lang.add, oob_mode)
        return
    if any(_same_access(x, dst) for x in srcs):
        skipped = False
        for x in srcs:
            if not skipped and _same_access(x, dst):
                skipped = True
                continue
            core.dma_copy(dst, x, "add")
        return
    core.dma_copy(dst, srcs[0], "")
    for x in srcs[1:]:
        core.dma_copy(dst, x, "add")


def _same_access(a, b):
    """Whether a and b are the same elements of one tensor (dma_compute's accumulator source)."""
    ta, tb = getattr(a, "tensor", a), getattr(b, "tensor", b)
    return ta is tb and tuple(a.shape) == tuple(b.shape)


def dma_transpose(dst, src, axes=None, dge_mode=None, oob_mode=None, **kwargs):
    """dst = src with its axes permuted by the DMA engines: (1, 0) of a 2-D source, (2, 1, 0) of a
    3-D one, (3, 1, 2, 0) of a 4-D one (the default for the rank). A source given as
    t.ap(..., vector_offset=idx) gathers the rows idx names and transposes them (2-D)."""
    if isinstance(src, operands.IndirectRows):
        isa_common.dma_transpose_gather(dst, src, axes, oob_mode)
        return
    core.dma_transpose(dst, src, [int(a) for a in axes] if axes is not None else [])


def tensor_tensor(dst, data1, data2, op, engine=None, **kwargs):
    core.tensor_tensor(dst, data1, data2, lang.op_name(op))


def tensor_scalar(dst, data, op0, operand0, reverse0=False, op1=None, operand1=None, reverse1=False, **kwargs):
    isa_common.tensor_scalar(dst, data, op0, operand0, reverse0, op1, operand1, reverse1)


def scalar_tensor_tensor(dst, data, op0, operand0, op1, operand1, reverse0=False, reverse1=False, **kwargs):
    """dst = (data op0 operand0) op1 operand1: operand0 a number or [P, 1] tile, operand1 a tile."""
    name0, operand0, reverse0 = isa_common.scalar_step(op0, operand0, reverse0)
    core.scalar_tensor_tensor(dst, data, name0, operand0, reverse0, lang.op_name(op1), operand1, bool(reverse1))


def reciprocal(dst, data, **kwargs):
    """dst = 1 / data on the Vector engine (not an activation: no Scalar-engine range rules)."""
    core.reciprocal(dst, data)


def iota(dst, pattern, offset=0, channel_multiplier=0, **kwargs):
    view = isa_common.pattern_view(dst, pattern, "iota")
    core.iota(view, *isa_common.iota_pattern(view, pattern, offset, channel_multiplier))


def affine_select(dst, pattern, channel_multiplier, on_true_tile, on_false_value, cmp_op=None, offset=0, **kwargs):
    view = isa_common.pattern_view(dst, pattern, "affine_select")
    on_true = isa_common.pattern_view(on_true_tile, pattern, "affine_select")
    const, terms = isa_common.iota_pattern(view, pattern, offset, channel_multiplier)
    core.affine_select(view, const, terms, lang.op_name(cmp_op) if cmp_op is not None else "equal", on_true,
                       float(on_false_value))


def activation(dst, op, data, bias=None, scale=1.0, reduce_op=None, reduce_res=None, reduce_cmd=None, **kwargs):
    isa_common.activation(dst, op, data, bias, scale, reduce_res, reduce_op)


def tensor_copy(dst, src, engine=None, **kwargs):
    core.tensor_copy(dst, src, isa_common.engine_name(engine))


def memset(dst, value, engine=None, **kwargs):
    core.memset(dst, float(value), isa_common.engine_name(engine))


def nc_matmul(dst, stationary, moving, accumulate=None, perf_mode=None, **kwargs):
    """dst[M, N] (PSUM) = stationary[K, M].T @ moving[K, N]. accumulate: None (first write to an
    element overwrites, later ones add), False (overwrite) or True (add). perf_mode=
    nisa.matmul_perf_mode.double_row (trn2, FP8): stationary [128, 2, M], moving [128, 2, N],
    contracting over the partitions and the size-2 axis."""
    mode = "auto" if accumulate is None else ("accumulate" if accumulate else "overwrite")
    if kwargs.get("is_transpose") and get_nc_version() >= 3 and dst.dtype_str != "float32" \
            and dst.dtype_str == stationary.dtype_str and perf_mode is None and len(moving.shape) == 2 \
            and tuple(moving.shape) == (stationary.shape[0], stationary.shape[0]):
        # Transpose mode (NeuronCore-v3 and later): the bit-accurate PE transpose of the stationary tile,
        # the moving one being the identity; its result keeps the data's type, as nc_transpose's does.
        core.nc_transpose(dst, stationary, "tensor")
        return
    core.nc_matmul(dst, stationary, moving, mode, isa_common.perf_mode_name(perf_mode, kwargs))


def nc_matmul_mx(dst, stationary, moving, stationary_scale, moving_scale, tile_position=None, tile_size=None,
                 accumulate=None, **kwargs):
    """dst[M, N] (PSUM, float32 or bfloat16) = the MX product of stationary [P, M] and moving [P, N], packed
    x4 tiles contracting over their partitions and 4 packed values, each 32-value group dequantized by
    its E8M0 scale (NeuronCore-v4). accumulate as nc_matmul's; tile_position / tile_size: row tiling."""
    mode = "auto" if accumulate is None else ("accumulate" if accumulate else "overwrite")
    if (tile_position is None) != (tile_size is None):
        raise lang.NkiError("nkia_mx_layout", "nc_matmul_mx takes tile_position and tile_size together",
                            "pass both tile_position=(row, 0) and tile_size=(rows, 128), or neither")
    tiling = None if tile_position is None else tuple(int(x) for x in (*tile_position, *tile_size))
    core.nc_matmul_mx(dst, stationary, moving, stationary_scale, moving_scale, mode, tiling)


def quantize_mx(dst, src, dst_scale, **kwargs):
    """dst [P, F] (float8_e4m3fn_x4 / float8_e5m2_x4) and dst_scale (uint8 E8M0, 4 rows per 32-partition
    quadrant) = src [P, 4F] (bfloat16 / float16) quantized per group of 8 partitions x 4 values, on the
    Vector engine (NeuronCore-v4)."""
    core.quantize_mx(dst, src, dst_scale)


def nc_transpose(dst, data, engine=None, **kwargs):
    small = data.shape[0] <= 32 and data.shape[1] <= 32
    eng = isa_common.engine_name(engine) if engine is not None else \
        ("vector" if small and dst.buffer != "psum" else "tensor")
    if eng == "tensor":
        buffers.no_pe_transpose("nisa.nc_transpose on the Tensor engine")
    core.nc_transpose(dst, data, eng)


def tensor_reduce(dst, op, data, axis, negate=False, keepdims=False, **kwargs):
    axes = lang.reduce_axes(axis, len(data.shape))
    ndim = len(data.shape)
    # The reduced axes must be free axes that run, contiguous, to the last one (nki-spec §3.4, §4.4);
    # axis 0 and repeated axes are the instruction core's to report.
    if axes and 0 not in axes and len(set(axes)) == len(axes) and sorted(axes) != list(range(ndim - len(axes), ndim)):
        raise lang.NkiError("nkia_reduce_axes",
                            f"tensor_reduce of a {ndim}-D tile over axes {sorted(axes)}: the reduced axes must be "
                            f"the last free axes, contiguous ({list(range(ndim - len(axes), ndim))} here)",
                            "lay the tile out so that the reduced axes come last (e.g. [P, D, H] to reduce H), or "
                            "combine the slices with nisa.tensor_tensor")
    core.tensor_reduce(dst, lang.op_name(op), data, axes, bool(negate))


def tensor_tensor_scan(dst, data0, data1, initial, op0, op1, reverse0=False, reverse1=False, **kwargs):
    core.tensor_tensor_scan(dst, data0, data1, initial if operands.is_tensor(initial) else float(initial),
                            lang.op_name(op0), lang.op_name(op1), bool(reverse0), bool(reverse1))


def bn_stats(dst, data, **kwargs):
    core.bn_stats(dst, data)


def bn_aggr(dst, data, **kwargs):
    core.bn_aggr(dst, data)


def activation_reduce(dst, op, data, reduce_op, reduce_res, bias=None, scale=1.0, **kwargs):
    """activation, and reduce_res[P, 1] = the free-axis reduction of its float32 results."""
    isa_common.activation(dst, op, data, bias, scale, reduce_res, reduce_op)


def max8(dst, src, **kwargs):
    """dst[P, 8] = the 8 largest values of each partition of src, descending."""
    core.max8(dst, src)


def nc_find_index8(dst, data, vals, **kwargs):
    """dst[P, 8] (uint32) = the index of the first occurrence of each of vals[p, 0:8] in data[p]."""
    core.find_index8(dst, data, vals)


def nc_match_replace8(dst, data, vals, imm, dst_idx=None, **kwargs):
    """dst = data with the first occurrence of each of vals[p, 0:8] replaced by imm (indices to dst_idx)."""
    core.match_replace8(dst, data, vals, float(imm), dst_idx)


def nc_stream_shuffle(dst, src, shuffle_mask, **kwargs):
    """Within each 32-partition quadrant, dst partition i = src partition shuffle_mask[i] (255: keep)."""
    core.stream_shuffle(dst, src, [int(m) for m in shuffle_mask])


def range_select(dst, on_true_tile, comp_op0, comp_op1, bound0, bound1, reduce_cmd=None, reduce_res=None,
                 reduce_op=None, range_start=0, on_false_value=None, **kwargs):
    """dst = on_true where comp_op0(idx, bound0) & comp_op1(idx, bound1), idx = range_start + free index,
    else on_false_value (float32 min); the row maximum to reduce_res."""
    fill = float(on_false_value) if on_false_value is not None else float(lang.fp32.min)
    core.range_select(dst, on_true_tile, lang.op_name(comp_op0), lang.op_name(comp_op1), bound0, bound1,
                      float(range_start), fill, reduce_res)


def select_reduce(dst, predicate, on_true, on_false, reduce_res=None, reduce_cmd=None, reduce_op=None,
                  reverse_pred=False, **kwargs):
    """dst = predicate ? on_true : on_false (a number or a [P, 1] tile); the row maximum to reduce_res."""
    core.select_reduce(dst, predicate, on_true, on_false if operands.is_tensor(on_false) else float(on_false),
                       bool(reverse_pred), reduce_res)


def tensor_copy_predicated(dst, src, predicate, reverse_pred=False, **kwargs):
    """Where predicate is non-zero, dst = src (a tile or a number); elsewhere dst keeps its values."""
    core.copy_predicated(dst, src if operands.is_tensor(src) else float(src), predicate, bool(reverse_pred))


def tensor_partition_reduce(dst, op, data, **kwargs):
    """dst[1, F] = the reduction of data[P, F] across its partitions."""
    core.partition_reduce(dst, lang.op_name(op), data)


def tensor_scalar_reduce(dst, data, op0, operand0, reduce_op, reduce_res, reverse0=False, **kwargs):
    """dst = data op0 operand0, and reduce_res[P, 1] = its free-axis reduction."""
    isa_common.tensor_scalar(dst, data, op0, operand0, reverse0)
    core.tensor_reduce(reduce_res, lang.op_name(reduce_op), dst, list(range(1, len(dst.shape))), False)


def sequence_bounds(dst, segment_ids, **kwargs):
    """dst[1, 2, F] = each element's segment bounds in segment_ids[1, F] (0 = padding)."""
    core.sequence_bounds(dst, segment_ids)


def nonzero_with_count(dst, src, index_offset=0, padding_val=-1, **kwargs):
    """dst[p, :T + 1] = src[p]'s nonzero positions (+ index_offset), padding_val, then their count, on
    partitions 0, 16, ..., 112 (one per GpSimd core); the other partitions of dst are left alone."""
    core.nonzero_with_count(dst, src, int(index_offset), int(padding_val))


def local_gather(dst, src_buffer, index, num_elem_per_idx=1, num_valid_indices=None, **kwargs):
    core.local_gather(dst, src_buffer, index, int(num_elem_per_idx),
                      None if num_valid_indices is None else int(num_valid_indices))


def rng(dst, engine=None, **kwargs):
    """dst (an integer tile) = 32 random bits per element, truncated to its type; seeded per launch
    (the values are not the device PRNG's)."""
    core.rng(dst, isa_common.engine_name(engine))


def set_rng_seed(src_seeds, **kwargs):
    """The random-number generator restarts from the value of the [1, 1] tile src_seeds."""
    core.set_rng_seed(src_seeds)


def dropout(dst, data, prob, **kwargs):
    """dst = data with each element replaced by 0 with probability prob (a number or a [P, 1] tile);
    the kept elements are not rescaled."""
    core.dropout(dst, data, prob if operands.is_tensor(prob) else isa_common.scalar_operand(prob, "prob"))


def tensor_scalar_cumulative(dst, src, op0, op1, imm0, imm1=None, reduce_cmd=isa_common.reduce_cmd.reset_reduce,
                             **kwargs):
    """Per partition, along the free elements in order: reg = op1(src op0 imm0, reg); dst = reg. reg
    starts at op1's identity (reset_reduce), at imm1 (load_reduce) or where the previous
    tensor_scalar_cumulative left it (reduce)."""
    isa_common.tensor_scalar_cumulative(dst, src, op0, op1, imm0, imm1, reduce_cmd)
