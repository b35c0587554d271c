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
