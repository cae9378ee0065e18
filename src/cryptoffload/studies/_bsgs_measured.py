"""The measured half of the bsgs-multidevice study: real BSGS products with SEAL ciphertexts on
Dask workers, interleaved in rounds with the timings the model is given, the model's
prediction for each, and the claims the comparison supports.

Why apart from the study: the study module prices the paper's setup and bootstrapping's stages
and assembles tables, plots and claims; this part runs the engine (``engines/bsgs_run.py``) and
the calibration (``calibrate/ckks.py``) on this machine, checks every product against the
plaintext one, and predicts each from costs re-timed in the same minutes -- nothing fitted to
the runs.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from cryptoffload.errors import CryptoffloadError
from cryptoffload.policies import bsgs_tuner as tuner
from cryptoffload.profiles.loader import load_profile
from cryptoffload.report.result import Claim
from cryptoffload.sim.op_dag import DagCosts
from cryptoffload.workloads.bsgs import STRATEGIES, BsgsShape

if TYPE_CHECKING:
    from cryptoffload.studies.bsgs_multidevice import BsgsMultideviceConfig


@dataclass
class MeasuredRow:
    devices: int
    strategy: str
    baby: int
    predicted_s: float
    measured_s: float
    span_s: float
    max_error: float
    measured_min_s: float = 0.0
    measured_max_s: float = 0.0

    @property
    def error(self) -> float:
        return self.predicted_s / self.measured_s - 1.0

    @property
    def spread(self) -> float:
        """(max - min) / the measured value (median or minimum) of the wall times over the rounds."""
        return (self.measured_max_s - self.measured_min_s) / self.measured_s


#: how the rounds are summarised -- the median, or the minimum (the least disturbed round: on a
#: machine shared with other users' processes, the estimate closest to the undisturbed system)
STATISTICS = {"median": np.median, "min": np.min}
#: the link costs re-timed every round (measure_link; the busy ones when noise left them positive)
LINK_FIELDS = ("task_s", "latency_s", "busy_latency_s", "busy_bandwidth_Bps")
WINDOW_FIELDS = ("rotate_s", "rotate_low_s", "pmul_s", "add_s", "add_low_s", "rescale_s", "serialize_s",
                 "deserialize_s")


def measure(cfg: BsgsMultideviceConfig, out: Path,
            say: Callable[[str], None]) -> tuple[list[MeasuredRow], Any, str, DagCosts, list[float]]:
    """Calibrate (or load) a measured profile, run real products in rounds, re-time the op costs,
    the concurrent slowdown, the scheduler round trip and the transfer latency once per round,
    and predict each product with their medians over the rounds (the profile's bandwidth and
    sizes). Returns the rows, the profile, its path, the costs used and the per-round slowdowns."""
    from cryptoffload.crypto.ckks import make_backend
    from cryptoffload.engines.bsgs_run import SWITCH_INTERVAL_S, run_bsgs
    from cryptoffload.engines.dask import DaskRunner
    from cryptoffload.calibrate.ckks import (
        DEFAULT_CALIBRATION_PARAMS,
        calibrate_ckks,
        measure_link,
        measure_ops_on_worker,
    )
    from cryptoffload.workloads.bsgs import diagonals_of, split

    workers = max(cfg.measured_devices)
    rows: list[MeasuredRow] = []
    with DaskRunner(cfg.scheduler, workers=workers) as runner:
        if cfg.calibration:
            prof_path = Path(cfg.calibration)
        else:
            say("calibrating CKKS op and transfer costs on this machine")
            prof_path = calibrate_ckks(out / "calibration" / "ckks.toml", repeats=3 if cfg.quick else 7,
                                       progress=False, runner=runner)
        profile = load_profile(prof_path)
        costs = DagCosts.from_profile(profile)
        params = DEFAULT_CALIBRATION_PARAMS
        backend = make_backend("seal", params)
        slots = backend.slots
        level = params.levels
        rng = np.random.default_rng(cfg.seed)
        matrix = rng.uniform(-1, 1, (slots, slots)) / 8
        x = rng.uniform(-1, 1, slots)
        steps: set[int] = set()
        for bs in cfg.measured_babies:
            steps.update(BsgsShape(cfg.measured_diagonals, bs, slots=slots, level=level).rotation_steps())
        backend.keygen(rotations=sorted(steps))
        ct = backend.encrypt(x)
        configs = []
        for n in cfg.measured_devices:
            for strategy in (("replicate",) if n == 1 else STRATEGIES):
                for bs in cfg.measured_babies:
                    shape = BsgsShape(cfg.measured_diagonals, bs, slots=slots, level=level)
                    diags = diagonals_of(matrix, shape)
                    configs.append((n, strategy, bs, shape, diags, split(shape, n, strategy),
                                    _plain_product(diags, shape, x)))
        # Rounds over every configuration rather than repeats back to back: the machine's speed
        # drifts over minutes, and it must not drift into one configuration only.
        walls: list[list[float]] = [[] for _ in configs]
        spans: list[list[float]] = [[] for _ in configs]
        errs = [0.0] * len(configs)
        addrs = runner.worker_addresses()
        worker0 = addrs[0]
        window: list[dict[str, float]] = []
        slowdowns: list[float] = []
        links: list[dict[str, float]] = []
        shares: list[tuple[float, float]] = []
        for rnd in range(cfg.repeats):
            # op costs re-timed every round on a worker, alone and with every worker busy at once:
            # the calibration then spans the same minutes as the runs it predicts. The machine's
            # speed drifts by 20-30 %, and the CPU share two workers get together -- the 2 cores are
            # shared with other users' processes -- swings from ~2 cores to less than one.
            window.append(runner.submit(measure_ops_on_worker, params, "seal", 3, worker=worker0).result()[0])
            shares.append(cpu_share(runner, max(cfg.measured_devices)))
            if len(addrs) > 1:
                slowdowns.append(concurrent_slowdown(runner, params, window[-1]))
                # the scheduler round trip and the transfer latency too: under load, every hop
                # between processes waits for a time slice, and the 2-worker runs have more hops
                with contextlib.suppress(CryptoffloadError):
                    link = measure_link(runner, int(window[-1]["bytes"]), 2, rounds=1,
                                        busy_call_s=window[-1]["rotate_s"], switch_interval_s=SWITCH_INTERVAL_S)
                    links.append({f: link[f] for f in LINK_FIELDS if f in link})
            for k, (n, strategy, bs, shape, diags, sp, want) in enumerate(configs):
                if rnd == 0:
                    say(f"measured: {n} worker(s), {strategy}, bs = {bs} ({cfg.repeats} rounds)")
                res = run_bsgs(runner, backend, diags, shape, sp, ct, repeats=1, warmup=1 if rnd == 0 else 0)
                got = backend.decrypt(backend.deserialize_ciphertext(res.result))
                errs[k] = max(errs[k], float(np.max(np.abs(np.asarray(got)[:slots] - want))))
                walls[k].append(res.wall_s)
                spans[k].append(res.span_s)
        stat = STATISTICS[cfg.statistic]
        costs = replace(costs, **{f: float(stat([w[f] for w in window])) for f in WINDOW_FIELDS})
        if links:
            costs = replace(costs, **{f: float(stat([lk[f] for lk in links])) for f in ("task_s", "latency_s")})
            busy = [lk for lk in links if "busy_bandwidth_Bps" in lk]
            if busy:     # from the rounds where noise left both positive
                costs = replace(costs, **{f: float(stat([lk[f] for lk in busy]))
                                          for f in ("busy_latency_s", "busy_bandwidth_Bps")})
        if slowdowns:
            costs = replace(costs, concurrent_slowdown=max(1.0, float(stat(slowdowns))))
        for k, (n, strategy, bs, shape, _, _, _) in enumerate(configs):
            pred = (tuner.evaluate(shape, n, strategy, bs, costs, batched_sends=True)[0].predicted_s
                    + client_tail_s(costs))
            rows.append(MeasuredRow(n, strategy, bs, pred, float(stat(walls[k])), float(stat(spans[k])),
                                    errs[k], float(min(walls[k])), float(max(walls[k]))))
    return rows, profile, str(prof_path), costs, slowdowns, shares


def _spin(seconds: float) -> float:
    """CPU seconds this worker process got while spinning for ``seconds`` of wall time."""
    c0, w0 = time.process_time(), time.perf_counter()
    x = 0
    while time.perf_counter() - w0 < seconds:
        x += 1
    return (time.process_time() - c0) / (time.perf_counter() - w0)


def cpu_share(runner: Any, workers: int, seconds: float = 0.2) -> tuple[float, float]:
    """``(alone, together)``: the CPU a worker gets per wall second, spinning for about as long
    as one product runs -- alone, and with ``workers`` workers spinning at once (their mean).
    On an idle machine both are ~1; when the cores are shared with other users' processes they
    drop, and ``together`` below ``alone / workers`` means more workers cannot go faster."""
    addrs = runner.worker_addresses()[:workers]
    alone = runner.submit(_spin, seconds, worker=addrs[0]).result()
    if len(addrs) < 2:
        return alone, alone
    futs = [runner.submit(_spin, seconds, worker=a) for a in addrs]
    return alone, float(np.mean([f.result() for f in futs]))


def concurrent_slowdown(runner: Any, params: Any, alone: dict[str, float]) -> float:
    """Op time with every worker timing the same ops at once over the time alone (``alone``,
    just measured on one worker): the median ratio over rotations, products and rescales,
    every worker counted. 1 means each worker has a core of its own; 2 on two workers means
    they share one core's worth of CPU -- two workers can then not beat one."""
    from cryptoffload.calibrate.ckks import measure_ops_on_worker

    futs = [runner.submit(measure_ops_on_worker, params, "seal", 3, worker=a) for a in runner.worker_addresses()]
    together = [f.result()[0] for f in futs]
    ratios = [t[k] / alone[k] for t in together for k in ("rotate_s", "pmul_s", "rescale_s") if alone[k] > 0]
    return float(np.median(ratios))


def parallelism(shares: Sequence[tuple[float, float]], workers: int = 2) -> float:
    """The speedup the CPU allowed ``workers`` workers over one: ``workers x`` the share each got
    together over the share one got alone (median over the rounds of :func:`cpu_share`)."""
    return float(np.median([workers * b / a for a, b in shares if a > 0])) if shares else float("nan")


def scaling_rows(measured: Sequence[MeasuredRow], shares: Sequence[tuple[float, float]]) -> list[list[Any]]:
    """Per bs: the measured speedup of two workers over one (replicated baby steps), the
    model's, and the parallelism the CPU allowed (:func:`parallelism`)."""
    one = {r.baby: r for r in measured if r.devices == 1}
    rows = []
    for r in measured:
        if r.devices == 2 and r.strategy == "replicate" and r.baby in one:
            o = one[r.baby]
            rows.append([r.baby, o.measured_s / r.measured_s, o.predicted_s / r.predicted_s, parallelism(shares)])
    return rows


#: the model's error a measured configuration is held to (issue 16)
MODEL_TARGET = 0.20


def measured_claims(measured: Sequence[MeasuredRow], shares: Sequence[tuple[float, float]]) -> list[Claim]:
    """The strongest predicted agreement and the largest divergence of the measured runs, the
    divergence with the reason the evidence supports: the CPU the workers got when other
    processes took the cores, else the costs of moving baby steps between busy workers."""
    within = [r for r in measured if abs(r.error) <= MODEL_TARGET]
    med = float(np.median([abs(r.error) for r in measured])) * 100
    out = [Claim(paper="(not in the paper) the model predicts real distributed runs",
                 ours=f"model within {MODEL_TARGET:.0%} of {len(within)} of {len(measured)} measured Dask "
                      f"configurations (median |error| {med:.1f} %)", provenance="simulated",
                 table="model_vs_measured", key=[measured[0].devices, measured[0].strategy, measured[0].baby],
                 kind="agreement")]
    worst = max(measured, key=lambda r: abs(r.error))
    together = min((b for _, b in shares), default=1.0)
    if together < 0.8:
        why = (f"other processes took the cores (CPU share of each of two busy workers down to {together:.2f}); "
               f"a prediction from costs timed seconds apart cannot follow that")
    elif worst.devices > 1 and worst.strategy != "replicate":
        why = ("the baby steps cross while the workers compute in SEAL, which holds the GIL, so each message "
               "waits for the worker's event loop (priced from a busy-sender link measurement, which varies from "
               "round to round), and Dask's scheduler and event loops take CPU from the compute on the shared "
               "cores, which the model does not charge")
    else:
        why = ("Dask's scheduler and the workers' event loops take CPU from the compute on the cores the workers "
               "share, which the model does not charge")
    out.append(Claim(paper="(not in the paper) the model predicts real distributed runs",
                     ours=f"|error| {abs(worst.error) * 100:.1f} % at {worst.devices} worker(s), {worst.strategy}, "
                          f"bs = {worst.baby} (predicted {worst.predicted_s * 1e3:.0f} ms, measured "
                          f"{worst.measured_s * 1e3:.0f} ms); run-to-run spread up to "
                          f"{max(r.spread for r in measured) * 100:.0f} %", provenance="simulated",
                     table="model_vs_measured", key=[worst.devices, worst.strategy, worst.baby], kind="divergence",
                     why=why))
    return out


def client_tail_s(costs: DagCosts) -> float:
    """What a Dask client waits for after the product exists on device 0 and the model's
    makespan ends: the result's serialisation (for the client) and one scheduler notification."""
    return costs.serialize_s + costs.task_s


def _plain_product(diags: np.ndarray, shape: BsgsShape, x: np.ndarray) -> np.ndarray:
    from cryptoffload.workloads.bsgs import matrix_of

    return matrix_of(diags, shape) @ x
