"""Per-record uploads at scale: encode, pack, encrypt and aggregate chunks of records on Dask
workers, the way Zhou and Hua's QAT offload paper (``papers.PAPERS["qat-paillier"]``) places an
aggregation proxy inside the providers' network.

Why this shape: a million records at 20 ciphertexts each is 20 million ciphertexts (5 GB at
n = 1024). Holding them is pointless and shipping them to one process is slow, so each worker
takes a chunk of records, encrypts every record separately (the paper's per-record workload:
each record is its own owner), multiplies the chunk's ciphertexts column by column in one C
call (:func:`~cryptoffload.crypto._native.core.column_products`, straight from the word
buffer the encryption wrote, never as Python integers), and returns only the chunk's
aggregate. The driver folds aggregates as they complete (a product mod n^2: associative and
commutative), so memory holds one chunk per worker. Wire bytes are counted as if every
record's ciphertexts were sent.

With ``engine="gpu"`` (or ``"gpu-twin"``, the same kernels on the CPU) a chunk is encrypted and
aggregated on the worker's GPU (:meth:`~cryptoffload.engines.gpu.GpuEngine.encrypt_aggregate`):
its ciphertexts never leave the device, only the chunk's aggregate comes back. Such tasks ask
Dask for a ``GPU`` resource, so they run only on workers that declare one (see
:mod:`cryptoffload.engines.dask`), and several GPUs or machines share one run.

Data: synthetic records are generated *on the worker* from ``(seed, record range)`` (fixed
blocks, so the records do not depend on the chunking), so no data crosses the cluster; the same function regenerates any chunk for an accuracy check.
Each worker also returns the float normal equations (X^T X, X^T y) of its chunk, so the
plaintext reference solution needs no second pass over the data.

Exactly once (:mod:`.chunks`): every task carries its run id, chunk id and record range, every
result names them back with the records it processed, and the fold admits a result only once
and only in full; a run missing a chunk, or whose total is not the records requested, is
refused. Dask re-runs the chunks of a worker that dies (and, with ``retries``, of one that
raised), so a lost worker changes nothing but the time.

What workers get: the upload *public* key (n and h_s as hex), the parameters, the seed and the
range -- never a private key or a mask (``tests/apps/ridge/test_bulk.py`` pickles the tasks of a
real run and looks for the factors). From these a worker makes its provider as every provider
is made, through the session (:meth:`~.session.RidgeSession.of_upload_key`, then
:meth:`~.session.RidgeSession.provider`), and so does the driver for the per-provider upload.
"""

from __future__ import annotations

import os
import resource
import time
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import gmpy2
import numpy as np

from cryptoffload.apps.ridge.chunks import ChunkAccountingError, ChunkLedger, ChunkSpan, plan_chunks
from cryptoffload.apps.ridge.phases import Phases
from cryptoffload.apps.ridge.protocol import Provider, RidgeParams
from cryptoffload.apps.ridge.session import RidgeSession
from cryptoffload.checks import JsonDict
from cryptoffload.crypto.paillier import PublicKey
from cryptoffload.errors import ConfigError

if TYPE_CHECKING:  # the runner is passed in; importing Dask here would cost every import of this module
    from cryptoffload.engines.dask import DaskRunner
from cryptoffload.workloads.ridge_data import DEFAULT_NOISE_CLIP, algorithm1_y_bound


BLOCK = 8_192
"""Records are generated in blocks of this many, each from its own seeded stream, so any range
of records can be made anywhere, whatever the chunking."""


def _block(seed: int, b: int, d: int, noise_clip: float) -> tuple[np.ndarray, np.ndarray]:
    beta = np.random.default_rng([seed, 0xBE7A]).uniform(-1.0, 1.0, d)
    rng = np.random.default_rng([seed, b])
    X = rng.uniform(-1.0, 1.0, (BLOCK, d))
    e = np.clip(rng.standard_normal(BLOCK), -noise_clip, noise_clip)
    bound = algorithm1_y_bound(d, noise_clip)
    return X, np.clip(X @ beta + e, -bound, bound)


def chunk_records(seed: int, start: int, size: int, d: int, noise_clip: float = DEFAULT_NOISE_CLIP
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Records ``start .. start + size`` of an Algorithm-1 data set (X uniform in [-1, 1),
    beta fixed by ``seed``, e ~ N(0, 1) clipped). The same records whatever the chunking, and
    computable on any worker. Not the stream of
    :func:`~cryptoffload.workloads.ridge_data.generate` (which is sequential); the same
    distribution."""
    if start < 0 or size < 0:
        raise ConfigError("record ranges must be non-negative")
    xs, ys = [], []
    pos, end = start, start + size
    while pos < end:
        b = pos // BLOCK
        X, y = _block(seed, b, d, noise_clip)
        lo, hi = pos - b * BLOCK, min(end - b * BLOCK, BLOCK)
        xs.append(X[lo:hi])
        ys.append(y[lo:hi])
        pos = b * BLOCK + hi
    if not xs:
        return np.empty((0, d)), np.empty(0)
    return np.concatenate(xs), np.concatenate(ys)


@dataclass(frozen=True)
class ChunkTask:
    """What a worker needs: the upload public key (as hex), the parameters, which chunk (its
    records ``start .. start + size``, and its ids in the run, :mod:`.chunks`)."""

    n_hex: str
    hs_hex: str
    params: dict
    seed: int
    start: int
    size: int
    backend: str = "auto"
    constant_time: bool = True
    engine: str = "cpu"
    chunk_id: int = 0
    run_id: str = ""

    @property
    def span(self) -> ChunkSpan:
        return ChunkSpan(self.run_id, self.chunk_id, self.start, self.size)


#: Engines a chunk can run on: the CPU (the ``backend`` option picks GMP/IFMA), or the GPU
#: kernels on a GPU or on their CPU twin (these ask Dask for a GPU resource, take the task's
#: ``constant_time`` table lookup, and refuse a ``backend`` other than ``auto``).
BULK_ENGINES = ("cpu", "gpu", "gpu-twin")
_GPU_DEVICE = {"gpu": "cuda", "gpu-twin": "cpu-twin"}


@dataclass(frozen=True)
class ChunkTiming:
    """One chunk's own times, kept through the fold: the spread of the per-ciphertext rate
    over a run's chunks is that run's run-to-run noise (the folded sums alone hide it)."""

    start: int
    ciphertexts: int
    encode_s: float
    encrypt_s: float
    aggregate_s: float


@dataclass
class ChunkResult:
    """A chunk's (or a fold of chunks') aggregate and accounting."""

    aggregate: list[int]
    records: int
    ciphertexts: int
    wire_bytes: int
    encode_s: float
    encrypt_s: float
    aggregate_s: float
    xtx: np.ndarray
    xty: np.ndarray
    peak_rss_bytes: int
    #: records each worker process (by pid) ran: which workers did the work, and their share
    records_by_worker: dict[int, int] = field(default_factory=dict)
    #: each chunk's times (a fold concatenates them; empty where no chunk was timed alone)
    per_chunk: list[ChunkTiming] = field(default_factory=list)
    #: the chunks folded into it (:mod:`.chunks`: each admitted once)
    chunks: tuple[ChunkSpan, ...] = ()


def _provider(task: ChunkTask) -> Provider:
    """The chunk's provider, made through the session of what the task carries (parameters and
    upload public key). Made per chunk -- a tenth of a millisecond -- while the fixed-base
    table, which takes longer to build than a small chunk takes to encrypt, is kept between
    chunks by the worker process's encryption service (one cache, within its memory cap)."""
    pk = PublicKey(int(task.n_hex, 16), int(task.hs_hex, 16))
    session = RidgeSession.of_upload_key(RidgeParams(**task.params), pk, backend=task.backend)
    return session.provider(constant_time=task.constant_time)


def encrypt_aggregate_chunk(task: ChunkTask) -> ChunkResult:
    """Encode, pack and encrypt every record of the chunk separately, then aggregate the
    chunk's ciphertexts column by column (top-level, so Dask pickles it by reference)."""
    prov = _provider(task)
    pk = prov.public_key
    X, y = chunk_records(task.seed, task.start, task.size, prov.params.d)
    phases = Phases()
    with phases("encode"):
        plaintexts = prov.packed_records(X, y)
    if task.engine in _GPU_DEVICE:
        agg = _gpu_encrypt_aggregate(task, prov, plaintexts, phases)
    else:
        agg = _cpu_encrypt_aggregate(task, prov, plaintexts, phases)
    count = len(plaintexts)
    timing = ChunkTiming(task.start, count, phases.get("encode"), phases.get("encrypt"), phases.get("aggregate"))
    return ChunkResult(agg, len(X), count, count * pk.ciphertext_bytes, timing.encode_s, timing.encrypt_s,
                       timing.aggregate_s, X.T @ X, X.T @ y, _peak_rss(), {os.getpid(): len(X)}, [timing],
                       (task.span,))


def _cpu_encrypt_aggregate(task: ChunkTask, prov: Provider, plaintexts: list[int], phases: Phases) -> list[int]:
    """The chunk's ciphertexts as one word buffer, multiplied column by column in one C call."""
    from cryptoffload.crypto import native

    pk = prov.public_key
    with phases("encrypt"):
        words = prov.encrypt_to_words(plaintexts)
    with phases("aggregate"):
        return native.column_products(words, task.size, prov.plaintexts, pk.nsquare)


def _gpu_encrypt_aggregate(task: ChunkTask, prov: Provider, plaintexts: list[int], phases: Phases) -> list[int]:
    """Encryption and aggregation are one pipeline on the device: both times are ``encrypt``."""
    from cryptoffload.engines.gpu import worker_engine

    with phases("encrypt"):
        eng = worker_engine(_GPU_DEVICE[task.engine], constant_time=task.constant_time)
        return eng.encrypt_aggregate(prov.public_key, plaintexts, task.size, prov.plaintexts)


def _peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _add_shares(a: dict[int, int], b: dict[int, int]) -> dict[int, int]:
    return {pid: a.get(pid, 0) + b.get(pid, 0) for pid in a.keys() | b.keys()}


def merge(n2: int, plaintexts: int | None = None) -> Callable[[ChunkResult, ChunkResult], ChunkResult]:
    """A reducer for :meth:`DaskRunner.map_chunks` folding chunk results mod ``n2``; with
    ``plaintexts``, a result from a worker must hold that many ciphertexts below n^2 (a Dask
    result is outside input to the driver)."""
    def fold(a: ChunkResult, b: ChunkResult) -> ChunkResult:
        if plaintexts is not None:
            _check_chunk(b, plaintexts, n2, a.xtx.shape)
        return ChunkResult([int(gmpy2.mpz(x) * y % n2) for x, y in zip(a.aggregate, b.aggregate)],
                           a.records + b.records, a.ciphertexts + b.ciphertexts, a.wire_bytes + b.wire_bytes,
                           a.encode_s + b.encode_s, a.encrypt_s + b.encrypt_s, a.aggregate_s + b.aggregate_s,
                           a.xtx + b.xtx, a.xty + b.xty, max(a.peak_rss_bytes, b.peak_rss_bytes),
                           _add_shares(a.records_by_worker, b.records_by_worker),
                           sorted(a.per_chunk + b.per_chunk, key=lambda t: t.start), a.chunks + b.chunks)
    return fold


def _check_chunk(result: ChunkResult, plaintexts: int, n2: int, shape: tuple[int, ...]) -> None:
    if not isinstance(result, ChunkResult) or len(result.aggregate) != plaintexts or any(
            isinstance(c, bool) or not isinstance(c, int) or not 0 < c < n2 for c in result.aggregate) \
            or np.shape(result.xtx) != shape or np.shape(result.xty) != shape[:1]:
        raise ChunkAccountingError("a chunk result is malformed (not the aggregate of this run's key and "
                                   "dimension): refusing the run")


def empty_result(plaintexts: int, d: int) -> ChunkResult:
    """The fold's starting point: no chunk, no record, the aggregate of nothing (ones)."""
    return ChunkResult([1] * plaintexts, 0, 0, 0, 0.0, 0.0, 0.0, np.zeros((d, d)), np.zeros(d), 0)


def chunk_tasks(upload_pk: PublicKey, params: RidgeParams, spans: list[ChunkSpan], seed: int, *,
                backend: str = "auto", constant_time: bool = True, engine: str = "cpu") -> list[ChunkTask]:
    """What is shipped to the workers for ``spans``: the public key as hex, never a key object
    (a private key must never reach a worker)."""
    n_hex, hs_hex, p = format(upload_pk.n, "x"), format(upload_pk.hs, "x"), asdict(params)
    return [ChunkTask(n_hex, hs_hex, p, seed, s.start, s.size, backend, constant_time, engine, s.chunk_id, s.run_id)
            for s in spans]


@dataclass
class BulkRun:
    """The folded aggregate plus wall time of the distributed stage. ``workers``: the workers
    that ran its chunks (not merely connected: a chunk count below the worker count leaves
    some idle, and dividing worker-seconds by them would claim a speed-up that did not
    happen); ``workers_available``: those connected."""

    result: ChunkResult
    wall_s: float
    chunks: int
    workers: int
    workers_available: int = 0

    @property
    def shares(self) -> list[int]:
        """Records per worker that ran, largest first."""
        return sorted(self.result.records_by_worker.values(), reverse=True)

    def summary(self) -> JsonDict:
        d = asdict(self.result)
        for k in ("aggregate", "xtx", "xty", "records_by_worker", "chunks"):
            d.pop(k)
        d.update(wall_s=self.wall_s, chunks=self.chunks, workers=self.workers,
                 workers_available=self.workers_available, records_per_worker=self.shares)
        return d


def run_bulk(runner: DaskRunner, upload_pk: PublicKey, params: RidgeParams, records: int, *, seed: int = 1,
             chunk: int = 20_000, backend: str = "auto", constant_time: bool = True,
             progress: bool | str = "encrypt + aggregate", engine: str = "cpu", retries: int = 2) -> BulkRun:
    """Per-record upload of ``records`` generated records over ``runner``'s Dask workers, on
    their CPUs or (``engine="gpu"``) on the GPUs of the workers that declare a GPU resource.
    Each chunk is folded exactly once (:mod:`.chunks`; a chunk that raised is re-run up to
    ``retries`` times, one whose worker died is re-run by Dask), and the folded records must
    be ``records``, else :class:`~.chunks.ChunkAccountingError`."""
    if records < 1 or chunk < 1:
        raise ConfigError("records and chunk must be positive")
    if engine not in BULK_ENGINES:
        raise ConfigError(f"unknown bulk engine {engine!r}; choose one of {', '.join(BULK_ENGINES)}")
    if engine in _GPU_DEVICE and backend != "auto":
        raise ConfigError(f"backend {backend!r} picks the CPU's modular arithmetic; the {engine} engine runs its own "
                          "kernels (leave the backend at auto)")
    params.check_records(records)
    spans = plan_chunks(records, split_chunk(records, chunk, runner.cores))
    tasks = chunk_tasks(upload_pk, params, spans, seed, backend=backend, constant_time=constant_time, engine=engine)
    ledger = ChunkLedger(spans, records)
    plaintexts = RidgeSession.of_upload_key(params, upload_pk, backend=backend).provider().plaintexts
    t0 = time.perf_counter()
    folded = runner.map_chunks(encrypt_aggregate_chunk, tasks, progress=progress, retries=retries,
                               reduce=ledger.reducer(merge(upload_pk.nsquare, plaintexts)),
                               initial=empty_result(plaintexts, params.d),
                               resources={"GPU": 1} if engine in _GPU_DEVICE else None)
    ledger.finish(folded)
    return BulkRun(folded, time.perf_counter() - t0, len(tasks), len(folded.records_by_worker), runner.workers)


def split_chunk(records: int, chunk: int, cores: int) -> int:
    """``chunk``, or less where the records would not fill every worker thread: 10,000
    records in chunks of 20,000 would be one task on one worker while the others idle."""
    return max(1, min(chunk, -(-records // max(cores, 1))))


@dataclass
class SumResult:
    """A chunk's encoded integer sums (the per-provider mode's pre-aggregation in the clear)."""

    values: np.ndarray
    records: int
    encode_s: float
    xtx: np.ndarray
    xty: np.ndarray
    records_by_worker: dict[int, int] = field(default_factory=dict)
    chunks: tuple[ChunkSpan, ...] = ()


def sum_chunk(task: ChunkTask) -> SumResult:
    """Encode a chunk and sum it in the clear (top-level for Dask)."""
    prov = _provider(task)
    X, y = chunk_records(task.seed, task.start, task.size, prov.params.d)
    phases = Phases()
    with phases("encode"):
        values = prov.encoded_sum(X, y)
    return SumResult(values, len(X), phases.get("encode"), X.T @ X, X.T @ y, {os.getpid(): len(X)}, (task.span,))


def _fold_sums(a: SumResult, b: SumResult) -> SumResult:
    if not isinstance(b, SumResult) or np.shape(b.values) != np.shape(a.values) or np.shape(b.xtx) != np.shape(a.xtx):
        raise ChunkAccountingError("a chunk result is malformed (not the sums of this run's dimension): refusing the run")
    return SumResult(a.values + b.values, a.records + b.records, a.encode_s + b.encode_s, a.xtx + b.xtx, a.xty + b.xty,
                     _add_shares(a.records_by_worker, b.records_by_worker), a.chunks + b.chunks)


def run_per_provider(runner: DaskRunner, upload_pk: PublicKey, params: RidgeParams, records: int, *, seed: int = 1,
                     chunk: int = 50_000, backend: str = "auto", constant_time: bool = True,
                     progress: bool | str = "encode + sum", retries: int = 2) -> tuple[BulkRun, list[int]]:
    """The same records as :func:`run_bulk`, but one provider sums them in the clear and
    encrypts one packed (A; b). Returns the accounting and that upload's ciphertexts. Chunks
    are folded exactly once, as in :func:`run_bulk`."""
    if records < 1 or chunk < 1:
        raise ConfigError("records and chunk must be positive")
    params.check_records(records)
    spans = plan_chunks(records, split_chunk(records, chunk, runner.cores))
    tasks = chunk_tasks(upload_pk, params, spans, seed, backend=backend, constant_time=constant_time)
    ledger = ChunkLedger(spans, records)
    d = params.d
    empty = SumResult(np.zeros(params.value_count, dtype=np.int64), 0, 0.0, np.zeros((d, d)), np.zeros(d))
    t0 = time.perf_counter()
    sums = runner.map_chunks(sum_chunk, tasks, progress=progress, retries=retries, reduce=ledger.reducer(_fold_sums),
                             initial=empty)
    ledger.finish(sums)
    prov = RidgeSession.of_upload_key(params, upload_pk, backend=backend).provider(constant_time=constant_time)
    phases = Phases()
    cts = prov.summed_upload(sums.values, records, phases).ciphertexts
    res = ChunkResult(list(cts), sums.records, len(cts), len(cts) * upload_pk.ciphertext_bytes, sums.encode_s,
                      phases.get("encrypt"), 0.0, sums.xtx, sums.xty, _peak_rss(), sums.records_by_worker,
                      chunks=sums.chunks)
    return BulkRun(res, time.perf_counter() - t0, len(tasks), len(sums.records_by_worker), runner.workers), list(cts)
