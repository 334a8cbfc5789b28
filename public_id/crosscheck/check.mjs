// Checks vectors/public_ids.json with @noble/ciphers' FF1 and AES and node's
// HMAC, none of which is snowid's code: the vectors are then more than
// self-consistent. Usage: node check.mjs <path to public_ids.json>
// Prints the time of one FF1 wrap here for the benchmark table.
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ecb } from '@noble/ciphers/aes.js';
import { FF1 } from '@noble/ciphers/ff1.js';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const vectors = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const hex = (s) => Uint8Array.from(s.match(/../g) ?? [], (b) => parseInt(b, 16));
const toHex = (b) => Buffer.from(b).toString('hex');
const ascii = (s) => new TextEncoder().encode(s);
const keys = Object.fromEntries(vectors.keys.map((k) => [k.name, hex(k.key)]));
let failures = 0;
let checked = 0;
const expect = (got, want, what) => {
  checked++;
  if (got !== want) {
    failures++;
    console.error(`${what}: got ${got}, want ${want}`);
  }
};

// The 63 bits of x, most significant first (docs/public-id.md pins this order).
const bits = (x) => Array.from({ length: 63 }, (_, i) => Number((x >> BigInt(62 - i)) & 1n));
const fromBits = (d) => d.reduce((v, b) => (v << 1n) | BigInt(b), 0n);
const ff1 = (key, tweak, x) => fromBits(FF1(2, key, tweak).encrypt(bits(x)));
const base32 = (v, n) =>
  Array.from({ length: n }, (_, i) => ALPHABET[Number((v >> BigInt(5 * (n - 1 - i))) & 31n)]).join('');
const hmac = (key, label) => new Uint8Array(createHmac('sha256', key).update(label).digest());
const aes = (key, block) => ecb(key, { disablePadding: true }).encrypt(block);
const cbcMac = (key, data) => {
  let y = new Uint8Array(16);
  for (let i = 0; i < data.length; i += 16) {
    y = aes(key, y.map((b, j) => b ^ data[i + j]));
  }
  return y;
};

for (const k of vectors.keys) {
  expect(toHex(hmac(keys[k.name], 'snowid key fingerprint').slice(0, 4)), k.fingerprint, `fingerprint ${k.name}`);
  expect(toHex(hmac(keys[k.name], 'snowid/public-id/v1/sealing key')), k.sealing_key, `sealing key ${k.name}`);
}
for (const c of vectors.ff1_63) {
  expect(ff1(keys[c.key], hex(c.tweak), BigInt(c.x)).toString(), c.y, `ff1_63 ${c.x}`);
}
const slotKeys = Object.fromEntries(
  vectors.keyrings.map((r) => [r.name, Object.fromEntries(r.slots.map((s) => [s.slot, keys[s.key]]))]),
);
for (const c of vectors.wraps) {
  const key = slotKeys[c.keyring][c.slot];
  const tweak = ascii(`snowid/public-id/v1/${c.type}`);
  const id = BigInt(c.id);
  const ct = ff1(key, tweak, id);
  expect(`${c.type}_${base32((BigInt(c.slot) << 63n) | ct, 13)}`, c.compact, `compact ${c.type} ${c.id}`);
  const sealing = hmac(key, 'snowid/public-id/v1/sealing key');
  const padded = new Uint8Array(Math.ceil((tweak.length + 1) / 16) * 16);
  padded.set(tweak);
  padded[tweak.length] = 0x80;
  const block = new Uint8Array(16);
  new DataView(block.buffer).setBigUint64(0, id);
  block.set(cbcMac(sealing, padded).slice(0, 7), 8);
  block[15] = 1;
  const sealed = BigInt('0x' + toHex(aes(sealing, block)));
  expect(`${c.type}_${base32((BigInt(c.slot) << 128n) | sealed, 26)}`, c.sealed, `sealed ${c.type} ${c.id}`);
}

const rounds = 200;
const start = process.hrtime.bigint();
for (let i = 0; i < rounds; i++) ff1(keys.nist256, ascii('snowid/public-id/v1/ord'), 4194324480n + BigInt(i));
const perWrap = Number(process.hrtime.bigint() - start) / rounds;
console.log(`@noble/ciphers FF1(2) over 2^63: ${(perWrap / 1000).toFixed(1)} us per wrap`);
console.log(`${checked} checks, ${failures} failed`);
process.exit(failures === 0 && checked > 0 ? 0 : 1);
