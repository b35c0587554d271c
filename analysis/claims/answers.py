"""The five questions of DESIGN.md, each answered as stated, inferred from data, or not stated."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from analysis.claims.conditions import matched_lengths, per_user_value
from analysis.claims.labels import fmt_num, lengths_text, precision_label
from analysis.claims.registry import INFERRED, NOT_STATED, STATED, Claim, is_stated

QUESTIONS = {
    "batch": "Batch size: at what batch or concurrency was it measured?",
    "large_batch": "Large batch: does it hold at large batch, and what is the capacity?",
    "scope": "Scope: per GPU, or does it need the whole NVLink domain?",
    "latency": "Latency: TTFT and TPOT?",
    "precision": "Precision: FP8 or FP4 (or BF16), and how much does it explain?",
}
# The speculative-decoding assumption used when a claim does not state τ (ROOFLINE.md 3.3 and section 4 C01/C02:

# --- 2. the five questions -------------------------------------------------------------------------

@dataclass
class Answer:
    """One of the five questions: stated / inferred from data / not stated, the answer, and the rows behind it."""

    question: str
    status: str
    answer: str
    rows: list = field(default_factory=list)


def _sol_value(sol: pd.DataFrame, precision: str, gpus: int, tau: float = 1.0, col="sol_tok_s_per_user") -> float:
    hit = sol[(sol["precision"] == precision) & (sol["gpus"] == gpus) & (sol["tokens_per_step"] == tau)]
    return float(hit[col].iloc[0]) if len(hit) else math.nan


def five_answers(claim: Claim, sol: pd.DataFrame, evidence: pd.DataFrame, summary: pd.DataFrame) -> dict:
    """The five questions of DESIGN.md answered from the claim, the evidence rows and the roofline."""
    user = per_user_value(claim)
    top = summary.iloc[0] if len(summary) else None
    fastest = evidence.iloc[0] if len(evidence) else None
    out: dict[str, Answer] = {}

    # 1. batch size
    if is_stated(claim.batch_text):
        out["batch"] = Answer(QUESTIONS["batch"], STATED, f"{claim.batch_text}")
    elif fastest is not None and not math.isnan(user):
        conc = fastest.get("concurrency")
        ratio = user / fastest["tok_s_per_user"]
        word = "faster than" if ratio > 1 else "of"
        out["batch"] = Answer(
            QUESTIONS["batch"], INFERRED,
            f"Not stated. The fastest similar measured point ({fastest['model']} on {fastest['hardware']}, "
            f"{fastest['precision']}, {lengths_text(fastest.get('isl'), fastest.get('osl'))}, "
            f"spec decode {fastest.get('spec_decode')}) reaches "
            f"{fastest['tok_s_per_user']:,.0f} tok/s/user at concurrency {fmt_num(conc)}; the claim is "
            f"{ratio:.1f}× {'that' if ratio > 1 else ''}".replace(" that", " that speed") +
            (", so it implies a batch no larger than that, most likely one user." if ratio > 1 else
             f" ({word} that speed)."),
            [fastest["row"]])
    else:
        out["batch"] = Answer(QUESTIONS["batch"], NOT_STATED, "Not stated, and no similar measured points.")

    # 2. large batch
    if top is not None and not math.isnan(top["max_tok_s_per_gpu"]):
        out["large_batch"] = Answer(
            QUESTIONS["large_batch"], INFERRED,
            f"The claim does not say. In the nearest evidence ({top['model']} on {top['hardware']}, {top['precision']}, "
            f"{top['lengths']}) "
            f"capacity is {top['max_tok_s_per_gpu']:,.0f} tok/s/GPU at concurrency {fmt_num(top['concurrency_at_max'])}, "
            f"where each user gets {top['tok_s_per_user_at_max']:,.1f} tok/s; its fastest point "
            f"({top['fastest_tok_s_per_user']:,.0f} tok/s/user) is the single-user end, not the capacity.",
            [top["max_row"], top["fastest_row"]])
    elif claim.kind == "per-GPU" and is_stated(claim.batch_text):
        out["large_batch"] = Answer(QUESTIONS["large_batch"], STATED, f"Measured at {claim.batch_text}.")
    else:
        out["large_batch"] = Answer(QUESTIONS["large_batch"], NOT_STATED,
                                    "Not stated, and no measured points to infer capacity from.")

    # 3. scope
    n = claim.number("n_gpus")
    if not math.isnan(n):
        out["scope"] = Answer(QUESTIONS["scope"], STATED, f"{n:g} GPUs ({claim.scope}).")
    else:
        parts = [f"Not stated ({claim.scope})." if is_stated(claim.scope) else "Not stated."]
        rows = []
        if not sol.empty and not math.isnan(user):
            for p in sol["precision"].unique():
                one = sol[(sol["precision"] == p) & (sol["gpus"] == 1) & (sol["tokens_per_step"] == 1.0)]
                if len(one):
                    r = one.iloc[0]
                    if not r["fits"]:
                        parts.append(f"At {precision_label(p)} one GPU cannot hold the weights "
                                     f"({r['hbm_needed_gb']:,.0f} GB > {r['hbm_available_gb']:,.0f} GB).")
                    else:
                        parts.append(f"At {precision_label(p)} one GPU's bound is {r['sol_tok_s_per_user']:,.0f} tok/s/user "
                                     f"(claim = {r['fraction_of_sol']:.0%} of it).")
            node = sol[(sol["gpus"] == 8) & (sol["tokens_per_step"] == 1.0)]
            if len(node):
                parts.append("On 8 GPUs the claim is " + ", ".join(
                    f"{f:.0%} ({precision_label(p)})" for p, f in zip(node["precision"], node["fraction_of_sol_comm"]))
                    + " of the bound with the communication floor "
                    f"({node['sol_tok_s_per_user_comm'].iloc[0]:,.0f} tok/s/user; bandwidth alone: " + ", ".join(
                        f"{v:,.0f}" for v in node["sol_tok_s_per_user"]) + ").")
        if fastest is not None:
            parts.append(f"The fastest similar measured point ({lengths_text(fastest.get('isl'), fastest.get('osl'))}) "
                         f"ran on {fmt_num(fastest.get('n_gpus'))} GPUs (scope {fastest.get('scope')}).")
            rows.append(fastest["row"])
        out["scope"] = Answer(QUESTIONS["scope"], INFERRED if rows else NOT_STATED, " ".join(parts), rows)

    # 4. latency
    if is_stated(claim.latency):
        out["latency"] = Answer(QUESTIONS["latency"], STATED, claim.latency)
    else:
        parts = ["TTFT and TPOT not stated."]
        rows = []
        if not math.isnan(user):
            parts.append(f"A per-user speed of {user:,.0f} tok/s means a TPOT of about {1000 / user:.2f} ms.")
        if fastest is not None and pd.notna(fastest.get("ttft_ms_p50")):
            parts.append(f"At the fastest similar measured point TPOT p50 is {fastest.get('tpot_ms_p50'):.2f} ms and "
                         f"TTFT p50 {fastest.get('ttft_ms_p50'):,.0f} ms ({lengths_text(fastest.get('isl'), fastest.get('osl'))}).")
            rows.append(fastest["row"])
        out["latency"] = Answer(QUESTIONS["latency"], INFERRED if rows else NOT_STATED, " ".join(parts), rows)

    # 5. precision
    if claim.precision != NOT_STATED:
        out["precision"] = Answer(QUESTIONS["precision"], STATED, f"{claim.precision_text}")
    else:
        parts = [f"Not stated ({claim.precision_text})." if is_stated(claim.precision_text) else "Not stated."]
        rows = []
        if {"fp8", "fp4"} <= set(sol.get("precision", [])):
            a, b = _sol_value(sol, "fp8", 1), _sol_value(sol, "fp4", 1)
            parts.append(f"The roofline alone makes FP4 {b / a:.2f}× faster than FP8 at batch 1 "
                         f"({b:,.0f} vs {a:,.0f} tok/s/user on one GPU).")
        if len(evidence):
            low = evidence.sort_values("concurrency")
            hw0 = evidence.iloc[0]["hardware"]
            same = low[low["hardware"] == hw0]
            # FP4 against FP8 only at equal input/output lengths: the lengths change per-user speed by themselves.
            pairs, _ = matched_lengths(claim, same)
            found = []
            for isl, osl in pairs:
                at = same[(same["isl"] == isl) & (same["osl"] == osl)]
                fp4, fp8 = at[at["precision"] == "fp4"], at[at["precision"] == "fp8"]
                if len(fp4) and len(fp8):
                    f4, f8 = fp4.loc[fp4["tok_s_per_user"].idxmax()], fp8.loc[fp8["tok_s_per_user"].idxmax()]
                    found.append(f"{lengths_text(isl, osl)}: {f4['tok_s_per_user']:,.0f} vs "
                                 f"{f8['tok_s_per_user']:,.0f} ({f4['tok_s_per_user'] / f8['tok_s_per_user']:.2f}×)")
                    rows += [f4["row"], f8["row"]]
            if found:
                parts.append(f"Measured on {hw0}, fastest FP4 point against fastest FP8 point at the same lengths: "
                             + "; ".join(found) + ".")
        out["precision"] = Answer(QUESTIONS["precision"], INFERRED if rows else NOT_STATED, " ".join(parts), rows)
    return out


