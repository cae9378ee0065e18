"""What the HE-CNN tests share: a model with random weights and non-zero biases."""

from __future__ import annotations

import numpy as np

from cryptoffload.apps.he_cnn.model import CnnModel, ModelConfig

POLY_ACT = ((0.3, 0.8), (-0.2, 1.1))


def random_model(config: ModelConfig, seed: int = 0, act: tuple = POLY_ACT) -> CnnModel:
    """Fresh weights from ``seed``, biases drawn too (``init`` leaves them zero, which would hide
    a bias in the wrong slot); ``act``: the polynomial activations' (a, b) per layer."""
    rng = np.random.default_rng(seed)
    m = CnnModel.init(config, rng)
    m.conv_b, m.fc1_b, m.fc2_b = (rng.normal(0, 0.1, a.shape) for a in (m.conv_b, m.fc1_b, m.fc2_b))
    if config.activation == "poly":
        m.act = np.array(act)
    return m
