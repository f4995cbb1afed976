"""Drives a running ``tabrl serve`` with the tabrl_openenv clients, for test/unit/serve-python (not a unittest module).

  drive_serve.py play SERVE_URL POLICY_URL --tasks N [--split eval] [--async]
      plays tasks 0..N-1; each model turn asks POLICY_URL (an OpenAI-compatible endpoint) for the
      reply to the observation's messages and tools; prints one JSON line per episode.
  drive_serve.py errors SERVE_URL --max-sessions N
      runs the error cases against a server started with --max-sessions N; prints one JSON object.
  drive_serve.py trl SERVE_URL --rows ROWS.jsonl
      plays the rows (from `tabrl tasks rows`) of the test's multiplication environment file through
      the TRL class, calling its tools as GRPOTrainer does; prints one JSON object.
  drive_serve.py bench SERVE_URL --sessions 1,8,64 --episodes N
      reverse-text episodes (reset, one correct reply) from the asyncio client at each concurrency,
      and from the blocking client in one session; prints one JSON line per level (for bench/serve-python.ts).
  drive_serve.py token SERVE_URL TOKEN
      checks a server started with --token-env: refused without the token, served with it.
"""

import argparse
import asyncio
import inspect
import json
import re
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the package beside tests/, not an installed one

from tabrl_openenv import AsyncEnvClient, EnvClient, ServeError, get_health, get_metadata, get_schema, make_environment_class


def ask_policy(policy_url, messages, tools):
    """The policy endpoint's reply message for a conversation (content and any tool_calls)."""
    body = {"model": "fake", "messages": messages}
    if tools:
        body["tools"] = tools
    request = urllib.request.Request(policy_url.rstrip("/") + "/chat/completions", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())["choices"][0]["message"]


def step_arguments(reply):
    """The client.step() keywords for a policy reply: one tool call alone goes as a call_tool action, the rest as message (+ tool_calls)."""
    calls = reply.get("tool_calls") or []
    content = reply.get("content") or ""
    if len(calls) == 1 and not content:
        function = calls[0]["function"]
        return {"tool_call": {"name": function["name"], "arguments": json.loads(function["arguments"])}}
    if calls:
        return {"message": content, "tool_calls": calls}
    return {"message": content}


def summary(task_index, result, turns):
    observation = result.observation
    return {"task_index": task_index, "reward": result.reward, "done": result.done, "terminated": result.terminated, "truncated": result.truncated,
            "scores": observation.get("scores"), "metrics": observation.get("metrics"), "turns": turns, "observed_task": observation.get("task_index")}


def play_sync(serve_url, policy_url, tasks, split):
    with EnvClient(serve_url) as client:
        for task_index in range(tasks):
            result, turns = client.reset(task_index=task_index, split=split), 0
            while not result.done:
                result = client.step(**step_arguments(ask_policy(policy_url, result.messages, result.tools)))
                turns += 1
            print(json.dumps(summary(task_index, result, turns)), flush=True)


async def play_async(serve_url, policy_url, tasks, split):
    async def one(task_index):
        # One session per episode, all at once, as TRL's asyncio.gather runs rollouts.
        async with await AsyncEnvClient.connect(serve_url) as client:
            result, turns = await client.reset(task_index=task_index, split=split), 0
            while not result.done:
                reply = await asyncio.to_thread(ask_policy, policy_url, result.messages, result.tools)
                result = await client.step(**step_arguments(reply))
                turns += 1
            return summary(task_index, result, turns)

    for line in await asyncio.gather(*(one(task_index) for task_index in range(tasks))):
        print(json.dumps(line), flush=True)


def code_of(action):
    """The ServeError code ``action()`` raised (with its data), or None when it raised nothing."""
    try:
        action()
    except ServeError as error:
        return {"code": error.code, "message": str(error), **{k: v for k, v in error.data.items() if k in ("active_sessions", "max_sessions", "close_code")}}
    return None


def check_errors(serve_url, max_sessions):
    report = {"health": get_health(serve_url), "action_required": get_schema(serve_url)["action"].get("required"), "metadata_keys": sorted(get_metadata(serve_url))}
    first = EnvClient(serve_url)
    report["step_before_reset"] = code_of(lambda: first.step("too early"))
    report["state_after_error"] = first.state()
    first.reset(task_index=0)
    others = [EnvClient(serve_url) for _ in range(max_sessions - 1)]
    for client in others:
        client.reset(task_index=0)
    extra = EnvClient(serve_url)
    report["over_the_cap"] = code_of(lambda: extra.reset(task_index=0))
    report["after_capacity_error"] = code_of(lambda: extra.reset(task_index=0))
    extra.close()
    # A client that drops mid-episode (no close frame) frees its session: a new one gets in.
    first.abort()
    deadline, replacement, attempts = time.monotonic() + 20, None, 0
    while replacement is None and time.monotonic() < deadline:
        attempts += 1
        candidate = EnvClient(serve_url)
        try:
            candidate.reset(task_index=1)
            replacement = candidate
        except ServeError:
            candidate.close()
            time.sleep(0.2)
    report["replacement_after_drop"] = replacement is not None
    if replacement is not None:
        result = replacement.step("<reversed>x</reversed>")
        report["replacement_episode"] = {"done": result.done, "reward_is_number": isinstance(result.reward, float)}
        replacement.close()
    for client in others:
        client.close()
    # Frames past 64 KiB (8-byte lengths) both ways, then one over the server's 16 MiB limit.
    with EnvClient(serve_url) as big:
        big.reset(task_index=2)
        result = big.step("<reversed>" + "x" * 3_000_000 + "</reversed>")
        report["large_step"] = {"done": result.done, "echoed_length": len(result.messages[-1]["content"])}
    huge = EnvClient(serve_url)
    huge.reset(task_index=2)
    report["oversized_step"] = code_of(lambda: huge.step("y" * (17 * 1024 * 1024)))
    huge.close()
    print(json.dumps(report), flush=True)


def check_token(serve_url, token):
    report = {"without_token": code_of(lambda: EnvClient(serve_url, token="")), "wrong_token": code_of(lambda: EnvClient(serve_url, token="not-it"))}
    with EnvClient(serve_url, token=token) as client:
        report["with_token_task"] = client.reset(task_index=0).observation.get("task_index")
    print(json.dumps(report), flush=True)


def play_trl(serve_url, rows_path):
    env = make_environment_class(serve_url)()
    # The tools GRPOTrainer finds: public bound methods but reset and get_reward.
    tools = {name: member for name, member in inspect.getmembers(env, predicate=inspect.ismethod) if name not in ("reset", "get_reward") and not name.startswith("_")}
    report = {
        "tools": sorted(tools),
        "async": all(inspect.iscoroutinefunction(tool) for tool in tools.values()),
        "multiply_parameters": {name: param.annotation.__name__ for name, param in inspect.signature(tools["multiply"]).parameters.items()},
        "multiply_doc": inspect.getdoc(tools["multiply"]),
        "episodes": [],
    }
    with open(rows_path, encoding="utf-8") as file:
        rows = [json.loads(line) for line in file if line.strip()]
    # A row as `tabrl tasks rows` wrote it shows the task in its prompt column: reset() adds nothing.
    report["raw_row_reset"] = env.reset(**rows[0])
    for row in rows:
        # As examples/trl_grpo.py feeds TRL: an empty user message that reset()'s text fills in.
        row["prompt"] = [{"role": "system", "content": "Use the tools."}, {"role": "user", "content": ""}]
        prompt = env.reset(**row)
        a, b = (int(x) for x in re.search(r"What is (\d+) times (\d+)", prompt).groups())
        product = asyncio.run(tools["multiply"](a=a, b=b))
        # The same replies as the test's fake model: the product, in words for 9 x 9.
        final = asyncio.run(tools["answer"](text="eighty-one" if product == "81" else product))
        report["episodes"].append({"task_index": row["task_index"], "prompt": prompt, "tool_result": product, "final": final, "reward": env.get_reward()})
    print(json.dumps(report), flush=True)


def reverse_reply(prompt):
    """reverse-text's correct reply to its prompt."""
    return "<reversed>" + prompt.removeprefix("Reverse this text: ")[::-1] + "</reversed>"


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def bench_level(serve_url, sessions, episodes):
    """Plays ``episodes`` reverse-text episodes over ``sessions`` asyncio sessions; returns the measurements."""
    latencies, rewards = [], []

    async def timed(coroutine):
        start = time.perf_counter()
        result = await coroutine
        latencies.append(time.perf_counter() - start)
        return result

    async def worker(count, offset):
        async with await AsyncEnvClient.connect(serve_url) as client:
            for k in range(count):
                first = await timed(client.reset(task_index=(offset + k) % 1000))
                last = await timed(client.step(reverse_reply(first.prompt)))
                rewards.append(last.reward)

    async def run():
        counts = [episodes // sessions + (1 if i < episodes % sessions else 0) for i in range(sessions)]
        await asyncio.gather(*(worker(count, sum(counts[:i])) for i, count in enumerate(counts)))

    start = time.perf_counter()
    asyncio.run(run())
    return {"client": "asyncio", "sessions": sessions, "episodes": episodes, "wall_s": time.perf_counter() - start, "latencies": latencies, "rewards": rewards}


def bench_sync(serve_url, episodes):
    """The same episodes, one after another, from the blocking client."""
    latencies, rewards = [], []
    start = time.perf_counter()
    with EnvClient(serve_url) as client:
        for k in range(episodes):
            t0 = time.perf_counter()
            first = client.reset(task_index=k % 1000)
            t1 = time.perf_counter()
            last = client.step(reverse_reply(first.prompt))
            latencies += [t1 - t0, time.perf_counter() - t1]
            rewards.append(last.reward)
    return {"client": "blocking", "sessions": 1, "episodes": episodes, "wall_s": time.perf_counter() - start, "latencies": latencies, "rewards": rewards}


def bench(serve_url, levels, episodes):
    for result in [bench_sync(serve_url, min(episodes, 256))] + [bench_level(serve_url, sessions, episodes) for sessions in levels]:
        latencies, rewards = result.pop("latencies"), result.pop("rewards")
        result.update(episodes_per_s=result["episodes"] / result["wall_s"], p50_ms=1000 * percentile(latencies, 0.5), p99_ms=1000 * percentile(latencies, 0.99), mean_reward=sum(rewards) / len(rewards))
        print(json.dumps(result), flush=True)


def main(argv):
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest="command", required=True)
    play = commands.add_parser("play")
    play.add_argument("serve_url")
    play.add_argument("policy_url")
    play.add_argument("--tasks", type=int, required=True)
    play.add_argument("--split", default="eval")
    play.add_argument("--async", dest="use_async", action="store_true")
    errors = commands.add_parser("errors")
    errors.add_argument("serve_url")
    errors.add_argument("--max-sessions", type=int, required=True)
    trl = commands.add_parser("trl")
    trl.add_argument("serve_url")
    trl.add_argument("--rows", required=True)
    bench_parser = commands.add_parser("bench")
    bench_parser.add_argument("serve_url")
    bench_parser.add_argument("--sessions", default="1,8,64")
    bench_parser.add_argument("--episodes", type=int, default=1024)
    token = commands.add_parser("token")
    token.add_argument("serve_url")
    token.add_argument("token")
    args = parser.parse_args(argv)
    if args.command == "play":
        if args.use_async:
            asyncio.run(play_async(args.serve_url, args.policy_url, args.tasks, args.split))
        else:
            play_sync(args.serve_url, args.policy_url, args.tasks, args.split)
    elif args.command == "bench":
        bench(args.serve_url, [int(level) for level in args.sessions.split(",")], args.episodes)
    elif args.command == "trl":
        play_trl(args.serve_url, args.rows)
    elif args.command == "errors":
        check_errors(args.serve_url, args.max_sessions)
    else:
        check_token(args.serve_url, args.token)


if __name__ == "__main__":
    main(sys.argv[1:])
