"""A TRL ``environment_factory`` class over a ``tabrl serve`` session.

TRL's GRPOTrainer builds instances with no arguments, calls ``reset(**dataset_row)`` before each
rollout (a returned string is appended to the last user message), offers every public method but
``reset`` and ``get_reward`` to the model as a tool (its schema read from the signature and the
Google-style ``Args:`` docstring), and calls ``get_reward()`` when the rollout is over.

``TabrlEnvironment`` connects in ``__init__`` and binds its tools per instance: for a text harness
one async ``answer(text)``; for a tool harness one async method per environment tool, generated
from the tool's JSON schema, plus ``answer(text)`` for the final reply (TRL never hands the final
plain-text reply to an environment, and a TabRL tool episode ends on a reply without tool calls).
Tools run the blocking client in a thread pool, so TRL's ``asyncio.gather`` runs rollouts
concurrently whatever event loop it uses. This module imports nothing from TRL.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import keyword
import os
import types
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

from .client import DEFAULT_TIMEOUT_S, TOKEN_ENV, URL_ENV, EnvClient, ServeError, SessionClosedError, StepResult

#: The reset arguments the server takes; any other key of a dataset row (``prompt``, ...) stays on the trainer's side.
RESET_KEYS = ("task_index", "seed", "episode_id", "split")
#: Names TRL treats specially, so an environment tool cannot take them.
RESERVED_NAMES = ("reset", "get_reward")
EPISODE_OVER = "The episode is over; no more replies are taken."
EPISODE_ENDED = "The episode has ended."

# One pool for every instance: TRL runs up to one tool call per rollout at a time, and a rollout's
# calls are a blocking send + receive on its own socket.
_TOOL_THREADS = ThreadPoolExecutor(max_workers=256, thread_name_prefix="tabrl-openenv")

_JSON_TO_PYTHON: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool, "object": dict}


def python_type(schema: dict[str, Any]) -> Any:
    """The Python annotation for a JSON Schema property, as transformers' ``get_json_schema`` maps it back.

    Arrays are ``list[item type]`` (a bare ``list`` would read back as an object), a missing or
    mixed type is ``Any`` (no type), and a nullable type is its non-null type.
    """
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        kind = kinds[0] if len(kinds) == 1 else None
    if kind == "array":
        items = schema.get("items")
        return list[python_type(items) if isinstance(items, dict) else Any]
    return _JSON_TO_PYTHON.get(kind, Any) if isinstance(kind, str) else Any


def _one_line(text: Any) -> str:
    return " ".join(str(text).split())


def tool_docstring(description: str, parameters: dict[str, Any]) -> str:
    """A Google-style docstring (summary, then ``Args:``) for a tool, as transformers' ``get_json_schema`` reads it."""
    properties = parameters.get("properties") or {}
    lines = [_one_line(description) or "Calls the environment's tool."]
    if properties:
        lines += ["", "Args:"]
        for name, schema in properties.items():
            schema = schema if isinstance(schema, dict) else {}
            text = _one_line(schema.get("description") or schema.get("title") or name)
            choices = schema.get("enum")
            if isinstance(choices, list) and choices and all(isinstance(choice, str) for choice in choices):
                # transformers reads this suffix with json.loads into the parameter's enum.
                text += f" (choices: {json.dumps(choices)})"
            lines.append(f"    {name}: {text}")
    lines += ["", "Returns:", "    The environment's reply."]
    return "\n".join(lines)


def tool_signature(tool_name: str, parameters: dict[str, Any]) -> inspect.Signature:
    """The Python signature of a generated tool method: ``self``, required parameters, then optional ones defaulting to None."""
    properties = parameters.get("properties") or {}
    required = set(parameters.get("required") or [])
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    ordered = [name for name in properties if name in required] + [name for name in properties if name not in required]
    for name in ordered:
        if not name.isidentifier() or keyword.iskeyword(name):
            raise ValueError(f"tool {tool_name!r} has a parameter {name!r} that is not a Python name; TRL passes arguments as keywords, so rename it in the environment")
        schema = properties[name] if isinstance(properties[name], dict) else {}
        default = inspect.Parameter.empty if name in required else None
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=python_type(schema)))
    return inspect.Signature(params, return_annotation=str)


def prompt_text(messages: list[dict[str, Any]]) -> str:
    """The text of a prompt's messages (system prompt, few-shot turns, the task), joined by blank lines, for trainers that take one string."""
    return "\n\n".join(str(message.get("content") or "") for message in messages if message.get("content"))


def row_shows_prompt(prompt: Any) -> bool:
    """Whether a row's ``prompt`` column already shows the model the task: a non-empty string, or messages whose last one has text (TRL appends reset()'s text to that last message otherwise)."""
    if isinstance(prompt, str):
        return bool(prompt.strip())
    if isinstance(prompt, list) and prompt and isinstance(prompt[-1], dict):
        return bool(str(prompt[-1].get("content") or "").strip())
    return False


def check_tool_name(name: Any) -> str:
    """Returns ``name`` when it can be a public Python method TRL will offer, and raises a ValueError saying why not otherwise."""
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
        raise ValueError(f"the environment's tool {name!r} is not a Python name; TRL calls tools as methods, so rename it in the environment")
    if name.startswith("_") or name in RESERVED_NAMES:
        raise ValueError(f"the environment's tool {name!r} clashes with TRL's environment interface (reset, get_reward and _private names are not tools); rename it")
    return name


def make_tool_method(name: str, description: str, parameters: dict[str, Any], call: Callable[[Any, dict[str, Any]], Any]) -> Callable[..., Any]:
    """An async function ``(self, **arguments) -> str`` named ``name`` whose signature and docstring describe the tool's schema."""

    async def tool(self: Any, **arguments: Any) -> str:
        sent = {key: value for key, value in arguments.items() if value is not None}
        return await call(self, sent)

    signature = tool_signature(name, parameters)
    tool.__name__ = name
    tool.__qualname__ = f"TabrlEnvironment.{name}"
    tool.__doc__ = tool_docstring(description, parameters)
    tool.__signature__ = signature  # type: ignore[attr-defined]
    tool.__annotations__ = {param.name: param.annotation for param in list(signature.parameters.values())[1:]} | {"return": str}
    return tool


_ANSWER_PARAMETERS = {"type": "object", "properties": {"text": {"type": "string", "description": "Your whole reply, exactly as the task asks for it."}}, "required": ["text"]}
_ANSWER_DESCRIPTION = "Sends your reply to the environment and returns what it answers."


class TabrlEnvironment:
    """A TRL environment over one ``tabrl serve`` session; the URL comes from ``TABRL_SERVE_URL`` (or ``make_environment_class``)."""

    #: The server's URL (http://HOST:PORT); ``None`` reads ``TABRL_SERVE_URL``.
    server_url: str | None = None
    #: The bearer token; ``None`` reads ``TABRL_SERVE_TOKEN``.
    server_token: str | None = None
    #: Seconds to wait for each reply (a step that calls a judge may need more than the default).
    server_timeout: float | None = DEFAULT_TIMEOUT_S

    def __init__(self) -> None:
        url = type(self).server_url or os.environ.get(URL_ENV)
        if not url:
            raise ValueError(f"no server URL: set {URL_ENV}=http://HOST:PORT (what `tabrl serve` printed), or use make_environment_class(url)")
        self._url, self._token = url, type(self).server_token or os.environ.get(TOKEN_ENV)
        self._client = EnvClient(self._url, token=self._token, timeout=type(self).server_timeout)
        self._last: StepResult | None = None
        self._reward: float | None = None
        self._tool_names: list[str] = []
        tools = self._client.list_tools()
        for tool in tools:
            name = check_tool_name(tool.get("name"))
            schema = tool.get("input_schema") or tool.get("inputSchema") or tool.get("parameters") or {}
            self._bind(name, str(tool.get("description") or ""), schema if isinstance(schema, dict) else {}, _tool_caller(name))
        if "answer" not in self._tool_names:
            self._bind("answer", _ANSWER_DESCRIPTION, _ANSWER_PARAMETERS, _send_answer)

    def _bind(self, name: str, description: str, parameters: dict[str, Any], call: Callable[[Any, dict[str, Any]], Any]) -> None:
        setattr(self, name, types.MethodType(make_tool_method(name, description, parameters, call), self))
        self._tool_names.append(name)

    def reset(self, **row: Any) -> str | None:
        """Starts an episode for a dataset row (its ``task_index``, ``seed``, ``episode_id``, ``split``) and returns the task's whole prompt as text (system prompt included), or None when the row's own ``prompt`` already ends with the task's text."""
        self._reward = None
        arguments = {key: row[key] for key in RESET_KEYS if row.get(key) is not None}
        try:
            self._last = self._client.reset(**arguments)
        except SessionClosedError:
            # The server reaped the idle session (--session-timeout) while the trainer was updating weights.
            self._client = EnvClient(self._url, token=self._token, timeout=type(self).server_timeout)
            self._last = self._client.reset(**arguments)
        return None if row_shows_prompt(row.get("prompt")) else prompt_text(self._last.messages)

    def get_reward(self) -> float:
        """The episode's reward: the rubric's total from the last step; an episode still open is first ended with an empty reply, as a model that stops answering would end it, and one the server failed scores 0."""
        if self._reward is None:
            if self._last is None:
                raise RuntimeError("get_reward() before reset(): no episode was played")
            if not self._last.done:
                try:
                    self._record(self._client.step(""))
                except ServeError as error:
                    self._fail(error)
        return self._reward if self._reward is not None else 0.0

    def _record(self, result: StepResult) -> str:
        self._last = result
        if result.done:
            self._reward = result.reward if result.reward is not None else 0.0
            return result.prompt or EPISODE_ENDED
        return result.prompt

    def _fail(self, error: ServeError) -> str:
        """Ends the episode with reward 0 after an error that ended it on the server (environment code failed, the session closed)."""
        self._reward = 0.0
        if self._last is not None:
            self._last = StepResult(self._last.observation, None, True)
        return f"The environment failed ({error}); the episode is over."

    async def _step_in_thread(self, **step: Any) -> str:
        if self._last is None:
            raise RuntimeError("the environment was not reset before a tool call")
        if self._last.done:
            return EPISODE_OVER
        loop = asyncio.get_running_loop()
        try:
            result = await loop.run_in_executor(_TOOL_THREADS, lambda: self._client.step(**step))
        except ServeError as error:
            if error.code == "VALIDATION_ERROR":
                # A malformed call (the model's arguments): the same turn still waits, so the model may retry.
                return f"Error: {error}"
            return self._fail(error)
        return self._record(result)

    def __del__(self) -> None:
        try:
            self._client.close()
        except Exception:
            pass


async def _send_answer(env: TabrlEnvironment, arguments: dict[str, Any]) -> str:
    return await env._step_in_thread(message=str(arguments.get("text", "")))


def _tool_caller(name: str) -> Callable[[TabrlEnvironment, dict[str, Any]], Any]:
    async def call(env: TabrlEnvironment, arguments: dict[str, Any]) -> str:
        return await env._step_in_thread(tool_call={"name": name, "arguments": arguments})

    return call


def make_environment_class(url: str, token: str | None = None, timeout: float | None = DEFAULT_TIMEOUT_S) -> type[TabrlEnvironment]:
    """A ``TabrlEnvironment`` subclass bound to ``url`` (and ``token``, and a reply ``timeout`` in seconds), to pass as ``environment_factory``."""
    return type("TabrlEnvironment", (TabrlEnvironment,), {"server_url": url, "server_token": token, "server_timeout": timeout})
