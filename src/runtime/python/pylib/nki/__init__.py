"""NKI, current dialect (``import nki``), as simulated by nki-agent. ``nki.dtype`` is the type of
the nl dtypes, as kernels and their config objects use it in annotations."""
from _nkia.dtypes import dtype  # noqa: F401
from _nkia.kernel import (Kernel, baremetal, benchmark, jit, profile, simulate,  # noqa: F401
                          simulate_kernel, trace)

from . import collectives, compiler, isa, language, typing  # noqa: F401,E402
