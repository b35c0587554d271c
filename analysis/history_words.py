"""Sentences about results over time: what :mod:`analysis.history` found (noise, changes, what differs), in words.

:mod:`analysis.history` returns facts (``Noise``, ``Difference`` records); this module writes them for a reader,
every number through :mod:`analysis.text`.
"""

from __future__ import annotations

from collections.abc import Iterable

from analysis.text import fixed, num, plain


def difference_text(d) -> str:
    """One :class:`analysis.history.Difference` in words: ``image a → b``, ``run r0 → r9``, ``10 days apart``."""
    if d.what in ("image", "framework version"):
        return f"{d.what} {d.before} → {d.after}"
    if d.what == "image not recorded":
        return "image not recorded for " + " and ".join(d.before)
    if d.what == "run":
        return f"run {','.join(d.before) or '?'} → {','.join(d.after) or '?'}"
    if d.what in ("GPUs", "decode GPUs"):
        return f"{d.what} {','.join(map(plain, d.before))} → {','.join(map(plain, d.after))}"
    if d.what == "concurrency":
        return "read between concurrency " + "–".join(map(plain, d.before)) + " → " + "–".join(map(plain, d.after))
    if d.what == "acceptance":
        return ("speculative-decoding acceptance " + (",".join(d.before) or "none") + " → "
                + (",".join(d.after) or "none") + " (forced and measured acceptance are not one series)")
    if d.what == "days apart":
        return f"{d.before} days apart"
    raise ValueError(f"a difference of kind {d.what!r} has no words")


def differences_text(differences: Iterable) -> list[str]:
    """Each difference of a change in words, in order."""
    return [difference_text(d) for d in differences]


def noise_text(noise) -> str:
    """The noise estimate of one quantity (:class:`analysis.history.Noise`) and the threshold it gives."""
    name = "tok/s/user" if noise.quantity == "user" else "tok/s/GPU"
    if not noise.n_pairs:
        return f"{name}: no pairs of like points, so no noise estimate and no changes."
    return (f"{name}: {noise.n_pairs:,} pairs ({noise.basis}); robust spread σ = 1.4826 × median |log ratio| = "
            f"{fixed(100 * noise.sigma, 2)}%; a change must exceed {plain(noise.k_sigma)}σ, a ratio beyond "
            f"×{fixed(noise.threshold_ratio, 3)} or ÷{fixed(noise.threshold_ratio, 3)}.")


def conflicts_text(table) -> str:
    """What :func:`analysis.history.conflicts` found, in one sentence ('' when nothing conflicts)."""
    if table is None or not len(table):
        return ""
    examples = []
    for (model, hardware, when, conc), rows in table.groupby(["model", "hardware", "day", "concurrency"],
                                                             sort=False, dropna=False):
        gpu = " vs ".join(f"{num(v)} ({s})" for v, s in zip(rows["tok_s_per_gpu"], rows["source"]))
        examples.append(f"{model} on {hardware}, {when}, concurrency {plain(conc)}: {gpu} tok/s/GPU")
    shown = "; ".join(examples[:3]) + ("; …" if len(examples) > 3 else "")
    return (f"{len(table):,} records of {len(examples):,} points conflict (two files report the same run, "
            f"configuration, day and concurrency with different numbers) and are left out of every comparison "
            f"until one is removed: {shown}")


INTERVAL_BASIS_WORDS = {"points and run-to-run": "both dates' own intervals and the run-to-run noise",
                        "run-to-run only": "the run-to-run noise alone: a date's points carry no interval"}


def change_interval_text(lo: float, hi: float, verdict: str, basis: str) -> str:
    """A change's 95% interval (:func:`analysis.history.change_interval`) in words: ``95% interval ×1.93–×3.77
    from both dates' own intervals and the run-to-run noise``; one that includes 1 is ``within noise``, never a
    rise or a fall; ``no interval (…)`` when there is none."""
    if verdict not in ("higher", "lower", "within-noise"):
        return "no interval (no run-to-run noise estimate and no interval on the points)"
    span = f"95% interval ×{fixed(lo, 2)}–×{fixed(hi, 2)} from {INTERVAL_BASIS_WORDS.get(basis, basis)}"
    return f"within noise: {span} includes ×1" if verdict == "within-noise" else span
