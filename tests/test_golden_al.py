"""The shipped InferenceX golden acceptance-length curves: unmodified copies, and what the loader reads from them."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
import yaml

from analysis import golden_al

FOLDER = Path(__file__).resolve().parents[1] / "data" / "specs" / "golden_al"


def _provenance_rows() -> dict[str, str]:
    """file -> git blob id, from the table in PROVENANCE.md."""
    text = (FOLDER / "PROVENANCE.md").read_text()
    return dict(re.findall(r"^\| `([^`]+\.yaml)` \|.*\| `([0-9a-f]{40})` \|$", text, re.MULTILINE))


def test_every_shipped_file_is_the_upstream_blob():
    rows = _provenance_rows()
    shipped = sorted(p.name for p in FOLDER.glob("*.yaml"))
    assert sorted(rows) == shipped and len(shipped) == 10
    for name, blob in rows.items():
        data = (FOLDER / name).read_bytes()
        assert hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest() == blob, name


def test_licence_is_shipped_beside_them():
    text = (FOLDER / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "licensed under the Apache License 2.0" in (FOLDER / "PROVENANCE.md").read_text()


def test_the_table_holds_every_value_of_every_file():
    table = golden_al.golden_table()
    expected = []
    for path in sorted(FOLDER.glob("*.yaml")):
        for model, modes in yaml.safe_load(path.read_text()).items():
            for mode, values in modes.items():
                expected += [(path.name, model, mode, d, al) for d, al in values.items()]
    got = list(table[["file", "model", "mode", "draft_tokens", "acceptance_length"]].itertuples(index=False,
                                                                                                 name=None))
    assert sorted(got) == sorted(expected) and len(got) == 122
    assert set(table["method"]) == {"mtp", "eagle3", "dspark"}
    assert table["source_run"].str.startswith("https://github.com/SemiAnalysisAI/InferenceX/actions/runs/").all()
    assert (table["acceptance_length"] >= 1).all()
    assert (table["acceptance_length"] <= table["draft_tokens"] + 1).all()


def test_methods_come_from_each_file_header():
    methods = {c.file: c.method for c in golden_al.golden_curves()}
    assert methods["dsv4_mtp.yaml"] == "mtp"
    assert methods["kimik2.5_eagle3.yaml"] == "eagle3"
    assert methods["kimik3_dspark.yaml"] == "dspark"
    assert methods["dsv41flash_dspark.yaml"] == "dspark"  # named on a "# method: dspark | ..." line


def test_the_seed_claims_own_model_has_its_golden_curve():
    """DeepSeek-V4.1-Flash's DSpark curve (InferenceX #2964): the value the AgentX lane pins its DSpark runs to,
    3.51 at 5 drafted with thinking on, transcribed as the file gives it."""
    al, curve, _ = golden_al.golden_for("DeepSeek-V4.1-Flash", "dspark", 5)
    assert al == 3.51 and curve.file == "dsv41flash_dspark.yaml" and curve.mode == "thinking_on"
    assert dict(curve.values) == {1: 1.81, 2: 2.43, 3: 2.90, 4: 3.26, 5: 3.51}
    assert curve.source_run == "https://github.com/SemiAnalysisAI/InferenceX/actions/runs/34493175056"
    off = golden_al.golden_for("DeepSeek-V4.1-Flash", "dspark", 5, mode="thinking_off")[0]
    assert off == 4.07 and golden_al.golden_for("DeepSeek-V4.1-Flash", "dspark", 6) is None  # 6-8 rejected


def test_golden_for_matches_the_values_the_agentx_recipes_pin():
    # the same values the real recipes in tests/data/launch force (see its README)
    assert golden_al.golden_for("DeepSeek-V4-Pro", "mtp", 3)[0] == 2.49
    assert golden_al.golden_for("nvidia/GLM-5.2-NVFP4", "mtp", 5)[0] == 3.61
    value, curve, others = golden_al.golden_for("MiniMax-M3", "eagle3", 3)
    assert (value, curve.file, others) == (2.83, "minimaxm3_eagle3.yaml", 1)  # the base curve; the GQA one counted
    assert golden_al.golden_for("MiniMax-M3", "eagle3", 3, mode="thinking_off")[0] == 2.93
    assert golden_al.golden_for("Kimi-K2.5", "eagle3", 4)[0] == 3.24  # the upstream README's example value


@pytest.mark.parametrize("model, method, draft", [
    ("DeepSeek-V4-Flash", "mtp", 3),  # no curve for Flash
    ("DeepSeek-V4-Pro", "eagle3", 3),  # the model's curve is MTP
    ("DeepSeek-V4-Pro", "mtp", 9),  # drafted beyond the curve
    ("DeepSeek-V4-Pro", "mtp", None),
])
def test_golden_for_gives_nothing_it_does_not_hold(model, method, draft):
    assert golden_al.golden_for(model, method, draft) is None


def test_a_broken_curve_names_the_file_and_key(tmp_path):
    # MADE, in the shape of dsv4_mtp.yaml: an acceptance length above drafted + 1
    (tmp_path / "made_bad.yaml").write_text("# key = num_speculative_tokens (MTP level); value = golden AL\n"
                                            "some-model:\n  thinking_on:\n    1: 1.8\n    2: 3.5\n")
    with pytest.raises(golden_al.GoldenError, match=r"made_bad.yaml: some-model.thinking_on.2: .* \[1, 3\]"):
        golden_al.golden_curves(tmp_path)
