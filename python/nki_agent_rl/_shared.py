"""What the framework adapters share: task ids from labels, the request fields they pass on, and
one client per (URL, token, timeout) in each process."""

from __future__ import annotations

import json
import logging
import threading
from typing import Any, Iterable

from .client import MAX_BATCH, AsyncRewardClient, RewardClient

log = logging.getLogger("nki_agent_rl")

# Fields of a reward request (docs/serve.md) an adapter passes on from its options or labels.
# Anything else a framework puts in kwargs (tokenizers, router addresses, dataset columns) stays here.
REQUEST_FIELDS = ("preset", "presets", "turns", "gamma", "seeds", "speed")
# Fields of a client's own reference (KernelBench form: docs/serve.md, "Inline references"), passed
# on from a label; Kernel-Smith-style rows put the reference in ground_truth and entry_point in
# extra_info.
REFERENCE_FIELDS = ("reference_code", "reference_source", "entry_point", "kernel_name", "atol", "rtol", "target")
# The five components every answer has (docs/serve.md); the flat summaries always carry all five.
COMPONENTS = ("format", "compile", "correct", "speedup", "coverage")


def request_fields(options: dict[str, Any]) -> dict[str, Any]:
    """The reward-request fields among `options`, as plain JSON values (OmegaConf lists become lists)."""
    out: dict[str, Any] = {}
    for key in REQUEST_FIELDS:
        value = options.get(key)
        if value is None:
            continue
        if key == "presets":
            value = [str(p) for p in ([value] if isinstance(value, str) else value)]
        elif key in ("preset", "turns"):
            value = str(value)
        elif key == "speed":
            value = bool(value)
        elif key == "seeds":
            value = int(value)
        elif key == "gamma":
            value = float(value)
        out[key] = value
    return out


def task_from_label(label: Any) -> tuple[str | None, dict[str, Any]]:
    """(task id, request fields) from a label: a task id, or a JSON object (or its text) with `task_id`
    and any request fields, as OpenRLHF's labels are read by the service."""
    if label is None:
        return None, {}
    if isinstance(label, bytes):
        label = label.decode("utf-8")
    if isinstance(label, str):
        text = label.strip()
        if not text.startswith("{"):
            return (text or None), {}
        try:
            label = json.loads(text)
        except ValueError:
            return text, {}
    if isinstance(label, dict):
        fields = request_fields(label)
        fields.update({k: label[k] for k in REFERENCE_FIELDS if label.get(k) is not None})
        task = label.get("task_id")
        if not task and ("reference_code" in fields or "reference_source" in fields):
            task = "inline"  # the reference is the task; the id is only a label
        return (str(task) if task else None), fields
    return None, {}


def resolve_task(ground_truth: Any, extra_info: Any) -> tuple[str, dict[str, Any]]:
    task, fields = task_from_label(ground_truth)
    if not task and isinstance(extra_info, dict) and extra_info.get("task_id"):
        task = str(extra_info["task_id"])
    inline = "reference_code" in fields or "reference_source" in fields
    if inline and "entry_point" not in fields and isinstance(extra_info, dict) and extra_info.get("entry_point"):
        fields["entry_point"] = str(extra_info["entry_point"])
    if not task:
        raise ValueError(
            "nki-agent reward: no task id; set reward_model.ground_truth to the task id (or a JSON object "
            f"with \"task_id\"), or extra_info.task_id (ground_truth was {ground_truth!r})")
    return task, fields


def tool_call_kernel(call: Any) -> str | None:
    """The kernel_code argument of a tool call: {"name", "arguments"} or OpenAI's {"function": {...}},
    with arguments an object or its JSON text."""
    if not isinstance(call, dict):
        return None
    fn = call.get("function", call)
    args = fn.get("arguments") if isinstance(fn, dict) else None
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return None
    code = args.get("kernel_code") if isinstance(args, dict) else None
    return code if isinstance(code, str) and code.strip() else None


def flat_result(answer: dict) -> dict[str, Any]:
    """An answer as one flat dict of scalars, the same keys for every status, for loggers that average
    each key over a batch: score (0.0 when the service could not score), status, preset, the five
    components (speedup 0.0 when not measured), flags comma-joined, cached, error (its code or "")."""
    components = answer.get("components") or {}
    error = answer.get("error") or {}
    score = answer.get("score")
    out: dict[str, Any] = {
        "score": float(score) if score is not None else 0.0,
        "status": str(answer.get("status") or "error"),
        "preset": str(answer.get("preset") or ""),
    }
    for name in COMPONENTS:
        value = components.get(name)
        out[name] = float(value) if isinstance(value, (int, float)) else 0.0
    out["flags"] = ",".join(str(f) for f in (answer.get("flags") or []))
    out["cached"] = bool(answer.get("cached"))
    out["error"] = str(error.get("code") or "") if isinstance(error, dict) else ""
    return out


def warn_errors(answers: Iterable[dict], where: str) -> None:
    """Logs answers the service could not score: a broken task or a missing reference is not the kernel's
    fault, and a training run should hear about it."""
    for a in answers:
        if a.get("status") == "error":
            err = a.get("error") or {}
            log.warning("%s: the service could not score a sample: %s: %s", where, err.get("code"), err.get("message"))


_lock = threading.Lock()
_sync_clients: dict[tuple, RewardClient] = {}
_async_clients: dict[tuple, AsyncRewardClient] = {}


def _key(url: str | None, token: str | None, timeout: Any, max_batch: Any) -> tuple:
    probe = RewardClient(url, token, None if timeout is None else float(timeout),
                         max_batch=MAX_BATCH if max_batch is None else int(max_batch))
    return probe.url, probe.token, probe.timeout, probe.max_batch


def sync_client(url: str | None = None, token: str | None = None, timeout: Any = None,
                max_batch: Any = None) -> RewardClient:
    """The process's client for these options (None: the environment's URL and token, the defaults)."""
    key = _key(url, token, timeout, max_batch)
    with _lock:
        if key not in _sync_clients:
            _sync_clients[key] = RewardClient(key[0], key[1], key[2], max_batch=key[3])
        return _sync_clients[key]


def async_client(url: str | None = None, token: str | None = None, timeout: Any = None,
                 max_batch: Any = None) -> AsyncRewardClient:
    key = _key(url, token, timeout, max_batch)
    with _lock:
        if key not in _async_clients:
            _async_clients[key] = AsyncRewardClient(key[0], key[1], key[2], max_batch=key[3])
        return _async_clients[key]


def client_options(options: dict[str, Any]) -> dict[str, Any]:
    """url, token, timeout and batch_size (as max_batch) from an adapter's options."""
    return {"url": options.get("url"), "token": options.get("token"), "timeout": options.get("timeout"),
            "max_batch": options.get("batch_size")}
