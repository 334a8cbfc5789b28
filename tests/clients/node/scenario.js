'use strict';
// The checks every Node client runs on one connection. A client is given as
// {call(...args), callMany(n, ...args)}: one command, and n copies of one
// command sent as a pipeline.
const assert = require('node:assert/strict');
const {checkDecode, idsIssued} = require('./snowid_ids');

async function idsOnOneConnection(client, ledger) {
  const stream = ledger.stream();
  for (let i = 0; i < 10; ++i) stream.accept([await client.call('NEXTID')]);

  const pipelined = await client.callMany(2000, 'NEXTID');
  assert.equal(pipelined.length, 2000);
  stream.accept(pipelined);

  const batch = await client.call('NEXTIDS', '5');
  assert.ok(Array.isArray(batch) && batch.length === 5, `NEXTIDS 5 gave ${batch}`);
  const ids = stream.accept(batch);

  checkDecode(ids[4], await client.call('DECODE', ids[4].toString()));
}

// IDFORMAT INTEGER opts this connection into RESP integers, which a
// JavaScript client turns into (rounded) numbers; IDFORMAT STRING restores
// exact strings.
async function integerOptIn(client, ledger) {
  assert.equal(await client.call('IDFORMAT', 'INTEGER'), 'OK');
  assert.equal(typeof await client.call('NEXTID'), 'number');
  const rounded = await client.callMany(2000, 'NEXTID');
  assert.ok(rounded.every((v) => typeof v === 'number'));
  ledger.received += 2001;
  console.log(`IDFORMAT INTEGER: 2000 pipelined ids arrived as ${new Set(rounded).size} ` +
              'distinct numbers');

  assert.equal(await client.call('IDFORMAT', 'STRING'), 'OK');
  ledger.stream().accept([await client.call('NEXTID')]);
}

// Public ids: NEXTPUBIDS, NEXTPUBID (one by one and pipelined) give exact ids
// beside their public ids; UNWRAP reads every public id back to its id's
// string; WRAP gives the same public ids again.
const PUBLIC_ID = /^ord_[0-9a-hjkmnp-tv-z]{13}$/;

async function publicIdsOnOneConnection(client, ledger) {
  assert.equal(process.env.SNOWIDD_PUBLIC_IDS, '1', 'the daemon was started without a keyring');
  const stream = ledger.stream();
  const batch = await client.call('NEXTPUBIDS', 'ord', '500');
  assert.ok(Array.isArray(batch) && batch.length === 500, `NEXTPUBIDS gave ${batch}`);
  const single = [await client.call('NEXTPUBID', 'ord')];
  const pipelined = await client.callMany(200, 'NEXTPUBID', 'ord');
  const pairs = [...batch, ...single, ...pipelined];
  for (const pair of pairs) assert.ok(Array.isArray(pair) && pair.length === 2, `pair ${pair}`);
  const ids = stream.accept(pairs.map((pair) => pair[0]));
  const publics = pairs.map((pair) => pair[1]);
  for (const p of publics) assert.match(p, PUBLIC_ID);
  assert.equal(new Set(publics).size, publics.length, 'a public id was given twice');
  assert.deepEqual(await client.call('UNWRAP', ...publics), ids.map(String));
  assert.deepEqual(await client.call('WRAP', 'ord', ...ids.slice(0, 100).map(String)),
                   publics.slice(0, 100));
  console.log(`${pairs.length} ids with public ids: exact, distinct, unwrapped to themselves`);
}

async function checkIdsIssued(client, ledger) {
  assert.equal(idsIssued(await client.call('INFO', 'stats')), ledger.received,
               'INFO ids_issued against the ids received');
  console.log(`${ledger.received} ids received, ${ledger.seen.size} of them as exact strings, ` +
              'all distinct');
}

module.exports = {idsOnOneConnection, integerOptIn, publicIdsOnOneConnection, checkIdsIssued};
