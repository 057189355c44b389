#!/usr/bin/env python3
"""A minimal Knobel bot, standard library only: `knobel-bot --exec python3 bots/stdio/bot.py`.

Each stdin line is a message from the arena as JSON (docs/stdio-bots.md). Answer each
decision_request with one line {"request_id": ..., "action": <one of its legal_actions>}.
Print nothing else on stdout: stderr goes to the bridge's log."""
import json
import sys


def pick(request, *wants):
    """The first legal action that a want accepts, wants in order of preference; else the default."""
    for want in wants:
        for action in request["legal_actions"]:
            if want(action):
                return action
    return request["default_action"]

def kind(name):
    return lambda action: name in action

def reroll(slots):  # reroll exactly these die slots, turning no six
    return lambda a: "reroll" in a and sorted(a["reroll"]["dice"]) == sorted(slots) and not a["reroll"]["turn"]

def stop(action):  # stop, turning no six
    return "stop" in action and not action["stop"]["turn"]

def shake(request, obs):
    """Schocken and Sjokken: keep two ones or a triple, else reroll every die that is not a one."""
    dice = [die.get("value") for die in obs["turns"][obs["seat"]]["dice"]]
    if dice.count(1) >= 2 or (None not in dice and len(set(dice)) == 1):
        return pick(request, stop)
    locked = obs["decision"]["locked"]
    return pick(request, reroll([s for s in range(3) if dice[s] != 1 and s not in locked]), stop)

def zokken(request, obs):
    """Zokken: keep and bet a figure as strong as every other in the round, else fold."""
    me = obs["seats"][obs["seat"]]
    others = [s.get("figure", {}).get("strength", 0) for i, s in enumerate(obs["seats"])
              if i != obs["seat"] and s["status"] == "ZOKKEN_SEAT_STATUS_IN_ROUND"]
    ahead = me.get("figure", {}).get("strength", 0) >= max(others, default=0)
    if obs["phase"]["kind"] == "ZOKKEN_PHASE_KIND_CHOOSING":
        lowest = min(range(3), key=lambda slot: me["dice"][slot])
        return pick(request, reroll([] if ahead else [lowest]), reroll([]))
    if ahead:
        return pick(request, kind("bet"), kind("call"), kind("check"))
    return pick(request, kind("check"), kind("fold"))

for line in sys.stdin:
    message = json.loads(line)
    if "decision_request" in message:
        request = message["decision_request"]
        obs = request["observation"]
        action = shake(request, obs["shake"]) if "shake" in obs else zokken(request, obs["zokken"])
        print(json.dumps({"request_id": request["request_id"], "action": action}), flush=True)
    elif "error" in message or "line_error" in message:
        print("refused:", line.strip(), file=sys.stderr)
