"""Tests of nki_agent_rl (python/nki_agent_rl/), the RL-framework adapters of `nki-agent serve`.

    NKIA_SERVE_URL=http://127.0.0.1:8470 python3 -m unittest tests/python/test_nki_agent_rl.py

The service tests run against a real `nki-agent serve --tasks <repository>/tests/tasks` at
$NKIA_SERVE_URL (bearer token $NKIA_SERVE_TOKEN if it needs one), with task add_fp32: its
baseline.py is a correct kernel, tests/tasks/hacks/zeros_add.py a hack. They are skipped when
NKIA_SERVE_URL is unset. The client's retry and error tests use a scripted local http.server and
the pure functions need nothing, so those always run. $NKIA_SOURCE_DIR is the repository root
(default: two folders above this file).
"""

from __future__ import annotations

import asyncio
import http.server
import json
import os
import pathlib
import pickle
import re
import socket
import sys
import threading
import unittest
from unittest import mock

SOURCE_DIR = pathlib.Path(os.environ.get("NKIA_SOURCE_DIR") or pathlib.Path(__file__).resolve().parents[2])
sys.path.insert(0, str(SOURCE_DIR / "python"))

from nki_agent_rl import (AsyncRewardClient, RewardClient, RewardServiceError, compute_score,  # noqa: E402
                          compute_score_batch, compute_score_sync, make_nki_reward, nki_reward, nki_reward_async)
from nki_agent_rl import verl_tools  # noqa: E402
from nki_agent_rl._shared import flat_result, task_from_label  # noqa: E402
from nki_agent_rl.trl import completion_text  # noqa: E402

SERVE_URL = os.environ.get("NKIA_SERVE_URL") or None
SERVE_TOKEN = os.environ.get("NKIA_SERVE_TOKEN") or None
TASK = "add_fp32"
TASKS_DIR = SOURCE_DIR / "tests" / "tasks"
BASELINE = (TASKS_DIR / TASK / "baseline.py").read_text(encoding="utf-8")
ZEROS_HACK = (TASKS_DIR / "hacks" / "zeros_add.py").read_text(encoding="utf-8")
# One seed per shape set keeps each score about a second.
FAST = {"seeds": 1}
PROMPT = "Write an NKI kernel `kernel(x, y)` that returns x + y for float32 tensors."
RESPONSE = ("The kernel tiles rows by 128 and columns by 512 and masks the ragged edges.\n\n"
            f"```python\n{BASELINE}```\n")
HACK_RESPONSE = f"Here it is.\n\n```python\n{ZEROS_HACK}```\n"
# A multi-turn response as verl decodes it: the kernel sent in a hermes tool call, then a reply.
HERMES_RESPONSE = ("Let me verify it.\n<tool_call>\n"
                   + json.dumps({"name": "verify", "arguments": {"kernel_code": BASELINE}})
                   + "\n</tool_call>\nPASS\nThe kernel passed.")
NO_CODE = "I am not able to write this kernel."
FLAT_KEYS = {"score", "status", "preset", "format", "compile", "correct", "speedup", "coverage", "flags", "cached",
             "error"}
NEEDS_SERVER = unittest.skipUnless(
    SERVE_URL, "NKIA_SERVE_URL is unset: start `nki-agent serve --tasks tests/tasks` and set NKIA_SERVE_URL to its "
               "URL to run the service tests")


def setUpModule():
    # The adapters' defaults (nki_reward, the tools without a url) read these.
    if SERVE_URL:
        os.environ["NKIA_REWARD_URL"] = SERVE_URL
    if SERVE_TOKEN:
        os.environ["NKIA_REWARD_TOKEN"] = SERVE_TOKEN


def service_client(**options):
    return RewardClient(SERVE_URL, SERVE_TOKEN, 300, retry_budget_s=120, **options)


# --- the real service ---


@NEEDS_SERVER
class ServiceTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.client = service_client()

    def test_health(self):
        h = self.client.health()
        self.assertEqual(h["status"], "ok")
        for key in ("version", "workers", "in_flight", "queued"):
            self.assertIn(key, h)

    def test_baseline_kernel_is_correct_and_scores(self):
        a = self.client.reward(task_id=TASK, kernel_code=BASELINE, **FAST)
        self.assertEqual(a["status"], "ok", a)
        self.assertGreater(a["score"], 0)
        self.assertEqual(a["preset"], "nki")
        for c in ("format", "compile", "correct"):
            self.assertEqual(a["components"][c], 1, c)
        self.assertEqual(a["flags"], [])
        self.assertTrue(a["verify"]["passed"])
        self.assertEqual(a["scores"]["binary_compile"], 1)
        self.assertIsNone(a["error"])

    def test_kernel_found_in_fenced_block_of_a_response(self):
        by_code = self.client.reward(task_id=TASK, kernel_code=BASELINE, **FAST)
        by_text = self.client.reward(task_id=TASK, response=RESPONSE, **FAST)
        self.assertEqual(by_text["status"], "ok", by_text)
        self.assertEqual(by_text["components"]["correct"], 1)
        self.assertAlmostEqual(by_text["score"], by_code["score"])

    def test_response_without_code_is_a_format_error(self):
        a = self.client.reward(task_id=TASK, response=NO_CODE, **FAST)
        self.assertEqual(a["status"], "format_error", a)
        self.assertIsInstance(a["score"], (int, float))
        self.assertEqual(a["components"]["format"], 0)
        self.assertEqual(a["components"]["correct"], 0)

    def test_unknown_task_raises_with_the_service_code(self):
        with self.assertRaises(RewardServiceError) as cm:
            self.client.reward(task_id="no_such_task", kernel_code=BASELINE, **FAST)
        self.assertEqual(cm.exception.code, "nkia_task_not_found")
        self.assertEqual(cm.exception.status, 404)

    def test_zeros_hack_scores_zero_under_nki_and_one_under_binary_compile(self):
        nki = self.client.reward(task_id=TASK, kernel_code=ZEROS_HACK, preset="nki", **FAST)
        self.assertEqual(nki["status"], "ok", nki)
        self.assertEqual(nki["score"], 0)
        self.assertIn("zero_output", nki["flags"])
        binary = self.client.reward(task_id=TASK, kernel_code=ZEROS_HACK, preset="binary_compile", **FAST)
        self.assertEqual(binary["score"], 1)

    def test_tool_routes(self):
        for name in ("compile", "verify", "profile"):
            a = getattr(self.client, name)(TASK, BASELINE)
            self.assertTrue(a["ok"], (name, a))
            self.assertIsInstance(a["content"], str)
            self.assertTrue(a["content"].strip(), name)
            self.assertIn("data", a)
        self.assertIn("PASS", self.client.verify(TASK, BASELINE)["content"].upper())

    def test_framework_routes_of_docs_rl(self):
        # OpenRLHF: query = prompt + response; a label may be a JSON object with request fields.
        label = json.dumps({"task_id": TASK, **FAST})
        o = self.client.post("/openrlhf/get_reward", {"query": [PROMPT + RESPONSE], "prompts": [PROMPT],
                                                      "labels": [label]})
        self.assertGreater(o["rewards"][0], 0)
        self.assertEqual(o["scores"][0], 1)
        self.assertIsInstance(o["extra_logs"], dict)
        # slime: the answer is the reward itself.
        s = self.client.post("/slime/rm", {"prompt": PROMPT, "response": RESPONSE, "label": TASK})
        self.assertIsInstance(s, (int, float))
        self.assertGreater(s, 0)
        # KernelGYM
        k = self.client.post("/evaluate", {"task_id": TASK, "kernel_code": BASELINE})
        self.assertTrue(k["compiled"])
        self.assertTrue(k["correctness"])


@NEEDS_SERVER
class VerlTest(unittest.TestCase):
    def test_async_compute_score(self):
        # verl's reward loop awaits it by keyword, with reward_kwargs merged in and extras of its own.
        r = asyncio.run(compute_score(data_source="nkibench", solution_str=RESPONSE, ground_truth=TASK,
                                      extra_info={"split": "train", "index": 0, "num_turns": 2}, url=SERVE_URL,
                                      token=SERVE_TOKEN, preset="nki", reward_router_address=None,
                                      reward_model_tokenizer=object(), **FAST))
        self.assertEqual(set(r), FLAT_KEYS)
        self.assertGreater(r["score"], 0)
        self.assertEqual(r["status"], "ok")
        self.assertEqual(r["correct"], 1.0)
        self.assertEqual(r["flags"], "")
        for key, value in r.items():
            self.assertIsInstance(value, (int, float, str, bool), key)

    def test_kernel_sent_in_a_hermes_tool_call(self):
        r = compute_score_sync("nkibench", HERMES_RESPONSE, TASK, url=SERVE_URL, token=SERVE_TOKEN, **FAST)
        self.assertEqual(r["status"], "ok", r)
        self.assertEqual(r["correct"], 1.0)

    def test_task_id_from_ground_truth_forms_and_extra_info(self):
        scores = set()
        for gt, info in ((TASK, None), (json.dumps({"task_id": TASK}), None), ({"task_id": TASK}, {}),
                         (None, {"task_id": TASK})):
            r = compute_score_sync("nkibench", RESPONSE, gt, info, url=SERVE_URL, token=SERVE_TOKEN, **FAST)
            self.assertEqual(r["status"], "ok", (gt, info, r))
            scores.add(r["score"])
        self.assertEqual(len(scores), 1)

    def test_reference_in_ground_truth_as_kernel_smith_rows_hold_it(self):
        # ground_truth = a JSON string holding reference_code, entry_point in extra_info.
        reference = (TASKS_DIR / TASK / "task.py").read_text(encoding="utf-8").replace("class Model", "class Net")
        gt = json.dumps({"reference_code": reference})
        r = compute_score_sync("kernel_rl", RESPONSE, gt, {"entry_point": "Net"}, url=SERVE_URL, token=SERVE_TOKEN,
                               **FAST)
        self.assertEqual(r["status"], "ok", r)
        self.assertEqual(r["correct"], 1.0, r)
        hack = compute_score_sync("kernel_rl", HACK_RESPONSE, gt, {"entry_point": "Net"}, url=SERVE_URL,
                                  token=SERVE_TOKEN, **FAST)
        self.assertEqual(hack["correct"], 0.0, hack)
        with self.assertRaises(RewardServiceError) as cm:  # without its entry point there is no Model
            compute_score_sync("kernel_rl", RESPONSE, gt, {}, url=SERVE_URL, token=SERVE_TOKEN, **FAST)
        self.assertEqual(cm.exception.code, "nkia_inline_reference")

    def test_format_error_and_refusals(self):
        r = compute_score_sync("nkibench", NO_CODE, TASK, url=SERVE_URL, token=SERVE_TOKEN, **FAST)
        self.assertEqual(r["status"], "format_error")
        self.assertIsInstance(r["score"], float)
        with self.assertRaises(RewardServiceError) as cm:
            compute_score_sync("nkibench", RESPONSE, "no_such_task", url=SERVE_URL, token=SERVE_TOKEN, **FAST)
        self.assertEqual(cm.exception.code, "nkia_task_not_found")
        with self.assertRaises(ValueError):
            compute_score_sync("nkibench", RESPONSE, None, {}, url=SERVE_URL, token=SERVE_TOKEN)

    def test_legacy_batch_form(self):
        # verl's `batch` reward manager: aligned lists in, a list out; a failed item never fails the batch.
        with self.assertLogs("nki_agent_rl", "WARNING"):
            out = compute_score_batch(data_sources=["nkibench"] * 3, solution_strs=[RESPONSE, NO_CODE, RESPONSE],
                                      ground_truths=[TASK, TASK, "no_such_task"],
                                      extra_infos=[{"index": 0}, {"index": 1}, {"index": 2}], url=SERVE_URL,
                                      token=SERVE_TOKEN, **FAST)
        self.assertEqual(len(out), 3)
        for r in out:
            self.assertEqual(set(r), FLAT_KEYS)
        self.assertEqual(out[0]["status"], "ok")
        self.assertGreater(out[0]["score"], 0)
        self.assertEqual(out[1]["status"], "format_error")
        self.assertEqual(out[2]["status"], "error")
        self.assertEqual(out[2]["score"], 0.0)
        self.assertEqual(out[2]["error"], "nkia_task_not_found")


@NEEDS_SERVER
class TrlTest(unittest.TestCase):
    COMPLETIONS = [
        RESPONSE,
        HACK_RESPONSE,
        NO_CODE,
        # conversational, the kernel sent through a tool call
        [{"role": "assistant", "content": "Checking it first.",
          "tool_calls": [{"type": "function", "function": {"name": "verify",
                                                           "arguments": json.dumps({"kernel_code": BASELINE})}}]},
         {"role": "tool", "content": "PASS"},
         {"role": "assistant", "content": "Done: the verified kernel above."}],
        RESPONSE,
    ]
    TASK_IDS = [TASK, TASK, TASK, TASK, "no_such_task"]

    def check(self, rewards):
        self.assertEqual(len(rewards), 5)
        good, hack, no_code, conversational, unknown = rewards
        self.assertGreater(good, 0)
        self.assertEqual(hack, 0.0)
        self.assertIsInstance(no_code, float)
        self.assertLess(no_code, good)
        self.assertAlmostEqual(conversational, good)
        self.assertIsNone(unknown)

    def test_factory_on_a_mixed_batch(self):
        reward = make_nki_reward(preset="nki", url=SERVE_URL, token=SERVE_TOKEN, **FAST)
        self.assertEqual(reward.__name__, "nki_reward")
        extra, metrics = {}, {}
        with self.assertLogs("nki_agent_rl", "WARNING") as logs:
            rewards = reward(prompts=[PROMPT] * 5, completions=self.COMPLETIONS, completion_ids=[[1]] * 5,
                             task_id=self.TASK_IDS, level=[0] * 5, trainer_state=None,
                             log_extra=lambda column, values: extra.__setitem__(column, values),
                             log_metric=lambda name, value: metrics.__setitem__(name, value))
        self.assertIn("nkia_task_not_found", logs.output[0])
        self.check(rewards)
        self.assertEqual(extra["nki_reward_status"], ["ok", "ok", "format_error", "ok", "error"])
        self.assertIn("zero_output", extra["nki_reward_flags"][1])
        self.assertAlmostEqual(metrics["nki_reward/error"], 0.2)

    def test_default_functions_sync_and_async(self):
        # nki_reward reads $NKIA_REWARD_URL (set from NKIA_SERVE_URL); a scalar keyword applies to every row.
        with self.assertLogs("nki_agent_rl", "WARNING"):
            sync = nki_reward(prompts=[PROMPT] * 5, completions=self.COMPLETIONS, task_id=self.TASK_IDS, **FAST)
            coro = nki_reward_async(prompts=[PROMPT] * 5, completions=self.COMPLETIONS, task_id=self.TASK_IDS,
                                    **FAST)
            asynchronous = asyncio.run(coro)
            fn = make_nki_reward(url=SERVE_URL, token=SERVE_TOKEN, asynchronous=True, **FAST)
            factory = asyncio.run(fn(prompts=[PROMPT] * 5, completions=self.COMPLETIONS, task_id=self.TASK_IDS))
        for rewards in (sync, asynchronous, factory):
            self.check(rewards)


@NEEDS_SERVER
class VerlToolsTest(unittest.TestCase):
    def test_create_execute_release(self):
        config = {"type": "native", "url": SERVE_URL, "token": SERVE_TOKEN, "preset": "nki", **FAST}

        async def episode():
            tools = {cls.tool: cls(config, None) for cls in (verl_tools.NkiCompileTool, verl_tools.NkiVerifyTool,
                                                             verl_tools.NkiProfileTool)}
            out = {}
            for name, tool in tools.items():
                self.assertEqual(tool.name, name)
                # verl's tool agent loop: create(create_kwargs=...), execute, release, for every call.
                iid, created = await tool.create(create_kwargs={"task_id": TASK})
                self.assertIsInstance(created, verl_tools.ToolResponse)
                response, step_reward, metrics = await tool.execute(iid, {"kernel_code": BASELINE})
                out[name] = (response, step_reward, metrics, await tool.calc_reward(iid))
                await tool.release(iid)
                self.assertEqual(await tool.calc_reward(iid), 0.0)
            return out

        out = asyncio.run(episode())
        for name, (response, step_reward, metrics, _) in out.items():
            self.assertIsInstance(response, verl_tools.ToolResponse)
            self.assertTrue(response.text.strip(), name)
            self.assertTrue(metrics["ok"], name)
        self.assertEqual(out["compile"][1], 0.0)
        self.assertEqual(out["profile"][1], 0.0)
        expected = service_client().reward(task_id=TASK, kernel_code=BASELINE, preset="nki", **FAST)["score"]
        self.assertGreater(out["verify"][1], 0)
        self.assertAlmostEqual(out["verify"][1], expected)
        self.assertAlmostEqual(out["verify"][3], expected)  # calc_reward before release


# --- the client against a scripted local server ---


class ScriptedServer:
    """A local http.server answering from a script of (status, headers, body): request i gets entry
    i, the last entry repeats. A body is JSON, bytes, or a function of the request's JSON. It records
    each request's method, path, headers and JSON body."""

    def __init__(self, script):
        self.script = list(script)
        self.requests = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def answer(self):
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                req = {"method": self.command, "path": self.path, "headers": dict(self.headers),
                       "body": json.loads(raw) if raw else None}
                outer.requests.append(req)
                status, headers, body = outer.script[min(len(outer.requests), len(outer.script)) - 1]
                if callable(body):
                    body = body(req["body"])
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = answer

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


OK_ANSWER = {"status": "ok", "score": 1.5, "preset": "nki", "components": {"format": 1, "compile": 1, "correct": 1,
                                                                            "speedup": 1.2, "coverage": 0.3},
             "flags": [], "error": None, "cached": False}
JSON = {"Content-Type": "application/json"}


def busy(status, retry_after="0"):
    return (status, {**JSON, "Retry-After": retry_after},
            {"error": {"code": "nkia_serve_busy", "message": "the queue is full"}})


class ClientRetryTest(unittest.TestCase):
    def setUp(self):
        self.sleeps = []

    def client(self, url, **options):
        options.setdefault("sleep", self.sleeps.append)
        return RewardClient(url, "secret", 10, **options)

    def test_429_is_retried_after_its_retry_after(self):
        with ScriptedServer([busy(429), busy(429), (200, JSON, OK_ANSWER)]) as srv:
            a = self.client(srv.url).reward(task_id=TASK, kernel_code=BASELINE)
        self.assertEqual(a, OK_ANSWER)
        self.assertEqual(len(srv.requests), 3)
        self.assertEqual(self.sleeps, [0.0, 0.0])
        for r in srv.requests:
            self.assertEqual((r["method"], r["path"]), ("POST", "/v1/reward"))
            self.assertEqual(r["body"], {"task_id": TASK, "kernel_code": BASELINE})
            self.assertEqual(r["headers"]["Authorization"], "Bearer secret")
            self.assertEqual(r["headers"]["Content-Type"], "application/json")

    def test_503_while_draining_is_retried(self):
        with ScriptedServer([busy(503, "2"), (200, JSON, OK_ANSWER)]) as srv:
            self.assertEqual(self.client(srv.url).reward(task_id=TASK, kernel_code=BASELINE), OK_ANSWER)
        self.assertEqual(self.sleeps, [2.0])

    def test_async_client_retries_too(self):
        with ScriptedServer([busy(429), busy(429), (200, JSON, OK_ANSWER)]) as srv:
            client = AsyncRewardClient(srv.url, "secret", 10, sleep=self.sleeps.append)
            a = asyncio.run(client.reward(task_id=TASK, kernel_code=BASELINE))
            client.close()
        self.assertEqual(a, OK_ANSWER)
        self.assertEqual(len(srv.requests), 3)

    def test_other_4xx_raise_at_once_with_the_service_error(self):
        for status, code in ((404, "nkia_task_not_found"), (400, "nkia_serve_bad_request"), (401, "nkia_serve_auth"),
                             (413, "nkia_serve_too_large")):
            body = {"error": {"code": code, "message": f"refused with {status}"}}
            with ScriptedServer([(status, JSON, body), (200, JSON, OK_ANSWER)]) as srv:
                with self.assertRaises(RewardServiceError) as cm:
                    self.client(srv.url).reward(task_id="no_such_task", kernel_code=BASELINE)
            self.assertEqual(len(srv.requests), 1, status)
            self.assertEqual((cm.exception.status, cm.exception.code), (status, code))
            self.assertEqual(cm.exception.message, f"refused with {status}")
            self.assertIn(code, str(cm.exception))
        self.assertEqual(self.sleeps, [])

    def test_attempts_are_bounded(self):
        with ScriptedServer([busy(429)]) as srv:
            with self.assertRaises(RewardServiceError) as cm:
                self.client(srv.url, max_attempts=4).health()
        self.assertEqual(len(srv.requests), 4)
        self.assertEqual(cm.exception.code, "nkia_client_retries")
        self.assertEqual(cm.exception.status, 429)
        self.assertEqual(cm.exception.__cause__.code, "nkia_serve_busy")

    def test_total_retry_time_is_bounded(self):
        with ScriptedServer([busy(429, "30")]) as srv:
            with self.assertRaises(RewardServiceError) as cm:
                self.client(srv.url, retry_budget_s=5).health()
        self.assertEqual(len(srv.requests), 1)  # waiting 30 s would pass the 5 s budget
        self.assertEqual(self.sleeps, [])
        self.assertEqual(cm.exception.retry_after, 30.0)

    def test_gateway_errors_back_off_and_a_proxy_page_is_reported(self):
        page = b"<html><body>502 Bad Gateway</body></html>"
        with ScriptedServer([(502, {"Content-Type": "text/html"}, page), (200, JSON, OK_ANSWER)]) as srv:
            self.assertEqual(self.client(srv.url).reward(task_id=TASK, kernel_code=BASELINE), OK_ANSWER)
        self.assertEqual(len(self.sleeps), 1)
        with ScriptedServer([(502, {"Content-Type": "text/html"}, page)]) as srv:
            with self.assertRaises(RewardServiceError) as cm:
                self.client(srv.url, max_attempts=2).health()
        self.assertEqual(cm.exception.__cause__.code, "nkia_client_http")
        self.assertIn("Bad Gateway", cm.exception.__cause__.message)

    def test_500_is_not_retried(self):
        body = {"error": {"code": "nkia_internal", "message": "a bug"}}
        with ScriptedServer([(500, JSON, body), (200, JSON, OK_ANSWER)]) as srv:
            with self.assertRaises(RewardServiceError) as cm:
                self.client(srv.url).health()
        self.assertEqual((len(srv.requests), cm.exception.code), (1, "nkia_internal"))

    def test_refused_connections_back_off_then_give_up(self):
        with socket.socket() as s:  # a port nothing listens on
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        with self.assertRaises(RewardServiceError) as cm:
            self.client(f"http://127.0.0.1:{port}", max_attempts=4, backoff_s=0.5, max_backoff_s=1.0).health()
        self.assertEqual(cm.exception.code, "nkia_client_retries")
        self.assertEqual(cm.exception.__cause__.code, "nkia_client_connect")
        self.assertEqual(len(self.sleeps), 3)
        for wait, cap in zip(self.sleeps, (0.5, 1.0, 1.0)):
            self.assertTrue(cap / 2 <= wait <= cap, self.sleeps)

    def test_answer_that_is_not_json(self):
        with ScriptedServer([(200, {"Content-Type": "text/plain"}, b"hello")]) as srv:
            with self.assertRaises(RewardServiceError) as cm:
                self.client(srv.url).health()
        self.assertEqual(cm.exception.code, "nkia_client_protocol")

    def test_url_and_token_from_the_environment(self):
        with ScriptedServer([(200, JSON, {"status": "ok"})]) as srv:
            with mock.patch.dict(os.environ, {"NKIA_REWARD_URL": srv.url + "/", "NKIA_REWARD_TOKEN": "from-env"}):
                client = RewardClient()
                self.assertEqual(client.url, srv.url)
                client.health()
            with mock.patch.dict(os.environ, {"NKIA_REWARD_URL": srv.url}):
                os.environ.pop("NKIA_REWARD_TOKEN", None)
                RewardClient().health()
        self.assertEqual(srv.requests[0]["headers"]["Authorization"], "Bearer from-env")
        self.assertEqual((srv.requests[0]["method"], srv.requests[0]["path"]), ("GET", "/health"))
        self.assertNotIn("Authorization", srv.requests[1]["headers"])
        with mock.patch.dict(os.environ, {}, clear=True):
            self.assertEqual(RewardClient().url, "http://127.0.0.1:8470")

    def test_batches_are_split_at_max_batch_and_kept_in_order(self):
        def echo(body):
            return {"results": [{"status": "ok", "score": float(i["index"])} for i in body["items"]]}

        items = [{"task_id": TASK, "kernel_code": "k", "index": i} for i in range(5)]
        with ScriptedServer([(200, JSON, echo)]) as srv:
            results = self.client(srv.url, max_batch=2).reward_batch(items)
            aresults = asyncio.run(AsyncRewardClient(srv.url, max_batch=2).reward_batch(items))
        self.assertEqual([r["score"] for r in results], [0, 1, 2, 3, 4])
        self.assertEqual([r["score"] for r in aresults], [0, 1, 2, 3, 4])
        self.assertEqual([len(r["body"]["items"]) for r in srv.requests[:3]], [2, 2, 1])
        self.assertEqual({r["path"] for r in srv.requests}, {"/v1/reward/batch"})

    def test_batch_items_never_scored_are_sent_again(self):
        busy_item = {"status": "error", "score": None,
                     "error": {"code": "nkia_serve_busy", "message": "no worker became free within the deadline"}}
        lost = {"status": "error", "score": None, "error": {"code": "nkia_task_not_found", "message": "no task"}}
        script = [(200, JSON, {"results": [OK_ANSWER, busy_item, lost, busy_item]}),
                  (200, JSON, {"results": [busy_item, OK_ANSWER]}),
                  (200, JSON, {"results": [OK_ANSWER]})]
        items = [{"task_id": TASK, "kernel_code": f"k{i}"} for i in range(4)]
        with ScriptedServer(script) as srv:
            results = self.client(srv.url).reward_batch(items)
        self.assertEqual(results, [OK_ANSWER, OK_ANSWER, lost, OK_ANSWER])
        self.assertEqual([[i["kernel_code"] for i in r["body"]["items"]] for r in srv.requests],
                         [["k0", "k1", "k2", "k3"], ["k1", "k3"], ["k1"]])
        self.assertEqual(len(self.sleeps), 2)

    def test_batch_answer_of_the_wrong_length(self):
        with ScriptedServer([(200, JSON, {"results": []})]) as srv:
            with self.assertRaises(RewardServiceError) as cm:
                self.client(srv.url).reward_batch([{"task_id": TASK, "kernel_code": "k"}])
        self.assertEqual(cm.exception.code, "nkia_client_protocol")


# --- pure functions: no server ---


class AdapterUnitTest(unittest.TestCase):
    def test_flat_result_keeps_the_same_scalar_keys_for_every_status(self):
        ok = flat_result({**OK_ANSWER, "flags": ["excessive_speedup", "input_copy"], "cached": True})
        self.assertEqual(ok["score"], 1.5)
        self.assertEqual(ok["flags"], "excessive_speedup,input_copy")
        self.assertIs(ok["cached"], True)
        fmt = flat_result({"status": "format_error", "score": -1, "components": {"format": 0, "compile": 0,
                                                                                  "correct": 0, "speedup": None,
                                                                                  "coverage": 0}, "flags": []})
        self.assertEqual((fmt["score"], fmt["speedup"]), (-1.0, 0.0))
        err = flat_result({"status": "error", "score": None, "error": {"code": "nkia_reference_failed",
                                                                        "message": "task.py raised"}})
        self.assertEqual((err["score"], err["status"], err["error"]), (0.0, "error", "nkia_reference_failed"))
        for r in (ok, fmt, err):
            self.assertEqual(set(r), FLAT_KEYS)
            for key, value in r.items():
                self.assertIsInstance(value, (int, float, str, bool), key)

    def test_task_from_label(self):
        self.assertEqual(task_from_label(" add_fp32\n"), ("add_fp32", {}))
        self.assertEqual(task_from_label('{"task_id": "L1_014", "preset": "kevin", "seeds": 2, "other": 1}'),
                         ("L1_014", {"preset": "kevin", "seeds": 2}))
        self.assertEqual(task_from_label({"task_id": "L1_014", "presets": "nki"}), ("L1_014", {"presets": ["nki"]}))
        self.assertEqual(task_from_label(None), (None, {}))
        self.assertEqual(task_from_label(""), (None, {}))

    def test_completion_text(self):
        self.assertEqual(completion_text("plain"), "plain")
        text = completion_text([
            {"role": "system", "content": "not this"},
            {"role": "assistant", "content": [{"type": "text", "text": "thinking"}],
             "tool_calls": [{"type": "function", "function": {"name": "verify", "arguments": {"kernel_code": "K1"}}},
                            {"type": "function", "function": {"name": "lookup", "arguments": '{"query": "q"}'}}]},
            {"role": "tool", "content": "PASS"},
            {"role": "user", "content": "nor this"},
        ])
        self.assertEqual(text, "thinking\n\n```python\nK1\n```\n\nPASS")

    def test_reward_function_names_and_pickling(self):
        self.assertEqual(make_nki_reward().__name__, "nki_reward")
        r = make_nki_reward(preset="binary_compile", seeds=1)
        self.assertEqual(r.__name__, "nki_binary_compile")
        copy = pickle.loads(pickle.dumps(r))
        self.assertEqual((copy.__name__, copy.fields), ("nki_binary_compile", {"seeds": 1, "preset": "binary_compile"}))
        self.assertEqual(make_nki_reward(name="kernel", asynchronous=True).__name__, "kernel")
        with self.assertRaises(TypeError):
            make_nki_reward(seed=1)
        with self.assertRaises(ValueError):
            nki_reward(prompts=["p"], completions=["c"])  # no task_id column

    def test_tool_yaml_names_the_tool_classes(self):
        text = (SOURCE_DIR / "python" / "nki_agent_rl" / "configs" / "verl_tools.yaml").read_text(encoding="utf-8")
        classes = re.findall(r'class_name:\s*"nki_agent_rl\.verl_tools\.(\w+)"', text)
        names = re.findall(r'^\s+name:\s*"(\w+)"', text, re.M)
        self.assertEqual(classes, ["NkiCompileTool", "NkiVerifyTool", "NkiProfileTool"])
        self.assertEqual(names, [getattr(verl_tools, c).tool for c in classes])
        self.assertEqual(text.count('required: ["kernel_code"]'), 3)

    def test_tool_without_kernel_code_or_task(self):
        async def run():
            tool = verl_tools.NkiVerifyTool({"url": "http://127.0.0.1:9"})
            self.assertEqual(tool.name, "verify")
            iid, _ = await tool.create(create_kwargs={"task_id": TASK})
            response, reward, _ = await tool.execute(iid, {})
            self.assertIn("kernel_code", response.text)
            self.assertEqual(reward, 0.0)
            iid2, _ = await tool.create()
            with self.assertRaises(ValueError):
                await tool.execute(iid2, {"kernel_code": BASELINE})

        asyncio.run(run())


if __name__ == "__main__":
    unittest.main()
