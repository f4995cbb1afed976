"""A minimal WebSocket client connection: ``SyncWebSocket`` on a blocking socket, ``AsyncWebSocket`` on asyncio streams.

Both open with the handshake (handshake.py), send text messages as single masked frames, and read
messages through the sans-IO framing (framing.py), answering pings with pongs and a close frame
with a close frame. It is not a server, and it negotiates no extensions and no subprotocols.
"""

from __future__ import annotations

import asyncio
import os
import socket
import ssl
from typing import Mapping

from .framing import (
    CLOSE_NORMAL,
    DEFAULT_MAX_MESSAGE_BYTES,
    OP_CLOSE,
    OP_PONG,
    OP_TEXT,
    Close,
    ConnectionClosed,
    Frame,
    FrameDecoder,
    Message,
    MessageAssembler,
    Ping,
    WebSocketError,
    encode_close,
    encode_frame,
)
from .handshake import check_handshake_response, handshake_request, new_key, parse_ws_url

__all__ = ["AsyncWebSocket", "ConnectionClosed", "SyncWebSocket", "WebSocketError"]


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
