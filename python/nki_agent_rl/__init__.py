"""nki-agent's reward service, `nki-agent serve` (docs/serve.md), for RL frameworks (docs/rl.md).

- client: RewardClient / AsyncRewardClient, the HTTP JSON client with its retries;
- verl: compute_score (async), compute_score_sync, compute_score_batch;
- verl_tools: the compile / verify / profile tools for verl's multi-turn rollouts
  (imported on first use: it imports verl when verl is installed);
- trl: nki_reward, nki_reward_async, make_nki_reward for TRL's GRPOTrainer.

Standard library only. `python -m nki_agent_rl --help` is a small command line.
"""

from .client import DEFAULT_URL, MAX_BATCH, AsyncRewardClient, RewardClient, RewardServiceError
from .client import VERSION as __version__
from .trl import make_nki_reward, nki_reward, nki_reward_async
from .verl import compute_score, compute_score_batch, compute_score_sync

__all__ = [
    "AsyncRewardClient",
    "DEFAULT_URL",
    "MAX_BATCH",
    "NkiCompileTool",
    "NkiProfileTool",
    "NkiVerifyTool",
    "RewardClient",
    "RewardServiceError",
    "compute_score",
    "compute_score_batch",
    "compute_score_sync",
    "make_nki_reward",
    "nki_reward",
    "nki_reward_async",
]

_TOOLS = ("NkiCompileTool", "NkiProfileTool", "NkiVerifyTool")


def __getattr__(name: str):
    # The tool classes import verl (and with it torch and ray) when it is installed: only on demand.
    if name in _TOOLS:
        from . import verl_tools

        return getattr(verl_tools, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
