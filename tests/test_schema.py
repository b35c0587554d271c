"""Points-table validation: units by name, clear field errors, derived columns."""

import math

import pytest

from analysis.schema import FieldError, scope_for, to_points, validate_row


def test_validate_names_the_field_and_reason():
    with pytest.raises(FieldError) as err:
        validate_row({"tpot_ms_p50": "fast"})
    assert err.value.field == "tpot_ms_p50" and "expected a number" in err.value.reason
    with pytest.raises(FieldError, match="Infinity"):
        validate_row({"output_tok_s": math.inf})
    with pytest.raises(FieldError, match=">= 0"):
        validate_row({"ttft_ms_p50": -3})
    with pytest.raises(FieldError, match="> 0"):
        validate_row({"n_gpus": 0})
    with pytest.raises(FieldError, match="not a column"):
        validate_row({"tokens_per_sec": 1})
    with pytest.raises(FieldError, match="unknown precision"):
        validate_row({"precision": "fp3"})


def test_numbers_with_thousands_separators_and_precision_aliases():
    row = validate_row({"output_tok_s": "1,146.31", "precision": "NVFP4", "disagg": "false"})
    assert row["output_tok_s"] == pytest.approx(1146.31)
    assert row["precision"] == "fp4" and row["disagg"] is False


def test_derived_columns():
    points = to_points([validate_row({"tpot_ms_p50": 20.0, "output_tok_s": 4000.0, "n_gpus": 8.0})])
    row = points.iloc[0]
    assert row["tok_s_per_user"] == pytest.approx(50.0) and row["tok_s_per_user_def"] == "1000/tpot_ms_p50"
    assert row["tok_s_per_gpu"] == pytest.approx(500.0) and row["gpu_denominator"] == "all"
    assert row["scope"] == "node"


@pytest.mark.parametrize("n, domain, expected", [(1, 8, "single-gpu"), (8, 8, "node"), (72, 72, "rack"),
                                                  (16, 8, "multi-node"), (144, 72, "multi-node")])
def test_scope_classes(n, domain, expected):
    assert scope_for(n, domain) == expected


# --- the flag registry ----------------------------------------------------------------------------
import re  # noqa: E402
from pathlib import Path  # noqa: E402

import pandas as pd  # noqa: E402

from analysis import schema  # noqa: E402
from analysis.schema import FLAGS, UNTRUSTED_FLAGS, has_flag, trusted  # noqa: E402

ANALYSIS = Path(schema.__file__).parent
# Every way code in analysis/ writes a flag name: add_flag(x, "name"), "flags": "a;b", flags.append("name"),
# flags = ["name"], row["flags"] = "name", APPROX_FLAG = "name", "name" if ... else "" (as a flags value).
_EMIT = [
    re.compile(r'add_flag\([^()]*?,\s*"([a-z0-9-]+)"\)'),
    re.compile(r'"flags":\s*"([a-z0-9;-]*)"'),
    re.compile(r'flags\.append\("([a-z0-9-]+)"\)'),
    re.compile(r'flags\s*=\s*\["([a-z0-9-]+)"\]'),
    re.compile(r'\["flags"\]\s*=\s*"([a-z0-9;-]+)"'),
    re.compile(r'_FLAG\s*=\s*"([a-z0-9-]+)"'),
    re.compile(r'"flags":\s*"([a-z0-9-]+)" if'),
    re.compile(r'\["flags"\]\s*=\s*"([a-z0-9-]+)" if'),
    re.compile(r'\["flags"\]\s*=\s*"" if [^\n]*? else "([a-z0-9-]+)"'),
    re.compile(r'for f in \(row\["flags"\], "([a-z0-9-]+)"\)'),
]


def _emitted_flags() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in ANALYSIS.rglob("*.py"):
        text = path.read_text()
        for pattern in _EMIT:
            for match in pattern.finditer(text):
                for name in match.group(1).split(";"):
                    if name:
                        found.setdefault(name, set()).add(path.name)
    return found


def test_every_flag_written_anywhere_in_the_code_is_registered():
    emitted = _emitted_flags()
    assert {"failed-run", "percentile-inverted", "request-rate-inf", "invalid-result", "shard-measured",
            "concurrency-achieved", "high-error-rate", "was-cancelled"} <= set(emitted)  # the scan sees them
    unknown = {name: sorted(where) for name, where in emitted.items() if name not in FLAGS}
    assert not unknown, f"flags written but not in schema.FLAGS: {unknown}"


def test_every_flag_in_ingested_fixtures_is_registered():
    from conftest import RAW, TEST_DATA

    from analysis.ingest import ingest

    points = pd.concat([ingest([TEST_DATA / "formats"]).points, ingest([RAW]).points])
    seen = set(points["flags"].str.split(";").explode()) - {""}
    assert seen and seen <= set(FLAGS), seen - set(FLAGS)


def test_registry_entries_are_complete_and_levels_known():
    for flag in FLAGS.values():
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", flag.name)
        assert flag.level in schema.FLAG_LEVELS and len(flag.meaning) > 20
        # A note never removes a point for doubt; the one note that does is a duplicate kept for the history report.
        assert not (flag.untrusted and flag.level == "note") or flag.name == "dated-history", flag.name
    # a tool's property is a note, not a warning (issue 14); doubtful points are warnings
    assert FLAGS["percentile-inverted"].level == "note" and not FLAGS["percentile-inverted"].untrusted
    assert FLAGS["invalid-result"].untrusted and FLAGS["failed-run"].untrusted


def test_trusted_follows_the_registry():
    names = list(FLAGS)
    points = to_points([{"model": "m", "flags": name} for name in names] + [{"model": "m", "flags": ""}])
    mask = trusted(points)
    for i, name in enumerate(names):
        assert mask.iloc[i] == (name not in UNTRUSTED_FLAGS), name
        assert has_flag(points, name).iloc[i]
    assert mask.iloc[-1]


def test_ingest_report_lists_warnings_before_notes_with_the_registry_meaning():
    from analysis import inventory

    points = to_points([{"model": "m", "flags": "percentile-inverted"}] * 3
                       + [{"model": "m", "flags": "failed-run;percentile-inverted"}, {"model": "m", "flags": "x-y"}])
    table = inventory.flag_counts(points)
    assert list(table["flag"]) == ["failed-run", "x-y", "percentile-inverted"]
    assert list(table["kind"]) == ["warning", "warning", "note"]
    assert list(table["points"]) == [1, 1, 4]
    assert list(table["left_out_of_fits"]) == ["yes", "no", "no"]
    assert table["meaning"].iloc[2] == FLAGS["percentile-inverted"].meaning
    assert "not a flag perfclaims defines" in table["meaning"].iloc[1]
    assert inventory.untrusted_count(points) == 1
