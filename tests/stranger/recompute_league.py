#!/usr/bin/env python3
"""A stranger's check of an ended league's dice, from docs/fair-play.md and docs/rules.md A.8.

Python 3 standard library only. Reads a league archive (`knobel league export`), checks
the commitment against the revealed secret, recomputes every match's seed from the secret
and compares it with the seed of its log, then recomputes every die of every log from its
seed (recompute_dice.py, the A.8 implementation beside this file).

Usage: recompute_league.py ARCHIVE
Prints one summary line; exits 1 at the first difference.
"""

import hashlib
import hmac
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import recompute_dice  # noqa: E402


def fail(message):
    print("MISMATCH: " + message, file=sys.stderr)
    sys.exit(1)


def first8(message, secret):
    tag = hmac.new(secret, message.encode("ascii"), hashlib.sha256).digest()
    return int.from_bytes(tag[:8], "big")


def match_seed(secret, dice, ordinal, set_, attempt):
    if dice == "independent":
        return first8("knobel/v1/match-seed/independent/%d/%d" % (ordinal, attempt), secret)
    if dice == "duplicate":
        return first8("knobel/v1/match-seed/duplicate/%d" % set_, secret)
    fail("unknown dice %r" % dice)


def main(argv):
    if len(argv) != 2:
        fail("usage: recompute_league.py ARCHIVE")
    with open(argv[1], encoding="utf-8") as f:
        lines = [json.loads(line) for line in f if line.strip()]
    header, matches, end = lines[0], lines[1:-1], lines[-1]
    if header.get("archive") != "knobel-league" or header.get("format_version") != 1:
        fail("not a knobel league archive of format 1")
    league = header["league"]
    if end.get("end_of_archive") != len(matches):
        fail("the archive is cut off: %d match lines, its end says %r" % (len(matches), end))
    secret = bytes.fromhex(league["dice_secret"])
    if len(secret) != 32:
        fail("the revealed secret is not 32 bytes")
    text = "knobel/v1/commitment/%d/%s/%s" % (league["id"], league["name"], secret.hex())
    if hashlib.sha256(text.encode("utf-8")).hexdigest() != league["dice_commitment"]:
        fail("the revealed secret does not match the commitment %s" % league["dice_commitment"])
    seeds = throws = dice = 0
    for m in matches:
        if "log" not in m:
            continue
        expected = match_seed(secret, league["dice"], m["ordinal"], m["set"], m["attempt"])
        if m["log"]["seed"] != expected:
            fail("match %s (ordinal %d): log seed %d, the secret gives %d"
                 % (m["match_id"], m["ordinal"], m["log"]["seed"], expected))
        seeds += 1
        t, d = recompute_dice.check_log_data(m["log"], "match %s" % m["match_id"])
        throws += t
        dice += d
    print("league %s: commitment matches the secret; %d match seeds and %d throws (%d dice) "
          "recomputed, all equal" % (league["name"], seeds, throws, dice))


if __name__ == "__main__":
    main(sys.argv)
