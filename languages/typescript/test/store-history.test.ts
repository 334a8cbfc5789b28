/** The store history's rules (docs/protocol.md, section 9), one by one. */
import { test } from "node:test";
import * as assert from "node:assert/strict";
import { StoreHistory } from "../src/etcd/store-history.js";

const header = (revision: bigint, clusterId = "7") => ({ revision, clusterId });

test("a revision lower than the highest seen is a loss, once; later revisions count from it", () => {
  const h = new StoreHistory();
  assert.equal(h.observe(header(10n)), undefined);
  assert.equal(h.observe(header(12n)), undefined);
  assert.equal(h.observe(header(12n)), undefined, "the same revision again is no loss");
  assert.match(h.observe(header(3n)) ?? "", /revision went back from 12 to 3/);
  assert.equal(h.observe(header(4n)), undefined, "after a loss, the new store's revisions count");
  assert.equal(h.observe(header(0n)), undefined, "a header without a revision says nothing");
});

test("another cluster id is a loss, and its revisions count from the reply that showed it", () => {
  const h = new StoreHistory();
  h.observe(header(10n, "7"));
  assert.match(h.observe(header(3n, "8")) ?? "", /another cluster \(id 8, was 7\)/);
  assert.equal(h.observe(header(4n, "8")), undefined, "the old cluster's revision was forgotten");
  assert.match(h.observe(header(3n, "8")) ?? "", /revision went back from 4 to 3/);
  assert.equal(h.observe(header(6n, "")), undefined, "a header without a cluster id says nothing of it");
});

test("a mark read back lower by 1 ms or more, or absent, is a loss; only for marks this process stored", () => {
  const h = new StoreHistory();
  assert.equal(h.checkMark("g", undefined), undefined, "nothing stored for this grant");
  h.storedMark("g", 1000);
  h.storedMark("g", 900);
  assert.equal(h.checkMark("g", 1000), undefined);
  assert.equal(h.checkMark("g", 1500), undefined, "higher: another writer raised it");
  assert.match(h.checkMark("g", 999) ?? "", /went back/);
  assert.match(h.checkMark("g", undefined) ?? "", /vanished/);
  h.storedMark("f", 999.2);
  assert.equal(h.checkMark("f", 1000), undefined, "stored rounded up");
  h.forget("g");
  assert.equal(h.checkMark("g", undefined), undefined, "a released grant is forgotten");
});

test("a pending loss keeps its first reason until taken", () => {
  const h = new StoreHistory();
  assert.equal(h.hasPending, false);
  h.setPending("first");
  h.setPending("second");
  assert.equal(h.hasPending, true);
  assert.equal(h.takePending(), "first");
  assert.equal(h.takePending(), undefined);
});
