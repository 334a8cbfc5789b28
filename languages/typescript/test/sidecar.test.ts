/**
 * Against a real snowidd, started by tests/clients/run_with_daemon.py, which passes
 * SNOWIDD_SOCKET, SNOWIDD_TCP_HOST/PORT and the pinned SNOWIDD_REGION/HOST.
 */
import { test } from "node:test";
import * as assert from "node:assert/strict";
import { SNOWID, Sidecar, SnowidError } from "../src/index.js";

function env(name: string): string {
  const v = process.env[name];
  if (v === undefined || v === "") {
    throw new Error(
      `${name} is not set: run this file through tests/clients/run_with_daemon.py --snowidd PATH`,
    );
  }
  return v;
}

const region = Number(env("SNOWIDD_REGION"));
const host = Number(env("SNOWIDD_HOST"));

for (const transport of ["unix", "tcp"] as const) {
  const connect = () =>
    transport === "unix"
      ? Sidecar.connect({ socket: env("SNOWIDD_SOCKET") })
      : Sidecar.connect({ host: env("SNOWIDD_TCP_HOST"), port: Number(env("SNOWIDD_TCP_PORT")) });

  test(`${transport}: NEXTID and NEXTIDS give increasing bigint ids of the daemon's worker`, async () => {
    await using sc = await connect();
    const one = await sc.nextId();
    assert.equal(typeof one, "bigint");
    const many = await sc.nextIds(1000);
    assert.equal(many.length, 1000);
    let last = one;
    for (const id of many) {
      assert.ok(id > last);
      last = id;
      const p = SNOWID.decode(id);
      assert.equal(p.region, region);
      assert.equal(p.host, host);
    }
    assert.ok(Math.abs(SNOWID.decode(last).unixMs - Date.now()) < 60_000);
  });

  test(`${transport}: 3,000 pipelined NEXTID replies are distinct and in order`, async () => {
    await using sc = await connect();
    const ids = await Promise.all(Array.from({ length: 3000 }, () => sc.nextId()));
    assert.equal(new Set(ids).size, 3000);
    for (let i = 1; i < ids.length; i++) assert.ok(ids[i]! > ids[i - 1]!);
  });

  test(`${transport}: DECODE agrees with the local codec`, async () => {
    await using sc = await connect();
    const id = await sc.nextId();
    const d = await sc.decode(id);
    const p = SNOWID.decode(id);
    assert.equal(d["id"], id);
    assert.equal(d["unix_ms"], p.unixMs);
    assert.equal(d["host"], host);
    assert.equal(d["region"], region);
    assert.equal(d["time"], p.time.toISOString());
  });

  test(`${transport}: error replies keep their codes and retry rule, and the connection survives`, async () => {
    await using sc = await connect();
    await assert.rejects(sc.decode("12x"), (e: SnowidError) => e.code === "INVALID_ARGUMENT" && !e.retryable);
    await assert.rejects(
      sc.decode("9223372036854775808"),
      (e: SnowidError) => e.code === "OUT_OF_RANGE" && !e.retryable,
    );
    await assert.rejects(
      sc.command("NEXTIDS", "100000000"),
      (e: SnowidError) => e.code === "INVALID_ARGUMENT",
    );
    await assert.rejects(sc.command("NOSUCHCOMMAND"), (e: SnowidError) => e.code === "INVALID_ARGUMENT");
    assert.equal(typeof (await sc.nextId()), "bigint");
  });
}

test("a daemon that is not there is UNAVAILABLE (retryable)", async () => {
  await assert.rejects(
    Sidecar.connect({ socket: `${env("SNOWIDD_SOCKET")}.absent` }),
    (e: SnowidError) => e.code === "UNAVAILABLE" && e.retryable,
  );
});
