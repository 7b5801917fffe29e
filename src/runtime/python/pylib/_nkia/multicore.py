"""The multi-core model of a launch: the two physical cores of an LNC=2 logical core, with
nisa.sendrecv and nisa.core_barrier between them, and the ranks of a replica group, which
nki.collectives connects (_nkia.collectives).

A launch of one instance runs on one NeuronCore; a launch of two instances (kernel[2]) is an LNC=2
logical core: its instances are the two physical cores, program_id 0 and 1, sharing HBM. A rank is
one such logical core (a device's, or one of several on a chip): every rank runs the whole kernel,
on its own copy of the caller's arguments, with its own shared_hbm tensors (nki/launch.h, "ranks").
The launch starts with rank 0; a collective whose replica group names more ranks grows it to them,
and those ranks start the kernel from its beginning (until they first meet, ranks do not interact,
so when they start does not matter). The caller gets rank 0's result.

Every instance of every rank (a participant: rank r, core c) runs as a greenlet on the kernel's
thread, one at a time, handing over only where the kernel synchronises: a participant that reaches a
sendrecv, a core_barrier or a collective its peers have not reached yet stops there and the next one
in turn (rank by rank, core by core, after the one that stopped) runs. The order is fixed by the
kernel alone, so a run is repeatable, and a kernel that never synchronises runs exactly as its
instances in a row. AWS's own NKI simulator runs LNC=2 as two Python threads with thread-safe
synchronisation; this is the same model with a deterministic schedule.

- sendrecv(src, dst, send_to_rank, recv_from_rank, pipe_id): between the two cores of one rank. The
  call posts src for its peer, waits for the peer's post on the same pipe, and copies the peer's src
  into its own dst with one DMA (SBUF to SBUF), then waits until the peer has taken its src (so
  neither side overwrites a tile the other has not read yet). A send to itself is a copy.
- core_barrier(data, cores=(0, 1)): neither core of the rank goes on until both have reached it as
  often.
- A participant that waits for peers which returned or failed without reaching the same point is a
  deadlock on hardware: nkia_multicore_deadlock, at the waiting call.

Each instance's own state (its loops, PSUM and SBUF spans, outputs taken) is parked in the C++ core
while another runs (Launch::park / resume), and a rank's trace with it. The cost model sees rank 0's
instructions, both cores of it in one trace, as it sees a grid's instances: on one core.
"""
import _nkia_core as core
from _nkia.errors import NkiError

try:  # Debian's python3-greenlet: stackful switching on one thread, no new thread or process
    import greenlet as _greenlet
    AVAILABLE = True
except ImportError:  # without it, instances run one after the other and synchronisation is refused
    _greenlet = None
    AVAILABLE = False

MAX_RANKS = 64  # the logical cores of a trn2 node at LNC=2: the largest replica group a launch runs


def refuse(api, why):
    """Raises the refusal of the multi-core call `api` (e.g. "nki.collectives.all_gather_v"): it `why`."""
    raise NkiError("nkia_multicore_not_modelled", f"{api} {why}, so it cannot be simulated",
                   "check the kernel in a form without it, and pass what the other ranks would send as an input")


class _Deadlock(Exception):
    """Thrown into a participant whose wait can never end; turned into nkia_multicore_deadlock at its
    call."""


class _Part:
    """One participant of the launch: instance `core` of rank `rank`."""

    def __init__(self, rank, core_index, args, kwargs):
        self.rank, self.core = rank, core_index
        self.args, self.kwargs = args, kwargs
        self.let = None
        self.parked = None      # its C++ state while another participant runs
        self.started = False
        self.done = False
        self.waiting = None     # (predicate, what) it waits on
        self.result = None
        self.meetings = {}      # how many collectives it has made over each group

    def runnable(self):
        return not self.done and (self.waiting is None or self.waiting[0]())

    def __repr__(self):
        return f"rank {self.rank} core {self.core}"


class World:
    """The schedule of one launch: its participants, what each waits for, the posts of sendrecv, the
    arrivals at core_barrier and the collectives' meetings."""

    def __init__(self, func, args, kwargs, cores):
        self.func, self.args, self.kwargs, self.cores = func, args, kwargs, cores
        self.parts = []
        self.running = None     # the running participant
        self.error = None       # the first failure, re-raised by the launch
        self.posts = {}         # sendrecv: (rank, pipe, sender core, receiver core) -> [src operand, taken]
        self.barriers = {}      # core_barrier arrivals: (rank, core) -> count
        self.meetings = {}      # collectives: key -> {rank: what it brought}
        self.grow(1)

    @property
    def ranks(self):
        return len(self.parts) // self.cores

    def grow(self, ranks):
        """Runs ranks up to `ranks` - 1 too, each from the kernel's beginning."""
        for r in range(self.ranks, ranks):
            args, kwargs = (self.args, self.kwargs) if r == 0 else _rank_arguments(self.args, self.kwargs)
            for c in range(self.cores):
                self.parts.append(_Part(r, c, args, kwargs))

    def part(self, rank, core_index):
        return self.parts[rank * self.cores + core_index]

    def wait(self, me, predicate, what):
        """Participant `me` stops until predicate() holds; the others run meanwhile."""
        if predicate():
            return
        me.waiting = (predicate, what)
        try:
            _greenlet.getcurrent().parent.switch()
        finally:
            me.waiting = None


def _rank_arguments(args, kwargs):
    """Another rank's arguments: its own copies of the tensors (the same ones in a timing-only run,
    which writes no values)."""
    if not core.launch_computes():
        return args, kwargs

    def copy(x):
        if isinstance(x, core.Tensor):
            return core.rank_argument(x)
        if isinstance(x, (list, tuple)) and any(isinstance(e, core.Tensor) for e in x):
            return type(x)(copy(e) for e in x)
        return x

    return [copy(a) for a in args], {k: copy(v) for k, v in kwargs.items()}


_current = None


def _body(world, part):
    core.begin_instance(part.core, part.rank)
    part.started = True
    try:
        part.result = world.func(*part.args, **part.kwargs)
        core.end_instance()
    finally:
        part.done = True


def run_cores(func, args, kwargs, cores):
    """Runs a launch of `cores` instances (1, or 2 for LNC=2) on as many ranks as its collectives
    name (called by the C++ launch); returns rank 0's first instance's result."""
    global _current
    world = World(func, args, kwargs, cores)
    outer, _current = _current, world
    try:
        last = -1
        while not all(p.done for p in world.parts):
            n = len(world.parts)
            ready = [i for i in ((last + 1 + k) % n for k in range(n)) if world.parts[i].runnable()]
            if not ready:  # everyone left waits for someone who will never come: a deadlock
                i = next(j for j in range(n) if not world.parts[j].done)
                _resume(world, world.parts[i])
                _run(world, world.parts[i], throw=True)
                last = i
                continue
            last = ready[0]
            _resume(world, world.parts[last])
            _run(world, world.parts[last])
        if world.error is not None:
            raise world.error
        return world.parts[0].result
    finally:
        _current = outer


def _resume(world, part):
    if part.parked is not None:
        core.resume_instance(part.parked)
        part.parked = None


def _run(world, part, throw=False):
    world.running = part
    if part.let is None:
        part.let = _greenlet.greenlet(lambda: _body(world, part))
    try:
        if throw:
            part.let.throw(_Deadlock())
        else:
            part.let.switch()
    except BaseException as e:  # the participant failed: the launch fails with the first failure
        part.done = True
        if world.error is None:
            world.error = e
        for other in world.parts:  # the others stop where they are; nothing more runs
            if not other.done and other.started:
                _resume(world, other)
                world.running = other
                try:
                    other.let.throw(_greenlet.GreenletExit())
                except BaseException:
                    pass
            other.done = True
        return
    if not part.done:
        part.parked = core.park_instance()


def current():
    """The running participant and the schedule, or (None, None) outside a scheduled launch."""
    world = _current
    if world is None or world.running is None:
        return None, None
    return world.running, world


def _rank(value, api, what):
    if not isinstance(value, int) or isinstance(value, bool):
        try:
            value = int(value)
        except (TypeError, ValueError):
            raise NkiError("nkia_bad_operand", f"{api}: {what} must be 0 or 1, got {value!r}",
                           "pass the peer's rank, e.g. 1 - nl.program_id(0)") from None
    if value not in (0, 1):
        raise NkiError("nkia_bad_operand", f"{api}: {what} must be 0 or 1 (the two cores of LNC=2), got {value}",
                       "pass the peer's rank, e.g. 1 - nl.program_id(0)")
    return value


def _deadlock(api, me, what, who=None):
    who = who or f"core {1 - me.core}"
    return NkiError("nkia_multicore_deadlock",
                    f"{api} on {me!r} waits for {what}, but {who} returned or failed without getting there: on a "
                    f"device it would wait forever",
                    "make every core and rank reach the same sendrecv / core_barrier / collective calls, in the "
                    "same order")


def _require_v3(api):
    """sendrecv and core_barrier exist from NeuronCore-v3 (trn2) on, as the NKI ISA reference states."""
    if core.target_limit("core_version") < 3:
        raise NkiError("nkia_feature_not_on_target",
                       f"'{api}' needs NeuronCore-v3 or later (the cores of an LNC=2 logical core), but the target "
                       f"is older", "select --target trn2 (or later) for an LNC=2 kernel")


def _operand_info(x):
    return getattr(x, "buffer", None), getattr(x, "dtype_str", None), tuple(getattr(x, "shape", ()))


def _lnc2(world):
    return world is not None and world.cores == 2


def sendrecv(src, dst, send_to_rank, recv_from_rank, pipe_id, dma_engine=None, name=None, **kwargs):
    """Sends src to the dst of core send_to_rank and receives core recv_from_rank's src into dst."""
    api = "nisa.sendrecv"
    _require_v3(api)
    to = _rank(send_to_rank, api, "send_to_rank")
    frm = _rank(recv_from_rank, api, "recv_from_rank")
    sb, sd, ss = _operand_info(src)
    db, dd, ds = _operand_info(dst)
    if sb != "sbuf" or db != "sbuf":
        raise NkiError("nkia_bad_operand", f"{api}: src and dst must both be in SBUF (src in {sb}, dst in {db})",
                       "stage the data in an SBUF tile first")
    if sd != dd or ss != ds:
        raise NkiError("nkia_bad_operand",
                       f"{api}: src and dst must have the same dtype and shape (src {sd}{list(ss)}, dst {dd}{list(ds)})",
                       "send a tile shaped like the one the peer receives into")
    me, world = current()
    mine_index = me.core if me is not None else 0
    if not _lnc2(world):
        if to != mine_index or frm != mine_index:
            raise NkiError("nkia_multicore_not_modelled",
                           f"{api} exchanges data with core {to if to != mine_index else frm}, but this launch is not "
                           f"one of two instances (nki-agent models LNC=2 as a launch of exactly two: program_id 0 "
                           f"and 1)", "launch the kernel as kernel[2](...) to run it on the two cores of LNC=2")
        core.dma_copy(dst, src, "")
        return
    if to == me.core and frm == me.core:
        core.dma_copy(dst, src, "")
        return
    mine = [src, False]
    world.posts[(me.rank, pipe_id, me.core, to)] = mine
    key = (me.rank, pipe_id, frm, me.core)
    try:
        world.wait(me, lambda: key in world.posts, f"core {frm}'s sendrecv on pipe {pipe_id}")
    except _Deadlock:
        raise _deadlock(api, me, f"core {frm}'s sendrecv on pipe {pipe_id}") from None
    theirs = world.posts.pop(key)
    core.dma_copy(dst, theirs[0], "")
    theirs[1] = True
    try:
        world.wait(me, lambda: mine[1], f"core {to} to receive on pipe {pipe_id}")
    except _Deadlock:
        raise _deadlock(api, me, f"core {to} to receive on pipe {pipe_id}") from None


def core_barrier(data, cores=(0, 1), engine=None, name=None, **kwargs):
    """Neither core of the rank's LNC=2 launch goes on until both have reached this barrier. A barrier
    of one core (`cores=(0)`, nki-library's LNC=1 path) has nobody to wait for."""
    api = "nisa.core_barrier"
    _require_v3(api)
    if getattr(data, "buffer", None) is None:
        raise NkiError("nkia_bad_operand", f"{api}: data must be a tensor, not {data!r}",
                       "pass the tensor both cores synchronise on")
    # The ISA reference says "data in shared HBM"; nki-library's shard-on-I MoE kernel also passes an
    # SBUF tile (its block counter), and the barrier's effect does not depend on it: any tensor is taken.
    listed = cores if isinstance(cores, (tuple, list)) else (cores,)
    ids = sorted(set(_rank(c, api, "each of cores") for c in listed))
    me, world = current()
    if ids == [0] and not _lnc2(world):
        return
    if ids != [0, 1]:
        raise NkiError("nkia_bad_operand", f"{api}: cores must be (0, 1), got {cores!r}",
                       "pass cores=(0, 1): the two cores of LNC=2")
    if not _lnc2(world):
        raise NkiError("nkia_multicore_not_modelled",
                       f"{api} waits for the other core, but this launch is not one of two instances (nki-agent "
                       f"models LNC=2 as a launch of exactly two: program_id 0 and 1)",
                       "launch the kernel as kernel[2](...) to run it on the two cores of LNC=2")
    mine, peer = (me.rank, me.core), (me.rank, 1 - me.core)
    world.barriers[mine] = world.barriers.get(mine, 0) + 1
    n = world.barriers[mine]
    try:
        world.wait(me, lambda: world.barriers.get(peer, 0) >= n, f"core {1 - me.core} at core_barrier #{n}")
    except _Deadlock:
        raise _deadlock(api, me, f"core {1 - me.core} at core_barrier #{n}") from None


def meet(api, key, members, brought):
    """A collective's meeting: participant `me` brings `brought` to the meeting `key` of the ranks
    `members` (the same core of each) and waits until every one of them has; returns what each
    brought, by rank. Ranks the launch does not run yet start now."""
    me, world = current()
    if me is None:
        raise NkiError("nkia_multicore_not_modelled",
                       f"{api} exchanges data between ranks, but this launch runs its instances one after another "
                       f"(nki-agent runs ranks for launches of one instance or of the two cores of LNC=2)",
                       "launch the kernel without a grid, or as kernel[2](...)")
    top = max(members) + 1
    if top > MAX_RANKS:
        refuse(api, f"spans {top} ranks; nki-agent runs at most {MAX_RANKS} (a trn2 node's logical cores at LNC=2)")
    world.grow(top)
    posts = world.meetings.setdefault((me.core,) + key, {})
    posts[me.rank] = brought
    missing = lambda: [r for r in members if r not in posts]  # noqa: E731
    try:
        world.wait(me, lambda: not missing(), f"ranks {missing()} at the same {api}")
    except _Deadlock:
        who = "ranks " + ", ".join(str(r) for r in missing())
        raise _deadlock(api, me, f"{who} at the same collective", who) from None
    got = {r: posts[r] for r in members}
    left = posts.setdefault("_left", set())
    left.add(me.rank)
    if len(left) == len(members):
        del world.meetings[(me.core,) + key]
    return got
