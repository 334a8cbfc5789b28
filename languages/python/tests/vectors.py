"""Loads the shared vectors from the repository's vectors/ folder.

The folder is found relative to this package (languages/python/tests ->
vectors/), or from SNOWID_VECTORS. A file that is not there yet (a newer
vector set) makes load() return None, and its tests say so when skipped.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from snowid import PRESETS, Layout


def vectors_dir() -> Path:
    env = os.environ.get("SNOWID_VECTORS")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[3] / "vectors"


def load(name: str) -> Any | None:
    path = vectors_dir() / f"{name}.json"
    if not path.exists():
        return None
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def require(name: str) -> Any:
    data = load(name)
    if data is None:
        raise AssertionError(f"vectors file {name}.json missing from {vectors_dir()}")
    return data


def layout_from_spec(spec: dict[str, Any]) -> Layout:
    return Layout(
        [(f["name"], f["role"], f["width"]) for f in spec["fields"]],
        epoch_ms=spec["epoch_ms"],
        unit_ms=spec["unit_ms"],
        decode_only=spec["decode_only"],
        name=spec.get("name", ""),
    )


def layouts() -> dict[str, Layout]:
    out: dict[str, Layout] = {}
    for spec in require("layouts")["layouts"]:
        out[spec["name"]] = PRESETS[spec["name"]] if spec["preset"] else layout_from_spec(spec)
    return out
