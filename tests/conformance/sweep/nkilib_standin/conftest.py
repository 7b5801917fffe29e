"""The fixtures nki-library's tests take, for nki-agent's numeric run of them (numerics.py --repo
library): upstream's test/conftest.py sets up hosts, logging, S3 and metrics; this one gives the
test manager (test/utils/test_orchestrator.py, ours), the platform target (trn2, upstream's
default), and a metrics collector that records nothing. A test whose `platforms` mark excludes the
target is skipped, as upstream's collection deselects it."""
import pytest
from test.utils.common_dataclasses import Platforms
from test.utils.test_orchestrator import Orchestrator

PLATFORM = Platforms.TRN2


class _Collector:
    """A metrics collector that records nothing."""

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


@pytest.fixture
def platform_target():
    return PLATFORM


@pytest.fixture
def collector():
    return _Collector()


@pytest.fixture
def test_manager(request):
    for mark in request.node.iter_markers("platforms"):
        excluded = [str(p) for p in (mark.kwargs.get("exclude") or [])]
        if str(PLATFORM) in excluded:
            pytest.skip(f"its platforms mark excludes {PLATFORM}")
    return Orchestrator(PLATFORM)
