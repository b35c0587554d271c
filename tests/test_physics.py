"""One home for the physics both the batch model and the roofline use: KV bytes and expert coverage."""

from __future__ import annotations

import numpy as np
import pytest

from analysis import physics, roofline, scaling


def test_kv_bytes_per_value_has_every_dtype_once():
    assert physics.kv_bytes_per_value("fp32") == 4.0
    assert physics.kv_bytes_per_value("BF16") == 2.0
    assert physics.kv_bytes_per_value("fp8") == 1.0
    assert physics.kv_bytes_per_value("fp4") == 0.5625  # NVFP4: 4 bits + one 8-bit scale per 16 values
    with pytest.raises(ValueError, match="unknown KV dtype 'fp6'"):
        physics.kv_bytes_per_value("fp6")
    assert roofline.KV_BYTES is physics.KV_BYTES_PER_VALUE  # the roofline reads the same table


def test_kv_bytes_per_token_of_llama_8b():
    # 32 layers x (K, V) x 8 KV heads x 128 dims x 2 bytes = 131,072 bytes: the "131.1 kB per context token" floor.
    assert physics.kv_bytes_per_token(layers=32, kv_heads=8, head_dim=128) == 131_072
    assert physics.kv_bytes_per_token(layers=32, kv_heads=8, head_dim=128, kv_dtype="fp8") == 65_536


def test_expert_coverage_known_values():
    # One token touches exactly top-k experts; many tokens approach all of them.
    assert physics.expert_coverage(1, 128, 8) == pytest.approx(8.0)
    assert physics.expert_coverage(2, 128, 8) == pytest.approx(128 * (1 - (1 - 8 / 128) ** 2))  # 15.5
    assert physics.expert_coverage(10_000, 128, 8) == pytest.approx(128.0)
    assert physics.expert_coverage(0, 128, 8) == 0.0 and physics.expert_coverage(4, 0, 0) == 0.0
    assert np.isnan(physics.expert_coverage(4, float("nan"), 8))
    grid = physics.expert_coverage(np.array([1.0, 2.0, 4.0]), 128, 8)
    assert grid.shape == (3,) and np.all(np.diff(grid) > 0)


def test_batch_model_and_roofline_share_the_coverage_formula():
    for tokens in (1, 3, 16, 256):
        assert scaling.coverage(tokens, 256, 8) == pytest.approx(roofline.experts_touched(tokens, n_experts=256,
                                                                                           top_k=8))
    # The batch model counts tokens as batch x tau (speculative decoding emits tau tokens per sequence per step).
    assert scaling.coverage(8, 128, 8, tau=2.0) == pytest.approx(physics.expert_coverage(16, 128, 8))
