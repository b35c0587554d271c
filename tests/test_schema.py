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
