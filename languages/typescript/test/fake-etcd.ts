/**
 * A fake etcd JSON gateway for the watch's unit tests: members on loopback ports that accept a
 * watch and then stay quiet (or send only progress messages), as a member resumed from a pause
 * may, and answer ranges of the holder key from one shared state. Each read is logged.
 */
import * as http from "node:http";
import type { AddressInfo } from "node:net";

export interface FakeHolder {
  createRevision: bigint;
  lease: bigint;
}

export interface ReadLog {
  member: number;
  atMs: number;
}

export class FakeEtcd {
  /** The holder key as a linearizable read finds it; undefined: deleted. */
  holder: FakeHolder | undefined;
  revision = 20n;
  /** Send a progress message (a watch response without events) every 50 ms. */
  chatty = false;
  readonly reads: ReadLog[] = [];
  private readonly servers: http.Server[] = [];
  readonly urls: string[] = [];

  private constructor(holder: FakeHolder | undefined) {
    this.holder = holder;
  }

  static async start(members: number, holder: FakeHolder | undefined): Promise<FakeEtcd> {
    const fake = new FakeEtcd(holder);
    for (let m = 0; m < members; m++) {
      const server = http.createServer((req, res) => fake.serve(m, req, res));
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      fake.servers.push(server);
      fake.urls.push(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    }
    return fake;
  }

  private serve(member: number, req: http.IncomingMessage, res: http.ServerResponse): void {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => (body += c));
    req.on("end", () => {
      const doc = JSON.parse(body || "{}") as Record<string, string>;
      const header = { cluster_id: "1", member_id: String(member + 1), revision: String(this.revision) };
      if (req.url === "/v3/kv/range") {
        this.reads.push({ member, atMs: performance.now() });
        const reply: Record<string, unknown> = { header };
        if (this.holder !== undefined) {
          reply["kvs"] = [
            {
              key: doc["key"] ?? "",
              value: "",
              create_revision: String(this.holder.createRevision),
              mod_revision: String(this.holder.createRevision),
              lease: String(this.holder.lease),
            },
          ];
        }
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(reply));
        return;
      }
      if (req.url === "/v3/watch") {
        res.writeHead(200, { "content-type": "application/json" });
        res.write(JSON.stringify({ result: { header, created: true } }) + "\n");
        const timer = setInterval(() => {
          if (this.chatty) res.write(JSON.stringify({ result: { header } }) + "\n");
        }, 50);
        res.on("close", () => clearInterval(timer));
        return;
      }
      res.writeHead(404).end();
    });
  }

  async close(): Promise<void> {
    for (const s of this.servers) {
      s.closeAllConnections();
      await new Promise((resolve) => s.close(resolve));
    }
  }
}
