"""The baby-step giant-step (BSGS) matrix-vector product, written once against the CKKS interface.

The diagonal method (Halevi-Shoup) with baby and giant steps, as SEAL and OpenFHE programs do::

    y = sum_j rot( sum_i pt[j][i] * rot(x, baby[i]), giant[j] ),   pt[j][i] = rot(d_(j,i), -giant[j])

Pre-rotating each diagonal by its giant step (:func:`prerotate`) is what lets the inner sum
use the few baby rotations of the input, shared by every giant step. Each inner sum is
rescaled *before* its giant rotation (rotating at the lower level is cheaper).

Why here and once: the HE-CNN layers (``apps/he_cnn/packing.py``), the Dask runs that split
one product over workers (``engines/bsgs_run.py``) and the op DAGs of the multi-device study
(``workloads/bsgs.py``) all evaluate this product. The study's DAG is made by running
:func:`giant_sums` on an evaluator that adds DAG nodes instead of computing, so a change to
the order of operations here changes what is run, traced and modelled alike. The functions
only call ``mul_plain``, ``add``, ``rescale``, ``rotate`` and ``rotate_many``, through the
batched ops of :class:`~cryptoffload.crypto.ckks.batched.BatchedOps` (any
:class:`~cryptoffload.crypto.ckks.backend.CkksBackend`, the recording backend included; other
evaluators mix ``BatchedOps`` in).
"""

from __future__ import annotations

from typing import Iterable, Mapping, Protocol, Sequence, TypeVar

import numpy as np

__all__ = ["BabyStepOps", "BsgsOps", "GiantStepOps", "baby_rotations", "bsgs_product", "giant_sums", "prerotate",
           "rotate_slots"]

#: what the evaluator's ciphertexts are: a backend's :class:`~.backend.Ciphertext`, a node id of
#: an op DAG, a plain slot vector
C = TypeVar("C")
#: what its plaintexts are (``None`` in a table of them: an all-zero diagonal, skipped)
P = TypeVar("P")
#: the plaintext type of the protocols below: only ever passed in, so an evaluator that takes
#: any plaintext fits where a narrower one is asked for
P_contra = TypeVar("P_contra", contravariant=True)


class BabyStepOps(Protocol[C]):
    """What :func:`baby_rotations` calls: every :class:`~.backend.CkksBackend` is one."""

    def rotate(self, ct: C, steps: int) -> C: ...

    def rotate_many(self, ct: C, steps: Sequence[int]) -> list[C]: ...


class GiantStepOps(Protocol[C, P_contra]):
    """What :func:`giant_sums` calls: the batched ops of
    :class:`~cryptoffload.crypto.ckks.batched.BatchedOps`, so every backend and every evaluator
    that mixes ``BatchedOps`` in (the op-DAG and Dask evaluators, plain slot vectors) is one."""

    def mul_plain_sums(self, groups: Sequence[Sequence[tuple[C, P_contra]]]) -> list[C]: ...

    def rescale_many(self, cts: Sequence[C]) -> list[C]: ...

    def rotate_each(self, cts: Sequence[C], steps: Sequence[int]) -> list[C]: ...

    def add_many(self, cts: Sequence[C]) -> C: ...


class BsgsOps(BabyStepOps[C], GiantStepOps[C, P_contra], Protocol[C, P_contra]):
    """What :func:`bsgs_product` calls: both of the above (a :class:`~.backend.CkksBackend`)."""


def rotate_slots(v: np.ndarray, k: int) -> np.ndarray:
    """Left rotation of a plain slot vector, as ``rotate`` does to ciphertext slots:
    ``rotate_slots(v, k)[s] == v[s + k]`` (negative ``k``: right)."""
    return np.roll(v, -int(k))


def prerotate(diagonal: np.ndarray, giant_step: int) -> np.ndarray:
    """The plaintext of a diagonal in giant step ``giant_step``: the diagonal rotated right by
    the giant step, so that rotating the inner sum left by it puts every term back in place."""
    return rotate_slots(diagonal, -giant_step)


def baby_rotations(ev: BabyStepOps[C], x: C, steps: Sequence[int], *, hoisted: bool = True) -> list[C]:
    """``[rot(x, s) for s in steps]`` (a step of 0 is ``x`` itself). ``hoisted``: one
    ``rotate_many`` (a backend that hoists shares the key-switch decomposition); otherwise one
    ``rotate`` after another."""
    moving = [s for s in steps if s]
    if hoisted and moving:
        done = dict(zip(moving, ev.rotate_many(x, moving)))
    else:
        done = {s: ev.rotate(x, s) for s in moving}
    return [done[s] if s else x for s in steps]


def giant_sums(ev: GiantStepOps[C, P], babies: Mapping[int, C] | Sequence[C],
               plaintexts: Mapping[int, Sequence[P | None]] | Sequence[Sequence[P | None]], giant: Sequence[int],
               giants: Iterable[int] | None = None, *, rescale: bool = True) -> C | None:
    """``sum_j rot(rescale(sum_i plaintexts[j][i] * babies[i]), giant[j])`` over the giant steps
    ``giants`` (default: all of ``giant``), in that order; ``None`` plaintexts (all-zero
    diagonals) are skipped, and a giant step without any is left out. ``babies[i]`` is the
    input rotated by baby step ``i`` (``babies[0]`` the input). Returns ``None`` when nothing
    was left; ``rescale=False`` leaves the sum unrescaled (one rescale of the result later).

    Written with the batched ops (:class:`~cryptoffload.crypto.ckks.batched.BatchedOps`): every
    giant step's inner sum, then every rescale, then every giant rotation, then the sum -- the
    giant steps are independent until the last sum, and a batching backend runs each phase for
    all of them at once; elsewhere the ops are the single ones, phase by phase."""
    order = [j for j in (range(len(giant)) if giants is None else giants)
             if any(pt is not None for pt in plaintexts[j])]
    if not order:
        return None
    sums = ev.mul_plain_sums([[(babies[i], pt) for i, pt in enumerate(plaintexts[j]) if pt is not None]
                              for j in order])
    if rescale:
        sums = ev.rescale_many(sums)
    return ev.add_many(ev.rotate_each(sums, [giant[j] for j in order]))


def bsgs_product(ev: BsgsOps[C, P], x: C, plaintexts: Sequence[Sequence[P | None]], baby: Sequence[int],
                 giant: Sequence[int]) -> C | None:
    """The whole product on one backend: the baby rotations the non-zero plaintexts use (one
    ``rotate_many``), then :func:`giant_sums`. ``plaintexts[j][i]`` belongs to baby step
    ``baby[i]`` and giant step ``giant[j]``; ``None`` where the diagonal is all zero."""
    used = sorted({i for row in plaintexts for i, pt in enumerate(row) if pt is not None and baby[i]})
    rotated = dict(zip(used, baby_rotations(ev, x, [baby[i] for i in used])))
    rotated.update({i: x for i, s in enumerate(baby) if not s})
    return giant_sums(ev, rotated, plaintexts, giant)
