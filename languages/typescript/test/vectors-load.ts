/**
 * Loads the shared vectors of the repository's vectors/ folder (or $SNOWID_VECTORS), found
 * relative to this package so that files added there are picked up without a change here.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!fs.existsSync(path.join(dir, "package.json"))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error("package.json not found above the tests");
    dir = up;
  }
  return dir;
}

export const vectorsDir: string =
  process.env["SNOWID_VECTORS"] ?? path.resolve(packageRoot(), "..", "..", "vectors");

export function vectorFiles(): string[] {
  return fs
    .readdirSync(vectorsDir)
    .filter((f) => f.endsWith(".json"))
    .sort();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function loadVectors(file: string): any {
  return JSON.parse(fs.readFileSync(path.join(vectorsDir, file), "utf8"));
}
