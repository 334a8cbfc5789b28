/** A real etcd of the test's own, on free loopback ports in a temporary directory. */
import { spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";

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
  private constructor(
    readonly url: string,
    private readonly proc: ChildProcess,
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
    const proc = spawn(
      bin,
      [
        "--name=ts",
        `--data-dir=${path.join(dir, "snowid-etcd-data")}`,
        `--listen-client-urls=${url}`,
        `--advertise-client-urls=${url}`,
        `--listen-peer-urls=http://127.0.0.1:${peer}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${peer}`,
        `--initial-cluster=ts=http://127.0.0.1:${peer}`,
        "--log-level=error",
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    let log = "";
    proc.stderr!.on("data", (d) => (log += String(d)));
    const server = new EtcdServer(url, proc, dir);
    const deadline = Date.now() + 20_000;
    for (;;) {
      try {
        const r = await fetch(`${url}/v3/kv/range`, { method: "POST", body: '{"key":"AA=="}' });
        if (r.ok) return server;
      } catch {
        // not up yet
      }
      if (Date.now() > deadline || proc.exitCode !== null) {
        await server.stop();
        throw new Error(`etcd did not start: ${log}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async stop(): Promise<void> {
    if (this.proc.exitCode === null) {
      const gone = new Promise((r) => this.proc.once("exit", r));
      this.proc.kill("SIGTERM");
      await gone;
    }
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
}
