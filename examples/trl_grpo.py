"""GRPO with TRL on a TabRL environment served by `tabrl serve`: the same environment file, trained on GPUs.

NOT RUN in TabRL's CI (it needs TRL, vLLM and a GPU); written against TRL's GRPOTrainer with
`environment_factory` (TRL >= 1.0 with transformers >= 5.2). The Python package it uses is
tested in CI against the real server (test/unit/serve-python). Walk-through: docs/scale-out.md.

    pip install "trl[vllm]" "transformers>=5.2" jmespath datasets ./python
    tabrl serve reverse-text --max-sessions 64 &          # or: tabrl serve ./my-env.ts
    tabrl tasks rows reverse-text --out rows.jsonl        # one line of reset arguments per task

One GPU (vLLM shares the GPU with training):
    python examples/trl_grpo.py --rows rows.jsonl --vllm-mode colocate
Two GPUs (a vLLM server on one, training on the other):
    CUDA_VISIBLE_DEVICES=0 trl vllm-serve --model Qwen/Qwen3-0.6B --port 8000
    CUDA_VISIBLE_DEVICES=1 python examples/trl_grpo.py --rows rows.jsonl --vllm-mode server

The reward is the environment's: TabrlEnvironment.get_reward() returns the rubric's total from
the episode's last step, the number `tabrl eval` reports. Keep --max-sessions of the server at
least the trainer's generation batch (per_device_train_batch_size x steps_per_generation x GPUs).
"""

import argparse
import json

from datasets import Dataset
from trl import GRPOConfig, GRPOTrainer

from tabrl_openenv import get_health, make_environment_class

# Text environments are played through one tool, answer(text); tool environments also offer theirs.
ANSWER_INSTRUCTION = "Give every reply by calling a tool: answer(text) for your reply to the task, and any other tool the task needs."


def load_rows(path: str, limit: int | None) -> Dataset:
    """The dataset: each row's reset arguments (task_index, split), and a prompt that reset() fills in.

    `tabrl tasks rows` also writes each task's last user message as "prompt"; it is replaced by a
    system message and an empty user message, to which TRL appends what reset() returns: the task's
    whole prompt from the server, the environment's own system prompt included.
    """
    with open(path, encoding="utf-8") as file:
        rows = [json.loads(line) for line in file if line.strip()][:limit]
    for row in rows:
        row["prompt"] = [{"role": "system", "content": ANSWER_INSTRUCTION}, {"role": "user", "content": ""}]
    return Dataset.from_list(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--env-url", default="http://127.0.0.1:8001", help="what `tabrl serve` printed")
    parser.add_argument("--rows", required=True, help="the JSONL file `tabrl tasks rows` wrote")
    parser.add_argument("--limit", type=int, default=None, help="use only the first N rows")
    parser.add_argument("--model", default="Qwen/Qwen3-0.6B")
    parser.add_argument("--vllm-mode", choices=("colocate", "server"), default="colocate")
    parser.add_argument("--vllm-server-url", default="http://127.0.0.1:8000")
    parser.add_argument("--num-generations", type=int, default=8)
    parser.add_argument("--max-steps", type=int, default=100)
    parser.add_argument("--max-turns", type=int, default=6, help="tool calls per rollout at most (Wordle: 6 guesses)")
    parser.add_argument("--output-dir", default=None)
    args = parser.parse_args()

    print("tabrl serve:", get_health(args.env_url))  # fails early, with the URL, when the server is not there
    trainer = GRPOTrainer(
        model=args.model,
        train_dataset=load_rows(args.rows, args.limit),
        environment_factory=make_environment_class(args.env_url),  # its get_reward() is the reward
        args=GRPOConfig(
            output_dir=args.output_dir or f"{args.model.split('/')[-1]}-tabrl-GRPO",
            use_vllm=True,
            vllm_mode=args.vllm_mode,
            vllm_server_base_url=args.vllm_server_url if args.vllm_mode == "server" else None,
            num_generations=args.num_generations,
            per_device_train_batch_size=args.num_generations,
            max_steps=args.max_steps,
            max_completion_length=512,
            max_tool_calling_iterations=args.max_turns,
            learning_rate=1e-6,
            logging_steps=1,
            log_completions=True,
            chat_template_kwargs={"enable_thinking": False},
        ),
    )
    trainer.train()


if __name__ == "__main__":
    main()
