/** Against a real etcd started here (SNOWID_ETCD_BIN), and the C++ CLI (SNOWID_CLI_BIN). */
import { after, before, test } from "node:test";
import * as assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { LeasedGenerator, SNOWID, SnowidError, type Clock, type LeaseEvent } from "../src/index.js";
import { EtcdCluster, EtcdServer } from "./etcd-server.js";

const run = promisify(execFile);
let etcd: EtcdServer;
let clusters = 0;

before(async () => {
  etcd = await EtcdServer.start();
});
after(async () => {
  await etcd?.stop();
});

const FAST = { ttlSeconds: 2, renewEveryMs: 500, stopAfterMs: 1500, quarantineMs: 1000 } as const;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function namespace(): Promise<string> {
  const cluster = `ts-${process.pid}-${++clusters}`;
  await LeasedGenerator.initializeNamespace({ endpoints: [etcd.url], cluster });
  return cluster;
}

function cli(): string {
  const bin = process.env["SNOWID_CLI_BIN"];
  if (bin === undefined || bin === "")
    throw new Error("SNOWID_CLI_BIN is not set: point it at the snowid tool");
  return bin;
}

async function mark(cluster: string, host: number): Promise<Record<string, number>> {
  const kv = await etcd.get(`/snowid/${cluster}/workers/0/${host}/mark`);
  assert.ok(kv, "a mark exists");
  return JSON.parse(kv.value) as Record<string, number>;
}

test("acquire and renew: ids of the held worker; renewals raise the mark; the holder value names the lease", async () => {
  const cluster = await namespace();
  await using gen = await LeasedGenerator.create({ etcd: { endpoints: [etcd.url], cluster }, ...FAST });
  const w = gen.worker!;
  const first = await gen.nextIdAsync();
  assert.equal(SNOWID.decode(first).host, w.host);
  const holder = await etcd.get(`/snowid/${cluster}/workers/0/${w.host}/holder`);
  assert.ok(holder);
  const h = JSON.parse(holder.value) as Record<string, unknown>;
  assert.equal(h["lease"], holder.lease.toString(16));
  assert.equal(h["pid"], process.pid);
  const before = (await mark(cluster, w.host))["high_water_ms"]!;
  await sleep(1200);
  const later = (await mark(cluster, w.host))["high_water_ms"]!;
  assert.ok(later > before, `the mark moved from ${before} to ${later}`);
  await sleep(1500);
  assert.ok(gen.ready, "still issuing past stopAfter: renewals work");
  assert.ok(gen.nextId() > first);
});

test("close right after the lease is revoked succeeds, whether or not the loss was seen", async () => {
  const cluster = await namespace();
  for (let i = 0; i < 3; i++) {
    const gen = await LeasedGenerator.create({ etcd: { endpoints: [etcd.url], cluster }, ...FAST });
    const w = gen.worker!;
    gen.nextId();
    const holder = await etcd.get(`/snowid/${cluster}/workers/0/${w.host}/holder`);
    assert.ok(holder);
    // Behind the holder's back, then closed at once: the watch has usually not
    // reported the loss yet. There is nothing to give back, which is not an error.
    await etcd.call("/v3/lease/revoke", { ID: holder.lease.toString() });
    await gen.close();
    assert.throws(
      () => gen.nextId(),
      (e: SnowidError) => e.code === "FAILED_PRECONDITION",
    );
  }
});

test("a fence through the C++ CLI is seen through the watch; a fresh id follows and ids keep increasing", async () => {
  const cluster = await namespace();
  const events: LeaseEvent[] = [];
  await using gen = await LeasedGenerator.create({
    etcd: { endpoints: [etcd.url], cluster },
    ...FAST,
    onEvent: (e) => events.push(e),
  });
  const w = gen.worker!;
  const last = gen.nextId();
  const t0 = performance.now();
  await run(cli(), ["workers", "fence", "0", String(w.host), "--etcd", etcd.url, "--etcd-cluster", cluster]);
  while (!events.some((e) => e.type === "lost") && performance.now() - t0 < 3000) await sleep(2);
  const seenMs = performance.now() - t0;
  assert.ok(
    events.some((e) => e.type === "lost" && e.host === w.host),
    "the loss was reported",
  );
  console.log(`[ measured ] fence to loss seen: ${seenMs.toFixed(1)} ms (CLI run included)`);
  assert.throws(
    () => gen.nextId(),
    (e: SnowidError) => e.code === "LEASE_UNCERTAIN" || e.code === "LEASE_LOST",
  );
  while (gen.worker === undefined && performance.now() - t0 < 10_000) await sleep(10);
  assert.ok(gen.worker !== undefined && gen.worker.host !== w.host, "a fresh id, not the fenced one");
  const next = await gen.nextIdAsync();
  assert.ok(next > last, "ids keep increasing across the change of worker id");
});

test("a clean release needs no quarantine: the C++ CLI lists it and another holder of that host starts above it", async () => {
  const cluster = await namespace();
  const a = await LeasedGenerator.create({ etcd: { endpoints: [etcd.url], cluster }, ...FAST, host: 9 });
  let last = 0n;
  for (let i = 0; i < 100; i++) last = a.nextId();
  await a.close();
  const m = await mark(cluster, 9);
  assert.equal(m["clean_release_ms"], m["high_water_ms"]);
  assert.equal(m["high_water_ms"], SNOWID.decode(last).unixMs);
  const { stdout } = await run(cli(), [
    "workers",
    "list",
    "--json",
    "--etcd",
    etcd.url,
    "--etcd-cluster",
    cluster,
  ]);
  assert.match(stdout, /"host":\s*9/);
  await using b = await LeasedGenerator.create({
    etcd: { endpoints: [etcd.url], cluster },
    ...FAST,
    host: 9,
  });
  const first = await b.nextIdAsync();
  assert.ok(SNOWID.decode(first).unixMs >= SNOWID.decode(last).unixMs + 100, "past the mark plus the skew");
});

test("a pinned host still held by another holder is RESOURCE_EXHAUSTED (not retryable)", async () => {
  const cluster = await namespace();
  await using a = await LeasedGenerator.create({
    etcd: { endpoints: [etcd.url], cluster },
    ...FAST,
    host: 3,
  });
  await assert.rejects(
    LeasedGenerator.create({ etcd: { endpoints: [etcd.url], cluster }, ...FAST, host: 3 }),
    (e: SnowidError) => e.code === "RESOURCE_EXHAUSTED" && !e.retryable,
  );
  assert.ok(a.nextId() > 0n);
});

test("a clock step back beyond maxBackwardMs: CLOCK_MOVED_BACK, then UNHEALTHY and healthy false; the id is given back", async () => {
  const cluster = await namespace();
  let offsetMs = 0;
  const clock: Clock = {
    nowMs: () => Date.now() + offsetMs,
    monoMs: () => performance.now(),
    sleep: async (ms) => {
      await sleep(ms);
    },
  };
  const gen = await LeasedGenerator.create({
    etcd: { endpoints: [etcd.url], cluster },
    ...FAST,
    clock,
    host: 6,
  });
  const before = await gen.nextIdAsync();
  assert.ok(gen.healthy);
  offsetMs = -500;
  assert.throws(
    () => gen.nextId(),
    (e: SnowidError) => e.code === "CLOCK_MOVED_BACK" && !e.retryable,
  );
  assert.throws(
    () => gen.nextId(),
    (e: SnowidError) => e.code === "UNHEALTHY" && !e.retryable,
  );
  assert.equal(gen.healthy, false);
  const t0 = Date.now();
  while ((await etcd.get(`/snowid/${cluster}/workers/0/6/holder`)) !== undefined) {
    assert.ok(Date.now() - t0 < 5000, "the holder key is deleted");
    await sleep(20);
  }
  const m = await mark(cluster, 6);
  assert.ok(m["released_at_ms"] !== undefined, "the release is recorded");
  assert.ok(m["high_water_ms"]! >= SNOWID.decode(before).unixMs, "the mark covers the last id");
  await gen.close();
  assert.equal(gen.healthy, false);
});

interface Child {
  proc: ReturnType<typeof spawn>;
  lines: Record<string, unknown>[];
}

async function startChild(cluster: string, host: number): Promise<Child> {
  const script = path.join(path.dirname(fileURLToPath(import.meta.url)), "holder-child.js");
  const proc = spawn(process.execPath, [script], {
    env: { ...process.env, ETCD_URL: etcd.url, ETCD_CLUSTER: cluster, PIN_HOST: String(host) },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const lines: Record<string, unknown>[] = [];
  createInterface({ input: proc.stdout! }).on("line", (l) =>
    lines.push(JSON.parse(l) as Record<string, unknown>),
  );
  const t0 = Date.now();
  while (!lines.some((l) => "host" in l)) {
    assert.ok(Date.now() - t0 < 10_000 && proc.exitCode === null, "the child holder started");
    await sleep(10);
  }
  return { proc, lines };
}

const idsOf = (lines: Record<string, unknown>[]) =>
  lines.flatMap((l) => ((l["ids"] as string[] | undefined) ?? []).map(BigInt));

test("SIGSTOP past the deadline: the stopped holder refuses on resume, and no id repeats with its successor", async () => {
  const cluster = await namespace();
  const child = await startChild(cluster, 5);
  await sleep(300);
  child.proc.kill("SIGSTOP");
  const stoppedAt = child.lines.length;
  // The lease expires after the TTL; the id rests out the quarantine from the mark.
  let successor: LeasedGenerator | undefined;
  const t0 = Date.now();
  while (successor === undefined) {
    try {
      successor = await LeasedGenerator.create({
        etcd: { endpoints: [etcd.url], cluster },
        ...FAST,
        host: 5,
      });
    } catch (e) {
      assert.ok(e instanceof SnowidError && e.code === "RESOURCE_EXHAUSTED", String(e));
      assert.ok(Date.now() - t0 < 15_000, "the successor got the id");
      await sleep(100);
    }
  }
  const waited = Date.now() - t0;
  const mine: bigint[] = [];
  for (let i = 0; i < 50; i++) mine.push(await successor.nextIdAsync());
  child.proc.kill("SIGCONT");
  await sleep(400);
  for (let i = 0; i < 50; i++) mine.push(await successor.nextIdAsync());
  child.proc.kill("SIGKILL");
  await once(child.proc, "exit");
  await successor.close();
  const after = child.lines.slice(stoppedAt);
  assert.ok(
    after.some((l) => typeof l["refused"] === "string"),
    "the resumed holder refused",
  );
  const theirs = new Set(idsOf(child.lines));
  for (const id of mine) assert.ok(!theirs.has(id), `id ${id} issued twice`);
  const maxTheirs = [...theirs].reduce((a, b) => (a > b ? a : b), 0n);
  assert.ok(mine[0]! > maxTheirs, "the successor issues above every id of the stopped holder");
  console.log(`[ measured ] successor of a stopped holder acquired after ${waited} ms`);
});

test("SIGKILL: the successor waits out the TTL and quarantine and issues above the mark", async () => {
  const cluster = await namespace();
  const child = await startChild(cluster, 6);
  await sleep(300);
  child.proc.kill("SIGKILL");
  await once(child.proc, "exit");
  const killedAt = Date.now();
  const theirs = idsOf(child.lines);
  const m = await mark(cluster, 6);
  await assert.rejects(
    LeasedGenerator.create({ etcd: { endpoints: [etcd.url], cluster }, ...FAST, host: 6 }),
    (e: SnowidError) => e.code === "RESOURCE_EXHAUSTED",
  );
  let successor: LeasedGenerator | undefined;
  while (successor === undefined) {
    try {
      successor = await LeasedGenerator.create({
        etcd: { endpoints: [etcd.url], cluster },
        ...FAST,
        host: 6,
      });
    } catch (e) {
      assert.ok(e instanceof SnowidError && e.code === "RESOURCE_EXHAUSTED", String(e));
      assert.ok(Date.now() - killedAt < 15_000);
      await sleep(100);
    }
  }
  const waited = Date.now() - killedAt;
  assert.ok(Date.now() >= m["high_water_ms"]! + 1000, "not before the mark plus the quarantine");
  const first = await successor.nextIdAsync();
  await successor.close();
  assert.ok(SNOWID.decode(first).unixMs >= m["high_water_ms"]! + 100, "above the mark plus the skew");
  assert.ok(theirs.every((id) => id < first));
  console.log(`[ measured ] successor of a killed holder acquired after ${waited} ms`);
});

test("a LeasedGenerator left open does not keep the process alive", async () => {
  const cluster = await namespace();
  const code = `import { LeasedGenerator } from ${JSON.stringify(path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../src/index.js"))};
const g = await LeasedGenerator.create({ etcd: { endpoints: [${JSON.stringify(etcd.url)}], cluster: ${JSON.stringify(cluster)} }, ttlSeconds: 2, renewEveryMs: 500, stopAfterMs: 1500 });
g.nextId(); console.log("issued");`;
  const t0 = Date.now();
  const { stdout } = await run(process.execPath, ["--input-type=module", "-e", code], { timeout: 10_000 });
  assert.match(stdout, /issued/);
  assert.ok(Date.now() - t0 < 5000);
});

/** `snowid workers fence` through these members; again when it timed out on a loaded machine. */
async function fenceThrough(urls: string[], cluster: string, host: number): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await run(cli(), [
        "workers",
        "fence",
        "0",
        String(host),
        "--etcd",
        urls.join(","),
        "--etcd-cluster",
        cluster,
      ]);
      return;
    } catch (e) {
      const stderr = String((e as { stderr?: unknown }).stderr ?? e);
      // An earlier attempt that revoked the lease leaves the id not held.
      if (attempt > 0 && stderr.includes("is not held")) return;
      if (attempt >= 2 || !stderr.includes("UNAVAILABLE")) throw e;
    }
  }
}

test("a fence through another member is seen though the member under the watch is stopped (SIGSTOP)", async () => {
  // docs/protocol.md section 10: the watch ends after 5 s without a loss and reads the holder key,
  // failing over from the stopped member. Renewals are 20 s apart, so only the watch can see it.
  const members = await EtcdCluster.start();
  try {
    const stale = await members.follower();
    const others = members.urls.filter((_, i) => i !== stale);
    const endpoints = [members.urls[stale]!, ...others];
    const cluster = `ts-stale-member-${process.pid}`;
    await LeasedGenerator.initializeNamespace({ endpoints, cluster });
    const events: LeaseEvent[] = [];
    const requestTimeoutMs = 2000;
    const gen = await LeasedGenerator.create({
      etcd: { endpoints, cluster, requestTimeoutMs },
      ttlSeconds: 60,
      renewEveryMs: 20_000,
      stopAfterMs: 40_000,
      quarantineMs: 1000,
      onEvent: (e) => events.push(e),
    });
    try {
      const w = gen.worker!;
      const t0 = performance.now();
      while ((await members.watchers(stale)) < 1) {
        assert.ok(performance.now() - t0 < 5000, "the watch reached the member to stop");
        await sleep(10);
      }
      const watching = performance.now();
      members.pause(stale);
      try {
        await fenceThrough(others, cluster, w.host);
        const fenced = performance.now();
        // The protocol's 5 s bound, then a read that first waits out the stopped member (and some
        // slack for a loaded machine).
        const limitMs = 5000 + requestTimeoutMs + 2000;
        while (!events.some((e) => e.type === "lost") && performance.now() - fenced < limitMs) await sleep(5);
        const seen = performance.now();
        const lost = events.find((e) => e.type === "lost");
        assert.ok(lost !== undefined && lost.host === w.host, "the fence was seen");
        assert.match(
          lost.error.message,
          /lease on worker \d+\/\d+ was revoked or expired$/,
          `by the watch: ${lost.error.message}`,
        );
        console.log(
          `[ measured ] fence through another member seen ${((seen - fenced) / 1000).toFixed(2)} s after it ` +
            `completed, ${((seen - watching) / 1000).toFixed(2)} s after the watch reached the member, stopped since`,
        );
      } finally {
        members.resume(stale);
      }
    } catch (e) {
      // The first failure is the one to report (a holder that missed the fence fails to release).
      await gen.close().catch(() => undefined);
      throw e;
    }
    await gen.close();
  } finally {
    await members.stop();
  }
});
