"""Results over time: the shipped InferenceX history read back, real changes checked against the raw JSON rows,
the noise threshold, the `perfclaims history --json` contract, newest like-for-like evidence and the suite's own
history attributed to inputs or code."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from conftest import RAW

from analysis import cli, history, history_words
from analysis.schema import has_flag, to_points

HISTORY = RAW / "inferencex-history" / "benchmarks-history.json"
SNAPSHOT = RAW / "inferencex" / "benchmarks.json"


# --- the shipped history --------------------------------------------------------------------------------
def test_history_rows_keep_their_date_and_stay_out_of_the_snapshot_reports(raw_points):
    rows = json.loads(HISTORY.read_text())
    hist = raw_points[raw_points["format"] == "inferencex-api-history"].sort_values("source_line")
    assert len(rows) == len(hist) == 1462
    assert hist["date"].tolist() == [r["date"] for r in rows]
    assert hist["date"].nunique() == 64
    assert has_flag(hist, "dated-history").all()
    # the frontier and precision/scope reports select format == inferencex-api: still exactly the snapshot
    assert (raw_points["format"] == "inferencex-api").sum() == len(json.loads(SNAPSHOT.read_text())) == 435


def _raw_values(*, hardware, framework, precision, spec, tp, ep, isl, osl, conc):
    """Date → output tok/s per GPU of one single-node configuration at one concurrency, straight from both JSON
    files (a measurement in both files counts once: same date and run)."""
    seen, out = set(), {}
    for path in (HISTORY, SNAPSHOT):
        for r in json.loads(path.read_text()):
            if (r["hardware"], r["framework"], r["precision"], r["spec_method"], r["disagg"], r["decode_tp"],
                    r["decode_ep"], r["decode_dp_attention"], r["isl"], r["osl"], r["conc"]) != (
                    hardware, framework, precision, spec, False, tp, ep, False, isl, osl, conc):
                continue
            if (r["date"], r["run_url"]) in seen:
                continue
            seen.add((r["date"], r["run_url"]))
            out.setdefault(r["date"], []).append(r["metrics"]["output_tput_per_gpu"])
    return {d: float(np.median(v)) for d, v in sorted(out.items())}


@pytest.fixture(scope="module")
def found(raw_points):
    table = history.series(raw_points)
    noise = history.noise(raw_points)
    return table, noise, history.changes(raw_points, noise_by=noise, table=table)


def _change(changes, group_part: str, metric: str, date_before: str):
    sel = changes[changes["group"].str.contains(group_part, regex=False) & (changes["metric"] == metric)
                  & (changes["date_before"] == date_before)]
    assert len(sel) == 1, sel
    return sel.iloc[0]


def test_a_real_regression_against_the_raw_rows(found):
    _, noise, changes = found
    raw = _raw_values(hardware="mi355x", framework="atom", precision="fp8", spec="mtp", tp=8, ep=1,
                      isl=1024, osl=1024, conc=256)
    dates = list(raw)
    i = dates.index("2026-04-01")
    before, after = raw[dates[i]], raw[dates[i + 1]]  # neighbouring dates of this configuration and concurrency
    assert dates[i + 1] == "2026-05-20"
    assert after / before == pytest.approx(0.504, abs=1e-3)
    row = _change(changes, "MI355X · fp8 · atom · mtp · node · TP8 EP1 · 8 GPUs · 1k/1k",
                  "tok/s/GPU at concurrency 256", "2026-04-01")
    assert row["kind"] == "regression" and row["date_after"] == "2026-05-20"
    assert row["before"] == pytest.approx(before) and row["after"] == pytest.approx(after)
    assert row["ratio"] == pytest.approx(after / before)
    assert abs(math.log(row["ratio"])) > noise["gpu"].threshold
    assert history.Difference("days apart", 49) in row["differs"] and any(d.what == "run" for d in row["differs"])


def _raw_frontier_at(target, *, hardware, framework, precision, tp, isl, osl, date):
    """tok/s/GPU at ``target`` tok/s/user on one date's frontier of one single-node configuration, from the raw
    rows: brute-force Pareto set, then log-log interpolation between the two frontier points around the target."""
    seen, pts = set(), []
    for path in (HISTORY, SNAPSHOT):
        for r in json.loads(path.read_text()):
            if (r["hardware"], r["framework"], r["precision"], r["spec_method"], r["disagg"], r["decode_tp"],
                    r["decode_ep"], r["isl"], r["osl"], r["date"]) != (
                    hardware, framework, precision, "none", False, tp, 1, isl, osl, date):
                continue
            if (r["conc"], r["run_url"]) in seen:
                continue
            seen.add((r["conc"], r["run_url"]))
            pts.append((1.0 / r["metrics"]["median_tpot"], r["metrics"]["output_tput_per_gpu"], r["conc"]))
    front = sorted(p for p in pts if not any(q[0] >= p[0] and q[1] >= p[1] and q != p for q in pts))
    for (u0, g0, c0), (u1, g1, c1) in zip(front[:-1], front[1:]):
        if u0 <= target <= u1:
            w = (math.log(target) - math.log(u0)) / (math.log(u1) - math.log(u0))
            return math.exp(math.log(g0) + w * (math.log(g1) - math.log(g0))), (c0, c1)
    raise AssertionError("target outside the measured range")


def test_a_real_regression_at_equal_interactivity_against_the_raw_rows(found):
    _, _, changes = found
    key = dict(hardware="mi300x", framework="sglang", precision="fp8", tp=8, isl=1024, osl=1024)
    before, conc_a = _raw_frontier_at(25.0, date="2025-12-15", **key)
    after, conc_b = _raw_frontier_at(25.0, date="2026-01-05", **key)
    assert sorted(conc_a) == sorted(conc_b)  # read between the same concurrencies on both dates
    row = _change(changes, "MI300X · fp8 · sglang · node · TP8 EP1 · 8 GPUs · 1k/1k",
                  "tok/s/GPU at 25 tok/s/user", "2025-12-15")
    assert row["kind"] == "regression" and row["date_after"] == "2026-01-05"
    assert row["before"] == pytest.approx(before) and row["after"] == pytest.approx(after)
    assert after / before == pytest.approx(0.531, abs=1e-3)
    assert row["held_on"] == "2026-01-23"


def test_a_real_improvement_against_the_raw_rows(found):
    _, _, changes = found
    raw = _raw_values(hardware="b300", framework="sglang", precision="fp4", spec="none", tp=4, ep=4,
                      isl=8192, osl=1024, conc=128)
    assert list(raw) == ["2026-04-17", "2026-05-13", "2026-05-17", "2026-05-20", "2026-05-22"]
    row = _change(changes, "B300 · fp4 · sglang · node · TP4 EP4 · 4 GPUs · 8k/1k",
                  "tok/s/GPU at concurrency 128", "2026-05-13")
    assert row["kind"] == "improvement" and row["date_after"] == "2026-05-17"
    assert row["before"] == pytest.approx(raw["2026-05-13"]) and row["after"] == pytest.approx(raw["2026-05-17"])
    assert row["ratio"] == pytest.approx(raw["2026-05-17"] / raw["2026-05-13"])  # ×4.76
    # it lasted: the later dates stay near the new level, and it undoes nothing
    assert pd.isna(row["back_on"]) and pd.isna(row["recovers"])
    lasting = history.largest(changes, "improvement", 1, lasting=True).iloc[0]
    assert lasting["group"] == row["group"] and lasting["metric"] == row["metric"]


def test_the_real_noise_threshold_is_never_below_the_same_date_repeats(raw_points, found):
    # the shipped history has 7 same-date repeats that differ by a median 12% in tok/s/GPU, far more than the
    # neighbouring dates' robust spread (a 4.5% threshold): the repeats set the threshold, so changes a repeat
    # already shows are not counted (421 rises and 175 falls before, most of them inside the repeats' own spread)
    _, noise, changes = found
    pairs = history.neighbour_pairs(raw_points)
    rep, nb = pairs[pairs["same_day"]], pairs[~pairs["same_day"]]
    assert history.MIN_REPEAT_PAIRS <= len(rep) < history.MIN_QUIET_PAIRS
    nb_sigma = 1.4826 * np.median(np.abs(nb["log_gpu"]))
    assert noise["gpu"].basis.startswith("repeats on one date") and noise["gpu"].n_pairs == len(rep)
    assert noise["gpu"].sigma == pytest.approx(1.4826 * np.median(np.abs(rep["log_gpu"])))
    assert noise["gpu"].sigma > nb_sigma
    assert noise["gpu"].threshold == pytest.approx(3 * noise["gpu"].sigma)
    assert noise["gpu"].threshold_ratio > math.exp(np.median(np.abs(rep["log_gpu"])))  # beyond the median repeat
    # nothing within the threshold is reported
    limit = changes["metric"].str.startswith("tok/s/user").map({True: noise["user"].threshold,
                                                                False: noise["gpu"].threshold})
    assert (np.abs(np.log(changes["ratio"])) > limit).all()
    assert {"improvement", "regression"} == set(changes["kind"])


# --- synthetic inputs with known answers -----------------------------------------------------------------
def _points(values, *, dates=None, conc=8.0, hardware="B200", tp=8.0, user=None, image="unknown", run=None):
    """One configuration measured once per date with the given tok/s/GPU (8 GPUs) and tok/s/user."""
    dates = dates or [str(pd.Timestamp("2026-01-01") + pd.Timedelta(days=i))[:10] for i in range(len(values))]
    rows = []
    for i, (d, v) in enumerate(zip(dates, values)):
        rows.append({
            "model": "M", "hardware": hardware, "framework": "sglang", "precision": "fp8", "spec_decode": "none",
            "disagg": False, "scope": "node", "isl": 1024.0, "osl": 1024.0, "tp": tp, "ep": 1.0, "dp": 1.0,
            "n_gpus": tp, "n_prefill_gpus": tp, "n_decode_gpus": tp, "concurrency": conc, "date": d,
            "run_id": run[i] if run else f"r{i}", "tok_s_per_user": (user[i] if user else 50.0),
            "output_tok_s": v * tp, "source_file": "synthetic.json", "source_line": i + 1, "tool_version": image,
            "format": "synthetic", "tool": "synthetic",
        })
    return to_points(rows)


def test_noise_threshold_from_neighbouring_dates_finds_the_one_real_step():
    rng = np.random.default_rng(1)
    steps = rng.choice([-1, 1], size=40) * rng.uniform(0.005, 0.02, size=40)
    steps[25] = 0.4  # one real step up
    values = 100 * np.exp(np.concatenate([[0.0], np.cumsum(steps)]))
    pts = _points(values)
    noise = history.noise(pts)["gpu"]
    expected_sigma = 1.4826 * np.median(np.abs(steps))
    assert noise.basis.startswith("neighbouring dates of") and noise.n_pairs == 40
    assert noise.sigma == pytest.approx(expected_sigma)
    found = history.changes(pts, noise_by=history.noise(pts))
    gpu = found[found["metric"] == "tok/s/GPU at concurrency 8"]
    assert len(gpu) == 1 and gpu.iloc[0]["kind"] == "improvement"
    assert gpu.iloc[0]["ratio"] == pytest.approx(math.exp(0.4))
    assert gpu.iloc[0]["date_before"] == "2026-01-26" and gpu.iloc[0]["date_after"] == "2026-01-27"


def test_repeats_on_one_date_set_the_noise_when_there_are_enough():
    # 25 dates, each measured twice; repeats differ by exactly 1% in log, dates drift by 10% per day
    dates, values, runs = [], [], []
    for i in range(25):
        d = str(pd.Timestamp("2026-02-01") + pd.Timedelta(days=i))[:10]
        base = 100 * math.exp(0.1 * i)
        dates += [d, d]
        values += [base, base * math.exp(0.01)]
        runs += [f"a{i}", f"b{i}"]
    noise = history.noise(_points(values, dates=dates, run=runs))["gpu"]
    assert noise.basis == "repeats on one date" and noise.n_pairs == 25
    assert noise.sigma == pytest.approx(1.4826 * 0.01)


def test_a_few_repeats_that_spread_more_than_the_neighbouring_dates_set_the_threshold():
    # 30 dates drifting by ±1%; on 6 of them a second run differs by 12%: the noise is at least the repeats'
    dates, values, runs = [], [], []
    for i in range(30):
        d = str(pd.Timestamp("2026-03-01") + pd.Timedelta(days=i))[:10]
        base = 100 * math.exp(0.01 * (i % 2))
        dates.append(d), values.append(base), runs.append(f"a{i}")
        if i % 5 == 0:
            dates.append(d), values.append(base * math.exp(0.12)), runs.append(f"b{i}")
    noise = history.noise(_points(values, dates=dates, run=runs))["gpu"]
    assert noise.basis.startswith("repeats on one date") and noise.n_pairs == 6
    assert noise.sigma == pytest.approx(1.4826 * 0.12)


def test_unchanged_recorded_images_are_preferred_over_all_neighbouring_dates():
    values = [100 * math.exp(0.002 * (i % 2)) for i in range(30)]
    noise = history.noise(_points(values, image="lmsysorg/sglang:v0.5.9-cu130"))["gpu"]
    assert noise.basis == "neighbouring dates, image recorded and unchanged" and noise.n_pairs == 29
    assert noise.sigma == pytest.approx(1.4826 * 0.002)


def test_differs_names_image_and_framework_version():
    before = _points([100.0], image="lmsysorg/sglang:v0.5.8-cu130").assign(source="a")
    after = _points([150.0], image="lmsysorg/sglang:v0.5.9-cu130").assign(source="b", run_id="r9")
    out = history.differs(before, after, date_before="2026-01-01", date_after="2026-01-11")
    D = history.Difference
    assert out == (D("image", "lmsysorg/sglang:v0.5.8-cu130", "lmsysorg/sglang:v0.5.9-cu130"),
                   D("framework version", "v0.5.8", "v0.5.9"), D("run", ("r0",), ("r9",)), D("days apart", 10))
    assert history_words.differences_text(out) == [
        "image lmsysorg/sglang:v0.5.8-cu130 → lmsysorg/sglang:v0.5.9-cu130", "framework version v0.5.8 → v0.5.9",
        "run r0 → r9", "10 days apart"]


def test_a_frontier_reading_is_not_compared_when_it_sits_between_other_concurrencies():
    # date 1 measures concurrency 2 and 64; date 2 adds 16, which lifts the interpolated frontier at 60 tok/s/user
    rows = _points([10.0, 280.0], dates=["2026-01-01", "2026-01-01"], user=[100.0, 50.0], run=["a", "a"])
    rows = pd.concat([rows.assign(concurrency=[2.0, 64.0]),
                      _points([10.0, 70.0, 280.0], dates=["2026-01-02"] * 3, user=[100.0, 98.0, 50.0],
                              run=["b", "b", "b"]).assign(concurrency=[2.0, 16.0, 64.0])], ignore_index=True)
    table = history.series(rows, levels=[60.0])
    at60 = table[table["metric"] == "tok/s/GPU at 60 tok/s/user"]
    assert list(at60["between"]) == ["2–64", "16–64"] and at60["value"].iloc[1] > 1.5 * at60["value"].iloc[0]
    found = history.changes(rows, levels=[60.0], table=table,
                            noise_by={q: history.Noise(q, "given", 1, 0.01, 0.03) for q in ("user", "gpu")})
    assert not (found["metric"] == "tok/s/GPU at 60 tok/s/user").any()


def test_newest_like_for_like_keeps_each_configurations_newest_date():
    old_b200 = _points([100.0, 120.0], dates=["2026-01-01", "2026-03-01"])
    tp4 = _points([90.0], dates=["2026-02-01"], tp=4.0)
    h200 = _points([50.0], dates=["2026-04-01"], hardware="H200 SXM")
    pts = pd.concat([old_b200, tp4, h200], ignore_index=True)
    got = history.newest_like_for_like(pts, {"model": "M", "hardware": "B200", "isl": 1024})
    assert sorted(zip(got["tp"], got["day"])) == [(4.0, "2026-02-01"), (8.0, "2026-03-01")]
    assert got.loc[got["tp"] == 8.0, "tok_s_per_gpu"].item() == pytest.approx(120.0)
    assert history.newest_like_for_like(pts, {"hardware": "MI355X"}).empty
    with pytest.raises(KeyError):
        history.newest_like_for_like(pts, {"no_such_column": 1})


# --- the command line ---------------------------------------------------------------------------------
def test_history_json_contract(tmp_path, capsys):
    values = [100.0, 101.0, 100.0, 101.0, 100.0, 200.0, 202.0, 200.0, 202.0, 200.0]
    pts = _points(values, user=[40.0] * 10)  # below every interactivity level: only equal-concurrency values
    path = tmp_path / "points.parquet"
    pts.to_parquet(path)
    assert cli.main(["history", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc) == {"series", "changes"}
    assert all(set(s) == {"group", "date", "metric", "value", "source"} for s in doc["series"])
    assert len(doc["series"]) == 10 * 2  # tok/s/user and tok/s/GPU at concurrency 8 on each of 10 dates
    assert len(doc["changes"]) == 1
    change = doc["changes"][0]
    assert set(change) == {"group", "metric", "date_before", "date_after", "before", "after", "ratio", "kind",
                           "ratio_lo", "ratio_hi", "verdict", "differs"}
    assert change["kind"] == "improvement" and change["ratio"] == pytest.approx(2.0)  # 100 → 200, past ±1% noise
    # no percentiles on these points: the interval is the run-to-run noise alone, 2 × exp(±1.96σ)
    sigma = history.noise(pts)["gpu"].sigma
    assert (change["ratio_lo"], change["ratio_hi"]) == pytest.approx((2 * math.exp(-1.959964 * sigma),
                                                                       2 * math.exp(1.959964 * sigma)))
    assert change["verdict"] == "higher"
    assert change["date_before"] == "2026-01-05" and change["date_after"] == "2026-01-06"
    assert change["before"] == pytest.approx(100.0) and change["after"] == pytest.approx(200.0)
    assert isinstance(change["differs"], list) and "1 days apart" in change["differs"]
    assert cli.main(["history", str(path)]) == 0
    assert "1 improvements, 0 regressions" in capsys.readouterr().out


def test_history_command_errors_are_one_line_with_exit_2(tmp_path, capsys):
    assert cli.main(["history", str(tmp_path / "missing.parquet")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("perfclaims history:") and "\n" not in err
    one_date = tmp_path / "one.parquet"
    _points([100.0], dates=["2026-01-01"]).to_parquet(one_date)
    assert cli.main(["history", str(one_date), "--json"]) == 2
    err = capsys.readouterr().err.strip()
    assert "no configuration measured on two or more dates" in err and "\n" not in err
    junk = tmp_path / "junk.parquet"
    junk.write_text("not a table")
    assert cli.main(["history", str(junk)]) == 2
    assert "\n" not in capsys.readouterr().err.strip()


# --- the suite's own history ---------------------------------------------------------------------------
def _part(folder, name, run_id, run_date, inputs, code, commit, values):
    folder.mkdir(parents=True, exist_ok=True)
    pd.DataFrame([{"run_id": run_id, "run_date": run_date, "report": report, "key": key, "value": value,
                   "inputs_hash": inputs, "code_version": code, "commit": commit}
                  for (report, key), value in values.items()]).to_parquet(folder / name)


def write_suite_history(folder):
    """Four runs: the second has new inputs (and a new commit that only added data), the third new code (a new
    package source hash), the fourth changes nothing."""
    _part(folder, "r1.parquet", "r1", "2026-11-01", "h1", "0.1.0+src.a", "c1", {("20-frontier", "n_points"): 435.0,
                                                                           ("30-precision", "ratio"): 1.78})
    _part(folder, "r2.parquet", "r2", "2026-11-02", "h2", "0.1.0+src.a", "c1-dirty", {("20-frontier", "n_points"): 450.0,
                                                                           ("30-precision", "ratio"): 1.78})
    _part(folder, "r3.parquet", "r3", "2026-11-03", "h2", "0.1.0+src.b", "c2", {("20-frontier", "n_points"): 450.0,
                                                                           ("30-precision", "ratio"): 1.80})
    _part(folder, "r4.parquet", "r4", "2026-11-04", "h2", "0.1.0+src.b", "c2", {("20-frontier", "n_points"): 450.0,
                                                                           ("30-precision", "ratio"): 1.80})


def test_suite_history_attributes_moves_to_inputs_or_code(tmp_path):
    folder = tmp_path / "history"
    write_suite_history(folder)
    hist = history.load_suite_history(folder)
    assert len(hist) == 8 and hist["run_id"].unique().tolist() == ["r1", "r2", "r3", "r4"]
    moves = history.suite_changes(hist)
    assert len(moves) == 2
    by_key = moves.set_index("key")
    assert by_key.loc["n_points", "cause"] == "inputs" and by_key.loc["n_points", "run_after"] == "r2"
    assert by_key.loc["n_points", "ratio"] == pytest.approx(450 / 435)
    assert by_key.loc["ratio", "cause"] == "code" and by_key.loc["ratio", "run_after"] == "r3"
    assert history.attribute({"inputs_hash": "a", "code_version": "1", "commit": "x"},
                             {"inputs_hash": "b", "code_version": "2", "commit": "x"}) == "inputs and code"
    assert history.runs(hist)["n_numbers"].tolist() == [2, 2, 2, 2]


def test_suite_history_absent_folder_is_empty(tmp_path):
    hist = history.load_suite_history(tmp_path / "nowhere")
    assert hist.empty and set(history.SUITE_COLUMNS) <= set(hist.columns)
    assert history.suite_changes(hist).empty


def test_page_escapes_data_derived_text(tmp_path):
    from analysis.pages import history as page_module

    values = [100.0, 101.0, 100.0, 101.0, 100.0, 200.0, 202.0, 200.0]
    pts = _points(values, hardware="<script>x</script>", image="img:[v1](javascript:alert)", user=[40.0] * 8)
    pts.loc[5:, "tool_version"] = "img:[v2](javascript:alert)"
    page = page_module.build(pts)
    head = page.headline()
    assert "<script>" not in head and "&#60;script&#62;" in head
    assert "img:&#91;v1&#93;&#40;javascript:alert&#41; → img:&#91;v2&#93;" in head and "](javascript" not in head
    assert page.results()["n_improvements"] == 1


def _suite_changes_by_loop(hist, rel_tol=1e-9):
    """The definition, one pair of consecutive runs at a time (what the vectorised suite_changes must equal)."""
    import math

    rows = []
    for (report, key), grp in hist.groupby(["report", "key"], sort=True):
        recs = grp.to_dict("records")
        for a, b in zip(recs[:-1], recs[1:]):
            va, vb = a["value"], b["value"]
            finite = np.isfinite(va) and np.isfinite(vb)
            moved = (not math.isclose(va, vb, rel_tol=rel_tol, abs_tol=0.0)) if finite else \
                a["value_text"] != b["value_text"]
            if moved:
                rows.append((report, key, a["run_id"], b["run_id"], history.attribute(a, b),
                             vb / va if finite and va != 0 else math.nan))
    return rows


def test_suite_changes_equals_the_pairwise_definition_on_a_random_store(tmp_path):
    rng = np.random.default_rng(3)
    rows = []
    for i in range(12):  # 12 runs, 40 numbers each, some steady, some moving, some text, some missing
        for k in range(40):
            value = float(k) if k % 3 else float(rng.choice([1.0, 1.0 + 1e-12, 2.0, np.nan]))
            rows.append({"run_id": f"r{i:02d}", "run_date": f"2026-11-{1 + i // 2:02d}", "report": f"rep{k % 4}",
                         "key": f"k{k}", "value": value if k != 7 else str(rng.choice(["a", "b"])),
                         "inputs_hash": f"i{rng.integers(2)}", "code_version": f"c{rng.integers(2)}", "commit": "x"})
    (tmp_path / "history").mkdir()
    pd.DataFrame(rows).astype({"value": str}).to_parquet(tmp_path / "history" / "all.parquet")
    hist = history.load_suite_history(tmp_path / "history")
    got = history.suite_changes(hist)
    want = _suite_changes_by_loop(hist)
    assert len(want) > 20
    got_rows = sorted(zip(got["report"], got["key"], got["run_before"], got["run_after"], got["cause"],
                          got["ratio"]), key=lambda r: r[:4])
    want_rows = sorted(want, key=lambda r: r[:4])
    assert [r[:5] for r in got_rows] == [r[:5] for r in want_rows]
    np.testing.assert_allclose([r[5] for r in got_rows], [r[5] for r in want_rows], equal_nan=True)


def test_the_low_end_of_a_series_is_named_for_its_concurrency_not_as_a_single_user(found):
    """A configuration's lowest concurrency measured on two dates is often far above 1 (128 for some B200 runs):
    that end is the low-concurrency end, and its metric names the concurrency; no series calls it single-user."""
    series = found[0]
    low = series[series["role"] == "low-concurrency end"]
    assert len(low) and "single-user end" not in set(series["role"])
    assert low["metric"].str.match(r"tok/s/user at concurrency \d+").all()
    assert (low["concurrency"] > 1).any()  # the case the old name misread



def test_a_change_between_forced_and_measured_acceptance_says_so():
    before = _points([100.0]).assign(source="a", acceptance_source="forced")
    after = _points([150.0]).assign(source="b", run_id="r9", acceptance_source="measured")
    out = history.differs(before, after, date_before="2026-01-01", date_after="2026-01-11")
    assert history.Difference("acceptance", ("forced",), ("measured",)) in out
    from analysis.history_words import difference_text

    assert "forced → measured (forced and measured acceptance are not one series)" in difference_text(
        history.Difference("acceptance", ("forced",), ("measured",)))
    same = history.differs(before, before, date_before="2026-01-01", date_after="2026-01-11")
    assert not any(d.what == "acceptance" for d in same)


def test_a_change_past_the_threshold_whose_interval_includes_one_is_within_noise():
    """×2.0 between two dates passes a threshold set by quiet neighbouring dates (±1%), but each date's point is
    4 requests with a wide latency spread (p50 1000 ms, p99 2396 ms: a relative standard error of 0.30 on
    tok/s/GPU), so the change's interval includes 1: it is within noise, listed with that verdict and named
    neither a rise nor a fall."""
    values = [100.0, 101.0, 100.0, 101.0, 100.0, 200.0, 202.0, 200.0, 202.0, 200.0]
    pts = _points(values, user=[40.0] * 10).assign(num_requests=4.0, e2e_ms_p50=1000.0, e2e_ms_mean=1000.0,
                                                   e2e_ms_p99=2396.0)
    found = history.changes(pts)
    assert len(found) == 1
    c = found.iloc[0]
    assert c["ratio"] == pytest.approx(2.0) and c["interval_basis"] == "points and run-to-run"
    # each side ±1.96 × 0.30 around its value; their log half-widths and σ add in quadrature
    z, rel = 1.959964, (2396.0 - 1000.0) / 2.326348 / 1000.0 / 2.0
    se = (math.log(1 + z * rel) - math.log(1 - z * rel)) / (2 * z)
    half = z * math.sqrt(2 * se ** 2 + history.noise(pts)["gpu"].sigma ** 2)
    assert (c["ratio_lo"], c["ratio_hi"]) == pytest.approx((2 * math.exp(-half), 2 * math.exp(half)), rel=1e-4)
    assert c["ratio_lo"] < 1 < c["ratio_hi"] and c["verdict"] == "within-noise"
    assert history.largest(found, "improvement").empty  # not a rise
    from analysis.pages import history as history_page

    page = history_page.HistoryPage(series=history.series(pts), noise=history.noise(pts), changes=found,
                                    pairs=history.neighbour_pairs(pts))
    head = page.headline()
    assert "0 values rose and 0 fell" in head
    assert "1 more pass the threshold but their interval includes ×1, so they are within noise" in head
    assert "Largest lasting improvement" not in head
    assert page.change_display(found)["interval"].iloc[0].startswith("within noise: 95% interval ×")
    assert page.results()["n_within_noise"] == 1
