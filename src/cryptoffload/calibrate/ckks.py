"""Measure this machine's CKKS op costs and Dask link costs into a *measured* profile.

Why: the multi-device BSGS model (:mod:`cryptoffload.sim.op_dag`) prices a split's op DAG
with per-op costs, ciphertext sizes and the cost of moving a ciphertext between devices;
:mod:`cryptoffload.engines.bsgs_run` runs the same split on Dask worker processes. To compare
the two, the model needs *this* machine's numbers, measured the way the run spends them.

What is timed (each value's ``source`` says it again):

* ``[ops]``, ``[ciphertext]`` -- in one Dask worker process (where BSGS tasks run; in the
  client process the in-process scheduler's event loop competes for the GIL and rotations
  came out ~1.6x slower), one thread (SEAL is single-threaded), ``time.perf_counter`` with
  the device waited for before and after each call
  (:func:`~cryptoffload.crypto.ckks.timing.timed`: with ``--backend gpu``, the kernels' time,
  not their launch's), each call timed alone inside a BSGS-shaped sequence
  (:func:`measure_ops_in_context`: rotations by
  16 steps with their own Galois keys, products with 16 plaintexts, the sum, its rescale,
  rotations of the rescaled sum, (de)serialisation); the value is the median over ``repeats``
  passes, after one untimed pass of every op (a GPU compiles or loads its kernels on first
  use). The input is a fresh ciphertext at the top level (``limbs = levels + 1`` RNS limbs,
  what :func:`~cryptoffload.engines.bsgs_run.run_bsgs` gets); ``*_low`` values are one level
  lower, after a ``mul_plain`` + ``rescale`` (where BSGS's giant rotations and sums run).
  ``serialize_s``/``deserialize_s`` are the backend's framed (checksummed) serialisation.
* ``[link]`` -- between two Dask worker processes of ``runner`` (a fresh 2-worker
  ``LocalCluster`` when none is given). A task pinned to worker A runs for ``hold_s``
  (20 ms: longer than Dask's 2 ms worker and 5 ms scheduler message batching, so the gap is
  that of tasks lasting milliseconds, as BSGS's are, not that of back-to-back empty tasks,
  which wait out the batching), then returns a payload of random bytes (incompressible, as
  ciphertexts are) and stamps ``time.monotonic()`` just before returning; a task pinned to
  worker B that takes the payload stamps its start. The *gap* (B's start - A's end) holds
  the scheduler's round trip plus the transfer. The same pair on one worker (no transfer)
  gives ``[overhead] task_s``. Then ``latency_s`` = gap(8-byte payload across) - ``task_s``,
  and ``bandwidth_Bps`` = (large - ciphertext
  size) / (gap(large) - gap(ciphertext-sized)), the slope between a ciphertext-sized
  payload and a larger one (so fixed costs cancel). Directions A->B and B->A alternate; each
  value is the median of ``repeats`` pairs per direction, after one unrecorded warm-up pair
  (more pairs, up to three times as many, when noise makes a difference come out negative).
* ``[link] busy_latency_s``, ``busy_bandwidth_Bps`` -- the same gaps when the sending worker
  goes on computing right after the producer, in calls that hold the GIL for a rotation's
  time each (as SEAL's ops do, and as a BSGS worker does after a task another one waits
  for): its event loop, which answers the receiver and tells the scheduler the producer is
  done, then waits for the GIL every time it wakes. Timed for one ciphertext and a batch of
  :data:`BUSY_BATCH`, with the workers' switch interval set as the BSGS execution sets it
  (:data:`~cryptoffload.engines.bsgs_run.SWITCH_INTERVAL_S`). On the 2-core development
  machine, quiet: one ciphertext 4.7 ms idle, 9-12 ms out of a busy worker (19 ms with
  Python's default 5 ms switch interval).
* ``[overhead] task_s`` -- worker-side, the gap between the end of a pinned task and the start
  of a pinned task that depends on it *on the same worker* (the scheduler learning one is
  done and starting the next: what each dependent step of a Dask task chain adds to the
  compute). Not the client's round trip.

What travels to the workers: no one's keys. Each worker makes its own throwaway keys for the
op timings (:func:`measure_ops`; they die with the task, and only the timings and the
backend's name come back), and the link tasks move random bytes. The link is timed over the
cluster's TLS (a local cluster's always is, :mod:`cryptoffload.engines.dask_tls`), as the BSGS
runs move their ciphertexts.

Default parameters (:data:`DEFAULT_CALIBRATION_PARAMS`): SEAL N = 8192, coeff_mod_bits
(60, 40, 40, 60), scale 2^40 -- 200 bits, within the 128-bit bound (218); two levels, so the
BSGS input is at level 2 (3 limbs) and the product ends at level 1. A rotation costs 2-4 ms
on the 2-core development machine, the order of Dask's ~3 ms per dependent task, so a
2-worker split can (just) pay off, and a test-sized run stays quick.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import gc
import os
import statistics
import sys
import time
from functools import partial
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping, Sequence, TypeVar, TypedDict

import numpy as np

from cryptoffload.crypto.ckks import CkksBackend, CkksParams, make_backend
from cryptoffload.crypto.ckks.registry import describe_backend
from cryptoffload.crypto.ckks.timing import timed
from cryptoffload.errors import ConfigError, CryptoffloadError
from cryptoffload.machine import machine_info
from cryptoffload.profiles.loader import ProfileValue, write_profile

__all__ = ["DEFAULT_CALIBRATION_PARAMS", "REQUIRED_FIELDS", "calibrate_ckks", "main"]

DEFAULT_CALIBRATION_PARAMS = CkksParams(8192, (60, 40, 40, 60), 40)

#: Every field a CKKS calibration profile has (what the simulator reads).
REQUIRED_FIELDS = (
    "ring.poly_modulus_degree", "ring.limbs",
    "ops.rotate_s", "ops.rotate_low_s", "ops.pmul_s", "ops.add_s", "ops.add_low_s", "ops.rescale_s",
    "ciphertext.bytes", "ciphertext.bytes_low", "ciphertext.serialize_s", "ciphertext.deserialize_s",
    "link.latency_s", "link.bandwidth_Bps", "overhead.task_s",
)

TINY_BYTES = 8
MIN_LARGE_BYTES = 8 * 1024 * 1024
#: How long each producer task runs before it returns (see the module docstring).
HOLD_S = 0.02
#: How long the sender computes after producing, in the busy-sender gaps (longer than a transfer).
BUSY_S = 0.08
#: The batch the busy-sender bandwidth is timed with: this many ciphertexts (a broadcast's batch).
BUSY_BATCH = 8


if TYPE_CHECKING:
    from cryptoffload.engines.dask import DaskRunner

_R = TypeVar("_R")


class _Item(TypedDict):
    """What a producer task hands its consumer: the payload and when it was made (monotonic)."""

    data: bytes
    end: float


# ---- worker side (top-level: pickled by reference) --------------------------------------------
def _link_produce(nbytes: int, hold_s: float = 0.0) -> _Item:
    if hold_s > 0:
        time.sleep(hold_s)
    data = os.urandom(nbytes)
    return {"data": data, "end": time.monotonic()}


def _link_compute(seconds: float, call_s: float) -> int:
    """Compute for ``seconds`` in C calls that each hold the GIL for about ``call_s``, as each
    SEAL op does (``sum(range(n))`` never lets go of it); returns the number of calls."""
    t0 = time.perf_counter()
    sum(range(20_000))
    n = max(1_000, int(call_s / max(1e-9, (time.perf_counter() - t0) / 20_000)))
    calls = 0
    while time.perf_counter() - t0 < seconds:
        sum(range(n))
        calls += 1
    return calls


def _link_consume(item: _Item) -> tuple[float, int]:
    start = time.monotonic()
    return start - item["end"], len(item["data"])


# ---- timing helpers ------------------------------------------------------------------------------
def _gaps(runner: DaskRunner, a: str, b: str, nbytes: int, repeats: int, hold_s: float = HOLD_S,
          busy_call_s: float | None = None) -> list[float]:
    """Worker-side gaps of ``repeats`` producer(a) -> consumer(b) pairs of ``nbytes``, one at a
    time, after one unrecorded warm-up pair. ``busy_call_s``: worker a goes on computing
    right after the producer (:func:`_link_compute`, GIL-holding calls of that length, for
    :data:`BUSY_S`), as a BSGS worker does after a task whose result another one needs."""
    out = []
    for k in range(repeats + 1):
        prod = runner.submit(_link_produce, nbytes, hold_s, worker=a)
        busy = (runner.submit(_link_compute, BUSY_S, busy_call_s, worker=a, priority=-1)
                if busy_call_s else None)
        cons = runner.submit(_link_consume, prod, worker=b)
        gap, got = runner.gather(cons)
        if busy is not None:
            runner.gather(busy)
        del prod, cons, busy
        if got != nbytes:
            raise RuntimeError(f"link measurement: sent {nbytes} bytes, {got} arrived")
        if k:
            out.append(gap)
    return out


def measure_link(runner: DaskRunner, ct_bytes: int, repeats: int, hold_s: float = HOLD_S,
                 rounds: int = 3, busy_call_s: float | None = None,
                 switch_interval_s: float | None = None) -> dict[str, float]:
    """Raw worker-side gaps (seconds, medians) and the derived link and overhead values.

    When noise makes a difference that must be positive come out non-positive, another
    ``repeats`` pairs of every kind are added to the samples (at most ``rounds`` in all)
    before giving up with a :class:`CryptoffloadError`. With ``busy_call_s`` (the length of
    one op, e.g. a rotation), also the link out of a worker that goes on computing:
    ``busy_bandwidth_Bps`` from one ciphertext and a batch of :data:`BUSY_BATCH`, and
    ``busy_latency_s`` = gap(one ciphertext) - ``task_s`` - its bytes at that bandwidth (left
    out when noise makes either non-positive). ``switch_interval_s``: the workers' GIL switch
    interval during the measurement (restored afterwards; the BSGS execution's
    :data:`~cryptoffload.engines.bsgs_run.SWITCH_INTERVAL_S`: a busy sender answers within
    about one), ``None`` leaves it alone."""
    from cryptoffload.engines.bsgs_run import worker_switch_interval

    addrs = runner.worker_addresses()
    if switch_interval_s is None or len(addrs) < 2:
        return _measure_link(runner, ct_bytes, repeats, hold_s, rounds, busy_call_s)
    used = addrs[:2]
    before = runner.gather([runner.submit(worker_switch_interval, switch_interval_s, worker=a) for a in used])
    try:
        return {**_measure_link(runner, ct_bytes, repeats, hold_s, rounds, busy_call_s),
                "switch_interval_s": float(switch_interval_s)}
    finally:
        runner.gather([runner.submit(worker_switch_interval, p, worker=a) for a, p in zip(used, before)])


def _measure_link(runner: DaskRunner, ct_bytes: int, repeats: int, hold_s: float, rounds: int,
                  busy_call_s: float | None) -> dict[str, float]:
    addrs = runner.worker_addresses()
    if len(addrs) < 2:
        raise ConfigError(f"the link calibration needs a Dask cluster with 2 workers or more, "
                          f"got {len(addrs)}")
    a, b = addrs[0], addrs[1]
    large = max(32 * ct_bytes, MIN_LARGE_BYTES)
    same: list[float] = []
    cross: dict[int, list[float]] = {n: [] for n in (TINY_BYTES, ct_bytes, large)}
    for _ in range(rounds):
        same += _gaps(runner, a, a, TINY_BYTES, repeats, hold_s) + _gaps(runner, b, b, TINY_BYTES, repeats, hold_s)
        for n in cross:
            cross[n] += _gaps(runner, a, b, n, repeats, hold_s) + _gaps(runner, b, a, n, repeats, hold_s)
        raw = {"gap_same_s": statistics.median(same), "gap_tiny_s": statistics.median(cross[TINY_BYTES]),
               "gap_ct_s": statistics.median(cross[ct_bytes]), "gap_large_s": statistics.median(cross[large]),
               "large_bytes": float(large), "ct_payload_bytes": float(ct_bytes), "pairs": float(len(same))}
        latency = raw["gap_tiny_s"] - raw["gap_same_s"]
        slope_t = raw["gap_large_s"] - raw["gap_ct_s"]
        if latency > 0 and slope_t > 0 and raw["gap_same_s"] > 0:
            out = {**raw, "latency_s": latency, "bandwidth_Bps": (large - ct_bytes) / slope_t,
                   "task_s": raw["gap_same_s"]}
            if busy_call_s:
                out.update(_busy_link(runner, a, b, ct_bytes, repeats, hold_s, busy_call_s, raw["gap_same_s"]))
            return out
    raise CryptoffloadError(
        f"the link measurement is too noisy to use (same-worker gap {raw['gap_same_s'] * 1e3:.3f} ms, "
        f"8 B across {raw['gap_tiny_s'] * 1e3:.3f} ms, {ct_bytes} B {raw['gap_ct_s'] * 1e3:.3f} ms, "
        f"{large} B {raw['gap_large_s'] * 1e3:.3f} ms); run again with more repeats on a quieter machine")


def _busy_link(runner: DaskRunner, a: str, b: str, ct_bytes: int, repeats: int, hold_s: float, call_s: float,
               task_s: float) -> dict[str, float]:
    """The busy-sender gaps and the values derived from them (see :func:`measure_link`)."""
    batch = BUSY_BATCH * ct_bytes
    one = _gaps(runner, a, b, ct_bytes, repeats, hold_s, call_s) + _gaps(runner, b, a, ct_bytes, repeats, hold_s, call_s)
    many = _gaps(runner, a, b, batch, repeats, hold_s, call_s) + _gaps(runner, b, a, batch, repeats, hold_s, call_s)
    out = {"gap_ct_busy_s": statistics.median(one), "gap_batch_busy_s": statistics.median(many),
           "busy_batch_bytes": float(batch), "busy_call_s": call_s}
    slope = out["gap_batch_busy_s"] - out["gap_ct_busy_s"]
    if slope > 0:
        bw = (batch - ct_bytes) / slope
        lat = out["gap_ct_busy_s"] - task_s - ct_bytes / bw
        if lat > 0:
            out.update(busy_bandwidth_Bps=bw, busy_latency_s=lat)
    return out


def measure_ops(params: CkksParams, backend: str, repeats: int,
                insecure_study: bool = False) -> tuple[dict[str, float], CkksBackend]:
    """Op costs (seconds, :func:`measure_ops_in_context`), sizes (bytes) and limbs at the top
    level and one below; and the backend (for its name and version)."""
    if params.levels < 1:
        raise ConfigError("the calibration needs parameters with at least one level (3 primes or more)")
    be = make_backend(backend, params, insecure_study=insecure_study)
    be.keygen(rotations=[])
    rng = np.random.default_rng(0)
    ct = be.encrypt(rng.uniform(-1, 1, params.slots))
    low = be.rescale(be.mul_plain(ct, be.encode(rng.uniform(-1, 1, params.slots), like=ct)))
    out = {
        "limbs": float(be.level(ct) + 1),
        "bytes": float(len(be.serialize_ciphertext(ct))),
        "bytes_low": float(len(be.serialize_ciphertext(low))),
        "level": float(be.level(ct)),
        **measure_ops_in_context(params, backend, max(3, repeats), insecure_study),
    }
    return out, be

IN_CONTEXT_KEYS = 16


def measure_ops_in_context(params: CkksParams, backend: str, repeats: int,
                           insecure_study: bool = False) -> dict[str, float]:
    """Op costs timed one call at a time *inside* a BSGS-shaped sequence: rotations by
    ``IN_CONTEXT_KEYS`` different steps (each its own Galois key, megabytes each, as baby
    steps use them), products with as many different plaintexts, the adds of a giant step, its
    rescale, rotations of the rescaled sum, then (de)serialisation. Back-to-back calls of one
    op on one key (:func:`measure_ops`) stay in cache and came out 20-40 % cheaper than the
    same ops inside a real product; these are the costs the model should use. Median over
    ``repeats`` passes of every op's median within a pass, after one untimed warm-up pass; each
    call is timed with :func:`~cryptoffload.crypto.ckks.timing.timed` (the device waited for
    before and after it)."""
    be = make_backend(backend, params, insecure_study=insecure_study)
    steps = list(range(1, IN_CONTEXT_KEYS + 1))
    be.keygen(rotations=steps)
    rng = np.random.default_rng(1)
    ct = be.encrypt(rng.uniform(-1, 1, params.slots))
    pts = [be.encode(rng.uniform(-1, 1, params.slots), like=ct) for _ in steps]
    per: dict[str, list[float]] = {k: [] for k in ("rotate_s", "pmul_s", "add_s", "rescale_s", "rotate_low_s",
                                                   "add_low_s", "serialize_s", "deserialize_s")}

    def sample(key: str, fn: Callable[[], _R], out: dict[str, list[float]]) -> _R:
        with timed(be) as t:      # waits for the device before and after: the op's own time
            r = fn()
        out[key].append(t.seconds)
        return r

    gc_was = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats + 1):                       # the first pass (every op) warms up, untimed
            one: dict[str, list[float]] = {k: [] for k in per}
            rotated = [sample("rotate_s", partial(be.rotate, ct, s), one) for s in steps]
            terms = [sample("pmul_s", partial(be.mul_plain, r, p), one) for r, p in zip(rotated, pts)]
            acc = terms[0]
            for t in terms[1:]:
                acc = sample("add_s", partial(be.add, acc, t), one)
            low = sample("rescale_s", lambda: be.rescale(acc), one)
            lows = [sample("rotate_low_s", partial(be.rotate, low, s), one) for s in steps]
            acc2 = lows[0]
            for t in lows[1:]:
                acc2 = sample("add_low_s", partial(be.add, acc2, t), one)
            blobs = [sample("serialize_s", partial(be.serialize_ciphertext, r), one) for r in rotated[:4]]
            for b in blobs:
                sample("deserialize_s", partial(be.deserialize_ciphertext, b), one)
            if _ > 0:
                for k, v in one.items():
                    per[k].append(statistics.median(v))
    finally:
        if gc_was:
            gc.enable()
    return {k: statistics.median(v) for k, v in per.items()}


def measure_ops_on_worker(params: CkksParams, backend: str, repeats: int,
                          insecure_study: bool = False) -> tuple[dict[str, float], str]:
    """:func:`measure_ops` inside a Dask worker process (pickled by reference): op costs as the
    BSGS tasks meet them. Timed in the client process instead, they carry the in-process
    scheduler's event loop competing for the GIL -- rotations came out 1.6x slower there."""
    ops, be = measure_ops(params, backend, repeats, insecure_study)
    return ops, be.name


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "unknown"


def calibrate_ckks(out_path: str | os.PathLike[str], *, params: CkksParams = DEFAULT_CALIBRATION_PARAMS,
                   backend: str = "seal", repeats: int = 7, progress: bool = True, runner: DaskRunner | None = None,
                   hold_s: float = HOLD_S, insecure_study: bool = False,
                   command: str | None = None) -> Path:
    """Measure CKKS op costs here and Dask link costs on ``runner`` (a fresh 2-worker local
    cluster when ``None``) and write a *measured* profile to ``out_path`` (atomically); see
    the module docstring for what each field is. ``repeats``: samples per value (the
    median is kept); ``hold_s``: how long
    each link-measuring producer task runs. ``progress``: a line
    per step on stderr. ``command``: recorded in ``[meta]`` (default: this call)."""
    from cryptoffload.engines.dask import DaskRunner

    _check_arguments(params, repeats, hold_s)
    say = (lambda msg: print(f"calibrate-ckks: {msg}", file=sys.stderr, flush=True)) if progress else \
        (lambda msg: None)
    info = machine_info()
    date = _dt.datetime.now().astimezone().isoformat(timespec="seconds")
    if runner is None:
        with DaskRunner(workers=2) as own:
            ops, be_name, link, where_link = _measure_all(own, params, backend, repeats, insecure_study, hold_s, say)
    else:
        ops, be_name, link, where_link = _measure_all(runner, params, backend, repeats, insecure_study, hold_s, say)
    lib = describe_backend(be_name)
    ring = (f"N = {params.poly_modulus_degree}, coeff_mod_bits {list(params.coeff_mod_bits)}, "
            f"scale 2^{params.scale_bits}")
    where = f"measured on {info['cpu']}, 1 thread of a Dask worker process, {date}, {lib}, {ring}"
    dask_where = (f"measured on {info['cpu']}, {date}, {where_link}, distributed {_version('distributed')}; "
                  f"worker-side time.monotonic gaps after a producer task of {hold_s * 1e3:g} ms, median of "
                  f"{int(link['pairs'])} pairs (both directions)")
    values = {**_op_values(ops, params, repeats, where, ring), **_link_values(link, dask_where),
              **_slowdown_value(ops, where), **_task_value(link, dask_where)}
    command = command or (f"calibrate_ckks({str(out_path)!r}, params=CkksParams("
                          f"{params.poly_modulus_degree}, {params.coeff_mod_bits}, {params.scale_bits}), "
                          f"backend={backend!r}, repeats={repeats}, "
                          f"hold_s={hold_s})")
    meta = _meta(params, be_name, lib, ring, info, date, command, where_link, link)
    path = write_profile(out_path, meta, values)
    return path


def _check_arguments(params: CkksParams, repeats: int, hold_s: float) -> None:
    if not isinstance(params, CkksParams):
        raise ConfigError(f"params must be a CkksParams, got {type(params).__name__}")
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ConfigError(f"repeats must be a positive integer, got {repeats!r}")
    if isinstance(hold_s, bool) or not isinstance(hold_s, (int, float)) or not 0 <= hold_s < 10:
        raise ConfigError(f"hold_s must be between 0 and 10 seconds, got {hold_s!r}")


def _measure_all(r: DaskRunner, params: CkksParams, backend: str, repeats: int, insecure_study: bool, hold_s: float,
                 say: Callable[[str], None]) -> tuple[dict[str, float], str, dict[str, float], str]:
    """The op costs on one worker (and, with two or more, the slowdown when all time at once),
    then the Dask link between two workers: ops, backend name, link costs, the runner."""
    from cryptoffload.engines.bsgs_run import SWITCH_INTERVAL_S

    say(f"timing {backend} ops at N = {params.poly_modulus_degree}, coeff_mod_bits "
        f"{list(params.coeff_mod_bits)}, on a worker process")
    worker = r.worker_addresses()[0]
    fut = r.submit(measure_ops_on_worker, params, backend, repeats, insecure_study, worker=worker)
    ops, name = fut.result()
    addrs = r.worker_addresses()
    if len(addrs) >= 2:
        say("timing the same ops on every worker at once (cores shared with the others)")
        _measure_slowdown(r, addrs, ops, params, backend, repeats, insecure_study)
    say("timing Dask transfers between two worker processes")
    link = measure_link(r, int(ops["bytes"]), repeats, hold_s, busy_call_s=ops["rotate_s"],
                        switch_interval_s=SWITCH_INTERVAL_S)
    return ops, name, link, r.describe()


def _measure_slowdown(r: DaskRunner, addrs: list[str], ops: dict[str, float], params: CkksParams, backend: str,
                      repeats: int, insecure_study: bool) -> None:
    """Add to ``ops`` the median ratio of op times with every worker timing at once to one alone."""
    futs = [r.submit(measure_ops_on_worker, params, backend, repeats, insecure_study, worker=a) for a in addrs]
    together = [f.result()[0] for f in futs]
    ratios = [t[k] / ops[k] for t in together for k in ("rotate_s", "pmul_s", "rescale_s") if ops[k] > 0]
    ops["concurrent_slowdown"] = max(1.0, statistics.median(ratios))
    ops["concurrent_workers"] = float(len(addrs))


def _op_values(ops: dict[str, float], params: CkksParams, repeats: int, where: str,
               ring: str) -> dict[str, ProfileValue]:
    """The ring, op and ciphertext fields, each with how it was measured."""
    lv = int(ops["level"])
    how = (f"each call timed alone inside a BSGS-shaped sequence ({IN_CONTEXT_KEYS} rotation keys, as many plaintexts; "
           f"measure_ops_in_context), median of {max(3, repeats)} passes after a warm-up pass (time.perf_counter, "
           "the device waited for before and after each call)")
    top = f"fresh ciphertext at level {lv} ({lv + 1} limbs)"
    lowd = f"ciphertext at level {lv - 1} ({lv} limbs, after mul_plain + rescale)"
    return {
        "ring.poly_modulus_degree": ProfileValue(params.poly_modulus_degree, f"parameter of the measurement: {ring}"),
        "ring.limbs": ProfileValue(lv + 1, f"RNS limbs of the input ciphertext the ops were timed on "
                                           f"(level {lv} + 1); {ring}"),
        "ops.rotate_s": ProfileValue(ops["rotate_s"], f"{where}: rotate by 1..{IN_CONTEXT_KEYS} slots (each its own "
                                                     f"Galois key, one key switch), {top}; {how}"),
        "ops.rotate_low_s": ProfileValue(ops["rotate_low_s"], f"{where}: rotate by 1..{IN_CONTEXT_KEYS} slots, {lowd}; {how}"),
        "ops.pmul_s": ProfileValue(ops["pmul_s"], f"{where}: mul_plain by a plaintext encoded at the same level, "
                                                 f"{top}; {how}"),
        "ops.add_s": ProfileValue(ops["add_s"], f"{where}: add of two ciphertexts, each a {top}; {how}"),
        "ops.add_low_s": ProfileValue(ops["add_low_s"], f"{where}: add of two ciphertexts, each a {lowd}; {how}"),
        "ops.rescale_s": ProfileValue(ops["rescale_s"], f"{where}: rescale of a mul_plain product at level {lv} "
                                                       f"(to level {lv - 1}); {how}"),
        "ciphertext.bytes": ProfileValue(ops["bytes"], f"{where}: len(serialize_ciphertext) of a {top} "
                                                      "(framed, as bsgs_run moves it)"),
        "ciphertext.bytes_low": ProfileValue(ops["bytes_low"], f"{where}: len(serialize_ciphertext) of a {lowd}"),
        "ciphertext.serialize_s": ProfileValue(ops["serialize_s"], f"{where}: serialize_ciphertext of a {top}; "
                                                                  f"{how}"),
        "ciphertext.deserialize_s": ProfileValue(ops["deserialize_s"], f"{where}: deserialize_ciphertext of a "
                                                                      f"{top} (checksum + parse); {how}"),
    }


def _link_values(link: dict[str, float], dask_where: str) -> dict[str, ProfileValue]:
    """The link fields: idle latency and bandwidth, and (where measured) with the sender busy."""
    values = {
        "link.latency_s": ProfileValue(link["latency_s"], f"{dask_where}: gap of an 8-byte payload between tasks "
                                                         "on two workers minus overhead.task_s"),
        "link.bandwidth_Bps": ProfileValue(link["bandwidth_Bps"], (
            f"{dask_where}: (large - ct) bytes / (gap(large) - gap(ct)), payloads of "
            f"{int(link['ct_payload_bytes'])} B (one serialised ciphertext) and {int(link['large_bytes'])} B "
            "of random bytes between tasks on two workers")),
    }
    if "busy_bandwidth_Bps" in link:
        values["link.busy_latency_s"] = ProfileValue(link["busy_latency_s"], (
            f"{dask_where}: as link.latency_s, with the sending worker computing after the producer (GIL-holding "
            f"calls of {link['busy_call_s'] * 1e3:.2f} ms, a rotation, as BSGS workers do): gap(one ciphertext) - "
            "overhead.task_s - its bytes / link.busy_bandwidth_Bps"))
        values["link.busy_bandwidth_Bps"] = ProfileValue(link["busy_bandwidth_Bps"], (
            f"{dask_where}: as link.bandwidth_Bps, with the sending worker computing: (batch - ct) bytes / "
            f"(gap(batch) - gap(ct)), a batch of {BUSY_BATCH} ciphertexts ({int(link['busy_batch_bytes'])} B)"))
    return values


def _slowdown_value(ops: dict[str, float], where: str) -> dict[str, ProfileValue]:
    if "concurrent_slowdown" not in ops:
        return {}
    return {"overhead.concurrent_slowdown": ProfileValue(ops["concurrent_slowdown"], (
        f"{where}: median ratio of rotate/mul_plain/rescale times with all {int(ops['concurrent_workers'])} "
        "workers timing ops at once to one worker alone (the devices of a multi-worker run share this "
        "machine's cores and memory with each other, the scheduler and the client)"))}


def _task_value(link: dict[str, float], dask_where: str) -> dict[str, ProfileValue]:
    return {"overhead.task_s": ProfileValue(link["task_s"], (
        f"{dask_where}: gap between a pinned task's end and the start of a pinned task depending on it "
        "on the SAME worker (scheduler round trip per dependent task; no data moved, not the "
        "client's round trip)"))}


def _meta(params: CkksParams, be_name: str, lib: str, ring: str, info: Mapping[str, object], date: str, command: str,
          where_link: str, link: dict[str, float]) -> dict[str, object]:
    """The profile's ``[meta]``: what was measured, where, when, with what, by which command."""
    return {
        "name": f"measured-ckks-{be_name}-n{params.poly_modulus_degree}",
        "kind": "measured",
        "description": (f"CKKS op costs ({lib}, {ring}) on one thread of this machine and the cost of moving "
                        "serialised ciphertexts between two Dask worker processes, for the multi-device BSGS "
                        "model (issue 7)"),
        "cpu": str(info["cpu"]),
        "cores": str(info["cores"]),
        "date": date,
        "command": command,
        "backend": be_name,
        "library": lib,
        "dask": where_link,
        "coeff_mod_bits": str(list(params.coeff_mod_bits)),
        "scale_bits": str(params.scale_bits),
        "python": str(info["python"]),
        "link_raw_s": {k: float(v) for k, v in link.items()},
    }


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m cryptoffload.calibrate.ckks [--out FILE] [--repeats R]``."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="calibration/ckks.toml", help="profile to write")
    p.add_argument("--repeats", type=int, default=7, help="samples per value (the median is kept)")
    p.add_argument("--quiet", action="store_true")
    args = p.parse_args(argv)
    cmd = "python -m cryptoffload.calibrate.ckks " + " ".join(sys.argv[1:] if argv is None else argv)
    try:
        calibrate_ckks(args.out, repeats=args.repeats, progress=not args.quiet,
                       command=cmd.strip())
    except CryptoffloadError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
