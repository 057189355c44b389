#!/usr/bin/env node
// A complete Knobel bot in JavaScript on @grpc/grpc-js: plays Schocken, Sjokken and Zokken.
//
//     cd bots/js && npm ci
//     node knobel_bot.js --server 127.0.0.1:50051 --token "$KNOBEL_TOKEN" --games zokken
//
// Replicas of an arena cluster without a load balancer: --server HOST:PORT,HOST:PORT,...; the
// bot connects to the first and, each time it has to reconnect, to the next.
//
// It prints one line per match on stdout: "match <id> <game> place <p>/<n>". The contract is
// proto/knobel/v1/arena.proto, loaded at start by @grpc/proto-loader (no generated code);
// the rules are docs/rules.md. The messages look like the JSON lines of the stdin/stdout bridge
// (field names as in the .proto file, enums by name; an unset message is null instead of
// absent, and each oneof also names its member in a `kind` field), so the decisions are
// those of the stdin/stdout starter kit, ../stdio/bot.js: a bot can move from one way in to
// the other without changing a line of its strategy.
"use strict";
const path = require("node:path");
const { parseArgs } = require("node:util");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");
const { decide } = require("../stdio/bot.js");

const PROTO = path.join(__dirname, "..", "..", "proto", "knobel", "v1", "arena.proto");
const GAMES = { schocken: "GAME_SCHOCKEN", sjokken: "GAME_SJOKKEN", zokken: "GAME_ZOKKEN" };
const GAME_NAMES = Object.fromEntries(Object.entries(GAMES).map(([name, wire]) => [wire, name]));

// keepCase: field names as in the .proto file; enums by name; 64-bit integers as numbers (the
// arena's ids fit); defaults: every field present; oneofs: `message.kind` names the member set.
const definition = protoLoader.loadSync(PROTO, {
  keepCase: true, enums: String, longs: Number, defaults: true, oneofs: true,
});
const { Arena } = grpc.loadPackageDefinition(definition).knobel.v1;

// One Play stream. Resolves true when enough matches are played, false when the arena ended
// the stream (reconnect); rejects with the gRPC error when the call fails.
function play(client, args, played) {
  const metadata = new grpc.Metadata();
  metadata.add("authorization", `Bearer ${args.token}`);
  const call = client.Play(metadata);
  const left = args.matches ? Math.max(args.matches - played.count, 1) : 0;
  call.write({ hello: {
    name: args.name, games: args.games.map((g) => GAMES[g]), client_version: "knobel-js 0.1.0",
    preset: args.preset, max_matches: left,
  } });
  const starts = new Map();
  return new Promise((resolve, reject) => {
    let done = false;
    call.on("data", (message) => {
      switch (message.kind) {
        case "welcome":
          console.error(`welcomed as ${message.welcome.bot_name}`);
          break;
        case "waiting":
          console.error(`waiting: ${message.waiting.reason}`);
          break;
        case "match_start":
          starts.set(message.match_start.match_id, message.match_start);
          break;
        case "decision_request": {
          const request = message.decision_request;
          call.write({ decision: { request_id: request.request_id, action: decide(request) } });
          break;
        }
        case "error":
          console.error(`refused: ${message.error.code}: ${message.error.message}`);
          break;
        case "match_result": {
          const result = message.match_result;
          const start = starts.get(result.match_id);
          starts.delete(result.match_id);
          const game = start ? GAME_NAMES[start.game] : "unknown";
          const seats = start ? start.seats : (result.outcome ? result.outcome.placings.length : 0);
          process.stdout.write(`match ${result.match_id} ${game} place ${result.your_place}/${seats}\n`);
          played.count += 1;
          if (args.matches && played.count >= args.matches) {
            done = true;
            call.end();
            call.cancel();
            resolve(true);
          }
          break;
        }
        default: // events only, a pong, or a kind this bot does not know
      }
    });
    call.on("error", (error) => (done ? resolve(true) : reject(error)));
    call.on("end", () => resolve(done));
  });
}

function options() {
  const { values } = parseArgs({ options: {
    server: { type: "string", default: "127.0.0.1:50051" },
    token: { type: "string", default: process.env.KNOBEL_TOKEN },
    name: { type: "string", default: "knobel-js" },
    games: { type: "string", default: "schocken,sjokken,zokken" },
    preset: { type: "string" },
    matches: { type: "string", default: "0" },
  } });
  const games = values.games.split(",").map((g) => g.trim());
  const unknown = games.filter((g) => !(g in GAMES));
  if (!values.token) throw new Error("no token: pass --token or set KNOBEL_TOKEN (see `knobel bot add`)");
  if (unknown.length) throw new Error(`unknown games ${unknown}: games are ${Object.keys(GAMES)}`);
  const matches = Number(values.matches);
  if (!Number.isInteger(matches) || matches < 0) throw new Error(`--matches ${values.matches}: give a count, 0 for no limit`);
  const servers = values.server.split(",").map((s) => s.trim().replace(/^http:\/\//, ""));
  if (servers.some((s) => !s) || servers.length > 64) {
    throw new Error(`--server ${JSON.stringify(values.server.slice(0, 100))}: give 1 to 64 addresses HOST:PORT separated by single commas`);
  }
  return { ...values, games, matches, servers };
}

async function main() {
  let args;
  try {
    args = options();
  } catch (error) {
    console.error(`knobel_bot.js: ${error.message}`);
    return 2;
  }
  const played = { count: 0 };
  let delay = 100;
  for (let attempt = 0; ; attempt++) {
    const server = args.servers[attempt % args.servers.length]; // after a failure, the next replica
    const client = new Arena(server, grpc.credentials.createInsecure(), {
      "grpc.keepalive_time_ms": 20000,
    });
    try {
      if (await play(client, args, played)) return 0;
      delay = 100;
    } catch (error) {
      if (error.code === grpc.status.UNAUTHENTICATED || error.code === grpc.status.INVALID_ARGUMENT) {
        console.error(`the arena refused us: ${error.details}`);
        return 2;
      }
      console.error(`connection to ${server} failed: ${error.details || error.message}; retrying`);
    } finally {
      client.close();
    }
    await new Promise((wake) => setTimeout(wake, delay * (0.5 + Math.random() / 2))); // backoff with jitter
    delay = Math.min(delay * 2, 10000);
  }
}

main().then((code) => process.exit(code));
