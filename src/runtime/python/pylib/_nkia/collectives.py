"""nki.collectives: collective communication between the ranks of a replica group.

Every rank runs the kernel (_nkia.multicore: a launch grows to the ranks its collectives name, each on
its own copy of the caller's arguments; the caller gets rank 0's result). A collective is a meeting
of the ranks of one group of its replica group — the same instance (core) of each rank under LNC=2,
which is nki-agent's reading: each physical core drives its own DMA queues, and nki-library's LNC=2
collectives give each core its own half of the data. Each rank brings a copy of its sources as they
are when it reaches the call; once all have, each receives its part into its own destinations
(nki/isa_collective.h: DMAs in its trace; the links between cores or devices are not priced).
Meetings are matched in order per group: the k-th collective a rank makes over a group meets the
k-th of every other rank of it, and they must be the same operation.

Reductions (nl.add, nl.maximum, nl.minimum) combine the ranks' values in the group's order, in
float32, rounded into the destination's type after each step, so every rank gets the same bits.

all_gather_v and all_to_all_v read their element counts from a tensor when the kernel runs; they
are refused (nkia_multicore_not_modelled).
"""
from _nkia import lang
from _nkia.errors import NkiError
from _nkia.multicore import current, meet, refuse
from _nkia.registers import Register
import _nkia_core as core

_REDUCTIONS = ("add", "maximum", "minimum")


class RunTimeRegister(Register):
    """A register whose value the device sets when the kernel runs (a rank number): nki-agent knows it
    and uses it where a register goes (a scalar_offset), but, as on a device, where the kernel's
    Python would branch on it, it is unknown (the compiler compiles one program for every rank)."""

    __hash__ = object.__hash__

    def _unknown(self, *_):
        raise NkiError("err_dynamic_control_flow_not_supported",
                       "a rank number (nki.collectives) is used as a Python value; it is a register set when the "
                       "kernel runs, the same program running on every rank",
                       "use it as a scalar_offset (tensor.ap(..., scalar_offset=...)) to select each rank's data, "
                       "e.g. from a table indexed by rank")

    __index__ = __int__ = __bool__ = _unknown
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _unknown
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _unknown
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = _unknown


# ---- replica groups -------------------------------------------------------------------------------

def groups_of(replica_group, api):
    """The groups of a ReplicaGroup (or a plain list of rank lists): a tuple of tuples of ranks,
    checked (non-negative integers, no rank twice)."""
    raw = getattr(replica_group, "groups", replica_group)
    try:
        groups = tuple(tuple(int(r) for r in g) for g in raw)
    except (TypeError, ValueError):
        raise NkiError("nkia_bad_operand", f"{api}: replica_group must list groups of rank numbers, got "
                       f"{replica_group!r}", "pass ReplicaGroup([[0, 1, 2, 3]])") from None
    seen = set()
    for g in groups:
        if not g:
            raise NkiError("nkia_bad_operand", f"{api}: replica_group {list(map(list, groups))} has an empty group",
                           "list at least one rank in every group")
        for r in g:
            if r < 0 or r in seen:
                raise NkiError("nkia_bad_operand",
                               f"{api}: replica_group {list(map(list, groups))} names rank {r} "
                               f"{'twice' if r in seen else '(ranks are non-negative)'}",
                               "give each rank once, in one group (groups do not overlap)")
            seen.add(r)
    if not groups:
        raise NkiError("nkia_bad_operand", f"{api}: replica_group has no groups", "pass ReplicaGroup([[0, 1]])")
    return groups


def _my_group(groups, api):
    rank = core.launch_rank()
    for g in groups:
        if rank in g:
            return g, g.index(rank)
    raise NkiError("nkia_bad_operand",
                   f"{api}: rank {rank} runs the kernel but is in no group of the replica group "
                   f"{list(map(list, groups))}", "put every rank the kernel runs on in one group")


def _all_ranks(groups):
    return sorted(r for g in groups for r in g)


# ---- operands -------------------------------------------------------------------------------------

def _tensors(xs, api, what):
    if not isinstance(xs, (list, tuple)) or not xs:
        raise NkiError("nkia_bad_operand", f"{api}: {what} must be a non-empty list of tensors, got {xs!r}",
                       f"pass {what}=[tensor]")
    for x in xs:
        if getattr(x, "buffer", None) is None:
            raise NkiError("nkia_bad_operand", f"{api}: {what} must hold tensors, got {x!r}", f"pass {what}=[tensor]")
    return list(xs)


def _memories(api, srcs, dsts, hbm_only=False):
    """The rules of the collectives' memories (the nki.collectives reference): HBM or SBUF, never
    mixed; several tensors (coalesced) only in HBM; some operations in HBM only."""
    on_chip = [x.buffer in ("sbuf", "psum") for x in srcs + dsts]
    if any(x.buffer == "psum" for x in srcs + dsts):
        raise NkiError("err_unsupported_memory", f"{api}: collectives move HBM or SBUF tensors, not PSUM tiles",
                       "copy the PSUM tile to SBUF first")
    if any(on_chip) and not all(on_chip):
        raise NkiError("nkia_bad_operand", f"{api}: sources and destinations must all be in HBM or all in SBUF",
                       "stage them in one memory")
    if all(on_chip):
        if hbm_only:
            raise NkiError("nkia_bad_operand", f"{api} moves HBM tensors only (SBUF is not supported)",
                           "allocate the sources and destinations in HBM (nl.shared_hbm)")
        if len(srcs) > 1 or len(dsts) > 1:
            raise NkiError("nkia_bad_operand", f"{api}: several tensors at once (coalesced) only in HBM",
                           "make one call per SBUF tensor")


def _pairs(api, srcs, dsts):
    if len(srcs) != len(dsts):
        raise NkiError("nkia_bad_operand", f"{api}: {len(srcs)} sources but {len(dsts)} destinations",
                       "give one destination per source")


def _operands(api, srcs, dsts, hbm_only=False):
    """The source and destination lists of a collective, checked: tensors, one destination per
    source, their memories."""
    srcs, dsts = _tensors(srcs, api, "srcs"), _tensors(dsts, api, "dsts")
    _pairs(api, srcs, dsts)
    _memories(api, srcs, dsts, hbm_only)
    return srcs, dsts


def _op(op, api):
    name = lang.op_name(op)
    if name not in _REDUCTIONS:
        raise NkiError("nkia_unsupported_operator", f"{api} reduces with nl.add, nl.maximum or nl.minimum, not {name}",
                       "pass op=nl.add")
    return name


def _dim(d, srcs, api):
    if isinstance(d, bool) or not isinstance(d, int) or any(not 0 <= d < len(s.shape) for s in srcs):
        raise NkiError("nkia_bad_operand", f"{api}: collective_dim {d!r} is not a dimension of the sources",
                       "pass collective_dim=0")
    return d


def _chunk(t, dim, j, n):
    """Part j of n of t along dim."""
    size = t.shape[dim] // n
    return t[(slice(None),) * dim + (slice(j * size, (j + 1) * size),)]


def _check_split(api, whole, part, dim, n, what):
    """whole is n parts of part's shape along dim."""
    ws, ps = tuple(whole.shape), tuple(part.shape)
    want = ps[:dim] + (ps[dim] * n,) + ps[dim + 1:]
    if len(ws) != len(ps) or ws != want:
        raise NkiError("err_store_dst_shape_smaller_than_other_shape",
                       f"{api}: over {n} ranks along dimension {dim}, {what} must be {list(want)}, got {list(ws)}",
                       f"size {what} {n} times the other side along collective_dim")


def _meeting(api, kind, group, srcs):
    """Meets the group with copies of srcs; returns {rank: [copies]}, checked to be the same call."""
    me_rank = core.launch_rank()
    me, _ = current()
    key = (group, me.meetings.get(group, 0)) if me is not None else (group, 0)
    if me is not None:
        me.meetings[group] = key[1] + 1
    brought = (kind, [core.collective_snapshot(s) for s in srcs])
    got = meet(api, key, group, brought)
    for r, (k, parts) in got.items():
        if k != kind or len(parts) != len(srcs):
            raise NkiError("nkia_multicore_deadlock",
                           f"{api} on rank {me_rank} meets rank {r}'s {k} with {len(parts)} tensors as the same "
                           f"collective: on a device the ranks would wait for each other forever",
                           "make every rank of the group make the same collective calls, in the same order")
    return {r: parts for r, (_, parts) in got.items()}


# ---- the operations -------------------------------------------------------------------------------

def all_reduce(srcs, dsts, replica_group, op, priority=None, name=None):
    api = "nki.collectives.all_reduce"
    srcs, dsts = _operands(api, srcs, dsts)
    red = _op(op, api)
    group, _ = _my_group(groups_of(replica_group, api), api)
    got = _meeting(api, "all_reduce", group, srcs)
    for i, (s, d) in enumerate(zip(srcs, dsts)):
        for k, r in enumerate(group):
            core.collective_receive(d, got[r][i], s, red if k else "")


def all_gather(srcs, dsts, replica_group, collective_dim, priority=None, name=None):
    api = "nki.collectives.all_gather"
    srcs, dsts = _operands(api, srcs, dsts)
    dim = _dim(collective_dim, srcs, api)
    group, _ = _my_group(groups_of(replica_group, api), api)
    n = len(group)
    for s, d in zip(srcs, dsts):
        _check_split(api, d, s, dim, n, "each destination")
    got = _meeting(api, "all_gather", group, srcs)
    for i, (s, d) in enumerate(zip(srcs, dsts)):
        for k, r in enumerate(group):
            core.collective_receive(_chunk(d, dim, k, n), got[r][i], s, "")


def reduce_scatter(srcs, dsts, replica_group, collective_dim, op, priority=None, name=None):
    api = "nki.collectives.reduce_scatter"
    srcs, dsts = _operands(api, srcs, dsts)
    dim = _dim(collective_dim, srcs, api)
    red = _op(op, api)
    group, pos = _my_group(groups_of(replica_group, api), api)
    n = len(group)
    for s, d in zip(srcs, dsts):
        _check_split(api, s, d, dim, n, "each source")
    got = _meeting(api, "reduce_scatter", group, srcs)
    for i, (s, d) in enumerate(zip(srcs, dsts)):
        mine = _chunk(s, dim, pos, n)
        for k, r in enumerate(group):
            core.collective_receive(d, _chunk(got[r][i], dim, pos, n), mine, red if k else "")


def all_to_all(srcs, dsts, replica_group, collective_dim, priority=None, name=None):
    api = "nki.collectives.all_to_all"
    srcs, dsts = _operands(api, srcs, dsts, hbm_only=True)
    dim = _dim(collective_dim, srcs, api)
    group, pos = _my_group(groups_of(replica_group, api), api)
    n = len(group)
    for s, d in zip(srcs, dsts):
        if tuple(s.shape) != tuple(d.shape) or s.shape[dim] % n:
            raise NkiError("err_store_dst_shape_smaller_than_other_shape",
                           f"{api}: over {n} ranks, each source and destination must have one shape whose dimension "
                           f"{dim} splits into {n} parts, got {list(s.shape)} and {list(d.shape)}",
                           f"give sources and destinations of one shape, dimension {dim} a multiple of {n}")
    got = _meeting(api, "all_to_all", group, srcs)
    for i, (s, d) in enumerate(zip(srcs, dsts)):
        for k, r in enumerate(group):
            core.collective_receive(_chunk(d, dim, k, n), _chunk(got[r][i], dim, pos, n), _chunk(s, dim, k, n), "")


def collective_permute(srcs, dsts, source_target_pairs, priority=None, name=None):
    api = "nki.collectives.collective_permute"
    srcs, dsts = _operands(api, srcs, dsts, hbm_only=True)
    if len(srcs) != 1:
        raise NkiError("nkia_bad_operand", f"{api} takes exactly one source and one destination",
                       "make one call per tensor")
    try:
        pairs = [(int(a), int(b)) for a, b in source_target_pairs]
    except (TypeError, ValueError):
        raise NkiError("nkia_bad_operand", f"{api}: source_target_pairs must be (source, target) rank pairs, got "
                       f"{source_target_pairs!r}", "pass [(0, 1), (1, 0)]") from None
    if not pairs or any(a < 0 or b < 0 for a, b in pairs) or len({b for _, b in pairs}) != len(pairs):
        raise NkiError("nkia_bad_operand", f"{api}: source_target_pairs {pairs} must be non-negative ranks, each "
                       "target once", "give every target rank one source")
    members = tuple(sorted({r for p in pairs for r in p}))
    rank = core.launch_rank()
    if rank not in members:
        return
    got = _meeting(api, "collective_permute", members, srcs)
    for a, b in pairs:
        if b == rank:
            core.collective_receive(dsts[0], got[a][0], srcs[0], "")


def _by_channel(xs, api, what, channels):
    if not isinstance(xs, (list, tuple)) or len(xs) != channels:
        raise NkiError("nkia_bad_operand", f"{api}: {what} must hold one list per channel ({channels}), got {xs!r}",
                       "pass one [tensor] per channel id")
    out = []
    for inner in xs:
        ts = _tensors(inner, api, what)
        if len(ts) != 1:
            raise NkiError("nkia_bad_operand", f"{api}: each channel of {what} holds exactly one tensor",
                           "pass [[t0], [t1], ...]")
        out.append(ts[0])
    return out


def _channels(channel_ids, api):
    ids = list(channel_ids)
    if ids != list(range(len(ids))) or not ids:
        raise NkiError("nkia_bad_operand", f"{api}: channel_ids must be consecutive from 0, got {channel_ids!r}",
                       "pass channel_ids=[0, 1, ...]")
    return len(ids)


def _ring(groups, api, srcs_lists, dsts, kind, op=""):
    """Each rank receives its ring predecessor's sources (combined by op when there are two lists)."""
    group, pos = _my_group(groups, api)
    pred = group[(pos - 1) % len(group)]
    flat = [s for lst in srcs_lists for s in lst]
    got = _meeting(api, kind, group, flat)
    c = len(dsts)
    for ch, d in enumerate(dsts):
        for k in range(len(srcs_lists)):
            core.collective_receive(d, got[pred][k * c + ch], srcs_lists[k][ch], op if k else "")


def collective_permute_implicit(srcs_by_channel, dsts_by_channel, replica_group, channel_ids=(0,), priority=None,
                                name=None):
    api = "nki.collectives.collective_permute_implicit"
    n = _channels(channel_ids, api)
    srcs = _by_channel(srcs_by_channel, api, "srcs_by_channel", n)
    dsts = _by_channel(dsts_by_channel, api, "dsts_by_channel", n)
    _memories(api, srcs[:1], dsts[:1])
    _ring(groups_of(replica_group, api), api, [srcs], dsts, "collective_permute_implicit")


def collective_permute_implicit_reduce(srcs0_by_channel, srcs1_by_channel, dsts_by_channel, replica_group, op,
                                       channel_ids=(0,), priority=None, name=None):
    api = "nki.collectives.collective_permute_implicit_reduce"
    n = _channels(channel_ids, api)
    srcs0 = _by_channel(srcs0_by_channel, api, "srcs0_by_channel", n)
    srcs1 = _by_channel(srcs1_by_channel, api, "srcs1_by_channel", n)
    dsts = _by_channel(dsts_by_channel, api, "dsts_by_channel", n)
    _memories(api, srcs0[:1] + srcs1[:1], dsts[:1])
    _ring(groups_of(replica_group, api), api, [srcs0, srcs1], dsts, "collective_permute_implicit_reduce",
          _op(op, api))


def collective_permute_implicit_current_processing_rank_id(iteration_id, replica_group, channel_id=0, name=None):
    """The rank whose data a ring's iteration `iteration_id` processes: this rank's own at 0, then its
    predecessors', as a register holding the rank's position in its group (what nki-library's ring
    kernels index their [ranks, ...] results with, for any number of groups)."""
    api = "nki.collectives.collective_permute_implicit_current_processing_rank_id"
    group, pos = _my_group(groups_of(replica_group, api), api)
    if isinstance(iteration_id, Register):
        if iteration_id.value is None:
            if core.launch_computes():
                raise NkiError("nkia_dynamic_loop_not_computed",
                               f"{api} of a loop variable loaded at run time: nki-agent does not carry run-time "
                               "register values", "loop with nl.sequential_range over a compile-time count")
            return Register(None)
        iteration_id = iteration_id.value
    try:
        it = int(iteration_id)
    except (TypeError, ValueError):
        raise NkiError("nkia_bad_operand", f"{api}: iteration_id must be an integer, got {iteration_id!r}",
                       "pass the ring step (the loop counter)") from None
    return RunTimeRegister((pos - it) % len(group))


def rank_id(name=None):
    """This rank's number, as a register."""
    return RunTimeRegister(core.launch_rank())


def all_gather_v(*args, **kwargs):
    refuse("nki.collectives.all_gather_v", "takes its element counts from a tensor when the kernel runs, which "
           "nki-agent does not model")


def all_to_all_v(*args, **kwargs):
    refuse("nki.collectives.all_to_all_v", "takes its element counts from a tensor when the kernel runs, which "
           "nki-agent does not model")
