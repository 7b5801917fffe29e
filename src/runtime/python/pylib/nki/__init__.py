"""NKI, current dialect (``import nki``), as simulated by nki-agent."""
from _nkia.kernel import (Kernel, baremetal, benchmark, jit, profile, simulate,  # noqa: F401
                          simulate_kernel, trace)

from . import compiler, isa, language, typing  # noqa: F401,E402
