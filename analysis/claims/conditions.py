"""A claim's stated conditions: the number restated on each axis, its lengths, its context."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import pandas as pd

from analysis.claims.labels import lengths_text
from analysis.claims.registry import NOT_STATED, STATED, Claim, is_stated, lengths_in_tokens
from analysis.text import plain, whole

DEFAULT_CONTEXT = 1024

# --- 1. what kind of number ------------------------------------------------------------------------

def restate(claim: Claim) -> pd.DataFrame:
    """The claim on each axis (tok/s/user, tok/s/GPU, tok/s per system) where its stated conditions allow."""
    v, n, b = claim.value, claim.number("n_gpus"), claim.number("batch")
    at_user = claim.number("at_tok_s_per_user")
    rows = []

    def add(axis, value, how):
        rows.append({"axis": axis, "value": value, "how": how})

    if claim.kind == "per-user":
        add("tok/s/user", v, STATED)
        if not math.isnan(b) and not math.isnan(n):
            add("tok/s/GPU", v * b / n, f"computed: {whole(v)} × batch {plain(b)} / {plain(n)} GPUs")
            add("tok/s per system", v * b, f"computed: {whole(v)} × batch {plain(b)}")
        else:
            lacking = " and ".join(x for x, y in (("batch", b), ("GPU count", n)) if math.isnan(y))
            add("tok/s/GPU", math.nan, f"not possible: {lacking} not stated")
            add("tok/s per system", v * b if not math.isnan(b) else math.nan,
                f"computed: {whole(v)} × batch {plain(b)}" if not math.isnan(b) else "not possible: batch not stated")
    elif claim.kind == "per-GPU":
        add("tok/s/GPU", v, STATED)
        add("tok/s/user", at_user, STATED if not math.isnan(at_user) else "not stated")
        add("tok/s per system", v * n if not math.isnan(n) else math.nan,
            f"computed: {whole(v)} × {plain(n)} GPUs" if not math.isnan(n) else "not possible: GPU count not stated")
    elif claim.kind == "per-system":
        add("tok/s per system", v, STATED)
        add("tok/s/GPU", v / n if not math.isnan(n) else math.nan,
            f"computed: {whole(v)} / {plain(n)} GPUs" if not math.isnan(n) else "not possible: GPU count not stated")
        per_user = at_user if not math.isnan(at_user) else (v / b if not math.isnan(b) else math.nan)
        add("tok/s/user", per_user, STATED if not math.isnan(at_user) else (
            f"computed: {whole(v)} / batch {plain(b)}" if not math.isnan(b) else "not possible: batch not stated"))
    else:
        add(claim.unit, v, STATED)
        add("tok/s/GPU", math.nan, f"not possible: a {claim.kind} is not a throughput")
        add("tok/s/user", at_user, STATED if not math.isnan(at_user) else f"not possible: a {claim.kind}")
    return pd.DataFrame(rows)


def per_user_value(claim: Claim) -> float:
    """The per-user speed the claim states or implies (NaN when it implies none)."""
    r = restate(claim).set_index("axis")
    return float(r.loc["tok/s/user", "value"]) if "tok/s/user" in r.index else math.nan


def stated_lengths(claim: Claim) -> tuple[float, float] | None:
    """(ISL, OSL) in tokens when the claim states them as ``1024/2048``, ``1k/1k`` or ``32K / 8K``; else None."""
    return lengths_in_tokens(claim.isl_osl)


def context_for(claim: Claim) -> tuple[int, str]:
    """Mean context during decode: ISL + OSL/2 when lengths are stated as ``1024/2048`` or ``1k/1k``, else 1024."""
    lengths = stated_lengths(claim)
    if lengths:
        isl, osl = lengths
        return int(isl + osl / 2), f"ISL {whole(isl)} + OSL/2 {whole(osl / 2)} (from the stated lengths)"
    return DEFAULT_CONTEXT, f"{DEFAULT_CONTEXT} tokens assumed (lengths not stated)"


def matched_lengths(claim: Claim, points: pd.DataFrame) -> tuple[list[tuple[float, float]], str]:
    """The ISL/OSL pairs evidence may be compared at, and why.

    Stated lengths with evidence: only those. Stated lengths without evidence: the measured pair(s) nearest in
    log2 distance, said so. Not stated: every measured pair, each compared only with itself (like with like).
    """
    if points is None or points.empty or not {"isl", "osl"} <= set(points.columns):
        return [], "no lengths in the evidence"
    both = points[["isl", "osl"]].dropna().drop_duplicates()
    pairs = sorted((float(a), float(b)) for a, b in zip(both["isl"], both["osl"]) if a > 0 and b > 0)
    want = stated_lengths(claim)
    if want is None and is_stated(claim.isl_osl):
        return pairs, (f"lengths stated as {claim.isl_osl}, which no measured ISL/OSL pair matches: every "
                       "comparison stays within one measured pair and none is a percentage of the claim")
    if want is None:
        return pairs, ("the claim states no lengths: each comparison reads one evidence group at that group's own "
                       "lengths, named beside it, never one group's lengths against another's")
    if want in pairs:
        return [want], f"at the stated {lengths_text(*want)}"
    if not pairs:
        return [], f"no evidence with lengths (stated {lengths_text(*want)})"
    dist = {p: abs(math.log2(p[0] / want[0])) + abs(math.log2(p[1] / want[1])) for p in pairs}
    best = min(dist.values())
    near = [p for p in pairs if dist[p] == best]
    return near, (f"no evidence at the stated {lengths_text(*want)}; nearest measured: "
                  + " and ".join(lengths_text(*p) for p in near))




def base_precision(text) -> str | None:
    """The precision a claim's evidence is read at: ``fp4`` for ``fp4`` and for a per-component recipe led by it
    (``fp4,attention=bf16``); None when not stated."""
    return None if text in (None, NOT_STATED) else str(text).split(",")[0]


def lengths_match(claim: Claim, isl, osl) -> bool | None:
    """Whether evidence at ``isl``/``osl`` is at the claim's lengths: None when the claim states none, False when it
    states other lengths or names a dataset (``MLPerf datasets``) instead of lengths."""
    if not is_stated(claim.isl_osl):
        return None
    want = stated_lengths(claim)
    if want is None or isl is None or osl is None or pd.isna(isl) or pd.isna(osl):
        return False
    return (float(isl), float(osl)) == want


def spec_decode_of(claim: Claim) -> str | None:
    """The claim's speculative decoding in the points table's words (``mtp``, ``eagle``, ``none``); None when it
    is not stated or not settled (e.g. "allowed in the interactive scenario"). A method the text names counts even
    when a detail of it is not stated ("MTP extended to 3 layers; mean accepted tokens not stated" is ``mtp``)."""
    text = str(claim.spec_decode).strip().lower()
    if is_stated(text) and "not allowed" in text:  # "none (not allowed then)": ruled out, so none
        return "none"
    if not is_stated(text) or text.startswith("not stated") or "allowed" in text:
        return None
    if text in ("none", "no", "off") or text.startswith(("none", "no ", "no,", "no;", "without")):
        return "none"
    for word in ("mtp", "eagle", "dspark", "dflash", "medusa", "ngram"):
        if word in text:
            return word
    return None


# --- latency limits --------------------------------------------------------------------------------

@dataclass(frozen=True)
class LatencyLimit:
    """One limit a point must meet: ``metric`` (ttft or tpot) at ``stat`` (p50, p90, p99, mean) at most ``max_ms``."""

    metric: str
    stat: str
    max_ms: float
    source: str = "stated"

    @property
    def column(self) -> str:
        return f"{self.metric}_ms_{self.stat}"

    @property
    def text(self) -> str:
        value = f"{plain(self.max_ms / 1000)} s" if self.max_ms >= 1000 else f"{plain(self.max_ms)} ms"
        return f"{self.metric.upper()} {self.stat} ≤ {value}"


# MLPerf Inference scenario limits (99th percentiles), only as the claim sources quote them: DeepSeek-R1 Server "TTFT
# 2 s, >= 12.5 tok/s/user p99" (claims.csv C12, NVIDIA's MLPerf v5.1 release), DeepSeek-R1 Interactive "p99 TTFT <=
# 1.5 s, TPOT <= 15 ms" (C13, v6.0), Llama 2 70B Interactive "TTFT <= 450 ms, TPOT <= 40 ms" and Llama 3.1 405B
# Server "TTFT 6 s, TPOT 175 ms" (C11, v5.0). A scenario not listed here applies no limit, and the card says so.
SCENARIO_LIMITS = {
    ("deepseek-r1", "server"): (2000.0, 80.0, "MLPerf Server, DeepSeek-R1 (claims.csv C12)"),
    ("deepseek-r1", "interactive"): (1500.0, 15.0, "MLPerf Interactive, DeepSeek-R1 (claims.csv C13)"),
    ("llama-2-70b", "interactive"): (450.0, 40.0, "MLPerf Interactive, Llama 2 70B (claims.csv C11)"),
    ("llama-3-1-405b", "server"): (6000.0, 175.0, "MLPerf Server, Llama 3.1 405B (claims.csv C11)"),
}

_LIMIT = re.compile(r"(?P<pre>p50|p90|p99|median|mean)?\s*(?P<metric>TTFT|TPOT)\s*(?P<post>p50|p90|p99|median|mean)?"
                    r"\s*(?:<=|≤|<)\s*(?P<value>\d+(?:\.\d+)?)\s*(?P<unit>ms|s)\b", re.I)


def parse_latency_limits(text, *, source: str = "stated") -> list[LatencyLimit]:
    """Limits written as ``TTFT p99 <= 2 s; TPOT p50 <= 20 ms`` (or ``p99 TTFT ≤ 1.5 s``). A percentile left out
    is p99 when the text names p99 elsewhere, else p50; a number without ``<=`` is a reported value, not a limit."""
    if not is_stated(text):
        return []
    s = str(text)
    default = "p99" if re.search(r"p99", s, re.I) else "p50"
    out = []
    for m in _LIMIT.finditer(s):
        stat = (m.group("post") or m.group("pre") or default).lower().replace("median", "p50")
        value = float(m.group("value")) * (1000.0 if m.group("unit").lower() == "s" else 1.0)
        out.append(LatencyLimit(m.group("metric").lower(), stat, value, source))
    return out


def latency_limits(claim: Claim) -> tuple[list[LatencyLimit], str]:
    """The limits evidence must meet and where they come from: the claim's own ``latency`` limits, else those of
    the benchmark scenario it names (``scenario: MLPerf Server``), else none."""
    stated = parse_latency_limits(claim.latency)
    if stated:
        return stated, "stated in the claim"
    scen = str(claim.scenario).lower()
    if is_stated(claim.scenario) and "mlperf" in scen:
        if "offline" in scen and "server" not in scen.split("(")[0] and "interactive" not in scen.split("(")[0]:
            return [], f"{claim.scenario.split(' (')[0]} sets no latency limit"
        kind = "interactive" if "interactive" in scen else "server" if "server" in scen else None
        model = re.sub(r"[^a-z0-9]+", "-", str(claim.model_table or claim.model).lower())
        for (name, scenario), (ttft, tpot, source) in SCENARIO_LIMITS.items():
            if scenario == kind and model.startswith(name):
                return ([LatencyLimit("ttft", "p99", ttft, source), LatencyLimit("tpot", "p99", tpot, source)],
                        f"the limits of {source}")
        return [], f"no latency limits recorded for {claim.scenario} with this model"
    return [], "no latency limits stated"


# perfclaims' own limit for reading a capacity when neither the claim nor its benchmark scenario sets one: a
# saturated fixed-concurrency sweep otherwise reads "capacity" where a new request waits minutes for its first token.
DEFAULT_CAPACITY_LIMIT = LatencyLimit("ttft", "p50", 2000.0, "perfclaims' default sanity limit for capacity")


def closed_loop(points: pd.DataFrame) -> pd.Series:
    """Points from a fixed-concurrency (closed-loop) sweep: every user starts at once and sends its next request as
    soon as the last ends (concurrency above 1, no finite request rate). Their TTFT tail is the start-up burst of
    all users arriving together, not the queueing of a steady stream such as MLPerf Server's Poisson arrivals."""
    conc = pd.to_numeric(points["concurrency"], errors="coerce") if "concurrency" in points else \
        pd.Series(math.nan, index=points.index)
    rate = pd.to_numeric(points["request_rate"], errors="coerce") if "request_rate" in points else \
        pd.Series(math.nan, index=points.index)
    phase = points["phase"].astype(str) if "phase" in points else pd.Series("", index=points.index)
    return (conc > 1) & ~rate.between(0, 1e12) & (phase != "decode")


def limit_column(lim: LatencyLimit, points: pd.DataFrame) -> pd.Series:
    """The value a point is held to ``lim`` on: its own statistic, except that a TTFT tail limit (p90, p99) is
    read on the TTFT p50 of a closed-loop sweep (:func:`closed_loop`), whose tail is its start-up burst."""
    def col(name):
        return pd.to_numeric(points[name], errors="coerce") if name in points.columns else \
            pd.Series(math.nan, index=points.index)

    value = col(lim.column)
    if lim.metric == "ttft" and lim.stat in ("p90", "p99") and len(points):
        burst = closed_loop(points)
        value = value.where(~burst, col("ttft_ms_p50"))
    if lim == DEFAULT_CAPACITY_LIMIT:  # perfclaims' own sanity limit: a source that gives only the mean is read on it
        value = value.fillna(col(f"{lim.metric}_ms_mean"))
    return value


def meets_limits(points: pd.DataFrame, limits: list[LatencyLimit]) -> pd.Series:
    """True where a point meets every limit; a point without the limited statistic does not count as meeting it.
    A TTFT tail limit is read on the p50 of closed-loop sweep points (:func:`limit_column`)."""
    ok = pd.Series(True, index=points.index)
    for lim in limits:
        ok &= limit_column(lim, points) <= lim.max_ms
    return ok


def burst_read(points: pd.DataFrame, limits) -> int:
    """How many of ``points`` had a TTFT tail limit read on their p50 (closed-loop sweeps)."""
    if not any(lim.metric == "ttft" and lim.stat in ("p90", "p99") for lim in limits) or points.empty:
        return 0
    return int(closed_loop(points).sum())
