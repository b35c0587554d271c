"""The latency report (``notebooks/60-latency.ipynb``): latency as distributions where runs kept their requests,
goodput under an SLO, how the tail grows with concurrency, and how many requests and how wide an interval stand
behind each number.

:func:`build` computes everything once (:mod:`analysis.latency`, :mod:`analysis.goodput`,
:mod:`analysis.uncertainty`); the notebook only displays the parts. Sentences hold numbers and fixed words; every
data-derived string reaches Markdown through :func:`analysis.text.esc` and tables through ``report.show_table``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import data, latency, latency_words, text, uncertainty
from analysis import frontier as fr
from analysis import goodput as gp
from analysis.text import count

DEFAULT_SLO = "ttft_p99<=2s; tpot<=50ms"
METRIC_WORDS = {"ttft_ms": "TTFT", "tpot_ms": "TPOT", "itl_ms_mean": "ITL (request mean)", "e2e_ms": "E2E"}
MAX_GROWTH_LINES = 12


def rows_read(points: pd.DataFrame, *, requests_path: str | Path | None = None, model: str = "DeepSeek-R1-0528",
              isl: float = 1024, osl: float = 1024, source_format: str | None = "inferencex-api",
              **_ignored) -> pd.DataFrame:
    """The rows of ``points`` this report reads: the points with per-request rows and the tail-growth selection
    (``model``, lengths and reader, as the frontier selects them)."""
    requests = data.load_requests(requests_path)
    with_requests = latency.points_with_requests(points, requests)
    growth = fr.select(points, model=model, isl=isl, osl=osl, source_format=source_format)
    keep = points.index.isin(with_requests) | points.index.isin(growth.index)
    return points[keep]


def _fmt(x, digits: int = 3) -> str:
    if x is None or not np.isfinite(x):
        return "–"
    if float(x).is_integer():
        return f"{x:,.0f}"
    return f"{x:,.{digits}g}" if abs(x) < 1e4 else f"{x:,.0f}"


def _ms(x: float) -> str:
    if x is None or not np.isfinite(x):
        return "–"
    return f"{x / 1000:.3g} s" if x >= 1000 else f"{x:.3g} ms"


def run_label(p: pd.Series) -> str:
    """'Kimi-K2.7-Code-MXFP4 · MI355X ×4 · conc 1 (aiperf)' — plain text (figures; escape before Markdown)."""
    hw = p["hardware"] if p.get("hardware") not in (None, "unknown") else "hardware unknown"
    gpus = f" ×{p['n_gpus']:g}" if np.isfinite(p.get("n_gpus", math.nan)) else ""
    conc = f"conc {p['concurrency']:g}" if np.isfinite(p.get("concurrency", math.nan)) else "conc unknown"
    return f"{p['model']} · {hw}{gpus} · {conc} ({p['tool']})"


def group_label(row: pd.Series) -> str:
    parts = [str(row["hardware"]), str(row["precision"]), str(row["framework"])]
    if np.isfinite(row.get("tp", math.nan)):
        parts.append(f"TP{row['tp']:g}" + (f"/EP{row['ep']:g}" if np.isfinite(row.get("ep", math.nan))
                                           and row["ep"] > 1 else ""))
    if np.isfinite(row.get("n_gpus", math.nan)):
        parts.append(f"{row['n_gpus']:g} GPUs")
    if str(row.get("spec_decode")) not in ("none", "nan", "unknown", ""):
        parts.append(str(row["spec_decode"]))
    if bool(row.get("disagg")) is True:
        parts.append("disagg")
    return " ".join(parts)


@dataclass
class LatencyPage:
    points: pd.DataFrame
    requests: pd.DataFrame
    slo_text: str = DEFAULT_SLO
    share_level: float = 0.9
    model: str = "DeepSeek-R1-0528"
    isl: float = 1024
    osl: float = 1024
    source_format: str | None = "inferencex-api"
    level: float = uncertainty.LEVEL
    slo: gp.Slo = field(init=False)
    linked: pd.DataFrame = field(init=False)
    runs: pd.DataFrame = field(init=False)
    tails: pd.DataFrame = field(init=False)
    goodput: pd.DataFrame = field(init=False)
    intervals: pd.DataFrame = field(init=False)
    repeats: pd.DataFrame = field(init=False)
    growth_points: pd.DataFrame = field(init=False)
    growth: dict = field(init=False)
    capacity: pd.DataFrame = field(init=False)

    def __post_init__(self):
        self.slo = gp.parse_slo(self.slo_text)
        self.linked = latency.link_requests(self.points, self.requests)
        ids = list(pd.unique(self.linked["point"])) if len(self.linked) else []
        self.runs = self.points.loc[ids]
        self.tails = latency.tail_table(self.points, self.requests)
        self.goodput = gp.goodput(self.points, self.requests, self.slo)
        self.intervals = uncertainty.point_intervals(self.points, self.requests, level=self.level)
        self.repeats = uncertainty.repeat_spread(self.points)
        self.growth_points = fr.select(self.points, model=self.model, isl=self.isl, osl=self.osl,
                                       source_format=self.source_format)
        sel_tails = self.tails[self.tails["point"].isin(self.growth_points.index)]
        self.growth = {m: latency.tail_growth(self.points, sel_tails, metric=m) for m in ("tpot_ms", "ttft_ms")}
        sel_goodput = self.goodput[self.goodput["point"].isin(self.growth_points.index)]
        self.capacity = gp.capacity(self.points, sel_goodput, level=self.share_level)

    # --- numbers ---------------------------------------------------------------------------------------------
    @property
    def n_requests(self) -> int:
        return len(self.linked)

    @property
    def summary_only(self) -> pd.DataFrame:
        return self.points.drop(index=self.runs.index)

    def run_labels(self) -> dict:
        return {i: run_label(self.points.loc[i]) for i in self.runs.index}

    def long(self) -> pd.DataFrame:
        return latency.latency_long(self.linked)

    def slo_ms(self) -> dict[str, float]:
        return {latency.DISTRIBUTION_METRICS[["ttft", "tpot", "e2e"].index(t.metric)]: t.limit_ms
                for t in self.slo.terms if t.metric in ("ttft", "tpot", "e2e")}

    def drawn_groups(self, metric: str = "tpot_ms") -> dict[int, str]:
        """One configuration per hardware × precision (the one measured at the most concurrencies, then the widest
        range), at most :data:`MAX_GROWTH_LINES`: group -> label."""
        g = self.growth[metric]
        if g.empty:
            return {}
        per = g.groupby("group").agg(hardware=("hardware", "first"), precision=("precision", "first"),
                                     loads=("concurrency", "size"), high=("concurrency", "max"))
        per = per.sort_values(["loads", "high"], ascending=False, kind="stable")
        best = per.groupby(["hardware", "precision"], sort=True).head(1).sort_values(["hardware", "precision"])
        best = best.head(MAX_GROWTH_LINES)
        first = g.groupby("group").first()
        return {int(i): group_label(first.loc[i]) for i in best.index}

    # --- tables ----------------------------------------------------------------------------------------------
    def run_table(self) -> pd.DataFrame:
        """The runs with per-request rows: where from, requests (ok / failed), input and output tokens."""
        rows = []
        for i, p in self.runs.iterrows():
            rq = self.linked[self.linked["point"] == i]
            ok = latency.ok_requests(rq)
            inp = ok["input_tokens"].astype(float)
            rows.append({"run": run_label(p), "file": p["source_file"], "requests": len(rq),
                         "failed": int(len(rq) - len(ok)),
                         "input tokens p50 (p1–p99)": f"{_fmt(inp.median(), 4)} ({_fmt(inp.quantile(.01), 4)}–"
                                                      f"{_fmt(inp.quantile(.99), 4)})",
                         "output tokens p50": _fmt(ok["output_tokens"].astype(float).median(), 4)})
        return pd.DataFrame(rows)

    def tails_display(self) -> pd.DataFrame:
        t = self.tails[(self.tails["basis"] == "requests") & self.tails["metric"].isin(latency.DISTRIBUTION_METRICS)]
        labels = self.run_labels()
        rows = []
        for _, r in t.iterrows():
            rows.append({"run": labels.get(r["point"], str(r["point"])), "metric": METRIC_WORDS[r["metric"]],
                         "n": int(r["n"]), "p50": _ms(r["p50"]), "p90": _ms(r["p90"]), "p99": _ms(r["p99"]),
                         "mean": _ms(r["mean"]), "std": _ms(r["std"]), "p99 / p50": f"{r['tail_ratio']:.2f}×"})
        return pd.DataFrame(rows)

    def goodput_display(self) -> pd.DataFrame:
        g = self.goodput[self.goodput["point"].isin(self.runs.index)]
        labels = self.run_labels()
        rows = []
        for _, r in g.iterrows():
            rows.append({"run": labels[r["point"]], "requests": int(r["requests"]), "met every term": int(r["met"]),
                         "share": f"{100 * r['share']:.1f}%", "goodput req/s": _fmt(r["goodput_req_s"]),
                         "goodput output tok/s": _fmt(r["goodput_tok_s"]),
                         "per GPU": (f"{_fmt(r['goodput_tok_s_per_gpu'])} (÷ {r['gpus']:g} GPUs, "
                                     f"{r['gpu_denominator']})") if np.isfinite(r["goodput_tok_s_per_gpu"])
                         else "– (GPU count unknown)",
                         "percentile check": {1.0: "met", 0.0: "not met"}.get(r["percentiles_met"], "–")})
        return pd.DataFrame(rows)

    def intervals_display(self) -> pd.DataFrame:
        iv = self.intervals.loc[self.runs.index]
        labels = self.run_labels()
        rows = []
        for i, r in iv.iterrows():
            rows.append({"run": labels[i], "n requests": f"{r['n_requests']:g} ({r['n_requests_source']})",
                         "tok/s/user": _fmt(r["tok_s_per_user"]),
                         f"tok/s/user {100 * self.level:g}% interval": f"{_fmt(r['user_lo'])}–{_fmt(r['user_hi'])}",
                         "tok/s/GPU": _fmt(r["tok_s_per_gpu"]),
                         f"tok/s/GPU {100 * self.level:g}% interval": (f"{_fmt(r['gpu_lo'])}–{_fmt(r['gpu_hi'])}"
                                                             if np.isfinite(r["gpu_lo"]) else "–"),
                         "method": r["user_method"]})
        return pd.DataFrame(rows)

    def coverage_display(self) -> pd.DataFrame:
        """Points without per-request rows, by reader: which percentiles their summaries give, where their
        request count comes from and which interval method applies."""
        pts = self.summary_only
        iv = self.intervals.loc[pts.index]
        rows = []
        for fmt, grp in pts.groupby("format", sort=True):
            ivg = iv.loc[grp.index]

            def have(col, grp=grp):
                return int(grp[col].notna().sum()) if col in grp.columns else 0

            rows.append({"reader (format)": fmt, "points": len(grp),
                         "TTFT p50 / p90 / p99": f"{have('ttft_ms_p50')} / {have('ttft_ms_p90')} / "
                                                 f"{have('ttft_ms_p99')}",
                         "TPOT p50 / p90 / p99": f"{have('tpot_ms_p50')} / {have('tpot_ms_p90')} / "
                                                 f"{have('tpot_ms_p99')}",
                         "E2E p50 / p99": f"{have('e2e_ms_p50')} / {have('e2e_ms_p99')}",
                         "std": "not kept",
                         "n requests from": ", ".join(f"{k} {v}" for k, v in
                                                      ivg["n_requests_source"].value_counts().items()),
                         "tok/s/user interval": ", ".join(f"{k} {v}" for k, v in
                                                          ivg["user_method"].value_counts().items())})
        return pd.DataFrame(rows)

    def growth_display(self) -> pd.DataFrame:
        """Per drawn configuration: TPOT and TTFT tail ratio at its lowest and highest concurrency, p99 growth."""
        drawn = self.drawn_groups()
        g_tpot = self.growth["tpot_ms"]
        summ = latency.growth_summary(g_tpot).set_index("group")
        first = g_tpot.groupby("group").first()
        ttft = self.growth["ttft_ms"]
        rows = []
        for grp, label in drawn.items():
            s = summ.loc[grp]
            key = first.loc[grp, latency.GROWTH_BY[:-1]]
            match = ttft
            for c, v in key.items():
                match = match[(match[c] == v) | (match[c].isna() & pd.isna(v))]
            t_low = match[match["concurrency"] == s["conc_low"]]["tail_ratio"]
            t_high = match[match["concurrency"] == s["conc_high"]]["tail_ratio"]
            rows.append({"configuration": label, "concurrency": f"{s['conc_low']:g} → {s['conc_high']:g}",
                         "TPOT p99/p50": f"{s['tail_low']:.2f} → {s['tail_high']:.2f}",
                         "TPOT p50, p99 grew": f"{s['p50_growth']:.2f}×, {s['p99_growth']:.2f}×",
                         "TTFT p99/p50": (f"{t_low.iloc[0]:.2f} → {t_high.iloc[0]:.2f}" if len(t_low) and len(t_high)
                                          else "–")})
        return pd.DataFrame(rows)

    def capacity_display(self) -> pd.DataFrame:
        c = self.capacity
        rows = []
        for _, r in c.iterrows():
            if r["loads"] < 2:
                continue
            cap = r["capacity_concurrency"]
            if not np.isfinite(cap):
                cap_text = "none shown (not even the lowest load)"
            elif not np.isfinite(r["first_below"]):
                cap_text = f"{_fmt(cap)} (every measured load met)"
            else:
                cap_text = _fmt(cap)
            rows.append({"configuration": group_label(r), "loads": int(r["loads"]),
                         f"capacity (share ≥ {100 * self.share_level:g}%)": cap_text,
                         "share there": "–" if not np.isfinite(r["share_at_capacity"])
                         else f"≥ {100 * r['share_at_capacity']:.0f}%",
                         "goodput tok/s/GPU there": _fmt(r["goodput_tok_s_per_gpu"]),
                         "first load not shown to meet": _fmt(r["first_below"])})
        return pd.DataFrame(rows)

    # --- sentences -------------------------------------------------------------------------------------------
    @property
    def title_md(self) -> str:
        return "Latency as distributions, goodput under an SLO, and the uncertainty behind each number"

    def headline(self) -> str:
        n_sum = len(self.summary_only)
        return (f"{count(len(self.runs), 'run')} kept every request ({self.n_requests:,} requests): their TTFT, TPOT "
                f"and E2E are shown as distributions below. The other {n_sum:,} points keep summary percentiles "
                "only (p50/p90/p99 where the tool wrote them, no standard deviation): for them this page shows "
                "what the summaries allow and says so.")

    def slo_words(self) -> str:
        """'TTFT ≤ 2 s (p99) and TPOT ≤ 50 ms' — from parsed numbers and fixed metric names only."""
        def one(t: gp.SloTerm) -> str:
            op = "<" if t.strict else "≤"
            stat = f" ({t.stat})" if t.stat else ""
            return f"{t.metric.upper()} {op} {_ms(t.limit_ms)}{stat}"

        return " and ".join(one(t) for t in self.slo.terms)

    def slo_text_md(self) -> str:
        basis = latency_words.BASIS_WORDS["requests"]
        return (f"SLO: {self.slo_words()}. {basis[0].upper() + basis[1:]} (the vLLM and AIPerf "
                "`--goodput` test). A term's `_p99` suffix does not change the per-request test; the "
                "*percentile check* column applies it to the run's own percentile instead (MLPerf-style: is the "
                "run's p99 TTFT within 2 s?). Goodput req/s = the run's successful req/s × met / successful; "
                "goodput output tok/s = its output tok/s × the good requests' share of output tokens.")

    def tool_definitions_md(self) -> str:
        return "\n".join(f"- {v}" for v in latency_words.TOOL_DEFINITIONS.values())

    def tail_note_md(self) -> str:
        """What the shipped runs' tails say, with the caveat a reader needs (input lengths differ)."""
        t = self.tails[self.tails["basis"] == "requests"]
        if t.empty:
            return "No run in this selection kept its requests."
        lines = []
        labels = self.run_labels()
        for i in self.runs.index:
            ttft = t[(t["point"] == i) & (t["metric"] == "ttft_ms")]
            tpot = t[(t["point"] == i) & (t["metric"] == "tpot_ms")]
            if ttft.empty or tpot.empty:
                continue
            lines.append(f"- {text.esc(labels[i])}: TTFT p99/p50 {ttft['tail_ratio'].iloc[0]:.2f}×, TPOT p99/p50 "
                         f"{tpot['tail_ratio'].iloc[0]:.2f}×.")
        return ("Tail ratios (p99 / p50) of each run:\n\n" + "\n".join(lines) + "\n\nA long TTFT tail is not "
                "always queueing: when a run's prompts differ in length (an agentic trace, see the input-token "
                "range in the first table), the longest prompts take longest to prefill. Compare tails only "
                "between runs of like prompts.")

    def ecdf_caption_md(self) -> str:
        return ("Each curve is one run: the share of its successful requests (y) finished within a time (x, log "
                "scale). A curve further left is faster; a long flat top is the tail. Dashed lines: the SLO's "
                "limits. TPOT is per request, (E2E − TTFT) / (output tokens − 1). The three runs are different "
                "models on different hardware and prompts: the figure shows the shape of each distribution, not "
                "a comparison between them.")

    def interval_note_md(self) -> str:
        methods = "\n".join(f"- `{k}`: {v}" for k, v in latency_words.METHOD_WORDS.items())
        return (f"Intervals are {100 * self.level:g}% confidence intervals. Methods:\n\n{methods}")

    def growth_intro_md(self) -> str:
        g = self.growth["tpot_ms"]
        summ = latency.growth_summary(g)
        if summ.empty:
            return "No configuration in this selection was measured at two or more concurrencies."
        src = text.esc(self.source_format or "every reader")
        return (f"From summaries only ({src}: {text.esc(self.model)}, {self.isl:g}/{self.osl:g} tokens): the "
                f"tool's p50 and p99 per point, no distribution. Over {count(len(summ), 'configuration')} measured at "
                f"two or more concurrencies, the median TPOT tail ratio p99/p50 is {summ['tail_low'].median():.2f} at "
                f"each one's lowest concurrency and {summ['tail_high'].median():.2f} at its highest; between them "
                f"TPOT p50 grew a median {summ['p50_growth'].median():.2f}× and p99 {summ['p99_growth'].median():.2f}×."
                f" The figure draws one configuration per hardware × precision (the one measured at the most "
                "concurrencies); the InferenceX snapshot keeps at most five concurrencies per configuration.")

    def capacity_intro_md(self) -> str:
        return (f"Capacity at the SLO: the largest measured concurrency up to which the share of requests meeting "
                f"every term stays at or above {100 * self.share_level:g}% at every measured load. These points "
                f"have summaries only, so the share is a lower bound "
                f"({latency_words.BASIS_WORDS['summary-lower-bound']}): the true capacity is at least the one shown, "
                "and a load *not shown to meet* the SLO may still meet it — its summary cannot tell. Configurations "
                "measured at a single load are left out.")

    def repeat_text_md(self) -> str:
        s = uncertainty.repeat_summary(self.repeats)
        if not s["groups"]:
            return "No configuration was measured twice on one date: no run-to-run spread from repeats."
        iv = self.intervals
        half = ((iv["user_hi"] - iv["user_lo"]) / 2 / iv["tok_s_per_user"]).replace([np.inf, -np.inf], np.nan)
        half_median = float(half.median()) if half.notna().any() else math.nan
        compare = ""
        if np.isfinite(half_median):
            wider = s["user_spread_median"] > 2 * half_median
            compare = (f" The median tok/s/user interval of one point is ±{100 * half_median:.1f}%: "
                       + ("re-runs differ by far more than one run's interval says, so a single run's interval "
                          "understates what a re-run would show." if wider else
                          "re-runs differ by about what one run's interval says."))
        return (f"Run-to-run spread: {count(s['groups'], 'configuration')} × concurrency measured by two or more "
                f"runs on one date. Their spread (max / min − 1) has a median of {100 * s['user_spread_median']:.1f}% "
                f"in tok/s/user and {100 * s['gpu_spread_median']:.1f}% in tok/s/GPU.{compare} A ratio between two "
                "points whose interval includes 1 is within noise, never faster or slower.")

    # --- results ---------------------------------------------------------------------------------------------
    def results(self) -> dict:
        runs = {}
        labels = self.run_labels()
        for i in self.runs.index:
            t = self.tails[(self.tails["point"] == i) & (self.tails["basis"] == "requests")].set_index("metric")
            g = self.goodput[self.goodput["point"] == i].iloc[0]
            iv = self.intervals.loc[i]
            runs[labels[i]] = {
                "requests": int(g["requests"]), "met": int(g["met"]), "share": float(g["share"]),
                "goodput_req_s": float(g["goodput_req_s"]), "goodput_tok_s": float(g["goodput_tok_s"]),
                **{f"{m}_{s}": float(t.at[m, s]) for m in t.index for s in ("p50", "p99", "tail_ratio")},
                "n_requests": float(iv["n_requests"]), "user_lo": float(iv["user_lo"]),
                "user_hi": float(iv["user_hi"]), "gpu_lo": float(iv["gpu_lo"]), "gpu_hi": float(iv["gpu_hi"]),
            }
        summ = latency.growth_summary(self.growth["tpot_ms"])
        rep = uncertainty.repeat_summary(self.repeats)
        cap = self.capacity[self.capacity["loads"] >= 2]
        return {
            "headline": self.headline(),
            "slo": self.slo.text(),
            "runs_with_requests": len(self.runs),
            "requests": self.n_requests,
            "summary_only_points": len(self.summary_only),
            "runs": runs,
            "growth_configurations": len(summ),
            "tpot_tail_low_median": float(summ["tail_low"].median()) if len(summ) else None,
            "tpot_tail_high_median": float(summ["tail_high"].median()) if len(summ) else None,
            "repeat_groups": rep["groups"],
            "repeat_user_spread_median": rep["user_spread_median"],
            "repeat_gpu_spread_median": rep["gpu_spread_median"],
            "capacity_configurations": len(cap),
            "capacity_met_somewhere": int(cap["capacity_concurrency"].notna().sum()),
            "n_requests_sources": self.intervals["n_requests_source"].value_counts().to_dict(),
        }


def build(points: pd.DataFrame, *, requests_path: str | Path | None = None, slo: str = DEFAULT_SLO,
          share_level: float = 0.9, model: str = "DeepSeek-R1-0528", isl: float = 1024, osl: float = 1024,
          source_format: str | None = "inferencex-api", level: float = uncertainty.LEVEL) -> LatencyPage:
    """The page from the points table and the per-request table at ``requests_path`` (default: ingest's)."""
    return LatencyPage(points=points, requests=data.load_requests(requests_path), slo_text=slo,
                       share_level=share_level, model=model, isl=isl, osl=osl, source_format=source_format,
                       level=level)


def results(page: LatencyPage) -> dict:
    """What the notebook saves (the same as ``page.results()``)."""
    return page.results()
