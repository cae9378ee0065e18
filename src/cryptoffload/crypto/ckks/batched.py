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

from typing import Any, Sequence

import numpy as np


class BatchedOps:
    """Mixin: the batched ops as loops over the single ops of the class it is mixed into."""

    def mul_plain_sum(self, terms: Sequence[tuple[Any, Any]]) -> Any:
        """``sum_i ct_i * pt_i`` over ``terms`` (pairs of a ciphertext and a plaintext of its level;
        every product of one scale): ``mul_plain, mul_plain, add, mul_plain, add, ...``."""
        acc = None
        for ct, pt in terms:
            term = self.mul_plain(ct, pt)  # type: ignore[attr-defined]
            acc = term if acc is None else self.add(acc, term)  # type: ignore[attr-defined]
        if acc is None:
            raise ValueError("mul_plain_sum: no terms")
        return acc

    def mul_plain_sums(self, groups: Sequence[Sequence[tuple[Any, Any]]]) -> list[Any]:
        """:meth:`mul_plain_sum` of each group."""
        return [self.mul_plain_sum(g) for g in groups]

    def relinearize_many(self, cts: Sequence[Any]) -> list[Any]:
        return [self.relinearize(c) for c in cts]  # type: ignore[attr-defined]

    def squares(self, cts: Sequence[Any]) -> list[Any]:
        """The square activation of each ciphertext: ``rescale(relinearize(mul(x, x)))``, one
        ciphertext after another (so at most one size-3 product is alive at a time)."""
        return [self.rescale(self.relinearize(self.mul(c, c))) for c in cts]  # type: ignore[attr-defined]

    def rescale_many(self, cts: Sequence[Any]) -> list[Any]:
        return [self.rescale(c) for c in cts]  # type: ignore[attr-defined]

    def rotate_each(self, cts: Sequence[Any], steps: Sequence[int]) -> list[Any]:
        """Ciphertext ``i`` rotated by ``steps[i]`` (a step of 0 leaves it as it is)."""
        return [self.rotate(c, s) if s else c for c, s in zip(cts, steps)]  # type: ignore[attr-defined]

    def mul_scalar_sums(self, cts: Sequence[Any], weights: Any, name: str = "w") -> list[Any]:
        """A dense layer of scalar weights: ``[sum_p weights[r, p] * cts[p] for r]``, each weight
        a constant plaintext at its ciphertext's level and the default scale (labelled
        ``name.w[r,p]``), zero weights skipped, ``None`` for a row of zeros. What CryptoNets'
        per-pixel batching does in its dense layers (``apps/he_cnn/batching.py``)."""
        out = []
        for r, row in enumerate(np.asarray(weights, dtype=np.float64)):
            acc = None
            for p, w in enumerate(row):
                if w == 0.0:
                    continue
                pt = self.label(self.encode(float(w), level=self.level(cts[p])), f"{name}.w[{r},{p}]")  # type: ignore[attr-defined]
                term = self.mul_plain(cts[p], pt)  # type: ignore[attr-defined]
                acc = term if acc is None else self.add(acc, term)  # type: ignore[attr-defined]
            out.append(acc)
        return out

    def baby_giant_sums(self, ct: Any, steps: Sequence[int], rows: Sequence[Sequence[Any]]) -> list[Any]:
        """For each row of plaintexts (``None``: no term), ``sum_j row[j] * rotate(ct, steps[j])``,
        unrescaled: a BSGS product's inner sums, one per giant step. As single ops: one hoisted
        ``rotate_many`` of the steps used (a step of 0 is ``ct``), then :meth:`mul_plain_sums`. A
        backend may keep the rotations in its extended basis and divide once per row (the RNS
        backends, with plaintexts from ``encode_for_rotations``)."""
        used = sorted({j for row in rows for j, pt in enumerate(row) if pt is not None})
        moving = [j for j in used if steps[j]]
        rotated = dict(zip(moving, self.rotate_many(ct, [steps[j] for j in moving])))  # type: ignore[attr-defined]
        rotated.update({j: ct for j in used if not steps[j]})
        return self.mul_plain_sums([[(rotated[j], pt) for j, pt in enumerate(row) if pt is not None] for row in rows])

    def add_many(self, cts: Sequence[Any]) -> Any:
        """``((c0 + c1) + c2) + ...``."""
        acc = cts[0]
        for c in cts[1:]:
            acc = self.add(acc, c)  # type: ignore[attr-defined]
        return acc


__all__ = ["BatchedOps"]
