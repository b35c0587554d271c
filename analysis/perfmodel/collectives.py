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

    def to_dict(self) -> dict:
        d = asdict(self)
        d["measured_groups"] = list(self.measured_groups)
        d["measured_bytes"] = list(self.measured_bytes)
        d["sources"] = list(self.sources)
        return d


def _loglog(x: float, xs: np.ndarray, ys: np.ndarray) -> float:
    return float(np.exp(np.interp(math.log(x), np.log(xs), np.log(ys))))


def _in_group(rows: pd.DataFrame, nbytes: float, link_gb_s: float) -> tuple[float, float, bool, str]:
    """(best latency, slowest library's latency, extrapolated?, library) at ``nbytes`` within one group's rows."""
    sized = rows.dropna(subset=["message_bytes"])
    if sized.empty:  # a measurement whose message size the source did not state
        r = rows.sort_values("latency_us").iloc[0]
        return float(r["latency_us"]), float(rows["latency_us"].max()), True, str(r["library"])
    per_lib = []
    for (lib, _hw), g in sized.groupby(["library", "hardware"], sort=True):
        bw = g.sort_values("message_bytes")["bandwidth_gb_s"].iloc[-1]
        g = g.groupby("message_bytes", as_index=False)["latency_us"].median().sort_values("message_bytes")
        xs, ys = g["message_bytes"].to_numpy(float), g["latency_us"].to_numpy(float)
        x = max(float(nbytes), 1.0)
        if x > xs[-1]:  # beyond the largest message: the edge plus the extra bytes at the last rate (or the link's)
            rate = float(bw) if bw == bw and bw > 0 else link_gb_s
            y = ys[-1] + (x - xs[-1]) / (rate * 1e3)
        elif x < xs[0]:  # below the smallest: a small collective is latency-bound, keep the edge
            y = ys[0]
        elif x in xs:  # a measured size: the measurement itself
            y = float(ys[np.flatnonzero(xs == x)[0]])
        else:
            y = _loglog(x, xs, ys) if len(xs) > 1 else ys[0]
        per_lib.append((y, lib, not (xs[0] <= x <= xs[-1])))
    per_lib.sort()
    best, lib, extra = per_lib[0]
    return best, per_lib[-1][0], extra, str(lib)


def latency(collective: str, interconnect: str, *, group_size: int, message_bytes: float,
            hardware: str | None = None, path: Path | None = None) -> CollectiveLatency:
    """The latency of one ``collective`` over ``group_size`` GPUs on ``interconnect`` for ``message_bytes`` per rank.

    Measured rows of that collective and interconnect are interpolated log-log in message size (per library; the
    fastest library is the estimate, the slowest the high end) and then log-log in group size between the two
    measured groups around ``group_size``. Outside the measured groups or sizes the nearest edge is used and the
    status says ``extrapolated``; with no measured row the assumption rows answer (``assumption``), and with
    none either the range of every measured row of the collective (``no measurement``). ``hardware``: where rows of
    that part (its short name) exist, only they are read.
    """
    if collective not in COLLECTIVES:
        raise ValueError(f"unknown collective {collective!r}; known: {', '.join(COLLECTIVES)}")
    if interconnect not in INTERCONNECTS:
        raise ValueError(f"unknown interconnect {interconnect!r}; known: {', '.join(INTERCONNECTS)}")
    t = table(path)
    rows = t[(t["collective"] == collective) & (t["interconnect"] == interconnect)]
    measured = rows[(rows["basis"] == "measured") & rows["latency_us"].notna()]
    if hardware is not None:
        key = specs.normalize_name(hardware)
        own = measured[measured["hardware"].map(specs.normalize_name) == key]
        measured = own if len(own) else measured
    if measured.empty:
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
    groups = np.array(sorted(measured["group_size"].unique()), dtype=float)
    sized = measured["message_bytes"].dropna()
    size_range = (float(sized.min()), float(sized.max())) if len(sized) else ()
    g = float(group_size)
    if g <= groups[0] or g >= groups[-1] or g in groups:
        pick = groups[np.argmin(np.abs(groups - g))]
        best, high, extra, lib = _in_group(measured[measured["group_size"] == pick], message_bytes, LINK_GB_S[interconnect])
        extra = extra or pick != g
        used = measured[measured["group_size"] == pick]
    else:
        lo_g, hi_g = groups[groups < g].max(), groups[groups > g].min()
        b1, h1, e1, lib = _in_group(measured[measured["group_size"] == lo_g], message_bytes, LINK_GB_S[interconnect])
        b2, h2, e2, _ = _in_group(measured[measured["group_size"] == hi_g], message_bytes, LINK_GB_S[interconnect])
        w = (math.log(g) - math.log(lo_g)) / (math.log(hi_g) - math.log(lo_g))
        best = math.exp((1 - w) * math.log(b1) + w * math.log(b2))
        high = math.exp((1 - w) * math.log(h1) + w * math.log(h2))
        extra = e1 or e2
        used = measured[measured["group_size"].isin([lo_g, hi_g])]
    exact = (not extra) and bool(((used["group_size"] == g) & (used["message_bytes"] == message_bytes)).any())
    status = "extrapolated" if extra else ("measured" if exact else "interpolated")
    low = best
    if extra:  # the range an extrapolation can honestly claim: every measured reading of this interconnect
        low, high = min(best, float(measured["latency_us"].min())), max(high, best)
    return CollectiveLatency(collective, interconnect, int(group_size), float(message_bytes), float(best),
                             float(low), float(high), status, tuple(int(x) for x in groups), size_range,
                             tuple(sorted(set(used["source_url"]))), lib)


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
