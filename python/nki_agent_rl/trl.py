"""TRL reward functions over `nki-agent serve` (docs/rl.md, "TRL").

    from nki_agent_rl.trl import make_nki_reward
    trainer = GRPOTrainer(..., reward_funcs=[make_nki_reward(preset="nki")], train_dataset=ds)

TRL calls a reward function with `prompts`, `completions`, `completion_ids` and every other dataset
column as a keyword list aligned with the batch; the task of each completion is its row's `task_id`.
One /v1/reward/batch call scores the batch. A completion is a string, or (conversational) a list of
messages, of which the assistant and tool contents are joined, with the `kernel_code` of every
structured assistant tool call as a fenced block in its place (hermes `<tool_call>` tags in a text
the service reads itself), so the service finds kernels sent through tools. The reward is the preset's score; None (NaN to
TRL: "not applicable") where the service could not score a sample.

Request fields (`preset`, `presets`, `turns`, `gamma`, `seeds`, `speed`) come from the factory's
arguments, or from keyword arguments of a direct call: a list as long as the batch is one value per
row (a dataset column of that name), anything else applies to every row.
"""

from __future__ import annotations

from typing import Any

from ._shared import REQUEST_FIELDS, async_client, request_fields, sync_client, tool_call_kernel, \
    warn_errors

__all__ = ["NkiReward", "completion_text", "make_nki_reward", "nki_reward", "nki_reward_async"]


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}, ...]
        return "\n".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content if p)
    return str(content)


def completion_text(completion: Any) -> str:
    """The text a completion holds, as the service reads a `response`."""
    if completion is None:
        return ""
    if isinstance(completion, str):
        return completion
    messages = [completion] if isinstance(completion, dict) else list(completion)
    parts: list[str] = []
    for m in messages:
        if not isinstance(m, dict) or m.get("role") not in ("assistant", "tool"):
            continue
        text = _content_text(m.get("content"))
        if text:
            parts.append(text)
        for call in m.get("tool_calls") or []:
            code = tool_call_kernel(call)
            if code:
                parts.append(f"```python\n{code.rstrip()}\n```")
    return "\n\n".join(parts)


def _row_fields(options: dict[str, Any], n: int) -> list[dict[str, Any]]:
    shared: dict[str, Any] = {}
    per_row: dict[str, list] = {}
    for key in REQUEST_FIELDS:
        value = options.get(key)
        if value is None:
            continue
        is_column = isinstance(value, (list, tuple)) and len(value) == n and (
            key != "presets" or all(isinstance(v, (list, tuple)) for v in value))
        if is_column:
            per_row[key] = list(value)
        else:
            shared[key] = value
    rows = []
    for i in range(n):
        row = dict(shared)
        row.update({k: v[i] for k, v in per_row.items() if v[i] is not None})
        rows.append(request_fields(row))
    return rows


def _items(completions: list, task_id: Any, options: dict[str, Any]) -> list[dict[str, Any]]:
    n = len(completions)
    if task_id is None:
        raise ValueError("nki_reward: the dataset needs a `task_id` column (the nki-agent task of each prompt)")
    tasks = [task_id] * n if isinstance(task_id, str) else list(task_id)
    if len(tasks) != n:
        raise ValueError(f"nki_reward: {len(tasks)} task ids for {n} completions")
    fields = _row_fields(options, n)
    return [{"task_id": str(tasks[i]), "response": completion_text(completions[i]), **fields[i]} for i in range(n)]


def _rewards(answers: list[dict]) -> list[float | None]:
    return [None if a.get("status") == "error" or a.get("score") is None else float(a["score"]) for a in answers]


def _log(name: str, answers: list[dict], kwargs: dict[str, Any]) -> None:
    # The same columns and metric names on every call and every rank: TRL gathers them across processes.
    log_extra, log_metric = kwargs.get("log_extra"), kwargs.get("log_metric")
    if callable(log_extra):
        log_extra(f"{name}_status", [str(a.get("status")) for a in answers])
        log_extra(f"{name}_flags", [",".join(a.get("flags") or []) for a in answers])
    if callable(log_metric) and answers:
        n = len(answers)
        for c in ("compile", "correct"):
            log_metric(f"{name}/{c}", sum(float((a.get("components") or {}).get(c) or 0) for a in answers) / n)
        log_metric(f"{name}/flagged", sum(1.0 for a in answers if a.get("flags")) / n)
        log_metric(f"{name}/format_error", sum(1.0 for a in answers if a.get("status") == "format_error") / n)
        log_metric(f"{name}/error", sum(1.0 for a in answers if a.get("status") == "error") / n)


class NkiReward:
    """A TRL reward function bound to a service and request fields. A callable object rather than a
    closure, so it pickles (TRL's async GRPO trainer sends reward functions to a spawned process);
    `__name__` is what TRL logs the reward under. Calling it blocks; `acall` is the coroutine."""

    def __init__(self, name: str = "nki_reward", url: str | None = None, token: str | None = None,
                 timeout: float | None = None, batch_size: int | None = None, log: bool = True, **fields: Any):
        unknown = set(fields) - set(REQUEST_FIELDS)
        if unknown:
            raise TypeError(f"make_nki_reward: unknown field(s) {sorted(unknown)}; request fields are "
                            f"{', '.join(REQUEST_FIELDS)}")
        self.__name__ = self.__qualname__ = name
        self.client_options = {"url": url, "token": token, "timeout": timeout, "max_batch": batch_size}
        self.fields = fields
        self.log = log

    def __repr__(self) -> str:
        return f"NkiReward({self.__name__!r}, {self.fields})"

    def _options(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        # The factory's fields win over same-named dataset columns.
        return {**{k: kwargs[k] for k in REQUEST_FIELDS if k in kwargs}, **self.fields}

    def __call__(self, prompts: list, completions: list, completion_ids: list | None = None,
                 **kwargs: Any) -> list[float | None]:
        items = _items(completions, kwargs.get("task_id"), self._options(kwargs))
        answers = sync_client(**self.client_options).reward_batch(items) if items else []
        return self._finish(answers, kwargs)

    async def acall(self, prompts: list, completions: list, completion_ids: list | None = None,
                    **kwargs: Any) -> list[float | None]:
        items = _items(completions, kwargs.get("task_id"), self._options(kwargs))
        answers = await async_client(**self.client_options).reward_batch(items) if items else []
        return self._finish(answers, kwargs)

    def _finish(self, answers: list[dict], kwargs: dict[str, Any]) -> list[float | None]:
        warn_errors(answers, self.__name__)
        if self.log:
            _log(self.__name__, answers, kwargs)
        return _rewards(answers)


def make_nki_reward(preset: str | None = None, url: str | None = None, token: str | None = None, *,
                    name: str | None = None, timeout: float | None = None, batch_size: int | None = None,
                    asynchronous: bool = False, log: bool = True, **fields: Any):
    """A reward function for GRPOTrainer(reward_funcs=[...]).

    preset: the preset scored (the service's default `nki` when None); fields: other request fields
    (seeds=1, turns="all", ...). name: what TRL logs it as (default nki_reward, or nki_<preset> for
    another preset).
    asynchronous: return a coroutine function, which TRL runs concurrently with its other async
    reward functions (a plain function, so it does not pickle); the default blocking callable
    pickles. log: also log status and flags columns and compile/correct/flagged rates through
    TRL's log_extra/log_metric.
    """
    if preset is not None:
        fields["preset"] = preset
    default_name = "nki_reward" if preset in (None, "nki") else f"nki_{preset}"
    reward = NkiReward(name or default_name, url, token, timeout, batch_size, log, **fields)
    if not asynchronous:
        return reward

    async def nki_reward_fn(prompts, completions, completion_ids=None, **kwargs):
        return await reward.acall(prompts, completions, completion_ids, **kwargs)

    nki_reward_fn.__name__ = nki_reward_fn.__qualname__ = reward.__name__
    return nki_reward_fn


_default = NkiReward("nki_reward")


def nki_reward(prompts: list, completions: list, completion_ids: list | None = None,
               **kwargs: Any) -> list[float | None]:
    """The service's default preset, at $NKIA_REWARD_URL with $NKIA_REWARD_TOKEN; one batch call."""
    return _default(prompts, completions, completion_ids, **kwargs)


async def nki_reward_async(prompts: list, completions: list, completion_ids: list | None = None,
                           **kwargs: Any) -> list[float | None]:
    """nki_reward as a coroutine function."""
    return await _default.acall(prompts, completions, completion_ids, **kwargs)
