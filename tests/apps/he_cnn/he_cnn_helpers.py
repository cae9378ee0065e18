"""What the HE-CNN tests share: a model with random weights and non-zero biases, MNIST-shaped
images written as IDX files, and late devices (work that finishes only when waited for) under
the timers."""

from __future__ import annotations

import gzip
import struct
from pathlib import Path
from typing import Any

import numpy as np

from cryptoffload.apps.he_cnn.batching import BatchPlan
from cryptoffload.apps.he_cnn.model import CnnModel, ModelConfig
from cryptoffload.apps.he_cnn.packing import PerChannelPlan
from cryptoffload.crypto.ckks import CkksParams
from late_device import FakeClock, LateDevice, fake_clock

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


def write_idx(directory: Path, stem: str, images: np.ndarray, labels: np.ndarray, *, gz: bool = False) -> None:
    """``images`` and ``labels`` as ``{stem}-images-idx3-ubyte`` and ``{stem}-labels-idx1-ubyte``."""
    n, rows, cols = images.shape
    img = struct.pack(">IIII", 0x803, n, rows, cols) + images.astype(np.uint8).tobytes()
    lab = struct.pack(">II", 0x801, n) + labels.astype(np.uint8).tobytes()
    op = gzip.compress if gz else (lambda b: b)
    suffix = ".gz" if gz else ""
    (directory / f"{stem}-images-idx3-ubyte{suffix}").write_bytes(op(img))
    (directory / f"{stem}-labels-idx1-ubyte{suffix}").write_bytes(op(lab))


def fake_images(n: int, seed: int = 0, side: int = 28) -> tuple[np.ndarray, np.ndarray]:
    """``n`` random 0..255 images of ``side`` x ``side`` pixels, labelled 0..9 in turn."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, (n, side, side)), np.arange(n) % 10


# -- a late device under the HE-CNN's timers (tests/late_device.py) --------------------------------
#: seconds of device work each op queues on the late device; a first call queues LATE_FIRST more
#: (kernel compilation), which a warm-up must keep out of the timed images
LATE_WORK = {"keygen": 1000.0, "encode": 0.5, "encrypt": 3.0, "mul": 7.0, "decrypt": 5.0}
LATE_FIRST = 100.0


def late_backends(monkeypatch: Any, *modules: object) -> tuple[FakeClock, list[LateDevice]]:
    """Every backend the given modules make (their ``make_backend``) is a late device on one
    fake clock, the CKKS timer's; returns the clock and the devices made, in order."""
    clock, made = fake_clock(monkeypatch), []

    def make(name: str, params: CkksParams, **kw: object) -> LateDevice:
        made.append(LateDevice(params, clock, LATE_WORK, first_call=LATE_FIRST))
        return made[-1]

    for m in modules:
        monkeypatch.setattr(m, "make_backend", make)
    return clock, made


def small_model(directory: Path, hidden: int) -> tuple[CnnModel, Path]:
    """A one-channel model with ``hidden`` units (random weights), and the file it is saved in."""
    model = random_model(ModelConfig(channels=1, hidden=hidden))
    return model, model.save(directory / "small.npz")


def prepare_encodes(plan: PerChannelPlan | BatchPlan) -> int:
    """How many plaintexts ``plan.prepare`` encodes for one key set (counted apart)."""
    dev = LateDevice(plan.params, FakeClock(), {})
    dev.keygen(plan.rotation_steps() if isinstance(plan, PerChannelPlan) else [])
    plan.prepare(dev)
    return dev.counts["encode"]
