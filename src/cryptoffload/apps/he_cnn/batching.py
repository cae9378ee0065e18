"""CryptoNets' per-pixel batching of the CNN on CKKS ciphertexts: ciphertext ``p`` holds pixel
``p`` of up to ``slots`` images, one slot per image.

    plan = BatchPlan(model, params)
    cts = [ev.encrypt(v) for v in plan.pack_images(images)]
    outs = plan.run(ev, cts, plan.prepare(ev))   # 10 ciphertexts, no rotations
    logits = plan.unpack_logits([ev.decrypt(c) for c in outs], n_images)

Why a second layout beside :mod:`.packing`'s per-channel one: it needs no rotation and no Galois
key, and one run costs the same for 1 or 8,192 images -- the throughput end of the trade-off,
where per-channel packing is the latency end (one image, 45 rotations). Written against the
same CKKS interface, so it runs on SEAL, the emulator and the recording backend alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from numpy.typing import ArrayLike

from cryptoffload.apps.he_cnn.mnist_checks import check_image
from cryptoffload.apps.he_cnn.model import CnnModel, SquareForm
from cryptoffload.apps.he_cnn.packing import check_depth, square_form
from cryptoffload.crypto.ckks import DEFAULT_PARAMS, CkksParams
from cryptoffload.crypto.ckks.backend import Ciphertext, CkksBackend, Plaintext
from cryptoffload.errors import ConfigError


@dataclass
class BatchWeights:
    """The conv layer's scalar weights encoded once per key set (``conv[(channel, di, dj)]``)."""

    conv: dict[tuple[int, int, int], Plaintext]
    plaintext_bytes: int = 0
    count: int = 0


class BatchPlan:
    """CryptoNets' batching: ciphertext ``p`` holds pixel ``p`` of up to ``slots`` images (slot
    ``s`` = image ``s``). Every layer is scalar plaintext products and additions: no rotation,
    no Galois key; throughput-oriented (one run costs the same for 1 or 8192 images).

    Scalar weights are encoded as constant plaintexts at the level of use: the 125 conv weights
    once (:meth:`prepare`), the FC weights when used (84,500 + 1,000 of them would take 43 GB
    encoded at once).
    """

    def __init__(self, model: CnnModel | SquareForm, params: CkksParams = DEFAULT_PARAMS) -> None:
        sq = square_form(model)
        check_depth(params)
        self.model, self.config, self.params = sq, sq.config, params
        self.slots = params.slots

    def rotation_steps(self) -> list[int]:
        return []

    @property
    def top(self) -> int:
        return self.params.levels

    def pack_images(self, images: ArrayLike) -> list[np.ndarray]:
        """Client side: (n, 28, 28) images -> 784 slot vectors (pixel-major)."""
        arr = np.asarray(images, dtype=np.float64)
        c = self.config
        if arr.ndim == 2:
            arr = arr[None]
        if arr.ndim != 3 or arr.shape[1:] != (c.image, c.image):
            raise ConfigError(f"images have shape {arr.shape}, expected (n, {c.image}, {c.image})")
        if not 1 <= len(arr) <= self.slots:
            raise ConfigError(f"a batch holds 1 to {self.slots} images, got {len(arr)}")
        for i, img in enumerate(arr):
            check_image(img, f"image {i}")
        flat = arr.reshape(len(arr), -1)
        return [flat[:, p] for p in range(flat.shape[1])]

    def unpack_logits(self, slots: Sequence[np.ndarray], n_images: int) -> np.ndarray:
        return np.stack([np.asarray(v[:n_images]) for v in slots], axis=1)

    def prepare(self, ev: CkksBackend) -> BatchWeights:
        ev.set_phase("weights")
        c, sq = self.config, self.model
        out: dict[tuple[int, int, int], Plaintext] = {}
        total = 0
        for chn in range(c.channels):
            for di in range(c.kernel):
                for dj in range(c.kernel):
                    w = float(sq.conv_w[chn, di, dj])
                    if w == 0.0:
                        continue
                    pt = ev.label(ev.encode(w, level=self.top), f"conv.w[{chn},{di},{dj}]")
                    out[(chn, di, dj)] = pt
                    total += ev.plaintext_bytes(pt)
        return BatchWeights(out, total, len(out))

    @staticmethod
    def _dense(ev: CkksBackend, xs: list[Ciphertext], W: np.ndarray, b: np.ndarray, name: str) -> list[Ciphertext]:
        """``rescale(W x + b)``: the products as one batched op (a GPU backend runs the whole
        layer in one launch; elsewhere the scalar products one by one), then the biases and
        the rescales."""
        accs: list[Ciphertext] = []
        for r, acc in enumerate(ev.mul_scalar_sums(xs, W, name)):
            if acc is None:
                raise ConfigError(f"{name}: row {r} has only zero weights")
            accs.append(acc)
        return ev.rescale_many([ev.add_plain(acc, ev.encode(float(b[r]), like=acc)) for r, acc in enumerate(accs)])

    def _conv_terms(self, cts: Sequence[Ciphertext], bw: BatchWeights, chn: int, i: int, j: int) -> list[tuple[Ciphertext, Plaintext]]:
        """The (pixel ciphertext, weight plaintext) products of conv output ``(chn, i, j)``."""
        c = self.config
        k, s = c.kernel, c.stride
        terms = []
        for di in range(k):
            r = s * i + di
            if r >= c.image:
                continue           # zero padding
            for dj in range(k):
                q = s * j + dj
                if q < c.image and (chn, di, dj) in bw.conv:
                    terms.append((cts[r * c.image + q], bw.conv[(chn, di, dj)]))
        return terms

    def _conv(self, ev: CkksBackend, cts: Sequence[Ciphertext], bw: BatchWeights) -> list[Ciphertext]:
        """Every conv output's products as one batched op, then the biases, then one batched rescale."""
        c, sq = self.config, self.model
        keys = [(chn, i, j) for chn in range(c.channels) for i in range(c.conv_out) for j in range(c.conv_out)]
        sums = ev.mul_plain_sums([self._conv_terms(cts, bw, *key) for key in keys])
        bias_pt: dict[int, Plaintext] = {}
        out = []
        for (chn, _, _), acc in zip(keys, sums):
            if chn not in bias_pt:
                bias_pt[chn] = ev.encode(float(sq.conv_b[chn]), like=acc)
            out.append(ev.add_plain(acc, bias_pt[chn]))
        return ev.rescale_many(out)

    def run(self, ev: CkksBackend, cts: Sequence[Ciphertext], bw: BatchWeights) -> list[Ciphertext]:
        """Conv, square, FC1, square, FC2 -- each layer as batched ops over all its ciphertexts
        (:class:`~cryptoffload.crypto.ckks.batched.BatchedOps`: one op at a time elsewhere)."""
        c, sq = self.config, self.model
        if len(cts) != c.image * c.image:
            raise ConfigError(f"a batch is {c.image * c.image} pixel ciphertexts, got {len(cts)}")
        ev.set_phase("conv")
        conv = self._conv(ev, cts, bw)
        ev.set_phase("act1")
        h = ev.squares(conv)
        del conv
        ev.set_phase("fc1")
        h = self._dense(ev, h, sq.fc1_w, sq.fc1_b, "fc1")
        ev.set_phase("act2")
        h = ev.squares(h)
        ev.set_phase("fc2")
        out = self._dense(ev, h, sq.fc2_w, sq.fc2_b, "fc2")
        ev.set_phase("output")
        return out
