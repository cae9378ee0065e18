"""Measure the Paillier GPU kernels and the host<->device copies into a *measured* profile.

Why: :mod:`cryptoffload.sim.gpu` models a GPU from three numbers per operation and the copy
costs; they must come from the GPU itself, measured the way the engine spends them. What is
timed (each value's ``source`` says it again):

* ``ops.<op>`` -- one kernel launch over ``b`` instances already on the device, from launch to
  the end of ``stream.synchronize()`` (``time.perf_counter``), median of ``repeats`` launches
  after a warm-up launch (which also compiles the kernels), for each fit batch size. ``op`` is
  ``encrypt`` (DJN, constant-time table lookups, the default), ``decrypt`` (CRT) or
  ``aggregate`` (column products of a b/16 x 16 matrix: ridge-shaped). The fit
  (:func:`fit_op`): ``per_item_s`` is the slope between the two largest batches, ``fixed_s``
  the intercept there, and ``wave_items`` how many instances the smallest batch costs as
  many as (at least its own size). Raw medians are kept under ``samples``.
* ``link`` -- upload (pinned staging + asynchronous copy + synchronise) and download of a
  small and a large array; bandwidth is the slope between them, latency the intercept.

:func:`run_batches` runs a list of batches through the same kernels with copies in and out and
``streams`` streams in flight (the engine's pipeline) and returns the measured wall time: the
study compares it with :func:`cryptoffload.sim.gpu.simulate_batches` on batch sizes and mixes
the profile was not fitted on. On the CPU twin everything here runs too (the tests use it),
but a profile of the twin says ``device = "cpu-twin"``; ``cryptoffload calibrate gpu`` itself
refuses without a GPU.
"""

from __future__ import annotations

import math

import datetime as _dt
import statistics
import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from cryptoffload.crypto.native import gpu_runtime as gr
from cryptoffload.crypto.paillier_gpu import GpuDecryptor, GpuPaillier, random_exponents
from cryptoffload.errors import ConfigError
from cryptoffload.machine import machine_info
from cryptoffload.profiles.loader import ProfileValue, toml_writer, write_profile
from cryptoffload.sim.gpu import OPS, check_batches

if TYPE_CHECKING:
    from cryptoffload.crypto.paillier import PrivateKey, PublicKey

DEFAULT_FIT_BATCHES = (8192, 65536, 262144)
AGGREGATE_COLS = 16
TRANSFER_BYTES = (1 << 20, 64 << 20)


def fit_op(batches: Sequence[int], seconds: Sequence[float]) -> tuple[float, float, float]:
    """(fixed_s, per_item_s, wave_items) of ``t(b) = fixed + per_item * max(b, wave)`` through
    the measured points (module docstring). Needs two batch sizes or more."""
    pts = sorted(zip(batches, seconds))
    if len(pts) < 2 or len({b for b, _ in pts}) < 2:
        raise ConfigError("fitting a GPU operation needs at least two different batch sizes")
    (b1, t1), (b2, t2) = pts[-2], pts[-1]
    per_item = (t2 - t1) / (b2 - b1)
    if per_item <= 0:   # noise: no measurable growth between the two largest
        per_item = t2 / b2
    fixed = max(0.0, t2 - per_item * b2)
    b0, t0 = pts[0]
    wave = max(float(b0), (t0 - fixed) / per_item, 1.0)
    return fixed, per_item, float(math.ceil(wave))   # a count of instances: whole, rounded up


class GpuBench:
    """One key's kernels on one runtime with inputs for up to ``max_items`` instances of every
    operation prepared on the host (limb arrays) and on the device."""

    def __init__(self, runtime: gr.Runtime, bits: int = 1024, max_items: int = max(DEFAULT_FIT_BATCHES), *,
                 constant_time: bool = True, key: tuple[PublicKey, PrivateKey] | None = None) -> None:
        from cryptoffload.crypto import paillier as pl

        if max_items < AGGREGATE_COLS:
            raise ConfigError(f"need at least {AGGREGATE_COLS} instances")
        self.runtime = runtime
        self.pk, self.sk = key or pl.generate_keypair(bits, insecure_study_size=True)
        self.key = GpuPaillier(self.pk, runtime, constant_time=constant_time)
        self.dec = GpuDecryptor(self.sk, runtime)
        self.max_items = max_items
        rng = np.random.default_rng()   # message bits for timing only, not key material
        half = self.key.half
        msgs = rng.integers(0, 1 << 32, size=(half, max_items), dtype=np.uint64).astype(np.uint32)
        msgs[half - 1] = 0   # < 2^(32 (half-1)) < n
        s = runtime.stream()
        exps = random_exponents(max_items, self.key.exp_bits)
        cts = runtime.download(self.key.encrypt_device(runtime.upload(msgs, s), runtime.upload(exps, s), max_items, s), s)
        dec_in = np.zeros((2 * self.dec.width, max_items), dtype=np.uint32)   # the decryptor's layout
        rows = min(dec_in.shape[0], cts.shape[0])
        dec_in[:rows] = cts[:rows]
        self.host = {"encrypt": [np.ascontiguousarray(msgs), exps], "decrypt": [dec_in],
                     "aggregate": [np.array(cts)]}
        self.device = {op: [runtime.upload(a, s) for a in arrs] for op, arrs in self.host.items()}
        s.synchronize()

    def bytes_per_item(self, op: str) -> tuple[float, float]:
        """(bytes in, bytes out) per instance of ``op`` as the pipeline copies them."""
        inp = sum(4 * a.shape[0] for a in self.host[op])
        out = {"encrypt": 4 * self.key.width, "decrypt": 4 * self.dec.width, "aggregate": 0}[op]
        return float(inp), float(out)

    def launch(self, op: str, items: int, inputs: list[gr.DeviceWords], stream: gr.Stream) -> gr.DeviceWords:
        """Start ``op`` over the first ``items`` instances of ``inputs`` (device arrays of
        exactly ``items`` columns); returns the device result."""
        if op == "encrypt":
            return self.key.encrypt_device(inputs[0], inputs[1], items, stream)
        if op == "decrypt":
            return self.dec.decrypt_device(inputs[0], items, stream)
        if op == "aggregate":
            rows = max(1, items // AGGREGATE_COLS)
            return self.key.column_products_device(inputs[0], rows, AGGREGATE_COLS, stream)[0]
        raise ConfigError(f"unknown GPU operation {op!r}")

    def device_inputs(self, op: str, items: int, stream: gr.Stream) -> list[gr.DeviceWords]:
        """Inputs of exactly ``items`` columns on the device, uploaded from the host arrays' first
        columns. Not a slice of the device arrays: a column slice of a limb-major array is
        strided, which every launch refuses (``gpu_interface.check_args``) -- a kernel would
        read its limbs at the wrong stride -- and making it contiguous on the device is a copy
        as well. The full arrays are reused when ``items`` is the maximum."""
        if items == self.max_items:
            return self.device[op]
        return [self.runtime.upload(a[:, :items], stream) for a in self.host[op]]


def _median_time(fn: Callable[[], None], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def time_kernel(bench: GpuBench, op: str, items: int, repeats: int = 3) -> float:
    """Median seconds of one launch of ``op`` over ``items`` device-resident instances."""
    items = _aggregate_items(op, items)
    s = bench.runtime.stream()
    ins = bench.device_inputs(op, items, s)
    s.synchronize()

    def once() -> None:
        bench.launch(op, items, ins, s)
        s.synchronize()

    once()   # warm-up (and, on a GPU, the first use compiles this width's module)
    return _median_time(once, repeats)


def time_transfers(runtime: gr.Runtime, sizes: Sequence[int] = TRANSFER_BYTES, repeats: int = 3
                   ) -> dict[str, float]:
    """Upload and download bandwidth (bytes/s) and latency (s) from two array sizes."""
    s = runtime.stream()
    up, down = [], []
    for size in sizes:
        host = np.zeros(max(1, size // 4), dtype=np.uint32)
        dev = runtime.upload(host, s)
        s.synchronize()

        def upload(host: np.ndarray = host) -> None:
            runtime.upload(host, s)
            s.synchronize()

        def download(dev: gr.DeviceWords = dev) -> None:
            runtime.download(dev, s)

        up.append(_median_time(upload, repeats))
        down.append(_median_time(download, repeats))
    out = {}
    for name, ts in (("h2d", up), ("d2h", down)):
        slope = (ts[1] - ts[0]) / (sizes[1] - sizes[0])
        bw = 1.0 / slope if slope > 0 else sizes[1] / ts[1]
        out[f"{name}_bytes_per_s"] = bw
        out[f"{name}_latency_s"] = max(0.0, ts[0] - sizes[0] / bw)
    return out


def _aggregate_items(op: str, items: int) -> int:
    return max(AGGREGATE_COLS, items - items % AGGREGATE_COLS) if op == "aggregate" else items


def run_batches(bench: GpuBench, batches: Sequence[tuple[str, int]], streams: int = 2) -> float:
    """Wall seconds to copy in, compute and copy out ``batches`` on ``streams`` streams issued
    round-robin (a stream's next batch starts after its previous one's result came back),
    as the engine's pipeline does."""
    batches = check_batches(batches)
    rt = bench.runtime
    ss = [rt.stream() for _ in range(streams)]
    pending: list[gr.DeviceWords | None] = [None] * streams
    for op, items in batches:
        if items > bench.max_items:
            raise ConfigError(f"batch of {items} exceeds the {bench.max_items} prepared instances")
    t0 = time.perf_counter()
    for i, (op, items) in enumerate(batches):
        j = i % streams
        done = pending[j]
        if done is not None:
            rt.download(done, ss[j])
        items = _aggregate_items(op, items)
        ins = [rt.upload(a[:, :items], ss[j]) for a in bench.host[op]]
        pending[j] = bench.launch(op, items, ins, ss[j])
    for j in range(streams):
        done = pending[j]
        if done is not None:
            rt.download(done, ss[j])
    return time.perf_counter() - t0


def measure(bench: GpuBench, fit_batches: Sequence[int] = DEFAULT_FIT_BATCHES, repeats: int = 3,
            transfer_sizes: Sequence[int] = TRANSFER_BYTES, tick: Callable[[str], None] | None = None
            ) -> dict[str, ProfileValue]:
    """Every profile value (:data:`cryptoffload.sim.gpu.REQUIRED_FIELDS` and the raw samples)."""
    if any(b > bench.max_items or b < 1 for b in fit_batches) or len({_aggregate_items("aggregate", b) for b in fit_batches}) < 2:
        raise ConfigError(f"fit batches must be at least two sizes in [1, {bench.max_items}] "
                          f"(two of them at least {AGGREGATE_COLS} apart)")
    where = bench.runtime.describe()
    values: dict[str, ProfileValue] = {}
    for op in OPS:
        times = []
        for b in fit_batches:
            if tick:
                tick(f"{op}, batch {b:,}")
            t = time_kernel(bench, op, b, repeats)
            times.append(t)
            values[f"samples.{op}.b{b}_s"] = ProfileValue(
                t, f"measured on {where}: one launch over {b} device-resident instances, launch to synchronize, "
                   f"median of {repeats}")
        fixed, per_item, wave = fit_op([_aggregate_items(op, b) for b in fit_batches], times)
        src = f"fitted to samples.{op} (batches {', '.join(map(str, fit_batches))}) on {where}"
        values[f"ops.{op}.fixed_s"] = ProfileValue(fixed, f"{src}: intercept between the two largest batches")
        values[f"ops.{op}.per_item_s"] = ProfileValue(per_item, f"{src}: slope between the two largest batches")
        values[f"ops.{op}.wave_items"] = ProfileValue(wave, f"{src}: instances the smallest batch costs as much as")
        bin_, bout = bench.bytes_per_item(op)
        values[f"ops.{op}.bytes_in"] = ProfileValue(bin_, "bytes copied to the device per instance (limb arrays)")
        values[f"ops.{op}.bytes_out"] = ProfileValue(bout, "bytes copied back per instance (limb arrays)")
    if tick:
        tick("host <-> device copies")
    tr = time_transfers(bench.runtime, transfer_sizes, repeats)
    src = (f"measured on {where}: upload (pinned staging + copy) and download + synchronize of "
           f"{transfer_sizes[0]} and {transfer_sizes[1]} bytes, median of {repeats}")
    values["link.h2d_bytes_per_s"] = ProfileValue(tr["h2d_bytes_per_s"], src + "; slope")
    values["link.d2h_bytes_per_s"] = ProfileValue(tr["d2h_bytes_per_s"], src + "; slope")
    values["link.latency_s"] = ProfileValue(max(tr["h2d_latency_s"], tr["d2h_latency_s"]), src + "; intercept, larger direction")
    return values


def calibrate_gpu(out: str | Path, *, device: str = "cuda", device_index: int = 0, bits: int = 1024,
                  fit_batches: Sequence[int] = DEFAULT_FIT_BATCHES, repeats: int = 3,
                  transfer_sizes: Sequence[int] = TRANSFER_BYTES, bench: GpuBench | None = None,
                  tick: Callable[[str], None] | None = None) -> Path:
    """Measure and write a profile to ``out``. Raises :class:`BackendUnavailable` (one line)
    when ``device`` cannot run here."""
    from cryptoffload.crypto.paillier import check_key_bits

    check_key_bits(bits, insecure_study_size=True)
    toml_writer()   # before minutes of measuring: a missing writer is said now
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ConfigError(f"repeats must be a positive integer, got {repeats!r}")
    rt = gr.get_runtime(device, device_index)
    bench = bench or GpuBench(rt, bits, max(fit_batches))
    values = measure(bench, fit_batches, repeats, transfer_sizes, tick)
    info = rt.info()
    meta = {"name": f"gpu-{str(info.get('name', device)).lower().replace(' ', '-')}", "kind": "measured",
            "description": (f"Paillier kernels (paillier_gpu.cu) and host<->device copies measured on "
                            f"{rt.describe()}, {bench.pk.bits}-bit key, constant-time encryption table "
                            f"({bench.key.window}-bit windows)"),
            "gpu": str(info.get("name", device)), "device": device, "device_info": info,
            "machine": {k: v for k, v in machine_info().items() if v is not None},   # TOML has no null
            "key_bits": bench.pk.bits, "fit_batches": list(fit_batches),
            "repeats": repeats, "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
    return write_profile(out, meta, values)


__all__ = ["DEFAULT_FIT_BATCHES", "GpuBench", "calibrate_gpu", "fit_op", "measure", "run_batches", "time_kernel",
           "time_transfers"]
