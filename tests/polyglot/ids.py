"""The default layout (docs/id-format.md): 1 sign, 41 time, 2 region, 8 host, 12 sequence bits,
milliseconds since 2026-01-01T00:00:00Z. Every driver issues in it."""

EPOCH_UNIX_MS = 1767225600000  # 2026-01-01T00:00:00Z


def unix_ms(id_):
    """The Unix ms of the tick an id was issued in."""
    return (id_ >> 22) + EPOCH_UNIX_MS


def worker(id_):
    """(region, host) of an id."""
    return ((id_ >> 20) & 0x3, (id_ >> 12) & 0xFF)


def sequence(id_):
    return id_ & 0xFFF
