"""Public-id cases (vectors/public_ids.json), from docs/public-id.md alone.

FF1 is written here from NIST SP 800-38G (Algorithm 7) over Python integers,
with AES from the `cryptography` package, and checks itself against NIST's
nine FF1 samples before any case is derived. Nothing here calls snowid.
"""

import hashlib
import hmac

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
TWEAK_PREFIX = b"snowid/public-id/v1/"
FINGERPRINT_LABEL = b"snowid key fingerprint"
SEALING_LABEL = b"snowid/public-id/v1/sealing key"
SEALED_VERSION = 1


def aes(key, block):
    enc = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
    return enc.update(block) + enc.finalize()


def aes_inverse(key, block):
    dec = Cipher(algorithms.AES(key), modes.ECB()).decryptor()
    return dec.update(block) + dec.finalize()


def cbc_mac(key, data):
    assert len(data) % 16 == 0
    y = bytes(16)
    for i in range(0, len(data), 16):
        y = aes(key, bytes(a ^ b for a, b in zip(y, data[i : i + 16])))
    return y


def num(digits, radix):
    v = 0
    for d in digits:
        v = v * radix + d
    return v


def digits_of(v, radix, m):
    out = []
    for _ in range(m):
        out.append(v % radix)
        v //= radix
    return out[::-1]


def ff1_encrypt(key, tweak, radix, x):
    n = len(x)
    u, v = n // 2, n - n // 2
    a, b = x[:u], x[u:]
    bb = ((radix**v - 1).bit_length() + 7) // 8
    d = 4 * ((bb + 3) // 4) + 4
    t = len(tweak)
    p = bytes([1, 2, 1]) + radix.to_bytes(3, "big") + bytes([10, u % 256])
    p += n.to_bytes(4, "big") + t.to_bytes(4, "big")
    for i in range(10):
        q = tweak + bytes((-t - bb - 1) % 16) + bytes([i]) + num(b, radix).to_bytes(bb, "big")
        r = cbc_mac(key, p + q)
        s = r
        j = 1
        while len(s) < d:
            s += aes(key, bytes(x ^ y for x, y in zip(r, j.to_bytes(16, "big"))))
            j += 1
        y = int.from_bytes(s[:d], "big")
        m = u if i % 2 == 0 else v
        c = (num(a, radix) + y) % radix**m
        a, b = b, digits_of(c, radix, m)
    return a + b


BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"
K128 = bytes.fromhex("2B7E151628AED2A6ABF7158809CF4F3C")
K192 = bytes.fromhex("2B7E151628AED2A6ABF7158809CF4F3CEF4359D8D580AA4F")
K256 = bytes.fromhex("2B7E151628AED2A6ABF7158809CF4F3CEF4359D8D580AA4F7F036D6F04FC6A94")
NIST_SAMPLES = [
    (K128, 10, "", "0123456789", "2433477484"),
    (K128, 10, "39383736353433323130", "0123456789", "6124200773"),
    (K128, 36, "3737373770717273373737", "0123456789abcdefghi", "a9tv40mll9kdu509eum"),
    (K192, 10, "", "0123456789", "2830668132"),
    (K192, 10, "39383736353433323130", "0123456789", "2496655549"),
    (K192, 36, "3737373770717273373737", "0123456789abcdefghi", "xbj3kv35jrawxv32ysr"),
    (K256, 10, "", "0123456789", "6657667009"),
    (K256, 10, "39383736353433323130", "0123456789", "1001623463"),
    (K256, 36, "3737373770717273373737", "0123456789abcdefghi", "xs8a0azh2avyalyzuwd"),
]
for _key, _radix, _tweak, _pt, _ct in NIST_SAMPLES:
    _out = ff1_encrypt(_key, bytes.fromhex(_tweak), _radix, [BASE36.index(c) for c in _pt])
    assert "".join(BASE36[d] for d in _out) == _ct, "FF1 does not reproduce NIST's samples"


def ff1_63(key, tweak, x):
    bits = [(x >> (62 - i)) & 1 for i in range(63)]
    return num(ff1_encrypt(key, tweak, 2, bits), 2)


def base32(value, symbols):
    return "".join(ALPHABET[(value >> (5 * (symbols - 1 - i))) & 31] for i in range(symbols))


def fingerprint(key):
    return hmac.new(key, FINGERPRINT_LABEL, hashlib.sha256).digest()[:4].hex()


def sealing_key(key):
    return hmac.new(key, SEALING_LABEL, hashlib.sha256).digest()


def compact(key, slot, type_, id_):
    ct = ff1_63(key, TWEAK_PREFIX + type_.encode(), id_)
    return type_ + "_" + base32(slot << 63 | ct, 13)


def sealed_block(key, type_, id_):
    tweak = TWEAK_PREFIX + type_.encode()
    padded = tweak + b"\x80" + bytes((-len(tweak) - 1) % 16)
    tag = cbc_mac(sealing_key(key), padded)[:7]
    return id_.to_bytes(8, "big") + tag + bytes([SEALED_VERSION])


def sealed(key, slot, type_, id_):
    ct = aes(sealing_key(key), sealed_block(key, type_, id_))
    return type_ + "_" + base32(slot << 128 | int.from_bytes(ct, "big"), 26)


# --------------------------------------------------------------------------
# The cases.

EPOCH_2026 = 1_767_225_600_000
CLOCK_MS = 1_874_966_400_000  # 2029-06-01T00:00:00Z, "now" for the unwrap cases
KEYS = {
    "nist256": K256.hex(),
    "counting": bytes(range(32)).hex(),
    "reverse": bytes(range(31, -1, -1)).hex(),
}


def snowid_id(unix_ms, region, host, sequence):
    return (unix_ms - EPOCH_2026) << 22 | region << 20 | host << 12 | sequence


# 2026-01-01T00:00:01Z worker 5; mid-2027; 2027-07-01 exactly; the largest id.
IDS = [
    snowid_id(EPOCH_2026 + 1000, 0, 5, 0),
    snowid_id(EPOCH_2026 + 1000, 0, 5, 1),
    snowid_id(1_798_761_599_999, 3, 255, 4095),
    snowid_id(1_814_400_000_000, 1, 17, 42),
    1,
    2**63 - 1,
]

KEYRINGS = [
    {
        "name": "single",
        "note": "one primary key in slot 1",
        "text": "snowid-public-id-keys 1\n1 primary 2026-01-01T00:00:00Z k2026 " + KEYS["nist256"] + "\n",
        "slots": [{"slot": 1, "key": "nist256"}],
        "wrapping_slot": "always 1",
    },
    {
        "name": "rotated",
        "note": "by_time: slot 2 (from 2027-07-01) wraps ids from then on, slot 0 the older ones",
        "text": "snowid-public-id-keys 1\npolicy by_time\n"
        "0 active 2026-01-01T00:00:00Z old " + KEYS["counting"] + "\n"
        "2 primary 2027-07-01T00:00:00Z new " + KEYS["reverse"] + "\n",
        "slots": [{"slot": 0, "key": "counting"}, {"slot": 2, "key": "reverse"}],
        "wrapping_slot": "2 for ids from 2027-07-01T00:00:00Z, else 0",
    },
]


def rotated_slot(id_):
    return 2 if (id_ >> 22) + EPOCH_2026 >= 1_814_400_000_000 else 0


def ff1_cases():
    out = []
    for tweak in [b"", b"snowid", b"snowid/public-id/v1/ord"]:
        for id_ in [0, 1, 2, 2**63 - 1, IDS[0], IDS[1]]:
            out.append({"key": "nist256", "tweak": tweak.hex(), "x": str(id_),
                        "y": str(ff1_63(K256, tweak, id_))})
    return out


def wrap_cases():
    out = []
    for ring in KEYRINGS:
        for type_ in ["ord", "cus", "line_item"]:
            for id_ in IDS:
                if ring["name"] == "single":
                    slot = 1
                    key = bytes.fromhex(KEYS["nist256"])
                else:
                    slot = rotated_slot(id_)
                    key = bytes.fromhex(KEYS["counting" if slot == 0 else "reverse"])
                # Unwrap refuses times past the clock (CLOCK_MS) plus five minutes.
                future = (id_ >> 22) + EPOCH_2026 > CLOCK_MS + 300_000
                out.append({"keyring": ring["name"], "type": type_, "id": str(id_), "slot": slot,
                            "compact": compact(key, slot, type_, id_),
                            "sealed": sealed(key, slot, type_, id_),
                            "unwrap": "IMPLAUSIBLE" if future else "OK"})
    return out


def parse_cases():
    ok = [
        {"text": "ord_c4khywqwtw0xe", "type": "ord", "form": "compact", "slot": 1,
         "body": "4777825412144038830", "canonical": "ord_c4khywqwtw0xe"},
        {"text": "ORD_C4KHYWQWTW0XE", "type": "ord", "form": "compact", "slot": 1,
         "body": "4777825412144038830", "canonical": "ord_c4khywqwtw0xe"},
        {"text": "a_0000000000000", "type": "a", "form": "compact", "slot": 0, "body": "0",
         "canonical": "a_0000000000000"},
        {"text": "line_item_zzzzzzzzzzzzz", "type": "line_item", "form": "compact", "slot": 3,
         "body": str(2**63 - 1), "canonical": "line_item_zzzzzzzzzzzzz"},
        {"text": "x_" + "z" * 26, "type": "x", "form": "sealed", "slot": 3, "body": "ff" * 16,
         "canonical": "x_" + "z" * 26},
    ]
    refusals = [
        ("c4khywqwtw0xe", "NO_TYPE", "no separator"),
        ("_c4khywqwtw0xe", "NO_TYPE", "nothing before the separator"),
        ("or-d_c4khywqwtw0xe", "BAD_TYPE", "'-' in the type"),
        ("ord__c4khywqwtw0xe", "BAD_TYPE", "the type ends with '_'"),
        ("_ord_c4khywqwtw0xe", "BAD_TYPE", "the type starts with '_'"),
        ("a" * 64 + "_c4khywqwtw0xe", "BAD_TYPE", "a type of 64 letters"),
        ("ord_c4khywqwtw0x", "BAD_LENGTH", "12 symbols"),
        ("ord_c4khywqwtw0xee", "BAD_LENGTH", "14 symbols"),
        ("ord_", "BAD_LENGTH", "no symbols"),
        ("ord_c4khywqwtwoxe", "AMBIGUOUS_SYMBOL", "o for 0"),
        ("ord_c4khywqwtwlxe", "AMBIGUOUS_SYMBOL", "l for 1"),
        ("ord_c4khywqwtwixe", "AMBIGUOUS_SYMBOL", "i for 1"),
        ("ord_c4khywqwtwuxe", "AMBIGUOUS_SYMBOL", "u"),
        ("ord_c4khywqwtw-xe", "BAD_SYMBOL", "a hyphen"),
        ("ord_c4khywqwtw0x*", "BAD_SYMBOL", "a check symbol is not part of the format"),
        ("ord_c4khywqwtw0xe ", "BAD_LENGTH", "a trailing space is a fourteenth symbol"),
    ]
    return ok, [{"text": t, "reason": r, "error": "INVALID_ARGUMENT", "note": n} for t, r, n in refusals]


def unwrap_refusals():
    single_key = bytes.fromhex(KEYS["nist256"])
    good_sealed = sealed(single_key, 1, "ord", IDS[0])
    flipped = good_sealed[:-1] + ("0" if good_sealed[-1] != "0" else "1")
    return [
        {"keyring": "single", "text": sealed(single_key, 1, "ord", IDS[0]).replace("ord_", "cus_"),
         "reason": "FORGED", "error": "INVALID_ARGUMENT", "note": "a sealed ord id relabelled cus"},
        {"keyring": "single", "text": flipped, "reason": "FORGED", "error": "INVALID_ARGUMENT",
         "note": "a sealed id with its last symbol changed"},
        {"keyring": "single", "text": compact(single_key, 0, "ord", IDS[0]), "reason": "UNKNOWN_KEY",
         "error": "NOT_FOUND", "note": "slot 0 holds no key"},
        {"keyring": "single", "text": "ord_" + base32(1 << 63 | ff1_63(single_key, TWEAK_PREFIX + b"ord", 0), 13),
         "reason": "IMPLAUSIBLE", "error": "OUT_OF_RANGE", "note": "unwraps to 0"},
    ]


KEYRING_REFUSALS = [
    ("", "empty"),
    ("snowid-public-id-keys 2\n", "unknown format version"),
    ("1 primary 2026-01-01T00:00:00Z a " + KEYS["nist256"] + "\n", "no header"),
    ("snowid-public-id-keys 1\n0 active 2026-01-01T00:00:00Z a " + KEYS["nist256"] + "\n", "no primary"),
    ("snowid-public-id-keys 1\n4 primary 2026-01-01T00:00:00Z a " + KEYS["nist256"] + "\n", "slot 4"),
    ("snowid-public-id-keys 1\n0 primary 2026-01-01T00:00:00Z a " + KEYS["nist256"][:62] + "\n",
     "a 31-byte key"),
    ("snowid-public-id-keys 1\n0 primary 2026-01-01T00:00:00Z a " + KEYS["nist256"] + "\n"
     "1 active 2026-01-01T00:00:00Z b " + KEYS["nist256"] + "\n", "the same key twice"),
    ("snowid-public-id-keys 1\n0 primary 2026-01-01T00:00:00Z a " + KEYS["nist256"] + "\n"
     "0 active 2026-01-01T00:00:00Z b " + KEYS["counting"] + "\n", "slot 0 twice"),
    ("snowid-public-id-keys 1\n0 primary 2026-01-01T00:00:00Z a " + KEYS["nist256"] + "\n"
     "1 primary 2026-01-01T00:00:00Z b " + KEYS["counting"] + "\n", "two primaries"),
    ("snowid-public-id-keys 1\npolicy oldest\n0 primary 2026-01-01T00:00:00Z a " + KEYS["nist256"] + "\n",
     "unknown policy"),
]


def public_ids_file():
    ok, refusals = parse_cases()
    return {
        "schema": "snowid-vectors/public_ids/1",
        "note": "test keys only",
        "clock_ms": CLOCK_MS,
        "keys": [{"name": k, "key": v, "fingerprint": fingerprint(bytes.fromhex(v)),
                  "sealing_key": sealing_key(bytes.fromhex(v)).hex()} for k, v in KEYS.items()],
        "ff1_63": ff1_cases(),
        "keyrings": KEYRINGS,
        "wraps": wrap_cases(),
        "parse": ok,
        "parse_errors": refusals,
        "unwrap_errors": unwrap_refusals(),
        "keyring_errors": [{"text": t, "error": "INVALID_ARGUMENT", "note": n} for t, n in KEYRING_REFUSALS],
    }
