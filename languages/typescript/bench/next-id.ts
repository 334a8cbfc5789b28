/**
 * nextId() beside @sapphire/snowflake and nodejs-snowflake in one run: ns per id (best of 5
 * rounds of 1,000,000), and the duplicates each gives in a burst of 200,000 ids.
 * Run: npm run bench   (BENCH_IDS / BENCH_ROUNDS change the sizes).
 */
import { Snowflake as Sapphire } from "@sapphire/snowflake";
import { Snowflake as NodejsSnowflake } from "nodejs-snowflake";
import { Generator, SnowidError } from "../src/index.js";

const N = Number(process.env["BENCH_IDS"] ?? 1_000_000);
const ROUNDS = Number(process.env["BENCH_ROUNDS"] ?? 5);
const BURST = 200_000;

interface Peer {
  name: string;
  make: () => () => bigint;
}

const EPOCH = 1_767_225_600_000;
const peers: Peer[] = [
  {
    name: "snowid Generator.nextId()",
    make: () => {
      const g = new Generator({ region: 0, host: 1 });
      // A used-up millisecond that the bounded spin did not see end (a busy machine) is a
      // retryable refusal: retried here as a caller would.
      return () => {
        for (;;) {
          try {
            return g.nextId();
          } catch (e) {
            if (!(e instanceof SnowidError) || !e.retryable) throw e;
          }
        }
      };
    },
  },
  {
    name: "@sapphire/snowflake 3.5.5 generate()",
    make: () => {
      const s = new Sapphire(EPOCH);
      return () => s.generate({ workerId: 1n, processId: 0n });
    },
  },
  {
    name: "nodejs-snowflake 2.0.1 getUniqueID()",
    make: () => {
      const s = new NodejsSnowflake({ custom_epoch: EPOCH, instance_id: 1 });
      return () => BigInt(s.getUniqueID() as bigint);
    },
  },
];

function time(next: () => bigint): number {
  let sink = 0n;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < N; i++) sink ^= next();
  const ns = Number(process.hrtime.bigint() - t0) / N;
  if (sink === -1n) console.log("");
  return ns;
}

// The cost of a call alone: bursts of 2,048 ids, each timed from the start of a fresh
// millisecond, so that no call waits for the clock (4,096 ids per ms caps a worker at 244 ns/id).
function inTick(next: () => bigint): number {
  let total = 0n;
  let sink = 0n;
  const bursts = Math.max(1, Math.floor(N / 2048 / 4));
  for (let b = 0; b < bursts; b++) {
    const ms = Date.now();
    while (Date.now() === ms);
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < 2048; i++) sink ^= next();
    total += process.hrtime.bigint() - t0;
  }
  if (sink === -1n) console.log("");
  return Number(total) / (bursts * 2048);
}

function duplicates(next: () => bigint): number {
  const ids = new Array<bigint>(BURST);
  for (let i = 0; i < BURST; i++) ids[i] = next();
  return BURST - new Set(ids).size;
}

const rows: string[][] = [];
for (const p of peers) {
  const next = p.make();
  time(next); // warm-up
  const runs: number[] = [];
  for (let r = 0; r < ROUNDS; r++) runs.push(time(next));
  runs.sort((a, b) => a - b);
  const tick = inTick(next);
  const dup = duplicates(p.make());
  rows.push([
    p.name,
    runs[0]!.toFixed(1),
    runs[Math.floor(runs.length / 2)]!.toFixed(1),
    tick.toFixed(1),
    String(dup),
  ]);
}
const head = ["generator", "best ns/id", "median ns/id", "ns/id within a tick", `duplicates in ${BURST}`];
const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
const line = (r: string[]) =>
  "| " + r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(" | ") + " |";
console.log(`node ${process.version}, ${N} ids x ${ROUNDS} rounds`);
console.log(line(head));
console.log(
  "|" + widths.map((w, i) => (i === 0 ? "-".repeat(w + 2) : "-".repeat(w + 1) + ":")).join("|") + "|",
);
for (const r of rows) console.log(line(r));
