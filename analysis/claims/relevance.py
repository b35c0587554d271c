"""The rows of the points table a claim card can read: its model (model-table entry or family, at any size) or its hardware.

:func:`analysis.claims.claim_card` keeps only these rows before it computes anything, so a card depends on them
alone; the report runner hashes the same rows for the card's cache key (``points: claim`` in ``suite.yml``), so a
raw file whose points are another model on other hardware does not re-execute the card.
"""

from __future__ import annotations

import pandas as pd

from analysis import specs
from analysis.claims.evidence import family, hw_key, same_architecture
from analysis.claims.registry import Claim


def relevant_points(claim: Claim, points: pd.DataFrame | None) -> pd.DataFrame | None:
    """Rows whose model is the claim's (its model-table entry, or either family rule the evidence and the checks
    use) or whose hardware is the claim's part; every other row is proxy-of-proxy and never read by the card."""
    if points is None or points.empty:
        return points
    models = points["model"].dropna().unique()
    table = {m: specs.match_model_name(m) for m in models}
    fam = family(claim.model_table or claim.model)
    wanted = {m for m in models
              if (claim.model_table and same_architecture(table[m], claim.model_table)) or (fam and family(m) == fam)}
    want_hw = hw_key(claim.hardware_table or claim.hardware)
    hardware = {h for h in points["hardware"].dropna().unique() if hw_key(h) == want_hw}
    return points[points["model"].isin(wanted) | points["hardware"].isin(hardware)]
