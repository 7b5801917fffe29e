"""Virtual registers and dynamic loops: nisa.register_alloc / register_move / register_load /
register_store and nl.dynamic_range.

A register holds a 32-bit integer the engine sequencers use as a loop bound: a constant the kernel
moves into it, or a value it loads from a one-element tensor, known only when the kernel runs.
`nl.dynamic_range(start, stop, step)` is a loop whose bounds may be registers: the compiler emits
the body once with a branch the sequencer takes at run time.

nki-agent runs a dynamic loop over constant bounds as a sequential loop. With a bound loaded from
memory:
- a timing-only run (`nki-agent check`, `profile`) traces the body once, as the compiler compiles
  it once (its trip count is unknown, so the profile counts one iteration); the loop variable is then
  a register (NKI's loop variable is one: usable as a scalar_offset, not as a Python integer);
- a computing run refuses the loop (nkia_dynamic_loop_not_computed): running the body once per
  iteration would let the kernel's Python count the iterations, i.e. read a tensor's value while it
  is traced, which no kernel can do (docs/nki-semantics.md "Memory and values").
"""
import _nkia_core as core
from _nkia import isa_common
from _nkia.errors import NkiError


class Register:
    """A virtual register: `value` is its integer when the kernel put a constant in it, else None
    (a value loaded from memory at run time)."""

    _nkia_register = True  # recognised by .ap(scalar_offset=...)

    def __init__(self, value=None):
        self.value = value

    def __repr__(self):
        return f"<register {self.value if self.value is not None else 'loaded at run time'}>"

    def __bool__(self):
        raise NkiError("err_dynamic_control_flow_not_supported",
                       "Python control flow depends on a register, whose value is known only at run time",
                       "loop over it with nl.dynamic_range, or decide from shapes and constants")

    def __index__(self):
        if self.value is None:
            raise NkiError("err_dynamic_control_flow_not_supported",
                           "a register loaded from memory is used as a Python integer; its value is known only "
                           "at run time", "use it as a bound of nl.dynamic_range")
        return self.value


def _int(x, api, what):
    if isinstance(x, bool) or not isinstance(x, int):
        try:
            return int(x)
        except (TypeError, ValueError):
            raise NkiError("nkia_bad_operand", f"{api}: {what} must be an integer or a register, got {x!r}",
                           "pass a compile-time integer or a register from nisa.register_alloc") from None
    return x


def _register(r, api):
    if not isinstance(r, Register):
        raise NkiError("nkia_bad_operand", f"{api}: expected a register from nisa.register_alloc(), got {r!r}",
                       "allocate one with reg = nisa.register_alloc()")
    return r


def _scalar_tensor(t, api):
    shape = tuple(getattr(t, "shape", ()) or ())
    n = 1
    for d in shape:
        n *= int(d)
    if not shape or n != 1:
        raise NkiError("nkia_bad_operand", f"{api}: the tensor must hold exactly one element, got shape {list(shape)}",
                       "pass a [1, 1] (or [1]) tile or tensor")


def register_alloc(x=None):
    """A new virtual register, holding the integer x when it is given."""
    return Register(None if x is None else _int(x, "nisa.register_alloc", "x"))


def register_move(dst, src):
    """dst = src: a compile-time integer or another register."""
    dst = _register(dst, "nisa.register_move")
    dst.value = src.value if isinstance(src, Register) else _int(src, "nisa.register_move", "src")


def register_load(dst, src):
    """dst = the one value of the tensor src, read when the kernel runs."""
    dst = _register(dst, "nisa.register_load")
    _scalar_tensor(src, "nisa.register_load")
    dst.value = None


def register_store(dst, src):
    """The register's value into the one-element tensor dst."""
    src = _register(src, "nisa.register_store")
    _scalar_tensor(dst, "nisa.register_store")
    if src.value is not None:
        core.memset(dst, float(src.value), isa_common.engine_name(None))
        return
    if core.launch_computes():
        raise NkiError("nkia_dynamic_loop_not_computed",
                       "nisa.register_store of a register loaded from memory: nki-agent does not carry run-time "
                       "register values", "copy the loaded tensor itself (nisa.dma_copy / nisa.tensor_copy)")


def dynamic_range(start, stop=None, step=1):
    """A loop whose bounds may be registers (see the module docstring)."""
    from _nkia import lang  # lang imports the nl API this module is part of

    if stop is None:
        start, stop = 0, start
    bounds = [start, stop, step]
    if all(not isinstance(b, Register) or b.value is not None for b in bounds):
        r = range(*(b.value if isinstance(b, Register) else _int(b, "nl.dynamic_range", "a bound") for b in bounds))
        return lang.loop(r, False, False)
    if core.launch_computes():
        raise NkiError("nkia_dynamic_loop_not_computed",
                       "nl.dynamic_range with a bound loaded from memory (nisa.register_load): its trip count is "
                       "known only when the kernel runs, and nki-agent does not compute such loops",
                       "check the kernel with nki-agent check (it traces the body once, as the compiler compiles "
                       "it), or give the loop a compile-time bound with a mask for the tail")
    return _traced_once(lang.loop(range(1), False, False))


def _traced_once(body_loop):
    """The body of a dynamic loop traced once; its loop variable is a register read at run time (as
    NKI's is: usable as a scalar_offset, not as a Python integer)."""
    for _ in body_loop:
        yield Register(None)
