/** The built-in layouts of docs/id-format.md section 6. */
import { SnowidError } from "./errors.js";
import { Layout } from "./layout.js";

export const SNOWID = new Layout({
  name: "snowid",
  epochMs: 1_767_225_600_000,
  fields: [
    { name: "time", role: "time", width: 41 },
    { name: "region", role: "region", width: 2 },
    { name: "host", role: "host", width: 8 },
    { name: "sequence", role: "sequence", width: 12 },
  ],
});

export const TWITTER = new Layout({
  name: "twitter",
  epochMs: 1_288_834_974_657,
  decodeOnly: true,
  fields: [
    { name: "time", role: "time", width: 41 },
    { name: "datacenter", role: "region", width: 5 },
    { name: "worker", role: "host", width: 5 },
    { name: "sequence", role: "sequence", width: 12 },
  ],
});

export const DISCORD = new Layout({
  name: "discord",
  epochMs: 1_420_070_400_000,
  decodeOnly: true,
  fields: [
    { name: "timestamp", role: "time", width: 42 },
    { name: "worker", role: "other", width: 5 },
    { name: "process", role: "other", width: 5 },
    { name: "increment", role: "sequence", width: 12 },
  ],
});

export const INSTAGRAM = new Layout({
  name: "instagram",
  epochMs: 1_314_220_021_721,
  decodeOnly: true,
  fields: [
    { name: "time", role: "time", width: 41 },
    { name: "shard", role: "other", width: 13 },
    { name: "sequence", role: "sequence", width: 10 },
  ],
});

export const SONYFLAKE = new Layout({
  name: "sonyflake",
  epochMs: 1_409_529_600_000,
  unitMs: 10,
  decodeOnly: true,
  fields: [
    { name: "time", role: "time", width: 39 },
    { name: "sequence", role: "sequence", width: 8 },
    { name: "machine", role: "other", width: 16 },
  ],
});

const PRESETS: ReadonlyMap<string, Layout> = new Map(
  [SNOWID, TWITTER, DISCORD, INSTAGRAM, SONYFLAKE].map((l) => [l.name, l]),
);

export const presetNames: readonly string[] = [...PRESETS.keys()];

/** The preset of that name; NOT_FOUND otherwise. */
export function preset(name: string): Layout {
  const l = PRESETS.get(name);
  if (l === undefined) throw new SnowidError("NOT_FOUND", `no preset layout named "${name}"`);
  return l;
}
