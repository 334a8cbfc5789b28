// The harness's driver for the TypeScript library: one LeasedGenerator on etcd, speaking the
// driver protocol of README.md on stdin and stdout.
//
//   node typescript_driver.mjs PACKAGE_DIR
//
// PACKAGE_DIR is the built package (its dist/src/index.js). The generator runs on a Clock whose
// wall time is Date.now() plus the offset that `clock` sets; its monotonic time is the real one.
// Every timing member has a setting in the library. The library exposes no lease state and no
// count of re-acquisitions: `state` derives the state from `worker` and `ready`, and counts the
// library's "acquired" events.
import { createInterface } from "node:readline";
import * as path from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as delay } from "node:timers/promises";
import { pathToFileURL } from "node:url";

const packageDir = process.argv[2];
if (!packageDir) {
  process.stderr.write("usage: typescript_driver.mjs PACKAGE_DIR\n");
  process.exit(2);
}
const { LeasedGenerator, SnowidError } = await import(
  pathToFileURL(path.join(packageDir, "dist", "src", "index.js")).href
);

const MAX_COUNT = 100_000;
// Protocol timing member -> [LeasedGeneratorOptions member, or "etcd." one].
const TIMING = {
  ttl_ms: "ttlSeconds",
  renew_ms: "renewEveryMs",
  stop_ms: "stopAfterMs",
  max_clock_skew_ms: "maxClockSkewMs",
  quarantine_ms: "quarantineMs",
  request_timeout_ms: "etcd.requestTimeoutMs",
  retry_ms: "retryEveryMs",
  reacquire_ms: "reacquireEveryMs",
};

class BadRequest extends Error {}

/** A Clock of the library: the system's wall clock shifted by `offsetMs`. */
class OffsetClock {
  offsetMs = 0;
  nowMs() {
    return Date.now() + this.offsetMs;
  }
  monoMs() {
    return performance.now();
  }
  sleep(ms) {
    return delay(Math.max(0, ms));
  }
}

const refusal = (code, message, retryable) => ({ ok: false, code, retryable, message });
const bad = (message) => refusal("INVALID_ARGUMENT", message, false);

function errorReply(e) {
  if (e instanceof SnowidError) {
    // The library's message starts with its code, which the reply carries on its own.
    const prefix = `${e.code}: `;
    const message = e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message;
    return refusal(e.code, message, e.retryable);
  }
  throw e;
}

function integer(obj, name, fallback) {
  const v = obj[name] ?? fallback;
  if (!Number.isSafeInteger(v)) throw new BadRequest(`${name} must be an integer, not ${JSON.stringify(v)}`);
  return v;
}

function isObject(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** LeasedGenerator options from a start request, and the timing members ignored. */
function options(req, clock, onEvent) {
  const { endpoints, timing = {}, options: extra = {} } = req;
  if (!Array.isArray(endpoints) || !endpoints.every((e) => typeof e === "string")) {
    throw new BadRequest("endpoints must be an array of URLs");
  }
  if (!isObject(timing) || !isObject(extra)) throw new BadRequest("timing and options must be objects");
  if (Object.keys(extra).length > 0) {
    throw new BadRequest(`the TypeScript driver takes no options: ${Object.keys(extra)}`);
  }
  const etcd = { endpoints };
  if (req.prefix != null) etcd.prefix = req.prefix;
  if (req.cluster != null) etcd.cluster = req.cluster;
  const o = { etcd, clock, onEvent, region: integer(req, "region", 0) };
  if (req.host != null) o.host = integer(req, "host");
  const ignored = [];
  for (const [name, value] of Object.entries(timing)) {
    const member = TIMING[name];
    if (member === undefined) {
      ignored.push(name);
    } else if (value != null) {
      const ms = integer(timing, name);
      if (member === "ttlSeconds") {
        if (ms % 1000 !== 0) throw new BadRequest(`ttl_ms must be whole seconds for this library, not ${ms}`);
        o.ttlSeconds = ms / 1000;
      } else if (member.startsWith("etcd.")) {
        etcd[member.slice(5)] = ms;
      } else {
        o[member] = ms;
      }
    }
  }
  return { o, ignored: ignored.sort() };
}

class Driver {
  clock = new OffsetClock();
  gen = undefined;
  closed = false;
  acquisitions = 0;

  async handle(req) {
    switch (req.op) {
      case "start":
        return this.start(req);
      case "clock":
        this.clock.offsetMs = integer(req, "offset_ms");
        return { ok: true };
      case "next":
      case "state":
      case "close":
        if (this.gen === undefined) return refusal("FAILED_PRECONDITION", "not started", false);
        return this[req.op](req);
      default:
        return bad(`unknown op ${JSON.stringify(req.op)}`);
    }
  }

  async start(req) {
    if (this.gen !== undefined) return refusal("FAILED_PRECONDITION", "already started", false);
    const onEvent = (ev) => {
      if (ev.type === "acquired") this.acquisitions++;
      process.stderr.write(
        `event: ${ev.type} ${ev.region}/${ev.host}${ev.error ? ` (${ev.error.message})` : ""}\n`,
      );
    };
    const { o, ignored } = options(req, this.clock, onEvent);
    this.clock.offsetMs = integer(req, "clock_offset_ms", 0);
    try {
      this.gen = await LeasedGenerator.create(o);
    } catch (e) {
      return errorReply(e);
    }
    const w = this.gen.worker;
    const reply = { ok: true, worker: [w.region, w.host], pid: process.pid };
    if (ignored.length > 0) reply.ignored = ignored;
    return reply;
  }

  async next(req) {
    const count = integer(req, "count", 1);
    if (count < 1 || count > MAX_COUNT) return bad(`count must be 1 to ${MAX_COUNT}`);
    const ids = [];
    while (ids.length < count) {
      try {
        const { first, count: n } = this.gen.reserve(count - ids.length);
        for (let i = 0n; i < BigInt(n); i++) ids.push((first + i).toString());
      } catch (e) {
        if (!(e instanceof SnowidError) || !(e.code === "CLOCK_BEHIND" || e.code === "SEQUENCE_EXHAUSTED")) {
          return { ...errorReply(e), ids };
        }
        // The library's waiting call waits this out (within its maxWaitMs) or refuses.
        try {
          ids.push((await this.gen.nextIdAsync()).toString());
        } catch (e2) {
          return { ...errorReply(e2), ids };
        }
      }
    }
    return { ok: true, ids };
  }

  state() {
    const g = this.gen;
    const w = g.worker;
    let state = "UNCERTAIN";
    if (this.closed) state = "RELEASED";
    else if (w === undefined) state = "LOST";
    else if (g.ready) state = "HELD";
    return {
      ok: true,
      state,
      ready: g.ready,
      healthy: g.healthy,
      worker: w === undefined ? null : [w.region, w.host],
      reacquisitions: Math.max(0, this.acquisitions - 1),
      wall_ms: this.clock.nowMs(),
    };
  }

  async close() {
    this.closed = true;
    try {
      await this.gen.close();
    } catch (e) {
      return errorReply(e);
    }
    return { ok: true };
  }
}

const driver = new Driver();
const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
let closing = false;
for await (const line of lines) {
  let req;
  let reply;
  try {
    req = JSON.parse(line);
    if (!isObject(req)) throw new BadRequest("a request is a JSON object");
    reply = await driver.handle(req);
  } catch (e) {
    if (!(e instanceof BadRequest || e instanceof SyntaxError)) throw e;
    reply = bad(`bad request: ${e.message}`);
  }
  process.stdout.write(JSON.stringify(reply) + "\n");
  if (isObject(req) && req.op === "close") {
    closing = true;
    break;
  }
}
// The harness keeps stdin open after `close`: without this, the open pipe keeps Node running.
process.stdin.destroy();
if (!closing && driver.gen !== undefined && !driver.closed) {
  await driver.close();
}
