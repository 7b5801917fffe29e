"""The multi-core primitives of both dialects: nisa.sendrecv, nisa.core_barrier and the
nki.collectives operations. Each one exchanges data with, or waits for, another NeuronCore (the
second core of an LNC=2 logical core, or the ranks of a replica group), and nki-agent runs a
launch's instances one after another on one simulated core: every call is refused with
nkia_multicore_not_modelled, naming the API, instead of being simulated wrongly. Nothing here
issues an instruction or touches a tensor; the configuration objects (ReplicaGroup) are plain.
"""
from _nkia.errors import NkiError


def refuse(api):
    """Raises the refusal of the multi-core call `api` (e.g. "nisa.sendrecv")."""
    raise NkiError("nkia_multicore_not_modelled",
                   f"{api} exchanges data with, or waits for, another NeuronCore; nki-agent runs a launch's "
                   f"instances one after another on one core and does not model LNC=2 or a replica group, so "
                   f"{api} cannot be simulated",
                   "check the kernel in its single-core form: launch it without the LNC=2 grid and pass the part "
                   "the other core would send as an input")


def refusing(api):
    """A function with any signature that refuses as `api` when called."""
    def call(*args, **kwargs):
        refuse(api)
    call.__name__ = api.rsplit(".", 1)[-1]
    call.__doc__ = f"{api}: refused (nkia_multicore_not_modelled); the simulator has one core."
    return call


sendrecv = refusing("nisa.sendrecv")
core_barrier = refusing("nisa.core_barrier")
