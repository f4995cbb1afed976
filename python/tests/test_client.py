"""EnvClient and AsyncEnvClient against a scripted WebSocket server: requests on the wire, replies, errors and closes."""

import asyncio
import json
import socket
import time
import unittest

from fake_server import FakeServer
from tabrl_openenv import AsyncEnvClient, EnvClient, ServeError, SessionClosedError
from tabrl_openenv.framing import OP_CLOSE, OP_CONTINUATION, OP_PING, OP_PONG, OP_TEXT, Close, encode_close, encode_frame

FIRST = {"observation": {"prompt": "Reverse: stressed", "messages": [{"role": "user", "content": "Reverse: stressed"}], "task_index": 2, "split": "eval", "turn": 0}, "reward": None, "done": False, "terminated": False, "truncated": False}
LAST = {"observation": {"prompt": "", "messages": [], "task_index": 2, "split": "eval", "turn": 1, "scores": {"lcs": 0.5}}, "reward": 0.5, "done": True, "terminated": True, "truncated": False}


class SyncClientTest(unittest.TestCase):
    def test_plays_an_episode_and_masks_every_frame(self):
        def handler(conn):
            request = conn.recv_json()
            self.assertEqual(request, {"type": "reset", "data": {"task_index": 2, "split": "eval"}})
            conn.send_json({"type": "observation", "data": FIRST})
            self.assertEqual(conn.recv_json(), {"type": "step", "data": {"message": "desserts"}})
            body = json.dumps({"type": "observation", "data": LAST}).encode()
            conn.send_raw(encode_frame(OP_PING, b"hb") + encode_frame(OP_TEXT, body[:10], fin=False) + encode_frame(OP_CONTINUATION, body[10:]))
            self.assertEqual(conn.recv_json(), {"type": "state"})
            conn.send_json({"type": "state", "data": {"episode_id": "e1", "step_count": 1}})
            request = conn.recv_json()
            self.assertEqual((request["type"], request["data"]["method"]), ("mcp", "tools/list"))
            conn.send_json({"type": "mcp", "data": {"jsonrpc": "2.0", "id": request["data"]["id"], "result": {"tools": [{"name": "calculator", "description": "d", "input_schema": {"type": "object"}}]}}})
            self.assertEqual(conn.recv_json(), {"type": "close"})
            conn.recv_json()
            conn.close()

        server = FakeServer(handler)
        with EnvClient(server.url, token="s3cret") as client:
            first = client.reset(task_index=2, split="eval")
            self.assertEqual((first.prompt, first.reward, first.done), ("Reverse: stressed", None, False))
            last = client.step("desserts")
            self.assertEqual((last.reward, last.done, last.terminated, last.observation["scores"]), (0.5, True, True, {"lcs": 0.5}))
            self.assertEqual(client.state(), {"episode_id": "e1", "step_count": 1})
            self.assertEqual([tool["name"] for tool in client.list_tools()], ["calculator"])
        server.stop()
        self.assertEqual(server.errors, [])
        conn = server.connections[0]
        self.assertTrue(all(conn.decoder.mask_bits), "every client frame is masked")
        # The client answered the ping with a pong carrying its payload, and ended with a close frame.
        self.assertIn((OP_PONG, b"hb"), [(frame.opcode, frame.payload) for frame in conn.decoder.frames])
        self.assertEqual(conn.received[-1], {"close_frame": 1000})
        self.assertIn("Authorization: Bearer s3cret\r\n", server.request_heads[0])
        self.assertTrue(server.request_heads[0].startswith("GET /ws HTTP/1.1"))

    def test_error_reply_raises_with_its_code_and_the_session_goes_on(self):
        def handler(conn):
            conn.recv_json()
            conn.send_json({"type": "error", "data": {"message": "step before reset: send reset first", "code": "SESSION_ERROR"}})
            conn.recv_json()
            conn.send_json({"type": "state", "data": {"episode_id": None, "step_count": 0}})
            conn.recv_json()
            conn.close()

        server = FakeServer(handler)
        client = EnvClient(server.url)
        with self.assertRaises(ServeError) as caught:
            client.step("too early")
        self.assertEqual(caught.exception.code, "SESSION_ERROR")
        self.assertIn("step before reset", str(caught.exception))
        self.assertIsInstance(caught.exception, RuntimeError)  # as OpenEnv's client raises
        self.assertEqual(client.state()["step_count"], 0)
        client.close()
        server.stop()

    def test_capacity_reached_then_close(self):
        def handler(conn):
            conn.send_json({"type": "error", "data": {"message": "the server holds 2 sessions, its maximum", "code": "CAPACITY_REACHED", "active_sessions": 2, "max_sessions": 2}})
            conn.close(1013, "server full")

        server = FakeServer(handler)
        client = EnvClient(server.url)
        with self.assertRaises(ServeError) as caught:
            client.reset()
        self.assertEqual(caught.exception.code, "CAPACITY_REACHED")
        self.assertEqual((caught.exception.data["active_sessions"], caught.exception.data["max_sessions"]), (2, 2))
        # The server closed the session after the error (with 1013, or a reset when the frame raced our send).
        with self.assertRaises(SessionClosedError) as closed:
            client.reset()
        self.assertIn(closed.exception.close_code, (1013, 1006))
        client.close()
        server.stop()

    def test_a_close_from_the_server_is_answered_with_the_same_code(self):
        echoed = []

        def handler(conn):
            conn.recv_json()
            conn.send_raw(encode_frame(OP_CLOSE, encode_close(1001, "going away")))
            echoed.append(conn.recv_event())
            conn.sock.close()

        server = FakeServer(handler)
        client = EnvClient(server.url)
        with self.assertRaises(SessionClosedError) as caught:
            client.reset()
        self.assertEqual(caught.exception.close_code, 1001)
        self.assertIn("going away", str(caught.exception))
        client.close()  # already closed: sends nothing more
        deadline = time.monotonic() + 5
        while not echoed and time.monotonic() < deadline:
            time.sleep(0.01)
        self.assertEqual(echoed, [Close(1001, "")])
        server.stop()

    def test_a_dropped_connection_mid_episode_raises_session_closed(self):
        def handler(conn):
            conn.recv_json()
            conn.send_json({"type": "observation", "data": FIRST})
            conn.recv_json()
            conn.sock.close()  # no close frame

        server = FakeServer(handler)
        client = EnvClient(server.url)
        client.reset()
        with self.assertRaises(SessionClosedError) as caught:
            client.step("x")
        self.assertEqual((caught.exception.code, caught.exception.close_code), ("CONNECTION_CLOSED", 1006))
        client.close()  # harmless on a dead connection
        server.stop()

    def test_unreachable_server(self):
        unused = socket.socket()
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
        unused.close()
        with self.assertRaises(ServeError) as caught:
            EnvClient(f"http://127.0.0.1:{port}", timeout=5)
        self.assertEqual(caught.exception.code, "CONNECT_FAILED")
        self.assertIn("is `tabrl serve` running there?", str(caught.exception))

    def test_step_arguments_map_to_the_wire(self):
        seen = []

        def handler(conn):
            for _ in range(3):
                seen.append(conn.recv_json())
                conn.send_json({"type": "observation", "data": FIRST})
            conn.recv_json()
            conn.close()

        server = FakeServer(handler)
        with EnvClient(server.url) as client:
            client.step(tool_call={"name": "calculator", "arguments": {"expression": "2+2"}})
            calls = [{"id": "c1", "type": "function", "function": {"name": "calculator", "arguments": "{}"}}]
            client.step("thinking", tool_calls=calls)
            client.step("")
            with self.assertRaisesRegex(ValueError, "needs the model's reply"):
                client.step()
        self.assertEqual(seen[0], {"type": "step", "data": {"type": "call_tool", "tool_name": "calculator", "arguments": {"expression": "2+2"}}})
        self.assertEqual(seen[1], {"type": "step", "data": {"message": "thinking", "tool_calls": calls}})
        self.assertEqual(seen[2], {"type": "step", "data": {"message": ""}})
        server.stop()


class AsyncClientTest(unittest.TestCase):
    def test_async_episode_error_and_drop(self):
        def handler(conn):
            self.assertEqual(conn.recv_json(), {"type": "reset", "data": {"seed": 7}})
            body = json.dumps({"type": "observation", "data": FIRST}).encode()
            conn.send_raw(encode_frame(OP_PING, b"") + encode_frame(OP_TEXT, body[:5], fin=False) + encode_frame(OP_CONTINUATION, body[5:]))
            conn.recv_json()
            conn.send_json({"type": "error", "data": {"message": "bad action", "code": "VALIDATION_ERROR"}})
            conn.recv_json()
            conn.send_json({"type": "observation", "data": LAST})
            conn.recv_json()
            conn.sock.close()

        server = FakeServer(handler)

        async def play():
            async with await AsyncEnvClient.connect(server.url) as client:
                first = await client.reset(seed=7)
                self.assertEqual(first.observation["task_index"], 2)
                with self.assertRaises(ServeError) as caught:
                    await client.step(tool_call={"name": "nope", "arguments": {}})
                self.assertEqual(caught.exception.code, "VALIDATION_ERROR")
                last = await client.step("desserts")
                self.assertEqual((last.reward, last.done), (0.5, True))
                with self.assertRaises(SessionClosedError):
                    await client.state()

        asyncio.run(play())
        frames = server.connections[0].decoder.frames
        self.assertTrue(all(server.connections[0].decoder.mask_bits))
        self.assertIn(OP_PONG, [frame.opcode for frame in frames])
        server.stop()


if __name__ == "__main__":
    unittest.main()
