/**
 * The bounds of the registry's settings and the wait a new holder starts with
 * (docs/protocol.md, sections 2, 4 and 5), checked before any request is sent.
 */
import { SnowidError } from "../errors.js";
import { later } from "./values.js";

function invalid(message: string): SnowidError {
  return new SnowidError("INVALID_ARGUMENT", message);
}

/** A namespace: the key prefix and the cluster name. */
export function checkNamespace(prefix: string, cluster: string): void {
  if (!prefix.startsWith("/") || prefix.endsWith("/") || prefix.includes("//")) {
    throw invalid(
      `etcd: the key prefix must start with '/', not end with one and not hold '//', not "${prefix}"`,
    );
  }
  if (!/^[A-Za-z0-9._-]{1,128}$/.test(cluster)) {
    throw invalid(`etcd: the cluster name is 1 to 128 letters, digits, '-', '_' or '.', not "${cluster}"`);
  }
}

export interface LeaseTiming {
  ttlMs: number;
  renewEveryMs: number;
  stopAfterMs: number;
  maxClockSkewMs: number;
}

export function checkLeaseTiming(t: LeaseTiming): void {
  if (!(Number.isInteger(t.ttlMs / 1000) && t.ttlMs >= 2000 && t.ttlMs <= 3_600_000)) {
    throw invalid(`the lease TTL is whole seconds from 2 s to 1 hour, not ${t.ttlMs} ms`);
  }
  if (!(t.renewEveryMs > 0 && t.renewEveryMs < t.stopAfterMs && t.stopAfterMs < t.ttlMs)) {
    throw invalid(
      `the lease timing must satisfy 0 < renew every (${t.renewEveryMs} ms) < stop after ` +
        `(${t.stopAfterMs} ms) < TTL (${t.ttlMs} ms)`,
    );
  }
  if (!(t.maxClockSkewMs >= 0 && t.maxClockSkewMs <= 60_000)) {
    throw invalid(`the largest clock skew is 0 to 60000 ms, not ${t.maxClockSkewMs}`);
  }
}

export function checkEtcdOptions(quarantineMs: number, requestTimeoutMs: number): void {
  if (!(quarantineMs >= 0 && quarantineMs <= 3_600_000)) {
    throw invalid(`the quarantine is 0 to 3600000 ms, not ${quarantineMs}`);
  }
  if (!(requestTimeoutMs >= 1 && requestTimeoutMs <= 60_000)) {
    throw invalid(`etcd: the request timeout is 1 ms to 1 minute, not ${requestTimeoutMs} ms`);
  }
}

/**
 * The instant before which a new holder issues nothing: the later of the id's previous mark
 * and the store-wide mark, plus the clock skew (at least 1 ms); undefined when neither exists.
 */
export function waitUntilMs(
  previousHighWaterMs: number | undefined,
  storeHighWaterMs: number | undefined,
  maxClockSkewMs: number,
): number | undefined {
  const mark = later(previousHighWaterMs, storeHighWaterMs);
  return mark === undefined ? undefined : mark + Math.max(maxClockSkewMs, 1);
}
