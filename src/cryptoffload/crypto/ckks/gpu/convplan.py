"""Many base conversions described once, run in one launch: the jobs of a ModUp over every digit
of a batch, a ModDown's ``P`` rows, or a rescale's dropped rows.

A :class:`ConvJob` says which consecutive rows of a buffer are converted (their primes), and to
which primes and rows of the output; a :class:`ConvPlan` flattens a list of jobs into the tables
``conv_jobs_k`` reads (constants of repeated (source, destination) pairs stored once). Plans are
pure host data, deterministic in their jobs, so a scheme caches one per shape and the device
copies are made once (never while a CUDA graph is being captured).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

import numpy as np

if TYPE_CHECKING:
    from cryptoffload.crypto.ckks.gpu.ring import RnsRing

JOB_FIELDS = 8   # kernels.cu's JOB_FIELDS


@dataclass(frozen=True)
class ConvJob:
    """Rows ``x_row .. x_row + len(src) - 1`` of the (flattened) input, of primes ``src``, to rows
    ``out_row + drow[d]`` of the output, of primes ``dst[d]``; ``exact``: the centred value
    (no overflow; Halevi, Polyakov and Shoup)."""

    x_row: int
    src: tuple[int, ...]
    out_row: int
    drow: tuple[int, ...]
    dst: tuple[int, ...]
    exact: bool = True


@dataclass
class ConvPlan:
    """The flattened tables of ``jobs`` (see the module docstring)."""

    jobs_list: tuple[ConvJob, ...]
    n: int
    jobs: np.ndarray = field(init=False)
    tables: tuple[np.ndarray, ...] = field(init=False)

    @classmethod
    def build(cls, ring: RnsRing, jobs: Sequence[ConvJob]) -> "ConvPlan":
        plan = cls(tuple(jobs), ring.n)
        plan._flatten(ring)
        return plan

    @property
    def key(self) -> tuple[str, tuple[ConvJob, ...]]:
        return ("convplan", self.jobs_list)

    @property
    def max_src(self) -> int:
        return max(len(j.src) for j in self.jobs_list)

    def _flatten(self, ring: RnsRing) -> None:
        sprime: list[int] = []
        yinv: list[int] = []
        yinv_sh: list[int] = []
        dprime: list[int] = []
        drow: list[int] = []
        mat: list[int] = []
        qmod: list[int] = []
        src_at: dict[tuple[int, ...], int] = {}
        pair_at: dict[tuple[tuple[int, ...], tuple[int, ...]], int] = {}
        rows = []
        for job in self.jobs_list:
            y, y_sh, m, qm = ring.conversion(job.src, job.dst)
            if job.src not in src_at:
                src_at[job.src] = len(sprime)
                sprime += job.src
                yinv += y.tolist()
                yinv_sh += y_sh.tolist()
            if (job.src, job.dst) not in pair_at:
                pair_at[(job.src, job.dst)] = len(mat)
                mat += m.ravel().tolist()
            dst_off = len(dprime)
            dprime += job.dst
            drow += job.drow
            qmod += qm.tolist()
            rows.append([job.x_row * self.n, len(job.src), src_at[job.src], len(job.dst), dst_off,
                         pair_at[(job.src, job.dst)], job.out_row * self.n, int(job.exact)])
        self.jobs = np.array(rows, dtype=np.int64).reshape(-1, JOB_FIELDS)
        i64 = lambda v: np.array(v, dtype=np.int64)  # noqa: E731
        u64 = lambda v: np.array(v, dtype=np.uint64)  # noqa: E731
        self.tables = (i64(sprime), u64(yinv), u64(yinv_sh), i64(dprime), i64(drow), u64(mat), u64(qmod))
