/**
 * A generator on a worker id leased from etcd (docs/leases.md): acquire, renew every
 * `renewEveryMs` (at once when the wall clock has used up the mark), stop issuing
 * `stopAfterMs` after the send time of the last renewal that succeeded, call the lease lost
 * `ttl` after it or when the watch sees the holder key go, then take a fresh id whose ids
 * continue above the last one this process issued. Every timer and the watch's socket are
 * unref'd: an open LeasedGenerator does not keep the process alive. close() releases cleanly.
 */
import * as os from "node:os";
import { systemClock, type Clock } from "./clock.js";
import { SnowidError } from "./errors.js";
import { EtcdRegistry, type Grant } from "./etcd/registry.js";
import { checkEtcdOptions, checkLeaseTiming, checkNamespace, waitUntilMs } from "./etcd/settings.js";
import { Generator, type GeneratorOptions, type IdBatch } from "./generator.js";
import type { Layout } from "./layout.js";
import { LeaseGuard } from "./lease-guard.js";
import { SNOWID } from "./presets.js";

export interface EtcdOptions {
  endpoints: readonly string[];
  /** Starts with "/" and does not end with one. Default "/snowid". */
  prefix?: string;
  /** [A-Za-z0-9._-]{1,128}. Default "default". */
  cluster?: string;
  /** 1 ms to 1 minute; default 2000. */
  requestTimeoutMs?: number;
}

export interface LeasedGeneratorOptions {
  etcd: EtcdOptions;
  region?: number;
  /** Pin one host id instead of any free one. */
  host?: number;
  layout?: Layout;
  clock?: Clock;
  fenceFile?: string;
  /** Whole seconds, 2 to 3600; default 10. */
  ttlSeconds?: number;
  renewEveryMs?: number;
  stopAfterMs?: number;
  /** 0 to 60000; default 100. */
  maxClockSkewMs?: number;
  /** 0 to 3600000; default 10000. */
  quarantineMs?: number;
  /** Between failed renewals; more than 0 and at most renewEveryMs. Default 500. */
  retryEveryMs?: number;
  /** First pause between failed re-acquisitions, doubling up to 30 s. Default 1000. */
  reacquireEveryMs?: number;
  /** Generator policies other than the worker, clock, lease and fence. */
  generator?: Pick<
    GeneratorOptions,
    "maxBackwardMs" | "randomStartBound" | "maxBorrowMs" | "maxWaitMs" | "maxSpinMs"
  >;
  /** Told about lost and acquired worker ids. */
  onEvent?: (event: LeaseEvent) => void;
}

export type LeaseEvent =
  | { type: "acquired"; region: number; host: number }
  | { type: "lost"; region: number; host: number; error: SnowidError };

const TICK_MS = 100;
const MAX_REACQUIRE_MS = 30_000;

function invalid(message: string): SnowidError {
  return new SnowidError("INVALID_ARGUMENT", message);
}

interface Keeper {
  grant: Grant;
  guard: LeaseGuard;
  generator: Generator;
  lastOkSend: number;
  nextDue: number;
  lastAttemptFailed: boolean;
  inFlight: boolean;
  watch: AbortController;
  done: boolean;
}

export class LeasedGenerator {
  private keeper: Keeper | undefined;
  private readonly timer: NodeJS.Timeout;
  private closed = false;
  private reacquiring = false;
  private lastIssuedMs: number | undefined;
  private unhealthy: SnowidError | undefined;

  private constructor(
    private readonly registry: EtcdRegistry,
    private readonly o: Required<
      Omit<LeasedGeneratorOptions, "host" | "fenceFile" | "onEvent" | "generator">
    > &
      Pick<LeasedGeneratorOptions, "host" | "fenceFile" | "onEvent" | "generator">,
  ) {
    this.timer = setInterval(() => this.tick(), TICK_MS);
    this.timer.unref();
  }

  /** Validates the options, acquires a worker id and returns a generator on it. */
  static async create(options: LeasedGeneratorOptions): Promise<LeasedGenerator> {
    const o = {
      region: 0,
      layout: SNOWID,
      clock: systemClock,
      ttlSeconds: 10,
      renewEveryMs: 3000,
      stopAfterMs: 8000,
      maxClockSkewMs: 100,
      quarantineMs: 10_000,
      retryEveryMs: 500,
      reacquireEveryMs: 1000,
      ...options,
    };
    const e = o.etcd;
    if (e.endpoints.length === 0) throw invalid("etcd: at least one endpoint is needed");
    for (const url of e.endpoints) {
      if (!/^https?:\/\/[^/\s]+$/.test(url))
        throw invalid(`etcd: an endpoint is http(s)://host:port, not "${url}"`);
    }
    const prefix = e.prefix ?? "/snowid";
    const cluster = e.cluster ?? "default";
    checkNamespace(prefix, cluster);
    const timeout = e.requestTimeoutMs ?? 2000;
    checkEtcdOptions(o.quarantineMs, timeout);
    if (!Number.isInteger(o.ttlSeconds)) throw invalid("ttlSeconds must be whole seconds from 2 to 3600");
    checkLeaseTiming({
      ttlMs: o.ttlSeconds * 1000,
      renewEveryMs: o.renewEveryMs,
      stopAfterMs: o.stopAfterMs,
      maxClockSkewMs: o.maxClockSkewMs,
    });
    if (!(o.retryEveryMs > 0 && o.retryEveryMs <= o.renewEveryMs)) {
      throw invalid("retryEveryMs must be more than 0 and at most renewEveryMs");
    }
    if (!(o.reacquireEveryMs > 0)) throw invalid("reacquireEveryMs must be more than 0");
    const registry = new EtcdRegistry({
      endpoints: e.endpoints,
      prefix,
      cluster,
      layout: o.layout,
      quarantineMs: o.quarantineMs,
      requestTimeoutMs: timeout,
      nowMs: () => o.clock.nowMs(),
    });
    const g = new LeasedGenerator(registry, o);
    try {
      g.keeper = await g.acquire();
    } catch (err) {
      clearInterval(g.timer);
      throw err;
    }
    return g;
  }

  /** See EtcdRegistry.initializeNamespace: declares a namespace that has never issued an id new. */
  static async initializeNamespace(etcd: EtcdOptions): Promise<void> {
    const registry = new EtcdRegistry({
      endpoints: etcd.endpoints,
      prefix: etcd.prefix ?? "/snowid",
      cluster: etcd.cluster ?? "default",
      layout: SNOWID,
      quarantineMs: 0,
      requestTimeoutMs: etcd.requestTimeoutMs ?? 2000,
      nowMs: () => Date.now(),
    });
    await registry.initializeNamespace();
  }

  /** As create(), configured by the tool's variables (SNOWID_ETCD_ENDPOINTS, SNOWID_REGION, ...). */
  static fromEnv(
    overrides: Partial<LeasedGeneratorOptions> = {},
    env = process.env,
  ): Promise<LeasedGenerator> {
    const endpoints = env["SNOWID_ETCD_ENDPOINTS"] ?? env["SNOWID_ETCD"];
    if (endpoints !== undefined && endpoints.trim() === "")
      throw invalid("SNOWID_ETCD_ENDPOINTS is set but empty");
    const num = (name: string): number | undefined => {
      const v = env[name];
      if (v === undefined) return undefined;
      if (!/^(0|[1-9][0-9]{0,9})$/.test(v)) throw invalid(`${name} must be a whole number, not "${v}"`);
      return Number(v);
    };
    const region = num("SNOWID_REGION");
    const host = num("SNOWID_HOST");
    const etcd: EtcdOptions = {
      endpoints: (endpoints ?? "").split(",").filter((s) => s !== ""),
      ...(env["SNOWID_ETCD_PREFIX"] !== undefined ? { prefix: env["SNOWID_ETCD_PREFIX"] } : {}),
      ...(env["SNOWID_ETCD_CLUSTER"] !== undefined ? { cluster: env["SNOWID_ETCD_CLUSTER"] } : {}),
    };
    return LeasedGenerator.create({
      etcd,
      ...(region !== undefined ? { region } : {}),
      ...(host !== undefined ? { host } : {}),
      ...overrides,
    });
  }

  /** The worker id held now, or undefined while a lost one is being replaced. */
  get worker(): { region: number; host: number } | undefined {
    const k = this.keeper;
    return k === undefined || k.done ? undefined : { region: k.grant.region, host: k.grant.host };
  }

  /** True while a worker id is held and its lease confirmed in time. */
  get ready(): boolean {
    const k = this.keeper;
    return k !== undefined && !k.done && this.o.clock.monoMs() < k.guard.deadline;
  }

  /** False for good once the clock moved back beyond maxBackwardMs (the worker id is given back). */
  get healthy(): boolean {
    return this.unhealthy === undefined;
  }

  nextId(): bigint {
    return this.current().nextId();
  }

  async nextIdAsync(): Promise<bigint> {
    return this.current().nextIdAsync();
  }

  reserve(n: number): IdBatch {
    return this.current().reserve(n);
  }

  /**
   * Stops issuing, records the fence, and releases the worker id with the exact last instant
   * issued, so that its next holder need not wait out the quarantine.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    const k = this.keeper;
    if (k === undefined || k.done) return;
    this.stop(k);
    k.generator.close();
    try {
      await this.registry.release(k.grant, k.generator.lastIssuedMs);
    } catch (e) {
      // Fenced or expired before the release, noticed or not: the guard stopped
      // issuing by the deadline and the quarantine covers the rest.
      if (!(e instanceof SnowidError && e.code === "LEASE_LOST")) throw e;
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  // --- internals ---------------------------------------------------------------------------

  private current(): Generator {
    if (this.closed) throw new SnowidError("FAILED_PRECONDITION", "the leased generator is closed");
    if (this.unhealthy !== undefined) throw new SnowidError("UNHEALTHY", this.unhealthy.message);
    const k = this.keeper;
    if (k === undefined || k.done) {
      throw new SnowidError(
        "LEASE_UNCERTAIN",
        "the worker-id lease was lost; a fresh id is being acquired",
        10,
      );
    }
    return k.generator;
  }

  private async acquire(): Promise<Keeper> {
    const c = this.o.clock;
    const send = c.monoMs();
    const highWaterMs = c.nowMs() + this.o.stopAfterMs;
    const grant = await this.registry.acquire({
      region: this.o.region,
      ...(this.o.host !== undefined ? { host: this.o.host } : {}),
      ttlSeconds: this.o.ttlSeconds,
      stopAfterMs: this.o.stopAfterMs,
      highWaterMs,
      holder: {
        host: os.hostname(),
        pid: BigInt(process.pid),
        startedMs: Date.now() - process.uptime() * 1000,
        address: "",
      },
    });
    const guard = new LeaseGuard();
    guard.extend(send + this.o.stopAfterMs, highWaterMs);
    const waitUntil = waitUntilMs(grant.previousHighWaterMs, undefined, this.o.maxClockSkewMs);
    const options: GeneratorOptions = {
      ...this.o.generator,
      layout: this.o.layout,
      region: grant.region,
      host: grant.host,
      clock: c,
      lease: guard,
      onUnhealthy: (e) => this.onUnhealthy(e),
      ...(this.o.fenceFile !== undefined ? { fenceFile: this.o.fenceFile } : {}),
      ...(waitUntil !== undefined ? { waitUntilMs: waitUntil } : {}),
      ...(this.lastIssuedMs !== undefined ? { continueAfterMs: this.lastIssuedMs } : {}),
    };
    let generator: Generator;
    try {
      generator = new Generator(options);
    } catch (e) {
      await this.registry.abandon(grant);
      throw e;
    }
    const k: Keeper = {
      grant,
      guard,
      generator,
      lastOkSend: send,
      nextDue: send + this.o.renewEveryMs,
      lastAttemptFailed: false,
      inFlight: false,
      watch: new AbortController(),
      done: false,
    };
    void this.watch(k);
    this.o.onEvent?.({ type: "acquired", region: grant.region, host: grant.host });
    return k;
  }

  private async watch(k: Keeper): Promise<void> {
    while (!k.done) {
      try {
        if (await this.registry.waitLost(k.grant, k.watch.signal)) {
          this.lose(
            k,
            new SnowidError(
              "LEASE_LOST",
              `lease on worker ${k.grant.region}/${k.grant.host} was revoked or expired`,
            ),
          );
        }
        return;
      } catch {
        await this.o.clock.sleep(this.o.retryEveryMs);
      }
    }
  }

  private tick(): void {
    const k = this.keeper;
    if (k === undefined || k.done || this.closed) return;
    const now = this.o.clock.monoMs();
    if (now >= k.lastOkSend + this.o.ttlSeconds * 1000) {
      this.lose(
        k,
        new SnowidError(
          "LEASE_LOST",
          `lease on worker ${k.grant.region}/${k.grant.host} expired: no renewal succeeded in time`,
        ),
      );
      return;
    }
    const markRunningOut =
      !k.lastAttemptFailed &&
      this.o.clock.nowMs() > k.guard.highWaterMs - (this.o.stopAfterMs - this.o.renewEveryMs);
    if (k.inFlight || (now < k.nextDue && !markRunningOut)) return;
    void this.renew(k);
  }

  private async renew(k: Keeper): Promise<void> {
    const c = this.o.clock;
    k.inFlight = true;
    const send = c.monoMs();
    const highWaterMs = c.nowMs() + this.o.stopAfterMs;
    try {
      await this.registry.renew(k.grant, highWaterMs, k.lastOkSend + this.o.ttlSeconds * 1000 - send);
      if (k.done) return;
      // The deadline counts from the send time: etcd may have taken the renewal any time after it.
      k.guard.extend(send + this.o.stopAfterMs, highWaterMs);
      k.lastOkSend = Math.max(k.lastOkSend, send);
      k.lastAttemptFailed = false;
      k.nextDue = send + this.o.renewEveryMs;
    } catch (e) {
      k.lastAttemptFailed = true;
      k.nextDue = send + this.o.retryEveryMs;
      if (e instanceof SnowidError && e.code === "LEASE_LOST") this.lose(k, e);
    } finally {
      k.inFlight = false;
    }
  }

  private stop(k: Keeper): void {
    k.done = true;
    k.guard.markLost();
    k.watch.abort();
  }

  private lose(k: Keeper, error: SnowidError): void {
    if (k.done) return;
    this.stop(k);
    this.lastIssuedMs = Math.max(this.lastIssuedMs ?? -Infinity, k.generator.lastIssuedMs);
    void this.registry.abandon(k.grant);
    this.o.onEvent?.({ type: "lost", region: k.grant.region, host: k.grant.host, error });
    if (!this.closed && this.unhealthy === undefined) void this.reacquire();
  }

  private async reacquire(): Promise<void> {
    if (this.reacquiring) return;
    this.reacquiring = true;
    let pause = this.o.reacquireEveryMs;
    try {
      while (!this.closed && this.unhealthy === undefined) {
        try {
          const k = await this.acquire();
          if (this.closed) {
            this.stop(k);
            await this.registry.release(k.grant, k.generator.lastIssuedMs).catch(() => undefined);
            return;
          }
          this.keeper = k;
          return;
        } catch {
          await this.o.clock.sleep(pause);
          pause = Math.min(pause * 2, MAX_REACQUIRE_MS);
        }
      }
    } finally {
      this.reacquiring = false;
    }
  }

  private onUnhealthy(e: SnowidError): void {
    this.unhealthy = e;
    const k = this.keeper;
    if (k === undefined || k.done) return;
    // A host whose clock cannot be trusted takes no id: give this one back and stop.
    this.stop(k);
    void this.registry.release(k.grant, k.generator.lastIssuedMs).catch(() => this.registry.abandon(k.grant));
  }
}
