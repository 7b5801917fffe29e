"""nki.compiler / neuronxcc.nki.compiler: direct allocation and compiler directives.

Kernels that place their tiles themselves (``buffer=ncc.sbuf.mod_alloc(base_addr=...)``,
``ncc.psum.mod_alloc(base_bank=...)``, ``ncc.sbuf.alloc(func)`` / ``ncc.psum.alloc(func)``) run with
every tensor in storage of its own, so the addresses change no value; they are checked instead
(nki/placement.h in the core): each logical block's physical tile must lie inside the memory, tiles
whose bytes overlap must never be live at once, and such a kernel places all of its on-chip tensors
(no nl.sbuf / nl.psum tensors, no nl.zeros, activations with explicit bias tiles, no Tensor-engine
transposes).

Modulo allocation (nki-spec §2.2): the block index (i0, i1, ...) of a tensor with block dimensions
(blocks..., par_dim(P), F...) is taken modulo the per-dimension tile counts, linearised row-major
over the counts, and scaled: the byte address is base_addr + linear(i % num_free_tiles) * tile
bytes, the start partition base_partition + linear(i % num_par_tiles) * P, and (PSUM) the bank
base_bank + linear(i % num_bank_tiles). Empty counts mean one tile per dimension.

Directive decorators (``skip_middle_end_transformations``, ``enable_stack_allocator``) only steer
the real compiler's passes and return the kernel as it is. ``no_reorder()`` asks the scheduler to
keep a region's instructions in program order: as ``with no_reorder():``, as a loop's
``directives=no_reorder()`` or as a decorator it changes nothing here, where instructions are
traced and computed in program order already. ``force_auto_alloc`` turns automatic
allocation on for the kernel: its direct allocations are ignored (every tensor is allocated as with
nl.sbuf / nl.psum, and none of the placement rules apply).
"""
import inspect
import itertools

from _nkia import buffers
from _nkia.errors import NkiError


def _int(value, what):
    try:
        if isinstance(value, bool):
            raise TypeError
        return int(value)
    except (TypeError, ValueError):
        raise NkiError("nkia_bad_operand", f"{what} must be an integer, got {value!r}",
                       "give allocation addresses, banks, partitions and tile counts as Python ints") from None


def _counts(counts, ndim, what):
    """A num_*_tiles tuple for `ndim` block dimensions: one count per dimension (1 where missing)."""
    if isinstance(counts, int):
        counts = (counts,)
    counts = [_int(c, what) for c in (counts or ())]
    if any(c < 1 for c in counts):
        raise NkiError("nkia_bad_operand", f"{what} must hold positive tile counts, got {tuple(counts)}",
                       "give each block dimension a count of 1 or more")
    return (counts + [1] * ndim)[:ndim]


def _modulo(base, counts, scale, idx):
    linear = 0
    for i, n in zip(idx, counts):
        linear = linear * n + i % n
    return base + linear * scale


def _blocks(block_shape):
    return itertools.product(*[range(n) for n in block_shape])


def _sbuf_mod_alloc(base_addr, base_partition, num_par_tiles, num_free_tiles):
    def place(block_shape, partitions, tile_bytes):
        par = _counts(num_par_tiles, len(block_shape), "num_par_tiles")
        free = _counts(num_free_tiles, len(block_shape), "num_free_tiles")
        return [(-1, _modulo(base_partition, par, partitions, idx), _modulo(base_addr, free, tile_bytes, idx))
                for idx in _blocks(block_shape)]
    return place


def _psum_mod_alloc(base_bank, base_addr, base_partition, num_bank_tiles, num_par_tiles, num_free_tiles):
    def place(block_shape, partitions, tile_bytes):
        banks = _counts(num_bank_tiles, len(block_shape), "num_bank_tiles")
        par = _counts(num_par_tiles, len(block_shape), "num_par_tiles")
        free = _counts(num_free_tiles, len(block_shape), "num_free_tiles")
        return [(_modulo(base_bank, banks, 1, idx), _modulo(base_partition, par, partitions, idx),
                 _modulo(base_addr, free, tile_bytes, idx)) for idx in _blocks(block_shape)]
    return place


def _takes_names(func, names):
    """Whether func has parameters of all the names `names` (a functools.partial: those it leaves open)."""
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return False
    named = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return set(names) <= named


def _callback(func, psum):
    """ncc.sbuf.alloc(func) / ncc.psum.alloc(func): func(idx=block index, pdim_size=partitions,
    fdim_size=tile bytes) gives (start partition, byte address), or for PSUM (bank, start partition,
    byte address); a function without those parameter names is called with the three positionally."""
    want = 3 if psum else 2
    form = "(bank, start_partition, byte_addr)" if psum else "(start_partition, byte_addr)"

    by_name = _takes_names(func, ("idx", "pdim_size", "fdim_size"))

    def place(block_shape, partitions, tile_bytes):
        out = []
        for idx in _blocks(block_shape):
            if by_name:  # as the compiler calls it: a functools.partial binding other names by keyword works
                r = func(idx=tuple(idx), pdim_size=partitions, fdim_size=tile_bytes)
            else:
                r = func(tuple(idx), partitions, tile_bytes)
            if not isinstance(r, (tuple, list)) or len(r) != want:
                raise NkiError("nkia_bad_operand",
                               f"the allocation function returned {r!r} for block {tuple(idx)}; it must return {form}",
                               f"return a tuple of {want} integers {form}")
            vals = [_int(v, "an allocation function's result") for v in r]
            out.append(tuple(vals) if psum else (-1, vals[0], vals[1]))
        return out
    return place


class _Allocator:
    """ncc.sbuf / ncc.psum: each allocation API gives the buffer itself, for nl.ndarray(buffer=...)."""

    def __init__(self, buffer):
        self._buffer = buffer

    def mod_alloc(self, *args, base_addr=None, base_partition=0, num_par_tiles=(), num_free_tiles=(), base_bank=None,
                  num_bank_tiles=(), **kwargs):
        if base_addr is None:
            base_addr = kwargs.get("byte_addr", args[0] if args else 0)
        base_addr = _int(base_addr, "base_addr")
        base_partition = _int(base_partition, "base_partition")
        if str(self._buffer) == "psum":
            if base_bank is None:
                raise NkiError("nkia_bad_operand", "ncc.psum.mod_alloc needs base_bank",
                               "write ncc.psum.mod_alloc(base_bank=<bank 0-7>)")
            placer = _psum_mod_alloc(_int(base_bank, "base_bank"), base_addr, base_partition, num_bank_tiles,
                                     num_par_tiles, num_free_tiles)
        else:
            placer = _sbuf_mod_alloc(base_addr, base_partition, num_par_tiles, num_free_tiles)
        return buffers.DirectBuffer(self._buffer, placer)

    def alloc(self, func=None, *args, **kwargs):
        if not callable(func):
            raise NkiError("nkia_bad_operand", f"ncc.{self._buffer}.alloc takes an allocation function",
                           "pass a function (block index, partitions, tile bytes) -> the tile's place, or use "
                           "mod_alloc")
        return buffers.DirectBuffer(self._buffer, _callback(func, str(self._buffer) == "psum"))

    def auto_alloc(self, *args, **kwargs):
        return self._buffer

    def __str__(self):
        return str(self._buffer)


sbuf = _Allocator(buffers.sbuf)
psum = _Allocator(buffers.psum)


def _directive(*args, **kwargs):
    """A decorator used bare (@d) or with arguments (@d(...)): the function, unchanged."""
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return args[0]
    return lambda f: f


def force_auto_alloc(func=None):
    """@force_auto_alloc (above or below @nki.jit): the kernel's direct allocations are ignored."""
    if func is None:
        return force_auto_alloc
    target = getattr(func, "func", func)  # a Kernel (nki.jit applied first) or the plain function
    target._nkia_force_auto_alloc = True
    return func


skip_middle_end_transformations = _directive
enable_stack_allocator = _directive
disable_stack_allocator = _directive


class _NoReorder:
    """What no_reorder() gives: a context manager, a loop directive and a decorator, all inert."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, func):
        return func


def no_reorder(*args, **kwargs):
    """nki.compiler.no_reorder() / nl.no_reorder(): keep the region in program order (as it is here).
    Used bare as a decorator (@no_reorder) it returns the function."""
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return args[0]
    return _NoReorder()
