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
