"""A scripted one-connection WebSocket server on 127.0.0.1, for testing the clients' handling of what a server may send.

``handler(conn)`` runs in a thread once the handshake is done; ``conn.recv_json()`` reads one
client message (checking it was masked) and ``conn.send_raw(bytes)`` writes frames as they are.
"""

import json
import socket
import struct
import threading

from tabrl_openenv.framing import OP_CLOSE, Close, FrameDecoder, Message, MessageAssembler, encode_frame
from tabrl_openenv.handshake import accept_value


class MaskRecordingDecoder(FrameDecoder):
    """A FrameDecoder that also records every frame and whether the client masked it (RFC 6455 requires it)."""

    def __init__(self):
        super().__init__()
        self.mask_bits = []
        self.frames = []

    def _next_frame(self):
        mask_bit = bool(self._buffer[1] & 0x80) if len(self._buffer) >= 2 else None
        frame = super()._next_frame()
        if frame is not None:
            self.mask_bits.append(mask_bit)
            self.frames.append(frame)
        return frame


class ServerConnection:
    """The server's end of one connection."""

    def __init__(self, sock):
        self.sock = sock
        self.decoder = MaskRecordingDecoder()
        self.assembler = MessageAssembler()
        self.pending = []
        self.received = []

    def _next_event(self):
        while True:
            while self.pending:
                event = self.assembler.add(self.pending.pop(0))
                if event is not None:
                    return event
            try:
                chunk = self.sock.recv(65536)
            except OSError:
                chunk = b""
            if not chunk:
                return None
            self.pending += self.decoder.feed(chunk)

    def recv_json(self):
        """The next text message from the client, parsed (None when the client closed or dropped the connection)."""
        event = self._next_event()
        if isinstance(event, Message):
            value = json.loads(event.text)
            self.received.append(value)
            return value
        if isinstance(event, Close):
            self.received.append({"close_frame": event.code})
        return None

    def recv_event(self):
        """The next event (a Message, Ping, Close) or None at end of stream."""
        return self._next_event()

    def send_json(self, value):
        """Sends one unmasked text frame holding ``value`` as JSON."""
        self.send_raw(encode_frame(0x1, json.dumps(value).encode()))

    def send_raw(self, data):
        """Writes bytes as they are."""
        self.sock.sendall(data)

    def close(self, code=1000, reason=""):
        """Sends a close frame and closes the socket."""
        try:
            self.send_raw(encode_frame(OP_CLOSE, struct.pack("!H", code) + reason.encode()))
        except OSError:
            pass
        self.sock.close()


class FakeServer:
    """Listens on a free port; each accepted connection runs ``handler`` in its own thread."""

    def __init__(self, handler):
        self.handler = handler
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.connections = []
        self.errors = []
        self.request_heads = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while True:
            try:
                sock, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._run, args=(sock,), daemon=True).start()

    def _run(self, sock):
        try:
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = sock.recv(4096)
                if not chunk:
                    return
                head += chunk
            text = head.decode("latin-1")
            self.request_heads.append(text)
            key = next(line.split(":", 1)[1].strip() for line in text.split("\r\n") if line.lower().startswith("sec-websocket-key:"))
            sock.sendall(f"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {accept_value(key)}\r\n\r\n".encode())
            conn = ServerConnection(sock)
            self.connections.append(conn)
            self.handler(conn)
        except Exception as error:  # reported by the test through .errors
            self.errors.append(error)

    def stop(self):
        """Stops listening."""
        self.listener.close()
