"""HTTP JSON client of `nki-agent serve` (docs/serve.md), standard library only.

Retries, within `max_attempts` tries and `retry_budget_s` seconds in all:
- 429 (the queue is full) and 503 (a replica is draining) after their Retry-After;
- 502 and 504 (a load balancer between us and a replica) and failed connections with exponential
  back-off and jitter;
- the items of a batch answered nkia_serve_busy or nkia_serve_draining (never scored), again with
  back-off.
Any other status raises RewardServiceError at once: the service is deterministic, so the same
request would get the same answer. A read that times out is not retried either (the request may
still be running on the server).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import email.utils
import functools
import http.client
import json
import os
import random
import threading
import time
import urllib.error
import urllib.request
from typing import Any, Callable

__all__ = [
    "AsyncRewardClient",
    "DEFAULT_URL",
    "MAX_BATCH",
    "RewardClient",
    "RewardServiceError",
]

VERSION = "0.1.0"
DEFAULT_URL = "http://127.0.0.1:8470"
URL_ENV = "NKIA_REWARD_URL"
TOKEN_ENV = "NKIA_REWARD_TOKEN"
# Items per /v1/reward/batch call, the service's limit.
MAX_BATCH = 256
# A request may wait up to the server's --deadline (600 s by default) for a worker, then is scored.
DEFAULT_TIMEOUT_S = 660.0

_RETRY_AFTER_STATUSES = (429, 503)
_BACKOFF_STATUSES = (502, 504)
# Batch items the service answered without scoring them.
_UNSCORED_CODES = ("nkia_serve_busy", "nkia_serve_draining")


class RewardServiceError(Exception):
    """A refusal of the service (its `error.code` and `error.message`) or a failure to reach it.

    `status` is the HTTP status (None when no answer came). Codes of our own, for failures with
    no answer from the service: nkia_client_connect, nkia_client_timeout, nkia_client_protocol
    (an answer that is not the service's JSON), nkia_client_retries (still refused after the
    retries).
    """

    def __init__(self, code: str, message: str, status: int | None = None, retry_after: float | None = None):
        super().__init__(f"{code}: {message}" + (f" (HTTP {status})" if status is not None else ""))
        self.code = code
        self.message = message
        self.status = status
        self.retry_after = retry_after


def _retry_after_seconds(value: str | None) -> float | None:
    """Retry-After as seconds: a number of seconds, or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _error_from_body(status: int, body: bytes, retry_after: float | None) -> RewardServiceError:
    # Every refusal of the service is {"error": {"code", "message"}}; a proxy's page is not.
    try:
        err = json.loads(body.decode("utf-8"))["error"]
        return RewardServiceError(str(err["code"]), str(err.get("message", "")), status, retry_after)
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        text = body[:200].decode("utf-8", "replace").strip()
        return RewardServiceError("nkia_client_http", text or http.client.responses.get(status, "error"), status,
                                  retry_after)


class RewardClient:
    """Blocking client; safe to share between threads (each request opens its own connection).

    url: the service's base URL, else $NKIA_REWARD_URL, else http://127.0.0.1:8470.
    token: the bearer token, else $NKIA_REWARD_TOKEN (none: no Authorization header).
    timeout: seconds per HTTP request. max_batch: items per /v1/reward/batch call; keep it at most
    the server's --workers + --queue, or a batch is never admitted.
    """

    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        timeout: float | None = None,
        *,
        max_attempts: int = 20,
        retry_budget_s: float = 300.0,
        backoff_s: float = 0.5,
        max_backoff_s: float = 10.0,
        max_batch: int = MAX_BATCH,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.url = (url or os.environ.get(URL_ENV) or DEFAULT_URL).rstrip("/")
        self.token = token if token is not None else (os.environ.get(TOKEN_ENV) or None)
        self.timeout = float(timeout) if timeout is not None else DEFAULT_TIMEOUT_S
        self.max_attempts = max(1, int(max_attempts))
        self.retry_budget_s = float(retry_budget_s)
        self.backoff_s = float(backoff_s)
        self.max_backoff_s = float(max_backoff_s)
        self.max_batch = max(1, min(int(max_batch), MAX_BATCH))
        self._sleep = sleep

    def __repr__(self) -> str:
        return f"RewardClient({self.url!r}, token={'set' if self.token else 'none'})"

    # --- transport ---

    def _once(self, method: str, path: str, data: bytes | None) -> Any:
        headers = {"Accept": "application/json", "User-Agent": f"nki-agent-rl/{VERSION}"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        req = urllib.request.Request(self.url + path, data=data, headers=headers, method=method)
        with urllib.request.urlopen(req, timeout=self.timeout) as resp:
            body = resp.read()
        try:
            return json.loads(body.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            raise RewardServiceError("nkia_client_protocol", f"{method} {path}: the answer is not JSON: "
                                     f"{body[:200].decode('utf-8', 'replace')!r}", 200) from None

    def request(self, method: str, path: str, body: Any = None) -> Any:
        """One call with the retries above; returns the decoded JSON answer."""
        data = None if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
        start = time.monotonic()
        failures = 0  # consecutive back-off retries, for the exponent
        last: RewardServiceError | None = None
        for attempt in range(1, self.max_attempts + 1):
            wait: float
            try:
                return self._once(method, path, data)
            except urllib.error.HTTPError as e:
                body_bytes = e.read() if e.fp is not None else b""
                retry_after = _retry_after_seconds(e.headers.get("Retry-After") if e.headers else None)
                last = _error_from_body(e.code, body_bytes, retry_after)
                if e.code in _RETRY_AFTER_STATUSES and retry_after is not None:
                    wait = retry_after
                elif e.code in _RETRY_AFTER_STATUSES or e.code in _BACKOFF_STATUSES:
                    wait = self._backoff(failures)
                    failures += 1
                else:
                    raise last from None
            except RewardServiceError:
                raise
            except TimeoutError as e:  # the read timed out: the server may still be working on it
                raise RewardServiceError("nkia_client_timeout", f"{method} {self.url}{path}: no answer within "
                                         f"{self.timeout:g} s") from e
            except (urllib.error.URLError, http.client.HTTPException, OSError) as e:  # refused, reset, closed early
                reason = getattr(e, "reason", e)
                last = RewardServiceError("nkia_client_connect", f"{method} {self.url}{path}: {reason}")
                wait = self._backoff(failures)
                failures += 1
            if attempt == self.max_attempts:
                break
            if time.monotonic() - start + wait > self.retry_budget_s:
                break
            self._sleep(wait)
        assert last is not None
        raise RewardServiceError("nkia_client_retries",
                                 f"gave up after {attempt} attempt(s) in {time.monotonic() - start:.1f} s; "
                                 f"last: {last}", last.status, last.retry_after) from last

    def _backoff(self, failures: int) -> float:
        return min(self.max_backoff_s, self.backoff_s * (2 ** failures)) * random.uniform(0.5, 1.0)

    def post(self, path: str, body: Any) -> Any:
        return self.request("POST", path, body)

    def get(self, path: str) -> Any:
        return self.request("GET", path)

    # --- routes ---

    def reward(self, **fields: Any) -> dict:
        """POST /v1/reward: fields as in docs/serve.md (task_id and one of response, kernel_code, tool_call)."""
        return self.post("/v1/reward", fields)

    def reward_batch(self, items: list[dict]) -> list[dict]:
        """POST /v1/reward/batch, in calls of at most max_batch items; the answers in input order.

        Items answered nkia_serve_busy or nkia_serve_draining (no worker took them before the
        deadline, or the replica began draining) were never scored: they are sent again with
        back-off, within the same attempts and time as one request."""
        results: list[dict] = []
        for i in range(0, len(items), self.max_batch):
            results.extend(self._batch(list(items[i:i + self.max_batch])))
        return results

    def _batch(self, items: list[dict]) -> list[dict]:
        results = _batch_results(self.post("/v1/reward/batch", {"items": items}), len(items))
        start = time.monotonic()
        for failures in range(self.max_attempts - 1):
            todo = [i for i, r in enumerate(results) if _unscored(r)]
            if not todo:
                break
            wait = self._backoff(failures)
            if time.monotonic() - start + wait > self.retry_budget_s:
                break
            self._sleep(wait)
            again = _batch_results(self.post("/v1/reward/batch", {"items": [items[i] for i in todo]}), len(todo))
            for i, r in zip(todo, again):
                results[i] = r
        return results

    def compile(self, task_id: str, kernel_code: str) -> dict:
        return self.post("/v1/compile", {"task_id": task_id, "kernel_code": kernel_code})

    def verify(self, task_id: str, kernel_code: str) -> dict:
        return self.post("/v1/verify", {"task_id": task_id, "kernel_code": kernel_code})

    def profile(self, task_id: str, kernel_code: str) -> dict:
        return self.post("/v1/profile", {"task_id": task_id, "kernel_code": kernel_code})

    def health(self) -> dict:
        return self.get("/health")


def _unscored(answer: Any) -> bool:
    err = answer.get("error") if isinstance(answer, dict) and answer.get("status") == "error" else None
    return isinstance(err, dict) and err.get("code") in _UNSCORED_CODES


def _batch_results(answer: Any, n: int) -> list[dict]:
    results = answer.get("results") if isinstance(answer, dict) else None
    if not isinstance(results, list) or len(results) != n:
        raise RewardServiceError("nkia_client_protocol", f"/v1/reward/batch: expected {n} results, got "
                                 f"{len(results) if isinstance(results, list) else type(results).__name__}")
    return results


class AsyncRewardClient:
    """The same calls as coroutines: each blocking call runs in a thread pool of its own.

    The pool (max_concurrency threads) is this client's rather than asyncio's default executor, so
    rewards in flight neither queue behind the trainer's own executor work nor are capped by its
    size. Other arguments are RewardClient's.
    """

    def __init__(self, url: str | None = None, token: str | None = None, timeout: float | None = None, *,
                 max_concurrency: int = 64, **options: Any):
        self.sync = RewardClient(url, token, timeout, **options)
        self.max_concurrency = max(1, int(max_concurrency))
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        return self.sync.url

    def __repr__(self) -> str:
        return f"AsyncRewardClient({self.sync.url!r}, token={'set' if self.sync.token else 'none'})"

    def _executor(self) -> concurrent.futures.ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = concurrent.futures.ThreadPoolExecutor(self.max_concurrency,
                                                                   thread_name_prefix="nkia-reward")
            return self._pool

    async def _run(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor(), functools.partial(fn, *args, **kwargs))

    def close(self) -> None:
        with self._lock:
            if self._pool is not None:
                self._pool.shutdown(wait=False)
                self._pool = None

    async def request(self, method: str, path: str, body: Any = None) -> Any:
        return await self._run(self.sync.request, method, path, body)

    async def reward(self, **fields: Any) -> dict:
        return await self._run(self.sync.reward, **fields)

    async def reward_batch(self, items: list[dict]) -> list[dict]:
        """The max_batch-item calls run concurrently; the answers in input order."""
        size = self.sync.max_batch
        chunks = [list(items[i:i + size]) for i in range(0, len(items), size)]
        parts = await asyncio.gather(*(self._run(self.sync.reward_batch, c) for c in chunks))
        return [r for part in parts for r in part]

    async def compile(self, task_id: str, kernel_code: str) -> dict:
        return await self._run(self.sync.compile, task_id, kernel_code)

    async def verify(self, task_id: str, kernel_code: str) -> dict:
        return await self._run(self.sync.verify, task_id, kernel_code)

    async def profile(self, task_id: str, kernel_code: str) -> dict:
        return await self._run(self.sync.profile, task_id, kernel_code)

    async def health(self) -> dict:
        return await self._run(self.sync.health)
