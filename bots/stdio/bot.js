#!/usr/bin/env node
// A minimal Knobel bot, Node 20 and no packages: `knobel-bot --exec node bots/stdio/bot.js`.
//
// Each stdin line is a message from the arena as JSON (docs/stdio-bots.md). Answer each
// decision_request with one line {"request_id": ..., "action": <one of its legal_actions>}.
// Print nothing else on stdout: stderr goes to the bridge's log.
const readline = require("node:readline");

// The first legal action that a want accepts, wants in order of preference; else the default.
function pick(request, ...wants) {
  for (const want of wants) {
    const action = request.legal_actions.find(want);
    if (action) return action;
  }
  return request.default_action;
}
const kind = (name) => (action) => name in action; // an action of this kind
const same = (a, b) => a.length === b.length && [...a].sort().every((x, i) => x === [...b].sort()[i]);
const reroll = (slots) => (a) => a.reroll && same(a.reroll.dice, slots) && a.reroll.turn.length === 0;
const stop = (a) => a.stop && a.stop.turn.length === 0; // reroll these slots, or stop: turning no six

// Schocken and Sjokken: keep two ones or a triple, else reroll every die that is not a one.
function shake(request, obs) {
  const dice = obs.turns[obs.seat].dice.map((die) => die.value ?? null); // null: hidden
  const ones = dice.filter((value) => value === 1).length;
  if (ones >= 2 || (!dice.includes(null) && new Set(dice).size === 1)) return pick(request, stop);
  const rest = [0, 1, 2].filter((s) => dice[s] !== 1 && !obs.decision.locked.includes(s));
  return pick(request, reroll(rest), stop);
}

// Zokken: keep and bet a figure as strong as every other in the round, else fold.
function zokken(request, obs) {
  const me = obs.seats[obs.seat];
  const strength = (seat) => (seat.figure ? seat.figure.strength : 0);
  const others = obs.seats.filter((s, i) => i !== obs.seat && s.status === "ZOKKEN_SEAT_STATUS_IN_ROUND");
  const ahead = strength(me) >= Math.max(0, ...others.map(strength));
  if (obs.phase.kind === "ZOKKEN_PHASE_KIND_CHOOSING") {
    const lowest = [0, 1, 2].reduce((low, s) => (me.dice[s] < me.dice[low] ? s : low), 0);
    return pick(request, reroll(ahead ? [] : [lowest]), reroll([]));
  }
  if (ahead) return pick(request, kind("bet"), kind("call"), kind("check"));
  return pick(request, kind("check"), kind("fold"));
}

const decide = (request) => {
  const obs = request.observation;
  return obs.shake ? shake(request, obs.shake) : zokken(request, obs.zokken);
};
module.exports = { decide }; // ../js/knobel_bot.js plays the same decisions over gRPC

if (require.main === module) {
  readline.createInterface({ input: process.stdin }).on("line", (line) => {
    const message = JSON.parse(line);
    if (message.decision_request) {
      const request = message.decision_request;
      process.stdout.write(JSON.stringify({ request_id: request.request_id, action: decide(request) }) + "\n");
    } else if (message.error || message.line_error) console.error("refused:", line);
  });
}
