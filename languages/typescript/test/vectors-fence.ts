/** The runner of vectors/fence.json: fence-file texts read, written, and refused. */
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { TestContext } from "node:test";
import { FileFenceStore, SnowidError, formatFence, parseFence } from "../src/index.js";

/* eslint-disable @typescript-eslint/no-explicit-any */

function codeOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    if (e instanceof SnowidError) return e.code;
    throw e;
  }
  return "OK";
}

const bytes = (text: string) => Buffer.from(text, "utf8");

export async function runFenceVectors(file: any, t: TestContext): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "snowid-fence-vectors-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const fence = path.join(dir, "fence");

  await t.test("valid", () => {
    for (const c of file.valid) {
      assert.equal(parseFence(bytes(c.text)), c.fence_ms, c.note);
      fs.writeFileSync(fence, bytes(c.text));
      assert.equal(new FileFenceStore(fence).load(), c.fence_ms, `${c.note}, from a file`);
    }
  });
  await t.test("invalid", () => {
    for (const c of file.invalid) {
      assert.equal(
        codeOf(() => parseFence(bytes(c.text))),
        c.error,
        c.note,
      );
      fs.writeFileSync(fence, bytes(c.text));
      assert.equal(
        codeOf(() => new FileFenceStore(fence).load()),
        c.error,
        `${c.note}, from a file`,
      );
    }
  });
  await t.test("write", () => {
    for (const c of file.write) {
      assert.equal(formatFence(c.fence_ms), c.text);
      fs.rmSync(fence, { force: true });
      new FileFenceStore(fence).store(c.fence_ms);
      assert.deepEqual(fs.readFileSync(fence), bytes(c.text), `${c.fence_ms} stored`);
      assert.equal(fs.existsSync(`${fence}.tmp`), false, "no temporary file left");
    }
  });
  await t.test("write_errors", () => {
    for (const c of file.write_errors) {
      const before = bytes("snowid-fence 1 5\n");
      fs.writeFileSync(fence, before);
      assert.equal(
        codeOf(() => formatFence(c.fence_ms)),
        c.error,
        c.note,
      );
      assert.equal(
        codeOf(() => new FileFenceStore(fence).store(c.fence_ms)),
        c.error,
        c.note,
      );
      assert.deepEqual(fs.readFileSync(fence), before, `${c.note}: the file is as it was`);
      assert.equal(fs.existsSync(`${fence}.tmp`), false, `${c.note}: no temporary file left`);
    }
  });
  await t.test("a missing file is no fence", () => {
    fs.rmSync(fence, { force: true });
    assert.equal(new FileFenceStore(fence).load(), null);
  });
}
