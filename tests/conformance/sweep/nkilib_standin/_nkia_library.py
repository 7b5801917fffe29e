"""The driver of nki-agent's numeric run of nki-library's tests (numerics.py --repo library), run
with `nki-agent run --lib <scratch folder>` beside the pytest stand-in:

- `nkia_list(module)`: the module's test functions, with their marks and first parametrizations;
- `nkia_library(module, only)`: runs the one test `only` (pytest.nkia_numerics prints its row) and
  returns the comparisons the sandbox could not make (test_orchestrator.RECORDS: torch references),
  pickled, as one uint8 array, for nkilib_reference.py."""
import json
import pickle

import numpy as np
import pytest
from test.utils import test_orchestrator


# A run's printed output is capped (64 KiB): a file's listing gives each test function's first ids only.
LISTED_PER_FUNCTION = 16


def nkia_list(module):
    """One `NKIA-TEST {json}` line per test function of `module`: its id, its marks' names, how many
    parametrizations it has, and the first LISTED_PER_FUNCTION of them (`ids`, with `skip` reasons)."""
    mod = pytest._load(module)
    functions = {}
    for item in pytest.collect(mod):
        base = item.nodeid.split("[", 1)[0]
        row = functions.setdefault(base, {"test": base, "marks": sorted({m.name for m in item.marks} - {"parametrize"}),
                                          "count": 0, "ids": []})
        row["count"] += 1
        if len(row["ids"]) < LISTED_PER_FUNCTION:
            reason = pytest.skip_reason(item)
            row["ids"].append({"test": item.nodeid, **({"skip": reason} if reason else {})})
    for row in functions.values():
        print("NKIA-TEST " + json.dumps(row), flush=True)


def nkia_library(module, only):
    pytest.nkia_numerics(module, only)
    return np.frombuffer(pickle.dumps(test_orchestrator.RECORDS, protocol=4), dtype=np.uint8).copy()
