/** A real etcd of the test's own, on free loopback ports in a temporary directory. */
import { spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";

const b64 = (s: string) => Buffer.from(s).toString("base64");

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
    s.on("error", reject);
  });
}

export class EtcdServer {
  private proc: ChildProcess | undefined;
  private log = "";

  private constructor(
    readonly url: string,
    private readonly args: string[],
    private readonly bin: string,
    private readonly dir: string,
  ) {}

  static async start(): Promise<EtcdServer> {
    const bin = process.env["SNOWID_ETCD_BIN"];
    if (bin === undefined || bin === "") {
      throw new Error(
        "SNOWID_ETCD_BIN is not set: point it at an etcd binary (scripts/install-etcd builds one)",
      );
    }
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "snowid-etcd-ts-"));
    const client = await freePort();
    const peer = await freePort();
    const url = `http://127.0.0.1:${client}`;
    const args = [
      "--name=ts",
      `--data-dir=${path.join(dir, "snowid-etcd-data")}`,
      `--listen-client-urls=${url}`,
      `--advertise-client-urls=${url}`,
      `--listen-peer-urls=http://127.0.0.1:${peer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${peer}`,
      `--initial-cluster=ts=http://127.0.0.1:${peer}`,
      "--log-level=error",
    ];
    const server = new EtcdServer(url, args, bin, dir);
    try {
      await server.run();
    } catch (e) {
      await server.stop();
      throw e;
    }
    return server;
  }

  private async run(): Promise<void> {
    const proc = spawn(this.bin, this.args, { stdio: ["ignore", "ignore", "pipe"] });
    this.proc = proc;
    this.log = "";
    proc.stderr!.on("data", (d) => (this.log += String(d)));
    const deadline = Date.now() + 20_000;
    for (;;) {
      try {
        const r = await fetch(`${this.url}/v3/kv/range`, { method: "POST", body: '{"key":"AA=="}' });
        if (r.ok) return;
      } catch {
        // not up yet
      }
      if (Date.now() > deadline || proc.exitCode !== null) throw new Error(`etcd did not start: ${this.log}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  private async kill(): Promise<void> {
    const proc = this.proc;
    if (proc !== undefined && proc.exitCode === null && proc.signalCode === null) {
      const gone = new Promise((r) => proc.once("exit", r));
      proc.kill("SIGTERM");
      await gone;
    }
  }

  /** The member loses everything: stopped, its data directory removed, started again on the same ports. */
  async restartEmpty(): Promise<void> {
    await this.kill();
    fs.rmSync(path.join(this.dir, "snowid-etcd-data"), { recursive: true, force: true });
    await this.run();
  }

  async stop(): Promise<void> {
    await this.kill();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  async call(p: string, body: object): Promise<Record<string, unknown>> {
    const r = await fetch(this.url + p, { method: "POST", body: JSON.stringify(body) });
    return (await r.json()) as Record<string, unknown>;
  }

  async get(key: string): Promise<{ value: string; lease: bigint } | undefined> {
    const doc = await this.call("/v3/kv/range", { key: Buffer.from(key).toString("base64") });
    const kv = (doc["kvs"] as Record<string, string>[] | undefined)?.[0];
    if (kv === undefined) return undefined;
    return { value: Buffer.from(kv["value"] ?? "", "base64").toString(), lease: BigInt(kv["lease"] ?? "0") };
  }

  async put(key: string, value: string): Promise<void> {
    await this.call("/v3/kv/put", { key: b64(key), value: b64(value) });
  }

  async remove(key: string): Promise<void> {
    await this.call("/v3/kv/deleterange", { key: b64(key) });
  }
}

/**
 * Three etcd members of the test's own, on free loopback ports in a temporary directory.
 * `pause` and `resume` stop and continue one (SIGSTOP, SIGCONT).
 */
export class EtcdCluster {
  private readonly procs: ChildProcess[] = [];
  private log = "";

  private constructor(
    readonly urls: string[],
    private readonly dir: string,
  ) {}

  static async start(size = 3): Promise<EtcdCluster> {
    const bin = process.env["SNOWID_ETCD_BIN"];
    if (bin === undefined || bin === "") {
      throw new Error(
        "SNOWID_ETCD_BIN is not set: point it at an etcd binary (scripts/install-etcd builds one)",
      );
    }
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "snowid-etcd3-ts-"));
    const names = Array.from({ length: size }, (_, i) => `ts${i}`);
    const clients: number[] = [];
    const peers: number[] = [];
    for (let i = 0; i < 2 * size; i++) (i < size ? clients : peers).push(await freePort());
    const urls = clients.map((p) => `http://127.0.0.1:${p}`);
    const initial = names.map((n, i) => `${n}=http://127.0.0.1:${peers[i]}`).join(",");
    const cluster = new EtcdCluster(urls, dir);
    names.forEach((name, i) => {
      const proc = spawn(
        bin,
        [
          `--name=${name}`,
          `--data-dir=${path.join(dir, name)}`,
          `--listen-client-urls=${urls[i]}`,
          `--advertise-client-urls=${urls[i]}`,
          `--listen-peer-urls=http://127.0.0.1:${peers[i]}`,
          `--initial-advertise-peer-urls=http://127.0.0.1:${peers[i]}`,
          `--initial-cluster=${initial}`,
          "--initial-cluster-state=new",
          `--initial-cluster-token=${path.basename(dir)}`,
          "--log-level=error",
        ],
        { stdio: ["ignore", "ignore", "pipe"] },
      );
      proc.stderr!.on("data", (d) => (cluster.log += `${name}: ${String(d)}`));
      cluster.procs.push(proc);
    });
    try {
      // A linearizable read answers once the member knows the leader.
      const deadline = Date.now() + 30_000;
      for (const url of urls) {
        for (;;) {
          try {
            const r = await fetch(`${url}/v3/kv/range`, { method: "POST", body: '{"key":"AA=="}' });
            if (r.ok) break;
          } catch {
            // not up yet
          }
          if (Date.now() > deadline || cluster.procs.some((p) => p.exitCode !== null))
            throw new Error(`the etcd cluster did not start: ${cluster.log}`);
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    } catch (e) {
      await cluster.stop();
      throw e;
    }
    return cluster;
  }

  /** The index of a member that is not the leader. */
  async follower(): Promise<number> {
    for (let i = 0; i < this.urls.length; i++) {
      const r = await fetch(`${this.urls[i]}/v3/maintenance/status`, { method: "POST", body: "{}" });
      const s = (await r.json()) as { header: { member_id: string }; leader: string };
      if (s.header.member_id !== s.leader) return i;
    }
    throw new Error("no follower in the cluster");
  }

  /** The watchers member `i` serves (its etcd_debugging_mvcc_watcher_total). */
  async watchers(i: number): Promise<number> {
    const text = await (await fetch(`${this.urls[i]}/metrics`)).text();
    const line = text.split("\n").find((l) => l.startsWith("etcd_debugging_mvcc_watcher_total "));
    return line === undefined ? 0 : Number(line.split(" ")[1]);
  }

  pause(i: number): void {
    this.procs[i]!.kill("SIGSTOP");
  }

  resume(i: number): void {
    this.procs[i]!.kill("SIGCONT");
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.procs.map(async (proc) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return;
        const gone = new Promise((r) => proc.once("exit", r));
        proc.kill("SIGCONT");
        proc.kill("SIGTERM");
        await gone;
      }),
    );
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
