/**
 * What one registry has seen of etcd's store, so that it notices when etcd lost or rolled
 * back its data (docs/protocol.md, section 9): a reply from another cluster, a revision lower
 * than one already seen, a mark lower than one this process stored. A loss noticed here is
 * pending until a store record that says so is written.
 */
import type { Header } from "./gateway.js";

export class StoreHistory {
  private clusterId = 0n; // 0: none seen
  private revision = 0n; // the highest seen since the last loss
  private known = "";
  private readonly marks = new Map<string, number>();
  private pendingLoss: string | undefined;

  /**
   * Notes the header of a linearizable range or a transaction (never a keepalive's, which may
   * come from a member that is behind). Returns why the store is not the one seen before.
   */
  observe(header: Header): string | undefined {
    const cluster = /^[0-9]{1,20}$/.test(header.clusterId) ? BigInt(header.clusterId) : 0n;
    let why: string | undefined;
    if (cluster !== 0n && this.clusterId !== 0n && cluster !== this.clusterId) {
      why = `etcd answered as another cluster (id ${cluster}, was ${this.clusterId})`;
      this.revision = 0n;
    } else if (header.revision !== 0n && header.revision < this.revision) {
      why = `etcd's revision went back from ${this.revision} to ${header.revision}`;
      this.revision = 0n;
    }
    if (cluster !== 0n) this.clusterId = cluster;
    if (header.revision > this.revision) this.revision = header.revision;
    return why;
  }

  /** The incarnation of the store record last read or written; empty before. */
  get incarnation(): string {
    return this.known;
  }

  adopt(incarnation: string): void {
    this.known = incarnation;
  }

  /** Notes the high-water mark this process stored for a grant. */
  storedMark(grant: string, highWaterMs: number): void {
    const m = this.marks.get(grant);
    if (m === undefined || highWaterMs > m) this.marks.set(grant, highWaterMs);
  }

  /** Why the mark read back for a grant shows lost writes (absent, or 1 ms or more lower). */
  checkMark(grant: string, readMs: number | undefined): string | undefined {
    const stored = this.marks.get(grant);
    if (stored === undefined) return undefined;
    if (readMs === undefined) return "a mark this process stored has vanished";
    // Marks are stored rounded up to the millisecond.
    if (readMs + 1 <= Math.ceil(stored)) {
      return `a mark this process stored went back from ${new Date(Math.ceil(stored)).toISOString()} to ${new Date(readMs).toISOString()}`;
    }
    return undefined;
  }

  forget(grant: string): void {
    this.marks.delete(grant);
  }

  /** Keeps the first reason until it is taken. */
  setPending(reason: string): void {
    if (this.pendingLoss === undefined) this.pendingLoss = reason;
  }

  get hasPending(): boolean {
    return this.pendingLoss !== undefined;
  }

  takePending(): string | undefined {
    const why = this.pendingLoss;
    this.pendingLoss = undefined;
    return why;
  }
}
