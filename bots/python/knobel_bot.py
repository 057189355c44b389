#!/usr/bin/env python3
"""A complete Knobel bot in Python: plays Schocken, Sjokken and Zokken on the arena.

Run ./generate.sh once to create the gRPC stubs in gen/, then:

    python knobel_bot.py --server 127.0.0.1:50051 --token "$KNOBEL_TOKEN" --games zokken

Replicas of an arena cluster without a load balancer: --server HOST:PORT,HOST:PORT,...;
the bot connects to the first and, each time it has to reconnect, to the next.

It prints one line per match on stdout: "match <id> <game> place <p>/<n>".
The contract is proto/knobel/v1/arena.proto; the rules are docs/rules.md.
"""
import argparse
import os
import queue
import random
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen"))

import grpc  # noqa: E402
from knobel.v1 import arena_pb2 as pb  # noqa: E402
from knobel.v1 import arena_pb2_grpc as rpc  # noqa: E402

GAMES = {"schocken": pb.GAME_SCHOCKEN, "sjokken": pb.GAME_SJOKKEN, "zokken": pb.GAME_ZOKKEN}
GAME_NAMES = {number: name for name, number in GAMES.items()}
# Zokken figures worth playing on whatever the others hold.
STRONG_FIGURES = {pb.HAND_KIND_KELM, pb.HAND_KIND_TINN, pb.HAND_KIND_STRASSE, pb.HAND_KIND_PLUS}


def key(action):
    """A comparable form of an Action: its kind and its dice as sets (order never matters)."""
    kind = action.WhichOneof("kind")
    if kind == "stop":
        return (kind, frozenset(action.stop.turn))
    if kind == "reroll":
        return (kind, frozenset(action.reroll.dice), frozenset(action.reroll.turn))
    return (kind,)


def stop(turn=()):
    return pb.Action(stop=pb.Stop(turn=sorted(turn)))


def reroll(dice, turn=()):
    return pb.Action(reroll=pb.Reroll(dice=sorted(dice), turn=sorted(turn)))


# --- Schocken and Sjokken: keep ones, turn sixes, stop on a Schock or a triple ------------

def shake_choices(obs):
    """Actions to try, best first, for a Schocken or Sjokken decision."""
    decision = obs.decision
    dice = [d.value if d.HasField("value") else None for d in obs.turns[obs.seat].dice]
    ones = [slot for slot, value in enumerate(dice) if value == 1]
    if len(ones) >= 2 or (None not in dice and len(set(dice)) == 1):
        return [stop()]  # a Schock (Sjok), Schock out, or a General (Harde): keep it
    turnable = list(decision.turnable)[: decision.max_turn]
    locked = set(decision.locked)
    keep = set(ones) | locked
    choices = []
    if turnable and len(ones) + len(turnable) >= 2:
        choices.append(stop(turnable))  # turning makes a Schock: keep it, where that is allowed
    if decision.can_reroll:
        if turnable:
            # Turn sixes into ones, then reroll everything that is not a one (at least one die).
            turn = set(turnable)
            if not {0, 1, 2} - keep - turn:
                turn = set(turnable[:-1])
            choices.append(reroll({0, 1, 2} - keep - turn, turn))
        choices.append(reroll({0, 1, 2} - keep))
    choices.append(stop())
    return choices


# --- Zokken: keep good figures, bet strong ones, fold weak ones facing a bet --------------

def zokken_choices(obs):
    """Actions to try, best first, for a Zokken decision."""
    me = obs.seats[obs.seat]
    mine = me.figure.strength
    others = [s.figure.strength for i, s in enumerate(obs.seats)
              if i != obs.seat and s.status == pb.ZOKKEN_SEAT_STATUS_IN_ROUND]
    best_other = max(others, default=0)
    strong = me.figure.kind in STRONG_FIGURES or mine >= best_other
    if obs.phase.kind == pb.ZOKKEN_PHASE_KIND_CHOOSING:
        if me.figure.kind in STRONG_FIGURES:
            return [reroll(())]  # keep all three dice
        dice = list(me.dice)
        if me.figure.kind == pb.HAND_KIND_PASCH:
            pair = next(v for v in dice if dice.count(v) == 2)
            odd = [slot for slot, v in enumerate(dice) if v != pair]
            return [reroll(odd), reroll(())]  # keep the pair, throw the third die
        lowest = min(range(3), key=lambda slot: dice[slot])
        return [reroll([lowest]), reroll(())]
    ahead = mine > best_other
    if obs.bets > 0:  # facing a bet: call, raise, or fold
        if strong and ahead:
            # `raise` is a Python keyword: pb.Action(raise=...) is a syntax error, so the
            # field is passed by name in a dict (or: getattr(action, "raise").CopyFrom(...)).
            return [pb.Action(**{"raise": pb.Raise()}), pb.Action(call=pb.Call())]
        if strong:
            return [pb.Action(call=pb.Call())]
        return [pb.Action(fold=pb.Fold())]
    if strong and ahead:
        return [pb.Action(bet=pb.Bet()), pb.Action(check=pb.Check())]
    return [pb.Action(check=pb.Check())]


def decide(request):
    """Always one of request.legal_actions: the first legal choice, else the default."""
    legal = {key(a): a for a in request.legal_actions}
    obs = request.observation
    try:
        if obs.WhichOneof("kind") == "shake":
            choices = shake_choices(obs.shake)
        else:
            choices = zokken_choices(obs.zokken)
    except Exception as error:  # a bug in the strategy must not cost a strike
        print(f"strategy failed: {error!r}", file=sys.stderr)
        choices = []
    for choice in choices:
        if key(choice) in legal:
            return legal[key(choice)]
    return request.default_action


# --- The Play stream -----------------------------------------------------------------------

def play(stub, args, played):
    """One Play stream. Returns True when enough matches are played."""
    outbox = queue.Queue()
    outbox.put(pb.BotMessage(hello=pb.Hello(
        name=args.name, games=[GAMES[g] for g in args.games], client_version="knobel-py 0.1.0",
        preset=args.preset, max_matches=max(args.matches - played[0], 1) if args.matches else 0)))

    def requests():  # what we send: taken from the outbox until None
        while (message := outbox.get()) is not None:
            yield message

    call = stub.Play(requests(), metadata=[("authorization", f"Bearer {args.token}")])
    matches = {}
    try:
        for message in call:
            kind = message.WhichOneof("kind")
            if kind == "welcome":
                print(f"welcomed as {message.welcome.bot_name}", file=sys.stderr)
            elif kind == "waiting":
                print(f"waiting: {message.waiting.reason}", file=sys.stderr)
            elif kind == "match_start":
                start = message.match_start
                matches[start.match_id] = start
            elif kind == "decision_request":
                request = message.decision_request
                outbox.put(pb.BotMessage(decision=pb.Decision(
                    request_id=request.request_id, action=decide(request))))
            elif kind == "error":
                error = message.error
                print(f"refused: {pb.ErrorCode.Name(error.code)}: {error.message}", file=sys.stderr)
            elif kind == "match_result":
                result = message.match_result
                start = matches.pop(result.match_id, None)
                game = GAME_NAMES.get(start.game, "unknown") if start else "unknown"
                seats = start.seats if start else len(result.outcome.placings)
                print(f"match {result.match_id} {game} place {result.your_place}/{seats}",
                      flush=True)
                played[0] += 1
                if args.matches and played[0] >= args.matches:
                    return True
        return False  # the arena ended the stream: reconnect
    finally:
        outbox.put(None)
        call.cancel()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", default="127.0.0.1:50051",
                        help="the arena, HOST:PORT; replicas without a load balancer: "
                             "HOST:PORT,HOST:PORT,... tried in turn on each reconnect")
    parser.add_argument("--token", default=os.environ.get("KNOBEL_TOKEN"),
                        help="the bot's token (default: $KNOBEL_TOKEN)")
    parser.add_argument("--name", default="knobel-py")
    parser.add_argument("--games", default="schocken,sjokken,zokken",
                        type=lambda text: [g.strip() for g in text.split(",")],
                        help="comma-separated; the arena seats the bot in the first game's matches")
    parser.add_argument("--preset", help="a preset to ask for, e.g. schocken-typenclub")
    parser.add_argument("--matches", type=int, default=0, help="stop after N matches (0: never)")
    args = parser.parse_args()
    if not args.token:
        parser.error("no token: pass --token or set KNOBEL_TOKEN (see `knobel bot add`)")
    if unknown := [g for g in args.games if g not in GAMES]:
        parser.error(f"unknown games {unknown}: games are {', '.join(GAMES)}")
    servers = [s.strip().removeprefix("http://") for s in args.server.split(",")]
    if not all(servers) or len(servers) > 64:
        parser.error(f"--server {args.server[:100]!r}: give 1 to 64 addresses HOST:PORT "
                     "separated by single commas")
    played, delay, attempt = [0], 0.1, 0
    while True:
        server = servers[attempt % len(servers)]  # after a failure, the next replica
        attempt += 1
        # Ask gRPC to keep the connection alive through idle proxies.
        with grpc.insecure_channel(server, options=[("grpc.keepalive_time_ms", 20000)]) as channel:
            try:
                if play(rpc.ArenaStub(channel), args, played):
                    return 0
                delay = 0.1
            except grpc.RpcError as error:
                if error.code() in (grpc.StatusCode.UNAUTHENTICATED,
                                    grpc.StatusCode.INVALID_ARGUMENT):
                    print(f"the arena refused us: {error.details()}", file=sys.stderr)
                    return 2
                print(f"connection to {server} failed: {error.code().name}; retrying",
                      file=sys.stderr)
        time.sleep(delay * random.uniform(0.5, 1.0))  # exponential backoff with jitter
        delay = min(delay * 2, 10.0)


if __name__ == "__main__":
    sys.exit(main())
