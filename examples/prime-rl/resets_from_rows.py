"""Prints the `resets = [...]` line of examples/prime-rl/tabrl-openenv.toml from the rows `tabrl tasks rows` wrote.

    python3 examples/prime-rl/resets_from_rows.py rows.jsonl [--limit N]

Each JSONL row's reset arguments (everything but a "prompt") become one inline table; standard library only.
"""

import argparse
import json

RESET_KEYS = ("task_index", "seed", "episode_id", "split")


def toml_value(value):
    """A TOML literal for a JSON scalar (JSON strings and numbers are valid TOML basic strings and numbers)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return json.dumps(value)
    raise ValueError(f"reset argument {value!r} is not a string, number or boolean")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("rows")
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    tables = []
    with open(args.rows, encoding="utf-8") as file:
        for number, line in enumerate(file, 1):
            if not line.strip():
                continue
            row = json.loads(line)
            fields = [f"{key} = {toml_value(row[key])}" for key in RESET_KEYS if row.get(key) is not None]
            if not fields:
                raise SystemExit(f"{args.rows}:{number} has no reset arguments ({', '.join(RESET_KEYS)}); is it a file from `tabrl tasks rows`?")
            tables.append("  { " + ", ".join(fields) + " },")
            if args.limit is not None and len(tables) >= args.limit:
                break
    print("resets = [\n" + "\n".join(tables) + "\n]")


if __name__ == "__main__":
    main()
