"""Batched ops of the CKKS interface, with their meaning written once as loops of single ops.

Why: an algorithm that says "these inner sums, then rescale them all, then rotate each" exposes
work that a GPU does in one launch per step for the whole batch (the RNS-CKKS GPU backend
overrides every method here), while every other evaluator -- SEAL, the emulator, the recording
backend, the op-DAG and Dask evaluators of the multi-device study, plain slot vectors -- runs
the loops below and sees exactly the single ops, in this order, that the algorithm would have
issued one by one. So traces, op counts and DAGs are unchanged by batching, and an evaluator
needs only ``mul_plain``, ``add``, ``rescale`` and ``rotate`` to run a batched algorithm.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Generic, Sequence, TypeVar

import numpy as np
from numpy.typing import ArrayLike

#: what the evaluator's ciphertexts and plaintexts are (a backend's handles, slot vectors, DAG nodes)
Ct = TypeVar("Ct")
Pt = TypeVar("Pt")


class BatchedOps(Generic[Ct, Pt]):
    """Mixin: the batched ops as loops over the single ops of the class it is mixed into."""

    if TYPE_CHECKING:
        # The single ops the batched ones are written with, which the class this is mixed into
        # has: declared for the type checker only (at run time they would shadow the real ones
        # of a class that lists this mixin before the class defining them).
        def mul_plain(self, ct: Ct, pt: Pt, /) -> Ct: ...

        def add(self, a: Ct, b: Ct, /) -> Ct: ...

        def mul(self, a: Ct, b: Ct, /) -> Ct: ...

        def relinearize(self, ct: Ct, /) -> Ct: ...

        def rescale(self, ct: Ct, /) -> Ct: ...

        def rotate(self, ct: Ct, steps: int, /) -> Ct: ...

        def rotate_many(self, ct: Ct, steps: Sequence[int], /) -> list[Ct]: ...

        def encode_at(self, value: float, like: Ct, name: str, /) -> Pt: ...

    def mul_plain_sum(self, terms: Sequence[tuple[Ct, Pt]]) -> Ct:
        """``sum_i ct_i * pt_i`` over ``terms`` (pairs of a ciphertext and a plaintext of its level;
        every product of one scale): ``mul_plain, mul_plain, add, mul_plain, add, ...``."""
        acc: Ct | None = None
        for ct, pt in terms:
            term = self.mul_plain(ct, pt)
            acc = term if acc is None else self.add(acc, term)
        if acc is None:
            raise ValueError("mul_plain_sum: no terms")
        return acc

    def mul_plain_sums(self, groups: Sequence[Sequence[tuple[Ct, Pt]]]) -> list[Ct]:
        """:meth:`mul_plain_sum` of each group."""
        return [self.mul_plain_sum(g) for g in groups]

    def relinearize_many(self, cts: Sequence[Ct]) -> list[Ct]:
        return [self.relinearize(c) for c in cts]

    def squares(self, cts: Sequence[Ct]) -> list[Ct]:
        """The square activation of each ciphertext: ``rescale(relinearize(mul(x, x)))``, one
        ciphertext after another (so at most one size-3 product is alive at a time)."""
        return [self.rescale(self.relinearize(self.mul(c, c))) for c in cts]

    def rescale_many(self, cts: Sequence[Ct]) -> list[Ct]:
        return [self.rescale(c) for c in cts]

    def rotate_each(self, cts: Sequence[Ct], steps: Sequence[int]) -> list[Ct]:
        """Ciphertext ``i`` rotated by ``steps[i]`` (a step of 0 leaves it as it is)."""
        return [self.rotate(c, s) if s else c for c, s in zip(cts, steps)]

    def mul_scalar_sums(self, cts: Sequence[Ct], weights: ArrayLike, name: str = "w") -> list[Ct | None]:
        """A dense layer of scalar weights: ``[sum_p weights[r, p] * cts[p] for r]``, each weight
        a constant plaintext at its ciphertext's level and the default scale (labelled
        ``name.w[r,p]``: ``encode_at``), zero weights skipped, ``None`` for a row of zeros.
        What CryptoNets' per-pixel batching does in its dense layers (``apps/he_cnn/batching.py``)."""
        out: list[Ct | None] = []
        for r, row in enumerate(np.asarray(weights, dtype=np.float64)):
            acc: Ct | None = None
            for p, w in enumerate(row):
                if w == 0.0:
                    continue
                pt = self.encode_at(float(w), cts[p], f"{name}.w[{r},{p}]")
                term = self.mul_plain(cts[p], pt)
                acc = term if acc is None else self.add(acc, term)
            out.append(acc)
        return out

    def baby_giant_sums(self, ct: Ct, steps: Sequence[int], rows: Sequence[Sequence[Pt | None]]) -> list[Ct]:
        """For each row of plaintexts (``None``: no term), ``sum_j row[j] * rotate(ct, steps[j])``,
        unrescaled: a BSGS product's inner sums, one per giant step. As single ops: one hoisted
        ``rotate_many`` of the steps used (a step of 0 is ``ct``), then :meth:`mul_plain_sums`. A
        backend may keep the rotations in its extended basis and divide once per row (the RNS
        backends, with plaintexts from ``encode_for_rotations``)."""
        used = sorted({j for row in rows for j, pt in enumerate(row) if pt is not None})
        moving = [j for j in used if steps[j]]
        rotated = dict(zip(moving, self.rotate_many(ct, [steps[j] for j in moving])))
        rotated.update({j: ct for j in used if not steps[j]})
        return self.mul_plain_sums([[(rotated[j], pt) for j, pt in enumerate(row) if pt is not None] for row in rows])

    def add_many(self, cts: Sequence[Ct]) -> Ct:
        """``((c0 + c1) + c2) + ...``."""
        acc = cts[0]
        for c in cts[1:]:
            acc = self.add(acc, c)
        return acc


__all__ = ["BatchedOps"]
