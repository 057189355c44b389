#!/usr/bin/env python3
"""A stranger's implementation of the dice function of docs/rules.md, appendix A.8.

Written from that section alone (Python 3 standard library only): it recomputes every die
of match logs from their seeds and checks every `throw` entry of each log.

Usage: recompute_dice.py LOG.json [LOG.json ...]   (or `--example` to print A.8.5's dice)
Prints one summary line per log; exits 1 at the first die that differs.
"""

import json
import sys

MASK = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15
OUTCOMES = 216
THRESHOLD = (1 << 64) % OUTCOMES  # 160
MIWIN = [[1, 2, 5, 6, 7, 9], [1, 3, 4, 5, 8, 9], [2, 3, 4, 6, 7, 8]]
D6 = [[1, 2, 3, 4, 5, 6]] * 3


def mix(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def face_indices(seed, seat, round_, throw):
    base = mix(seed ^ GAMMA)
    key = (round_ << 16) | (seat << 8) | throw
    word = mix((base + key * GAMMA) & MASK)
    while True:
        product = word * OUTCOMES
        if product & MASK >= THRESHOLD:
            outcome = product >> 64
            break
        word = mix((word + GAMMA) & MASK)
    return [outcome // 36, outcome // 6 % 6, outcome % 6]


def drawn(game, seed, seat, round_, throw):
    faces = MIWIN if game == "zokken" else D6
    return [faces[slot][i] for slot, i in enumerate(face_indices(seed, seat, round_, throw))]


def fail(message):
    print("MISMATCH: " + message, file=sys.stderr)
    sys.exit(1)


def check_log(path):
    with open(path) as f:
        return check_log_data(json.load(f), path)


def check_log_data(log, path):
    """Checks every throw of the match log `log` (parsed JSON); `path` names it in messages."""
    game = log["rules"]["game"]
    seed = log["seed"]
    hands = {}  # seat -> (round, the seat's three dice as they lie now)
    checked = throws = 0
    for index, entry in enumerate(log["entries"]):
        kind = entry["kind"]
        if kind == "event" and entry["event"]["event"] == "turned":
            # A turned six becomes a one without a throw (A.8.4).
            event = entry["event"]
            for slot in event["dice"]:
                hands[event["seat"]][1][slot] = 1
            continue
        if kind != "throw":
            continue
        seat, round_, throw = entry["seat"], entry["round"], entry["throw"]
        rolled, dice = entry["rolled"], entry["dice"]
        where = "%s entry %d (seat %d, round %d, throw %d)" % (path, index, seat, round_, throw)
        # Numbering (A.8.3): the throw-off and a turn's or a Zokken round's first throw roll
        # all three dice.
        first = throw == 1 if game != "zokken" else (throw - 1) % 3 == 0
        if (round_ == 0 or first) and sorted(rolled) != [0, 1, 2]:
            fail("%s: a first throw rolls all dice, the log rolls %s" % (where, rolled))
        if round_ == 0 and game == "zokken":
            fail("%s: zokken has no opening throw-off" % where)
        new = drawn(game, seed, seat, round_, throw)
        last_round, before = hands.get(seat, (None, None))
        if last_round != round_:
            before = None  # a new round: nothing is kept from the last one
        for slot in range(3):
            if slot in rolled:
                expected = new[slot]
            elif before is not None:
                expected = before[slot]
            else:
                fail("%s: die %d kept before any throw" % (where, slot))
            if dice[slot] != expected:
                fail("%s: die %d is %d, the dice function gives %d" % (where, slot, dice[slot], expected))
            checked += slot in rolled
        hands[seat] = (round_, list(dice))
        throws += 1
    print("%s: %s seed %d: %d throws, %d dice recomputed, all equal" % (path, game, seed, throws, checked))
    return throws, checked


def main(argv):
    if argv[1:] == ["--example"]:
        seed = 20261129
        base = mix(seed ^ GAMMA)
        print("base %016x" % base)
        for game, seat, round_, throw in [("schocken", 0, 0, 1), ("schocken", 1, 0, 1),
                                          ("schocken", 2, 0, 1), ("zokken", 0, 1, 1),
                                          ("zokken", 1, 1, 1)]:
            key = (round_ << 16) | (seat << 8) | throw
            word = mix((base + key * GAMMA) & MASK)
            outcome = (word * OUTCOMES) >> 64
            print(game, seat, round_, throw, "key %#x word %016x outcome %d" % (key, word, outcome),
                  face_indices(seed, seat, round_, throw), drawn(game, seed, seat, round_, throw))
        return
    if len(argv) < 2:
        fail("no logs given")
    for path in argv[1:]:
        check_log(path)


if __name__ == "__main__":
    main(sys.argv)
