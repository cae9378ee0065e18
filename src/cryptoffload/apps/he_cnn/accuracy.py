"""The encrypted CNN's accuracy: plaintext and encrypted predictions on a range of held-out
images and how often they agree.

What the CLI calls (``cryptoffload he-cnn evaluate``)::

    evaluate(n_images=100, model_path=DEFAULT_WEIGHTS, backend="seal", *, batch=False,
             start=0, params=DEFAULT_PARAMS, mnist_dir=None, log=None, progress=None) -> EvalResult

Why apart from :mod:`.benchmark`: accuracy runs untraced and untimed per image (one key set,
all images), so it answers "does encryption change the answer" without a benchmark's cost.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from cryptoffload.apps.he_cnn.data import load_mnist
from cryptoffload.apps.he_cnn.infer import client_and_plan, run_batch
from cryptoffload.apps.he_cnn.model import load_model
from cryptoffload.apps.he_cnn.train import DEFAULT_WEIGHTS
from cryptoffload.checks import JsonDict
from cryptoffload.crypto.ckks import DEFAULT_PARAMS, CkksParams, make_backend
from cryptoffload.errors import ConfigError
from cryptoffload.io import json_safe


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

    def as_dict(self) -> JsonDict:
        return json_safe(asdict(self))


def evaluate(n_images: int = 100, model_path: str | Path = DEFAULT_WEIGHTS, backend: str = "seal", *,
             batch: bool = False, start: int = 0, params: CkksParams = DEFAULT_PARAMS,
             mnist_dir: str | Path | None = None, log: Callable[[str], None] | None = None,
             progress: Callable[[int], Callable[[str], None]] | None = None) -> EvalResult:
    """Plaintext and encrypted accuracy on held-out images ``start .. start + n_images - 1``
    and the agreement of encrypted with plaintext predictions (per-channel, one image at a
    time with one key set; or all of them in one per-pixel batch).

    ``progress(total) -> advance(label)`` (the CLI's progress bar, as studies get it) is
    started once the inputs are checked: one step per image, or one for the whole batch, so a
    100-image run (minutes) shows where it is."""
    model = load_model(model_path)
    data = load_mnist(mnist_dir)
    n_all = len(data.y_test)
    if isinstance(n_images, bool) or not isinstance(n_images, int) or n_images < 1 or start < 0 \
            or start + n_images > n_all:
        raise ConfigError(f"images {start}..{start + n_images - 1} are not within the {n_all} held-out images")
    x, y = data.x_test[start:start + n_images], data.y_test[start:start + n_images]
    plain = model.forward(x)
    t0 = time.perf_counter()
    advance = progress(1 if batch else n_images) if progress is not None else (lambda label: None)
    if batch:
        be = make_backend(backend, params)
        be.keygen(rotations=[], relin=True)
        logits, _ = run_batch(model, x, be)
        advance(f"{n_images} images in one batch")
    else:
        be, plan, _ = client_and_plan(model, backend, params)
        pw = plan.prepare(be)
        rows = []
        for i in range(n_images):
            out = plan.run(be, be.encrypt(plan.pack_image(x[i])), pw)
            rows.append(plan.unpack_logits(be.decrypt(out)))
            advance(f"image {start + i}")
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
