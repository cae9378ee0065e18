"""Per-channel packing of the CNN on CKKS ciphertexts: one image per ciphertext, 45 rotations.

The plan is written once against the CKKS interface (:mod:`cryptoffload.crypto.ckks`),
so the same code runs on SEAL, on the exact emulator (``make_backend("emulator")``: float64
slot vectors, ``np.roll`` rotations, SEAL's level/scale bookkeeping and refusals -- this is
the numpy plan executor the tests compare with the plain forward pass) and on a
:class:`~cryptoffload.crypto.ckks.RecordingBackend` (its op trace). The convolution and both
dense layers are the one BSGS product of :mod:`cryptoffload.crypto.ckks.bsgs`::

    plan = PerChannelPlan(model, params)     # one image per ciphertext, few rotations
    backend.keygen(rotations=plan.rotation_steps())
    weights = plan.prepare(ev)               # encode masks/diagonals once (server start)
    ct = ev.encrypt(plan.pack_image(image))  # client
    out = plan.run(ev, ct, weights)          # server; phases conv, act1, fc1, act2, fc2
    logits = plan.unpack_logits(ev.decrypt(out))

The other layout, CryptoNets' per-pixel batching (a slot per image, no rotation), is
:mod:`.batching`; it shares the depth check and the square activation defined here.

Per-channel layout (default parameters: N = 16384, 8192 slots)
--------------------------------------------------------------
The slots are cut into blocks of 1024 = 32 x 32; block ``c`` (c < 5) carries a copy of the
28x28 image, row ``r`` column ``q`` at slot ``1024 c + 32 r + q`` (row stride 32, so rows 28..31
and columns 28..31 are zero: the convolution's zero padding comes for free). Blocks 5..7 are
zero::

    slot  0        1024       2048       3072       4096       5120 .. 8191
          | image  | image    | image    | image    | image    | 0 ...      |   input
          | ch 0   | ch 1     | ch 2     | ch 3     | ch 4     |            |   after conv:
            conv output (c, i, j) at 1024 c + 64 i + 2 j  (i, j < 13: a stride-2 grid)

Convolution: ``sum over (di, dj) of mask[di,dj] * rot(x, 32 di + dj)``, the mask holding
``w[c, di, dj]`` at block ``c``'s output positions (zero elsewhere). Written baby-step /
giant-step: ``sum_di rot(sum_dj rot(mask, -32 di) * rot(x, dj), 32 di)`` -- 4 baby rotations
(dj = 1..4, one ``rotate_many`` of the input) and 4 giant ones (32, 64, 96, 128) instead of 24.
Every window stays inside its block (largest slot read: 64*12 + 2*12 + 32*4 + 4 = 924 < 1024).

Square: ``relinearize(mul(x, x))``, rescale.

FC1 (845 -> 100): the 100 x 8192 matrix (845 non-zero columns: the conv output slots), rows
padded to m1 = 128, by the diagonal method for a wide matrix: ``y' = sum_{d<128} diag_d *
rot(x, d)`` with ``diag_d[s] = W[s mod 128, (s + d) mod 8192]``, then ``log2(8192/128) = 6``
folding rotations (``y += rot(y, 4096)``, ..., ``rot(y, 128)``) sum the 64 chunks; rotations
are cyclic, so afterwards *every* slot ``s`` holds ``y[s mod 128]``: the hidden vector comes
out replicated with period 128 (slots 100..127 of each period are 0). The 128 diagonals are
done baby-step / giant-step with g = 16: 15 + 7 rotations.

FC2 (100 -> 10) on that periodic vector: a 16 x 128 wide matrix (10 rows used), 16 diagonals
(3 baby + 3 giant rotations) and 3 folds (64, 32, 16); the logits are in slots 0..9.

Inner sums of every baby-step/giant-step product are rescaled *before* their giant rotation
(rotations at the lower level are cheaper), and biases are added at the end of each layer,
encoded ``like`` the ciphertext (cached per level and scale). Depth: conv, square, FC1,
square, FC2 = 5 rescales; rotations per inference 8 + 28 + 9 = 45, with 28 Galois keys
(steps 1..15, 16..112 by 16, 128..4096 by powers of two; conv and FC2 reuse them).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from cryptoffload.apps.he_cnn.model import CnnModel, ModelConfig, SquareForm
from cryptoffload.crypto.ckks import DEFAULT_PARAMS, CkksParams
from cryptoffload.crypto.ckks.backend import Ciphertext, CkksBackend, Plaintext
from cryptoffload.crypto.ckks.bsgs import bsgs_product, prerotate
from cryptoffload.errors import ConfigError

DEPTH = 5          # conv, square, fc1, square, fc2
BLOCK_SIDE = 32    # row stride of a channel block (32 x 32 = 1024 slots)


def _pow2_at_least(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def square_form(model: CnnModel | SquareForm) -> SquareForm:
    """The model's weights rewritten so that both activations are plain squares (what both plans
    evaluate; :meth:`CnnModel.square_form`)."""
    return model.square_form() if isinstance(model, CnnModel) else model


def check_depth(params: CkksParams) -> None:
    """Refuses parameters with fewer levels than the CNN's multiplicative depth."""
    if params.levels < DEPTH:
        raise ConfigError(f"the CNN needs {DEPTH} levels (conv, square, fc1, square, fc2); parameters "
                          f"{list(params.coeff_mod_bits)} give {params.levels}")


def square(ev: CkksBackend, x: Ciphertext) -> Ciphertext:
    """The square activation on a ciphertext: multiply, relinearize, rescale (one level)."""
    return ev.rescale(ev.relinearize(ev.mul(x, x)))


def _split(n: int, baby: int | None) -> tuple[int, int]:
    """Baby-step count g and giant-step count G with g * G = n (n a power of two)."""
    if baby is None:
        baby = 1 << ((n.bit_length() - 1 + 1) // 2)   # sqrt, rounded up to a power of two
    if baby < 1 or n % baby:
        raise ConfigError(f"baby steps {baby} must divide {n}")
    return baby, n // baby


def pack_image(image: np.ndarray, config: ModelConfig, slots: int) -> np.ndarray:
    """Client side of the per-channel layout (needs the architecture, not the weights): the
    image replicated into ``config.channels`` blocks of 32 x 32 slots, row stride 32.

    ``image`` is checked already (:func:`~.mnist_checks.check_image`, 28 x 28 in [0, 1]):
    where an image enters -- a classifier's call, the command line, the client, a data set
    read from its files -- it is checked once, and packing does not check it again."""
    img = image
    block = BLOCK_SIDE * BLOCK_SIDE
    if config.image + config.pad > BLOCK_SIDE or config.channels * block > slots:
        raise ConfigError(f"{config.channels} channels of {BLOCK_SIDE}x{BLOCK_SIDE} blocks do not fit {slots} slots")
    v = np.zeros(slots)
    for chn in range(config.channels):
        blk = v[chn * block:(chn + 1) * block].reshape(BLOCK_SIDE, BLOCK_SIDE)
        blk[: config.image, : config.image] = img
    return v


@dataclass
class PreparedWeights:
    """Plaintexts encoded for one context (one key set): ``conv[j][i]`` etc. are the masks and
    diagonals of giant step ``j``, baby step ``i`` (``None`` where all-zero); biases are
    encoded lazily at the exact scale of the ciphertext they are added to."""

    conv: list[list[Plaintext | None]]
    fc1: list[list[Plaintext | None]]
    fc2: list[list[Plaintext | None]]
    biases: dict[tuple[str, int, float], Plaintext] = field(default_factory=dict)
    plaintext_bytes: int = 0
    count: int = 0


class PerChannelPlan:
    """Per-channel packing of one image (see the module docstring)."""

    def __init__(self, model: CnnModel | SquareForm, params: CkksParams = DEFAULT_PARAMS, *,
                 fc1_baby: int | None = 16, fc2_baby: int | None = 4) -> None:
        sq = square_form(model)
        c: ModelConfig = sq.config
        check_depth(params)
        self.model, self.config, self.params = sq, c, params
        self.slots = n = params.slots
        block = BLOCK_SIDE * BLOCK_SIDE
        o, k, s = c.conv_out, c.kernel, c.stride
        if c.image + c.pad > BLOCK_SIDE or (o - 1) * s + k > BLOCK_SIDE:
            raise ConfigError(f"the padded {c.image + c.pad}x{c.image + c.pad} image does not fit a "
                              f"{BLOCK_SIDE}x{BLOCK_SIDE} block")
        if c.channels * block > n:
            raise ConfigError(f"{c.channels} channels need {c.channels * block} slots, the parameters have {n}"
                              f" (at most {n // block} channels at N = {params.poly_modulus_degree})")
        self.block = block
        # slot of conv output (ch, i, j), in the model's flatten order (ch, i, j)
        ch, ii, jj = np.meshgrid(np.arange(c.channels), np.arange(o), np.arange(o), indexing="ij")
        self.out_slots = (ch * block + s * BLOCK_SIDE * ii + s * jj).ravel()
        # FC1: wide diagonal method, rows padded to m1
        self.m1 = _pow2_at_least(c.hidden)
        self.m2 = _pow2_at_least(c.classes)
        if self.m1 > n or n % self.m1:
            raise ConfigError(f"hidden width {c.hidden} (padded {self.m1}) does not divide {n} slots")
        if self.m2 > self.m1:
            raise ConfigError(f"{c.classes} classes (padded {self.m2}) exceed the hidden period {self.m1}")
        self.g1, self.G1 = _split(self.m1, fc1_baby if fc1_baby and fc1_baby <= self.m1 else None)
        self.g2, self.G2 = _split(self.m2, fc2_baby if fc2_baby and fc2_baby <= self.m2 else None)
        self.fold1 = [n >> (t + 1) for t in range(int(math.log2(n // self.m1)))]          # 4096 .. 128
        self.fold2 = [self.m1 >> (t + 1) for t in range(int(math.log2(self.m1 // self.m2)))]  # 64 .. 16
        self.conv_baby = list(range(k))                            # dj
        self.conv_giant = [BLOCK_SIDE * di for di in range(k)]     # 32 di
        self.fc1_baby = list(range(self.g1))
        self.fc1_giant = [self.g1 * j for j in range(self.G1)]
        self.fc2_baby = list(range(self.g2))
        self.fc2_giant = [self.g2 * j for j in range(self.G2)]
        self._build_vectors()


    def _build_vectors(self) -> None:
        sq, c, n = self.model, self.config, self.slots
        o, k = c.conv_out, c.kernel
        positions = self.out_slots.reshape(c.channels, o * o)
        # conv masks: mask[di][dj] has w[ch, di, dj] at block ch's output slots
        self.conv_vectors: list[list[np.ndarray | None]] = []
        for di in range(k):
            row: list[np.ndarray | None] = []
            for dj in range(k):
                m = np.zeros(n)
                for chn in range(c.channels):
                    m[positions[chn]] = sq.conv_w[chn, di, dj]
                row.append(prerotate(m, self.conv_giant[di]) if np.any(m) else None)
            self.conv_vectors.append(row)
        self.conv_bias = np.zeros(n)
        for chn in range(c.channels):
            self.conv_bias[positions[chn]] = sq.conv_b[chn]
        # FC1: W (m1 x n) with the 845 feature columns at their slots
        W = np.zeros((self.m1, n))
        W[: c.hidden, self.out_slots] = sq.fc1_w
        s_idx = np.arange(n)
        self.fc1_vectors = self._diagonals(W, self.g1, self.G1, s_idx)
        self.fc1_bias = np.tile(np.pad(sq.fc1_b, (0, self.m1 - c.hidden)), n // self.m1)
        # FC2 on the period-m1 hidden vector: W2 (m2 x m1), diagonals periodic with period m1
        W2 = np.zeros((self.m2, self.m1))
        W2[: c.classes, : c.hidden] = sq.fc2_w
        self.fc2_vectors = self._diagonals(W2, self.g2, self.G2, s_idx)
        self.fc2_bias = np.zeros(n)
        self.fc2_bias[: c.classes] = sq.fc2_b

    def _diagonals(self, W: np.ndarray, g: int, G: int, s_idx: np.ndarray) -> list[list[np.ndarray | None]]:
        """BSGS plaintexts of the wide-matrix diagonal method: diagonal ``gj + i`` pre-rotated by
        giant step ``gj``, with ``diag_d[s] = W[s mod rows, (s + d) mod cols]`` over all slots.
        Pre-rotated, slot ``s`` of diagonal ``gj + i`` is ``W[(s - gj) mod rows, (s + i) mod
        cols]`` (rows and cols divide the slot count): all of them in one gather."""
        rows, cols = W.shape
        r = (s_idx[None, :] - g * np.arange(G)[:, None]) % rows   # (G, slots)
        c = (s_idx[None, :] + np.arange(g)[:, None]) % cols       # (g, slots)
        diags = W[r[:, None, :], c[None, :, :]]                    # (G, g, slots)
        nonzero = diags.any(axis=2)
        return [[diags[j, i] if nonzero[j, i] else None for i in range(g)] for j in range(G)]

    def rotation_steps(self) -> list[int]:
        """The Galois keys this plan needs (and nothing else)."""
        steps = {*self.conv_baby, *self.conv_giant, *self.fc1_baby, *self.fc1_giant, *self.fold1,
                 *self.fc2_baby, *self.fc2_giant, *self.fold2}
        steps.discard(0)
        return sorted(steps)

    def rotations_per_inference(self) -> dict[str, int]:
        def used(vectors: list[list[np.ndarray | None]], giants: list[int]) -> tuple[set[int], int]:
            babies = {i for row in vectors for i, v in enumerate(row) if v is not None and i}
            g = sum(1 for j, row in enumerate(vectors) if giants[j] and any(v is not None for v in row))
            return babies, g
        cb, cg = used(self.conv_vectors, self.conv_giant)
        b1, g1 = used(self.fc1_vectors, self.fc1_giant)
        b2, g2 = used(self.fc2_vectors, self.fc2_giant)
        out = {"conv": len(cb) + cg, "fc1": len(b1) + g1 + len(self.fold1), "fc2": len(b2) + g2 + len(self.fold2)}
        out["total"] = sum(out.values())
        return out

    @property
    def top(self) -> int:
        """Level of the encrypted image (the parameters' top level)."""
        return self.params.levels

    def pack_image(self, image: np.ndarray) -> np.ndarray:
        """Client side: the (checked) image replicated into the channel blocks."""
        return pack_image(image, self.config, self.slots)

    def unpack_logits(self, slots: np.ndarray) -> np.ndarray:
        return np.asarray(slots[: self.config.classes], dtype=np.float64)


    def weight_groups(self) -> list[tuple[str, list[list[np.ndarray | None]], int]]:
        """The masks and diagonals to encode, per layer, with the level each is used at:
        ``(name, vectors, level)``, in the order :meth:`prepare` encodes them."""
        top = self.top
        return [("conv.mask", self.conv_vectors, top), ("fc1.diag", self.fc1_vectors, top - 2),
                ("fc2.diag", self.fc2_vectors, top - 4)]

    def weights_digest(self) -> bytes:
        """A digest of everything the encoded weights depend on but the backend: every vector
        (its values, its place, its level) and the parameters -- a file of them encoded is the
        same file exactly when this digest is the same."""
        h = hashlib.blake2b(digest_size=16, person=b"he-cnn-weights")
        h.update(self.params.digest())
        for name, vectors, level in self.weight_groups():
            h.update(f"{name}@{level}:{len(vectors)}".encode())
            for row in vectors:
                for v in row:
                    h.update(b"-" if v is None else b"+")
                    if v is not None:
                        h.update(np.ascontiguousarray(v, dtype="<f8").data)  # the buffer itself, not a copy
        return h.digest()

    def prepare(self, ev: CkksBackend) -> PreparedWeights:
        """Encode every mask and diagonal at the level where it is used (once per key set)."""
        ev.set_phase("weights")
        return self.weights_from([ev.label(ev.encode(v, level=level), f"{name}[{j},{i}]")
                                  for name, vectors, level in self.weight_groups()
                                  for j, row in enumerate(vectors) for i, v in enumerate(row) if v is not None], ev)

    def weight_count(self) -> int:
        """How many vectors :meth:`prepare` encodes (the all-zero ones are not)."""
        return sum(v is not None for _, vectors, _ in self.weight_groups() for row in vectors for v in row)

    def weights_from(self, plaintexts: Sequence[Plaintext], ev: CkksBackend) -> PreparedWeights:
        """:class:`PreparedWeights` from the encoded vectors in :meth:`prepare`'s order (None
        kept where a vector is all-zero); a count that does not match is a ConfigError."""
        flat = iter(plaintexts)
        want = self.weight_count()
        if len(plaintexts) != want:
            raise ConfigError(f"{len(plaintexts)} encoded weights given, the plan has {want}")
        conv, fc1, fc2 = ([[None if v is None else next(flat) for v in row] for row in vectors]
                          for _, vectors, _ in self.weight_groups())
        return PreparedWeights(conv=conv, fc1=fc1, fc2=fc2, plaintext_bytes=sum(ev.plaintext_bytes(p) for p in plaintexts),
                               count=len(plaintexts))

    def _bias(self, ev: CkksBackend, pw: PreparedWeights, name: str, vec: np.ndarray, ct: Ciphertext) -> Ciphertext:
        key = (name, ev.level(ct), float(ev.scale(ct)))
        pt = pw.biases.get(key)
        if pt is None:
            pt = ev.label(ev.encode(vec, like=ct), name)
            pw.biases[key] = pt
        return ev.add_plain(ct, pt)

    @staticmethod
    def _bsgs(ev: CkksBackend, x: Ciphertext, pts: list[list[Plaintext | None]], babies: list[int], giants: list[int]) -> Ciphertext:
        """``sum_j rot(rescale(sum_i pts[j][i] * rot(x, babies[i])), giants[j])``."""
        acc = bsgs_product(ev, x, pts, babies, giants)
        if acc is None:
            raise ConfigError("a layer has only zero weights")
        return acc

    def _dense(self, ev: CkksBackend, x: Ciphertext, pw: PreparedWeights, name: str, pts: list[list[Plaintext | None]], babies: list[int],
               giants: list[int], fold: Sequence[int], bias: np.ndarray) -> Ciphertext:
        """A fully connected layer: the BSGS product, the rotate-and-add folds that sum its
        partial dot products, then the bias."""
        x = self._bsgs(ev, x, pts, babies, giants)
        for step in fold:
            x = ev.add(x, ev.rotate(x, step))
        return self._bias(ev, pw, f"{name}.bias", bias, x)

    def run(self, ev: CkksBackend, ct: Ciphertext, pw: PreparedWeights, taps: dict[str, Ciphertext] | None = None) -> Ciphertext:
        """Server side: encrypted image -> encrypted logits (slots 0..classes-1). ``taps``, if
        given, receives each layer's output ciphertext (``conv`` ... ``fc2``)."""
        if ev.level(ct) != self.top:
            raise ConfigError(f"the encrypted image is at level {ev.level(ct)}, the plan needs {self.top}")
        tap = taps.__setitem__ if taps is not None else (lambda _k, _v: None)
        ev.set_phase("conv")
        x = self._bsgs(ev, ct, pw.conv, self.conv_baby, self.conv_giant)
        x = self._bias(ev, pw, "conv.bias", self.conv_bias, x)
        tap("conv", x)
        ev.set_phase("act1")
        x = square(ev, x)
        tap("act1", x)
        ev.set_phase("fc1")
        x = self._dense(ev, x, pw, "fc1", pw.fc1, self.fc1_baby, self.fc1_giant, self.fold1, self.fc1_bias)
        tap("fc1", x)
        ev.set_phase("act2")
        x = square(ev, x)
        tap("act2", x)
        ev.set_phase("fc2")
        x = self._dense(ev, x, pw, "fc2", pw.fc2, self.fc2_baby, self.fc2_giant, self.fold2, self.fc2_bias)
        tap("fc2", x)
        ev.set_phase("output")
        return x
