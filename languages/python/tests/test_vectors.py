"""The shared static vectors: layouts, ids, text, bounds, shards, histories."""

from __future__ import annotations

import pytest

import snowid
from snowid import Code, LayoutHistory, SnowidError
from snowid._time import format_ms

from . import vectors

LAYOUTS = vectors.layouts()
LAYOUT_VECTORS = vectors.require("layouts")
IDS = vectors.require("ids")
BOUNDS = vectors.require("bounds")
SHARDS = vectors.require("shards")
HISTORIES = vectors.require("histories")


def code_of(excinfo: pytest.ExceptionInfo[SnowidError]) -> str:
    return excinfo.value.code.name


@pytest.mark.parametrize("spec", LAYOUT_VECTORS["layouts"], ids=lambda s: s["name"])
def test_layout_properties(spec):
    built = [vectors.layout_from_spec(spec)]
    if spec["preset"]:
        built.append(snowid.preset(spec["name"]))
    for layout in built:
        assert [(f.name, f.role, f.width, f.shift) for f in layout.fields] == [
            (f["name"], f["role"], f["width"], f["shift"]) for f in spec["fields"]
        ]
        assert layout.total_width == spec["total_width"]
        assert layout.max_id == int(spec["max_id"])
        assert layout.max_ticks == int(spec["max_ticks"])
        assert layout.can_generate == spec["can_generate"]
        assert layout.regions == spec["regions"]
        assert layout.workers_per_region == spec["workers_per_region"]
        assert layout.sequence_capacity == spec["sequence_capacity"]
        assert layout.end_of_life_ms == spec["end_of_life_ms"]
        assert format_ms(layout.end_of_life_ms) == spec["end_of_life"]


@pytest.mark.parametrize(
    "case", LAYOUT_VECTORS["invalid_layouts"], ids=lambda c: c["reason"] + ":" + c["description"]
)
def test_invalid_layouts(case):
    with pytest.raises(SnowidError) as e:
        vectors.layout_from_spec(case["spec"])
    assert code_of(e) == case["error"]


@pytest.mark.parametrize("case", LAYOUT_VECTORS["checks"], ids=lambda c: c["note"])
def test_layout_checks(case):
    layout = LAYOUTS[case["layout"]]
    if "error" in case:
        with pytest.raises(SnowidError) as e:
            layout.check(case["now_ms"])
        assert code_of(e) == case["error"]
        return
    report = layout.check(case["now_ms"])
    assert bool(report.warnings) == (case["outcome"] == "end_of_life_warning")


@pytest.mark.parametrize("case", IDS["cases"], ids=lambda c: c["note"])
def test_id_cases(case):
    layout = LAYOUTS[case["layout"]]
    id = int(case["id"])
    d = layout.decode(id)
    assert d.fields == {k: int(v) for k, v in case["fields"].items()}
    assert d.ticks == int(case["ticks"])
    assert d.unix_ms == case["unix_ms"]
    assert d.time_text == case["time"]
    assert layout.encode({k: int(v) for k, v in case["fields"].items()}) == id
    if all(f.role != "other" for f in layout.fields):
        assert (
            layout.compose(ticks=d.ticks, region=d.region, host=d.host, sequence=d.sequence) == id
        )
        assert snowid.parse(case["id"]) == id
        assert snowid.format(id) == case["id"]


@pytest.mark.parametrize("case", IDS["decode_errors"], ids=lambda c: c["note"])
def test_decode_errors(case):
    with pytest.raises(SnowidError) as e:
        LAYOUTS[case["layout"]].decode(int(case["id"]))
    assert code_of(e) == case["error"]


@pytest.mark.parametrize("case", IDS["encode_errors"], ids=lambda c: c["note"])
def test_encode_errors(case):
    with pytest.raises(SnowidError) as e:
        LAYOUTS[case["layout"]].encode({k: int(v) for k, v in case["fields"].items()})
    assert code_of(e) == case["error"]


@pytest.mark.parametrize("case", IDS["parse"], ids=lambda c: c["note"])
def test_parse(case):
    layout = LAYOUTS[case["layout"]] if "layout" in case else None
    assert snowid.parse(case["text"], layout) == int(case["id"])


@pytest.mark.parametrize("case", IDS["parse_errors"], ids=lambda c: c["note"])
def test_parse_errors(case):
    layout = LAYOUTS[case["layout"]] if "layout" in case else None
    with pytest.raises(SnowidError) as e:
        snowid.parse(case["text"], layout)
    assert code_of(e) == case["error"]


@pytest.mark.parametrize("case", BOUNDS["cases"], ids=lambda c: c["note"])
def test_bounds(case):
    layout = LAYOUTS[case["layout"]]
    assert layout.ticks_at_ms(case["unix_ms"]) == int(case["ticks"])
    assert layout.bounds(case["unix_ms"]) == (int(case["min_id"]), int(case["max_id"]))


@pytest.mark.parametrize("case", BOUNDS["errors"], ids=lambda c: c["note"])
def test_bounds_errors(case):
    layout = LAYOUTS[case["layout"]]
    for f in (layout.min_id, layout.max_id_at):
        with pytest.raises(SnowidError) as e:
            f(case["unix_ms"])
        assert code_of(e) == case["error"]


def test_shard_mix():
    for case in SHARDS["mix"]:
        assert snowid.mix64(int(case["id"])) == int(case["mixed"])


@pytest.mark.parametrize("case", SHARDS["cases"], ids=lambda c: f"{c['id']}/{c['shards']}")
def test_shards(case):
    assert snowid.shard(int(case["id"]), case["shards"]) == case["shard"]


@pytest.mark.parametrize("case", HISTORIES["histories"], ids=lambda c: c["description"])
def test_histories(case):
    eras = [(e["cutover_ms"], LAYOUTS[e["layout"]]) for e in case["eras"]]
    if "error" in case:
        with pytest.raises(SnowidError) as e:
            LayoutHistory(eras)
        assert code_of(e) == case["error"]
        return
    h = LayoutHistory(eras)
    assert list(h.first_ids) == [int(x) for x in case["first_ids"]]
    for d in case.get("decode", []):
        assert h.era_of(int(d["id"])) == d["era"]
        assert h.decode(int(d["id"])).unix_ms == d["unix_ms"]


def test_worked_example_of_the_format_document():
    id = snowid.compose(unix_ms=1773500966535, region=2, host=17, sequence=42)
    assert id == 26320794961383466
    p = snowid.decode(id)
    assert (p.unix_ms, p.region, p.host, p.sequence, p.worker) == (
        1773500966535,
        2,
        17,
        42,
        2 * 256 + 17,
    )
    assert snowid.shard(id, 16) == 14 and snowid.shard(id, 1000) == 917


def test_compose_refuses_values_that_do_not_fit():
    for kwargs in ({"region": 4}, {"host": 256}, {"sequence": 4096}, {"unix_ms": 1767225599999}):
        args = {"unix_ms": 1773500966535, **kwargs}
        with pytest.raises(SnowidError) as e:
            snowid.compose(**args)
        assert e.value.code is Code.OUT_OF_RANGE and not e.value.retryable
