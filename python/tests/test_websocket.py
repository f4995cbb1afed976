"""RFC 6455 framing without a server: masking, lengths, fragmentation, control frames, the handshake, bad frames."""

import os
import struct
import unittest

from tabrl_openenv.framing import (
    OP_BINARY,
    OP_CLOSE,
    OP_CONTINUATION,
    OP_PING,
    OP_PONG,
    OP_TEXT,
    Close,
    FrameDecoder,
    Message,
    MessageAssembler,
    Ping,
    WebSocketError,
    apply_mask,
    encode_close,
    encode_frame,
)
from tabrl_openenv.handshake import accept_value, check_handshake_response, handshake_request, parse_ws_url


def decode_all(data: bytes, chunk: int = 0):
    """Feeds ``data`` to a decoder (in ``chunk``-byte pieces when chunk > 0) and assembles the messages and events."""
    decoder, assembler, events = FrameDecoder(), MessageAssembler(), []
    pieces = [data] if chunk <= 0 else [data[i : i + chunk] for i in range(0, len(data), chunk)]
    for piece in pieces:
        for frame in decoder.feed(piece):
            event = assembler.add(frame)
            if event is not None:
                events.append(event)
    return events


class MaskingTest(unittest.TestCase):
    def test_rfc_example_masked_hello(self):
        # RFC 6455 §5.7: a masked text frame carrying "Hello".
        frame = encode_frame(OP_TEXT, b"Hello", mask_key=bytes([0x37, 0xFA, 0x21, 0x3D]))
        self.assertEqual(frame, bytes([0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58]))
        self.assertEqual(decode_all(frame), [Message(text="Hello")])

    def test_masking_twice_restores_any_length(self):
        for length in (0, 1, 3, 4, 5, 125, 1000):
            payload, key = os.urandom(length), os.urandom(4)
            masked = apply_mask(payload, key)
            self.assertEqual(len(masked), length)
            self.assertEqual(apply_mask(masked, key), payload)
            if length >= 4:
                self.assertNotEqual(masked, payload)

    def test_mask_key_must_be_four_bytes(self):
        with self.assertRaises(ValueError):
            apply_mask(b"abc", b"\x01\x02")


class LengthTest(unittest.TestCase):
    def test_payload_length_encodings(self):
        for length, header_bytes in ((125, 2), (126, 4), (65535, 4), (65536, 10), (70000, 10)):
            payload = os.urandom(length)
            frame = encode_frame(OP_BINARY, payload, mask_key=b"abcd")
            self.assertEqual(len(frame), header_bytes + 4 + length, length)
            # Fed one byte at a time, the decoder still finds exactly one frame.
            self.assertEqual(decode_all(frame, chunk=4096 if length > 1000 else 1), [Message(data=payload)])

    def test_unmasked_server_frame_with_64_bit_length(self):
        text = "é" * 40000  # 80000 bytes of UTF-8
        frame = encode_frame(OP_TEXT, text.encode("utf-8"))
        self.assertEqual(frame[1], 127)
        self.assertEqual(struct.unpack("!Q", frame[2:10])[0], 80000)
        self.assertEqual(decode_all(frame, chunk=7), [Message(text=text)])

    def test_frame_over_the_limit_is_refused_before_its_payload_arrives(self):
        decoder = FrameDecoder(max_frame_bytes=1000)
        head = encode_frame(OP_TEXT, b"x" * 1001)[:4]
        with self.assertRaisesRegex(WebSocketError, "1001 bytes is over the 1000-byte limit"):
            decoder.feed(head)

    def test_message_over_the_limit_across_fragments_is_refused(self):
        assembler = MessageAssembler(max_message_bytes=10)
        decoder = FrameDecoder()
        data = encode_frame(OP_TEXT, b"123456", fin=False) + encode_frame(OP_CONTINUATION, b"789012")
        frames = decoder.feed(data)
        assembler.add(frames[0])
        with self.assertRaisesRegex(WebSocketError, "10-byte limit"):
            assembler.add(frames[1])


class FragmentationTest(unittest.TestCase):
    def test_rfc_example_fragmented_hello(self):
        # RFC 6455 §5.7: an unmasked text message in two fragments, "Hel" then "lo".
        data = bytes([0x01, 0x03, 0x48, 0x65, 0x6C, 0x80, 0x02, 0x6C, 0x6F])
        self.assertEqual(decode_all(data), [Message(text="Hello")])

    def test_ping_between_fragments_comes_out_first(self):
        data = (
            encode_frame(OP_TEXT, '{"type":'.encode(), fin=False)
            + encode_frame(OP_PING, b"are you there")
            + encode_frame(OP_CONTINUATION, b'"state",', fin=False)
            + encode_frame(OP_PONG, b"")
            + encode_frame(OP_CONTINUATION, b'"data":{}}')
        )
        self.assertEqual(decode_all(data, chunk=3), [Ping(b"are you there"), Message(text='{"type":"state","data":{}}')])

    def test_multibyte_character_split_across_fragments(self):
        encoded = "naïve ✓".encode("utf-8")
        data = encode_frame(OP_TEXT, encoded[:3], fin=False) + encode_frame(OP_CONTINUATION, encoded[3:])
        self.assertEqual(decode_all(data), [Message(text="naïve ✓")])

    def test_continuation_without_a_message_is_refused(self):
        with self.assertRaisesRegex(WebSocketError, "no message to continue"):
            decode_all(encode_frame(OP_CONTINUATION, b"x"))

    def test_new_message_inside_a_fragmented_one_is_refused(self):
        with self.assertRaisesRegex(WebSocketError, "before the previous fragmented one ended"):
            decode_all(encode_frame(OP_TEXT, b"a", fin=False) + encode_frame(OP_TEXT, b"b"))


class ControlFrameTest(unittest.TestCase):
    def test_close_frame_code_and_reason(self):
        self.assertEqual(decode_all(encode_frame(OP_CLOSE, encode_close(1013, "server full"))), [Close(1013, "server full")])
        self.assertEqual(decode_all(encode_frame(OP_CLOSE, b"")), [Close(1005, "")])

    def test_control_frames_are_small_and_whole(self):
        with self.assertRaises(ValueError):
            encode_frame(OP_PING, b"x" * 126)
        with self.assertRaises(ValueError):
            encode_frame(OP_CLOSE, b"", fin=False)
        bad = bytes([0x89, 126]) + struct.pack("!H", 200) + b"x" * 200
        with self.assertRaisesRegex(WebSocketError, "control frame"):
            decode_all(bad)

    def test_reserved_bits_and_unknown_opcodes_are_refused(self):
        with self.assertRaisesRegex(WebSocketError, "reserved bits"):
            decode_all(bytes([0xC1, 0x00]))
        with self.assertRaisesRegex(WebSocketError, "unknown WebSocket opcode"):
            decode_all(bytes([0x83, 0x00]))

    def test_invalid_utf8_text_is_refused(self):
        with self.assertRaisesRegex(WebSocketError, "not valid UTF-8"):
            decode_all(encode_frame(OP_TEXT, b"\xff\xfe"))


class HandshakeTest(unittest.TestCase):
    def test_rfc_example_accept_value(self):
        self.assertEqual(accept_value("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")

    def test_request_carries_key_version_and_extra_headers(self):
        endpoint = parse_ws_url("http://127.0.0.1:8001/ws?x=1")
        request = handshake_request(endpoint, "KEY", {"Authorization": "Bearer s3cret"}).decode()
        self.assertTrue(request.startswith("GET /ws?x=1 HTTP/1.1\r\n"))
        for line in ("Host: 127.0.0.1:8001", "Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Key: KEY", "Sec-WebSocket-Version: 13", "Authorization: Bearer s3cret"):
            self.assertIn(line + "\r\n", request)
        self.assertTrue(request.endswith("\r\n\r\n"))

    def test_response_checks(self):
        key = "dGhlIHNhbXBsZSBub25jZQ=="
        good = b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        check_handshake_response(good, key)
        with self.assertRaisesRegex(WebSocketError, "wrong Sec-WebSocket-Accept"):
            check_handshake_response(good.replace(b"s3pP", b"XXXX"), key)
        with self.assertRaisesRegex(WebSocketError, "refused the WebSocket upgrade: HTTP/1.1 401 Unauthorized"):
            check_handshake_response(b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 0", key)

    def test_urls(self):
        self.assertEqual(parse_ws_url("ws://localhost:9/ws").port, 9)
        self.assertTrue(parse_ws_url("https://example.org/ws").secure)
        self.assertEqual(parse_ws_url("https://example.org/ws").port, 443)
        with self.assertRaisesRegex(ValueError, "not a WebSocket URL"):
            parse_ws_url("ftp://example.org")


if __name__ == "__main__":
    unittest.main()
