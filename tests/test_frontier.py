"""Frontiers against a brute-force non-dominated set, interpolation bounds, denominators and the CLI."""

from __future__ import annotations

import io
import math

import numpy as np
import pandas as pd
import pytest

from analysis import cli, frontier_words, text
from analysis import frontier as fr
from analysis.pages import frontier as page
from analysis.schema import to_points

BY = ["hardware", "precision", "scope", "isl", "osl"]


def brute_force_front(u, g) -> set[int]:
    """Indices no other point beats on both axes (>= on both, > on one): O(n²), written independently."""
    keep = set()
    for i in range(len(u)):
        dominated = any(u[j] >= u[i] and g[j] >= g[i] and (u[j] > u[i] or g[j] > g[i]) for j in range(len(u)))
        if not dominated:
            keep.add(i)
    return keep


def log_interp(front_u, front_g, target):
    """Independent log-log interpolation between the two measured points around ``target``."""
    pairs = sorted(zip(front_u, front_g))
    for (u0, g0), (u1, g1) in zip(pairs, pairs[1:]):
        if u0 <= target <= u1:
            if u0 == u1:
                return max(g0, g1)
            w = (math.log(target) - math.log(u0)) / (math.log(u1) - math.log(u0))
            return math.exp((1 - w) * math.log(g0) + w * math.log(g1))
    if len(pairs) == 1 and pairs[0][0] == target:
        return pairs[0][1]
    return math.nan


@pytest.fixture(scope="module")
def snapshot(raw_points):
    return raw_points[raw_points["format"] == "inferencex-api"]


# --- the frontier is exactly the non-dominated set -------------------------------------------------------
@pytest.mark.parametrize("seed", range(6))
def test_pareto_mask_matches_brute_force_on_random_data(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    # Rounded values force ties in x, in y and exact duplicates, the cases a sort-based sweep gets wrong.
    u = np.round(rng.lognormal(4, 0.8, n), 0 if seed % 2 else 2)
    g = np.round(rng.lognormal(6, 1.2, n), -1 if seed % 3 == 0 else 1)
    mask = fr.pareto_mask(u, g)
    assert set(np.flatnonzero(mask)) == brute_force_front(u, g)


def test_pareto_mask_keeps_duplicates_and_drops_weak_ties():
    u = [10, 10, 10, 20, 5]
    g = [100, 100, 50, 40, 100]
    assert fr.pareto_mask(u, g).tolist() == [True, True, False, True, False]


def test_frontier_matches_brute_force_on_the_inferencex_snapshot(snapshot):
    fronts = fr.frontier(snapshot, by=BY)
    usable = snapshot[snapshot["tok_s_per_user"].notna() & snapshot["output_tok_s"].notna()
                      & ~snapshot["flags"].str.contains("failed-run|inconsistent-throughput")]
    n_groups = 0
    for key, grp in usable.groupby(BY):
        u = grp["tok_s_per_user"].to_list()
        g = (grp["output_tok_s"] / grp["n_gpus"]).to_list()
        expected = {(u[i], g[i]) for i in brute_force_front(u, g)}
        mine = fronts[(fronts[BY] == pd.Series(key, index=BY)).all(axis=1)]
        assert set(zip(mine["tok_s_per_user"], mine["tok_s_per_gpu"])) == expected, key
        # sorted by interactivity, capacity falling
        assert mine["tok_s_per_user"].is_monotonic_increasing
        assert mine["tok_s_per_gpu"].is_monotonic_decreasing
        n_groups += 1
    assert n_groups == fronts.groupby(BY).ngroups > 40


def test_all_groups_at_once_keep_what_each_group_alone_keeps():
    """The one-pass frontier of many groups is the per-group Pareto rule (ties and exact duplicates included),
    on small integer grids where ties are common."""
    rng = np.random.default_rng(7)
    for _ in range(300):
        n = int(rng.integers(0, 60))
        group, x, y = rng.integers(0, 4, n), rng.integers(0, 6, n).astype(float), rng.integers(0, 6, n).astype(float)
        expected = np.zeros(n, dtype=bool)
        for k in np.unique(group):
            rows = np.flatnonzero(group == k)
            expected[rows] = fr.pareto_mask(x[rows], y[rows])
        assert (fr.grouped_pareto_mask(group, x, y) == expected).all()


def test_failed_runs_never_reach_the_frontier():
    rows = [
        dict(hardware="X", precision="fp8", scope="node", n_gpus=8, tok_s_per_user=100.0, output_tok_s=800.0),
        dict(hardware="X", precision="fp8", scope="node", n_gpus=8, tok_s_per_user=50.0, output_tok_s=4000.0),
        dict(hardware="X", precision="fp8", scope="node", n_gpus=8, tok_s_per_user=500.0, output_tok_s=9e5,
             flags="failed-run"),
    ]
    front = fr.frontier(to_points(rows), by=["hardware"])
    assert sorted(front["tok_s_per_user"]) == [50.0, 100.0]
    assert sorted(front["tok_s_per_gpu"]) == [100.0, 500.0]


# --- denominators -------------------------------------------------------------------------------------------
def test_decode_denominator_divides_disaggregated_rows_by_decode_gpus(snapshot):
    disagg = snapshot[snapshot["disagg"].fillna(False).astype(bool)]
    single = snapshot[~snapshot["disagg"].fillna(False).astype(bool)]
    row = disagg.iloc[0]
    assert fr.per_gpu(disagg, denominator="decode").iloc[0] == pytest.approx(row["output_tok_s"] / row["n_decode_gpus"])
    assert fr.per_gpu(disagg, denominator="all").iloc[0] == pytest.approx(row["output_tok_s"] / row["n_gpus"])
    assert row["n_decode_gpus"] < row["n_gpus"]
    pd.testing.assert_series_equal(fr.per_gpu(single, denominator="decode"), fr.per_gpu(single, denominator="all"))
    with pytest.raises(ValueError, match="denominator"):
        fr.per_gpu(snapshot, denominator="prefill-ish")


def test_frontier_under_decode_denominator_is_labelled(snapshot):
    fronts = fr.frontier(snapshot, by=BY, denominator="decode")
    assert set(fronts["gpu_denominator"]) == {"decode"}
    gb200 = fronts[(fronts["hardware"] == "GB200 NVL72") & (fronts["scope"] == "rack")]
    assert len(gb200) > 5
    np.testing.assert_allclose(gb200["tok_s_per_gpu"], gb200["output_tok_s"] / gb200["n_decode_gpus"])


# --- interpolation ------------------------------------------------------------------------------------------
def _check_bounds(front: pd.DataFrame, levels: np.ndarray):
    values = fr.capacity_at(front, levels)
    u = front["tok_s_per_user"].to_numpy()
    g = front["tok_s_per_gpu"].to_numpy()
    for level, value in zip(levels, values):
        if level < u.min() or level > u.max():
            assert np.isnan(value)
            continue
        below = g[u <= level]
        above = g[u >= level]
        # the slower neighbour bounds it from above, the faster one from below
        assert value <= below.min() * (1 + 1e-12)
        assert value >= above.max() * (1 - 1e-12)
    inside = values[np.isfinite(values)]
    assert np.all(np.diff(inside) <= 1e-9 * inside[:-1])  # capacity never rises with interactivity


def test_interpolation_never_exceeds_neighbouring_frontier_points_on_real_frontiers(snapshot):
    fronts = fr.frontier(snapshot, by=BY)
    for _, front in fronts.groupby(BY):
        lo, hi = front["tok_s_per_user"].min(), front["tok_s_per_user"].max()
        levels = np.concatenate([np.geomspace(lo * 0.8, hi * 1.2, 60), front["tok_s_per_user"].to_numpy()])
        _check_bounds(front, np.sort(levels))


@pytest.mark.parametrize("seed", range(5))
def test_interpolation_never_exceeds_neighbouring_frontier_points_on_random_frontiers(seed):
    rng = np.random.default_rng(100 + seed)
    u, g = rng.lognormal(4, 1, 40), rng.lognormal(6, 1.5, 40)
    front = pd.DataFrame({"tok_s_per_user": u, "tok_s_per_gpu": g})[fr.pareto_mask(u, g)]
    _check_bounds(front, np.geomspace(u.min(), u.max() * 1.1, 200))


def test_capacity_at_matches_an_independent_interpolation_and_returns_measured_points(snapshot):
    fronts = fr.frontier(snapshot, by=BY)
    checked = 0
    for _, front in fronts.groupby(BY):
        for t in (50.0, 100.0, 200.0):
            expected = log_interp(front["tok_s_per_user"], front["tok_s_per_gpu"], t)
            got = fr.capacity_at(front, [t])[0]
            if math.isnan(expected):
                assert math.isnan(got)
            else:
                assert got == pytest.approx(expected, rel=1e-12)
                checked += 1
        assert fr.capacity_at(front, front["tok_s_per_user"]) == pytest.approx(front["tok_s_per_gpu"].to_numpy())
    assert checked > 30


def test_ratio_and_overlap_of_two_frontiers():
    a = pd.DataFrame({"tok_s_per_user": [10.0, 100.0], "tok_s_per_gpu": [1000.0, 10.0]})
    b = pd.DataFrame({"tok_s_per_user": [20.0, 200.0], "tok_s_per_gpu": [500.0, 5.0]})
    assert fr.overlap(a, b) == (20.0, 100.0)
    # a at 50: 10**(3 - 2*log10(5)) = 40; b at 50: 500 * (50/20)**(-2) = 80
    assert fr.ratio_at(a, b, [50.0])[0] == pytest.approx(40.0 / 80.0)
    assert np.isnan(fr.ratio_at(a, b, [150.0])[0])
    assert all(np.isnan(fr.overlap(a, b.assign(tok_s_per_user=[150.0, 300.0]))))


# --- the capacity table and its fastest per-user point ----------------------------------------------------
@pytest.fixture(scope="module")
def table_1k1k(snapshot):
    sel = fr.select(snapshot, model="DeepSeek-R1-0528", isl=1024, osl=1024)
    return sel, fr.capacity_table(fr.frontier(sel, by=fr.REPORT_BY), targets=[50, 100, 200], by=fr.REPORT_BY)


def _trusted(points):
    return points[points["output_tok_s"].notna()
                  & ~points["flags"].str.contains("failed-run|inconsistent-throughput")]


def test_capacity_table_fastest_point_carries_concurrency_gpus_and_ttft(table_1k1k):
    sel, table = table_1k1k
    usable = _trusted(sel)
    for _, row in table.iterrows():
        grp = usable[(usable["hardware"] == row["hardware"]) & (usable["precision"] == row["precision"])
                     & (usable["scope"] == row["scope"])]
        fastest = grp.loc[grp["tok_s_per_user"].idxmax()]
        assert row["fastest_tok_s_per_user"] == pytest.approx(fastest["tok_s_per_user"])
        assert row["fastest_tok_s_per_gpu"] == pytest.approx(fastest["output_tok_s"] / fastest["n_gpus"])
        assert row["fastest_concurrency"] == fastest["concurrency"]
        assert row["fastest_n_gpus"] == fastest["n_gpus"]
        assert row["fastest_ttft_ms_p50"] == pytest.approx(fastest["ttft_ms_p50"])
        assert row["capacity_tok_s_per_gpu"] == pytest.approx((grp["output_tok_s"] / grp["n_gpus"]).max())
    assert len(table) == 22


def test_capacity_table_gpu_range_and_ttft_count_come_from_the_frontier_points(snapshot, table_1k1k):
    sel, table = table_1k1k
    usable = _trusted(sel)
    for _, row in table.iterrows():
        grp = usable[(usable["hardware"] == row["hardware"]) & (usable["precision"] == row["precision"])
                     & (usable["scope"] == row["scope"])]
        u, g = grp["tok_s_per_user"].to_list(), (grp["output_tok_s"] / grp["n_gpus"]).to_list()
        front = grp.iloc[sorted(brute_force_front(u, g))]
        assert (row["n_gpus_min"], row["n_gpus_max"]) == (front["n_gpus"].min(), front["n_gpus"].max())
        assert row["n_over_ttft_limit"] == int((front["ttft_ms_p50"] > 10_000).sum())
        assert row["ttft_s_p50_max"] == pytest.approx(front["ttft_ms_p50"].max() / 1000)
    # a "rack" frontier need not use the whole rack: GB300 NVL72 fp4 reaches its capacity on 12 GPUs
    gb300 = table[(table["hardware"] == "GB300 NVL72") & (table["precision"] == "fp4")].iloc[0]
    assert gb300["n_gpus_min"] == 12 and gb300["capacity_n_gpus"] == 12
    assert gb300["capacity_tok_s_per_gpu"] == pytest.approx(9159.56, rel=1e-4)


def test_below_the_measured_range_the_table_gives_a_lower_bound_but_capacity_at_stays_nan(table_1k1k):
    sel, table = table_1k1k
    row = table[(table["hardware"] == "B300") & (table["precision"] == "fp4") & (table["scope"] == "node")].iloc[0]
    grp = _trusted(sel)
    grp = grp[(grp["hardware"] == "B300") & (grp["precision"] == "fp4") & (grp["scope"] == "node")]
    slowest = grp.loc[grp["tok_s_per_user"].idxmin()]
    assert slowest["tok_s_per_user"] == pytest.approx(52.56, abs=0.01)
    assert math.isnan(row[fr.target_column(50)])  # the numeric API never extrapolates
    assert row[fr.reading_column(50)] == "lower bound"
    assert row[fr.lower_bound_column(50)] == pytest.approx(slowest["output_tok_s"] / slowest["n_gpus"])
    assert row[fr.reading_column(200)] == "above range" and math.isnan(row[fr.lower_bound_column(200)])
    assert page.capacity_cell(row[fr.target_column(50)], "lower bound", row[fr.lower_bound_column(50)], math.nan) \
        == "≥ 787 (lower bound)"
    assert row[fr.reading_column(100)] in ("interpolated", "measured")


def test_capacity_readings_flag_wide_gaps_from_the_bracketing_points():
    front = pd.DataFrame({"tok_s_per_user": [10.0, 20.0, 100.0], "tok_s_per_gpu": [1000.0, 800.0, 50.0]})
    r = fr.capacity_readings(front, [5, 10, 15, 50, 200])
    assert r["reading"].tolist() == ["lower bound", "measured", "interpolated", "wide gap", "above range"]
    assert r["gap"].iloc[2] == pytest.approx(2.0) and r["gap"].iloc[3] == pytest.approx(5.0)
    assert r["lower_bound_tok_s_per_gpu"].iloc[0] == 1000.0
    np.testing.assert_allclose(r["tok_s_per_gpu"], fr.capacity_at(front, [5, 10, 15, 50, 200]))
    assert page.capacity_cell(r["tok_s_per_gpu"].iloc[3], "wide gap", math.nan, 5.0).endswith("(gap 5.0×)")


def test_each_reading_names_the_speculative_decoding_of_the_points_it_comes_from():
    front = pd.DataFrame({"tok_s_per_user": [10.0, 20.0, 100.0], "tok_s_per_gpu": [1000.0, 800.0, 50.0],
                          "spec_decode": ["none", "mtp", "mtp"]})
    r = fr.capacity_readings(front, [5, 10, 15, 50, 200])
    # below the range: the slowest point; on a point: that point; between: both neighbours; above: nothing read
    assert r["spec_decode"].tolist() == ["none", "none", "mtp+none", "mtp", ""]
    assert page.spec_text("mtp+none") == "read between points with speculative decoding mtp and none"
    assert page.spec_mark("none") == "" and page.spec_mark("mtp") == " · spec mtp"


def test_frontier_headline_names_the_speculative_decoding_of_its_capacity_reading(snapshot):
    """The shipped InferenceX groups pool MTP and plain points on one frontier: the capacity headline says which the
    best reading at 50 tok/s/user rests on, read here off the brute-force frontier's bracketing points."""
    p = page.build(snapshot, model="DeepSeek-R1-0528", isl=1024, osl=1024, source_format="inferencex-api")
    best = p._best_at(50, solid=True)
    group = _trusted(snapshot)
    for col in ("hardware", "precision", "scope"):
        group = group[group[col] == best[col]]
    group = group[(group["model"] == "DeepSeek-R1-0528") & (group["isl"] == 1024) & (group["osl"] == 1024)]
    u, g = group["tok_s_per_user"].to_numpy(), (group["output_tok_s"] / group["n_gpus"]).to_numpy()
    front = group.iloc[sorted(brute_force_front(list(u), list(g)), key=lambda i: u[i])]
    below, above = front[front["tok_s_per_user"] <= 50].iloc[-1], front[front["tok_s_per_user"] >= 50].iloc[0]
    expected = "+".join(sorted({str(below["spec_decode"]), str(above["spec_decode"])}))
    assert p.results()["capacity_spec_decode"][best["label"]]["50"] == expected
    # ... and whether the acceptance of those points was measured or forced (the snapshot does not say: not stated)
    assert f"{best['label']}, {page.spec_text(expected, str)} (acceptance not stated);" in p.headline_text
    assert "mtp" in set(p.table[fr.spec_decode_column(50)])  # the data does pool MTP points


def test_ttft_max_ms_keeps_only_points_under_the_limit(snapshot):
    limit = 10_000.0
    fronts = fr.frontier(snapshot, by=BY, ttft_max_ms=limit)
    assert (fronts["ttft_ms_p50"] <= limit).all()
    ok = _trusted(snapshot)
    ok = ok[ok["ttft_ms_p50"] <= limit]
    for key, grp in ok.groupby(BY):
        u, g = grp["tok_s_per_user"].to_list(), (grp["output_tok_s"] / grp["n_gpus"]).to_list()
        mine = fronts[(fronts[BY] == pd.Series(key, index=BY)).all(axis=1)]
        assert set(zip(mine["tok_s_per_user"], mine["tok_s_per_gpu"])) == {(u[i], g[i]) for i in brute_force_front(u, g)}
    # the limit changes something: B200 fp8 multi-node 8k1k loses its 79 s-TTFT fastest point
    everything = fr.frontier(snapshot, by=BY)
    assert (everything["ttft_ms_p50"] > limit).sum() > 10
    assert len(fronts) != len(everything)


def test_fastest_points_call_single_user_only_at_concurrency_1_and_name_long_ttft(snapshot):
    sel = fr.select(snapshot, model="DeepSeek-R1-0528", isl=8192, osl=1024)
    _, _, table = fr.report_tables(sel, targets=[50, 100])
    ends = fr.fastest_points(table)
    single = ends["single_user"]  # the facts first: concurrency 1, a median TTFT over the limit
    assert (ends.loc[single, "fastest_concurrency"] == 1).all() and single.sum() == (ends["fastest_concurrency"] == 1).sum()
    notes = [frontier_words.fastest_note(r, ttft_limit_s=fr.TTFT_LIMIT_S) for _, r in ends.iterrows()]
    assert [n.startswith("single user") for n in notes] == single.tolist()
    b200 = ends[ends["label"] == "B200 · fp8 · multi-node"].iloc[0]
    assert b200["fastest_concurrency"] == 256 and b200["fastest_ttft_s_p50"] == pytest.approx(79.3, abs=0.1)
    assert b200["long_ttft"] and ends["long_ttft"].sum() == (ends["fastest_ttft_s_p50"] > fr.TTFT_LIMIT_S).sum()
    assert frontier_words.fastest_note(b200, ttft_limit_s=fr.TTFT_LIMIT_S) == "256 concurrent; long TTFT (79 s > 10 s)"
    text = page.describe_fastest_points(ends)
    assert f"{single.sum()} of {len(ends)} fastest per-user points were measured with a single user" in text
    assert "B200 · fp8 · multi-node 154 tok/s/user at concurrency 256 with TTFT p50 79 s" in text
    prose = page.describe_frontiers(table, targets=[50, 100], denominator="all")
    assert f"{int(table['n_over_ttft_limit'].sum())} of {int(table['n_frontier'].sum())} frontier points have a " \
           "median TTFT above 10 s" in prose
    assert "single-user end" not in prose and "single-user end" not in text


# --- command line -------------------------------------------------------------------------------------------
def test_cli_frontier_prints_csv_per_group(snapshot, tmp_path, capsys):
    path = tmp_path / "points.parquet"
    snapshot.to_parquet(path)
    assert cli.main(["frontier", str(path), "--at", "50,100", "--by", "hardware,precision,scope,isl,osl"]) == 0
    table = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert list(table.columns[-10:]) == ["tok_s_per_gpu_at_50", "tok_s_per_gpu_at_100", "fastest_tok_s_per_user",
                                         "fastest_tok_s_per_gpu", "fastest_concurrency", "fastest_n_gpus",
                                         "fastest_ttft_ms_p50", "acceptance_at_50", "acceptance_at_100",
                                         "source_kinds"]
    row = table[(table["hardware"] == "B200") & (table["precision"] == "fp4") & (table["scope"] == "node")
                & (table["isl"] == 1024) & (table["osl"] == 1024)].iloc[0]
    grp = snapshot[(snapshot["hardware"] == "B200") & (snapshot["precision"] == "fp4") & (snapshot["scope"] == "node")
                   & (snapshot["isl"] == 1024) & (snapshot["osl"] == 1024) & snapshot["output_tok_s"].notna()]
    u, g = grp["tok_s_per_user"].to_list(), (grp["output_tok_s"] / grp["n_gpus"]).to_list()
    front = brute_force_front(u, g)
    expected = log_interp([u[i] for i in front], [g[i] for i in front], 50.0)
    assert row["tok_s_per_gpu_at_50"] == pytest.approx(expected, rel=1e-5)
    assert row["gpu_denominator"] == "all"
    assert row["source_kinds"] == "raw-log" and row["acceptance_at_50"] in ("none", "not stated", "none+not stated")


def test_cli_frontier_reports_user_errors_without_traceback(tmp_path, capsys):
    assert cli.main(["frontier", str(tmp_path / "missing.parquet")]) == 2
    assert "points table not found" in capsys.readouterr().err
    path = tmp_path / "points.parquet"
    to_points([dict(hardware="X", n_gpus=1, tok_s_per_user=10.0, output_tok_s=10.0)]).to_parquet(path)
    assert cli.main(["frontier", str(path), "--by", "hardware,no_such_column"]) == 2
    assert "no_such_column" in capsys.readouterr().err


# --- the frontier figure ------------------------------------------------------------------------------------
def test_frontier_figure_draws_slow_ttft_points_hollow_and_labels_gpu_counts_without_overlap(snapshot):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_rgba
    from matplotlib.transforms import Bbox

    from analysis.plots import frontier as plots

    sel = fr.select(snapshot, model="DeepSeek-R1-0528", isl=8192, osl=1024)
    data, fronts, _ = fr.report_tables(sel, targets=[50, 100])
    axes = plots.frontier_panels(fronts, data, targets=[50, 100], ttft_limit_s=10.0)
    fig = axes.flat[0].figure
    renderer = fig.canvas.get_renderer()
    by_title = {ax.get_title(): ax for ax in axes.flat if ax.get_visible()}
    # one legend for the figure, outside every panel, naming the hollow markers and the dotted guides
    (legend,) = fig.legends
    texts = [t.get_text() for t in legend.get_texts()]
    assert "hollow marker: TTFT p50 > 10 s" in texts and "dotted: 50, 100 tok/s/user" in texts
    legend_box = legend.get_window_extent(renderer)
    assert not any(legend_box.overlaps(ax.get_window_extent(renderer)) for ax in by_title.values())
    kept = 0
    for hw, ax in by_title.items():
        front = fronts[fronts["hardware"] == hw]
        hollow = sum(len(c.get_offsets()) for c in ax.collections
                     if len(c.get_facecolors()) and tuple(c.get_facecolors()[0]) == to_rgba("white"))
        assert hollow == int((front["ttft_ms_p50"] > 10_000).sum()), hw
        assert ax.get_xscale() == ax.get_yscale() == "log"
        labels = [t for t in ax.texts if t.get_gid() == plots.LABEL_GID]
        kept += len(labels)
        boxes = [t.get_window_extent(renderer) for t in labels]
        assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:]), hw
        # no label covers a frontier marker (markers are 5 pt across) and every label stays inside its panel
        xy = ax.transData.transform(front[["tok_s_per_user", "tok_s_per_gpu"]].to_numpy(float))
        half = 2.5 * fig.dpi / 72
        markers = [Bbox([[x - half, y - half], [x + half, y + half]]) for x, y in xy]
        assert not any(b.overlaps(m) for b in boxes for m in markers), hw
        frame = ax.get_window_extent(renderer)
        assert all(frame.x0 <= b.x0 and b.x1 <= frame.x1 and frame.y0 <= b.y0 and b.y1 <= frame.y1 for b in boxes)
        # the dotted guides are labelled with their tok/s/user above the panel
        guides = sorted(t.get_text() for t in ax.texts if t.get_gid() == plots.GUIDE_GID)
        assert guides == ["100", "50"], hw
    assert plots.labels_drawn(axes) == kept and len(fronts) - 10 <= kept <= len(fronts)
    assert "log scale" in axes[-1, 0].get_xlabel() and "log scale" in axes[0, 0].get_ylabel()
    # GPU counts vary along the GB300 NVL72 fp4 rack frontier (20–72 GPUs): labels say how many
    gb300 = [t.get_text() for t in by_title["GB300 NVL72"].texts]
    assert "5/34g" in gb300 and any(t.endswith("/72g") for t in gb300)
    # ... and not along MI300X's (always 8): plain concurrency
    assert all("/" not in t.get_text() for t in by_title["MI300X"].texts if t.get_gid() == plots.LABEL_GID)
    plt.close(fig)


def test_place_labels_moves_a_label_to_a_free_side_and_drops_one_with_no_room():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from analysis.plots import frontier as plots

    fig, ax = plt.subplots(figsize=(4, 3))
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 100)
    fig.canvas.draw()
    # two labels on the same point: the second goes below instead of on top of the first; a third and fourth
    # take the left side; a fifth has nowhere left and is dropped
    dropped = plots.place_labels(ax, [(50, 50, f"label{i}", "k") for i in range(5)])
    labels = [t for t in ax.texts if t.get_gid() == plots.LABEL_GID]
    assert dropped == 1 and len(labels) == 4 == plots.labels_drawn(np.array([ax]))
    assert sorted((t.get_position()[0] > 0, t.get_position()[1] > 0) for t in labels) == [
        (False, False), (False, True), (True, False), (True, True)]
    # a label that would leave the axes is moved inside: at the right edge it goes to the left of its point
    plots.place_labels(ax, [(99, 50, "edge", "k")])
    edge = [t for t in ax.texts if t.get_text() == "edge"][0]
    assert edge.get_position()[0] < 0
    plt.close(fig)


# --- frontiers on cost and energy axes -------------------------------------------------------------------
def brute_force_lower_front(u, c) -> set[int]:
    """Indices no other point beats by being at least as fast per user AND at most as costly (one strictly)."""
    keep = set()
    for i in range(len(u)):
        dominated = any(u[j] >= u[i] and c[j] <= c[i] and (u[j] > u[i] or c[j] < c[i]) for j in range(len(u)))
        if not dominated:
            keep.add(i)
    return keep


@pytest.mark.parametrize("seed", range(4))
def test_cost_frontier_is_the_lower_envelope(seed):
    from analysis import cost

    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 40))
    hw = rng.choice(["B200", "H200 SXM"], n)  # two prices in one group: cost, not tok/s/GPU, decides
    pts = to_points([dict(format="inferencex-api", hardware=h, n_gpus=8, tok_s_per_user=float(u),
                          output_tok_s=float(o)) for h, u, o in
                     zip(hw, np.round(rng.lognormal(4, 0.7, n), 1), np.round(rng.lognormal(8, 1, n), -1))])
    prices = cost.load_prices()
    fronts = fr.metric_frontier(pts, metric="usd_per_mtok", by=[], prices=prices)
    price = np.where(hw == "B200", 1.95, 1.41)
    c = price * 1e6 / (3600 * pts["output_tok_s"].to_numpy() / 8)
    expected = brute_force_lower_front(pts["tok_s_per_user"].to_list(), list(c))
    assert sorted(fronts["usd_per_mtok"]) == pytest.approx(sorted(c[list(expected)]))
    # the upper envelope of tok/s/GPU is a different set here, because the prices differ
    fronts_tpg = fr.metric_frontier(pts, metric="tok_s_per_gpu", by=[])
    assert len(fronts_tpg) == len(brute_force_front(pts["tok_s_per_user"].to_list(),
                                                    (pts["output_tok_s"] / 8).to_list()))


def test_cost_at_equal_interactivity_is_the_price_over_capacity(snapshot):
    # One price per hardware: $/M at a level = price × 1e6 / (3600 × tok/s/GPU at that level), the same
    # log-log interpolation read the other way up; below the measured range the slowest point's cost is a ceiling.
    from analysis import cost

    by = ["hardware", "precision", "scope", "isl", "osl"]
    cap = fr.capacity_table(fr.frontier(snapshot, by=by), targets=[50, 100, 200], by=by)
    usd = fr.metric_table(fr.metric_frontier(snapshot, metric="usd_per_mtok", by=by), targets=[50, 100, 200],
                          metric="usd_per_mtok", by=by)
    assert set(usd["hardware"]) == {"B200", "GB200 NVL72", "GB300 NVL72", "H100 SXM", "H200 SXM"}
    merged = usd.merge(cap, on=by, suffixes=("", "_cap"))
    assert len(merged) == len(usd) == len(cap[cap["hardware"].isin(usd["hardware"])])
    checked = 0
    for _, r in merged.iterrows():
        price = cost.price_for(cost.load_prices(), r["hardware"]).usd_per_gpu_hour
        assert r["usd_per_gpu_hour"] == price and r["price_source"].startswith("https://")
        for t in (50, 100, 200):
            want = price * 1e6 / (3600 * r[fr.target_column(t)])
            got = r["usd_per_mtok_at_" + f"{t}"]
            assert (math.isnan(got) and math.isnan(want)) or got == pytest.approx(want, rel=1e-9)
            assert r[f"reading_at_{t}"] == r[f"reading_at_{t}_cap"]
            if r[f"reading_at_{t}"] == "lower bound":
                assert r[fr.metric_bound_column("usd_per_mtok", t)] == pytest.approx(
                    price * 1e6 / (3600 * r[fr.lower_bound_column(t)]))
            checked += np.isfinite(want)
    assert checked > 40


def test_energy_frontier_uses_only_points_with_measured_power(snapshot):
    by = ["hardware", "precision", "isl", "osl"]
    fronts = fr.metric_frontier(snapshot, metric="tok_s_per_mw", by=by)
    assert set(fronts["hardware"]) == {"MI355X"} and (fronts["power_scope"] == "GPU power only").all()
    mi = fronts[(fronts["precision"] == "fp8") & (fronts["isl"] == 8192)]
    # points with power there: 8, 4 (sglang), 8, 64, 256 (atom) and the 24-GPU disaggregated 2048 one
    assert mi["n_points"].iloc[0] == 6
    pts = snapshot[(snapshot["hardware"] == "MI355X") & (snapshot["precision"] == "fp8")
                   & (snapshot["isl"] == 8192) & snapshot["power_w"].notna()]
    mw = (1e6 * pts["output_tok_s"] / (pts["power_w"] * pts["n_gpus"])).to_list()
    expected = brute_force_front(pts["tok_s_per_user"].to_list(), mw)
    assert sorted(mi["tok_s_per_mw"]) == pytest.approx(sorted(mw[i] for i in expected))
    j = fr.metric_frontier(snapshot, metric="j_per_output_token", by=by)
    assert sorted(1e6 / j["j_per_output_token"]) == pytest.approx(sorted(fronts["tok_s_per_mw"]))


def test_efficiency_at_gives_value_match_and_price(snapshot):
    e = fr.efficiency_at(snapshot, hardware="B200", precision="fp4", isl=1024, osl=1024, level=50,
                         metric="usd_per_mtok", denominator="all", scope="node")
    front = fr.frontier(fr.select(snapshot, isl=1024, osl=1024).query("hardware == 'B200' and precision == 'fp4' "
                                                                     "and scope == 'node'"), by=[])
    assert e.value == pytest.approx(1.95e6 / (3600 * fr.capacity_at(front, [50])[0]))
    assert e.reading in ("interpolated", "measured") and e.why is None and e.reason is None and e.checkable
    assert e.price.usd_per_gpu_hour == 1.95 and "SemiAnalysis" in e.price.basis
    assert len(e.points) == 2 and (e.points["tok_s_per_user"].min() <= 50 <= e.points["tok_s_per_user"].max())
    assert e.selection == {"model": None, "hardware": "B200", "precision": "fp4", "scope": "node", "isl": 1024.0,
                           "osl": 1024.0}
    no_price = fr.efficiency_at(snapshot, hardware="MI355X", precision="fp4", isl=1024, osl=1024, level=100,
                                metric="usd_per_mtok", denominator="all")
    assert math.isnan(no_price.value) and no_price.why == "no price" and no_price.price is None
    assert "MI355X" in no_price.reason
    no_power = fr.efficiency_at(snapshot, hardware="B200", precision="fp4", isl=1024, osl=1024, level=100,
                                metric="tok_s_per_mw", denominator="all")
    b200 = _trusted(snapshot[(snapshot["hardware"] == "B200") & (snapshot["precision"] == "fp4")
                             & (snapshot["isl"] == 1024) & (snapshot["osl"] == 1024)])
    assert math.isnan(no_power.value) and no_power.n_points == len(b200) == 20
    assert no_power.why == "no power"  # the fact; its sentence (frontier_words) names the selection and the count
    assert no_power.reason == "none of the 20 points for B200 fp4 at 1k/1k tokens has measured GPU power"
    mw = fr.efficiency_at(snapshot, hardware="MI355X", precision="fp8", isl=8192, osl=1024, level=50,
                          metric="tok_s_per_mw", denominator="all")
    assert mw.power_scope == "GPU power only" and mw.n_with_metric == 6 and np.isfinite(mw.value)
    lo, hi = sorted(mw.points["tok_s_per_mw"])
    assert lo <= mw.value <= hi
    # two models in the points and no model named: no frontier is read across them
    two = pd.concat([snapshot, snapshot[snapshot["hardware"] == "B200"].assign(model="Other-Model")])
    mixed = fr.efficiency_at(two, hardware="B200", precision="fp4", isl=1024, osl=1024, level=50,
                             metric="usd_per_mtok")
    assert mixed.why == "several models" and mixed.detail == {"models": ["DeepSeek-R1-0528", "Other-Model"]}
    assert math.isnan(mixed.value) and "2 models" in mixed.reason and "pass model=" in mixed.reason
    named = fr.efficiency_at(two, hardware="B200", precision="fp4", isl=1024, osl=1024, level=50,
                             metric="usd_per_mtok", scope="node", model="DeepSeek-R1-0528")
    assert named.value == pytest.approx(e.value)
    disagg = snapshot[(snapshot["hardware"] == "MI355X") & (snapshot["concurrency"] == 2048)
                      & snapshot["power_w"].notna()].iloc[0]
    decode = fr.efficiency_at(snapshot, hardware="MI355X", precision="fp8", isl=8192, osl=1024,
                              level=disagg["tok_s_per_user"], metric="j_per_output_token", denominator="decode")
    assert decode.value == pytest.approx(0.685255, rel=1e-5) and decode.reading == "measured"  # InferenceX's figure
    slower = fr.efficiency_at(snapshot, hardware="MI355X", precision="fp8", isl=8192, osl=1024, level=15,
                              metric="j_per_output_token", denominator="decode")
    # below the frontier's slowest point (17.2 tok/s/user) J/token has a ceiling, not a value
    assert math.isnan(slower.value) and slower.reading == "lower bound"
    assert slower.bound == pytest.approx(0.685255, rel=1e-5) and slower.why == "frontier starts faster"
    assert slower.detail["slowest_tok_s_per_user"] == pytest.approx(17.2, abs=0.05) and "only a bound" in slower.reason
    assert {e.why for e in (no_price, no_power, mixed, slower)} <= set(fr.NO_VALUE_WHY)


def test_cli_frontier_metric_columns_price_and_messages(snapshot, tmp_path, capsys):
    path = tmp_path / "points.parquet"
    snapshot.to_parquet(path)
    assert cli.main(["frontier", str(path), "--metric", "usd_per_mtok", "--at", "50,100",
                     "--by", "hardware,precision,scope,isl,osl"]) == 0
    out = capsys.readouterr()
    table = pd.read_csv(io.StringIO(out.out))
    assert list(table.columns[-6:]) == ["usd_per_mtok_at_50", "usd_per_mtok_at_100", "usd_per_gpu_hour",
                                        "price_basis", "price_source", "price_date"]
    assert "no price per GPU-hour for B300, MI300X, MI325X, MI355X" in out.err
    row = table[(table["hardware"] == "H200 SXM") & (table["scope"] == "node") & (table["isl"] == 1024)
                & (table["osl"] == 1024)].iloc[0]
    front = fr.frontier(snapshot[(snapshot["hardware"] == "H200 SXM") & (snapshot["scope"] == "node")
                                 & (snapshot["isl"] == 1024) & (snapshot["osl"] == 1024)], by=[])
    assert row["usd_per_mtok_at_50"] == pytest.approx(1.41e6 / (3600 * fr.capacity_at(front, [50])[0]), rel=1e-5)
    # a price given on the command line brings MI355X in and is named as its source
    assert cli.main(["frontier", str(path), "--metric", "usd_per_mtok", "--at", "100", "--by", "hardware",
                     "--price", "MI355X=2.10"]) == 0
    out = capsys.readouterr()
    mi = pd.read_csv(io.StringIO(out.out)).set_index("hardware").loc["MI355X"]
    # the CSV guards spreadsheets: a text cell starting with "-" is written "'--price" (analysis.text.csv_cell)
    assert mi["usd_per_gpu_hour"] == 2.10 and mi["price_source"] == "'--price" and "MI355X" not in out.err
    assert cli.main(["frontier", str(path), "--metric", "tok_s_per_mw", "--at", "50,100", "--by",
                     "hardware,precision,isl,osl"]) == 0
    out = capsys.readouterr()
    table = pd.read_csv(io.StringIO(out.out))
    assert list(table.columns[-3:]) == ["tok_s_per_mw_at_50", "tok_s_per_mw_at_100", "power_scope"]
    assert set(table["hardware"]) == {"MI355X"} and (table["power_scope"] == "GPU power only").all()
    assert "have no measured GPU power" in out.err


def test_cli_frontier_ttft_max_ms(snapshot, tmp_path, capsys):
    path = tmp_path / "points.parquet"
    snapshot.to_parquet(path)
    by = "hardware,precision,scope,isl,osl"
    assert cli.main(["frontier", str(path), "--at", "50", "--by", by, "--ttft-max-ms", "10000"]) == 0
    table = pd.read_csv(io.StringIO(capsys.readouterr().out))
    want = fr.capacity_table(fr.frontier(snapshot, by=by.split(","), ttft_max_ms=10_000), targets=[50],
                             by=by.split(","))
    assert table["n_frontier"].sum() == want["n_frontier"].sum()
    b200 = table[(table["hardware"] == "B200") & (table["precision"] == "fp8") & (table["scope"] == "multi-node")
                 & (table["isl"] == 8192)].iloc[0]
    assert b200["fastest_ttft_ms_p50"] <= 10_000 and b200["fastest_tok_s_per_user"] < 154


# --- the frontier page's words and the cost chart -------------------------------------------------------------
def test_page_words_shares_cells_and_escaping():
    assert [text.share(f) for f in (0.00393, 0.0152, 0.22, 1.0)] == ["0.39%", "1.5%", "22%", "100%"]
    assert page.efficiency_cell("usd_per_mtok", math.nan, "lower bound", 0.3612, math.nan) == "≤ $0.36 (ceiling)"
    assert page.efficiency_cell("tok_s_per_mw", math.nan, "lower bound", 274822.4, math.nan) == "≥ 274,822 (floor)"
    assert page.efficiency_cell("j_per_output_token", 5.617, "wide gap", math.nan, 4.04) == "5.62 J (gap 4.0×)"
    assert page.efficiency_cell("usd_per_mtok", math.nan, "above range", math.nan, math.nan) == "above range"
    assert page.dollars_md("$1 to $2") == "&#36;1 to &#36;2"
    # a hostile hardware name reaches the Markdown only escaped, in the headline and the price caption
    rows = [dict(format="inferencex-api", model="M", hardware="<img src=x>", precision="fp8", n_gpus=8, isl=1024,
                 osl=1024, tok_s_per_user=u, output_tok_s=o, concurrency=c, ttft_ms_p50=100.0, power_w=700.0)
            for u, o, c in ((30.0, 8000.0, 64), (60.0, 4000.0, 16), (120.0, 800.0, 1))]
    pts = to_points(rows)
    p = page.build(pts, model="M", isl=1024, osl=1024, prices={"<img src=x>": {"usd_per_gpu_hour": 2.0,
                                                                                "source": "[x](javascript:y)"}})
    for md in (p.headline, p.price_caption, p.energy_caption, p.title_md):
        assert "<img" not in md and "](javascript" not in md
    assert "&#60;img src=x&#62;" in p.headline
    r = p.results()
    # $2/GPU-hour over the tok/s/GPU frontier read at each level (e.g. 500 tok/s/GPU at 60 tok/s/user: $1.11/M)
    assert r["usd_per_mtok"]["<img src=x> · fp8 · node"]["50"] == pytest.approx(
        2.0 * 1e6 / (3600 * fr.capacity_at(fr.frontier(pts, by=[]), [50])[0]))
    assert r["usd_per_mtok"]["<img src=x> · fp8 · node"]["100"] == pytest.approx(
        2.0 * 1e6 / (3600 * fr.capacity_at(fr.frontier(pts, by=[]), [100])[0]))
    # J/token = GPU power × GPUs ÷ output tok/s (1.4 J at 60, 7 J at 120 tok/s/user), log-log read at 100
    j = 700.0 * 8 / np.array([4000.0, 800.0])
    want = math.exp(np.interp(math.log(100), np.log([60, 120]), np.log(j)))
    assert r["j_per_output_token"]["<img src=x> · fp8 · node"]["100"] == pytest.approx(want)
    assert r["title"] == "M frontiers, 1,024 in / 1,024 out: tok/s/user against tok/s/GPU, cost and energy"
    assert "(prefill + decode)" in r["headline"] and "$" in r["headline"] and "&#" not in r["headline"]


def test_cost_chart_orders_best_first_marks_bounds_and_leaves_out_empty_groups():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from analysis.plots import frontier as plots

    long = pd.DataFrame({
        "label": ["a", "a", "b", "b", "c", "c", "d", "d"],
        "level": [50.0, 100.0] * 4,
        "value": [2.0, 4.0, 1.0, 3.0, math.nan, 5.0, math.nan, math.nan],
        "reading": ["interpolated", "interpolated", "wide gap", "measured", "lower bound", "interpolated",
                    "above range", "above range"],
        "bound": [math.nan, math.nan, math.nan, math.nan, 1.5, math.nan, math.nan, math.nan],
    })
    ax = plots.efficiency_dots(long, xlabel="$ per million output tokens", title="t")
    assert [t.get_text() for t in ax.get_yticklabels()] == ["b", "c", "a"]  # cheapest at 50 on top; d has nothing
    assert sorted(t.get_text() for t in ax.texts) == ["~", "≤"]
    assert ax.get_xscale() == "log" and "log scale" in ax.get_xlabel()
    plt.close(ax.figure)


# --- frontiers per workload, and what each reading rests on (interval, acceptance, source kind) ----------------
V4_FAMILY = ["DeepSeek-V4-Flash", "DeepSeek-V4-Flash-0731", "DeepSeek-V4.1-Flash", "DeepSeek-V4-Pro"]


@pytest.fixture(scope="module")
def published(raw_points):
    return raw_points[raw_points["source_kind"] == "published-table"]


def test_agentic_traces_and_random_prompts_are_two_frontiers(published):
    """The shipped GB300 NVL72 fp4 node tables hold InferenceX AgentX traces (V4.1-Flash) and SGLang random 8K/1K
    runs: the report grouping keys on workload, so they are two frontiers, each ending at its own fastest point."""
    gb300 = published[(published["hardware"] == "GB300 NVL72") & (published["precision"] == "fp4")
                      & (published["scope"] == "node")]
    _, fronts, table = fr.report_tables(gb300, targets=[50], by=fr.REPORT_BY)
    assert "workload" in fr.DEFAULT_BY and "workload" in fr.REPORT_BY
    assert sorted(table["workload"]) == ["agentx", "random-capped"]
    agentx = table.set_index("workload").loc["agentx"]
    rows = gb300[gb300["workload"] == "agentx"]
    assert agentx["fastest_tok_s_per_user"] == pytest.approx(rows["tok_s_per_user"].max())  # 1000 / 2.19 ms
    assert agentx["fastest_tok_s_per_user"] == pytest.approx(456.621005, rel=1e-6)
    assert agentx["label"] == "GB300 NVL72 · fp4 · node · agentx"
    random = table.set_index("workload").loc["random-capped"]
    assert random["fastest_tok_s_per_user"] == pytest.approx(
        gb300.loc[(gb300["workload"] == "random-capped") & gb300["output_tok_s"].notna(), "tok_s_per_user"].max())
    assert set(fronts.groupby("workload")["source_kind"].unique().explode()) == {"published-table"}


def test_each_reading_carries_the_interval_of_the_points_it_was_read_from(snapshot):
    """B200 fp4 node at 50 tok/s/user is read between two frontier points; its interval is theirs (from the
    summaries and InferenceX's 10 × concurrency default), interpolated in log-log space with the value's weights."""
    from analysis import uncertainty

    sel = fr.select(snapshot, model="DeepSeek-R1-0528", isl=1024, osl=1024)
    _, fronts, table = fr.report_tables(sel, targets=[50], by=fr.REPORT_BY)
    row = table.set_index("label").loc["B200 · fp4 · node"]
    assert row[fr.reading_column(50)] == "interpolated"
    front = fronts[(fronts["hardware"] == "B200") & (fronts["precision"] == "fp4") & (fronts["scope"] == "node")]
    pair = fr.bracketing_points(front, 50)
    raw = sel.loc[sel["source_line"].isin(pair["source_line"]) & sel["source_file"].isin(pair["source_file"])]
    raw = raw.set_index(raw["source_line"]).loc[pair["source_line"]]
    iv = uncertainty.point_intervals(raw)
    u = pair["tok_s_per_user"].to_numpy()
    w = (math.log(50) - math.log(u[0])) / (math.log(u[1]) - math.log(u[0]))
    lo = math.exp((1 - w) * math.log(iv["gpu_lo"].iloc[0]) + w * math.log(iv["gpu_lo"].iloc[1]))
    hi = math.exp((1 - w) * math.log(iv["gpu_hi"].iloc[0]) + w * math.log(iv["gpu_hi"].iloc[1]))
    cols = fr.interval_columns(50)
    assert row[cols["lo"]] == pytest.approx(lo) and row[cols["hi"]] == pytest.approx(hi)
    assert row[cols["lo"]] < row[fr.target_column(50)] < row[cols["hi"]]
    assert row[cols["n"]] == min(iv["n_requests"]) == 10 * min(raw["concurrency"])
    assert row[cols["n_source"]] == "tool-default"
    assert "tool default" in page.reading_interval_text(row, 50)


def test_a_reading_without_an_interval_says_why(published):
    """The SGLang tables give 32 measured requests but only mean TPOT: no spread, so no interval, and the words say
    so instead of printing a bare number as if it were exact."""
    p = page.build(published, model=V4_FAMILY, isl=None, osl=None, source_format="published-table")
    row = p.table.set_index("label").loc["DeepSeek-V4-Flash · B300 · fp4 · node · random-capped · 8k/1k"]
    assert math.isnan(row[fr.interval_columns(100)["lo"]]) and row[fr.interval_columns(100)["n"]] == 32
    assert page.reading_interval_text(row, 100) == (
        "no interval (n = 32 requests; mean or median only, no spread)")


def test_best_reading_within_noise_is_never_called_higher(snapshot):
    """Among the node groups (which have intervals) the verdict on best ÷ runner-up is the interval's, computed here
    by hand from the two readings' intervals, and the words follow it."""
    from analysis import uncertainty

    sel = fr.select(snapshot, model="DeepSeek-R1-0528", isl=1024, osl=1024)
    _, _, table = fr.report_tables(sel, targets=[100], by=fr.REPORT_BY)
    node = table[table["scope"] == "node"]
    b = fr.best_reading(node, 100)
    cols = fr.interval_columns(100)
    ordered = node.dropna(subset=[fr.target_column(100)]).sort_values(fr.target_column(100), ascending=False)
    a, c = ordered.iloc[0], ordered.iloc[1]
    r = uncertainty.ratio_interval(uncertainty.Interval(a[fr.target_column(100)], a[cols["lo"]], a[cols["hi"]]),
                                   uncertainty.Interval(c[fr.target_column(100)], c[cols["lo"]], c[cols["hi"]]))
    assert (b.best["label"], b.runner_up["label"]) == (a["label"], c["label"])
    assert b.ratio == pytest.approx(a[fr.target_column(100)] / c[fr.target_column(100)])
    assert b.verdict == uncertainty.ratio_verdict(r) and b.ratio_lo == pytest.approx(r.lo)
    words = frontier_words.ratio_text(b.ratio, b.ratio_lo, b.ratio_hi, b.verdict)
    assert ("within noise" in words) == (b.verdict == "within-noise")
    assert frontier_words.ratio_text(1.03, 0.95, 1.12, "within-noise").startswith("within noise (1.03×")
    assert "higher" not in frontier_words.ratio_text(1.03, 0.95, 1.12, "within-noise")


def test_acceptance_per_reading_and_a_frontier_mixing_forced_with_measured(raw_points):
    """The vLLM console log's acceptance (2.33) is measured; the V4.1 Flash AgentX table names DSpark without saying
    how acceptance was obtained (not stated); R1 points without MTP have none. A frontier holding a measured point and
    the same point marked forced says it mixes them."""
    measured = raw_points[raw_points["acceptance_source"] == "measured"]
    agentx = raw_points[raw_points["workload"] == "agentx"]
    plain_r1 = raw_points[(raw_points["model"] == "DeepSeek-R1-0528") & (raw_points["spec_decode"] == "none")]
    assert set(fr.acceptance_of(measured)) == {"measured"}
    assert set(fr.acceptance_of(agentx)) == {"not stated"}
    assert set(fr.acceptance_of(plain_r1.head(20))) == {"none"}
    assert frontier_words.acceptance_text("not stated") == "acceptance not stated"
    assert "not like-for-like" in frontier_words.acceptance_text("forced+measured")
    table = fr.capacity_table(fr.frontier(agentx, by=fr.REPORT_BY), targets=[100], by=fr.REPORT_BY)
    assert table[fr.acceptance_column(100)].tolist() == ["not stated"]
    assert not table["mixed_forced_measured"].any()
    mixed = agentx.copy()
    mixed["acceptance_source"] = ["forced"] * 4 + ["measured"] * 4
    table = fr.capacity_table(fr.frontier(mixed, by=fr.REPORT_BY), targets=[100], by=fr.REPORT_BY)
    assert table["mixed_forced_measured"].tolist() == [True]
    table.insert(0, "label", ["GB300 NVL72 · fp4 · node · agentx"])
    assert page.mixed_acceptance_text(table).startswith("**1 frontier mixes forced with measured acceptance**")


def test_v4_family_page_ranks_readings_within_one_workload(published):
    """The DeepSeek V4 page: one capacity finding per workload (AgentX apart from random 8K/1K), each reading from a
    published table and labelled so, and the fastest point the AgentX table's concurrency-1 row."""
    p = page.build(published, model=V4_FAMILY, isl=None, osl=None, source_format="published-table")
    lead, found = p._headline(md=False)
    topics = [t for t, _ in found]
    assert topics[:2] == ["Capacity (agentx)", "Capacity (random-capped · 8k/1k)"]
    assert "DeepSeek-V4.1-Flash · GB300 NVL72 · fp4 · node · agentx" in found[0][1]
    assert "agentx" not in found[1][1]
    assert "44 of 44 points from published tables" in lead
    readings = p.readings_display()
    assert set(readings["source"]) == {"published table"}
    fastest = p.results()["fastest_point"]["DeepSeek-V4.1-Flash · GB300 NVL72 · fp4 · node · agentx"]
    assert fastest["source_kind"] == "published-table" and fastest["acceptance"] == "not stated"
    assert fastest["source_url"].startswith("https://github.com/SemiAnalysisAI/InferenceX/pull/3176")
    assert "23 more points state no tok/s/GPU" in p.left_out


def test_v4_page_says_its_points_give_mean_ttft_only_and_how_many_waited_long(published):
    """The published V4 rows give mean TTFT, never a median: the page says no point states a median TTFT and
    counts the frontier points whose mean TTFT is over the 10 s limit (recomputed here from the frontier points)."""
    p = page.build(published, model=V4_FAMILY, isl=None, osl=None, source_format="published-table")
    assert p.fronts["ttft_ms_p50"].isna().all()
    long = int((p.fronts["ttft_ms_mean"] > 10_000).sum())
    assert long == 4
    assert "**No frontier point here states a median TTFT**" in p.prose
    assert f"**{long} of them above 10 s**" in p.prose
    assert f"mean TTFT {text.seconds(p.fronts['ttft_ms_mean'].min() / 1000)}–" in p.prose
    assert "tok/s/user here is 1000 / mean TPOT on every point" in p.prose
    assert p.user_axis_label == "tok/s/user (1000 / mean TPOT)"
