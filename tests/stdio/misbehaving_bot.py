#!/usr/bin/env python3
"""A stdin/stdout bot that breaks the bridge's rules on purpose (tests/tests/stdio_bots.rs).

    misbehaving_bot.py MODE DIR

It answers every decision request with its default action, except that in its first run (it
counts its runs in DIR/starts) it misbehaves as MODE says:

- not-json, unknown-action, too-long, no-action: answers its first request with such a line;
- exit-mid-match: exits at its second request, without answering it;
- never-answer: reads everything and answers nothing;
- crash-then-one-match: runs 1 to 5 exit at once (before reading anything), run 6 exits
  after its first match result, later runs play on.

Every line it reads is appended to DIR/received-RUN.jsonl (RUN counts from 1); the time
(seconds, CLOCK_MONOTONIC) of every start to DIR/started, of a planned exit after a match
to DIR/exited; a line to stderr at every start.
"""
import json
import os
import sys
import time

mode, folder = sys.argv[1], sys.argv[2]
starts = os.path.join(folder, "starts")
run = int(open(starts).read()) + 1 if os.path.exists(starts) else 1
with open(starts, "w") as f:
    f.write(str(run))
with open(os.path.join(folder, "started"), "a") as f:
    f.write(f"{time.monotonic()}\n")
print(f"misbehaving bot: run {run} starting", file=sys.stderr, flush=True)
if mode == "crash-then-one-match" and run <= 5:
    sys.exit(1)
BAD_LINES = {
    "not-json": lambda request: "this is not json",
    "unknown-action": lambda request: json.dumps({"request_id": request["request_id"], "action": {"jump": {}}}),
    "too-long": lambda request: "x" * 100_000,
    "no-action": lambda request: json.dumps({"request_id": request["request_id"]}),
}
requests = 0
with open(os.path.join(folder, f"received-{run}.jsonl"), "a") as received:
    for line in sys.stdin:
        received.write(line)
        received.flush()
        message = json.loads(line)
        if mode == "crash-then-one-match" and run == 6 and "match_result" in message:
            with open(os.path.join(folder, "exited"), "w") as f:
                f.write(f"{time.monotonic()}\n")
            sys.exit(0)
        request = message.get("decision_request")
        if request is None:
            continue
        requests += 1
        if run == 1 and mode == "never-answer":
            continue
        if run == 1 and mode == "exit-mid-match" and requests == 2:
            sys.exit(3)
        if run == 1 and mode in BAD_LINES and requests == 1:
            print(BAD_LINES[mode](request), flush=True)
            continue
        print(json.dumps({"request_id": request["request_id"], "action": request["default_action"]}), flush=True)
