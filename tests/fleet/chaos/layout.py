"""The id layout of the run and decoding of its ids.

The harness runs the fleet on a layout with 3 host bits by default (8 worker ids per region,
--host-bits), not the default 8: with 3 daemons in a region, lost leases, restarts on fresh state
directories and fences then hand the same few worker ids from daemon to daemon all the time, so
that every rule that keeps successive holders of one id apart is exercised, where with 256 ids a
daemon would almost never meet an id another one had used. The time field keeps its 41 bits and
its place, and the region its 2 bits, as in the default layout; the sequence takes the rest.
"""

import json

EPOCH_MS = 1767225600000  # 2026-01-01T00:00:00Z, the default layout's epoch
TIME_BITS = 41
REGION_BITS = 2


class Layout:
    def __init__(self, host_bits):
        if not 1 <= host_bits <= 8:
            raise ValueError("host bits must be 1 to 8")
        self.host_bits = host_bits
        self.seq_bits = 63 - TIME_BITS - REGION_BITS - host_bits
        self.host_shift = self.seq_bits
        self.region_shift = self.seq_bits + host_bits
        self.time_shift = self.region_shift + REGION_BITS
        self.hosts = 1 << host_bits

    def file_text(self):
        return json.dumps(
            {
                "name": f"chaos-h{self.host_bits}",
                "epoch_ms": EPOCH_MS,
                "unit_ms": 1,
                "fields": [
                    {"name": "time", "role": "time", "width": TIME_BITS},
                    {"name": "region", "role": "region", "width": REGION_BITS},
                    {"name": "host", "role": "host", "width": self.host_bits},
                    {"name": "sequence", "role": "sequence", "width": self.seq_bits},
                ],
            }
        )

    def unix_ms(self, id_):
        return (id_ >> self.time_shift) + EPOCH_MS

    def worker(self, id_):
        """(region, host) of an id."""
        return (
            (id_ >> self.region_shift) & ((1 << REGION_BITS) - 1),
            (id_ >> self.host_shift) & (self.hosts - 1),
        )
