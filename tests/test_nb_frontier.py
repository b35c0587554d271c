"""20-frontier on the InferenceX snapshot: the notebook as the session's rendered suite ran it, and its page function
with other parameters; every number recomputed here."""

from __future__ import annotations

import math

import pytest
from test_frontier import brute_force_front, brute_force_lower_front, log_interp

TARGETS = [50, 100, 200]


def expected_groups(points, *, isl, osl, denominator):
    """Per hardware · precision · scope: brute-force frontier, tok/s/GPU at each target, the fastest point."""
    sel = points[(points["format"] == "inferencex-api") & (points["model"] == "DeepSeek-R1-0528")
                 & (points["isl"] == isl) & (points["osl"] == osl) & points["output_tok_s"].notna()
                 & ~points["flags"].str.contains("failed-run|inconsistent-throughput")]
    out = {}
    for (hw, prec, scope), grp in sel.groupby(["hardware", "precision", "scope"]):
        gpus = grp["n_gpus"]
        if denominator == "decode":
            gpus = gpus.where(~grp["disagg"].astype(bool), grp["n_decode_gpus"])
        u, g = grp["tok_s_per_user"].to_list(), (grp["output_tok_s"] / gpus).to_list()
        front = sorted(brute_force_front(u, g))
        fastest = max(range(len(u)), key=lambda i: u[i])
        slowest = min(front, key=lambda i: (u[i], -g[i]))
        out[f"{hw} · {prec} · {scope}"] = {
            "capacity": {f"{t}": log_interp([u[i] for i in front], [g[i] for i in front], t) for t in TARGETS},
            "lower_bound": {f"{t}": g[slowest] if t < u[slowest] else math.nan for t in TARGETS},
            "fastest_point": {"tok_s_per_user": u[fastest], "tok_s_per_gpu": g[fastest],
                              "concurrency": grp["concurrency"].iloc[fastest], "n_gpus": grp["n_gpus"].iloc[fastest],
                              "ttft_ms_p50": grp["ttft_ms_p50"].iloc[fastest]},
            "n_gpus_range": [grp["n_gpus"].iloc[front].min(), grp["n_gpus"].iloc[front].max()],
            "n_over_ttft": int((grp["ttft_ms_p50"].iloc[front] > 10_000).sum()),
            "n_frontier": len(front),
        }
    return out


PRICES = {"H100 SXM": 1.30, "H200 SXM": 1.41, "B200": 1.95, "GB200 NVL72": 2.21, "GB300 NVL72": 2.65}


def expected_efficiency(points, *, isl, osl, denominator, prices=PRICES, levels=(50, 100)):
    """Per group: $/M output tokens at each level from the price and the brute-force tok/s/GPU frontier, and J per
    output token on the lower envelope of the points with measured power (GPU power × GPUs ÷ output tok/s)."""
    sel = points[(points["format"] == "inferencex-api") & (points["model"] == "DeepSeek-R1-0528")
                 & (points["isl"] == isl) & (points["osl"] == osl) & points["output_tok_s"].notna()
                 & ~points["flags"].str.contains("failed-run|inconsistent-throughput")]
    usd, joules = {}, {}
    for (hw, prec, scope), grp in sel.groupby(["hardware", "precision", "scope"]):
        label = f"{hw} · {prec} · {scope}"
        gpus = grp["n_gpus"]
        if denominator == "decode":
            gpus = gpus.where(~grp["disagg"].astype(bool), grp["n_decode_gpus"])
        u, g = grp["tok_s_per_user"].to_list(), (grp["output_tok_s"] / gpus).to_list()
        front = sorted(brute_force_front(u, g))
        if hw in prices:
            usd[label] = {f"{t}": prices[hw] * 1e6 / (3600 * log_interp([u[i] for i in front],
                                                                       [g[i] for i in front], t)) for t in levels}
        power = grp[grp["power_w"].notna()]
        if len(power):
            pu = power["tok_s_per_user"].to_list()
            j = (power["power_w"] * power["n_gpus"] / power["output_tok_s"]).to_list()
            if denominator == "decode":
                j = [jr if d else ja for ja, jr, d in zip(j, power["joules_per_output_token"], power["disagg"])]
            low = sorted(brute_force_lower_front(pu, j))
            joules[label] = {f"{t}": 1.0 / log_interp([pu[i] for i in low], [1.0 / j[i] for i in low], t)
                             for t in levels}
    return usd, joules


def _check_efficiency(results, usd, joules):
    assert sorted(results["usd_per_mtok"]) == sorted(usd)
    assert sorted(results["j_per_output_token"]) == sorted(joules)
    n = 0
    for got_all, want_all in ((results["usd_per_mtok"], usd), (results["j_per_output_token"], joules)):
        for label, want in want_all.items():
            for t, value in want.items():
                got = got_all[label][t]
                if math.isnan(value):
                    assert got is None, (label, t)
                else:
                    assert got == pytest.approx(value, rel=1e-9), (label, t)
                    n += 1
    for label, want in joules.items():
        for t, value in want.items():
            if not math.isnan(value):
                assert results["tok_s_per_mw"][label][t] == pytest.approx(1e6 / value, rel=1e-9)
    return n


def _check(results, expected):
    assert sorted(results["groups"]) == sorted(expected)
    reached = 0
    for label, exp in expected.items():
        for t, value in exp["capacity"].items():
            got = results["capacity"][label][t]
            if math.isnan(value):
                assert got is None, (label, t)
            else:
                assert got == pytest.approx(value, rel=1e-9), (label, t)
                reached += 1
        for t, value in exp["lower_bound"].items():
            got = results["capacity_lower_bound"][label][t]
            if math.isnan(value):
                assert got is None, (label, t)
            else:
                assert got == pytest.approx(value) and results["capacity_reading"][label][t] == "lower bound"
        end = results["fastest_point"][label]
        for key in ("tok_s_per_user", "tok_s_per_gpu", "ttft_ms_p50"):
            assert end[key] == pytest.approx(exp["fastest_point"][key]), (label, key)
        assert end["concurrency"] == exp["fastest_point"]["concurrency"]
        assert end["n_gpus"] == exp["fastest_point"]["n_gpus"]
        assert results["n_gpus_range"][label] == exp["n_gpus_range"]
    n_over = sum(e["n_over_ttft"] for e in expected.values())
    n_front = sum(e["n_frontier"] for e in expected.values())
    assert results["n_frontier_over_ttft_limit"] == n_over and results["n_frontier_points"] == n_front
    assert f"{n_over} of {n_front} frontier points have a median TTFT above 10 s" in results["prose"]
    return reached


def test_frontier_notebook_tables_capacity_at_50_100_200_and_fastest_points(suite_results, raw_points):
    results = suite_results("20-frontier")  # as the suite runs it: its own parameters, data/processed
    expected = expected_groups(raw_points, isl=1024, osl=1024, denominator="all")
    assert len(expected) == 22
    reached = _check(results, expected)
    assert reached == 42  # groups × targets that the measured frontiers reach (20 + 18 + 4)
    assert results["denominator"] == "all" and results["targets"] == TARGETS
    assert "all GPUs (prefill + decode)" in results["headline"]
    # the headline's example: B200 fp4 node at 50 tok/s/user, between concurrency 128 and 64 points
    assert results["capacity"]["B200 · fp4 · node"]["50"] == pytest.approx(
        expected["B200 · fp4 · node"]["capacity"]["50"])
    # B300 fp4 node starts at 52.6 tok/s/user: blank at 50 in the numbers, a lower bound in the prose
    assert results["capacity"]["B300 · fp4 · node"]["50"] is None
    assert results["capacity_reading"]["B300 · fp4 · node"]["50"] == "lower bound"
    assert "B300 · fp4 · node ≥ 787" in results["prose"]
    assert results["n_gpus_range"]["GB300 NVL72 · fp4 · rack"] == [12, 48]
    # the page says what it is about
    assert results["model"] == "DeepSeek-R1-0528" and results["title"].startswith("DeepSeek-R1-0528 frontiers, 1,024")
    assert results["hardware"] == ["B200", "B300", "GB200 NVL72", "GB300 NVL72", "H100 SXM", "H200 SXM", "MI300X",
                                   "MI325X", "MI355X"]
    # shares are fractions in the numbers and percentages with a sign in the text: 0.39%, not 0.393
    grp = raw_points[(raw_points["format"] == "inferencex-api") & (raw_points["hardware"] == "B200")
                     & (raw_points["precision"] == "fp4") & (raw_points["scope"] == "multi-node")
                     & (raw_points["isl"] == 1024) & (raw_points["osl"] == 1024)]
    share = results["fastest_share_of_capacity"]["B200 · fp4 · multi-node"]
    assert share == pytest.approx(expected["B200 · fp4 · multi-node"]["fastest_point"]["tok_s_per_gpu"]
                                  / (grp["output_tok_s"] / grp["n_gpus"]).max(), rel=1e-9)
    assert 0.0038 < share < 0.0040
    assert "keeps 0.39% of that group's best tok/s/GPU" in results["headline"]

    # cost and energy at 50 and 100 tok/s/user, recomputed from the prices and the raw power
    usd, joules = expected_efficiency(raw_points, isl=1024, osl=1024, denominator="all")
    # 12 priced groups × 2 levels, less 3 above their measured range, and MI355X fp4/fp8 node at 100 tok/s/user
    assert _check_efficiency(results, usd, joules) == 21 + 2
    assert sorted(joules) == ["MI355X · fp4 · node", "MI355X · fp8 · node"]
    assert results["no_price"] == ["B300", "MI300X", "MI325X", "MI355X"]
    assert results["prices_used"]["B200"]["usd_per_gpu_hour"] == 1.95
    assert results["prices_used"]["B200"]["source"].startswith("https://inferencex.semianalysis.com/")
    assert results["n_points_with_power"] == 7 and results["power_scope"] == "GPU power only"
    # MI355X fp4 node: its points with power start at 88.8 tok/s/user, so at 50 only a ceiling: 3.64 J
    assert results["j_per_output_token_reading"]["MI355X · fp4 · node"]["50"] == "lower bound"
    assert results["tok_s_per_mw_floor"]["MI355X · fp4 · node"]["50"] == pytest.approx(1e6 / 3.638711, rel=1e-5)
    cheapest = min((v["50"], k) for k, v in usd.items() if not math.isnan(v["50"]))
    assert cheapest[1] == "GB300 NVL72 · fp4 · rack"
    # the cheapest reading is rough (a 4.7x gap): the headline leads with the one close points support, then it
    assert "Cost: lowest at 50 tok/s/user, read between close frontier points, is $0.22" in results["headline"]
    assert f"a rough reading between points 4.7× apart gives ${cheapest[0]:.2f} per million output tokens (GB300 " \
           "NVL72 · fp4 · rack at $2.65/GPU-hour" in results["headline"]
    assert "no cost figure, for B300, MI300X, MI325X, MI355X" in results["headline"]
    assert "Energy (GPU power only): measured on 7 of 169 points, all on MI355X" in results["headline"]


def frontier_results(points, **parameters) -> dict:
    """What 20-frontier saves for these parameters (its own defaults for the rest), from the page function the
    notebook calls; the notebook itself runs in the session's rendered suite."""
    from conftest import ROOT, page_results

    from analysis.pages import frontier as frontier_page
    from analysis.report.suite import notebook_defaults

    p = {**notebook_defaults(ROOT / "notebooks" / "20-frontier.ipynb"), **parameters}
    return page_results(frontier_page.build(
        points, model=p["model"], isl=p["isl"], osl=p["osl"], targets=p["targets"], denominator=p["denominator"],
        source_format=p["source_format"], ttft_limit_s=p["ttft_limit_s"], ttft_max_ms=p["ttft_max_ms"],
        levels=p["efficiency_levels"], prices=p["prices"], prices_path=p["prices_path"]))


def test_frontier_page_with_decode_denominator_8k1k(raw_points):
    results = frontier_results(raw_points, isl=8192, osl=1024, denominator="decode",
                               prices={"MI355X": {"usd_per_gpu_hour": 2.0, "source": "a quote"}})
    expected = expected_groups(raw_points, isl=8192, osl=1024, denominator="decode")
    assert _check(results, expected) > 20
    # a price given as a parameter brings MI355X into the cost view and is named as its source
    usd, joules = expected_efficiency(raw_points, isl=8192, osl=1024, denominator="decode",
                                      prices={**PRICES, "MI355X": 2.0})
    assert _check_efficiency(results, usd, joules) > 20
    assert "MI355X · fp8 · multi-node" in results["usd_per_mtok"]
    assert results["prices_used"]["MI355X"] == {"hardware": "MI355X", "usd_per_gpu_hour": 2.0,
                                                "basis": "as given by the user", "source": "a quote", "date": ""}
    assert results["no_price"] == ["B300", "MI300X", "MI325X"]
    # with decode GPUs only, the disaggregated MI355X point's J/token is InferenceX's own decode figure (0.685 J)
    assert "MI355X · fp8 · multi-node" in joules
    assert "decode GPUs only" in results["headline"]
    # the fastest B200 fp8 multi-node point decodes at 154 tok/s/user but waits 79 s for its first token
    assert "B200 · fp8 · multi-node 154 tok/s/user at concurrency 256 with TTFT p50 79 s" in \
        results["fastest_points_prose"]


def test_frontier_page_ttft_max_ms_drops_long_waits(raw_points):
    results = frontier_results(raw_points, isl=8192, osl=1024, ttft_max_ms=10_000)
    assert results["n_frontier_over_ttft_limit"] == 0
    end = results["fastest_point"]["B200 · fp8 · multi-node"]
    assert end["ttft_ms_p50"] <= 10_000 and end["tok_s_per_user"] < 154
