"""GPU engine: Paillier and modexp jobs on a CUDA GPU, or on the GPU kernels' CPU twin.

Why the same engine shape as the CPU engines: the client modes, rings, batching and statistics
are the same for every device (``engines/base.py``); what a GPU changes is that it wants
thousands of independent instances per launch, which the batch path and a deep in-flight
window give it. So :class:`GpuEngine` is a :class:`~cryptoffload.engines.base.BatchEngine`
whose ``workers`` dispatcher threads each own one stream: a dispatcher encodes its batch
(integers to limbs), uploads it through its stream's pinned buffers and launches, then waits
for its stream -- while it waits (GIL released), another dispatcher encodes the next batch,
so host encoding, transfers and kernels overlap. Jobs are grouped by key or modulus
(``engines.compute.compute_batch``), one kernel launch per group.

Bulk paths that never materialise per-job futures (millions of ciphertexts):
:meth:`GpuEngine.encrypt_aggregate` (encrypt a records x plaintexts matrix and return its
column products: the ridge upload) and :meth:`GpuEngine.aggregate` (column products of given
ciphertexts), each pipelined over two streams: batch b+1 is encoded and uploaded while batch b
computes, and the ciphertexts stay on the device.

``device="cuda"`` needs CuPy and a GPU; ``device="cpu-twin"`` runs the very same kernels and
algorithms on the CPU (registered as the ``gpu-twin`` engine), which is how CI exercises this
engine end to end. Without CuPy or a GPU, construction raises
:class:`~cryptoffload.errors.BackendUnavailable` with a one-line reason.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from cryptoffload import cuda
from cryptoffload.crypto.native import gpu_runtime as gr
from cryptoffload.crypto.paillier.service import MAX_CACHED_ENCRYPTORS
from cryptoffload.crypto.paillier_gpu import GpuPaillier, Modulus, check_range, from_limbs, random_exponents, to_limbs
from cryptoffload.engines.base import BatchEngine, Outcome, Request
from cryptoffload.engines.compute import compute_batch
from cryptoffload.errors import BackendUnavailable, ConfigError
from cryptoffload.lru import LruCache

if TYPE_CHECKING:
    from cryptoffload.crypto.paillier.keys import PublicKey

#: Ciphertexts per pipelined bulk batch (two batches in flight): 256 MiB of ciphertexts at
#: n = 1024 per batch, enough to fill a large GPU, small enough to overlap.
BULK_BATCH = 1 << 20
MAX_GPU_MODULUS_BITS = 32 * gr.WIDTHS[-1]
#: device contexts (a key's fixed-base table in GPU memory) one engine keeps: as many as the
#: CPU's encryption service keeps tables (clients bring keys; each costs device memory)
MAX_DEVICE_KEYS = MAX_CACHED_ENCRYPTORS
#: Montgomery moduli one engine keeps on its device
MAX_MODULI = 64


def gpu_reason(device: str = "cuda") -> str | None:
    """The engine table's probe: None when ``device`` ("cuda" or "cpu-twin") can run the GPU
    kernels here -- for "cuda", a GPU on which NVRTC built and loaded the smallest kernel
    (:func:`~cryptoffload.crypto._native.gpu_cuda.cuda_reason`) -- else a one-line reason."""
    return gr.device_reason(device)


def twin_reason() -> str | None:
    """None when the CPU twin of the GPU kernels is built, else why not."""
    return gpu_reason("cpu-twin")


class _BoundKey:
    """A key's GPU context seen through one stream, shaped like the CPU ``Encryptor`` (what
    ``compute_batch`` calls)."""

    def __init__(self, key: GpuPaillier, stream: gr.Stream) -> None:
        self.public_key = key.public_key
        self._key, self._stream = key, stream

    def encrypt_raw(self, messages: Sequence[int], exponents: Sequence[int] | None = None) -> list[int]:
        return self._key.encrypt_raw(messages, exponents, self._stream)


class _StreamKeys:
    def __init__(self, engine: "GpuEngine", stream: gr.Stream) -> None:
        self._engine, self._stream = engine, stream

    def get(self, n: int, hs: int) -> _BoundKey:
        from cryptoffload.crypto.paillier import PublicKey

        return _BoundKey(self._engine.key(PublicKey(n, hs)), self._stream)


class GpuEngine(BatchEngine):
    """Jobs on a GPU (``device="cuda"``, GPU ``device_index``) or the CPU twin
    (``device="cpu-twin"``). ``workers``: dispatcher threads, one stream each. ``constant_time``
    and ``window``: the encryption table's lookup (default constant time, as on the CPU).
    ``max_batch`` jobs per launch. Other options as :class:`BatchEngine`."""

    def __init__(self, workers: int = 2, *, device: str = "cuda", device_index: int = 0, constant_time: bool = True,
                 window: int | None = None, max_batch: int = 65536, ring_capacity: int = 1 << 18,
                 in_order: bool = False, block_when_full: bool = True) -> None:
        reason = gpu_reason(device)
        if reason is not None:
            raise BackendUnavailable(f"GpuEngine ({device}) unavailable: {reason}")
        self.name = "gpu" if device == "cuda" else "gpu-twin"
        super().__init__(workers=workers, max_batch=max_batch, ring_capacity=ring_capacity,
                         in_order=in_order, block_when_full=block_when_full)
        self.device = device
        self.runtime = gr.get_runtime(device, device_index)
        self.constant_time = constant_time
        self.window = window
        self._streams = [self.runtime.stream() for _ in range(workers)]
        self._keys: LruCache[tuple[int, int], GpuPaillier] = LruCache(MAX_DEVICE_KEYS)
        self._moduli: LruCache[int, Modulus] = LruCache(MAX_MODULI)
        self._start_dispatchers()

    def describe(self) -> str:
        return f"{self.name}: {self.runtime.describe()}; {self.workers} stream(s), max batch {self.max_batch}"

    # -- device contexts -----------------------------------------------------------------------
    def key(self, public_key: PublicKey) -> GpuPaillier:
        """The device context (fixed-base table) of ``public_key``, built once per engine and
        kept among the :data:`MAX_DEVICE_KEYS` most recently used (a batch that holds one keeps
        it alive past its eviction)."""
        return self._keys.get_or_make((public_key.n, public_key.hs), lambda: GpuPaillier(
            public_key, self.runtime, constant_time=self.constant_time, window=self.window))

    def modulus(self, m: int) -> Modulus:
        """The device's Montgomery context of ``m``, kept among the :data:`MAX_MODULI` most
        recently used."""
        return self._moduli.get_or_make(m, lambda: Modulus(self.runtime, m))

    def powm(self, bases: Sequence[int], exps: Sequence[int], modulus: int, exp_bits: int | None = None,
             stream: gr.Stream | None = None) -> list[int]:
        """``b_i^e_i mod modulus`` on the device, over ``exp_bits`` exponent bits (a public
        bound; None: the modulus's length, safe for secret exponents -- see
        :mod:`cryptoffload.crypto.paillier_gpu.modulus`). Moduli the Montgomery kernels cannot
        take (even, or wider than 6,144 bits) are computed by Python's ``pow``."""
        if modulus % 2 == 0 or modulus < 3 or modulus.bit_length() > MAX_GPU_MODULUS_BITS:
            return [pow(b, e, modulus) for b, e in zip(bases, exps)]
        return self.modulus(modulus).powm(bases, exps, stream, exp_bits=exp_bits)

    def _run_batch(self, worker: int, batch: list[Request]) -> list[Outcome]:
        stream = self._streams[worker]
        return compute_batch([(kind, payload) for _, kind, payload in batch],
                             lambda b, e, m, bits: self.powm(b, e, m, bits, stream), _StreamKeys(self, stream))

    # -- bulk paths ----------------------------------------------------------------------------
    def _rows_per_batch(self, cols: int, batch_rows: int | None) -> int:
        if batch_rows is not None:
            if isinstance(batch_rows, bool) or not isinstance(batch_rows, int) or batch_rows < 1:
                raise ConfigError(f"batch_rows must be a positive integer, got {batch_rows!r}")
            return batch_rows
        return max(1, BULK_BATCH // cols)

    def _pipeline(self, key: Modulus, rows: int, cols: int, batch_rows: int,
                  launch: Callable[[int, int, gr.Stream], gr.DeviceWords]) -> list[int]:
        """Run ``launch(start, r, stream) -> device matrix of r x cols values`` for each batch
        of rows on two alternating streams, reduce each batch on the device, and fold the
        batches' column products on the host."""
        rt = self.runtime
        streams = [rt.stream(), rt.stream()]
        pending: list[tuple[gr.DeviceWords, int] | None] = [None, None]
        acc = [1] * cols

        def collect(i: int) -> None:
            batch = pending[i]
            if batch is None:   # the callers check first
                raise AssertionError("no batch in flight on this stream")
            dev, r = batch
            raw = from_limbs(rt.download(dev, streams[i]))
            for c, v in enumerate(key.finish_products(raw, r)):
                acc[c] = acc[c] * v % key.m
            pending[i] = None

        try:
            for b, start in enumerate(range(0, rows, batch_rows)):
                i = b % 2
                if pending[i] is not None:
                    collect(i)   # waits for this stream's previous batch; frees its pinned buffers
                r = min(batch_rows, rows - start)
                mat = launch(start, r, streams[i])
                dev, _ = key.column_products_device(mat, r, cols, streams[i])
                pending[i] = (dev, r)
            for i in (0, 1):
                if pending[i] is not None:
                    collect(i)
        finally:
            # also on an error: a stream's pinned staging buffers go back to the pool only
            # once the copies reading them are done
            for s in streams:
                s.synchronize()
        return acc

    def encrypt_aggregate(self, public_key: PublicKey, plaintexts: Sequence[int] | np.ndarray, rows: int, cols: int, *,
                          batch_rows: int | None = None) -> list[int]:
        """Encrypt a row-major ``rows x cols`` matrix of plaintexts (each in [0, n), every
        ciphertext with its own fresh randomness) and return the product mod n^2 of each
        column -- the aggregate of ``rows`` per-record uploads -- without the ciphertexts ever
        leaving the device. ``plaintexts``: integers, or the kernels' limb array (n's
        half-width limbs x rows*cols, ``uint32``), e.g. packed by worker processes."""
        count = plaintexts.shape[-1] if isinstance(plaintexts, np.ndarray) else len(plaintexts)
        if rows < 1 or cols < 1 or count != rows * cols:
            raise ConfigError(f"{count} plaintexts do not make a {rows} x {cols} matrix")
        key = self.key(public_key)
        rt = self.runtime
        if isinstance(plaintexts, np.ndarray):
            key.message_limbs(plaintexts)   # validated once, whole, before any batch starts
            values: np.ndarray | list[int] = plaintexts
        else:
            values = check_range(plaintexts, key.n, "plaintexts")

        def launch(start: int, r: int, stream: gr.Stream) -> gr.DeviceWords:
            lo, hi = start * cols, (start + r) * cols
            msgs = values[:, lo:hi] if isinstance(values, np.ndarray) else to_limbs(values[lo:hi], key.half)
            exps = random_exponents(r * cols, key.exp_bits)
            return key.encrypt_device(rt.upload(msgs, stream), rt.upload(exps, stream), r * cols, stream)

        return self._pipeline(key.modulus, rows, cols, self._rows_per_batch(cols, batch_rows), launch)

    def aggregate(self, modulus: int, values: Sequence[int] | np.ndarray, rows: int, cols: int, *,
                  batch_rows: int | None = None) -> list[int]:
        """Column products mod ``modulus`` of a row-major ``rows x cols`` matrix, given as
        integers (each in [0, modulus)) or as a limb-major ``uint32`` array (limbs x
        rows*cols, the kernels' layout: no conversion to Python integers)."""
        mod = self.modulus(modulus)
        if isinstance(values, np.ndarray):
            if values.ndim != 2 or values.shape != (mod.width, rows * cols) or values.dtype != np.uint32:
                raise ConfigError(f"expected a uint32 array of shape ({mod.width}, {rows * cols}), "
                                  f"got {values.dtype} {values.shape}")
            limbs = values
        else:
            if len(values) != rows * cols:
                raise ConfigError(f"{len(values)} values do not make a {rows} x {cols} matrix")
            limbs = to_limbs(check_range(values, modulus, "values (each below the modulus)"), mod.width)
        if rows < 1 or cols < 1:
            raise ConfigError("need at least one row and one column")
        rt = self.runtime

        def launch(start: int, r: int, stream: gr.Stream) -> gr.DeviceWords:
            return rt.upload(limbs[:, start * cols:(start + r) * cols], stream)

        return self._pipeline(mod, rows, cols, self._rows_per_batch(cols, batch_rows), launch)


_WORKER_ENGINES: dict[tuple[str, bool, int | None], GpuEngine] = {}
_WORKER_LOCK = threading.Lock()


def visible_devices() -> int | None:
    """How many GPUs ``CUDA_VISIBLE_DEVICES`` lists (CUDA numbers them 0, 1, ... in this
    process), or None when it is unset."""
    import os

    listed = os.environ.get("CUDA_VISIBLE_DEVICES")
    if listed is None:
        return None
    return len([d for d in listed.split(",") if d.strip()])


def _worker_name() -> object:
    try:
        from distributed import get_worker

        return get_worker().name
    except (ImportError, ValueError):   # not inside a Dask worker
        return None


def worker_device_index() -> int:
    """The GPU a Dask worker process should use: the worker's integer name (``LocalCluster``
    names workers 0, 1, ...) modulo the GPUs this process sees -- those ``CUDA_VISIBLE_DEVICES``
    lists when it is set, else all of them; 0 when it sees one GPU (``CUDA_VISIBLE_DEVICES=i``:
    the way to start one worker per GPU) or the worker has no integer name."""
    name = _worker_name()
    if isinstance(name, bool) or not isinstance(name, int):
        return 0
    count = visible_devices()
    if count is None:
        count = cuda.device_count()
    return name % count if count > 1 else 0


def worker_engine(device: str = "cuda", *, constant_time: bool = True, window: int | None = None) -> GpuEngine:
    """One :class:`GpuEngine` per process, device and table option (a Dask worker keeps its
    tables between tasks); the GPU is chosen by :func:`worker_device_index`."""
    key = (device, bool(constant_time), window)
    with _WORKER_LOCK:
        eng = _WORKER_ENGINES.get(key)
        if eng is None:
            eng = GpuEngine(1, device=device, device_index=worker_device_index() if device == "cuda" else 0,
                            constant_time=constant_time, window=window)
            _WORKER_ENGINES[key] = eng
    return eng
