"""The multi-core primitives of both dialects: nisa.sendrecv and nisa.core_barrier between the two
logical cores of an LNC=2 launch, and the nki.collectives operations, which are refused.

A launch of two instances (kernel[2]) is an LNC=2 logical core: its instances are the two physical
cores, program_id 0 and 1, sharing HBM. They run side by side as two greenlets on the kernel's
thread, one at a time, and hand over only where the kernel synchronises them: a core that reaches
a sendrecv or a core_barrier its peer has not reached yet stops there and the other one runs. The
order is fixed by the kernel alone (core 0 first, a hand-over only at a synchronisation point), so
a run is repeatable and a kernel that never synchronises runs exactly as two instances in a row.
AWS's own NKI simulator runs LNC=2 as two Python threads with thread-safe synchronisation; this is
the same model with a deterministic schedule.

- sendrecv(src, dst, send_to_rank, recv_from_rank, pipe_id): the call posts src for its peer, waits
  for the peer's post on the same pipe, and copies the peer's src into its own dst with one DMA
  (SBUF to SBUF), then waits until the peer has taken its src (so neither side overwrites a tile
  the other has not read yet). A send to itself is a copy.
- core_barrier(data, cores=(0, 1)): neither core goes on until both have reached it as often.
- A core that waits for a peer which returned or failed without reaching the same point is a
  deadlock on hardware: nkia_multicore_deadlock, at the waiting call.

Each instance's own state (its loops, PSUM and SBUF spans, outputs taken) is parked in the C++ core
while the other runs (Launch::park / resume). The cost model sees both cores' instructions in one
trace, as it sees a grid's instances: on one core.

nki.collectives (ranks of a replica group, across devices) stays refused with
nkia_multicore_not_modelled, naming the API.
"""
import _nkia_core as core
from _nkia.errors import NkiError

try:  # Debian's python3-greenlet: stackful switching on one thread, no new thread or process
    import greenlet as _greenlet
    AVAILABLE = True
except ImportError:  # without it, two instances run one after the other and synchronisation is refused
    _greenlet = None
    AVAILABLE = False


def refuse(api):
    """Raises the refusal of the multi-core call `api` (e.g. "nki.collectives.all_reduce")."""
    raise NkiError("nkia_multicore_not_modelled",
                   f"{api} exchanges data with, or waits for, other NeuronCores; nki-agent models the two "
                   f"logical cores of an LNC=2 launch (kernel[2]) but not the ranks of a replica group, so "
                   f"{api} cannot be simulated",
                   "check the kernel in its single-rank form and pass what the other ranks would send as an input")


def refusing(api):
    """A function with any signature that refuses as `api` when called."""
    def call(*args, **kwargs):
        refuse(api)
    call.__name__ = api.rsplit(".", 1)[-1]
    call.__doc__ = f"{api}: refused (nkia_multicore_not_modelled); replica groups are not simulated."
    return call


class _Deadlock(Exception):
    """Thrown into a core whose wait can never end; turned into nkia_multicore_deadlock at its call."""


class _Cores:
    """The schedule of one LNC=2 launch: which core runs, what each one waits for, the posts of
    sendrecv and the arrivals at core_barrier."""

    def __init__(self):
        self.parked = [None, None]    # each core's C++ state while the other runs
        self.started = [False, False]
        self.done = [False, False]
        self.waiting = [None, None]   # (predicate, what) a blocked core waits on
        self.running = None
        self.posts = {}               # (pipe, sender, receiver) -> [src operand, taken]
        self.barriers = [0, 0]        # core_barrier arrivals per core
        self.results = [None, None]
        self.error = None             # the first failure, re-raised by the launch

    def runnable(self, i):
        if self.done[i]:
            return False
        w = self.waiting[i]
        return w is None or w[0]()

    def wait(self, i, predicate, what):
        """Core i stops until predicate() holds; the other core runs meanwhile."""
        if predicate():
            return
        self.waiting[i] = (predicate, what)
        try:
            _greenlet.getcurrent().parent.switch()
        finally:
            self.waiting[i] = None


_current = None


def _body(cores, i, func, args, kwargs):
    core.begin_instance(i)
    cores.started[i] = True
    try:
        cores.results[i] = func(*args, **kwargs)
        core.end_instance()
    finally:
        cores.done[i] = True


def run_two_cores(func, args, kwargs):
    """Runs the two instances of an LNC=2 launch (called by the C++ launch); returns core 0's result."""
    global _current
    cores = _Cores()
    outer, _current = _current, cores
    try:
        lets = [_greenlet.greenlet(lambda i=i: _body(cores, i, func, args, kwargs)) for i in (0, 1)]
        while not all(cores.done):
            ready = [i for i in (0, 1) if cores.runnable(i)]
            if not ready:  # both wait for each other, or for a core that has finished: a deadlock
                i = next(j for j in (0, 1) if not cores.done[j])
                _resume(cores, i)
                _run(cores, lets, i, throw=True)
                continue
            # Core 0 first; after a hand-over, the core that has waited longest (the other one).
            i = ready[0] if cores.running is None or len(ready) == 1 else 1 - cores.running
            _resume(cores, i)
            _run(cores, lets, i)
        if cores.error is not None:
            raise cores.error
        return cores.results[0]
    finally:
        _current = outer


def _resume(cores, i):
    if cores.parked[i] is not None:
        core.resume_instance(cores.parked[i])
        cores.parked[i] = None


def _run(cores, lets, i, throw=False):
    cores.running = i
    try:
        if throw:
            lets[i].throw(_Deadlock())
        else:
            lets[i].switch()
    except BaseException as e:  # the core failed: the launch fails with the first failure
        cores.done[i] = True
        if cores.error is None:
            cores.error = e
        other = 1 - i
        if not cores.done[other] and cores.started[other]:
            _resume(cores, other)
            cores.running = other
            try:
                lets[other].throw(_greenlet.GreenletExit())  # unwinds its loops; nothing more runs
            except BaseException:
                pass
            cores.done[other] = True
        cores.done[other] = True
        return
    if not cores.done[i]:
        cores.parked[i] = core.park_instance()


def _me(api):
    """The running core's index and the schedule, or None outside a two-instance launch."""
    cores = _current
    if cores is None or cores.running is None:
        return None, None
    return cores.running, cores


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


def _deadlock(api, me, what):
    return NkiError("nkia_multicore_deadlock",
                    f"{api} on core {me} waits for {what}, but core {1 - me} returned or failed without getting "
                    f"there: on a device both cores would wait forever",
                    "make both cores reach the same sendrecv / core_barrier calls, in the same order")


def _require_v3(api):
    """sendrecv and core_barrier exist from NeuronCore-v3 (trn2) on, as the NKI ISA reference states."""
    if core.target_limit("core_version") < 3:
        raise NkiError("nkia_feature_not_on_target",
                       f"'{api}' needs NeuronCore-v3 or later (the cores of an LNC=2 logical core), but the target "
                       f"is older", "select --target trn2 (or later) for an LNC=2 kernel")


def _operand_info(x):
    return getattr(x, "buffer", None), getattr(x, "dtype_str", None), tuple(getattr(x, "shape", ()))


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
    me, cores = _me(api)
    if me is None:
        if to != 0 or frm != 0:
            raise NkiError("nkia_multicore_not_modelled",
                           f"{api} exchanges data with core {to if to else frm}, but this launch is not one of two instances "
                           f"(nki-agent models LNC=2 as a launch of exactly two: program_id 0 and 1)",
                           "launch the kernel as kernel[2](...) to run it on the two cores of LNC=2")
        core.dma_copy(dst, src, "")
        return
    if to == me and frm == me:
        core.dma_copy(dst, src, "")
        return
    mine = [src, False]
    cores.posts[(pipe_id, me, to)] = mine
    key = (pipe_id, frm, me)
    try:
        cores.wait(me, lambda: key in cores.posts, f"core {frm}'s sendrecv on pipe {pipe_id}")
    except _Deadlock:
        raise _deadlock(api, me, f"core {frm}'s sendrecv on pipe {pipe_id}") from None
    theirs = cores.posts.pop(key)
    core.dma_copy(dst, theirs[0], "")
    theirs[1] = True
    try:
        cores.wait(me, lambda: mine[1], f"core {to} to receive on pipe {pipe_id}")
    except _Deadlock:
        raise _deadlock(api, me, f"core {to} to receive on pipe {pipe_id}") from None


def core_barrier(data, cores=(0, 1), engine=None, name=None, **kwargs):
    """Neither core of the LNC=2 launch goes on until both have reached this barrier. A barrier of
    one core (`cores=(0)`, nki-library's LNC=1 path) has nobody to wait for."""
    api = "nisa.core_barrier"
    _require_v3(api)
    if getattr(data, "buffer", None) is None:
        raise NkiError("nkia_bad_operand", f"{api}: data must be a tensor, not {data!r}",
                       "pass the tensor both cores synchronise on")
    # The ISA reference says "data in shared HBM"; nki-library's shard-on-I MoE kernel also passes an
    # SBUF tile (its block counter), and the barrier's effect does not depend on it: any tensor is taken.
    listed = cores if isinstance(cores, (tuple, list)) else (cores,)
    ids = sorted(set(_rank(c, api, "each of cores") for c in listed))
    me, sched = _me(api)
    if ids == [0] and me is None:
        return
    if ids != [0, 1]:
        raise NkiError("nkia_bad_operand", f"{api}: cores must be (0, 1), got {cores!r}",
                       "pass cores=(0, 1): the two cores of LNC=2")
    if me is None:
        raise NkiError("nkia_multicore_not_modelled",
                       f"{api} waits for the other core, but this launch is not one of two instances (nki-agent "
                       f"models LNC=2 as a launch of exactly two: program_id 0 and 1)",
                       "launch the kernel as kernel[2](...) to run it on the two cores of LNC=2")
    sched.barriers[me] += 1
    n = sched.barriers[me]
    try:
        sched.wait(me, lambda: sched.barriers[1 - me] >= n, f"core {1 - me} at core_barrier #{n}")
    except _Deadlock:
        raise _deadlock(api, me, f"core {1 - me} at core_barrier #{n}") from None
