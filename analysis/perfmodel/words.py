"""The performance model's sentences (facts stay in the modules that compute them; these only word them)."""

from __future__ import annotations

TAU_NONE = "none (τ = 1)"
TAU_MEASURED = "acceptance_length (measured)"
TAU_GIVEN = "acceptance_length (as the config gives it; not a measurement)"
SHARD_NOTE = "one GPU's slice timed alone: no collectives"
ANY_FRAMEWORK = "{family} (any framework)"
ALL_HARDWARE = "all hardware"

VERDICTS = {
    "alone-fits": "no collectives; HBM and overhead within budget",
    "alone-exceeds": "no collectives; HBM and overhead alone exceed the budget",
    "exceeds": "HBM and overhead alone exceed the budget",
    "within": "measured latency within budget",
    "over": "measured latency exceeds budget",
}
READING_BOUND = "bound (datasheet bandwidth, no overhead)"


def verdict(key: str, *, overhead: bool) -> str:
    """:data:`VERDICTS` for a reading with a fixed cost (``overhead``), or for a bound without one ("HBM" alone:
    a bound with no fixed overhead never says the overhead exceeds anything)."""
    text = VERDICTS[key]
    return text if overhead else text.replace("HBM and overhead alone exceed", "HBM alone exceeds").replace(
        "HBM and overhead within", "HBM within")
READING_CALIBRATED = "calibrated"


def tau_assumed(tau: float, method: str, drafts: float | None = None, fitted: float | None = None,
                fitted_drafts: float | None = None) -> str:
    """The assumed τ's label; at a draft count other than the one the calibration's τ is fitted at, which count and
    from which fitted τ (the first draft at its measured acceptance, step.tau_at_drafts)."""
    text = f"assumed τ = {tau:.2f} ({method}, no acceptance length"
    if drafts is not None and fitted is not None and fitted_drafts is not None and drafts != fitted_drafts:
        text += f"; {drafts:g} drafted, from the calibration's {fitted:.2f} at {fitted_drafts:g}"
    return text + ")"


def widened(tp: int, ep: int, dp: int, need: int) -> str:
    return f"TP{tp}/EP{ep}/DP{dp} cannot hold the weights: worker taken as {need} GPUs (TP{need})"


def collective_status(collective: str, where: str, group: int, status: str) -> str:
    return f"{collective} {where} ×{group}: {status}"


def scope_name(gpus: int, names: dict, hardware=None) -> str:
    """The scope's name; on an NVL72 rack (``rack_gpus`` 72: GB200 and GB300 NVL72, built of 4-GPU trays) 8 GPUs
    are two trays, not the 8-GPU node of an HGX system."""
    if int(gpus) == 8 and (getattr(hardware, "rack_gpus", None) or 0) >= 72:  # an NVL72 rack's trays hold 4
        return "8 GPUs (2 trays)"
    return names.get(gpus, f"{gpus} GPUs")


def unpriced_input(lo: float, hi: float, points: int, workload: str, isl: float, osl: float) -> str:
    """Why points whose source states no ISL/OSL are mispredicted per GPU: the input they carried per output token."""
    span = f"{lo:,.0f}" if round(lo) == round(hi) else f"{lo:,.0f}–{hi:,.0f}"
    return (f"input per output token: the {points} {workload} point(s) state no ISL/OSL; their own total and output "
            f"throughput give {span} input tokens (prefilled or read from a prefix cache) per output token, against "
            f"{isl / osl:,.2g} at the ISL {isl:,.0f} / OSL {osl:,.0f} they are predicted at, and the source does not "
            "say how many came from a prefix cache: their predictions, per GPU most, price a workload they did not run")


def assumed_tau_beside(taus: list[float], methods: list[str], model: str, golden) -> str:
    """Which τ the measured points' own predictions used where their sources record no acceptance, and the range the
    model's own golden curve gives (``golden``: its rows for those methods), so their errors are read at that τ."""
    used = ", ".join(f"{t:.2f}" for t in taus)
    text = (f"τ predicted at: {used}, the calibration's τ for {'/'.join(methods)} whose acceptance the source does "
            "not record (fitted on other runs: an assumption, not this run's acceptance)")
    if len(golden):
        lo, hi = float(golden["acceptance_length"].min()), float(golden["acceptance_length"].max())
        files = ", ".join(sorted(set(golden["file"].astype(str))))
        text += (f"; {model}'s golden curve for it reads {lo:.2f}–{hi:.2f} ({files}), so the per-user errors above "
                 "hold at that τ only")
    return text
