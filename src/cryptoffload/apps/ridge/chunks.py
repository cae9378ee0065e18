"""Exactly-once chunks: every chunk of a distributed run is counted once, and together they are
the records asked for.

Why: the driver folds chunk results as they arrive (a product of ciphertexts, a sum of
counts), and a fold cannot tell one chunk from another. A result delivered twice multiplied
its chunk into the aggregate twice (250 records in a run of 200, a different model, no
error); a lost or short one left records out just as silently. Dask re-runs a task whose
worker was lost, so a duplicate or a gap is a fault to survive, not only an attack.

So each chunk is planned with a run id (fresh per run), a chunk id and its record range
(:class:`ChunkSpan`); the worker returns the span with its result and the number of records
it actually processed. The :class:`ChunkLedger` of the run admits a result only if its spans
are this run's, planned, not seen before, and its record count is exactly theirs; at the end
every planned chunk must have been admitted and the folded count must equal the records
requested. Anything else is a :class:`ChunkAccountingError`, and no aggregate is returned.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Callable, Protocol, Sequence, TypeVar

from cryptoffload.errors import CryptoffloadError


class ChunkAccountingError(CryptoffloadError):
    """A chunk result was duplicated, unplanned, short, or missing: the run's totals would
    be wrong, so the run is refused."""


@dataclass(frozen=True)
class ChunkSpan:
    """One planned chunk: which run, which chunk, which records (``start .. start + size``)."""

    run_id: str
    chunk_id: int
    start: int
    size: int


class Counted(Protocol):
    """What the ledger reads from a result: the spans it covers and the records it holds."""

    @property
    def chunks(self) -> tuple[ChunkSpan, ...]: ...

    @property
    def records(self) -> int: ...


R = TypeVar("R", bound=Counted)


def plan_chunks(records: int, chunk: int) -> list[ChunkSpan]:
    """Spans of at most ``chunk`` records covering ``0 .. records``, under a fresh run id."""
    run_id = secrets.token_hex(8)
    return [ChunkSpan(run_id, i, start, min(chunk, records - start))
            for i, start in enumerate(range(0, records, chunk))]


class ChunkLedger:
    """The collector's accounts for one run of ``spans`` (module docstring)."""

    def __init__(self, spans: Sequence[ChunkSpan], records: int) -> None:
        ordered = sorted(spans, key=lambda s: s.start)
        ends = [s.start + s.size for s in ordered]
        if not ordered or ordered[0].start != 0 or ends[-1] != records or any(
                s.size < 1 or s.start != prev for s, prev in zip(ordered[1:], ends)) or ordered[0].size < 1 \
                or len({s.run_id for s in ordered}) != 1 or len({s.chunk_id for s in ordered}) != len(ordered):
            raise ValueError("chunk spans must tile 0..records in one run with distinct ids")  # a planning bug
        self.records = records
        self.run_id = ordered[0].run_id
        self._planned = {s.chunk_id: s for s in ordered}
        self._seen: set[int] = set()

    @property
    def admitted(self) -> int:
        """Chunks admitted so far."""
        return len(self._seen)

    def admit(self, result: Counted) -> None:
        """Refuse a result that is not exactly one or more planned, unseen chunks of this run
        with their records; otherwise mark its chunks seen."""
        spans, records = getattr(result, "chunks", None), getattr(result, "records", None)
        if not isinstance(spans, tuple) or not spans or not all(isinstance(s, ChunkSpan) for s in spans):
            raise ChunkAccountingError("a chunk result names no chunk of this run: refusing the run")
        ids = [s.chunk_id for s in spans]
        for s in spans:
            if s.run_id != self.run_id or self._planned.get(s.chunk_id) != s:
                raise ChunkAccountingError(f"chunk {s.chunk_id} (records {s.start}..{s.start + s.size}) was not "
                                           "planned in this run: refusing the run")
            if s.chunk_id in self._seen or ids.count(s.chunk_id) > 1:
                raise ChunkAccountingError(f"chunk {s.chunk_id} (records {s.start}..{s.start + s.size}) was "
                                           "delivered twice: refusing the run (its records would count twice)")
        want = sum(s.size for s in spans)
        if isinstance(records, bool) or not isinstance(records, int) or records != want:
            raise ChunkAccountingError(f"chunk {ids[0]} holds {records!r} records, not the {want} planned: "
                                       "refusing the run")
        self._seen.update(ids)

    def reducer(self, merge: Callable[[R, R], R]) -> Callable[[R, R], R]:
        """``merge`` behind :meth:`admit`: the fold for ``map_chunks(reduce=...)``, started
        from an empty result (``initial``) so that the first result is admitted too."""
        def fold(acc: R, result: R) -> R:
            self.admit(result)
            return merge(acc, result)
        return fold

    def finish(self, total: Counted) -> None:
        """Refuse a run with a planned chunk missing, or whose folded total is not the records
        requested."""
        missing = sorted(set(self._planned) - self._seen)
        if missing:
            s = self._planned[missing[0]]
            raise ChunkAccountingError(f"{len(missing)} of {len(self._planned)} chunks never arrived (first: chunk "
                                       f"{s.chunk_id}, records {s.start}..{s.start + s.size}): refusing the run")
        if total.records != self.records or sorted(s.chunk_id for s in total.chunks) != sorted(self._planned):
            raise ChunkAccountingError(f"the run folded {total.records} records in {len(total.chunks)} chunks; "
                                       f"{self.records} were requested: refusing the run")
