"""Speed of light per claim: batch-1 bounds for each plausible precision, scope and speculative-decoding τ."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from analysis import roofline, specs
from analysis.claims.conditions import context_for, per_user_value
from analysis.claims.labels import recipe_label, share
from analysis.claims.registry import NOT_STATED, Claim
from analysis.perfmodel.words import scope_name
from analysis.specdecode import ASSUMED_DRAFT_TOKENS, ASSUMED_TAU  # the one documented assumption
from analysis.text import fixed, missing, pct, plain, times, whole

ASSUMED_VERIFY_TOKENS = float(ASSUMED_DRAFT_TOKENS + 1)
ASSUMED_TAU_TEXT = "τ = 2.5 assumed (MTP-3 accepting 2-3 tokens per step, ROOFLINE.md 3.3; 4 tokens verified)"

SCOPES = {1: "1 GPU", 4: "4-GPU tray", 8: "8-GPU node", 72: "72 GPUs, one instance"}

def plausible_precisions(claim: Claim, model: specs.Model, hw: specs.Hardware) -> list[str]:
    """The stated precision; else every precision from the checkpoint's down to the lowest the hardware runs."""
    if claim.precision != NOT_STATED:
        return [claim.precision]
    native = model.native_precision.split(",")[0]
    order = ["bf16", "fp8", "fp4"]
    start = order.index(native) if native in order else 0
    out = [p for p in order[start:] if p != "fp4" or not math.isnan(hw.dense_tflops.get("fp4", math.nan))]
    return out or [native]


def recipe_texts(model: specs.Model, precisions: list[str]) -> dict[str, str]:
    """Each precision label's weights as the model is shipped or served at that label (``data/specs/recipes.csv``:
    DeepSeek-V4-Flash's FP4 is its checkpoint, FP4 experts with FP8 attention and a BF16 head), the label on every
    component where the table has no rows for it."""
    from analysis.perfmodel import recipes

    out = {}
    for p in precisions:
        r = recipes.recipe(model.name, p)
        out[p] = r.text if r.basis == "table" else p
    return out


def _attention_basis(model: specs.Model, precision: str) -> str:
    """The recipe table's basis for the attention row of ``model`` at ``precision`` ('' where it has none)."""
    from analysis.perfmodel import recipes

    return str((recipes.recipe(model.name, precision).sources.get("attention") or ("", ""))[1])


def scopes_for(claim: Claim, hw: specs.Hardware) -> list[int]:
    """1 GPU, an 8-GPU node, and where the hardware has a 72-GPU domain its 4-GPU compute tray (the unit NVL72 racks
    are built of, and the scope the step-time model's answer weighs) and the 72 GPUs of the rack as one model instance
    (a single user runs on one instance: the rack's smaller instances are the other rows), and the stated count."""
    out = {1, 8}
    domain = hw.rack_gpus or hw.scale_up_domain_gpus
    if domain and domain >= 72:
        out.update({4, 72})
    n = claim.number("n_gpus")
    if not math.isnan(n) and n >= 1:
        out.add(int(n))
    return sorted(out)


def taus_for(claim: Claim) -> tuple[list[float], dict, str]:
    """τ values to show: 1 and the stated τ (a stated acceptance length, verifying its drafted tokens + 1); when
    speculation may be in use and nothing about it is stated, 1 and the top of the range the speculative-decoding
    answer reads (:func:`analysis.claims.answers.plausible_taus`: the highest acceptance length of the shipped golden
    curves for the claim's model, else its family, verifying that curve row's drafted tokens + 1), so the bound, the
    step-time model's scope answer and the speculative-decoding answer read one τ; the assumed MTP-3 τ where no
    golden curve exists."""
    tau = claim.number("tokens_per_step")
    accepted = claim.number("acceptance_length")
    if math.isnan(tau) and not math.isnan(accepted):
        draft = claim.number("draft_tokens")
        verify = {accepted: draft + 1.0} if not math.isnan(draft) else {}
        return sorted({1.0, accepted}), verify, (f"τ = {plain(accepted)} (acceptance length stated by the source"
                                                 + (f", {plain(draft)} drafted + 1 verified per step" if verify else "")
                                                 + ")")
    if not math.isnan(tau):
        return sorted({1.0, tau}), {}, f"τ = {plain(tau)} stated"
    from analysis.claims.answers import plausible_taus  # here: answers imports this module
    from analysis.claims.conditions import spec_decode_of

    if spec_decode_of(claim) == "none":
        return [1.0], {}, "no speculative decoding (stated)"

    r = plausible_taus(claim)
    if r["basis"] == "golden" and r["high"] > 1.0:
        return [1.0, r["high"]], {r["high"]: r["high_verify"]}, golden_tau_text(claim, r)
    return [1.0, ASSUMED_TAU], {ASSUMED_TAU: ASSUMED_VERIFY_TOKENS}, ASSUMED_TAU_TEXT


def golden_tau_text(claim: Claim, r: dict) -> str:
    """Where the SOL's speculative τ comes from when the claim states none (``r``: :func:`plausible_taus`)."""
    whose = "this model" if r.get("own_model", True) else \
        f"other models of its family ({', '.join(r.get('models') or [])}; none is shipped for " \
        f"{claim.model_table or claim.model})"
    return (f"τ = {fixed(r['high'], 2)} assumed: the highest acceptance length of the shipped golden curves for {whose} "
            f"({', '.join(r['curves'])}; SPEED-Bench coding prompts; {plain(r['high_verify'] - 1)} drafted + 1 "
            "verified per step), the top of the range the speculative-decoding answer reads; not a measurement of "
            "the claimed run")


def _over(x: float) -> str:
    """How far past a bound, never "1.0×" for a miss (1.04 reads 1.04×)."""
    return times(x, 2 if x < 1.095 else 1)


def reading_for(row: pd.Series) -> str:
    """Plain words for one SOL row, from the datasheet bound, the achievable line and the communication floor:
    possible, possible only at near-peak bandwidth, undecided (one unmeasured collective latency decides:
    :func:`possible_at`), impossible (by bandwidth or by communication), or no fit."""
    user = row["claim_tok_s_per_user"]
    if not row["fits"]:
        return "does not fit in HBM"
    tight = row["hbm_needed_gb"] > 0.95 * row["hbm_available_gb"]
    suffix = f"; weights fill {pct(row['hbm_needed_gb'] / row['hbm_available_gb'])} of HBM" if tight else ""
    if math.isnan(user):
        return "no per-user number to compare" + suffix
    bw, comm, ach = row["sol_tok_s_per_user"], row["sol_tok_s_per_user_comm"], row["sol_tok_s_per_user_achievable_comm"]
    if user > bw:
        return f"impossible ({_over(user / bw)} the bandwidth bound){suffix}"
    paid = row.get("sol_tok_s_per_user_paid", bw)
    hidden = (f"; only if every collective hides under a weight read: paid after them, the bound is {whole(paid)}"
              if user > paid else "")
    if possible_at(row) == "undecided":
        return f"undecided: {undecided_text(row)}{hidden}{suffix}"
    if user > comm:
        return (f"impossible with communication ({_over(user / comm)} the bound with the communication floor; "
                f"bandwidth alone would allow it){suffix}")
    if user > ach:
        return (f"above the achievable line: possible only at near-peak bandwidth ({share(user / comm)} of SOL, "
                f"{share(user / ach)} of achievable{hidden}){suffix}")
    return f"possible ({share(user / comm)} of SOL, {share(user / ach)} of achievable{hidden}){suffix}"


# How far an unmeasured per-collective latency may be off before a speed-of-light reading rests on it (an
# assumption): the table's latency for a scope is often another part's or group size's (GB200 at 8 GPUs read for a
# GB300 4-GPU tray), and its measured fused kernels move by up to about 2x with message size and group (10.9 to
# 19.1 us for the MNNVL all-reduce from 14 KB to 0.9 MB; 18.9 us dispatch against 31.0 us combine). A claim that
# needs a latency within this factor of an extrapolated or assumed one is undecided; a measured one decides.
UNDECIDED_MARGIN = 2.0


def needed_latency_us(row) -> float:
    """The per-collective latency at which the row's communication floor allows exactly the claimed speed (every
    collective hidden under a weight read, as the bound assumes); NaN without collectives or a claimed speed."""
    return _latency_for(row, row["claim_tok_s_per_user"])


def _latency_for(row, speed: float) -> float:
    """The per-collective latency at which the row's communication floor gives ``speed`` tok/s/user."""
    floor, lat = row["comm_floor_ms"], row["collective_latency_us"]
    if not (floor > 0 and lat > 0 and speed > 0):
        return math.nan
    collectives = floor * 1000.0 / lat
    return 1000.0 * row["tokens_per_step"] / speed * 1000.0 / collectives


def _latency_at(row, bound: float) -> float:
    """:func:`_latency_for` of a range end, NaN where that end is the bandwidth's bound, not the collectives'."""
    if bound >= row["sol_tok_s_per_user"] * (1 - 1e-9):
        return math.nan
    return _latency_for(row, bound)


def undecided_text(row) -> str:
    """Why a row is undecided: the per-collective latency the claim needs (every collective hidden under a weight
    read) against the table's value, its basis and its range."""
    basis = _basis(row)
    need = needed_latency_us(row)
    lo, hi = row["sol_tok_s_per_user_comm_low"], row["sol_tok_s_per_user_comm_high"]
    slow, fast = _latency_at(row, lo), _latency_at(row, hi)
    ends = "slowest library" if basis != "assumption" else "assumed high end"
    return (f"the collective latency decides; with every collective hidden under a weight read the claim needs ≤ "
            f"{fixed(need, 1)} µs per collective, the table gives {fixed(row['collective_latency_us'], 1)} µs"
            + (f" ({basis}: not measured at this scope, within {plain(UNDECIDED_MARGIN)}× of the need)"
               if basis and basis != "measured" else "")
            + f", and its range of latencies bounds the speed anywhere from {whole(lo)} tok/s/user"
            + (f" ({fixed(slow, 1)} µs each, its {ends})" if slow == slow else "")
            + f" to {whole(hi)}" + (f" ({fixed(fast, 1)} µs each, its fastest)" if fast == fast else
                                     " (the bandwidth bound)"))


def _basis(row) -> str:
    """The row's collective-latency basis (measured, interpolated, extrapolated, assumption), '' where it has none."""
    value = row.get("comm_basis")
    return "" if missing(value) else str(value)


def possible_at(row) -> str:
    """"possible", "near-peak", "undecided" or "impossible" for one SOL row (for the verdict). Undecided: the
    bandwidth allows the claim, and either it needs a lower collective latency than the table's value but within the
    table's range, or the table's value allows it by less than :data:`UNDECIDED_MARGIN` and was not measured at this
    scope (extrapolated, interpolated or assumed): then that one number decides the reading."""
    user = row["claim_tok_s_per_user"]
    if not row["fits"] or math.isnan(user) or user > row["sol_tok_s_per_user"]:
        return "impossible"
    hi = row.get("sol_tok_s_per_user_comm_high", row["sol_tok_s_per_user_comm"])
    comm = row["sol_tok_s_per_user_comm"]
    if row["comm_floor_ms"] > 0 and comm < user <= hi:
        return "undecided"
    if user > comm:
        return "impossible"
    need, lat = needed_latency_us(row), row["collective_latency_us"]
    if (row["comm_floor_ms"] > 0 and need == need and lat > 0 and need < UNDECIDED_MARGIN * lat
            and _basis(row) != "measured" and comm < row["sol_tok_s_per_user"]):
        return "undecided"
    return "near-peak" if user > row["sol_tok_s_per_user_achievable_comm"] else "possible"


# Machines whose weights sit in on-chip SRAM (data/specs/hardware.csv: "no HBM"): a GPU roofline (HBM bytes per
# step, NVLink collectives, GPU counts) says nothing about them, so they get none.
SRAM_VENDORS = {"Cerebras", "Groq"}


def sol_for_claim(claim: Claim) -> tuple[pd.DataFrame, dict]:
    """Batch-1 SOL per plausible precision × scope × τ (datasheet and achievable), with the claim's fraction."""
    info: dict = {}
    if not claim.model_table:
        info["reason"] = f"model {claim.model!r} is not in data/specs/models.csv: no roofline"
        return pd.DataFrame(), info
    try:
        hw = specs.hardware(claim.hardware_table or claim.hardware)
    except KeyError:
        info["reason"] = f"hardware {claim.hardware!r} is not in data/specs/hardware.csv: no roofline"
        return pd.DataFrame(), info
    if hw.vendor in SRAM_VENDORS:
        info["reason"] = (f"{hw.name} keeps weights in on-chip SRAM (no HBM); the GPU roofline (HBM bytes per step, "
                          "NVLink collectives, GPU counts) does not apply to it")
        return pd.DataFrame(), info
    model = specs.model(claim.model_table)
    context, context_text = context_for(claim)
    taus, verify, tau_text = taus_for(claim)
    precisions = plausible_precisions(claim, model, hw)
    gpus = scopes_for(claim, hw)
    texts = recipe_texts(model, precisions)
    table = pd.concat([roofline.sol_table(model, hw, precisions=[texts[p]], gpus=gpus, batch=1, context=context,
                                          tokens_per_step=taus, verify_tokens=verify).assign(precision_asked=p)
                       for p in precisions], ignore_index=True)
    wide = table.pivot_table(index=["precision_asked", "gpus", "tokens_per_step"], columns="ceiling",
                             values="tok_s_per_user").reset_index()
    ds = table[table["ceiling"] == "datasheet"].set_index(["precision_asked", "gpus", "tokens_per_step"])
    out = pd.DataFrame({
        "precision": wide["precision_asked"], "gpus": wide["gpus"].astype(int),
        "scope": wide["gpus"].map(lambda g: scope_name(int(g), SCOPES, hw)),
        "tokens_per_step": wide["tokens_per_step"],
        "sol_tok_s_per_user": wide["datasheet"], "sol_tok_s_per_user_achievable": wide["achievable"],
    })
    keys = list(zip(out["precision"], out["gpus"], out["tokens_per_step"]))
    out["bytes_per_step_gb"] = [ds.loc[k, "bytes_per_step"] / 1e9 for k in keys]
    out["hbm_needed_gb"] = [ds.loc[k, "hbm_needed_gb"] for k in keys]
    out["hbm_available_gb"] = [ds.loc[k, "hbm_available_gb"] for k in keys]
    out["fits"] = [bool(ds.loc[k, "fits"]) for k in keys]
    user = per_user_value(claim)
    out["claim_tok_s_per_user"] = user
    out["fraction_of_sol"] = user / out["sol_tok_s_per_user"]
    # Multi-GPU batch-1 bounds from bandwidth alone ignore that every layer waits for its collectives.
    floors = {g: roofline.communication_floor(model, hw, gpus=int(g)) for g in out["gpus"].unique()}
    out["comm_floor_ms"] = out["gpus"].map(lambda g: floors[g].floor_ms)
    out["collective_latency_us"] = out["gpus"].map(lambda g: floors[g].latency_us)
    comm_cap = np.where(out["comm_floor_ms"] > 0, 1000.0 * out["tokens_per_step"] / out["comm_floor_ms"].where(
        out["comm_floor_ms"] > 0, 1.0), np.inf)
    out["sol_tok_s_per_user_comm"] = np.minimum(out["sol_tok_s_per_user"], comm_cap)
    out["sol_tok_s_per_user_achievable_comm"] = np.minimum(out["sol_tok_s_per_user_achievable"], comm_cap)
    out["fraction_of_sol_comm"] = user / out["sol_tok_s_per_user_comm"]
    # the same bound with each layer's collectives paid after its weight read rather than hidden under it (the
    # step-time model's bound; the claim card's figure draws it)
    out["sol_tok_s_per_user_paid"] = 1000.0 * out["tokens_per_step"] / (
        1000.0 * out["tokens_per_step"] / out["sol_tok_s_per_user"] + out["comm_floor_ms"].fillna(0.0))
    # The interconnect table's low and high per-collective latencies give the bound's range (high latency: low bound).
    for end, bound in (("low", "high"), ("high", "low")):
        fl = {g: roofline.communication_floor(model, hw, gpus=int(g), latency_us=bound).floor_ms
              for g in out["gpus"].unique()}
        ms = out["gpus"].map(fl)
        cap = np.where(ms > 0, 1000.0 * out["tokens_per_step"] / ms.where(ms > 0, 1.0), np.inf)
        out[f"sol_tok_s_per_user_comm_{end}"] = np.minimum(out["sol_tok_s_per_user"], cap)
    out["comm_where"] = out["gpus"].map(lambda g: floors[g].where)
    out["comm_basis"] = out["gpus"].map(lambda g: floors[g].basis if floors[g].where != "none" else "")
    out["comm_sources"] = out["gpus"].map(lambda g: "; ".join(floors[g].sources))
    out["comm_layout"] = out["gpus"].map(lambda g: floors[g].layout)
    out["comm_measured_on"] = out["gpus"].map(lambda g: "; ".join(f"{h} at {n} GPUs" for h, n in floors[g].measured_on))
    out["reading"] = out.apply(reading_for, axis=1)
    out["precision_label"] = [recipe_label(p, texts[p], model, _attention_basis(model, p)) if texts.get(p, p) != p
                              else str(p).upper() for p in out["precision"]]
    out = out.sort_values(["precision", "gpus", "tokens_per_step"],
                          key=lambda s: s.map({"bf16": 0, "fp8": 1, "fp4": 2, "int4": 3}).fillna(9)
                          if s.name == "precision" else s).reset_index(drop=True)
    info.update(model=model.name, hardware=hw.label, context=context, context_text=context_text,
                tau_text=tau_text, precisions=precisions, gpus=gpus,
                recipes={p: t for p, t in texts.items() if t != p},
                achievable_source=table.loc[table["ceiling"] == "achievable", "ceiling_source"].iloc[0],
                comm_floor_text=roofline.COMM_FLOOR_TEXT, n_layers=model.n_layers,
                datasheet_bandwidth_tb_s=hw.hbm_bandwidth_tb_s)
    return out, info


