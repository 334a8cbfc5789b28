'use strict';
// node-redis (the `redis` package) against snowidd, over the Unix socket
// (RESP2) and TCP (RESP3).
const {createClient} = require('redis');
const {IdLedger} = require('./snowid_ids');
const {idsOnOneConnection, integerOptIn, publicIdsOnOneConnection, checkIdsIssued} =
    require('./scenario');

// node-redis pipelines the commands issued in one tick of the event loop.
function wrap(client) {
  return {
    call: (...args) => client.sendCommand(args),
    callMany: (n, ...args) => Promise.all(Array.from({length: n}, () => client.sendCommand(args))),
  };
}

async function main() {
  const ledger = new IdLedger();
  const overUnix = createClient({socket: {path: process.env.SNOWIDD_SOCKET}, RESP: 2});
  const overTcp = createClient({socket: {host: process.env.SNOWIDD_TCP_HOST,
                                         port: Number(process.env.SNOWIDD_TCP_PORT)},
                                RESP: 3});
  for (const c of [overUnix, overTcp]) c.on('error', (err) => console.error('client:', err));
  await overUnix.connect();
  await overTcp.connect();
  try {
    await idsOnOneConnection(wrap(overUnix), ledger);
    await idsOnOneConnection(wrap(overTcp), ledger);
    await integerOptIn(wrap(overTcp), ledger);
    await publicIdsOnOneConnection(wrap(overUnix), ledger);
    await publicIdsOnOneConnection(wrap(overTcp), ledger);
    await checkIdsIssued(wrap(overUnix), ledger);
  } finally {
    await overUnix.close();
    await overTcp.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
