"""verl reward functions over `nki-agent serve` (docs/rl.md, "verl").

    custom_reward_function.path=<nki-agent>/python/nki_agent_rl/verl.py
    custom_reward_function.name=compute_score          # or compute_score_batch for reward_manager=batch
    +custom_reward_function.reward_kwargs.url=http://nki-agent-serve:8470

verl calls these by keyword and merges custom_reward_function.reward_kwargs into every call:
`url`, `token`, `timeout`, `batch_size` configure the client (else $NKIA_REWARD_URL /
$NKIA_REWARD_TOKEN); `preset`, `presets`, `turns`, `gamma`, `seeds`, `speed` go into the request.
The task is `ground_truth` (a task id, or a JSON object or text with `task_id` and any request
fields, which reward_kwargs override), else `extra_info["task_id"]`; or the reference itself: a JSON
object (or text) with `reference_code` in KernelBench form, as Kernel-Smith-RL-2K's rows hold it,
with `entry_point` there or in extra_info (the service makes the task: docs/serve.md, "Inline
references"). `solution_str`, the whole
decoded response (every turn of a multi-turn rollout), is sent as `response`: the service finds its
kernels in fenced blocks and in hermes `<tool_call>` tags, takes the last, or scores every kernel in
order with `turns: all`.

The result is a dict whose "score" verl uses as the reward and whose other keys it logs as
reward_extra_info; they are scalars and the same for every sample (see _shared.flat_result). An
answer with status "error" (the service could not score: not the kernel's fault) scores 0.0 and is
logged as a warning. A refused request (an unknown task, a bad preset) or an unreachable service
raises RewardServiceError.
"""

from __future__ import annotations

from typing import Any

try:
    from ._shared import async_client, client_options, flat_result, request_fields, resolve_task, \
        sync_client, warn_errors
except ImportError:  # loaded by file path (custom_reward_function.path): import the package beside it
    import pathlib
    import sys

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
    from nki_agent_rl._shared import async_client, client_options, flat_result, request_fields, \
        resolve_task, sync_client, warn_errors

__all__ = ["compute_score", "compute_score_batch", "compute_score_sync"]


def _request(solution_str: Any, ground_truth: Any, extra_info: Any, options: dict[str, Any]) -> dict[str, Any]:
    task, label_fields = resolve_task(ground_truth, extra_info)
    return {"task_id": task, "response": "" if solution_str is None else str(solution_str),
            **label_fields, **request_fields(options)}


async def compute_score(data_source: Any, solution_str: str, ground_truth: Any, extra_info: dict | None = None,
                        **kwargs: Any) -> dict[str, Any]:
    """One sample, asynchronously (verl's reward loop awaits coroutine functions)."""
    answer = await async_client(**client_options(kwargs)).reward(**_request(solution_str, ground_truth, extra_info,
                                                                           kwargs))
    warn_errors([answer], f"compute_score({data_source})")
    return flat_result(answer)


def compute_score_sync(data_source: Any, solution_str: str, ground_truth: Any, extra_info: dict | None = None,
                       **kwargs: Any) -> dict[str, Any]:
    """compute_score, blocking: for verl's legacy per-sample managers (naive, prime, dapo)."""
    answer = sync_client(**client_options(kwargs)).reward(**_request(solution_str, ground_truth, extra_info, kwargs))
    warn_errors([answer], f"compute_score_sync({data_source})")
    return flat_result(answer)


def compute_score_batch(data_sources: Any, solution_strs: Any, ground_truths: Any, extra_infos: Any = None,
                        **kwargs: Any) -> list[dict[str, Any]]:
    """A whole batch through /v1/reward/batch: verl's legacy `batch` reward manager calls this
    (blocking) with aligned lists and expects a list back."""
    n = len(solution_strs)
    infos = list(extra_infos) if extra_infos is not None else [None] * n
    items = [_request(solution_strs[i], ground_truths[i], infos[i], kwargs) for i in range(n)]
    answers = sync_client(**client_options(kwargs)).reward_batch(items)
    warn_errors(answers, "compute_score_batch")
    return [flat_result(a) for a in answers]
