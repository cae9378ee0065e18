"""A bootstrap's CoeffToSlot/SlotToCoeff stages split over Dask workers, beside the multi-device
model priced with the run's own op costs: the runs, their costs and the predictions (issue 33;
the tables are in ``_bsgs_bootstrap_measured``).

Why apart from the tables: the bsgs-multidevice study runs this at a small insecure ring in
quick mode, ``benchmarks/bootstrap_split.py`` at N = 2^12 on 1, 2 and 4 workers; both need the
same runs, costs and predictions.

One run (:func:`measure_split`):

1. *Keys* (:func:`prepare`): our RNS-CKKS backend (``gpu-twin``) with the plan's bootstrap keys
   and the rotations of every candidate baby-step count of the stages run (powers of two from
   2 to twice the plan's count); each stage's description
   (:meth:`~cryptoffload.crypto.ckks.bootstrap.driver.Bootstrapper.stage_encodings`) and one
   input ciphertext at its level (random complex slots, never a seeded key).
2. *Calibration* (untimed, not reported): each stage's part costs on one worker alone and on
   ``k`` workers at once, and the link; per stage and worker count ``n`` the model then prices
   every candidate on ``n`` workers and the cheapest is the ``tuned`` baby-step count;
   ``naive`` keeps the plan's count (OpenFHE's rule, or the planner's one-device choice) on
   every ``n`` -- the multi-device paper's pair (its Table 1: naive vs tuned per device count).
3. *Rounds* (at least :data:`MIN_SAMPLES`): each re-times the link and, per stage, the part
   costs alone and with ``k`` workers at once, then runs every configuration (worker count x
   naive/tuned) once, interleaved, each decrypted against the stage computed in one process.
   Each round's costs alone price that round's prediction, so measured and predicted times both
   have one sample per round; the figures are their means with t-intervals
   (:func:`t_interval`).

The model (*simulated*): the split's op DAG (:func:`~cryptoffload.workloads.bsgs.build_dag` of
:meth:`~cryptoffload.engines.bootstrap_run.StageWork.shape`, replicated baby steps, hoisted)
scheduled by :mod:`cryptoffload.sim.op_dag` (:func:`~cryptoffload.policies.bsgs_tuner.evaluate`)
with the stage's parts (:func:`~cryptoffload.engines.bootstrap_run.stage_part_costs`) as its op
costs: the first baby step ``baby_first_s`` (the DAG's full rotation), each further one
``baby_s`` (its hoisted rotation), each product ``term_s``, each giant step's ModDown
``moddown_s`` (the DAG's per-giant-step rescale), each giant rotation ``giant_rotate_s`` (one
level below in the DAG: what a ModDown leaves), the additions of partial sums ``add_s`` (the
inner sums' additions happen inside the extended-basis products: 1 ns in the DAG), a partial
sum's bytes and (de)serialisation; the scheduler round trip, latency and bandwidth measured
between the workers (:func:`~cryptoffload.calibrate.ckks.measure_link`); the concurrent slowdown
the part timings show with ``n`` workers at once; then the result's rescale by ``q`` and its
serialisation. The DAG starts each device with two tasks (baby steps, giant steps) where the
execution runs one: the second round trip stands for the result's notification to the client.
"""

from __future__ import annotations

import math
import os
import statistics
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from cryptoffload.crypto.ckks.bootstrap.plan import BootstrapPlan
from cryptoffload.errors import ConfigError, CryptoffloadError
from cryptoffload.policies import bsgs_tuner as tuner
from cryptoffload.sim.op_dag import DagCosts

if TYPE_CHECKING:
    from cryptoffload.crypto.ckks import Ciphertext, CkksBackend
    from cryptoffload.engines.bootstrap_run import StageWork
    from cryptoffload.engines.dask import DaskRunner

#: fewest rounds a t-interval is computed from (issue 35's rule)
MIN_SAMPLES = 5
#: two-sided 95 % quantiles of Student's t for 1..30 degrees of freedom (t_{0.975, df})
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
         2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)
#: the DAG's addition inside a giant step's inner sum: done inside the extended-basis products (term_s)
IN_PRODUCT_ADD_S = 1e-9
KINDS = ("naive", "tuned")
Q0_BITS, LEVEL_BITS = 60, 59


def t975(df: int) -> float:
    """``t_{0.975}`` with ``df`` degrees of freedom: the table to 30, then the Cornish-Fisher
    expansion about the normal quantile (within 0.001 there)."""
    if df < 1:
        raise ValueError(f"a t quantile needs at least 1 degree of freedom, got {df}")
    if df <= len(_T975):
        return _T975[df - 1]
    z = 1.959964
    return z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2)


@dataclass(frozen=True)
class Interval:
    """A mean and its two-sided 95 % t-interval (``low``/``high`` ``None`` with fewer than
    :data:`MIN_SAMPLES` samples: no band is claimed from them)."""

    mean: float
    low: float | None
    high: float | None
    samples: int

    def contains(self, value: float) -> bool | None:
        return None if self.low is None or self.high is None else self.low <= value <= self.high


def t_interval(samples: Sequence[float]) -> Interval:
    xs = [float(v) for v in samples]
    if not xs:
        raise ValueError("a t-interval of no samples")
    mean = statistics.fmean(xs)
    if len(xs) < MIN_SAMPLES:
        return Interval(mean, None, None, len(xs))
    half = t975(len(xs) - 1) * statistics.stdev(xs) / math.sqrt(len(xs))
    return Interval(mean, mean - half, mean + half, len(xs))


@dataclass(frozen=True)
class SplitSettings:
    """What :func:`measure_split` runs: the ring (insecure study parameters: ``q_0`` 60 bits,
    ``levels`` of 59, ``dnum``), the plan, the stages (names such as ``"CoeffToSlot 1"``; empty:
    every stage), the worker counts, the rounds and the timed passes of the part costs per round."""

    ring: int = 2048
    levels: int = 17
    plan: BootstrapPlan = BootstrapPlan((2, 2))
    stages: tuple[str, ...] = ()
    workers: tuple[int, ...] = (1, 2)
    rounds: int = MIN_SAMPLES
    passes: int = 1
    dnum: int = 3

    def validate(self) -> None:
        if self.ring not in (1024, 2048, 4096, 8192):
            raise ConfigError(f"the split stages run at an insecure study ring of 2^10 to 2^13, got N = {self.ring}")
        if not self.workers or any(isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 16
                                   for n in self.workers):
            raise ConfigError(f"worker counts are 1 to 16, got {self.workers!r}")
        if self.rounds < 1 or self.passes < 1:
            raise ConfigError(f"rounds and passes must be at least 1, got {self.rounds} and {self.passes}")


@dataclass
class Case:
    """One stage to run: its description with the plan's baby steps, its input, the candidates."""

    name: str
    work: StageWork
    ct: Ciphertext
    candidates: tuple[int, ...]
    refs: dict[int, Any] = field(default_factory=dict)

    @property
    def naive(self) -> int:
        return self.work.shape().baby


@dataclass
class Prepared:
    backend: CkksBackend
    cases: list[Case]
    setup_s: dict[str, float]
    key_bytes: int


def params_for(settings: SplitSettings) -> Any:
    from cryptoffload.crypto.ckks import CkksParams
    from cryptoffload.crypto.ckks.gpu.dnum import params_for_dnum

    chain = (Q0_BITS,) + (LEVEL_BITS,) * settings.levels + (60,)
    return params_for_dnum(CkksParams(settings.ring, chain, LEVEL_BITS), settings.dnum)


def candidates(grid_baby: int, diagonals: int) -> tuple[int, ...]:
    """Baby-step counts a stage is tuned over: powers of two from 2 to twice the plan's (and at
    most its diagonals)."""
    return tuple(b for b in (1 << k for k in range(1, 16)) if b <= min(2 * grid_baby, diagonals))


def prepare(settings: SplitSettings) -> Prepared:
    """The client's keys (see the module docstring) and one case per stage run."""
    import time

    from cryptoffload.crypto.ckks import make_backend
    from cryptoffload.crypto.ckks.bootstrap import dft
    from cryptoffload.crypto.ckks.bootstrap.driver import transforms
    from cryptoffload.engines.bootstrap_run import StageWork

    settings.validate()
    _, cts, stc = transforms(settings.plan, settings.ring)
    stages = [st for st in cts + stc if not settings.stages or f"{st.transform} {st.index}" in settings.stages]
    if not stages:
        raise ConfigError(f"no stage of plan {settings.plan} is named {settings.stages!r}")
    cands = {f"{st.transform} {st.index}": candidates(st.baby, len(st.diagonals)) for st in stages}
    steps: set[int] = set()
    for st in stages:
        plain = StageWork(st, 1, 1.0)
        for b in cands[f"{st.transform} {st.index}"]:
            steps.update(plain.with_baby(b).rotation_steps())
    t0 = time.perf_counter()
    be = make_backend("gpu-twin", params_for(settings), insecure_study=True)
    be.keygen(rotations=sorted(steps))
    took = be.bootstrap_setup(settings.plan)
    rng = np.random.default_rng()
    cases = []
    for transform in (dft.COEFF_TO_SLOT, dft.SLOT_TO_COEFF):
        for spec in be.bootstrapper.stage_encodings(transform):
            name = f"{spec.stage.transform} {spec.stage.index}"
            if name in cands:
                x = (rng.uniform(-1, 1, be.slots) + 1j * rng.uniform(-1, 1, be.slots)) * 0.5
                ct = be.encrypt_complex(x, level=spec.level, scale=float(be.primes[spec.level]))
                cases.append(Case(name, StageWork.of(spec), ct, cands[name]))
    setup = {"keys_and_setup_s": time.perf_counter() - t0, **took}
    return Prepared(be, cases, setup, int(sum(be.key_bytes().values())))


# ---- costs and the model ------------------------------------------------------------------------
@dataclass
class StageCosts:
    """One stage's part costs in one round: alone on worker 0, and per ``k`` with ``k`` workers
    timing at once (one dict per worker)."""

    alone: dict[str, float]
    together: dict[int, list[dict[str, float]]] = field(default_factory=dict)

    def slowdown(self, n: int) -> float:
        """Part timings with ``n`` workers at once over alone (median over the workers; never
        below 1; 1 on one worker)."""
        if n <= 1 or n not in self.together:
            return 1.0
        return max(1.0, statistics.median(t["calls_s"] / self.alone["calls_s"] for t in self.together[n]))


def dag_costs(c: StageCosts, n: int, link: dict[str, float] | None) -> DagCosts:
    """The op-DAG model's costs for ``n`` workers from a stage's parts (module docstring)."""
    a, lk = c.alone, link or {}
    busy = {"busy_latency_s": lk["busy_latency_s"], "busy_bandwidth_Bps": lk["busy_bandwidth_Bps"]} \
        if "busy_bandwidth_Bps" in lk and "busy_latency_s" in lk else {}
    return DagCosts(rotate_s=a["baby_first_s"], hoisted_rotate_s=a["baby_s"], pmul_s=a["term_s"],
                    add_s=IN_PRODUCT_ADD_S, rescale_s=a["moddown_s"], rotate_low_s=a["giant_rotate_s"],
                    add_low_s=a["add_s"], bytes=a["bytes"], bytes_low=a["bytes"], serialize_s=a["serialize_s"],
                    deserialize_s=a["deserialize_s"], task_s=lk.get("task_s", 0.0),
                    latency_s=lk.get("latency_s", 0.0), bandwidth_Bps=lk.get("bandwidth_Bps", 1e12),
                    concurrent_slowdown=c.slowdown(n), name="bootstrap stage parts, measured", kind="measured",
                    **busy)


def predict_s(work: StageWork, n: int, c: StageCosts, link: dict[str, float] | None, *, dask: bool = True) -> float:
    """The model's wall time of ``work`` split over ``n`` workers (replicated baby steps), with
    the result's rescale and (``dask``: for the client) its serialisation."""
    shape = work.shape()
    made = tuner.evaluate(shape, n, "replicate", shape.baby, dag_costs(c, n, link), hoisted=True)[0].predicted_s
    return made + c.alone["rescale_s"] + (c.alone["serialize_s"] if dask else 0.0)


def tune(case: Case, costs: StageCosts, link: dict[str, float] | None, workers: Sequence[int]) -> dict[int, int]:
    """Per worker count, the candidate baby-step count the model prices fastest (ties: the plan's,
    then the smaller)."""
    out = {}
    for n in workers:
        out[n] = min(case.candidates, key=lambda b: (predict_s(case.work.with_baby(b), n, costs, link),
                                                     b != case.naive, b))
    return out


# ---- the runs -----------------------------------------------------------------------------------
@dataclass
class Samples:
    """One configuration's samples, one per round."""

    stage: str
    workers: int
    kind: str
    bs: int
    giants: int
    active: int
    walls: list[float] = field(default_factory=list)
    spans: list[float] = field(default_factory=list)
    predicted: list[float] = field(default_factory=list)
    bits: list[float] = field(default_factory=list)


@dataclass
class SplitRun:
    """What :func:`measure_split` found: the samples per configuration, the tuned counts, each
    round's costs (per stage) and link, and the load average (1 minute) at each round's start."""

    settings: SplitSettings
    samples: list[Samples]
    tuned: dict[str, dict[int, int]]
    costs: list[dict[str, StageCosts]]
    links: list[dict[str, float] | None]
    loads: list[float]
    setup_s: dict[str, float]
    key_bytes: int
    workers_on_machine: int


def _link(runner: DaskRunner, prep: Prepared, call_s: float) -> dict[str, float] | None:
    """The link between two workers (``None``: fewer than two, or too noisy this round)."""
    from cryptoffload.calibrate.ckks import measure_link
    from cryptoffload.engines.bootstrap_run import SWITCH_INTERVAL_S

    if len(runner.worker_addresses()) < 2:
        return None
    nbytes = max(len(prep.backend.serialize_ciphertext(c.ct)) for c in prep.cases)
    try:
        return measure_link(runner, nbytes, 2, rounds=1, busy_call_s=call_s, switch_interval_s=SWITCH_INTERVAL_S)
    except CryptoffloadError:
        return None


def _stage_costs(session: Any, workers: Sequence[int], passes: int) -> StageCosts:
    c = StageCosts(session.costs(1, passes)[0])
    for k in sorted({n for n in workers if n > 1}):
        c.together[k] = session.costs(k, passes)
    return c


def _reference(prep: Prepared, case: Case, bs: int) -> Any:
    from cryptoffload.engines.bootstrap_run import stage_in_process

    if bs not in case.refs:
        case.refs[bs] = stage_in_process(prep.backend, case.work.with_baby(bs), case.ct)
    return case.refs[bs]


def _stage_round(runner: DaskRunner, prep: Prepared, case: Case, tuned: dict[int, int], settings: SplitSettings,
                 link: dict[str, float] | None, table: dict[tuple[str, int, str], Samples]) -> StageCosts:
    """One round of one stage: its costs, then every configuration once (naive and tuned per
    worker count; a tuned count equal to the plan's is the same run), the first run of each
    baby-step count preceded by an untimed one (the sessions are set up afresh every round)."""
    from cryptoffload.engines.bootstrap_run import StageSession, verify_stage

    be, top = prep.backend, max(settings.workers)
    with ExitStack() as stack:
        sessions = {b: stack.enter_context(StageSession(runner, be, case.work.with_baby(b), case.ct, workers=top))
                    for b in sorted({case.naive, *tuned.values()})}
        costs = _stage_costs(sessions[case.naive], settings.workers, settings.passes)
        used: set[int] = set()
        for n in settings.workers:
            runs: dict[int, Any] = {}
            for kind, b in (("naive", case.naive), ("tuned", tuned[n])):
                if b not in runs:
                    runs[b] = sessions[b].run(n, warmup=0 if b in used else 1)
                    used.add(b)
                res, work = runs[b], case.work.with_baby(b)
                key = (case.name, n, kind)
                if key not in table:
                    table[key] = Samples(case.name, n, kind, b, res.giants, res.active_devices)
                s = table[key]
                s.walls.append(res.wall_s)
                s.spans.append(res.span_s)
                s.predicted.append(predict_s(work, n, costs, link))
                s.bits.append(verify_stage(be, res, _reference(prep, case, b)))
    return costs


def calibrate_and_tune(runner: DaskRunner, prep: Prepared, settings: SplitSettings
                       ) -> tuple[dict[str, dict[int, int]], dict[str, float] | None]:
    """The untimed calibration pass (module docstring, 2): the tuned count per stage and worker
    count, and the link it priced them with."""
    from cryptoffload.engines.bootstrap_run import StageSession

    measured = {}
    for case in prep.cases:
        with StageSession(runner, prep.backend, case.work, case.ct, workers=max(settings.workers)) as s:
            measured[case.name] = _stage_costs(s, settings.workers, settings.passes)
    link = _link(runner, prep, max(c.alone["giant_rotate_s"] for c in measured.values()))
    return {case.name: tune(case, measured[case.name], link, settings.workers) for case in prep.cases}, link


def measure_split(runner: DaskRunner, settings: SplitSettings, say: Callable[[str], None],
                  prep: Prepared | None = None) -> SplitRun:
    """Prepare (unless given), calibrate and tune, then the rounds (see the module docstring). A
    round whose link measurement noise refused is priced with the latest link measured."""
    prep = prep or prepare(settings)
    tuned, link = calibrate_and_tune(runner, prep, settings)
    table: dict[tuple[str, int, str], Samples] = {}
    costs: list[dict[str, StageCosts]] = []
    links: list[dict[str, float] | None] = []
    loads: list[float] = []
    for r in range(settings.rounds):
        say(f"bootstrap stages on Dask workers: round {r + 1}/{settings.rounds}")
        loads.append(os.getloadavg()[0])
        call_s = max(c.alone["giant_rotate_s"] for c in costs[-1].values()) if costs else 0.01
        fresh = _link(runner, prep, call_s)
        links.append(fresh)
        link = fresh or link
        costs.append({case.name: _stage_round(runner, prep, case, tuned[case.name], settings, link, table)
                      for case in prep.cases})
    return SplitRun(settings, list(table.values()), tuned, costs, links, loads, prep.setup_s, prep.key_bytes,
                    len(runner.worker_addresses()))


# ---- one bootstrap, per phase, beside the model of its stages ----------------------------------------
@dataclass
class PhaseRun:
    """Bootstraps in this process, one per round: seconds per phase, bits of precision, and the
    model's one-device time of each transform's stages priced with that round's part costs
    (timed in this process beside the bootstrap)."""

    phases: list[dict[str, float]] = field(default_factory=list)
    mean_bits: list[float] = field(default_factory=list)
    predicted: list[dict[str, float]] = field(default_factory=list)
    stages: dict[str, int] = field(default_factory=dict)     # transform -> stages priced


def measure_phases(prep: Prepared, rounds: int, passes: int, say: Callable[[str], None]) -> PhaseRun:
    """``rounds`` bootstraps of a fresh ciphertext at level 1 (real values in [-1, 1]), each
    followed by every stage's part costs (:func:`~cryptoffload.engines.bootstrap_run.stage_part_costs`)
    on an input at its level, which price the model's prediction of that round."""
    from cryptoffload.crypto.ckks.bootstrap import dft
    from cryptoffload.crypto.ckks.bootstrap.precision import precision
    from cryptoffload.engines.bootstrap_run import StageWork, stage_part_costs

    be = prep.backend
    boot = be.bootstrapper
    rng = np.random.default_rng()
    out = PhaseRun()
    inputs = {}
    for transform in (dft.COEFF_TO_SLOT, dft.SLOT_TO_COEFF):
        specs = boot.stage_encodings(transform)
        out.stages[transform] = len(specs)
        for spec, enc in zip(specs, boot.encoded(transform)):
            z = rng.uniform(-1, 1, be.slots) * 0.5
            inputs[(transform, spec.stage.index)] = (spec, enc, be.encrypt_complex(z, level=spec.level,
                                                                                     scale=float(be.primes[spec.level])))
    for r in range(rounds):
        say(f"bootstrap per phase: round {r + 1}/{rounds}")
        x = rng.uniform(-1, 1, be.slots)
        fresh = be.bootstrap(be.encrypt(x, level=1))
        run = be.last_bootstrap
        assert run is not None
        out.phases.append(dict(run.seconds))
        out.mean_bits.append(precision(be.decrypt(fresh), x).mean_bits)
        pred = dict.fromkeys(out.stages, 0.0)
        for (transform, _), (spec, enc, ct) in inputs.items():
            parts = StageCosts(stage_part_costs(be, enc, ct, passes))
            pred[transform] += predict_s(StageWork.of(spec), 1, parts, None, dask=False)
        out.predicted.append(pred)
    return out
