"""The cases of fence.json, from the fence-file format (docs/protocol.md, "The fence file")."""

MAGIC = "snowid-fence 1 "
# The last whole millisecond of signed 64-bit nanoseconds since 1970.
MAX_FENCE_MS = (2**63 - 1) // 1_000_000


def read(text):
    """The fence ms of a file's text, or None when the text is refused (DATA_LOSS)."""
    if not text.startswith(MAGIC) or not text.endswith("\n"):
        return None
    value = text[len(MAGIC) : -1]
    if not 1 <= len(value) <= 18 or any(c not in "0123456789" for c in value):
        return None
    ms = int(value)
    return ms if ms <= MAX_FENCE_MS else None


def write(ms):
    return MAGIC + str(ms) + "\n"


VALID = [
    (write(1767225601000), "2026-01-01T00:00:01.000Z"),
    (write(0), "the Unix epoch"),
    (write(MAX_FENCE_MS), "the largest fence"),
    (MAGIC + "0001767225601000\n", "leading zeros are accepted"),
    (MAGIC + "000009223372036854\n", "18 digits, the most there may be"),
    (MAGIC + "0" * 18 + "\n", "18 zeros"),
]

INVALID = [
    ("", "empty file"),
    (MAGIC + "1767225601000", "no line feed"),
    (MAGIC + "1767225601000\n\n", "a second line feed"),
    (MAGIC + "1767225601000\r\n", "carriage return before the line feed"),
    (MAGIC + "1767225601000\nx", "bytes after the line feed"),
    (MAGIC + "1767225601000 \n", "a space after the value"),
    (MAGIC + "\n", "no value"),
    (MAGIC + "+1767225601000\n", "a sign"),
    (MAGIC + "-1\n", "a negative value"),
    (MAGIC + "1.5\n", "a fraction"),
    (MAGIC + "0x10\n", "hexadecimal"),
    (MAGIC + "1767225601\u0000000\n", "a NUL byte inside the value"),
    (MAGIC + "\uff11\n", "a non-ASCII digit"),
    (MAGIC + str(MAX_FENCE_MS + 1) + "\n", "past the largest fence"),
    (MAGIC + "0" * 18 + "1\n", "19 digits, although the value is 1"),
    (MAGIC + "99999999999999999999\n", "20 digits"),
    ("snowid-fence 2 1767225601000\n", "another format version"),
    ("snowid-fence  1 1767225601000\n", "two spaces"),
    ("Snowid-fence 1 1767225601000\n", "the header's case"),
    (" snowid-fence 1 1767225601000\n", "a space before the header"),
    ("snowid-fence 1\n", "no value and no space"),
    ("snowid-mark 1 high_water=1 released_at=2\n", "another snowid file"),
]


def fence_file():
    for text, _ in VALID:
        assert read(text) is not None, text
    for text, _ in INVALID:
        assert read(text) is None, text
    return {
        "schema": "snowid-vectors/fence/1",
        "valid": [{"text": t, "fence_ms": read(t), "note": n} for t, n in VALID],
        "invalid": [{"text": t, "error": "DATA_LOSS", "note": n} for t, n in INVALID],
        "write": [{"fence_ms": ms, "text": write(ms)} for ms in (0, 1767225601000, MAX_FENCE_MS)],
        "write_errors": [{"fence_ms": -1, "error": "INVALID_ARGUMENT", "note": "before 1970"}],
    }
