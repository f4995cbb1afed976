"""RFC 6455 framing, sans-IO: frames to bytes and back, masking, fragmented messages, control frames.

Nothing here touches a socket, so all of it is tested on bytes (python/tests/test_websocket.py);
websocket.py puts it on a blocking socket and on asyncio streams. No extensions (no
permessage-deflate): a frame with reserved bits set is refused.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

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
