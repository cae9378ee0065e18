"""CoeffToSlot and SlotToCoeff in plaintext: the special FFT of CKKS encoding factored into
butterfly layers, and the layers grouped into a plan's stages, each stage a sparse matrix kept
as its diagonals.

The map bootstrapping inverts. With the slot generator 5 (HEAAN, OpenFHE and our RNS backends),
slot ``j`` of a plaintext polynomial ``m`` of a transform of ``n`` slots is ``m(w**(5**j))`` for
``w = exp(2 pi i / 4n)``: the slots are ``z = U v`` with ``U[j, i] = w**(5**j * i)`` (``j, i < n``)
and ``v_i = m_i + i m_(i+n)`` (the low and high halves of the coefficients as one complex
vector). HEAAN's special FFT computes ``U = F_n ... F_4 F_2 BR`` (``BR`` the bit-reversal
permutation, ``F_L`` a radix-2 butterfly layer on blocks of ``L`` slots with twiddles
``exp(2 pi i (5**u mod 4L) / 4L)``) and ``U^-1 = BR L_2 ... L_n / n`` (``L_L`` the inverse
layers). Bootstrapping drops the bit reversal: CoeffToSlot computes ``BR U^-1`` (the
coefficients in bit-reversed order -- EvalMod works slot by slot, so the order does not
matter) and SlotToCoeff ``U BR``, each with ``log2 n`` layers.

Stages (OpenFHE's ``EvalBootstrapSetup(levelBudget, dim1)``; the rule of
:func:`select_layers`): a transform with a level budget ``b`` multiplies ``ceil``-grouped runs
of consecutive layers, one matrix and one level per stage. A stage of ``t`` layers whose
smallest butterfly half-distance is ``stride`` has ``2^(t+1) - 1`` diagonals, at offsets
``k * stride`` for ``|k| < 2^t``. CoeffToSlot runs its stages from the largest stride down
(a remainder stage of fewer layers last, at stride 1), SlotToCoeff from stride 1 up (the
remainder last) -- the order and strides of :func:`cryptoffload.workloads.bsgs.bootstrap_stages`.

Sparse slots (``n < N/2``): the ciphertext's ``N/2`` slots hold the ``n`` values repeated. The
stages then act on vectors of *width* ``W = 2n``: CoeffToSlot's last stage multiplies the
second copy by ``-i`` (so that ``w + conj(w)`` holds the real parts in the first ``n`` slots and
the imaginary parts in the other ``n``: one EvalMod for both), SlotToCoeff's last multiplies it
by ``i`` before the halves are added. With full slots ``W = n`` and the real and imaginary
parts go to two ciphertexts (conjugation). Diagonals are length-``W`` vectors:
``diag[k][p] = M[p, (p + k) mod W]``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from cryptoffload.crypto.ckks.errors import CkksError

__all__ = ["COEFF_TO_SLOT", "SLOT_TO_COEFF", "Diagonals", "Stage", "apply", "bit_reverse_indices",
           "default_baby", "dense", "layer", "select_layers", "slot_matrix", "stage_baby", "stages", "transform"]

COEFF_TO_SLOT = "CoeffToSlot"
SLOT_TO_COEFF = "SlotToCoeff"

#: offset (mod the width) -> the diagonal, a complex vector of the width
Diagonals = dict[int, np.ndarray]


def select_layers(log_slots: int, budget: int) -> tuple[int, int, int]:
    """``(layers per stage, full stages, layers of a last partial stage)`` so that ``log_slots``
    layers take exactly ``min(budget, log_slots)`` stages: OpenFHE's ``SelectLayers``
    (``ckksrns-utils.cpp``), as few layers per stage as keeps the count at the budget.
    (:func:`cryptoffload.workloads.bsgs.select_layers`, the model's, calls this one.)"""
    if budget < 1 or log_slots < 1:
        raise CkksError(f"a transform of 2^{log_slots} slots in {budget} levels: both must be at least 1")
    budget = min(budget, log_slots)
    layers = math.ceil(log_slots / budget)
    rows, rem = divmod(log_slots, layers)
    if rows + (rem != 0) < budget and layers > 1:
        layers -= 1
        rows, rem = divmod(log_slots, layers)
        while rows + (rem != 0) > budget:
            rows -= 1
            rem = log_slots - rows * layers
    return layers, rows, rem


def default_baby(layers: int) -> int:
    """OpenFHE's baby-step count for a stage of ``layers`` layers (``dim1 = 0``):
    ``2^(layers // 2 + 1)``, doubled when the stage has more than 7 diagonals."""
    diagonals = (1 << (layers + 1)) - 1
    return 1 << (layers // 2 + 1 + (1 if diagonals > 7 else 0))


def stage_baby(dim1: int, diagonals: int, layers: int) -> int:
    """The baby-step count of a stage: ``dim1`` where it is a power of two up to the diagonal
    count, else OpenFHE's default; never more than the diagonals."""
    if 0 < dim1 <= diagonals:
        return dim1
    return min(default_baby(layers), diagonals)


def bit_reverse_indices(n: int) -> np.ndarray:
    bits = max(0, n.bit_length() - 1)
    idx = np.arange(n)
    out = np.zeros(n, dtype=np.int64)
    for b in range(bits):
        out |= ((idx >> b) & 1) << (bits - 1 - b)
    return out


def _twiddles(length: int, inverse: bool) -> np.ndarray:
    """``exp(+-2 pi i (5**u mod 4L) / 4L)`` for ``u < L/2``: HEAAN's twiddles of a layer on
    blocks of ``length`` slots (the conjugates for the inverse layers)."""
    quad = 4 * length
    g = np.array([pow(5, u, quad) for u in range(length // 2)], dtype=np.float64)
    return np.exp((-1.0 if inverse else 1.0) * 2j * np.pi * g / quad)


def layer(width: int, length: int, inverse: bool) -> Diagonals:
    """The butterfly layer on blocks of ``length`` slots over a vector of ``width`` slots, as its
    three diagonals (offsets 0, +h, -h with h = length/2). Forward (SlotToCoeff's):
    ``(x_u, x_(u+h)) -> (x_u + w_u x_(u+h), x_u - w_u x_(u+h))``; inverse (CoeffToSlot's):
    ``-> (x_u + x_(u+h), (x_u - x_(u+h)) conj(w_u))``, without HEAAN's final ``1/n``."""
    h = length // 2
    pos = np.arange(width)
    u = pos % length
    low = u < h
    w = _twiddles(length, inverse)[np.where(low, u, u - h)]
    d0 = np.where(low, 1.0 + 0j, -w)
    if inverse:
        up = np.where(low, 1.0 + 0j, 0j)
        down = np.where(low, 0j, w)
    else:
        up = np.where(low, w, 0j)
        down = np.where(low, 0j, 1.0 + 0j)
    out: Diagonals = {0: d0}
    for k, d in ((h % width, up), ((-h) % width, down)):   # one diagonal when h = W/2 (h = -h mod W)
        out[k] = out[k] + d if k in out else d
    return out


def multiply(a: Diagonals, b: Diagonals, width: int) -> Diagonals:
    """``A @ B`` in diagonal form: ``C_(x+y)[p] += A_x[p] B_y[p + x]``."""
    out: Diagonals = {}
    for x, da in a.items():
        for y, db in b.items():
            k = (x + y) % width
            term = da * np.roll(db, -x)
            out[k] = out[k] + term if k in out else term
    return {k: v for k, v in out.items() if np.any(v != 0)}


def dense(diagonals: Diagonals, width: int) -> np.ndarray:
    """The ``width x width`` matrix of ``diagonals`` (for tests and small checks)."""
    m = np.zeros((width, width), dtype=np.complex128)
    rows = np.arange(width)
    for k, d in diagonals.items():
        m[rows, (rows + k) % width] += d
    return m


def apply(diagonals: Diagonals, x: np.ndarray) -> np.ndarray:
    """``M x`` from the diagonals: ``sum_k diag_k * rot(x, k)`` -- exactly what the homomorphic
    evaluation computes with rotations and plaintext products."""
    out = np.zeros(x.shape, dtype=np.complex128)
    for k, d in diagonals.items():
        out += d * np.roll(x, -k)
    return out


@dataclass(frozen=True)
class Stage:
    """One stage of a transform: ``layers`` butterfly layers of the given half-distances
    (smallest first) merged into one matrix, its diagonals at multiples of ``stride``, and its
    baby-step count ``baby``; ``diagonals`` before any scaling."""

    transform: str
    index: int
    layers: int
    stride: int
    baby: int
    width: int
    diagonals: Diagonals = field(repr=False, compare=False)

    @property
    def offsets(self) -> list[int]:
        """The diagonals' offsets in units of the stride, in ``(-W/2, W/2]``/stride, sorted."""
        half = self.width // 2
        return sorted(((k + half - 1) % self.width - half + 1) // self.stride for k in self.diagonals)

    @property
    def span(self) -> tuple[int, int]:
        """The smallest and largest offset (units of the stride): the BSGS grid's extent."""
        offs = self.offsets
        return offs[0], offs[-1]


def _stage_halves(transform: str, log_n: int, budget: int) -> list[list[int]]:
    """The butterfly half-distances (log2) of each stage, in the order the stages run, each
    listed in the order its layers are applied."""
    layers, rows, rem = select_layers(log_n, budget)
    if transform == COEFF_TO_SLOT:
        groups = [list(range(s * layers + rem, s * layers + rem + layers)) for s in range(rows - 1, -1, -1)]
        if rem:
            groups.append(list(range(rem)))
        return [sorted(g, reverse=True) for g in groups]     # inverse layers: largest first
    groups = [list(range(s * layers, s * layers + layers)) for s in range(rows)]
    if rem:
        groups.append(list(range(rows * layers, log_n)))
    return groups                                            # forward layers: smallest first


def stages(transform: str, n: int, budget: int, dim1: int = 0, *, sparse: bool = False) -> list[Stage]:
    """The stages of ``transform`` (:data:`COEFF_TO_SLOT` or :data:`SLOT_TO_COEFF`) for ``n``
    slots with a level budget of ``budget``: unscaled, over width ``2n`` when ``sparse`` (the
    half factors are the caller's, :mod:`.lintrans`). ``dim1`` sets the full stages' baby
    steps (0: OpenFHE's default; a remainder stage always takes the default)."""
    if n < 2 or n & (n - 1):
        raise CkksError(f"a transform needs a power-of-two slot count of at least 2, got {n}")
    log_n = n.bit_length() - 1
    width = 2 * n if sparse else n
    inverse = transform == COEFF_TO_SLOT
    layers_full = select_layers(log_n, budget)[0]
    out = []
    for index, halves in enumerate(_stage_halves(transform, log_n, budget)):
        diag: Diagonals = {0: np.ones(width, dtype=np.complex128)}
        for hl in halves:
            diag = multiply(layer(width, 2 << hl, inverse), diag, width)
        t = len(halves)
        count = min((1 << (t + 1)) - 1, width >> min(halves))
        baby = stage_baby(dim1, count, t) if t == layers_full else stage_baby(0, count, t)
        out.append(Stage(transform, index, t, 1 << min(halves), baby, width, diag))
    return out


def slot_matrix(n: int) -> np.ndarray:
    """``U`` with ``U[j, i] = w**(5**j i)``, ``w = exp(2 pi i / 4n)``, from numpy's DFT: column
    ``i`` of a size-``4n`` inverse DFT times ``4n``, read at the rows ``5**j mod 4n``. The
    independent reference the stages are checked against."""
    m = 4 * n
    rows = np.array([pow(5, j, m) for j in range(n)])
    eye = np.zeros((m, n), dtype=np.complex128)
    eye[np.arange(n), np.arange(n)] = 1.0
    return (np.fft.ifft(eye, axis=0) * m)[rows]


def transform(stage_list: list[Stage], x: np.ndarray) -> np.ndarray:
    """The stages applied one after another to the slot vector ``x`` (plaintext)."""
    for st in stage_list:
        x = apply(st.diagonals, x)
    return x
