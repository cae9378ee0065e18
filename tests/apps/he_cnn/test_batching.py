"""CryptoNets' per-pixel batching on the exact emulator: the batch computes exactly the plain
forward pass of every image, with no rotation, and refuses images of the wrong shape."""

from __future__ import annotations

import numpy as np
import pytest

from cryptoffload.apps.he_cnn.batching import BatchPlan
from cryptoffload.apps.he_cnn.data import load_mnist
from cryptoffload.apps.he_cnn.model import CnnModel, ModelConfig, load_model
from cryptoffload.apps.he_cnn.train import DEFAULT_WEIGHTS
from cryptoffload.crypto.ckks import make_backend
from cryptoffload.errors import ConfigError

from . import he_cnn_helpers as helpers


@pytest.fixture(scope="module")
def images() -> np.ndarray:
    return load_mnist().x_test[:6]


def emulator(plan: BatchPlan):
    be = make_backend("emulator", plan.params)
    be.keygen(rotations=plan.rotation_steps())
    return be


def random_model(config: ModelConfig, seed: int = 0) -> CnnModel:
    return helpers.random_model(config, seed, act=((0.4, 0.5), (0.25, -0.7)))


def test_batch_plan_equals_plain_forward(images: np.ndarray) -> None:
    m = random_model(ModelConfig(channels=2, hidden=6), 11)
    plan = BatchPlan(m)
    assert plan.rotation_steps() == []
    be = emulator(plan)
    cts = [be.encrypt(v) for v in plan.pack_images(images)]
    assert len(cts) == 784
    outs = plan.run(be, cts, plan.prepare(be))
    logits = plan.unpack_logits([be.decrypt(c) for c in outs], len(images))
    assert logits.shape == (6, 10) and np.allclose(logits, m.forward(images), atol=1e-9)
    assert all(be.level(c) == 0 for c in outs)


def test_refusals() -> None:
    model = load_model(DEFAULT_WEIGHTS)
    with pytest.raises(ConfigError, match=r"expected \(n, 28, 28\)"):
        BatchPlan(model).pack_images(np.zeros((3, 28, 29)))
