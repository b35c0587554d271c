"""Measured collective latencies (``data/specs/collectives.csv``) and the lookup that reads them.

Each row is one published measurement (or a labelled assumption): collective (``all-reduce``, ``ep-dispatch``,
``ep-combine``), interconnect (``nvlink-node``, ``nvl72-domain``, ``xgmi-node``, ``scale-out-rdma``), hardware, group
size, message size per rank, latency, the statistic the source used, the library, conditions and the source (URL and
table). :func:`latency` interpolates log-log in message size and then in group size between measured rows; it never
extrapolates silently: a result outside the measured range says ``extrapolated`` and carries the range, and an
interconnect with no measurement says ``assumption`` (labelled rows) or ``no measurement`` (the whole range of every
measured row of that collective).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import config, specs

COLLECTIVES_FILE = config.SPECS_DIR / "collectives.csv"
COLLECTIVES = ("all-reduce", "ep-dispatch", "ep-combine")
INTERCONNECTS = ("nvlink-node", "nvl72-domain", "xgmi-node", "scale-out-rdma")
STATUSES = ("measured", "interpolated", "extrapolated", "assumption", "no measurement")
# Beyond the largest measured message a row without a published bandwidth grows at the link's per-direction rate
# (docs/ROOFLINE.md 1.5-1.6: NVLink 4 450 GB/s, NVLink 5 900 GB/s, one MI300X-class xGMI peer link 64 GB/s, a
# 400 Gb/s NIC 50 GB/s): datasheet rates, so the extrapolated time is a lower reading.
LINK_GB_S = {"nvlink-node": 450.0, "nvl72-domain": 900.0, "xgmi-node": 64.0, "scale-out-rdma": 50.0}


@lru_cache(maxsize=4)
def _table(path: str) -> pd.DataFrame:
    t = pd.read_csv(path)
    bad = t[~t["collective"].isin(COLLECTIVES) | ~t["interconnect"].isin(INTERCONNECTS)
            | ~t["basis"].isin(["measured", "assumption"])]
    if len(bad):
        line = int(bad.index[0]) + 2
        raise ValueError(f"{path}: line {line}: unknown collective, interconnect or basis "
                         f"({bad.iloc[0]['collective']!r}, {bad.iloc[0]['interconnect']!r}, {bad.iloc[0]['basis']!r})")
    return t


@lru_cache(maxsize=4)
def _split(path: str) -> dict:
    """The table's rows per (collective, interconnect), split once."""
    return {k: g for k, g in _table(path).groupby(["collective", "interconnect"])}


def table(path: Path | None = None) -> pd.DataFrame:
    """The collectives table as shipped (one row per measurement or labelled assumption)."""
    return _table(str(path or COLLECTIVES_FILE)).copy()


@dataclass(frozen=True)
class CollectiveLatency:
    """One collective's latency for a group size and message size, with how it was obtained."""

    collective: str
    interconnect: str
    group_size: int
    message_bytes: float
    latency_us: float          # the estimate (best measured kernel where several libraries were measured)
    low_us: float
    high_us: float
    status: str                # one of STATUSES
    measured_groups: tuple     # group sizes with a measurement on this interconnect
    measured_bytes: tuple      # (smallest, largest) message size measured
    sources: tuple             # URLs of the rows used
    library: str
    measured_on: tuple = ()    # (hardware, group size) of the rows the estimate read: another part's when borrowed

    def to_dict(self) -> dict:
        d = asdict(self)
        d["measured_groups"] = list(self.measured_groups)
        d["measured_bytes"] = list(self.measured_bytes)
        d["sources"] = list(self.sources)
        d["measured_on"] = [list(x) for x in self.measured_on]
        return d


def _loglog(x: float, xs: np.ndarray, ys: np.ndarray) -> float:
    return float(np.exp(np.interp(math.log(x), np.log(xs), np.log(ys))))


@dataclass(frozen=True)
class _Curve:
    """One library's measurements on one part at one group size, sorted by message size (NaN size: unstated)."""

    library: str
    xs: np.ndarray
    ys: np.ndarray
    bandwidth_gb_s: float
    url: str
    hardware: str = ""
    group: int = 0


@lru_cache(maxsize=256)
def _curves(path: str, collective: str, interconnect: str, hardware: str | None) -> tuple[dict, bool]:
    """(group size -> curves of the measured rows, borrowed): ``hardware``'s rows where it has any, else every
    part's (``borrowed`` True), built once."""
    rows = _split(path).get((collective, interconnect))
    if rows is None:
        return {}, False
    measured = rows[(rows["basis"] == "measured") & rows["latency_us"].notna()]
    borrowed = False
    if hardware is not None:
        own = measured[measured["hardware"].map(specs.normalize_name) == specs.normalize_name(hardware)]
        borrowed = not len(own)
        measured = own if len(own) else measured
    out: dict = {}
    for (group, lib, hw), g in measured.groupby(["group_size", "library", "hardware"], sort=True):
        g = g.sort_values("message_bytes")
        bw = g["bandwidth_gb_s"].iloc[-1] if g["message_bytes"].notna().any() else math.nan
        med = g.groupby("message_bytes", dropna=False, sort=True)["latency_us"].median()
        out.setdefault(int(group), []).append(_Curve(str(lib), med.index.to_numpy(float), med.to_numpy(float),
                                                     float(bw), str(g["source_url"].iloc[0]), str(hw), int(group)))
    return out, borrowed


def _at(curve: _Curve, nbytes: float, link_gb_s: float) -> tuple[float, bool]:
    """(latency, extrapolated?) of one curve at ``nbytes``."""
    xs, ys = curve.xs, curve.ys
    if np.isnan(xs).all():  # a measurement whose message size the source did not state
        return float(ys[0]), True
    x = max(float(nbytes), 1.0)
    if x > xs[-1]:  # beyond the largest message: the edge plus the extra bytes at the last rate (or the link's)
        rate = curve.bandwidth_gb_s if curve.bandwidth_gb_s == curve.bandwidth_gb_s and curve.bandwidth_gb_s > 0 \
            else link_gb_s
        return float(ys[-1] + (x - xs[-1]) / (rate * 1e3)), True
    if x < xs[0]:  # below the smallest: a small collective is latency-bound, keep the edge
        return float(ys[0]), True
    hit = np.flatnonzero(xs == x)
    if len(hit):  # a measured size: the measurement itself
        return float(ys[hit[0]]), False
    return _loglog(x, xs, ys), False


def _in_group(curves: list, nbytes: float, link_gb_s: float) -> tuple[float, float, bool, str, bool]:
    """(best latency, slowest library's, extrapolated?, best library, exact?) within one group's curves."""
    vals = sorted((*_at(c, nbytes, link_gb_s), c.library, bool(np.any(c.xs == nbytes))) for c in curves)
    best, extra, lib, exact = vals[0]
    return best, vals[-1][0], extra, lib, exact


def latency(collective: str, interconnect: str, *, group_size: int, message_bytes: float,
            hardware: str | None = None, path: Path | None = None) -> CollectiveLatency:
    """The latency of one ``collective`` over ``group_size`` GPUs on ``interconnect`` for ``message_bytes`` per rank.

    Measured rows of that collective and interconnect are interpolated log-log in message size (per library; the
    fastest library is the estimate, the slowest the high end) and then log-log in group size between the two
    measured groups around ``group_size``. Outside the measured groups or sizes the nearest edge is used and the
    status says ``extrapolated``; with no measured row the assumption rows answer (``assumption``), and with
    none either the range of every measured row of the collective (``no measurement``). ``hardware``: where rows of
    that part (its short name) exist, only they are read; where none do, the other parts' rows are, and the status
    says ``extrapolated``.
    """
    if collective not in COLLECTIVES:
        raise ValueError(f"unknown collective {collective!r}; known: {', '.join(COLLECTIVES)}")
    if interconnect not in INTERCONNECTS:
        raise ValueError(f"unknown interconnect {interconnect!r}; known: {', '.join(INTERCONNECTS)}")
    p = str(path or COLLECTIVES_FILE)
    t = _table(p)
    curves, borrowed = _curves(p, collective, interconnect, hardware)
    if not curves:
        rows = _split(p).get((collective, interconnect), t.iloc[0:0])
        assumed = rows[rows["basis"] == "assumption"]
        if len(assumed):
            r = assumed.iloc[0]
            return CollectiveLatency(collective, interconnect, int(group_size), float(message_bytes),
                                     float(r["latency_us"]), float(r["latency_us_low"]), float(r["latency_us_high"]),
                                     "assumption", (), (), (), str(r["source_table"]))
        every = t[(t["collective"] == collective) & (t["basis"] == "measured") & t["latency_us"].notna()]
        return CollectiveLatency(collective, interconnect, int(group_size), float(message_bytes), math.nan,
                                 float(every["latency_us"].min()), float(every["latency_us"].max()),
                                 "no measurement", (), (), tuple(sorted(set(every["source_url"]))), "")
    link = LINK_GB_S[interconnect]
    groups = np.array(sorted(curves), dtype=float)
    sizes = np.concatenate([c.xs for cs in curves.values() for c in cs])
    sizes = sizes[~np.isnan(sizes)]
    size_range = (float(sizes.min()), float(sizes.max())) if len(sizes) else ()
    g = float(group_size)
    if g <= groups[0] or g >= groups[-1] or g in groups:
        pick = int(groups[np.argmin(np.abs(groups - g))])
        best, high, extra, lib, exact = _in_group(curves[pick], message_bytes, link)
        extra = extra or pick != g
        used = curves[pick]
    else:
        lo_g, hi_g = int(groups[groups < g].max()), int(groups[groups > g].min())
        b1, h1, e1, lib, _ = _in_group(curves[lo_g], message_bytes, link)
        b2, h2, e2, _, _ = _in_group(curves[hi_g], message_bytes, link)
        w = (math.log(g) - math.log(lo_g)) / (math.log(hi_g) - math.log(lo_g))
        best = math.exp((1 - w) * math.log(b1) + w * math.log(b2))
        high = math.exp((1 - w) * math.log(h1) + w * math.log(h2))
        extra, exact = e1 or e2, False
        used = curves[lo_g] + curves[hi_g]
    extra = extra or borrowed  # another part's measurement read for this one
    status = "extrapolated" if extra else ("measured" if exact else "interpolated")
    low = best
    if extra:  # the range an extrapolation can honestly claim: every measured reading of this interconnect
        floor = min(float(c.ys.min()) for cs in curves.values() for c in cs)
        low, high = min(best, floor), max(high, best)
    return CollectiveLatency(collective, interconnect, int(group_size), float(message_bytes), float(best),
                             float(low), float(high), status, tuple(int(x) for x in groups), size_range,
                             tuple(sorted({c.url for c in used})), lib,
                             tuple(sorted({(c.hardware, c.group) for c in used if c.library == lib})))


def interconnect_for(hardware, group_size: int) -> str | None:
    """Which interconnect a group of ``group_size`` GPUs of ``hardware`` talks over (None for one GPU).

    NVIDIA racks (NVL72): the NVLink domain up to its size, scale-out beyond; NVIDIA nodes (HGX): NVLink up to 8;
    AMD Instinct: the xGMI mesh up to 8; beyond the scale-up domain the RDMA network.
    """
    if group_size <= 1:
        return None
    hw = hardware if isinstance(hardware, specs.Hardware) else specs.hardware(str(hardware))
    domain = int(hw.rack_gpus or hw.scale_up_domain_gpus or 8)
    if group_size > domain:
        return "scale-out-rdma"
    if hw.vendor.upper() == "AMD":
        return "xgmi-node"
    return "nvl72-domain" if domain > 8 else "nvlink-node"
