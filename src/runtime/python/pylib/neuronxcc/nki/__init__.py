"""NKI, legacy dialect (``neuronxcc.nki``), as simulated by nki-agent."""
from _nkia.kernel import (Kernel, baremetal, benchmark, jit, profile, simulate,  # noqa: F401
                          simulate_kernel, trace)

from . import compiler, isa, language, typing  # noqa: F401,E402

# `nki.tensor` names the tensor type in legacy annotations (`def k(in_tensor: nki.tensor) -> nki.tensor`).
tensor = typing.tensor
