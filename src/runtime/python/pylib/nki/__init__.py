"""NKI, current dialect (``import nki``), as simulated by nki-agent. ``nki.dtype`` is the type of
the nl dtypes, as kernels and their config objects use it in annotations, and the namespace of the
dtypes themselves, as test helpers import it (``import nki.dtype as nt; nt.float8_e4m3``)."""
import sys as _sys

from _nkia import dtypes as _dtypes
from _nkia.dtypes import dtype  # noqa: F401

for _name in _dtypes.__all__:
    if isinstance(getattr(_dtypes, _name), dtype):
        setattr(dtype, _name, getattr(_dtypes, _name))
_sys.modules[__name__ + ".dtype"] = dtype  # `import nki.dtype` finds it, as a module would be found
from _nkia.kernel import (Kernel, baremetal, benchmark, jit, profile, simulate,  # noqa: F401
                          simulate_kernel, trace)

from . import collectives, compiler, isa, language, typing  # noqa: F401,E402
