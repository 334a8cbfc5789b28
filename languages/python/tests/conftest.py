"""Test settings: Hypothesis keeps no example database in the source tree."""

from __future__ import annotations

from hypothesis import settings

settings.register_profile("snowid", database=None, print_blob=True)
settings.load_profile("snowid")
