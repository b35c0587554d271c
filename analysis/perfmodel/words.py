"""The performance model's sentences (facts stay in the modules that compute them; these only word them)."""

from __future__ import annotations

TAU_NONE = "none (τ = 1)"
TAU_MEASURED = "acceptance_length (measured)"
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
READING_CALIBRATED = "calibrated"


def tau_assumed(tau: float, method: str) -> str:
    return f"assumed τ = {tau:.2f} ({method}, no acceptance length)"


def widened(tp: int, ep: int, dp: int, need: int) -> str:
    return f"TP{tp}/EP{ep}/DP{dp} cannot hold the weights: worker taken as {need} GPUs (TP{need})"


def collective_status(collective: str, where: str, group: int, status: str) -> str:
    return f"{collective} {where} ×{group}: {status}"


def scope_name(gpus: int, names: dict) -> str:
    return names.get(gpus, f"{gpus} GPUs")
