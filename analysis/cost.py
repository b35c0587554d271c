"""Energy and cost per output token, from measured GPU power and published prices per GPU-hour.

Per point, under an explicit GPU denominator (``all`` GPUs of the deployment, or ``decode`` GPUs only for
disaggregated serving, as in :mod:`analysis.frontier`):

- **J per output token** = GPU power (W) ÷ output tok/s. *GPU power only*: the measured board power of the GPUs,
  never CPUs, network, cooling or facility overhead, and never mixed with facility (PUE-scaled) power.
- **output tok/s per MW** = 10⁶ ÷ (J per output token): output tokens each second per megawatt of GPU power.
- **$ per million output tokens** = $/GPU-hour × GPUs ÷ (output tok/s × 3600) × 10⁶
  = $/GPU-hour × 10⁶ ÷ (3600 × output tok/s per GPU).

Where the power comes from. InferenceX (``inferencex-api`` rows) reports ``avg_power_w`` as the average power of
one GPU over all GPUs of the run, and ``joules_per_output_token``; for a disaggregated run the latter is the
*decode* GPUs' power over output tok/s per decode GPU (prefill power not counted). So under ``all`` a point's
J/token is ``power_w × n_gpus ÷ output_tok_s`` (InferenceX's own ``joules_per_total_token`` uses the same all-GPU
power), and under ``decode`` a disaggregated point's J/token is InferenceX's ``joules_per_output_token``. For an
aggregated run both are the same number. ``power_w`` is used only from formats known to report it per GPU
(:data:`PER_GPU_POWER_FORMATS`); a point without measured power gets no energy figure, never an estimate.

Prices are data (``data/specs/prices.csv``, sources per row); a user adds or overrides them. A point whose
hardware has no price gets no cost figure, and :func:`no_price_message` names the hardware.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import config
from analysis.text import usd_cents

PRICES_FILE = config.SPECS_DIR / "prices.csv"
PRICE_COLUMNS = ["hardware", "usd_per_gpu_hour", "basis", "source", "date"]
USER_SOURCE = "given by the user"
USER_BASIS = "as given by the user"

# Formats whose ``power_w`` is the average power of one GPU (not the sum over the deployment's GPUs).
PER_GPU_POWER_FORMATS = frozenset({"inferencex-api", "inferencex-runner"})
POWER_SCOPE = "GPU power only"
POWER_NOTE = ("GPU power only: the measured board power of the GPUs — no CPUs, network, cooling or facility "
              "overhead")
DENOMINATORS = ("all", "decode")

# metric -> (better direction, unit for readers)
METRICS = {
    "tok_s_per_gpu": ("higher", "output tok/s per GPU"),
    "usd_per_mtok": ("lower", "$ per million output tokens"),
    "tok_s_per_mw": ("higher", "output tok/s per MW of GPU power"),
    "j_per_output_token": ("lower", "J per output token (GPU power only)"),
}
COST_METRICS = ("usd_per_mtok",)
ENERGY_METRICS = ("tok_s_per_mw", "j_per_output_token")


def lower_is_better(metric: str) -> bool:
    check_metric(metric)
    return METRICS[metric][0] == "lower"


def check_metric(metric: str) -> str:
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {', '.join(METRICS)}, got {metric!r}")
    return metric


# --- prices -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Price:
    """One price per GPU-hour and where it comes from."""

    hardware: str
    usd_per_gpu_hour: float
    basis: str
    source: str
    date: str = ""

    def text(self) -> str:
        """``$1.95/GPU-hour (basis; source, date)``: what every cost figure names."""
        when = f", {self.date}" if self.date else ""
        return f"{usd_cents(self.usd_per_gpu_hour)}/GPU-hour ({self.basis}; {self.source}{when})"

    def as_dict(self) -> dict:
        return {"hardware": self.hardware, "usd_per_gpu_hour": self.usd_per_gpu_hour, "basis": self.basis,
                "source": self.source, "date": self.date}


def _key(hardware) -> str:
    return " ".join(str(hardware).split()).casefold()


def _read_price_file(path: str | Path) -> pd.DataFrame:
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: price table not found")
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = [c for c in ("hardware", "usd_per_gpu_hour") if c not in table.columns]
    if missing:
        raise ValueError(f"{path}: price table needs column(s) {', '.join(missing)}")
    for col in PRICE_COLUMNS:
        if col not in table.columns:
            table[col] = ""
    table["basis"] = table["basis"].replace("", USER_BASIS)
    table["source"] = table["source"].replace("", str(path))
    return table[PRICE_COLUMNS]


def _override_rows(overrides: Mapping) -> list[dict]:
    rows = []
    for hardware, value in overrides.items():
        if isinstance(value, Mapping):
            row = {"hardware": hardware, **{k: value.get(k, "") for k in PRICE_COLUMNS if k != "hardware"}}
        else:
            row = {"hardware": hardware, "usd_per_gpu_hour": value, "basis": "", "source": "", "date": ""}
        row["basis"] = row["basis"] or USER_BASIS
        row["source"] = row["source"] or USER_SOURCE
        rows.append(row)
    return rows


def _number(value, hardware) -> float:
    try:
        x = float(str(value).replace(",", "").replace("$", "").strip())
    except ValueError:
        raise ValueError(f"price for {hardware}: {value!r} is not a number of $ per GPU-hour") from None
    if not math.isfinite(x) or x <= 0:
        raise ValueError(f"price for {hardware}: {value!r} must be a positive number of $ per GPU-hour")
    return x


def load_prices(path: str | Path | None = None, *, extra: str | Path | Iterable[str | Path] | None = None,
                overrides: Mapping | None = None) -> pd.DataFrame:
    """The price table: the shipped ``data/specs/prices.csv`` (or ``path``), then the rows of the user's own
    CSV file(s) ``extra``, then ``overrides`` (``{hardware: usd}`` or ``{hardware: {usd_per_gpu_hour, basis,
    source, date}}``). Later rows win per hardware name (compared without case or repeated spaces)."""
    frames = [_read_price_file(PRICES_FILE if path is None else path)]
    if extra is not None:
        for p in ([extra] if isinstance(extra, (str, Path)) else extra):
            frames.append(_read_price_file(p))
    if overrides:
        frames.append(pd.DataFrame(_override_rows(overrides), columns=PRICE_COLUMNS))
    table = pd.concat(frames, ignore_index=True)
    table["usd_per_gpu_hour"] = [_number(v, h) for v, h in zip(table["usd_per_gpu_hour"], table["hardware"])]
    for col in ("basis", "source", "date"):
        table[col] = table[col].fillna("").astype(str)
    table["_key"] = table["hardware"].map(_key)
    table = table.drop_duplicates("_key", keep="last").drop(columns="_key")
    return table.reset_index(drop=True)


def parse_price_args(values: Iterable[str]) -> dict:
    """``["MI355X=2.10", ...]`` (command-line ``--price``) as overrides for :func:`load_prices`."""
    out = {}
    for value in values or []:
        hardware, sep, usd = str(value).rpartition("=")
        if not sep or not hardware.strip():
            raise ValueError(f"--price {value!r}: expected HARDWARE=USD_PER_GPU_HOUR, e.g. \"MI355X=2.10\"")
        out[hardware.strip()] = {"usd_per_gpu_hour": _number(usd, hardware.strip()), "source": "--price"}
    return out


def price_for(prices: pd.DataFrame, hardware) -> Price | None:
    """The price of one hardware name, or None when the table has none (never a guess from a similar part)."""
    if prices is None or prices.empty:
        return None
    match = prices[prices["hardware"].map(_key) == _key(hardware)]
    if match.empty:
        return None
    r = match.iloc[-1]
    return Price(str(r["hardware"]), float(r["usd_per_gpu_hour"]), str(r["basis"]), str(r["source"]),
                 str(r["date"]))


def missing_prices(prices: pd.DataFrame, hardware: Iterable) -> list[str]:
    """The hardware names (sorted, once each) that have no price."""
    return sorted(h for h in {str(h) for h in hardware} if price_for(prices, h) is None)  # one lookup per name


def no_price_message(hardware: Iterable[str]) -> str:
    """What a reader is told when some hardware has no price: which, and how to give one."""
    names = sorted(set(hardware))
    if not names:
        return ""
    return (f"no price per GPU-hour for {', '.join(names)}: no cost figure for "
            f"{'it' if len(names) == 1 else 'them'} (add one with --price \"HARDWARE=USD\", a price CSV, or the "
            "report parameter `prices`)")


# --- per-point energy and cost --------------------------------------------------------------------------
def _check_denominator(denominator: str) -> None:
    if denominator not in DENOMINATORS:
        raise ValueError(f"denominator must be one of {', '.join(DENOMINATORS)}, got {denominator!r}")


def _disagg(points: pd.DataFrame) -> pd.Series:
    flag = points["disagg"] if "disagg" in points else pd.Series(False, index=points.index)
    return flag.astype("boolean").fillna(False).astype(bool)


def gpu_count(points: pd.DataFrame, *, denominator: str = "all") -> pd.Series:
    """GPUs a point's throughput is divided by: all of them, or the decode GPUs of a disaggregated point."""
    _check_denominator(denominator)
    gpus = points["n_gpus"].astype(float)
    if denominator == "decode" and "n_decode_gpus" in points:
        decode = _disagg(points) & (points["n_decode_gpus"].astype(float) > 0)
        gpus = gpus.where(~decode, points["n_decode_gpus"].astype(float))
    return gpus


def j_per_output_token(points: pd.DataFrame, *, denominator: str = "all") -> pd.Series:
    """Joules of GPU power per output token under ``denominator`` (GPU power only); NaN without measured power.

    ``all``: per-GPU power × all GPUs ÷ output tok/s. ``decode``: a disaggregated point's decode-GPU figure
    (InferenceX's ``joules_per_output_token``); an aggregated point's is the same as under ``all``.
    """
    _check_denominator(denominator)
    per_gpu_power = points["format"].isin(PER_GPU_POWER_FORMATS) if "format" in points else \
        pd.Series(False, index=points.index)
    power = points["power_w"].astype(float).where(per_gpu_power) if "power_w" in points else \
        pd.Series(np.nan, index=points.index)
    reported = points["joules_per_output_token"].astype(float) if "joules_per_output_token" in points else \
        pd.Series(np.nan, index=points.index)
    output = points["output_tok_s"].astype(float)
    disagg = _disagg(points)
    from_power = power * points["n_gpus"].astype(float) / output
    value = from_power.where(np.isfinite(from_power) & (from_power > 0))
    # An aggregated point's reported J/output token is the same all-GPU figure.
    value = value.where(value.notna() | disagg, reported)
    if denominator == "decode":
        value = value.where(~disagg, reported)
    return value.where(value > 0)


def tok_s_per_mw(points: pd.DataFrame, *, denominator: str = "all") -> pd.Series:
    """Output tok/s per MW of GPU power (GPU power only) = 10⁶ ÷ J per output token; NaN without power."""
    return 1e6 / j_per_output_token(points, denominator=denominator)


def usd_per_mtok(tok_s_per_gpu, usd_per_gpu_hour):
    """$ per million output tokens from output tok/s per GPU and $/GPU-hour (works on numbers and arrays)."""
    value = np.asarray(usd_per_gpu_hour, dtype=float) * 1e6 / (3600.0 * np.asarray(tok_s_per_gpu, dtype=float))
    return float(value) if value.ndim == 0 else value


def with_efficiency(points: pd.DataFrame, prices: pd.DataFrame | None, *, denominator: str = "all"
                    ) -> pd.DataFrame:
    """``points`` with per-point ``j_per_output_token``, ``tok_s_per_mw`` (GPU power only), the price used
    (``usd_per_gpu_hour``, ``price_basis``, ``price_source``, ``price_date``; NaN/empty without one) and
    ``usd_per_mtok`` from output tok/s per GPU under ``denominator``."""
    out = points.copy()
    out["j_per_output_token"] = j_per_output_token(points, denominator=denominator)
    out["tok_s_per_mw"] = 1e6 / out["j_per_output_token"]
    found = {h: price_for(prices, h) for h in out["hardware"].dropna().unique()} if len(out) else {}
    out["usd_per_gpu_hour"] = out["hardware"].map(lambda h: found[h].usd_per_gpu_hour if found.get(h) else np.nan)
    for col, attr in (("price_basis", "basis"), ("price_source", "source"), ("price_date", "date")):
        out[col] = out["hardware"].map(lambda h, a=attr: getattr(found[h], a) if found.get(h) else "")
    per_gpu = out["output_tok_s"].astype(float) / gpu_count(points, denominator=denominator)
    if "tok_s_per_gpu" in out and "gpu_denominator" in out:
        # some tools give only a per-GPU figure; use it when it already has the asked-for denominator
        given = per_gpu.isna() & (out["gpu_denominator"] == denominator)
        per_gpu = per_gpu.where(~given, out["tok_s_per_gpu"].astype(float))
    out["usd_per_mtok"] = usd_per_mtok(per_gpu.to_numpy(), out["usd_per_gpu_hour"].to_numpy())
    out["power_scope"] = np.where(out["j_per_output_token"].notna(), POWER_SCOPE, "")
    return out
