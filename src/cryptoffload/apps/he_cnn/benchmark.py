"""The encrypted CNN's benchmark: single-thread latency per image with the per-layer and
per-op breakdown, key and weight memory, or the throughput of one per-pixel batch.

What the CLI calls (``cryptoffload he-cnn bench``; ``benchmarks/he_cnn.py`` too)::

    bench(images=10, model_path=DEFAULT_WEIGHTS, batch=False, *, backend="seal",
          params=DEFAULT_PARAMS, mnist_dir=None, log=None) -> BenchResult

Why apart from :mod:`.infer`: a benchmark runs each image twice (untraced for the latency,
traced for the breakdown) and sums what one inference reports; it builds on :mod:`.infer`'s
pieces and adds nothing to them.

Timers: every phase (keygen, weights, encrypt, evaluate, decrypt) is timed with
:func:`~cryptoffload.crypto.ckks.timing.timed`, which waits for the backend's device before
starting and before stopping, so on a GPU a time is the kernels' and no phase's unfinished work
lands in the next one's. Per-channel, one untimed warm-up inference (``warmup_images``) runs
before the timed images (a GPU's first run compiles or loads its kernels); the batch mode runs
its one batch without a warm-up.
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from cryptoffload.apps.he_cnn.batching import BatchPlan
from cryptoffload.apps.he_cnn.data import load_mnist
from cryptoffload.apps.he_cnn.infer import LAYERS, breakdown, client_and_plan, count_rotations, run_batch
from cryptoffload.apps.he_cnn.model import CnnModel, load_model
from cryptoffload.apps.he_cnn.packing import PerChannelPlan, PreparedWeights
from cryptoffload.apps.he_cnn.train import DEFAULT_WEIGHTS
from cryptoffload.checks import JsonDict
from cryptoffload.crypto.ckks import DEFAULT_PARAMS, CkksBackend, CkksParams, RecordingBackend, make_backend
from cryptoffload.crypto.ckks.timing import timed
from cryptoffload.errors import ConfigError
from cryptoffload.io import json_safe

#: untimed per-channel inferences before the timed images (see :func:`_warm_up`)
WARMUP_IMAGES = 1


@dataclass
class BenchResult:
    mode: str
    backend: str
    n_images: int
    params: JsonDict
    keygen_s: float
    prepare_s: float
    latency_s: dict[str, float] = field(default_factory=dict)
    #: untimed inferences run before the timed ones (kernel compilation and loading, caches)
    warmup_images: int = 0
    encrypt_s: float = 0.0
    decrypt_s: float = 0.0
    layers: dict[str, float] = field(default_factory=dict)
    op_kinds: dict[str, dict[str, float]] = field(default_factory=dict)
    rotations: int = 0
    galois_keys: int = 0
    key_bytes: dict[str, int] = field(default_factory=dict)
    weight_bytes: dict[str, int] = field(default_factory=dict)
    public_context_bytes: int = 0
    batch_s: float = 0.0
    images_per_s: float = 0.0
    capacity_images_per_s: float = 0.0
    agreement: float = 0.0
    encrypted_accuracy: float = 0.0
    plain_accuracy: float = 0.0
    max_abs_error: float = 0.0
    #: kernel launches of one image's evaluation (GPU backends and their twin; None elsewhere)
    launches_per_image: int | None = None
    #: latency per image through one captured inference replayed (a CUDA graph on the GPU, the
    #: recorded launches on the twin); empty where the backend cannot capture
    replay_latency_s: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> JsonDict:
        return json_safe(asdict(self))


def _key_memory(be: CkksBackend) -> dict[str, int]:
    kb = be.key_bytes()
    out = {"relin": int(kb.get("relin", 0)), "galois": int(sum(v for k, v in kb.items() if k.startswith("galois:")))}
    out["total"] = out["relin"] + out["galois"]
    ser = getattr(be, "serialized_key_bytes", None)
    if callable(ser):
        s = ser()
        out["serialized_total"] = int(sum(s.values()))
    return out


def _warm_up(be: CkksBackend, plan: PerChannelPlan, pw: PreparedWeights, image: np.ndarray) -> None:
    """:data:`WARMUP_IMAGES` untimed inferences: a GPU's first run of each op compiles or loads
    its kernels and fills caches (and the plan encodes its biases on first use), which is not
    the latency of an image."""
    for _ in range(WARMUP_IMAGES):
        plan.unpack_logits(be.decrypt(plan.run(be, be.encrypt(plan.pack_image(image)), pw)))


def _one_image(be: CkksBackend, plan: PerChannelPlan, pw: PreparedWeights,
               image: np.ndarray) -> tuple[tuple[float, float, float], np.ndarray, list[JsonDict], int | None]:
    """Encrypt, evaluate (untraced: the latency) and decrypt one image, each timed on the
    device (:func:`~cryptoffload.crypto.ckks.timing.timed`: no phase's unfinished work lands
    in the next one's time); then evaluate it again traced, for the breakdown. Returns
    ``(encrypt_s, latency_s, decrypt_s)``, the logits, the traced ops and the evaluation's
    kernel launches (None where the backend does not count them)."""
    with timed(be) as enc:
        ct = be.encrypt(plan.pack_image(image))
    before = getattr(be, "kernel_launches", None)
    with timed(be) as lat:
        out = plan.run(be, ct, pw)
    after = getattr(be, "kernel_launches", None)
    launches = None if before is None or after is None else int(after) - int(before)
    with timed(be) as dec:
        logits = plan.unpack_logits(be.decrypt(out))
    ev = RecordingBackend(be)
    plan.run(ev, ct, pw)
    return (enc.seconds, lat.seconds, dec.seconds), logits, ev.ops, launches


def _replayed(be: CkksBackend, plan: PerChannelPlan, pw: PreparedWeights, x: np.ndarray) -> dict[str, float]:
    """Latency per image through one inference captured once and replayed for every image (on
    a GPU a CUDA graph: one launch instead of hundreds, the host out of the loop); empty where
    the backend cannot capture. (That a replay computes the direct run's ciphertext bit for bit
    is what tests/crypto/ckks/gpu/test_capture.py holds.)"""
    capture = getattr(be, "capture", None)
    if capture is None or getattr(be, "kernel_launches", None) is None:
        return {}
    prog = capture(lambda c: plan.run(be, c, pw), be.encrypt(plan.pack_image(x[0])))
    lat = []
    for img in x:
        ct = be.encrypt(plan.pack_image(img))
        with timed(be) as t:
            out = prog(ct)
        lat.append(t.seconds)
        del out
    return {"median": statistics.median(lat), "min": min(lat), "max": max(lat)}


def bench(images: int = 10, model_path: str | Path = DEFAULT_WEIGHTS, batch: bool = False, *,
          backend: str = "seal", params: CkksParams = DEFAULT_PARAMS, mnist_dir: str | Path | None = None,
          log: Callable[[str], None] | None = None) -> BenchResult:
    """Per-channel (default): latency of ``images`` held-out images one after another, one
    thread, with the per-layer / per-op breakdown (from traced runs) and key/weight memory.
    ``batch``: one per-pixel batch of ``images`` held-out images (up to the slot count) and
    its throughput."""
    model = load_model(model_path)
    data = load_mnist(mnist_dir)
    if isinstance(images, bool) or not isinstance(images, int) or images < 1:
        raise ConfigError(f"--images must be a positive integer, got {images!r}")
    if images > len(data.y_test):
        raise ConfigError(f"--images {images}: only {len(data.y_test)} held-out images")
    x, y = data.x_test[:images], data.y_test[:images]
    plain = model.forward(x)
    model_bytes = model.weight_bytes()
    say = log or (lambda s: None)
    if batch:
        return _bench_batch(model, x, y, plain, backend, params, model_bytes, say)
    be, plan, keygen_s = client_and_plan(model, backend, params)
    with timed(be) as t:
        pw = plan.prepare(be)
    prepare_s = t.seconds
    _warm_up(be, plan, pw, x[0])
    lat, enc, dec, preds, errs = [], [], [], [], []
    layers_sum: dict[str, float] = {p: 0.0 for p in LAYERS}
    kinds_sum: dict[str, dict[str, float]] = {}
    rotations = 0
    for i in range(images):
        times, logits, ops, launches = _one_image(be, plan, pw, x[i])
        enc.append(times[0])
        lat.append(times[1])
        dec.append(times[2])
        layers, kinds = breakdown(ops)
        rotations = count_rotations(ops)
        for k, v in layers.items():
            layers_sum[k] = layers_sum.get(k, 0.0) + v
        for k, kind in kinds.items():
            acc = kinds_sum.setdefault(k, {"count": 0, "seconds": 0.0})
            acc["count"] += kind["count"]
            acc["seconds"] += kind["seconds"]
        preds.append(int(np.argmax(logits)))
        errs.append(float(np.max(np.abs(logits - plain[i]))))
        say(f"image {i}: {lat[-1] * 1e3:.0f} ms, class {preds[-1]} (plain {int(np.argmax(plain[i]))}, label {y[i]})")
    preds_a = np.array(preds)
    return BenchResult(
        mode="per-channel", backend=be.name, n_images=images, params=params.to_dict(), keygen_s=keygen_s,
        prepare_s=prepare_s,
        latency_s={"median": statistics.median(lat), "mean": statistics.fmean(lat), "min": min(lat), "max": max(lat)},
        warmup_images=WARMUP_IMAGES, encrypt_s=statistics.fmean(enc), decrypt_s=statistics.fmean(dec),
        layers={k: v / images for k, v in layers_sum.items()},
        op_kinds={k: {"count": v["count"] / images, "seconds": v["seconds"] / images} for k, v in kinds_sum.items()},
        rotations=rotations, galois_keys=len(plan.rotation_steps()), key_bytes=_key_memory(be),
        weight_bytes={"plaintexts": pw.plaintext_bytes + sum(be.plaintext_bytes(p) for p in pw.biases.values()),
                      "model_float64": model_bytes},
        public_context_bytes=len(be.public_context()),
        agreement=float(np.mean(preds_a == np.argmax(plain, axis=1))),
        encrypted_accuracy=float(np.mean(preds_a == y)), plain_accuracy=float(np.mean(np.argmax(plain, axis=1) == y)),
        max_abs_error=max(errs), launches_per_image=launches, replay_latency_s=_replayed(be, plan, pw, x))


def _bench_batch(model: CnnModel, x: np.ndarray, y: np.ndarray, plain: np.ndarray, backend: str,
                 params: CkksParams, model_bytes: int, say: Callable[[str], None]) -> BenchResult:
    plan = BatchPlan(model, params)
    be = make_backend(backend, params)
    with timed(be) as t:
        be.keygen(rotations=[], relin=True)
    keygen_s = t.seconds
    ev = RecordingBackend(be, trace_name="mnist-cnn-batch")
    say(f"batch of {len(x)} images: {model.config.features * model.config.kernel ** 2} conv products,"
        f" {model.config.hidden * model.config.features} FC1 products ...")
    logits, times = run_batch(model, x, be, plan, ev)
    layers, kinds = breakdown(ev.ops)
    preds = np.argmax(logits, axis=1)
    return BenchResult(
        mode="batch", backend=be.name, n_images=len(x), params=params.to_dict(), keygen_s=keygen_s,
        prepare_s=times["prepare"], latency_s={"batch": times["evaluate"]},
        encrypt_s=times["encrypt"], decrypt_s=times["decrypt"], layers=layers, op_kinds=kinds, rotations=0,
        galois_keys=0, key_bytes=_key_memory(be),
        weight_bytes={"plaintexts": int(times["plaintext_bytes"]), "model_float64": model_bytes},
        public_context_bytes=len(be.public_context()), batch_s=times["evaluate"],
        images_per_s=len(x) / times["evaluate"], capacity_images_per_s=plan.slots / times["evaluate"],
        agreement=float(np.mean(preds == np.argmax(plain, axis=1))), encrypted_accuracy=float(np.mean(preds == y)),
        plain_accuracy=float(np.mean(np.argmax(plain, axis=1) == y)),
        max_abs_error=float(np.max(np.abs(logits - plain))))
