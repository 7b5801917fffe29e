"""python -m nki_agent_rl: the reward service from a shell.

    python -m nki_agent_rl health
    python -m nki_agent_rl score --task add_fp32 kernel.py [--preset nki] [--response] [--seeds 1]
    python -m nki_agent_rl verify --task add_fp32 kernel.py      # also compile, profile

--url and --token default to $NKIA_REWARD_URL and $NKIA_REWARD_TOKEN. `score` prints the answer
as JSON; the tools print what a model reads and exit 1 when their `ok` is false. Exit 1 too when
the service refused or could not be reached (its error on stderr).
"""

from __future__ import annotations

import argparse
import json
import sys

from .client import RewardClient, RewardServiceError


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m nki_agent_rl", description="Call nki-agent serve.")
    p.add_argument("--url", help="the service (default $NKIA_REWARD_URL, else http://127.0.0.1:8470)")
    p.add_argument("--token", help="bearer token (default $NKIA_REWARD_TOKEN)")
    p.add_argument("--timeout", type=float, help="seconds per request")
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("health", help="GET /health")
    score = sub.add_parser("score", help="POST /v1/reward with a kernel file")
    for name in ("compile", "verify", "profile"):
        sub.add_parser(name, help=f"POST /v1/{name} with a kernel file")
    for name, sp in sub.choices.items():
        if name == "health":
            continue
        sp.add_argument("--task", required=True, help="task id, id_name or folder name")
        sp.add_argument("file", help="the kernel module (or, with score --response, a model's reply); - for stdin")
    score.add_argument("--preset", help="preset of `score` (default: the service's, nki)")
    score.add_argument("--response", action="store_true", help="send the file as a model's reply, not a kernel")
    score.add_argument("--turns", choices=("last", "all"))
    score.add_argument("--seeds", type=int)
    score.add_argument("--no-speed", action="store_true", help="do not measure the simulated speed")
    args = p.parse_args(argv)

    client = RewardClient(args.url, args.token, args.timeout, max_attempts=3)
    try:
        if args.command == "health":
            print(json.dumps(client.health(), indent=2))
            return 0
        text = sys.stdin.read() if args.file == "-" else open(args.file, encoding="utf-8").read()
        if args.command == "score":
            fields = {"task_id": args.task, ("response" if args.response else "kernel_code"): text}
            for key in ("preset", "turns", "seeds"):
                if getattr(args, key) is not None:
                    fields[key] = getattr(args, key)
            if args.no_speed:
                fields["speed"] = False
            print(json.dumps(client.reward(**fields), indent=2))
            return 0
        answer = getattr(client, args.command)(args.task, text)
        print(answer.get("content", ""))
        return 0 if answer.get("ok") else 1
    except RewardServiceError as e:
        print(f"nki_agent_rl: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"nki_agent_rl: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
