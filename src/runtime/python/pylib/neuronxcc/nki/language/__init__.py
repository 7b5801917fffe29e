"""neuronxcc.nki.language (legacy dialect), as simulated by nki-agent: the nl API of _nkia.lang
(its ``__all__``), with loops whose bodies have block scope; importing it gives tensors their
Python operators and indexing (_nkia.tensor_ops). The _nkia modules are imported as ``_nkia`` so
that ``from neuronxcc.nki.language import *`` gives the nl API and nothing else."""
import _nkia.lang
import _nkia.tensor_ops  # noqa: F401 - installs the tensors' operators and indexing
from _nkia.lang import *  # noqa: F401,F403


def affine_range(*args, **kwargs):
    """Independent iterations; the legacy tracer gives the loop body block scope."""
    return _nkia.lang.loop(range(*args), True, True)


def sequential_range(*args, **kwargs):
    """Iterations in order; the legacy tracer gives the loop body block scope."""
    return _nkia.lang.loop(range(*args), False, True)


def static_cast(ndarray, dtype):
    """The host-side cast of the legacy dialect's test drivers: a NumPy array's values rounded into
    an NKI dtype (round to nearest even for the float types, truncation and saturation for the
    integer ones), as a NumPy array; a type NumPy lacks (nl.bfloat16, the float8 types) comes back
    as nki-agent's TypedArray, which a kernel takes as a tensor of that type. The current dialect's
    nki.language has no such function (its tests use the neuron_dtypes package)."""
    import numpy
    import _nkia.dtypes
    import _nkia.numpy_dtypes
    import _nkia_core
    values, _ = _nkia.numpy_dtypes.host_values(numpy.asarray(ndarray))
    return _nkia_core.host_cast(values, _nkia.dtypes.dtype_name(dtype))
