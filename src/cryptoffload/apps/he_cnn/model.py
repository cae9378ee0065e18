"""The CryptoNets-style CNN in numpy: architecture, forward pass, save/load.

::

    28x28 image, zero-padded to 29x29 (one row at the bottom, one column at the right)
    conv 5x5, stride 2, 5 output channels (+ bias)   -> 5 x 13 x 13 = 845
    activation: x^2 (``square``) or a trained a x^2 + b x (``poly``)
    fully connected 845 -> 100 (+ bias)
    activation (same kind)
    fully connected 100 -> 10 (+ bias)                -> logits

Functions and classes other modules use::

    ModelConfig(channels=5, hidden=100, activation="square", ...)
    CnnModel.init(config, rng) ; model.forward(x) -> logits (n, 10) ; model.predict(x)
    model.save(path, meta=None) ; load_model(path, expect=None) -> CnnModel
    model.square_form() -> SquareForm   # every activation a plain square (what HE evaluates)

Saved file (``.npz``): arrays ``conv_w (C, k, k)``, ``conv_b (C,)``, ``fc1_w (H, C*o*o)``,
``fc1_b (H,)``, ``fc2_w (K, H)``, ``fc2_b (K,)``, ``act (2, 2)`` (rows: layer, columns: a, b;
``[[1, 0], [1, 0]]`` for ``square``) and two JSON strings: ``config`` (format, architecture
and activation) and ``meta`` (how it was trained: command, seed, epochs, split, accuracy).
:func:`load_model` checks the format, that the config describes a model this code can run,
that it matches ``expect`` when given, and that every array has the shape the config implies;
any mismatch is a :class:`ConfigError` that names it.

The square form. With ``poly`` activations ``a z^2 + b z = a (z + beta)^2 - a beta^2`` with
``beta = b / (2a)``, so the shift ``beta`` goes into the previous layer's bias, the factor
``a`` into the next layer's weights and ``-a beta^2`` (times the next weights' row sums) into
the next bias: one ciphertext square per activation, whatever ``a`` and ``b``.
"""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from cryptoffload.checks import JsonDict, JsonRefused, strict_json
from cryptoffload.errors import ConfigError
from cryptoffload.io import atomic_writer, read_input

FORMAT = "cryptoffload-he-cnn/1"
MAX_MODEL_BYTES = 64 * 1024 * 1024  # the LoLa-style MNIST model is well under 1 MB
MAX_MODEL_MEMBERS = 64  # arrays and entries of a model archive (the model has 9)
ACTIVATIONS = ("square", "poly")
ARRAYS = ("conv_w", "conv_b", "fc1_w", "fc1_b", "fc2_w", "fc2_b", "act")


@dataclass(frozen=True)
class ModelConfig:
    """Architecture of the CNN. The defaults are CryptoNets' (13x13x5 after the convolution)."""

    image: int = 28
    pad: int = 1            # zero rows/columns appended at the bottom/right
    kernel: int = 5
    stride: int = 2
    channels: int = 5
    hidden: int = 100
    classes: int = 10
    activation: str = "square"

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name == "activation":
                if v not in ACTIVATIONS:
                    raise ConfigError(f"activation must be one of {', '.join(ACTIVATIONS)}, got {v!r}")
            elif isinstance(v, bool) or not isinstance(v, int) or v < (0 if f.name == "pad" else 1):
                raise ConfigError(f"model config: {f.name} must be a positive integer, got {v!r}")
        if self.image + self.pad < self.kernel:
            raise ConfigError(f"model config: kernel {self.kernel} larger than the padded image")
        if (self.image + self.pad - self.kernel) % self.stride:
            raise ConfigError(f"model config: (image + pad - kernel) = {self.image + self.pad - self.kernel}"
                              f" is not a multiple of the stride {self.stride}")

    @property
    def conv_out(self) -> int:
        return (self.image + self.pad - self.kernel) // self.stride + 1

    @property
    def features(self) -> int:
        return self.channels * self.conv_out ** 2

    def shapes(self) -> dict[str, tuple[int, ...]]:
        k = self.kernel
        return {"conv_w": (self.channels, k, k), "conv_b": (self.channels,),
                "fc1_w": (self.hidden, self.features), "fc1_b": (self.hidden,),
                "fc2_w": (self.classes, self.hidden), "fc2_b": (self.classes,), "act": (2, 2)}

    def as_dict(self) -> JsonDict:
        return asdict(self)


def patches(x: np.ndarray, config: ModelConfig) -> np.ndarray:
    """im2col: (n, 28, 28) -> (n, o*o, k*k), windows in row-major output order."""
    x = np.asarray(x)
    n = x.shape[0]
    side = config.image + config.pad
    xp = np.zeros((n, side, side), dtype=x.dtype)
    xp[:, :config.image, :config.image] = x
    o, k, s = config.conv_out, config.kernel, config.stride
    win = np.lib.stride_tricks.sliding_window_view(xp, (k, k), axis=(1, 2))[:, ::s, ::s][:, :o, :o]
    return win.reshape(n, o * o, k * k)


@dataclass(frozen=True)
class SquareForm:
    """The same function with every activation a plain square (what the HE plans evaluate)."""

    config: ModelConfig
    conv_w: np.ndarray
    conv_b: np.ndarray
    fc1_w: np.ndarray
    fc1_b: np.ndarray
    fc2_w: np.ndarray
    fc2_b: np.ndarray

    def forward(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64).reshape(-1, self.config.image, self.config.image)
        c = self.config
        z = patches(x, c) @ self.conv_w.reshape(c.channels, -1).T + self.conv_b        # (n, o*o, C)
        h = (z ** 2).transpose(0, 2, 1).reshape(len(x), -1)                            # (n, C*o*o)
        h = (h @ self.fc1_w.T + self.fc1_b) ** 2
        return h @ self.fc2_w.T + self.fc2_b


@dataclass
class CnnModel:
    config: ModelConfig
    conv_w: np.ndarray
    conv_b: np.ndarray
    fc1_w: np.ndarray
    fc1_b: np.ndarray
    fc2_w: np.ndarray
    fc2_b: np.ndarray
    act: np.ndarray          # (2, 2): per activation layer (a, b) of a z^2 + b z
    meta: JsonDict | None = None

    @classmethod
    def init(cls, config: ModelConfig, rng: np.random.Generator) -> "CnnModel":
        """Small random weights (keeps the squares bounded at the start of training)."""
        k2 = config.kernel ** 2
        act = np.array([[1.0, 0.0], [1.0, 0.0]]) if config.activation == "square" else np.array([[0.1, 1.0], [0.1, 1.0]])
        return cls(config,
                   conv_w=rng.normal(0, 1.0 / np.sqrt(k2), (config.channels, config.kernel, config.kernel)),
                   conv_b=np.zeros(config.channels),
                   fc1_w=rng.normal(0, 0.5 / np.sqrt(config.features), (config.hidden, config.features)),
                   fc1_b=np.zeros(config.hidden),
                   fc2_w=rng.normal(0, 1.0 / np.sqrt(config.hidden), (config.classes, config.hidden)),
                   fc2_b=np.zeros(config.classes),
                   act=act)

    def arrays(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name) for name in ARRAYS}


    def _act(self, layer: int, z: np.ndarray) -> np.ndarray:
        a, b = self.act[layer]
        return a * z * z + b * z

    def forward(self, x: np.ndarray) -> np.ndarray:
        """Logits (n, classes) of images (n, 28, 28) (or one image (28, 28))."""
        c = self.config
        x = np.asarray(x, dtype=np.float64).reshape(-1, c.image, c.image)
        z = patches(x, c) @ self.conv_w.reshape(c.channels, -1).T + self.conv_b
        h = self._act(0, z).transpose(0, 2, 1).reshape(len(x), -1)
        h = self._act(1, h @ self.fc1_w.T + self.fc1_b)
        return h @ self.fc2_w.T + self.fc2_b

    def predict(self, x: np.ndarray) -> np.ndarray:
        return np.argmax(self.forward(x), axis=1)

    def accuracy(self, x: np.ndarray, y: np.ndarray) -> float:
        return float(np.mean(self.predict(x) == np.asarray(y)))


    def square_form(self) -> SquareForm:
        """Weights of the same function written with plain squares (see the module docstring)."""
        conv_b, fc1_w, fc1_b = self.conv_b.astype(np.float64), self.fc1_w.astype(np.float64), self.fc1_b.astype(np.float64)
        fc2_w, fc2_b = self.fc2_w.astype(np.float64), self.fc2_b.astype(np.float64)
        (a1, b1), (a2, b2) = self.act
        if self.config.activation == "poly" or (a1, b1, a2, b2) != (1.0, 0.0, 1.0, 0.0):
            for layer, a in ((1, a1), (2, a2)):
                if abs(a) < 1e-6:
                    raise ConfigError(f"activation {layer}: a = {a:g} is too close to 0 for the square form")
            beta1, beta2 = b1 / (2 * a1), b2 / (2 * a2)
            conv_b = conv_b + beta1
            fc1_b = fc1_b - a1 * beta1 ** 2 * fc1_w.sum(axis=1)
            fc1_w = fc1_w * a1
            fc1_b = fc1_b + beta2
            fc2_b = fc2_b - a2 * beta2 ** 2 * fc2_w.sum(axis=1)
            fc2_w = fc2_w * a2
        return SquareForm(self.config, self.conv_w.astype(np.float64), conv_b, fc1_w, fc1_b, fc2_w, fc2_b)


    def save(self, path: str | Path, meta: JsonDict | None = None) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        meta = meta if meta is not None else (self.meta or {})
        config = {"format": FORMAT, **self.config.as_dict()}
        # Any, not ndarray: numpy's stub also takes a bool keyword (allow_pickle), which mypy
        # would otherwise match against these names
        arrays: dict[str, Any] = {k: np.asarray(v, dtype=np.float64) for k, v in self.arrays().items()}
        with atomic_writer(path) as fh:  # a crash leaves the old weights, never half of new ones
            np.savez_compressed(fh, **arrays,
                                config=np.array(json.dumps(config, sort_keys=True)),
                                meta=np.array(json.dumps(meta, sort_keys=True)))
        return path

    def weight_bytes(self) -> int:
        return int(sum(np.asarray(v).size * 8 for v in self.arrays().values()))


def _check_members(path: Path, raw: io.BytesIO) -> None:
    """The archive's members, from its directory, before any is inflated: at most
    :data:`MAX_MODEL_MEMBERS`, inflating to at most :data:`MAX_MODEL_BYTES` together (a 1 MB
    archive could otherwise declare an array of gigabytes: a zip bomb). Python's zipfile stops
    a member at its declared size, so the declared sizes bound what loading holds."""
    try:
        with zipfile.ZipFile(raw) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise ConfigError(f"{path}: not a model file ({exc})") from None
    finally:
        raw.seek(0)
    inflated = sum(m.file_size for m in members)
    if len(members) > MAX_MODEL_MEMBERS or inflated > MAX_MODEL_BYTES:
        raise ConfigError(f"{path}: its {len(members)} members inflate to {inflated:,} bytes; a model file holds at "
                          f"most {MAX_MODEL_MEMBERS} members and {MAX_MODEL_BYTES:,} bytes (a zip bomb?)")


def load_model(path: str | Path, expect: ModelConfig | None = None) -> CnnModel:
    """A model saved by :meth:`CnnModel.save`, checked against its config (and ``expect``)."""
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        raise ConfigError(f"model file not found: {path}")
    raw = io.BytesIO(read_input(path, "model file", max_bytes=MAX_MODEL_BYTES, error=ConfigError))
    if not zipfile.is_zipfile(raw):
        raise ConfigError(f"{path}: not a model file (expected a .npz archive written by CnnModel.save)")
    _check_members(path, raw)
    try:
        with np.load(raw, allow_pickle=False) as npz:
            data = {k: npz[k] for k in npz.files}
    except Exception as exc:  # zipfile.BadZipFile, ValueError, OSError, EOFError ...
        raise ConfigError(f"{path}: not a model file ({type(exc).__name__}: {exc})") from None
    if "config" not in data:
        raise ConfigError(f"{path}: no 'config' entry (not a cryptoffload HE-CNN model)")
    try:
        raw = strict_json(str(data["config"]))
    except JsonRefused as exc:
        raise ConfigError(f"{path}: garbled 'config' entry ({exc})") from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise ConfigError(f"{path}: format {raw.get('format') if isinstance(raw, dict) else raw!r}, expected {FORMAT!r}")
    known = {f.name for f in fields(ModelConfig)}
    unknown = sorted(set(raw) - known - {"format"})
    if unknown:
        raise ConfigError(f"{path}: unknown config field(s) {', '.join(unknown)}")
    try:
        config = ModelConfig(**{k: v for k, v in raw.items() if k in known})
    except TypeError as exc:
        raise ConfigError(f"{path}: bad config ({exc})") from None
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    if expect is not None and config != expect:
        diffs = [f"{f.name} = {getattr(config, f.name)!r} (expected {getattr(expect, f.name)!r})"
                 for f in fields(ModelConfig) if getattr(config, f.name) != getattr(expect, f.name)]
        raise ConfigError(f"{path}: architecture mismatch: {'; '.join(diffs)}")
    arrays: dict[str, np.ndarray] = {}
    for name, shape in config.shapes().items():
        if name not in data:
            raise ConfigError(f"{path}: array {name!r} missing")
        arr = np.asarray(data[name])
        if arr.shape != shape:
            raise ConfigError(f"{path}: array {name} has shape {arr.shape}, the architecture needs {shape}")
        if arr.dtype.kind not in "fiu" or not np.all(np.isfinite(arr)):
            raise ConfigError(f"{path}: array {name} is not finite real numbers")
        arrays[name] = arr.astype(np.float64)
    if config.activation == "square" and not np.array_equal(arrays["act"], [[1.0, 0.0], [1.0, 0.0]]):
        raise ConfigError(f"{path}: activation 'square' but act coefficients {arrays['act'].tolist()}")
    try:
        meta = strict_json(str(data["meta"])) if "meta" in data else {}
    except JsonRefused:
        meta = {}
    return CnnModel(config, meta=meta, **arrays)
