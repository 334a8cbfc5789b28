/**
 * The watch's bound (docs/protocol.md, section 10) on a fake gateway: a stream that showed no
 * loss is ended after the bound, the holder key read again and the watch moved to the next
 * member; a holder key that read finds deleted or replaced is a loss. The bound is shortened
 * here (the registry's watchRecheckMs); etcd.test.ts shows the real 5 s against a real cluster.
 * Registered by store-history.test.ts, one of the unit test files that ctest runs.
 */
import { test } from "node:test";
import * as assert from "node:assert/strict";
import { SNOWID } from "../src/index.js";
import type { Json } from "../src/etcd/gateway.js";
import { EtcdRegistry, WATCH_RECHECK_MS, type Grant } from "../src/etcd/registry.js";
import { FakeEtcd, type FakeHolder } from "./fake-etcd.js";

const BOUND_MS = 250;
const HOLDER: FakeHolder = { createRevision: 10n, lease: 0x1234n };
const GRANT: Grant = {
  region: 0,
  host: 3,
  lease: 0x1234n,
  createRevision: 10n,
  previousHighWaterMs: undefined,
};

/** One watch stream as the registry's gateway saw it. */
interface StreamCall {
  member: number;
  startRevision: bigint;
  tookMs: number;
  how: "stopped" | "ended" | "aborted";
}

/** A registry on the fake members, and the log of the streams it opens. */
function registryOn(fake: FakeEtcd, watchRecheckMs = BOUND_MS): [EtcdRegistry, StreamCall[]] {
  const registry = new EtcdRegistry({
    endpoints: fake.urls,
    prefix: "/snowid",
    cluster: "unit",
    layout: SNOWID,
    quarantineMs: 0,
    requestTimeoutMs: 1000,
    nowMs: () => Date.now(),
    watchRecheckMs,
  });
  const calls: StreamCall[] = [];
  const inner = registry.gateway.stream.bind(registry.gateway);
  registry.gateway.stream = async (member, path, body, onMessage, signal) => {
    const started = performance.now();
    const how = await inner(member, path, body, onMessage, signal);
    const startRevision = BigInt(String((body["create_request"] as Json)["start_revision"]));
    calls.push({ member, startRevision, tookMs: performance.now() - started, how });
    return how;
  };
  return [registry, calls];
}

/** What waitLost resolves with when aborted after `ms`. */
async function watchFor(registry: EtcdRegistry, ms: number): Promise<boolean> {
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(), ms);
  try {
    return await registry.waitLost(GRANT, stop.signal);
  } finally {
    clearTimeout(timer);
  }
}

test("the watch's bound is the protocol's 5 s", () => {
  assert.equal(WATCH_RECHECK_MS, 5000);
});

for (const chatty of [false, true]) {
  test(`a stream is ended after the bound, the holder key read, and the watch moved to the next member (${chatty ? "progress messages" : "quiet"})`, async () => {
    const fake = await FakeEtcd.start(2, HOLDER);
    fake.chatty = chatty; // the bound is on the whole stream, messages or none
    const [registry, calls] = registryOn(fake);
    try {
      assert.equal(await watchFor(registry, 6 * BOUND_MS), false, "the holder key is still ours");
      // Every stream but the one the test aborted ran out the bound, then the key was read.
      const bounded = calls.slice(0, -1);
      assert.ok(bounded.length >= 2, `${calls.length} streams`);
      for (const c of bounded) {
        assert.equal(c.how, "aborted");
        // The bound's timer starts before the stream is opened, so a loaded machine sees a
        // stream a few ms shorter than the bound; one that ended on its own is far shorter.
        assert.ok(c.tookMs >= BOUND_MS / 2, `a stream ran ${c.tookMs.toFixed(0)} ms`);
      }
      assert.equal(fake.reads.length, bounded.length);
      assert.deepEqual(
        calls.map((c) => c.member),
        calls.map((_, i) => i % 2),
        "each on the next member",
      );
      assert.deepEqual(
        calls.map((c) => c.startRevision),
        calls.map((_, i) => (i === 0 ? GRANT.createRevision + 1n : fake.revision + 1n)),
        "from the read's revision",
      );
    } finally {
      await fake.close();
    }
  });
}

for (const [what, holder] of [
  ["deleted", undefined],
  ["replaced (another create revision)", { createRevision: 15n, lease: 0x99n }],
] as const) {
  test(`a holder key found ${what} by the read after the bound is a loss, though no event came`, async () => {
    const fake = await FakeEtcd.start(2, holder);
    const [registry, calls] = registryOn(fake);
    try {
      assert.equal(await watchFor(registry, 40 * BOUND_MS), true);
      assert.equal(calls.length, 1);
      assert.equal(calls[0]!.how, "aborted");
      assert.ok(calls[0]!.tookMs >= BOUND_MS / 2, `the stream ran ${calls[0]!.tookMs.toFixed(0)} ms`);
      assert.equal(fake.reads.length, 1);
    } finally {
      await fake.close();
    }
  });
}

test("aborting ends a quiet watch at once, without a read", async () => {
  const fake = await FakeEtcd.start(2, HOLDER);
  const [registry, calls] = registryOn(fake, WATCH_RECHECK_MS);
  try {
    assert.equal(await watchFor(registry, 100), false);
    assert.equal(calls.length, 1);
    assert.ok(calls[0]!.tookMs < WATCH_RECHECK_MS, "before the bound");
    assert.equal(fake.reads.length, 0);
  } finally {
    await fake.close();
  }
});
