"""One CoeffToSlot/SlotToCoeff stage on ciphertexts: a sparse matrix-vector product by baby
steps and giant steps, one rescale.

A stage's diagonals (:mod:`.dft`) sit at offsets ``d * stride`` for ``d`` in ``[lo, hi]``. With
``g`` baby steps, ``d - lo = g i + j`` puts diagonal ``d`` in giant step ``i`` and baby step ``j``,
and the rotations are split between the two:

    baby  r_j = stride (j - o)                 o = (-lo) mod g   (so r_o = 0)
    giant G_i = stride (g i + lo + o)          (a multiple of g * stride; one is 0)

``r_j + G_i = d * stride``. So ``g - 1`` hoisted baby rotations of the input (one
``rotate_many``), each giant step's inner sum of plaintext products, ``b - 1`` giant rotations
(``b = ceil((hi - lo + 1) / g)``) and the sum: the op counts of
:func:`cryptoffload.workloads.bsgs.bootstrap_stages` (``g - 1``, ``b - 1``, one product per
diagonal, one rescale). Centring the baby steps on 0 is OpenFHE's choice (its ``rot_in``
start at ``-offset``); putting the rest of the offset into the giant steps keeps the zero
baby step, which OpenFHE loses when ``g`` is below half the diagonals.

The product is the BSGS kernel's (:mod:`cryptoffload.crypto.ckks.bsgs`) in its phases: the
plaintexts are the diagonals pre-rotated by their giant step
(:func:`~cryptoffload.crypto.ckks.bsgs.prerotate`); every giant step's inner sum
(``baby_giant_sums``, a batched op of the interface: as single ops, one hoisted ``rotate_many``
and the plaintext products -- :func:`~cryptoffload.crypto.ckks.bsgs.giant_sums`' first phase --
and on the RNS backends the same sums with one ModDown each, double hoisting); the giant
rotations; the sum; one rescale for the whole stage (one level, as in OpenFHE). For a Dask split
of a stage, :func:`apply` takes a share of the giant steps (``giants``) and leaves the partial
sum unrescaled (``rescale=False``); the shares add up to the whole before the rescale.

Constants and half factors are the caller's: :func:`encode` multiplies every diagonal by
``factor`` (a number, or a vector of the stage's width: a row scaling such as the sparse
transforms' ``-i`` on the second half), encodes it at a chosen level and scale, repeated to
fill the ciphertext's slots.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

import numpy as np

from cryptoffload.crypto.ckks.bootstrap.dft import Stage
from cryptoffload.crypto.ckks.bsgs import prerotate

if TYPE_CHECKING:
    from cryptoffload.crypto.ckks.backend import Ciphertext, CkksBackend, Plaintext

__all__ = ["EncodedStage", "Grid", "apply", "encode", "grid"]


def _reduced(step: int, width: int) -> int:
    """A rotation step of a width-periodic vector, in ``(-W/2, W/2]``."""
    s = step % width
    return s - width if s > width // 2 else s


@dataclass(frozen=True)
class Grid:
    """The BSGS grid of a stage: baby and giant rotation steps (slots, reduced to the stage's
    width), and for each (giant ``i``, baby ``j``) cell the diagonal's offset (``None``: none)."""

    baby: tuple[int, ...]
    giant: tuple[int, ...]
    cells: tuple[tuple[int | None, ...], ...]

    @property
    def rotation_steps(self) -> set[int]:
        """Steps with a key: the non-zero baby and giant rotations of the cells in use."""
        used_j = {j for row in self.cells for j, k in enumerate(row) if k is not None}
        used_i = [i for i, row in enumerate(self.cells) if any(k is not None for k in row)]
        return {self.baby[j] for j in used_j if self.baby[j]} | {self.giant[i] for i in used_i if self.giant[i]}

    def op_counts(self) -> dict[str, int]:
        """Ops of one evaluation (the names of ``BsgsShape.op_counts``)."""
        used_j = {j for row in self.cells for j, k in enumerate(row) if k is not None}
        used_i = [i for i, row in enumerate(self.cells) if any(k is not None for k in row)]
        diagonals = sum(k is not None for row in self.cells for k in row)
        return {"baby_rotations": sum(1 for j in used_j if self.baby[j]),
                "giant_rotations": sum(1 for i in used_i if self.giant[i]),
                "pmul": diagonals, "add": diagonals - 1, "rescale": 1}


def grid(stage: Stage) -> Grid:
    """The BSGS grid of ``stage`` (see the module docstring)."""
    lo, hi = stage.span
    g = max(1, min(stage.baby, hi - lo + 1))
    o = (-lo) % g
    b = -(-(hi - lo + 1) // g)
    w, s = stage.width, stage.stride
    by_offset = {((k + w // 2 - 1) % w - w // 2 + 1) // s: k for k in stage.diagonals}
    cells = tuple(tuple(by_offset.get(lo + g * i + j) for j in range(g)) for i in range(b))
    baby = tuple(_reduced(s * (j - o), w) for j in range(g))
    giant = tuple(_reduced(s * (g * i + lo + o), w) for i in range(b))
    return Grid(baby, giant, cells)


@dataclass
class EncodedStage:
    """A stage ready to run: its grid, the plaintext of every cell (``None`` where no
    diagonal), the level it runs at (its output is one lower)."""

    grid: Grid
    level: int
    plaintexts: list[list[Plaintext | None]] = field(repr=False)

    @property
    def baby(self) -> tuple[int, ...]:
        return self.grid.baby

    @property
    def giant(self) -> tuple[int, ...]:
        return self.grid.giant


def encode(ev: CkksBackend, stage: Stage, *, level: int, scale: float,
           factor: complex | np.ndarray = 1.0) -> EncodedStage:
    """Every diagonal of ``stage`` times ``factor``, pre-rotated by its giant step, repeated to
    the ciphertext's slots and encoded (complex) at ``level`` and ``scale``."""
    gr = grid(stage)
    reps = ev.slots // stage.width
    table: list[list[Plaintext | None]] = []
    for i, row in enumerate(gr.cells):
        out_row: list[Plaintext | None] = []
        for k in row:
            if k is None:
                out_row.append(None)
                continue
            vec = prerotate(stage.diagonals[k] * factor, gr.giant[i])
            out_row.append(ev.encode_for_rotations(np.tile(vec, reps), level=level, scale=scale))
        table.append(out_row)
    return EncodedStage(gr, level, table)


def apply(ev: CkksBackend, ct: Ciphertext, enc: EncodedStage, giants: Sequence[int] | None = None, *,
          rescale: bool = True) -> Ciphertext:
    """The stage on ``ct`` (at the stage's level): every giant step's inner sum of its cells'
    plaintext products with the baby rotations (``baby_giant_sums``: one hoisted ``rotate_many``
    and the products -- or, on the RNS backends, one decomposition and one ModDown per giant
    step), each rotated by its giant step, summed, one rescale (``rescale=False``: the unrescaled
    sum, for a caller that adds partial sums first). ``giants``: a share of the giant steps."""
    gr = enc.grid
    order = [i for i in (range(len(gr.giant)) if giants is None else giants)
             if any(pt is not None for pt in enc.plaintexts[i])]
    if not order:
        raise ValueError("a stage without diagonals")
    sums = ev.baby_giant_sums(ct, list(gr.baby), [enc.plaintexts[i] for i in order])
    out = ev.add_many(ev.rotate_each(sums, [gr.giant[i] for i in order]))
    return ev.rescale(out) if rescale else out
