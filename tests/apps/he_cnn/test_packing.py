"""Per-channel packing on the exact emulator (the numpy plan executor: float64 slots, np.roll
rotations, SEAL's level/scale/key bookkeeping): the encrypted program must compute exactly the
plain forward pass, in the documented slot layout, with only the keys it asks for."""

from __future__ import annotations

import numpy as np
import pytest

from cryptoffload.apps.he_cnn.data import load_mnist
from cryptoffload.apps.he_cnn.model import CnnModel, ModelConfig, load_model
from cryptoffload.apps.he_cnn.packing import PerChannelPlan
from cryptoffload.apps.he_cnn.train import DEFAULT_WEIGHTS
from cryptoffload.crypto.ckks import DEFAULT_PARAMS, CkksError, CkksParams, RecordingBackend, make_backend
from cryptoffload.errors import ConfigError

from . import he_cnn_helpers as helpers


@pytest.fixture(scope="module")
def model() -> CnnModel:
    return load_model(DEFAULT_WEIGHTS)


@pytest.fixture(scope="module")
def images() -> np.ndarray:
    return load_mnist().x_test[:6]


def emulator(plan: PerChannelPlan, params: CkksParams = DEFAULT_PARAMS, **kw: object):
    be = make_backend("emulator", params, **kw)
    be.keygen(rotations=plan.rotation_steps())
    return be


def random_model(config: ModelConfig, seed: int = 0) -> CnnModel:
    return helpers.random_model(config, seed, act=((0.4, 0.5), (0.25, -0.7)))


def test_per_channel_plan_equals_plain_forward(model: CnnModel, images: np.ndarray) -> None:
    plan = PerChannelPlan(model)
    be = emulator(plan)
    pw = plan.prepare(be)
    plain = model.forward(images)
    for img, ref in zip(images, plain):
        out = plan.run(be, be.encrypt(plan.pack_image(img)), pw)
        assert be.level(out) == 0
        assert np.allclose(plan.unpack_logits(be.decrypt(out)), ref, rtol=0, atol=1e-9)


def test_slot_layout_after_each_layer(model: CnnModel, images: np.ndarray) -> None:
    plan = PerChannelPlan(model)
    be = emulator(plan)
    taps: dict = {}
    plan.run(be, be.encrypt(plan.pack_image(images[0])), plan.prepare(be), taps)
    sq = model.square_form()
    c = model.config
    from cryptoffload.apps.he_cnn.model import patches
    z1 = (patches(images[:1], c) @ sq.conv_w.reshape(5, -1).T + sq.conv_b)[0].T.ravel()   # (ch, i, j)
    conv = be.decrypt(taps["conv"])
    assert np.allclose(conv[plan.out_slots], z1, atol=1e-12)
    rest = np.ones(plan.slots, bool)
    rest[plan.out_slots] = False
    assert not np.any(conv[rest])                      # zero outside the stride-2 grid of each block
    assert plan.out_slots.max() < 5 * 1024 and plan.out_slots[169] == 1024   # channel 1 starts block 1
    h = (z1 ** 2) @ sq.fc1_w.T + sq.fc1_b
    fc1 = be.decrypt(taps["fc1"])
    period = np.concatenate([h, np.zeros(28)])
    assert np.allclose(fc1, np.tile(period, 64), atol=1e-9)   # replicated with period 128
    assert [be.level(taps[k]) for k in ("conv", "act1", "fc1", "act2", "fc2")] == [4, 3, 2, 1, 0]


def test_keys_and_rotation_counts(model: CnnModel, images: np.ndarray) -> None:
    plan = PerChannelPlan(model)
    steps = plan.rotation_steps()
    assert steps == [*range(1, 17), 32, 48, 64, 80, 96, 112, 128, 256, 512, 1024, 2048, 4096]
    assert plan.rotations_per_inference() == {"conv": 8, "fc1": 28, "fc2": 9, "total": 45}
    ev = RecordingBackend(emulator(plan))
    pw = plan.prepare(ev)
    plan.run(ev, ev.encrypt(plan.pack_image(images[0])), pw)
    rot = [op for op in ev.ops if op["op"] == "rotate"]
    assert len(rot) == 45 and {k for op in rot for k in op["keys"]} == {f"galois:{s}" for s in steps}
    assert {op["phase"] for op in ev.ops} >= {"weights", "conv", "act1", "fc1", "act2", "fc2"}
    assert ev.ops[0]["name"] == "conv.mask[0,0]" and ev.summary()["calls"]["rotate"] == 45
    # the same plan on the recording backend alone (no values): the same program, nothing timed
    sim = RecordingBackend(params=plan.params)
    sim.keygen(rotations=steps)
    pw = plan.prepare(sim)
    plan.run(sim, sim.encrypt(plan.pack_image(images[0])), pw)
    shape_of = [(op["op"], op["level"], op["inputs"], op["keys"], op["bytes_out"], op["phase"]) for op in ev.ops]
    assert [(op["op"], op["level"], op["inputs"], op["keys"], op["bytes_out"], op["phase"]) for op in sim.ops] == shape_of
    assert all(op["wall_s"] is None for op in sim.ops) and all(op["wall_s"] is not None for op in ev.ops)
    # a key set lacking one step is refused by the backend, not silently composed
    be = make_backend("emulator")
    be.keygen(rotations=[s for s in steps if s != 48])
    with pytest.raises(CkksError, match="no Galois key for step 48"):
        plan.run(be, be.encrypt(plan.pack_image(images[0])), plan.prepare(be))


def test_poly_activation_and_reduced_architecture(images: np.ndarray) -> None:
    m = random_model(ModelConfig(channels=3, hidden=20, classes=10, activation="poly"), 7)
    params = CkksParams(8192, (60, 30, 30, 30, 30, 30, 60), 30)       # 4096 slots: 3 blocks fit
    plan = PerChannelPlan(m, params)
    be = emulator(plan, params, insecure_study=True)
    pw = plan.prepare(be)
    assert plan.m1 == 32 and plan.fold1 == [2048, 1024, 512, 256, 128, 64, 32]
    for img, ref in zip(images[:3], m.forward(images[:3])):
        got = plan.unpack_logits(be.decrypt(plan.run(be, be.encrypt(plan.pack_image(img)), pw)))
        assert np.allclose(got, ref, atol=1e-9)


def test_refusals(model: CnnModel) -> None:
    plan = PerChannelPlan(model)
    with pytest.raises(ConfigError, match="needs 5 levels"):
        PerChannelPlan(model, CkksParams(16384, (60, 30, 30, 30, 60), 30))
    with pytest.raises(ConfigError, match="5 channels need 5120 slots"):
        PerChannelPlan(model, CkksParams(8192, (60, 30, 30, 30, 30, 30, 60), 30))
    be = emulator(plan)
    ct = be.rescale(be.encrypt(plan.pack_image(np.zeros((28, 28)))))
    with pytest.raises(ConfigError, match="level 4, the plan needs 5"):
        plan.run(be, ct, plan.prepare(be))
