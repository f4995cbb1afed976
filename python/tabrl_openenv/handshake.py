"""The WebSocket opening handshake (RFC 6455 §4): ws:// URLs, the upgrade request, and the check of the server's answer."""

from __future__ import annotations

import base64
import hashlib
import os
from dataclasses import dataclass
from typing import Mapping
from urllib.parse import urlsplit

from .framing import WebSocketError

# RFC 6455 §1.3: the server proves it read our key by hashing it with this GUID.
_ACCEPT_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


@dataclass(frozen=True)
class Endpoint:
    """Where a ws:// or wss:// URL points: host, port, request path (with its query) and whether to use TLS."""

    host: str
    port: int
    path: str
    secure: bool


def parse_ws_url(url: str) -> Endpoint:
    """Reads a ws://, wss://, http:// or https:// URL (http becomes ws, as OpenEnv's client does)."""
    parts = urlsplit(url)
    scheme = {"http": "ws", "https": "wss"}.get(parts.scheme, parts.scheme)
    if scheme not in ("ws", "wss") or not parts.hostname:
        raise ValueError(f"{url!r} is not a WebSocket URL; give ws://HOST:PORT/ws (or http://HOST:PORT)")
    secure = scheme == "wss"
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Endpoint(parts.hostname, parts.port or (443 if secure else 80), path, secure)


def handshake_request(endpoint: Endpoint, key: str, headers: Mapping[str, str]) -> bytes:
    """The HTTP/1.1 upgrade request that opens the connection (RFC 6455 §4.1)."""
    host = endpoint.host if ":" not in endpoint.host else f"[{endpoint.host}]"
    lines = [
        f"GET {endpoint.path} HTTP/1.1",
        f"Host: {host}:{endpoint.port}",
        "Upgrade: websocket",
        "Connection: Upgrade",
        f"Sec-WebSocket-Key: {key}",
        "Sec-WebSocket-Version: 13",
        *(f"{name}: {value}" for name, value in headers.items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def accept_value(key: str) -> str:
    """What the server must answer in Sec-WebSocket-Accept for our Sec-WebSocket-Key."""
    return base64.b64encode(hashlib.sha1((key + _ACCEPT_GUID).encode("ascii")).digest()).decode("ascii")


def check_handshake_response(head: bytes, key: str) -> None:
    """Raises ``WebSocketError`` unless ``head`` (the response up to its blank line) accepts the upgrade for ``key``."""
    text = head.decode("latin-1")
    status_line, *header_lines = text.split("\r\n")
    status = status_line.split(" ", 2)
    if len(status) < 2 or status[1] != "101":
        raise WebSocketError(f"the server refused the WebSocket upgrade: {status_line.strip() or 'no answer'}")
    headers = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if headers.get("sec-websocket-accept") != accept_value(key):
        raise WebSocketError("the server answered the upgrade with a wrong Sec-WebSocket-Accept")


def new_key() -> str:
    """A fresh random Sec-WebSocket-Key."""
    return base64.b64encode(os.urandom(16)).decode("ascii")
