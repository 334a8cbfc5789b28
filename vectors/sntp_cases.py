"""SNTP wire vectors, derived from RFC 4330 and RFC 5905 alone.

The packet layout (RFC 5905 figure 8), the 64-bit timestamp format (seconds
since 1900 and a 32-bit fraction, eras of 2^32 s), the client request (LI 0,
version 4, mode 3, the transmit timestamp echoed back as the origin), the
reply checks of RFC 4330 section 5 and the on-wire arithmetic of RFC 5905
section 8:

    offset = ((T2 - T1) + (T3 - T4)) / 2     delay = (T4 - T1) - (T3 - T2)

Times are Unix nanoseconds. A reply's T2 and T3 are read in the era that puts
them nearest T1 (the local clock), so a reply across the 2036 rollover still
gives the right offset. The offset is halved toward zero.
"""

import datetime

NTP_UNIX = 2_208_988_800
ERA = 1 << 32
NS = 1_000_000_000


def unix_ns(text):
    """'2026-12-02T12:00:00Z' plus an optional nanosecond count."""
    t = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    return int(t.timestamp()) * NS


def to_ntp(ns):
    """(seconds mod 2^32, fraction rounded to the nearest) of a Unix time."""
    total = ns + NTP_UNIX * NS
    seconds, nanos = divmod(total, NS)
    fraction = ((nanos << 32) + NS // 2) // NS
    if fraction >= ERA:
        fraction -= ERA
        seconds += 1
    return seconds % ERA, fraction


def from_ntp(seconds, fraction, near_ns):
    """The Unix time of an NTP timestamp in the era nearest `near_ns`."""
    near = near_ns // NS + NTP_UNIX
    era = near // ERA
    best = min((e * ERA + seconds for e in (era - 1, era, era + 1)), key=lambda c: abs(c - near))
    return (best - NTP_UNIX) * NS + ((fraction * NS + (1 << 31)) >> 32)


def ts_bytes(seconds, fraction):
    return seconds.to_bytes(4, "big") + fraction.to_bytes(4, "big")


def short(ns):
    """A 16.16 fixed-point count of seconds (root delay, dispersion)."""
    return ((ns << 16) // NS).to_bytes(4, "big")


def packet(li=0, vn=4, mode=4, stratum=2, poll=6, precision=-20, root_delay=0,
           root_dispersion=0, refid=b"\x7f\x00\x00\x01", reference=(0, 0), origin=(0, 0),
           receive=(0, 0), transmit=(0, 0), extra=b""):
    head = bytes([(li << 6) | (vn << 3) | mode, stratum, poll & 0xFF, precision & 0xFF])
    return (head + short(root_delay) + short(root_dispersion) + refid + ts_bytes(*reference)
            + ts_bytes(*origin) + ts_bytes(*receive) + ts_bytes(*transmit) + extra)


def halve(n):
    return n // 2 if n >= 0 else -((-n) // 2)


SENT = (0x8F3C_5A21, 0x1D2E_3F41)  # the request's transmit: a nonce, not a time


def reply_case(name, t1, t4, reply, **expect):
    return {"name": name, "sent": ts_bytes(*SENT).hex(), "t1_unix_ns": str(t1),
            "t4_unix_ns": str(t4), "reply": reply.hex(), "expect": expect}


def exchange(name, t1, out_ns, server_offset_ns, hold_ns, back_ns, note, **fields):
    """A reply from a server `server_offset_ns` ahead of the local clock,
    the request taking `out_ns`, the server holding it `hold_ns`, the reply
    taking `back_ns`."""
    t2_true = t1 + out_ns + server_offset_ns
    t3_true = t2_true + hold_ns
    t4 = t1 + out_ns + hold_ns + back_ns
    receive, transmit = to_ntp(t2_true), to_ntp(t3_true)
    reply = packet(origin=SENT, receive=receive, transmit=transmit,
                   reference=to_ntp(t2_true - 16 * NS), **fields)
    t2 = from_ntp(*receive, t1)
    t3 = from_ntp(*transmit, t1)
    delay = (t4 - t1) - (t3 - t2)
    offset = halve((t2 - t1) + (t3 - t4))
    case = reply_case(name, t1, t4, reply, t2_unix_ns=str(t2), t3_unix_ns=str(t3),
                      offset_ns=str(offset), delay_ns=str(delay))
    case["note"] = note
    return case


def refused(name, reply, failure, code, kiss="", note=""):
    t1 = unix_ns("2026-12-02T12:00:00Z")
    case = reply_case(name, t1, t1 + 200_000, reply, failure=failure, code=code, kiss=kiss)
    if note:
        case["note"] = note
    return case


def sntp_file():
    base = unix_ns("2026-12-02T12:00:00Z")  # refused() sends at this T1
    t1 = base + 123_456_789
    rollover = (ERA - NTP_UNIX) * NS  # 2036-02-07T06:28:16Z
    good_times = (to_ntp(t1 + 100_000), to_ntp(t1 + 120_000))
    good = dict(origin=SENT, receive=good_times[0], transmit=good_times[1])
    cases = [
        exchange("server 1.5 ms ahead, symmetric path", t1, 100_000, 1_500_000, 20_000, 100_000,
                 "offset +1.5 ms; delay 200 us (the 20 us the server held it do not count)",
                 root_delay=2_000_000, root_dispersion=500_000),
        exchange("server 250 ms behind, asymmetric path", t1, 30_000, -250_000_000, 5_000,
                 470_000, "the asymmetry (440 us) shifts the offset by half of it: "
                 "-250.22 ms, within offset +- delay/2 of the truth"),
        exchange("a version 3 server is accepted", t1, 50_000, 0, 1_000, 50_000,
                 "RFC 4330: a version 3 reply to a version 4 request", vn=3),
        exchange("extension fields or a MAC after 48 bytes are ignored", t1, 50_000, 7_000, 1_000,
                 50_000, "a 20-byte key id and digest follow the header", extra=bytes(20)),
        exchange("2036: local clock before the rollover, server's times after it",
                 rollover - 3_000_000, 100_000, 10_000_000, 10_000, 100_000,
                 "the server's seconds wrapped to 0 (era 1); read in the era nearest T1"),
        exchange("2036: local clock after the rollover, server's times before it",
                 rollover + 2_000_000, 100_000, -10_000_000, 10_000, 100_000,
                 "the server's seconds are near 2^32 - 1 (era 0)"),
        refused("Kiss-o'-Death DENY: stop asking",
                packet(li=3, stratum=0, refid=b"DENY", **good), "kiss_of_death",
                "FAILED_PRECONDITION", "DENY", "RFC 5905 7.4: DENY and RSTR mean stop"),
        refused("Kiss-o'-Death RSTR: stop asking",
                packet(li=3, stratum=0, refid=b"RSTR", **good), "kiss_of_death",
                "FAILED_PRECONDITION", "RSTR"),
        refused("Kiss-o'-Death RATE: slow down",
                packet(li=3, stratum=0, refid=b"RATE", **good), "kiss_of_death", "UNAVAILABLE",
                "RATE", "RATE means poll less often"),
        refused("Kiss-o'-Death with another code", packet(stratum=0, refid=b"INIT", **good),
                "kiss_of_death", "UNAVAILABLE", "INIT"),
        refused("leap indicator 3: the server is not synchronised",
                packet(li=3, stratum=2, **good), "unsynchronised", "UNAVAILABLE"),
        refused("stratum 16: unsynchronised", packet(stratum=16, **good), "unsynchronised",
                "UNAVAILABLE"),
        refused("the origin does not echo the request's transmit",
                packet(origin=(SENT[0], SENT[1] ^ 1), receive=good_times[0],
                       transmit=good_times[1]), "bad_origin", "INVALID_ARGUMENT",
                note="a stale or forged reply"),
        refused("a transmit timestamp of zero",
                packet(origin=SENT, receive=good_times[0]), "zero_time", "INVALID_ARGUMENT"),
        refused("a receive timestamp of zero",
                packet(origin=SENT, transmit=good_times[1]), "zero_time", "INVALID_ARGUMENT"),
        refused("the server's interval exceeds the round trip: negative delay",
                packet(origin=SENT, receive=to_ntp(base - 1_000_000),
                       transmit=to_ntp(base + 1_000_000)), "negative_delay", "INVALID_ARGUMENT",
                note="T3 - T2 = 2 ms but T4 - T1 = 200 us"),
        refused("mode 3 (a client request) is not a reply", packet(mode=3, **good), "not_server",
                "INVALID_ARGUMENT"),
        refused("mode 5 (broadcast) is not a reply to us", packet(mode=5, **good), "not_server",
                "INVALID_ARGUMENT"),
        refused("version 2 is refused", packet(vn=2, **good), "not_server", "INVALID_ARGUMENT"),
        refused("47 bytes are not a packet", packet(**good)[:47], "malformed",
                "INVALID_ARGUMENT"),
        refused("an empty datagram", b"", "malformed", "INVALID_ARGUMENT"),
    ]
    timestamps = []
    for text, extra, near in [
        ("1970-01-01T00:00:00Z", 0, "2026-01-01T00:00:00Z"),
        ("2026-12-02T12:00:00Z", 500_000_000, "2026-12-02T12:00:00Z"),
        ("2026-12-02T12:00:00Z", 1, "2026-12-02T12:00:00Z"),
        ("2026-12-02T12:00:00Z", 999_999_999, "2026-12-02T12:00:00Z"),
        ("2036-02-07T06:28:15Z", 999_999_999, "2036-02-07T06:28:16Z"),
        ("2036-02-07T06:28:16Z", 0, "2036-02-07T06:28:15Z"),
        ("2036-02-07T06:28:17Z", 250_000_000, "2036-02-07T06:28:16Z"),
        ("2100-01-01T00:00:00Z", 0, "2099-06-01T00:00:00Z"),
    ]:
        ns = unix_ns(text) + extra
        s, f = to_ntp(ns)
        timestamps.append({"unix_ns": str(ns), "ntp": ts_bytes(s, f).hex(),
                           "near_unix_ns": str(unix_ns(near)),
                           "read_back_unix_ns": str(from_ntp(s, f, unix_ns(near)))})
    request = bytes([0x23]) + bytes(39) + ts_bytes(*SENT)
    return {
        "schema": "snowid-vectors/sntp/1",
        "request": {"transmit": ts_bytes(*SENT).hex(), "bytes": request.hex()},
        "timestamps": timestamps,
        "replies": cases,
    }
