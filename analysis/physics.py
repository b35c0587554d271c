"""Physical quantities several models share: bytes per cached KV value, KV bytes per token, expert coverage.

One home for each formula, so the batch model (:mod:`analysis.scaling`) and the roofline (:mod:`analysis.roofline`)
cannot disagree about them.
"""

from __future__ import annotations

import numpy as np

# Bytes one cached K or V value takes. fp4 is NVFP4: 4 bits plus one 8-bit scale per 16 values (4.5 bits).
KV_BYTES_PER_VALUE = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0, "fp4": 0.5625,
                      "nvfp4": 0.5625}


def kv_bytes_per_value(kv_dtype: str) -> float:
    """Bytes per cached K or V value of ``kv_dtype``; ValueError naming the known dtypes otherwise."""
    try:
        return KV_BYTES_PER_VALUE[str(kv_dtype).strip().lower()]
    except KeyError:
        raise ValueError(f"unknown KV dtype {kv_dtype!r}; known: {', '.join(KV_BYTES_PER_VALUE)}") from None


def kv_bytes_per_token(*, layers: float, kv_heads: float, head_dim: float, kv_dtype: str = "bf16") -> float:
    """KV-cache bytes one token of context takes over all layers with grouped-query (or multi-head) attention:
    ``layers · 2 (K and V) · kv_heads · head_dim · bytes per value``."""
    return float(layers) * 2.0 * float(kv_heads) * float(head_dim) * kv_bytes_per_value(kv_dtype)


def expert_coverage(tokens, experts, top_k):
    """Expected distinct experts one MoE layer touches when ``tokens`` tokens each pick ``top_k`` of ``experts``
    uniformly: ``E·(1 − (1 − k/E)^tokens)``. 0 where there are no experts or no tokens; NaN geometry gives NaN.

    Vectorised over ``tokens`` (and the geometry); a scalar in gives a float out.
    """
    t = np.asarray(tokens, dtype=float)
    e = np.asarray(experts, dtype=float)
    k = np.asarray(top_k, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        cov = e * (1.0 - (1.0 - k / e) ** t)
    out = np.where((e > 0) & (t > 0), cov, np.where(np.isnan(e) | np.isnan(k), np.nan, 0.0))
    return float(out) if out.ndim == 0 else out
