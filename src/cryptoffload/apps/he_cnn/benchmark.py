"""The encrypted CNN's benchmark: single-thread latency per image with the per-layer and
per-op breakdown, key and weight memory, or the throughput of one per-pixel batch.

What the CLI calls (``cryptoffload he-cnn bench``; ``benchmarks/he_cnn.py`` too)::

    bench(images=10, model_path=DEFAULT_WEIGHTS, batch=False, *, backend="seal",
          params=DEFAULT_PARAMS, mnist_dir=None, log=None) -> BenchResult

Why apart from :mod:`.infer`: a benchmark runs each image twice (untraced for the latency,
traced for the breakdown) and sums what one inference reports; it builds on :mod:`.infer`'s
pieces and adds nothing to them.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from cryptoffload.apps.he_cnn.batching import BatchPlan
from cryptoffload.apps.he_cnn.data import load_mnist
from cryptoffload.apps.he_cnn.infer import LAYERS, breakdown, client_and_plan, count_rotations, run_batch, sync
from cryptoffload.apps.he_cnn.model import CnnModel, load_model
from cryptoffload.apps.he_cnn.train import DEFAULT_WEIGHTS
from cryptoffload.crypto.ckks import DEFAULT_PARAMS, CkksParams, RecordingBackend, make_backend
from cryptoffload.errors import ConfigError
from cryptoffload.io import json_safe


@dataclass
class BenchResult:
    mode: str
    backend: str
    n_images: int
    params: dict[str, Any]
    keygen_s: float
    prepare_s: float
    latency_s: dict[str, float] = field(default_factory=dict)
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

    def as_dict(self) -> dict[str, Any]:
        return json_safe(asdict(self))


def _key_memory(be: Any) -> dict[str, int]:
    kb = be.key_bytes()
    out = {"relin": int(kb.get("relin", 0)), "galois": int(sum(v for k, v in kb.items() if k.startswith("galois:")))}
    out["total"] = out["relin"] + out["galois"]
    ser = getattr(be, "serialized_key_bytes", None)
    if callable(ser):
        s = ser()
        out["serialized_total"] = int(sum(s.values()))
    return out


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
    t = time.perf_counter()
    pw = plan.prepare(be)
    prepare_s = time.perf_counter() - t
    lat, enc, dec, preds, errs = [], [], [], [], []
    layers_sum: dict[str, float] = {p: 0.0 for p in LAYERS}
    kinds_sum: dict[str, dict[str, float]] = {}
    rotations = 0
    for i in range(images):
        sync(be)
        t = time.perf_counter()
        ct = be.encrypt(plan.pack_image(x[i]))
        sync(be)
        enc.append(time.perf_counter() - t)
        t = time.perf_counter()
        out = plan.run(be, ct, pw)                 # untraced: the latency, until the device is done
        sync(be)
        lat.append(time.perf_counter() - t)
        t = time.perf_counter()
        logits = plan.unpack_logits(be.decrypt(out))
        dec.append(time.perf_counter() - t)
        ev = RecordingBackend(be)                  # traced again: the breakdown
        plan.run(ev, ct, pw)
        layers, kinds = breakdown(ev.ops)
        rotations = count_rotations(ev.ops)
        for k, v in layers.items():
            layers_sum[k] = layers_sum.get(k, 0.0) + v
        for k, v in kinds.items():
            acc = kinds_sum.setdefault(k, {"count": 0, "seconds": 0.0})
            acc["count"] += v["count"]
            acc["seconds"] += v["seconds"]
        preds.append(int(np.argmax(logits)))
        errs.append(float(np.max(np.abs(logits - plain[i]))))
        say(f"image {i}: {lat[-1] * 1e3:.0f} ms, class {preds[-1]} (plain {int(np.argmax(plain[i]))}, label {y[i]})")
    preds_a = np.array(preds)
    return BenchResult(
        mode="per-channel", backend=be.name, n_images=images, params=params.to_dict(), keygen_s=keygen_s,
        prepare_s=prepare_s,
        latency_s={"median": statistics.median(lat), "mean": statistics.fmean(lat), "min": min(lat), "max": max(lat)},
        encrypt_s=statistics.fmean(enc), decrypt_s=statistics.fmean(dec),
        layers={k: v / images for k, v in layers_sum.items()},
        op_kinds={k: {"count": v["count"] / images, "seconds": v["seconds"] / images} for k, v in kinds_sum.items()},
        rotations=rotations, galois_keys=len(plan.rotation_steps()), key_bytes=_key_memory(be),
        weight_bytes={"plaintexts": pw.plaintext_bytes + sum(be.plaintext_bytes(p) for p in pw.biases.values()),
                      "model_float64": model_bytes},
        public_context_bytes=len(be.public_context()),
        agreement=float(np.mean(preds_a == np.argmax(plain, axis=1))),
        encrypted_accuracy=float(np.mean(preds_a == y)), plain_accuracy=float(np.mean(np.argmax(plain, axis=1) == y)),
        max_abs_error=max(errs))


def _bench_batch(model: CnnModel, x: np.ndarray, y: np.ndarray, plain: np.ndarray, backend: str,
                 params: CkksParams, model_bytes: int, say: Callable[[str], None]) -> BenchResult:
    plan = BatchPlan(model, params)
    be = make_backend(backend, params)
    t = time.perf_counter()
    be.keygen(rotations=[], relin=True)
    keygen_s = time.perf_counter() - t
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
