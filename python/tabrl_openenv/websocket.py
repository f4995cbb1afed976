"""A minimal RFC 6455 WebSocket client: the opening handshake, and frames in both directions.

The framing is sans-IO (``encode_frame``, ``FrameDecoder``, ``MessageAssembler`` work on bytes and
never touch a socket), so it is tested without a server; ``SyncWebSocket`` and ``AsyncWebSocket``
put it on a blocking socket and on asyncio streams. It speaks text and binary messages,
fragmentation, ping/pong and the closing handshake; it is not a server, and it offers no
extensions (no permessage-deflate) and no subprotocols.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
import socket
import ssl
import struct
from dataclasses import dataclass
from typing import Mapping
from urllib.parse import urlsplit

# RFC 6455 §1.3: the server proves it read our key by hashing it with this GUID.
_ACCEPT_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

OP_CONTINUATION = 0x0
OP_TEXT = 0x1
OP_BINARY = 0x2
OP_CLOSE = 0x8
OP_PING = 0x9
OP_PONG = 0xA
_CONTROL_OPS = (OP_CLOSE, OP_PING, OP_PONG)
_DATA_OPS = (OP_CONTINUATION, OP_TEXT, OP_BINARY)

# OpenEnv's client accepts messages up to 100 MB; so does this one by default.
DEFAULT_MAX_MESSAGE_BYTES = 100 * 1024 * 1024
CLOSE_NORMAL = 1000
CLOSE_PROTOCOL_ERROR = 1002
CLOSE_TOO_BIG = 1009


class WebSocketError(Exception):
    """The connection broke the protocol (a bad handshake, a malformed frame, a message over the size limit)."""


class ConnectionClosed(WebSocketError):
    """The connection is closed: ``code`` and ``reason`` come from the peer's close frame (1006 when it just dropped)."""

    def __init__(self, code: int = 1006, reason: str = "") -> None:
        self.code = code
        self.reason = reason
        super().__init__(f"WebSocket closed (code {code}{': ' + reason if reason else ''})")


@dataclass(frozen=True)
class Frame:
    """One decoded frame: its opcode, whether it is the last of its message, and its (unmasked) payload."""

    opcode: int
    fin: bool
    payload: bytes


def apply_mask(payload: bytes, mask_key: bytes) -> bytes:
    """XORs ``payload`` with the 4-byte ``mask_key`` repeated (RFC 6455 §5.3); masking twice restores it."""
    if len(mask_key) != 4:
        raise ValueError("a WebSocket mask key is 4 bytes")
    if not payload:
        return b""
    repeated = (mask_key * (len(payload) // 4 + 1))[: len(payload)]
    return (int.from_bytes(payload, "big") ^ int.from_bytes(repeated, "big")).to_bytes(len(payload), "big")


def encode_frame(opcode: int, payload: bytes, *, fin: bool = True, mask_key: bytes | None = None) -> bytes:
    """One frame's bytes; a client masks every frame (pass ``mask_key``, or ``None`` for a server-side frame in tests)."""
    if opcode in _CONTROL_OPS and (len(payload) > 125 or not fin):
        raise ValueError("a control frame carries at most 125 bytes and is never fragmented")
    head = bytearray([(0x80 if fin else 0) | opcode])
    mask_bit = 0x80 if mask_key is not None else 0
    length = len(payload)
    if length < 126:
        head.append(mask_bit | length)
    elif length < 1 << 16:
        head.append(mask_bit | 126)
        head += struct.pack("!H", length)
    else:
        head.append(mask_bit | 127)
        head += struct.pack("!Q", length)
    if mask_key is None:
        return bytes(head) + payload
    return bytes(head) + mask_key + apply_mask(payload, mask_key)


class FrameDecoder:
    """Turns bytes as they arrive into whole frames; refuses a frame whose payload is over ``max_frame_bytes``."""

    def __init__(self, max_frame_bytes: int = DEFAULT_MAX_MESSAGE_BYTES) -> None:
        self._buffer = bytearray()
        self._max_frame_bytes = max_frame_bytes

    def feed(self, data: bytes) -> list[Frame]:
        """Adds received bytes and returns every frame now complete, in order."""
        self._buffer += data
        frames: list[Frame] = []
        while True:
            frame = self._next_frame()
            if frame is None:
                return frames
            frames.append(frame)

    def _next_frame(self) -> Frame | None:
        buffer = self._buffer
        if len(buffer) < 2:
            return None
        first, second = buffer[0], buffer[1]
        if first & 0x70:
            raise WebSocketError("the server set reserved bits in a frame (no extension was negotiated)")
        opcode = first & 0x0F
        if opcode not in _DATA_OPS and opcode not in _CONTROL_OPS:
            raise WebSocketError(f"unknown WebSocket opcode {opcode:#x}")
        offset = 2
        length = second & 0x7F
        if length == 126:
            if len(buffer) < 4:
                return None
            (length,) = struct.unpack_from("!H", buffer, 2)
            offset = 4
        elif length == 127:
            if len(buffer) < 10:
                return None
            (length,) = struct.unpack_from("!Q", buffer, 2)
            offset = 10
        if length > self._max_frame_bytes:
            raise WebSocketError(f"a frame of {length} bytes is over the {self._max_frame_bytes}-byte limit")
        mask_key = None
        if second & 0x80:
            if len(buffer) < offset + 4:
                return None
            mask_key = bytes(buffer[offset : offset + 4])
            offset += 4
        if len(buffer) < offset + length:
            return None
        payload = bytes(buffer[offset : offset + length])
        del buffer[: offset + length]
        fin = bool(first & 0x80)
        if opcode in _CONTROL_OPS and (length > 125 or not fin):
            raise WebSocketError("the server sent a control frame over 125 bytes or fragmented")
        return Frame(opcode, fin, apply_mask(payload, mask_key) if mask_key else payload)


@dataclass(frozen=True)
class Message:
    """A whole data message (``text`` is a str for text messages, ``data`` bytes for binary ones)."""

    text: str | None = None
    data: bytes | None = None


@dataclass(frozen=True)
class Ping:
    """A ping from the peer; answer it with a pong carrying the same payload."""

    payload: bytes


@dataclass(frozen=True)
class Close:
    """The peer's close frame: its status code (1005 when it gave none) and reason."""

    code: int
    reason: str


class MessageAssembler:
    """Joins fragmented data frames into messages and passes control frames through as ``Ping``/``Close`` events."""

    def __init__(self, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES) -> None:
        self._opcode: int | None = None
        self._parts: list[bytes] = []
        self._size = 0
        self._max_message_bytes = max_message_bytes

    def add(self, frame: Frame) -> Message | Ping | Close | None:
        """Takes one frame; returns a completed message or a control event, or ``None`` mid-message (and for pongs)."""
        if frame.opcode == OP_PING:
            return Ping(frame.payload)
        if frame.opcode == OP_PONG:
            return None
        if frame.opcode == OP_CLOSE:
            return _parse_close(frame.payload)
        if frame.opcode == OP_CONTINUATION:
            if self._opcode is None:
                raise WebSocketError("a continuation frame arrived with no message to continue")
        elif self._opcode is not None:
            raise WebSocketError("a new message began before the previous fragmented one ended")
        else:
            self._opcode = frame.opcode
        self._size += len(frame.payload)
        if self._size > self._max_message_bytes:
            raise WebSocketError(f"a message over the {self._max_message_bytes}-byte limit")
        self._parts.append(frame.payload)
        if not frame.fin:
            return None
        opcode, payload = self._opcode, b"".join(self._parts)
        self._opcode, self._parts, self._size = None, [], 0
        if opcode == OP_TEXT:
            try:
                return Message(text=payload.decode("utf-8"))
            except UnicodeDecodeError as error:
                raise WebSocketError("a text message that is not valid UTF-8") from error
        return Message(data=payload)


def _parse_close(payload: bytes) -> Close:
    if len(payload) == 0:
        return Close(1005, "")
    if len(payload) == 1:
        raise WebSocketError("a close frame with a 1-byte payload")
    (code,) = struct.unpack_from("!H", payload)
    return Close(code, payload[2:].decode("utf-8", errors="replace"))


def encode_close(code: int = CLOSE_NORMAL, reason: str = "") -> bytes:
    """The payload of a close frame: the status code, then the reason as UTF-8."""
    return struct.pack("!H", code) + reason.encode("utf-8")[:123]


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


class _Connection:
    """The state both transports share: the decoder, the assembler and the closing handshake."""

    def __init__(self, max_message_bytes: int) -> None:
        self.decoder = FrameDecoder(max_message_bytes)
        self.assembler = MessageAssembler(max_message_bytes)
        self.pending: list[Frame] = []
        self.closed: ConnectionClosed | None = None

    def frame(self, opcode: int, payload: bytes) -> bytes:
        return encode_frame(opcode, payload, mask_key=os.urandom(4))


class SyncWebSocket:
    """A blocking WebSocket connection: ``send_text`` and ``recv_text``, answering pings and closes on the way."""

    def __init__(self, sock: socket.socket, rest: bytes, max_message_bytes: int) -> None:
        self._sock = sock
        self._conn = _Connection(max_message_bytes)
        self._conn.pending = self._conn.decoder.feed(rest)

    @classmethod
    def connect(cls, url: str, *, headers: Mapping[str, str] | None = None, timeout: float | None = 60.0,
                max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES, ssl_context: ssl.SSLContext | None = None) -> "SyncWebSocket":
        """Opens a connection to ``url``; ``timeout`` (seconds, None for none) bounds connecting and each receive."""
        endpoint = parse_ws_url(url)
        sock = socket.create_connection((endpoint.host, endpoint.port), timeout=timeout)
        try:
            if endpoint.secure:
                sock = (ssl_context or ssl.create_default_context()).wrap_socket(sock, server_hostname=endpoint.host)
            key = new_key()
            sock.sendall(handshake_request(endpoint, key, headers or {}))
            received = b""
            while b"\r\n\r\n" not in received:
                chunk = sock.recv(4096)
                if not chunk:
                    raise WebSocketError("the server closed the connection during the WebSocket handshake")
                received += chunk
                if len(received) > 65536:
                    raise WebSocketError("the server's handshake response is over 64 KiB")
            head, _, rest = received.partition(b"\r\n\r\n")
            check_handshake_response(head, key)
        except BaseException:
            sock.close()
            raise
        return cls(sock, rest, max_message_bytes)

    def send_text(self, text: str) -> None:
        """Sends one text message (one frame)."""
        if self._conn.closed:
            raise self._conn.closed
        self._sock.sendall(self._conn.frame(OP_TEXT, text.encode("utf-8")))

    def recv_text(self) -> str:
        """Blocks for the next text message; raises ``ConnectionClosed`` when the peer closes or drops the connection."""
        conn = self._conn
        while True:
            if conn.closed:
                raise conn.closed
            while conn.pending:
                event = conn.assembler.add(conn.pending.pop(0))
                if isinstance(event, Ping):
                    self._sock.sendall(conn.frame(OP_PONG, event.payload))
                elif isinstance(event, Close):
                    self._answer_close(event)
                    raise conn.closed  # type: ignore[misc]
                elif isinstance(event, Message):
                    if event.text is None:
                        raise WebSocketError("the server sent a binary message; this protocol uses text (JSON) messages")
                    return event.text
            try:
                chunk = self._sock.recv(65536)
            except socket.timeout:
                raise
            except OSError:
                chunk = b""
            if not chunk:
                conn.closed = ConnectionClosed(1006, "the connection dropped without a close frame")
                self._sock.close()
                raise conn.closed
            conn.pending = conn.decoder.feed(chunk)

    def _answer_close(self, event: Close) -> None:
        self._conn.closed = ConnectionClosed(event.code, event.reason)
        try:
            self._sock.sendall(self._conn.frame(OP_CLOSE, encode_close(CLOSE_NORMAL if event.code == 1005 else event.code)))
        except OSError:
            pass
        self._sock.close()

    def close(self, code: int = CLOSE_NORMAL, reason: str = "") -> None:
        """Starts the closing handshake, waits briefly for the peer's close frame, and closes the socket."""
        if self._conn.closed:
            return
        self._conn.closed = ConnectionClosed(code, reason)
        try:
            self._sock.sendall(self._conn.frame(OP_CLOSE, encode_close(code, reason)))
            self._sock.settimeout(2.0)
            while True:
                chunk = self._sock.recv(65536)
                if not chunk or any(frame.opcode == OP_CLOSE for frame in self._conn.decoder.feed(chunk)):
                    break
        except (OSError, WebSocketError):
            pass
        finally:
            self._sock.close()

    def abort(self) -> None:
        """Drops the TCP connection without a closing handshake (what a crashed client does)."""
        self._conn.closed = ConnectionClosed(1006, "aborted by this client")
        self._sock.close()


class AsyncWebSocket:
    """The asyncio twin of ``SyncWebSocket``, on ``asyncio.open_connection`` streams."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, rest: bytes, max_message_bytes: int) -> None:
        self._reader = reader
        self._writer = writer
        self._conn = _Connection(max_message_bytes)
        self._conn.pending = self._conn.decoder.feed(rest)

    @classmethod
    async def connect(cls, url: str, *, headers: Mapping[str, str] | None = None, timeout: float | None = 60.0,
                      max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES, ssl_context: ssl.SSLContext | None = None) -> "AsyncWebSocket":
        """Opens a connection to ``url``; ``timeout`` (seconds, None for none) bounds the connect and the handshake."""
        endpoint = parse_ws_url(url)
        tls = (ssl_context or ssl.create_default_context()) if endpoint.secure else None
        reader, writer = await asyncio.wait_for(asyncio.open_connection(endpoint.host, endpoint.port, ssl=tls, limit=1 << 20), timeout)
        try:
            key = new_key()
            writer.write(handshake_request(endpoint, key, headers or {}))
            await writer.drain()
            try:
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)
            except asyncio.IncompleteReadError as error:
                raise WebSocketError("the server closed the connection during the WebSocket handshake") from error
            check_handshake_response(head[:-4], key)
        except BaseException:
            writer.close()
            raise
        return cls(reader, writer, b"", max_message_bytes)

    async def send_text(self, text: str) -> None:
        """Sends one text message (one frame)."""
        if self._conn.closed:
            raise self._conn.closed
        self._writer.write(self._conn.frame(OP_TEXT, text.encode("utf-8")))
        await self._writer.drain()

    async def recv_text(self) -> str:
        """Waits for the next text message; raises ``ConnectionClosed`` when the peer closes or drops the connection."""
        conn = self._conn
        while True:
            if conn.closed:
                raise conn.closed
            while conn.pending:
                event = conn.assembler.add(conn.pending.pop(0))
                if isinstance(event, Ping):
                    self._writer.write(conn.frame(OP_PONG, event.payload))
                    await self._writer.drain()
                elif isinstance(event, Close):
                    conn.closed = ConnectionClosed(event.code, event.reason)
                    try:
                        self._writer.write(conn.frame(OP_CLOSE, encode_close(CLOSE_NORMAL if event.code == 1005 else event.code)))
                        await self._writer.drain()
                    except OSError:
                        pass
                    self._writer.close()
                    raise conn.closed
                elif isinstance(event, Message):
                    if event.text is None:
                        raise WebSocketError("the server sent a binary message; this protocol uses text (JSON) messages")
                    return event.text
            try:
                chunk = await self._reader.read(65536)
            except OSError:
                chunk = b""
            if not chunk:
                conn.closed = ConnectionClosed(1006, "the connection dropped without a close frame")
                self._writer.close()
                raise conn.closed
            conn.pending = conn.decoder.feed(chunk)

    async def close(self, code: int = CLOSE_NORMAL, reason: str = "") -> None:
        """Starts the closing handshake, waits briefly for the peer's close frame, and closes the stream."""
        if self._conn.closed:
            return
        self._conn.closed = ConnectionClosed(code, reason)
        try:
            self._writer.write(self._conn.frame(OP_CLOSE, encode_close(code, reason)))
            await self._writer.drain()
            while True:
                chunk = await asyncio.wait_for(self._reader.read(65536), 2.0)
                if not chunk or any(frame.opcode == OP_CLOSE for frame in self._conn.decoder.feed(chunk)):
                    break
        except (OSError, asyncio.TimeoutError, WebSocketError):
            pass
        finally:
            self._writer.close()

    def abort(self) -> None:
        """Drops the TCP connection without a closing handshake."""
        self._conn.closed = ConnectionClosed(1006, "aborted by this client")
        self._writer.transport.abort()
