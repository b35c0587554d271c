"""Restate every point's tok/s/user in one definition, so numbers from different tools can sit on one axis.

Tools define per-user speed differently (median TPOT, mean TPOT, output tok/s over concurrency, output length over
end-to-end latency, the tool's own figure). :func:`restate` recomputes ``tok_s_per_user`` in the chosen definition
from each row's own columns, trying the exact route first and then approximate ones; a row restated by an
approximate route carries the flag ``tok-s-per-user-approx``, and a row with nothing to restate from gets NaN.
:func:`restate_routes` says, per row, which route was taken.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.schema import TOK_S_PER_USER_DEFS, add_flag

APPROX_FLAG = "tok-s-per-user-approx"
DEFAULT_DEFINITION = "1000/tpot_ms_p50"


@dataclass(frozen=True)
class Route:
    """One way to compute tok/s/user in a target definition from a row's columns."""

    name: str
    exact: bool
    compute: Callable[[pd.DataFrame], pd.Series]


def _pos(s: pd.Series) -> pd.Series:
    return s.where(s > 0)


def _inverse_ms(col: str) -> Callable[[pd.DataFrame], pd.Series]:
    return lambda df: 1000.0 / _pos(df[col])


def _step(df: pd.DataFrame) -> pd.Series:
    # Step-timing logs: one decode step yields tokens_per_step tokens per sequence; the step time *is* the TPOT.
    tau = df["tokens_per_step"].fillna(1.0)
    return (1000.0 * tau / _pos(df["step_ms"])).where(df["phase"] == "decode")


def _decode_window(stat: str) -> Callable[[pd.DataFrame], pd.Series]:
    # (osl - 1) tokens over (e2e - ttft): the decode part of a typical request, from medians or means.
    def compute(df: pd.DataFrame) -> pd.Series:
        window = _pos(df[f"e2e_ms_{stat}"] - df[f"ttft_ms_{stat}"])
        return 1000.0 * _pos(df["osl"] - 1) / window
    return compute


def _osl_over_e2e(stat: str) -> Callable[[pd.DataFrame], pd.Series]:
    return lambda df: 1000.0 * _pos(df["osl"]) / _pos(df[f"e2e_ms_{stat}"])


def _output_over_concurrency(df: pd.DataFrame) -> pd.Series:
    load = df["concurrency"].where(df["concurrency"] > 0, df["batch_size"])
    return _pos(df["output_tok_s"]) / _pos(load)


def _same_definition(target: str) -> Callable[[pd.DataFrame], pd.Series]:
    # The row already states tok/s/user in the target definition (e.g. the tool reported it directly).
    return lambda df: df["tok_s_per_user"].where(df["tok_s_per_user_def"] == target)


def _as_reported(df: pd.DataFrame) -> pd.Series:
    # Last resort: the row's own figure under whatever definition it has, as a stand-in.
    return _pos(df["tok_s_per_user"])


ROUTES: dict[str, list[Route]] = {
    "1000/tpot_ms_p50": [
        Route("1000/tpot_ms_p50", True, _inverse_ms("tpot_ms_p50")),
        Route("1000/step_ms", True, _step),
        Route("as-reported", True, _same_definition("1000/tpot_ms_p50")),
        Route("1000/tpot_ms_mean", False, _inverse_ms("tpot_ms_mean")),
        Route("(osl-1)/(e2e-ttft) p50", False, _decode_window("p50")),
        Route("(osl-1)/(e2e-ttft) mean", False, _decode_window("mean")),
        Route("other-definition", False, _as_reported),
    ],
    "1000/tpot_ms_mean": [
        Route("1000/tpot_ms_mean", True, _inverse_ms("tpot_ms_mean")),
        Route("as-reported", True, _same_definition("1000/tpot_ms_mean")),
        Route("1000/tpot_ms_p50", False, _inverse_ms("tpot_ms_p50")),
        Route("1000/step_ms", False, _step),
        Route("(osl-1)/(e2e-ttft) mean", False, _decode_window("mean")),
        Route("other-definition", False, _as_reported),
    ],
    "output/concurrency": [
        Route("output/concurrency", True, _output_over_concurrency),
        Route("as-reported", True, _same_definition("output/concurrency")),
        Route("other-definition", False, _as_reported),
    ],
    "osl/e2e": [
        Route("as-reported", True, _same_definition("osl/e2e")),
        # LLMPerf's figure is the mean over requests of osl/e2e; from summary statistics it is approximate.
        Route("osl/e2e_ms_mean", False, _osl_over_e2e("mean")),
        Route("osl/e2e_ms_p50", False, _osl_over_e2e("p50")),
        Route("other-definition", False, _as_reported),
    ],
}


def restate_routes(points: pd.DataFrame, *, definition: str = DEFAULT_DEFINITION) -> pd.DataFrame:
    """Per row: the restated ``tok_s_per_user``, the route name (``"none"`` when nothing fits) and ``exact``."""
    if definition not in ROUTES:
        known = ", ".join(ROUTES)
        raise ValueError(f"cannot restate tok/s/user as {definition!r}; supported: {known}")
    value = pd.Series(np.nan, index=points.index, dtype="float64")
    route = pd.Series("none", index=points.index, dtype="object")
    exact = pd.Series(False, index=points.index, dtype="bool")
    for r in ROUTES[definition]:
        candidate = pd.to_numeric(r.compute(points), errors="coerce").astype("float64")
        take = value.isna() & candidate.notna() & np.isfinite(candidate)
        value[take] = candidate[take]
        route[take] = r.name
        exact[take] = r.exact
    return pd.DataFrame({"tok_s_per_user": value, "route": route, "exact": exact})


def restate(points: pd.DataFrame, *, definition: str = DEFAULT_DEFINITION) -> pd.DataFrame:
    """The points table with ``tok_s_per_user`` in ``definition`` for every row.

    Rows restated by an approximate route are flagged ``tok-s-per-user-approx`` (an existing such flag is
    re-decided, so restating twice does not pile up flags). ``tok_s_per_user_def`` becomes ``definition`` on every
    row; rows with nothing to restate from get NaN. tok/s/GPU is not touched: it is system-wide output over GPUs.
    """
    routes = restate_routes(points, definition=definition)
    out = points.copy()
    out["tok_s_per_user"] = routes["tok_s_per_user"]
    out["tok_s_per_user_def"] = definition
    old_flags = out["flags"].fillna("")
    had_approx = old_flags.map(lambda f: APPROX_FLAG in f.split(";"))
    flags = old_flags.map(lambda f: ";".join(x for x in f.split(";") if x and x != APPROX_FLAG))
    # A value taken over as reported keeps an approximation made earlier (restating twice must not launder it).
    reused = routes["route"].isin(["as-reported", "other-definition"])
    approx = (routes["route"] != "none") & (~routes["exact"] | (reused & had_approx))
    flags[approx] = flags[approx].map(lambda f: add_flag(f, APPROX_FLAG))
    out["flags"] = flags
    return out


def definitions() -> dict[str, str]:
    """Definitions :func:`restate` can target, with what each means."""
    return {d: TOK_S_PER_USER_DEFS.get(d, d) for d in ROUTES}


