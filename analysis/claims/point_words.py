"""What every reading of a claim card says of one evidence point besides its speeds: how many requests stand behind
it, its 95% interval (or why there is none) and how its speculative decoding ran (method and acceptance, measured
or forced). Sentences only; the facts are the point's fields (``analysis.claims.selection.UNCERTAINTY_FIELDS`` and
the points table's spec-decoding columns)."""

from __future__ import annotations

import pandas as pd

from analysis.claims.labels import fmt_num
from analysis.specdecode_words import source_words
from analysis.text import count, fixed, pct, whole


def _known(v) -> bool:
    return v is not None and not (isinstance(v, float) and pd.isna(v)) and v is not pd.NA


def interval_text(p: dict, quantity: str = "user") -> str:
    """``95% interval 701.2–820.4 tok/s/user`` from a point's interval fields; empty where there is none."""
    lo, hi = p.get(f"tok_s_per_{quantity}_lo"), p.get(f"tok_s_per_{quantity}_hi")
    if not (_known(lo) and _known(hi)):
        return ""
    level = p.get("interval_level") if _known(p.get("interval_level")) else 0.95
    unit = "tok/s/user" if quantity == "user" else "tok/s/GPU"
    # one decimal for per-user speeds (a tight interval must not print as 170–170), whole per-GPU figures
    fmt = (lambda x: fixed(x, 1)) if quantity == "user" else whole
    return f"{pct(level)} interval {fmt(lo)}–{fmt(hi)} {unit}"


def requests_text(p: dict) -> str:
    """``32 requests`` / ``160 requests (tool default: 10 × concurrency)`` / ``request count not stated``."""
    n, source = p.get("n_requests"), p.get("n_requests_source")
    if not _known(n):
        return "request count not stated"
    return count(int(n), 'request') + (" (the tool's default: 10 × concurrency)" if source == "tool-default" else "")


def acceptance_text(p: dict, with_method: bool = True) -> str:
    """``dspark, acceptance not recorded (measured or forced: unknown)`` / ``mtp, acceptance 2.33 (measured on the
    run's own prompts)``; empty without speculative decoding."""
    method = p.get("spec_method")
    if not _known(method) or str(method) in ("none", "", "nan"):
        return ""
    if str(method) == "unknown":
        return "speculative decoding not stated"
    al, source = p.get("acceptance_length"), str(p.get("acceptance_source") or "unknown")
    head = f"{method}, acceptance" if with_method else "acceptance"
    if _known(al) and source not in ("unknown", "none"):
        return f"{head} {fmt_num(al)} ({source_words(source)})"
    return f"{head} not recorded (measured or forced: unknown)"


def point_notes(p: dict, quantity: str = "user", with_method: bool = True) -> str:
    """What a reading says of how sure one point is and how its speculative decoding ran: requests, interval (or
    why there is none), acceptance."""
    iv = interval_text(p, quantity)
    why = "the source gives no spread" if _known(p.get("n_requests")) else "neither a request count nor a spread"
    parts = [requests_text(p), iv or f"no interval ({why})"]
    acc = acceptance_text(p, with_method)
    return "; ".join(parts + ([acc] if acc else []))
