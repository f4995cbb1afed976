"""The TRL environment class: tools generated from schemas as TRL discovers them, reset arguments, rewards."""

import asyncio
import inspect
import os
import typing
import unittest
from unittest import mock

from tabrl_openenv import ServeError, SessionClosedError, StepResult, TabrlEnvironment, make_environment_class
from tabrl_openenv import trl as trl_module

CALCULATOR = {
    "name": "calculator",
    "description": "Evaluates an arithmetic expression.\nReturns the value.",
    "input_schema": {
        "type": "object",
        "properties": {
            "expression": {"type": "string", "description": "The expression, e.g. 2*(3+4)"},
            "precision": {"type": "integer", "description": "Digits after the point"},
            "mode": {"type": "string", "enum": ["exact", "float"]},
        },
        "required": ["expression"],
    },
}
LOOKUP = {
    "name": "lookup",
    "description": "Finds a word.",
    "input_schema": {
        "type": "object",
        "properties": {"words": {"type": "array", "items": {"type": "string"}}, "tags": {"type": "array"}, "strict": {"type": "boolean"}, "weight": {"type": ["number", "null"]}, "opts": {"type": "object"}, "anything": {}},
        "required": ["words", "tags", "strict", "weight", "opts", "anything"],
    },
}


def observation(prompt, reward=None, done=False, messages=()):
    return StepResult(observation={"prompt": prompt, "messages": list(messages), "task_index": 0, "split": "train", "turn": 0}, reward=reward, done=done)


class FakeClient:
    """Stands in for EnvClient: serves a tool list and a scripted episode, recording every call."""

    tools: list = []
    script: list = []

    def __init__(self, url, token=None, timeout=None):
        self.url, self.token, self.timeout, self.calls = url, token, timeout, []
        self.replies = list(type(self).script)

    def list_tools(self):
        return type(self).tools

    def reset(self, **kwargs):
        self.calls.append(("reset", kwargs))
        return observation("Reverse: stressed", messages=[{"role": "system", "content": "Answer in <reversed> tags."}, {"role": "user", "content": "Reverse: stressed"}])

    def step(self, message=None, *, tool_call=None, tool_calls=None):
        self.calls.append(("step", message, tool_call))
        return self.replies.pop(0)

    def close(self):
        self.calls.append(("close",))


def trl_tools(instance):
    """The methods TRL offers as tools, found the way GRPOTrainer finds them."""
    return {name: member for name, member in inspect.getmembers(instance, predicate=inspect.ismethod) if name not in ("reset", "get_reward") and not name.startswith("_")}


class TrlEnvironmentTest(unittest.TestCase):
    def make(self, tools, script):
        FakeClient.tools, FakeClient.script = tools, script
        patcher = mock.patch.object(trl_module, "EnvClient", FakeClient)
        patcher.start()
        self.addCleanup(patcher.stop)
        return make_environment_class("http://127.0.0.1:9", token="t")()

    def test_text_harness_offers_exactly_answer_and_plays_to_the_reward(self):
        env = self.make([], [observation("Wrong: try again"), observation("You won!", reward=1.0, done=True)])
        tools = trl_tools(env)
        self.assertEqual(sorted(tools), ["answer"])
        answer = tools["answer"]
        self.assertTrue(inspect.iscoroutinefunction(answer))
        self.assertEqual(list(inspect.signature(answer).parameters), ["text"])
        self.assertEqual(typing.get_type_hints(answer), {"text": str, "return": str})
        self.assertIn("Args:\n    text: Your whole reply", inspect.getdoc(answer))

        # A dataset row: its reset arguments go to the server, the rest (prompt, answer) stays here.
        # Without a prompt column the whole prompt comes back as text, system prompt included.
        self.assertEqual(env.reset(task_index=3, split="train", answer="desserts"), "Answer in <reversed> tags.\n\nReverse: stressed")
        # A prompt column that already shows the task gets nothing appended; a placeholder gets the whole prompt.
        self.assertIsNone(env.reset(task_index=3, prompt=[{"role": "user", "content": "Reverse: stressed"}]))
        self.assertIsNone(env.reset(task_index=3, prompt="Reverse: stressed"))
        placeholder = [{"role": "system", "content": "Use the answer tool."}, {"role": "user", "content": ""}]
        self.assertEqual(env.reset(task_index=3, prompt=placeholder), "Answer in <reversed> tags.\n\nReverse: stressed")
        self.assertEqual(env._client.calls[0], ("reset", {"task_index": 3, "split": "train"}))
        self.assertEqual(asyncio.run(env.answer(text="sdesserts")), "Wrong: try again")
        self.assertEqual(asyncio.run(env.answer(text="desserts")), "You won!")
        self.assertEqual(asyncio.run(env.answer(text="again")), trl_module.EPISODE_OVER)
        self.assertEqual(env.get_reward(), 1.0)
        self.assertEqual([call[1] for call in env._client.calls if call[0] == "step"], ["sdesserts", "desserts"])

    def test_tool_harness_generates_one_method_per_tool_from_its_schema(self):
        env = self.make([CALCULATOR, LOOKUP], [observation("14"), observation("", reward=0.25, done=True)])
        tools = trl_tools(env)
        self.assertEqual(sorted(tools), ["answer", "calculator", "lookup"])
        calculator = tools["calculator"]
        self.assertEqual(calculator.__name__, "calculator")
        self.assertTrue(inspect.iscoroutinefunction(calculator))
        parameters = inspect.signature(calculator).parameters
        self.assertEqual(list(parameters), ["expression", "precision", "mode"])
        self.assertIs(parameters["expression"].default, inspect.Parameter.empty)
        self.assertIsNone(parameters["precision"].default)
        self.assertEqual(typing.get_type_hints(calculator), {"expression": str, "precision": int, "mode": str, "return": str})
        # As transformers' get_json_schema maps them back: list[...] is an array (a bare list would read as an object).
        self.assertEqual(typing.get_type_hints(tools["lookup"]), {"words": list[str], "tags": list[typing.Any], "strict": bool, "weight": float, "opts": dict, "anything": typing.Any, "return": str})
        doc = inspect.getdoc(calculator)
        self.assertTrue(doc.startswith("Evaluates an arithmetic expression. Returns the value.\n\nArgs:\n"))
        self.assertIn("    expression: The expression, e.g. 2*(3+4)\n", doc)
        # The choices suffix is JSON, which transformers parses into the enum.
        self.assertIn('    mode: mode (choices: ["exact", "float"])\n', doc)
        self.assertIn("Returns:\n    The environment's reply.", doc)

        env.reset(task_index=0)
        # Optional arguments the model left out are not sent; the call becomes a call_tool step.
        self.assertEqual(asyncio.run(calculator(expression="2*(3+4)")), "14")
        self.assertEqual(env._client.calls[-1], ("step", None, {"name": "calculator", "arguments": {"expression": "2*(3+4)"}}))
        # The final plain reply goes through answer(); its empty reply text becomes a readable note.
        self.assertEqual(asyncio.run(env.answer(text="14")), trl_module.EPISODE_ENDED)
        self.assertEqual(env.get_reward(), 0.25)

    def test_get_reward_ends_an_open_episode_with_an_empty_reply(self):
        env = self.make([CALCULATOR], [observation("", reward=0.0, done=True)])
        env.reset(task_index=1)
        self.assertEqual(env.get_reward(), 0.0)
        self.assertEqual(env._client.calls[-1], ("step", "", None))
        # A second reset starts a fresh episode whose reward is not the previous one's.
        env.reset(task_index=2)
        FakeClient.script = []
        env._client.replies = [observation("", reward=0.75, done=True)]
        self.assertEqual(env.get_reward(), 0.75)

    def test_reset_reconnects_when_the_server_reaped_the_idle_session(self):
        env = self.make([], [])
        stale = env._client
        stale.reset = mock.Mock(side_effect=SessionClosedError("the server closed the session", 1000))
        self.assertEqual(env.reset(task_index=4), "Answer in <reversed> tags.\n\nReverse: stressed")
        self.assertIsNot(env._client, stale)
        self.assertEqual(env._client.calls, [("reset", {"task_index": 4})])

    def test_a_failed_step_ends_the_episode_with_reward_zero_and_a_bad_call_can_be_retried(self):
        env = self.make([CALCULATOR], [])
        env.reset(task_index=0)
        failures = [ServeError("VALIDATION_ERROR", "the arguments of a call_tool action must be a JSON object"), ServeError("EXECUTION_ERROR", "the environment failed: Error: the game broke")]

        def step(message=None, *, tool_call=None, tool_calls=None):
            raise failures.pop(0)

        env._client.step = step
        retry = asyncio.run(env.calculator(expression="1+"))
        self.assertIn("VALIDATION_ERROR", retry)
        failed = asyncio.run(env.calculator(expression="1+1"))
        self.assertIn("the game broke", failed)
        self.assertEqual(asyncio.run(env.answer(text="2")), trl_module.EPISODE_OVER)
        self.assertEqual(env.get_reward(), 0.0)

    def test_get_reward_scores_zero_when_the_closing_step_fails(self):
        env = self.make([], [])
        env.reset(task_index=0)
        env._client.step = mock.Mock(side_effect=SessionClosedError("the server closed the session", 1001))
        self.assertEqual(env.get_reward(), 0.0)

    def test_tools_trl_cannot_offer_are_refused_with_the_reason(self):
        for tool, reason in (({"name": "get_reward"}, "clashes with TRL"), ({"name": "_secret"}, "clashes with TRL"), ({"name": "web-search"}, "not a Python name"), ({"name": "f", "input_schema": {"properties": {"class": {"type": "string"}}}}, "parameter 'class'")):
            with self.subTest(tool=tool["name"]):
                with self.assertRaisesRegex(ValueError, reason):
                    self.make([tool], [])

    def test_url_comes_from_the_environment_variable(self):
        FakeClient.tools, FakeClient.script = [], []
        with mock.patch.object(trl_module, "EnvClient", FakeClient), mock.patch.dict(os.environ, {"TABRL_SERVE_URL": "http://127.0.0.1:8001", "TABRL_SERVE_TOKEN": "tok"}):
            env = TabrlEnvironment()
            self.assertEqual((env._client.url, env._client.token, env._client.timeout), ("http://127.0.0.1:8001", "tok", 60.0))
            bound = make_environment_class("http://127.0.0.1:9", token="t2", timeout=300)()
            self.assertEqual((bound._client.url, bound._client.token, bound._client.timeout), ("http://127.0.0.1:9", "t2", 300))
        with mock.patch.dict(os.environ, {}, clear=True):
            with self.assertRaisesRegex(ValueError, "set TABRL_SERVE_URL"):
                TabrlEnvironment()


if __name__ == "__main__":
    unittest.main()
