/**
 * A holder in a process of its own, for the signal tests: leases a worker id, prints
 * {"host":H} then one line per batch of ids it issued, and {"refused":CODE} for refusals.
 */
import { LeasedGenerator, SnowidError } from "../src/index.js";

const gen = await LeasedGenerator.create({
  etcd: { endpoints: [process.env["ETCD_URL"]!], cluster: process.env["ETCD_CLUSTER"]! },
  region: 0,
  host: Number(process.env["PIN_HOST"]),
  ttlSeconds: 2,
  renewEveryMs: 500,
  stopAfterMs: 1500,
  quarantineMs: 1000,
});
process.stdout.write(JSON.stringify({ host: gen.worker!.host }) + "\n");
setInterval(() => {
  const ids: string[] = [];
  try {
    for (let i = 0; i < 20; i++) ids.push(gen.nextId().toString());
  } catch (e) {
    if (!(e instanceof SnowidError)) throw e;
    process.stdout.write(JSON.stringify({ refused: e.code, ids }) + "\n");
    return;
  }
  process.stdout.write(JSON.stringify({ ids }) + "\n");
}, 5);
