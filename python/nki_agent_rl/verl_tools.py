"""verl tools for multi-turn rollouts: nki-agent's compile, verify and profile (docs/agent.md, "The
tools") as calls to `nki-agent serve`. Declared in configs/verl_tools.yaml, wired with
actor_rollout_ref.rollout.multi_turn.tool_config_path (docs/rl.md, "verl").

Tool config keys (the YAML's `config:`): url, token (else $NKIA_REWARD_URL / $NKIA_REWARD_TOKEN),
timeout, task_id (a default when a row names none); for verify also preset, seeds, speed (its step
reward). The task of an instance is `task_id` from its create kwargs, which verl's tool agent loop
passes as create_kwargs=extra_info.tools_kwargs[<tool name>].create_kwargs.

What the model reads is the service's `content`, the text nki-agent's own agent reads. The step
reward is 0.0 for compile and profile; for verify it is the service's score of that kernel under the
configured preset (0.0 when the service could not score it), and calc_reward returns the last one.
`kernel_code` is required: verl's tool agent loop creates and releases an instance around every call,
so there is no earlier kernel to reuse, unlike in nki-agent's own agent.

With verl importable the classes subclass verl.tools.base_tool.BaseTool and answer
verl.tools.schemas.ToolResponse; without it, stand-ins of the same shape, so they import and test
anywhere.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

from ._shared import async_client, request_fields

try:
    from verl.tools.base_tool import BaseTool
    from verl.tools.schemas import OpenAIFunctionToolSchema, ToolResponse

    HAVE_VERL = True
except ImportError:
    HAVE_VERL = False
    OpenAIFunctionToolSchema = None

    class ToolResponse:  # type: ignore[no-redef]
        """Stand-in for verl.tools.schemas.ToolResponse."""

        def __init__(self, text: str | None = None, image: list | None = None, video: list | None = None):
            self.text, self.image, self.video = text, image, video

        def is_empty(self) -> bool:
            return not self.text and not self.image and not self.video

        def __repr__(self) -> str:
            return f"ToolResponse(text={self.text!r})"

    class BaseTool:  # type: ignore[no-redef]
        """Stand-in for verl.tools.base_tool.BaseTool: the same constructor and async methods."""

        def __init__(self, config: dict, tool_schema: Any):
            self.config = config
            self.tool_schema = tool_schema or self.get_openai_tool_schema()
            assert self.tool_schema is not None, "Tool schema is not set!"
            self.name = _schema_name(self.tool_schema)

        def get_openai_tool_schema(self) -> Any:
            return self.tool_schema

        async def create(self, instance_id: str | None = None, **kwargs: Any) -> tuple[str, ToolResponse]:
            return instance_id or str(uuid.uuid4()), ToolResponse()

        async def execute(self, instance_id: str, parameters: dict[str, Any],
                          **kwargs: Any) -> tuple[ToolResponse, float, dict]:
            return ToolResponse(text="Updated the tool state."), 0.0, {}

        async def calc_reward(self, instance_id: str, **kwargs: Any) -> float:
            return 0.0

        async def release(self, instance_id: str, **kwargs: Any) -> None:
            pass

__all__ = ["HAVE_VERL", "NkiCompileTool", "NkiProfileTool", "NkiVerifyTool", "ToolResponse", "tool_schema"]

_KERNEL_PARAM = {
    "type": "string",
    "description": "The complete kernel module: imports, the @nki.jit kernel and any helpers.",
}
_DESCRIPTIONS = {
    "compile": "Compile-check the kernel on the NeuronCore simulator at the task's shapes without computing: "
               "returns the first error (code, line, message, fix) or what the kernel issues and its output shapes.",
    "verify": "Run the kernel against the PyTorch reference: several seeds, input distributions and shapes "
              "(including larger and ragged ones). Returns PASS with the simulated speedup over the baseline, or "
              "the failed check with max abs/rel error, mismatch count and the first bad index.",
    "profile": "Simulated profile at the task's shapes: latency, engine utilisation, MFU/MBU, DMA statistics, the "
               "hottest source lines and optimisation insights.",
}


def tool_schema(tool: str) -> dict[str, Any]:
    """The OpenAI function schema of a tool (configs/verl_tools.yaml holds the same)."""
    return {"type": "function",
            "function": {"name": tool, "description": _DESCRIPTIONS[tool],
                         "parameters": {"type": "object", "properties": {"kernel_code": dict(_KERNEL_PARAM)},
                                        "required": ["kernel_code"]}}}


def _schema_name(schema: Any) -> str:
    if isinstance(schema, dict):
        return schema["function"]["name"]
    return schema.function.name


class _NkiServiceTool(BaseTool):
    tool = ""  # the service route: /v1/<tool>

    def __init__(self, config: dict | None = None, tool_schema: Any = None):
        self._instances: dict[str, dict[str, Any]] = {}
        super().__init__(dict(config or {}), tool_schema)
        c = self.config
        self._client = async_client(c.get("url"), c.get("token"), c.get("timeout"))

    def get_openai_tool_schema(self) -> Any:
        schema = getattr(self, "tool_schema", None)
        if schema is not None:
            return schema
        schema = tool_schema(self.tool)
        return OpenAIFunctionToolSchema.model_validate(schema) if HAVE_VERL else schema

    async def create(self, instance_id: str | None = None, task_id: str | None = None,
                     **kwargs: Any) -> tuple[str, ToolResponse]:
        create_kwargs = kwargs.get("create_kwargs") or {}
        task = task_id or create_kwargs.get("task_id") or self.config.get("task_id")
        instance_id = instance_id or str(uuid.uuid4())
        self._instances[instance_id] = {"task_id": str(task) if task else None, "reward": 0.0}
        return instance_id, ToolResponse()

    def _kernel(self, instance_id: str, parameters: Any) -> tuple[dict[str, Any], str | None]:
        state = self._instances.get(instance_id)
        if state is None:
            raise KeyError(f"{self.name}: no instance {instance_id!r} (create it first)")
        if not state["task_id"]:
            raise ValueError(f"{self.name}: no task id; give extra_info.tools_kwargs.{self.name}.create_kwargs."
                             f"task_id in the dataset, or task_id in the tool's config")
        if isinstance(parameters, str):
            try:
                parameters = json.loads(parameters)
            except ValueError:
                parameters = {}
        code = parameters.get("kernel_code") if isinstance(parameters, dict) else None
        return state, code if isinstance(code, str) and code.strip() else None

    def _missing(self) -> tuple[ToolResponse, float, dict]:
        return ToolResponse(text=f'{self.name} needs {{"kernel_code": "<the complete kernel module>"}}.'), 0.0, \
            {"ok": False}

    async def execute(self, instance_id: str, parameters: dict[str, Any],
                      **kwargs: Any) -> tuple[ToolResponse, float, dict]:
        state, code = self._kernel(instance_id, parameters)
        if code is None:
            return self._missing()
        answer = await getattr(self._client, self.tool)(state["task_id"], code)
        return ToolResponse(text=str(answer.get("content") or "")), 0.0, {"ok": bool(answer.get("ok"))}

    async def calc_reward(self, instance_id: str, **kwargs: Any) -> float:
        state = self._instances.get(instance_id)
        return float(state["reward"]) if state else 0.0

    async def release(self, instance_id: str, **kwargs: Any) -> None:
        self._instances.pop(instance_id, None)


class NkiCompileTool(_NkiServiceTool):
    """compile: the simulator's first Diagnostic, or what the kernel issues; step reward 0."""

    tool = "compile"


class NkiProfileTool(_NkiServiceTool):
    """profile: the cost model's summary; step reward 0."""

    tool = "profile"


class NkiVerifyTool(_NkiServiceTool):
    """verify: PASS or the failed check; the step reward is the service's score of the kernel."""

    tool = "verify"

    async def execute(self, instance_id: str, parameters: dict[str, Any],
                      **kwargs: Any) -> tuple[ToolResponse, float, dict]:
        state, code = self._kernel(instance_id, parameters)
        if code is None:
            return self._missing()
        # The text the model reads and the reward are two requests, sent together.
        verified, scored = await asyncio.gather(
            self._client.verify(state["task_id"], code),
            self._client.reward(task_id=state["task_id"], kernel_code=code, **request_fields(self.config)))
        score = scored.get("score")
        reward = float(score) if scored.get("status") != "error" and score is not None else 0.0
        state["reward"] = reward
        metrics = {"ok": bool(verified.get("ok")), "score": reward, "status": str(scored.get("status"))}
        return ToolResponse(text=str(verified.get("content") or "")), reward, metrics
