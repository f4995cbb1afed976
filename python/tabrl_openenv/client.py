"""Clients for ``tabrl serve``'s OpenEnv protocol: one WebSocket session at /ws, one reply per request.

``EnvClient`` is blocking, ``AsyncEnvClient`` is its asyncio twin; both send ``reset``, ``step``,
``state``, ``mcp`` (``tools/list``) and ``close`` and turn an ``error`` reply into a
``ServeError`` that carries the server's code. ``get_health``, ``get_schema`` and ``get_metadata``
read the HTTP endpoints. The wire format itself is documented in docs/serve.md.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from .websocket import AsyncWebSocket, ConnectionClosed, SyncWebSocket, WebSocketError

#: The environment variable the TRL adapter and examples read the server's URL from.
URL_ENV = "TABRL_SERVE_URL"
#: The environment variable read for the bearer token when none is given.
TOKEN_ENV = "TABRL_SERVE_TOKEN"
DEFAULT_TIMEOUT_S = 60.0


class ServeError(RuntimeError):
    """An ``error`` reply from the server (``code`` is INVALID_JSON, VALIDATION_ERROR, CAPACITY_REACHED, ...; ``data`` the whole payload)."""

    def __init__(self, code: str, message: str, data: dict[str, Any] | None = None) -> None:
        self.code = code
        self.data = data or {}
        super().__init__(f"{code}: {message}")


class SessionClosedError(ServeError):
    """The session's connection closed or dropped (code CONNECTION_CLOSED): open a new client to go on."""

    def __init__(self, message: str, close_code: int | None = None) -> None:
        super().__init__("CONNECTION_CLOSED", message, {"close_code": close_code})
        self.close_code = close_code


@dataclass
class StepResult:
    """One observation reply: ``observation`` as the server sent it, ``reward`` (None before the last step) and the end flags."""

    observation: dict[str, Any]
    reward: float | None
    done: bool
    terminated: bool = False
    truncated: bool = False
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def prompt(self) -> str:
        """What is new for the model: the task's prompt after a reset, the environment's reply after a step."""
        return str(self.observation.get("prompt", ""))

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The whole conversation so far as OpenAI chat messages (system prompt included)."""
        return list(self.observation.get("messages", []))

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The environment's tools as OpenAI tool schemas (empty for a text harness)."""
        return list(self.observation.get("tools", []) or [])


def ws_url(base_url: str) -> str:
    """The /ws URL of a server given as http://HOST:PORT (or already as ws://HOST:PORT/ws)."""
    parts = urlsplit(base_url)
    scheme = {"http": "ws", "https": "wss"}.get(parts.scheme, parts.scheme)
    path = parts.path.rstrip("/")
    if not path.endswith("/ws"):
        path += "/ws"
    return urlunsplit((scheme, parts.netloc, path, parts.query, ""))


def http_url(base_url: str) -> str:
    """The http(s)://HOST:PORT base of a server given as a ws:// URL or an http:// one."""
    parts = urlsplit(base_url)
    scheme = {"ws": "http", "wss": "https"}.get(parts.scheme, parts.scheme)
    path = parts.path.rstrip("/")
    if path.endswith("/ws"):
        path = path[: -len("/ws")]
    return urlunsplit((scheme, parts.netloc, path, "", ""))


def _auth_headers(token: str | None) -> dict[str, str]:
    token = token if token is not None else os.environ.get(TOKEN_ENV)
    return {"Authorization": f"Bearer {token}"} if token else {}


def step_request(message: str | None = None, tool_call: dict[str, Any] | None = None,
                 tool_calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The ``step`` request for a reply: text (``message``), one tool call (``{"name", "arguments"}``), or text with OpenAI ``tool_calls``."""
    if tool_call is not None:
        if message is not None or tool_calls is not None:
            raise ValueError("step() takes a tool_call alone, or a message with optional tool_calls")
        name = tool_call.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError('a tool_call is {"name": "...", "arguments": {...}}')
        return {"type": "step", "data": {"type": "call_tool", "tool_name": name, "arguments": tool_call.get("arguments") or {}}}
    if message is None and tool_calls is None:
        raise ValueError("step() needs the model's reply: message=..., tool_call=... or tool_calls=...")
    data: dict[str, Any] = {"message": message if message is not None else ""}
    if tool_calls is not None:
        data["tool_calls"] = tool_calls
    return {"type": "step", "data": data}


def _tools_list_request(request_id: int) -> dict[str, Any]:
    return {"type": "mcp", "data": {"jsonrpc": "2.0", "method": "tools/list", "params": {}, "id": request_id}}


def parse_reply(text: str, expected: str) -> dict[str, Any]:
    """Reads one reply frame; raises ``ServeError`` for an ``error`` reply or a reply of another type than ``expected``."""
    try:
        reply = json.loads(text)
    except json.JSONDecodeError as error:
        raise ServeError("INVALID_REPLY", f"the server sent a frame that is not JSON ({error})") from error
    if not isinstance(reply, dict):
        raise ServeError("INVALID_REPLY", "the server sent a frame that is not a JSON object")
    data = reply.get("data") if isinstance(reply.get("data"), dict) else {}
    if reply.get("type") == "error":
        raise ServeError(str(data.get("code", "UNKNOWN")), str(data.get("message", "the server gave no message")), data)
    if reply.get("type") != expected:
        raise ServeError("INVALID_REPLY", f"expected a {expected!r} reply, got {reply.get('type')!r}")
    return data


def parse_observation(data: dict[str, Any]) -> StepResult:
    """Turns an ``observation`` reply's data into a ``StepResult``."""
    reward = data.get("reward")
    return StepResult(
        observation=data.get("observation") if isinstance(data.get("observation"), dict) else {},
        reward=None if reward is None else float(reward),
        done=bool(data.get("done")),
        terminated=bool(data.get("terminated")),
        truncated=bool(data.get("truncated")),
        raw=data,
    )


def parse_tools(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The tools of an ``mcp`` ``tools/list`` reply (``name``, ``description``, ``input_schema``); raises on a JSON-RPC error."""
    if "error" in data:
        error = data["error"] if isinstance(data["error"], dict) else {}
        raise ServeError(f"JSONRPC_{error.get('code', 'ERROR')}", str(error.get("message", "tools/list failed")), data)
    result = data.get("result") if isinstance(data.get("result"), dict) else {}
    tools = result.get("tools", [])
    return [tool for tool in tools if isinstance(tool, dict)] if isinstance(tools, list) else []


class EnvClient:
    """A blocking session with ``tabrl serve``: connects on creation; use it as a context manager or call ``close()``."""

    def __init__(self, base_url: str, *, token: str | None = None, timeout: float | None = DEFAULT_TIMEOUT_S,
                 max_message_bytes: int = 100 * 1024 * 1024) -> None:
        self.base_url = http_url(base_url)
        self._request_id = 0
        try:
            self._ws = SyncWebSocket.connect(ws_url(base_url), headers=_auth_headers(token), timeout=timeout, max_message_bytes=max_message_bytes)
        except WebSocketError as error:
            raise ServeError("CONNECT_FAILED", f"could not open a session at {ws_url(base_url)}: {error}") from error
        except OSError as error:
            raise ServeError("CONNECT_FAILED", f"could not reach {ws_url(base_url)} ({error}); is `tabrl serve` running there?") from error

    def __enter__(self) -> "EnvClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _request(self, request: dict[str, Any], expected: str) -> dict[str, Any]:
        try:
            self._ws.send_text(json.dumps(request))
        except ConnectionClosed as error:
            raise SessionClosedError(f"the session is closed ({error})", error.code) from error
        except OSError:
            pass  # the server may have closed right after an error reply (CAPACITY_REACHED): read it below
        try:
            return parse_reply(self._ws.recv_text(), expected)
        except ConnectionClosed as error:
            raise SessionClosedError(f"the server closed the session ({error})", error.code) from error
        except socket.timeout as error:
            raise ServeError("TIMEOUT", "the server did not answer in time; the session is now out of step, open a new one") from error

    def reset(self, **kwargs: Any) -> StepResult:
        """Starts an episode (``task_index``, ``seed``, ``episode_id``, ``split``) and returns its first observation."""
        return parse_observation(self._request({"type": "reset", "data": kwargs}, "observation"))

    def step(self, message: str | None = None, *, tool_call: dict[str, Any] | None = None,
             tool_calls: list[dict[str, Any]] | None = None) -> StepResult:
        """Sends the model's reply and returns the next observation (``reward`` is set on the last one)."""
        return parse_observation(self._request(step_request(message, tool_call, tool_calls), "observation"))

    def state(self) -> dict[str, Any]:
        """The session's state (``episode_id``, ``step_count``, ...)."""
        return self._request({"type": "state"}, "state")

    def list_tools(self) -> list[dict[str, Any]]:
        """The environment's tools, through MCP ``tools/list``."""
        self._request_id += 1
        return parse_tools(self._request(_tools_list_request(self._request_id), "mcp"))

    def close(self) -> None:
        """Ends the session (a ``close`` message, then the closing handshake); closing twice is harmless."""
        try:
            self._ws.send_text(json.dumps({"type": "close"}))
        except (ConnectionClosed, OSError):
            pass
        self._ws.close()

    def abort(self) -> None:
        """Drops the connection without saying goodbye, as a crashed trainer would (for tests of the server's clean-up)."""
        self._ws.abort()


class AsyncEnvClient:
    """The asyncio twin of ``EnvClient``: ``client = await AsyncEnvClient.connect(url)``, or ``async with``."""

    def __init__(self, base_url: str, ws: AsyncWebSocket, timeout: float | None = DEFAULT_TIMEOUT_S) -> None:
        self.base_url = http_url(base_url)
        self._ws = ws
        self._timeout = timeout
        self._request_id = 0

    @classmethod
    async def connect(cls, base_url: str, *, token: str | None = None, timeout: float | None = DEFAULT_TIMEOUT_S,
                      max_message_bytes: int = 100 * 1024 * 1024) -> "AsyncEnvClient":
        """Opens a session at ``base_url`` (http://HOST:PORT or ws://HOST:PORT/ws)."""
        try:
            ws = await AsyncWebSocket.connect(ws_url(base_url), headers=_auth_headers(token), timeout=timeout, max_message_bytes=max_message_bytes)
        except WebSocketError as error:
            raise ServeError("CONNECT_FAILED", f"could not open a session at {ws_url(base_url)}: {error}") from error
        except OSError as error:
            raise ServeError("CONNECT_FAILED", f"could not reach {ws_url(base_url)} ({error}); is `tabrl serve` running there?") from error
        return cls(base_url, ws, timeout)

    async def __aenter__(self) -> "AsyncEnvClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _request(self, request: dict[str, Any], expected: str) -> dict[str, Any]:
        try:
            await self._ws.send_text(json.dumps(request))
        except ConnectionClosed as error:
            raise SessionClosedError(f"the session is closed ({error})", error.code) from error
        except OSError:
            pass
        try:
            return parse_reply(await asyncio.wait_for(self._ws.recv_text(), self._timeout), expected)
        except ConnectionClosed as error:
            raise SessionClosedError(f"the server closed the session ({error})", error.code) from error
        except asyncio.TimeoutError as error:
            raise ServeError("TIMEOUT", "the server did not answer in time; the session is now out of step, open a new one") from error

    async def reset(self, **kwargs: Any) -> StepResult:
        """Starts an episode (``task_index``, ``seed``, ``episode_id``, ``split``) and returns its first observation."""
        return parse_observation(await self._request({"type": "reset", "data": kwargs}, "observation"))

    async def step(self, message: str | None = None, *, tool_call: dict[str, Any] | None = None,
                   tool_calls: list[dict[str, Any]] | None = None) -> StepResult:
        """Sends the model's reply and returns the next observation (``reward`` is set on the last one)."""
        return parse_observation(await self._request(step_request(message, tool_call, tool_calls), "observation"))

    async def state(self) -> dict[str, Any]:
        """The session's state (``episode_id``, ``step_count``, ...)."""
        return await self._request({"type": "state"}, "state")

    async def list_tools(self) -> list[dict[str, Any]]:
        """The environment's tools, through MCP ``tools/list``."""
        self._request_id += 1
        return parse_tools(await self._request(_tools_list_request(self._request_id), "mcp"))

    async def close(self) -> None:
        """Ends the session; closing twice is harmless."""
        try:
            await self._ws.send_text(json.dumps({"type": "close"}))
        except (ConnectionClosed, OSError):
            pass
        await self._ws.close()

    def abort(self) -> None:
        """Drops the connection without saying goodbye."""
        self._ws.abort()


def _get_json(base_url: str, path: str, token: str | None, timeout: float) -> Any:
    request = urllib.request.Request(http_url(base_url) + path, headers={"Accept": "application/json", **_auth_headers(token)})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read().decode("utf-8"))
    except urllib.error.HTTPError as error:
        body = error.read().decode("utf-8", errors="replace")[:500]
        raise ServeError(f"HTTP_{error.code}", f"GET {path} answered {error.code}: {body}") from error
    except urllib.error.URLError as error:
        raise ServeError("CONNECT_FAILED", f"could not reach {http_url(base_url)}{path} ({error.reason}); is `tabrl serve` running there?") from error


def get_health(base_url: str, *, token: str | None = None, timeout: float = 10.0) -> dict[str, Any]:
    """``GET /health``: ``{"status": "healthy"}`` from a running server."""
    return _get_json(base_url, "/health", token, timeout)


def get_schema(base_url: str, *, token: str | None = None, timeout: float = 10.0) -> dict[str, Any]:
    """``GET /schema``: the JSON Schemas of the action, the observation and the state."""
    return _get_json(base_url, "/schema", token, timeout)


def get_metadata(base_url: str, *, token: str | None = None, timeout: float = 10.0) -> dict[str, Any]:
    """``GET /metadata``: the environment's name, description, version and readme."""
    return _get_json(base_url, "/metadata", token, timeout)
