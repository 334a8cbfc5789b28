'use strict';
// Checks ids from snowidd against the layout: 41 bits of milliseconds since
// 2026-01-01, 2 bits region, 8 bits host, 12 bits sequence. Ids are handled
// as BigInt throughout: a JavaScript number is exact only below 2^53.
const assert = require('node:assert/strict');

const EPOCH_MS = 1767225600000n;

function decodeId(id) {
  return {
    ticks: id >> 22n,
    timeMs: (id >> 22n) + EPOCH_MS,
    region: (id >> 20n) & 3n,
    host: (id >> 12n) & 255n,
    sequence: id & 4095n,
  };
}

// The id a reply carries: a string of decimal digits, nothing else.
function parseId(reply) {
  assert.equal(typeof reply, 'string', `an id is a string, not ${typeof reply} (${reply})`);
  assert.match(reply, /^[1-9][0-9]{0,18}$/, `not an id: '${reply}'`);
  const id = BigInt(reply);
  assert.ok(id < 1n << 63n, `id ${reply} does not fit 63 bits`);
  return id;
}

// Counts every id received and checks each against the pinned worker, the
// run's time window and every id seen before.
class IdLedger {
  constructor() {
    this.region = BigInt(process.env.SNOWIDD_REGION);
    this.host = BigInt(process.env.SNOWIDD_HOST);
    this.startMs = BigInt(Date.now());
    this.seen = new Set();
    this.received = 0;
  }

  // A new connection's ids must increase from its first one on.
  stream() {
    return {ledger: this, last: 0n, accept: acceptOnStream};
  }
}

function acceptOnStream(replies) {
  const nowMs = BigInt(Date.now());
  const ids = replies.map(parseId);
  for (const id of ids) {
    const d = decodeId(id);
    assert.equal(d.region, this.ledger.region, `id ${id}: region`);
    assert.equal(d.host, this.ledger.host, `id ${id}: host`);
    assert.ok(d.timeMs >= this.ledger.startMs && d.timeMs <= nowMs,
              `id ${id}: time ${d.timeMs} outside the run [${this.ledger.startMs}, ${nowMs}]`);
    assert.ok(id > this.last, `id ${id} does not follow ${this.last} on its connection`);
    assert.ok(!this.ledger.seen.has(id), `id ${id} issued twice`);
    this.ledger.seen.add(id);
    this.last = id;
  }
  this.ledger.received += ids.length;
  return ids;
}

// DECODE's reply as [key, value] pairs: a RESP2 flat array, or a RESP3 map
// (a Map or a plain object, as the client maps it).
function pairsOf(reply) {
  if (Array.isArray(reply)) {
    assert.equal(reply.length % 2, 0, 'DECODE: odd flat array');
    const pairs = [];
    for (let i = 0; i < reply.length; i += 2) pairs.push([String(reply[i]), reply[i + 1]]);
    return pairs;
  }
  if (reply instanceof Map) return [...reply.entries()].map(([k, v]) => [String(k), v]);
  assert.equal(typeof reply, 'object', 'DECODE: neither an array nor a map');
  return Object.entries(reply);
}

// DECODE must give back the same id string and the fields the layout says.
function checkDecode(id, reply) {
  const fields = Object.fromEntries(pairsOf(reply));
  const d = decodeId(id);
  assert.equal(fields.id, id.toString(), 'DECODE: id');
  for (const [name, want] of [['unix_ms', d.timeMs], ['ticks', d.ticks], ['region', d.region],
                              ['host', d.host], ['sequence', d.sequence]]) {
    assert.equal(typeof fields[name], 'number', `DECODE: ${name} is an integer`);
    assert.equal(BigInt(fields[name]), want, `DECODE: ${name}`);
  }
  assert.equal(BigInt(Date.parse(fields.time)), d.timeMs, `DECODE: time ${fields.time}`);
}

// ids_issued from the stats section of INFO.
function idsIssued(infoText) {
  const m = /^ids_issued:(\d+)\r?$/m.exec(infoText);
  assert.ok(m, `INFO stats has no ids_issued:\n${infoText}`);
  return Number(m[1]);
}

module.exports = {decodeId, parseId, IdLedger, checkDecode, idsIssued};
