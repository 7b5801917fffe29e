"""The driver of nki-agent's numeric run of nki-library's tests (numerics.py --repo library), run
with `nki-agent run --lib <scratch folder>` beside the pytest stand-in:

- `nkia_list(module)`: the module's tests and parametrizations (pytest.nkia_list);
- `nkia_library(module, only)`: runs the one test `only` (pytest.nkia_numerics prints its row) and
  returns the comparisons the sandbox could not make (test_orchestrator.RECORDS: torch references),
  pickled, as one uint8 array, for nkilib_reference.py."""
import pickle

import numpy as np
import pytest
from test.utils import test_orchestrator


def nkia_list(module):
    pytest.nkia_list(module)


def nkia_library(module, only):
    pytest.nkia_numerics(module, only)
    return np.frombuffer(pickle.dumps(test_orchestrator.RECORDS, protocol=4), dtype=np.uint8).copy()
