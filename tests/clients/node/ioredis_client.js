'use strict';
// ioredis against snowidd, over the Unix socket (RESP2) and TCP (RESP3).
const Redis = require('ioredis');
const {IdLedger} = require('./snowid_ids');
const {idsOnOneConnection, integerOptIn, publicIdsOnOneConnection, checkIdsIssued} =
    require('./scenario');

function wrap(redis) {
  return {
    call: (...args) => redis.call(...args),
    callMany: async (n, ...args) => {
      const pipeline = redis.pipeline();
      for (let i = 0; i < n; ++i) pipeline.call(...args);
      return (await pipeline.exec()).map(([err, reply]) => {
        if (err) throw err;
        return reply;
      });
    },
  };
}

async function main() {
  const ledger = new IdLedger();
  const overUnix = new Redis({path: process.env.SNOWIDD_SOCKET, maxRetriesPerRequest: 0});
  const overTcp = new Redis({host: process.env.SNOWIDD_TCP_HOST,
                             port: Number(process.env.SNOWIDD_TCP_PORT), protocol: 3,
                             maxRetriesPerRequest: 0});
  try {
    await idsOnOneConnection(wrap(overUnix), ledger);
    await idsOnOneConnection(wrap(overTcp), ledger);
    await publicIdsOnOneConnection(wrap(overUnix), ledger);
    await publicIdsOnOneConnection(wrap(overTcp), ledger);
    await integerOptIn(wrap(overUnix), ledger);
    await checkIdsIssued(wrap(overTcp), ledger);
  } finally {
    overUnix.disconnect();
    overTcp.disconnect();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
