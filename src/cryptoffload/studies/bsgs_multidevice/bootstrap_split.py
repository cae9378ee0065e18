"""A bootstrap's CoeffToSlot/SlotToCoeff stages split over Dask workers, beside the multi-device
model priced with the run's own op costs (issue 33): the runs, their costs and predictions, the
JSON record of a run, and the bsgs-multidevice study's tables, bands and verdicts made from it.

Why one module: the study (full mode: a fresh run at a small insecure ring; quick mode: the
stored record of ``benchmarks/bootstrap_split.py``) and the benchmark need the same runs, the
same record and the same tables, and the study-side code stays in one place.

One run (:func:`measure_split`):

1. *Keys* (:func:`prepare`): our RNS-CKKS backend (``gpu-twin``) with the plan's bootstrap keys
   and the rotations of every candidate baby-step count of the stages run (powers of two from
   2 to twice the plan's count); each stage's description
   (:meth:`~cryptoffload.crypto.ckks.bootstrap.driver.Bootstrapper.stage_encodings`) and one
   input ciphertext at its level (random complex slots, never a seeded key).
2. *Calibration* (untimed, not reported): each stage's part costs on one worker alone and on
   ``k`` workers at once, and the link; per stage and worker count ``n`` the model then prices
   every candidate on ``n`` workers and the cheapest is the ``tuned`` baby-step count;
   ``naive`` keeps the plan's count on every ``n`` -- the multi-device paper's pair (its
   Table 1: naive vs tuned per device count).
3. *Rounds* (at least :data:`~cryptoffload.profiles.sensitivity.MIN_SAMPLES` in full): each
   re-times the link and, per stage, the part costs alone and with ``k`` workers at once, then
   runs every configuration (worker count x naive/tuned) once, interleaved, each decrypted
   against the stage computed in one process. Each round's costs price that round's
   prediction, so measured and predicted times both have one sample per round.

The model (*simulated*): the split's op DAG (:func:`~cryptoffload.workloads.bsgs.build_dag` of
:meth:`~cryptoffload.engines.bootstrap_run.StageWork.shape`, replicated baby steps, hoisted)
scheduled by :mod:`cryptoffload.sim.op_dag` (:func:`~cryptoffload.policies.bsgs_tuner.evaluate`)
with the stage's parts (:func:`~cryptoffload.engines.bootstrap_run.stage_part_costs`) as its op
costs: the first baby step ``baby_first_s`` (the DAG's full rotation), each further one
``baby_s`` (its hoisted rotation), each product ``term_s``, each giant step's ModDown
``moddown_s`` (the DAG's per-giant-step rescale), each giant rotation ``giant_rotate_s``, the
additions of partial sums ``add_s`` (the inner sums' additions happen inside the extended-basis
products: 1 ns in the DAG), a partial sum's bytes and (de)serialisation; the scheduler round
trip, latency and bandwidth measured between the workers
(:func:`~cryptoffload.calibrate.ckks.measure_link`); the concurrent slowdown the part timings
show with ``n`` workers at once; then the result's rescale by ``q`` and its serialisation.

Bands: a configuration's predicted time moves with this run's noise -- the predictions priced
with each round's costs and the measured wall times, each a t-interval of its rounds
(:mod:`cryptoffload.profiles.sensitivity`), at the 4 corners, as ``measured_claims`` bands
the measured products. The speedup of tuning at ``n`` workers (naive over tuned, all stages
run, per round) is banded by its rounds' t-interval and judged beside the paper's Table 1
speedup (1.08x at N = 2; the paper's 1.22x and 1.42x at 4 and 8 stand beside rows this 2-core
machine cannot run) by the one rule (``report/verdicts.py``), against no tuning (1.0).
"""

from __future__ import annotations

import math
import os
import statistics
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Literal, Mapping, Protocol, Sequence

import numpy as np

from cryptoffload.errors import ConfigError, CryptoffloadError
from cryptoffload.policies import bsgs_tuner as tuner
from cryptoffload.profiles.sensitivity import MIN_SAMPLES, Band, Input, band, interval_text, measured_input
from cryptoffload.report.provenance import from_printed, provenance_word, stored_from
from cryptoffload.report.result import Table
from cryptoffload.report.rows import column, table_of
from cryptoffload.report.verdicts import Verdict
from cryptoffload.sim.op_dag import DagCosts
from cryptoffload.studies.bands import Banded
from cryptoffload.studies.bsgs_multidevice.measured_claims import MODEL_TARGET, standard_error
from cryptoffload.studies.bsgs_multidevice.paper import PAPER_DEVICES, PAPER_NAIVE, PAPER_SPEEDUP, PAPER_TUNED
from cryptoffload.studies.bsgs_multidevice.split_record import (KINDS, SPLIT_SECURITY, RecordRefused, SplitConfig,
                                                            SplitRecord, SplitSettings, json_object)
from cryptoffload.studies.verdicts import Judging, judge

if TYPE_CHECKING:
    from cryptoffload.crypto.ckks import Ciphertext, CkksBackend, CkksParams
    from cryptoffload.engines.bootstrap_run import StageRunResult, StageSession, StageWork
    from cryptoffload.engines.dask import DaskRunner

#: the DAG's addition inside a giant step's inner sum: done inside the extended-basis products (term_s)
IN_PRODUCT_ADD_S = 1e-9
Q0_BITS, LEVEL_BITS = 60, 59
#: the stored record of benchmarks/bootstrap_split.py, shipped as package data (the quick run's)
SPLIT_RESULT = "bootstrap_split.json"
SPLIT_MISSING = ("bootstrap stages on Dask workers: no stored record (cryptoffload/studies/data/bootstrap_split.json); "
                 "run benchmarks/bootstrap_split.py, or the study in full mode")


@dataclass
class Case:
    """One stage to run: its description with the plan's baby steps, its input, the candidates."""

    name: str
    work: StageWork
    ct: Ciphertext
    candidates: tuple[int, ...]
    refs: dict[int, Ciphertext] = field(default_factory=dict)

    @property
    def naive(self) -> int:
        return self.work.shape().baby


@dataclass
class Prepared:
    backend: CkksBackend
    cases: list[Case]
    setup_s: dict[str, float]
    key_bytes: int


def params_for(settings: SplitSettings) -> CkksParams:
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
    busy = "busy_bandwidth_Bps" in lk and "busy_latency_s" in lk
    return DagCosts(rotate_s=a["baby_first_s"], hoisted_rotate_s=a["baby_s"], pmul_s=a["term_s"],
                    add_s=IN_PRODUCT_ADD_S, rescale_s=a["moddown_s"], rotate_low_s=a["giant_rotate_s"],
                    add_low_s=a["add_s"], bytes=a["bytes"], bytes_low=a["bytes"], serialize_s=a["serialize_s"],
                    deserialize_s=a["deserialize_s"], task_s=lk.get("task_s", 0.0),
                    latency_s=lk.get("latency_s", 0.0), bandwidth_Bps=lk.get("bandwidth_Bps", 1e12),
                    concurrent_slowdown=c.slowdown(n), name="bootstrap stage parts, measured", kind="measured",
                    busy_latency_s=lk["busy_latency_s"] if busy else None,
                    busy_bandwidth_Bps=lk["busy_bandwidth_Bps"] if busy else None)


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


def _link(runner: DaskRunner, prep: Prepared) -> dict[str, float] | None:
    """The link between two workers (``None``: fewer than two, or too noisy this time). No busy
    sender: with replicated baby steps a partial sum leaves its device when the device's work
    is done, so nothing computes beside the send."""
    from cryptoffload.calibrate.ckks import measure_link

    if len(runner.worker_addresses()) < 2:
        return None
    nbytes = max(len(prep.backend.serialize_ciphertext(c.ct)) for c in prep.cases)
    try:
        return measure_link(runner, nbytes, 2, rounds=1)
    except CryptoffloadError:
        return None


def _stage_costs(session: StageSession, workers: Sequence[int], passes: int) -> StageCosts:
    c = StageCosts(session.costs(1, passes)[0])
    for k in sorted({n for n in workers if n > 1}):
        c.together[k] = session.costs(k, passes)
    return c


def _reference(prep: Prepared, case: Case, bs: int) -> Ciphertext:
    from cryptoffload.engines.bootstrap_run import stage_in_process

    if bs not in case.refs:
        case.refs[bs] = stage_in_process(prep.backend, case.work.with_baby(bs), case.ct)
    return case.refs[bs]


class _Sessions:
    """One open :class:`~cryptoffload.engines.bootstrap_run.StageSession` per stage and baby-step
    count, opened at first use and kept for every round (each stage's plaintexts are encoded on
    the workers once), closed together, the latest first; ``warm``: those run once already."""

    def __init__(self, stack: ExitStack, runner: DaskRunner, prep: Prepared, workers: int) -> None:
        self.stack, self.runner, self.prep, self.workers = stack, runner, prep, workers
        self.open: dict[tuple[str, int], StageSession] = {}
        self.warm: set[tuple[str, int]] = set()

    def __call__(self, case: Case, bs: int) -> StageSession:
        from cryptoffload.engines.bootstrap_run import StageSession

        key = (case.name, bs)
        if key not in self.open:
            self.open[key] = self.stack.enter_context(StageSession(self.runner, self.prep.backend,
                                                                   case.work.with_baby(bs), case.ct,
                                                                   workers=self.workers))
        return self.open[key]

    def run(self, case: Case, bs: int, n: int) -> StageRunResult:
        """One run on ``n`` devices, after an untimed one the first time this session runs."""
        key = (case.name, bs)
        res = self(case, bs).run(n, warmup=0 if key in self.warm else 1)
        self.warm.add(key)
        return res


def _stage_round(sessions: _Sessions, case: Case, tuned: dict[int, int], settings: SplitSettings,
                 link: dict[str, float] | None, table: dict[tuple[str, int, str], Samples]) -> StageCosts:
    """One round of one stage: its costs, then every configuration once (naive and tuned per
    worker count; a tuned count equal to the plan's is the same run)."""
    from cryptoffload.engines.bootstrap_run import verify_stage

    be = sessions.prep.backend
    costs = _stage_costs(sessions(case, case.naive), settings.workers, settings.passes)
    for n in settings.workers:
        runs: dict[int, StageRunResult] = {}
        for kind, b in (("naive", case.naive), ("tuned", tuned[n])):
            if b not in runs:
                runs[b] = sessions.run(case, b, n)
            res, work = runs[b], case.work.with_baby(b)
            key = (case.name, n, kind)
            if key not in table:
                table[key] = Samples(case.name, n, kind, b, res.giants, res.active_devices)
            s = table[key]
            s.walls.append(res.wall_s)
            s.spans.append(res.span_s)
            s.predicted.append(predict_s(work, n, costs, link))
            s.bits.append(verify_stage(be, res, _reference(sessions.prep, case, b)))
    return costs


def measure_split(runner: DaskRunner, settings: SplitSettings, say: Callable[[str], None],
                  prep: Prepared | None = None) -> SplitRun:
    """Prepare (unless given), calibrate and tune (untimed), then the rounds (see the module
    docstring). A round whose link measurement noise refused is priced with the latest link
    measured."""
    prep = prep or prepare(settings)
    table: dict[tuple[str, int, str], Samples] = {}
    costs: list[dict[str, StageCosts]] = []
    links: list[dict[str, float] | None] = []
    loads: list[float] = []
    with ExitStack() as stack:
        sessions = _Sessions(stack, runner, prep, max(settings.workers))
        say("bootstrap stages on Dask workers: calibrating and tuning")
        measured = {c.name: _stage_costs(sessions(c, c.naive), settings.workers, settings.passes) for c in prep.cases}
        link = _link(runner, prep)
        tuned = {c.name: tune(c, measured[c.name], link, settings.workers) for c in prep.cases}
        for r in range(settings.rounds):
            say(f"bootstrap stages on Dask workers: round {r + 1}/{settings.rounds}")
            loads.append(os.getloadavg()[0])
            fresh = _link(runner, prep)
            links.append(fresh)
            link = fresh or link
            costs.append({c.name: _stage_round(sessions, c, tuned[c.name], settings, link, table) for c in prep.cases})
    return SplitRun(settings, list(table.values()), tuned, costs, links, loads, prep.setup_s, prep.key_bytes,
                    len(runner.worker_addresses()))


# ---- the record of a run (JSON: the benchmark's output, the quick run's stored copy) ---------------
def split_record(run: SplitRun, machine: Mapping[str, object], date: str) -> SplitRecord:
    """A run as its record (:meth:`SplitRecord.to_json`: plain JSON): its settings, the tuned
    counts, every configuration's samples (one per round; a non-finite agreement, equal bit for
    bit, as ``None``), the part costs alone per round, the links, the load and the machine and date."""
    configs = tuple(SplitConfig(s.stage, s.workers, s.kind, s.bs, s.giants, s.active, tuple(s.walls), tuple(s.spans),
                                tuple(s.predicted), tuple(v if math.isfinite(v) else None for v in s.bits))
                    for s in run.samples)
    return SplitRecord(json_object(machine, "machine"), date, run.settings, run.workers_on_machine, run.tuned, configs,
                       tuple({st: dict(c.alone) for st, c in rnd.items()} for rnd in run.costs),
                       tuple({st: {n: c.slowdown(n) for n in run.settings.workers} for st, c in rnd.items()}
                             for rnd in run.costs),
                       tuple(run.links), tuple(run.loads), dict(run.setup_s), run.key_bytes, SPLIT_SECURITY)


def measure_record(settings: SplitSettings, say: Callable[[str], None], *, scheduler: str | None = None,
                   credentials: str | None = None, insecure_plain_tcp: bool = False) -> SplitRecord:
    """:func:`measure_split` on a Dask cluster of ``max(settings.workers)`` workers (a local
    one with per-run TLS credentials, or ``scheduler``), as :func:`split_record`."""
    import datetime as _dt

    from cryptoffload.engines.dask import DaskRunner
    from cryptoffload.machine import machine_info

    settings.validate()
    prep = prepare(settings)
    with DaskRunner(scheduler, workers=max(settings.workers), credentials=credentials,
                    insecure_plain_tcp=insecure_plain_tcp) as runner:
        if len(runner.worker_addresses()) < max(settings.workers):
            raise ConfigError(f"the bootstrap stages need {max(settings.workers)} Dask workers, the cluster has "
                              f"{len(runner.worker_addresses())}")
        run = measure_split(runner, settings, say, prep)
    return split_record(run, machine_info(), _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"))


def load_record() -> SplitRecord | None:
    """The stored record shipped with the package, or ``None`` (unreadable, not a record --
    :meth:`SplitRecord.from_json` checks it once, here -- or no machine and date)."""
    from importlib import resources

    from cryptoffload.checks import strict_json

    try:
        data = strict_json(resources.files("cryptoffload.studies.data").joinpath(SPLIT_RESULT)
                           .read_text(encoding="utf-8"))
        return SplitRecord.from_json(data)
    except (OSError, ValueError):     # JsonRefused and RecordRefused are ValueErrors
        return None


# ---- rows, bands, tables --------------------------------------------------------------------------
PREDICTED_NOISE, MEASURED_NOISE = "re-timed costs' noise (ms)", "measured runs' noise (ms)"
SPEEDUP_NOISE = "speedup per round"


def noise_band(predicted_s: Sequence[float], walls_s: Sequence[float]) -> Band | None:
    """The prediction's band (ms) over this run's noise: the predictions priced with each
    round's costs and the wall times, each a t-interval of its rounds, at the 4 corners (a
    measured time higher by d reads as ours lower by d); ``None`` below the minimum rounds."""
    p_ms, m_ms = [v * 1e3 for v in predicted_s], [v * 1e3 for v in walls_s]
    ip, im = measured_input(PREDICTED_NOISE, p_ms), measured_input(MEASURED_NOISE, m_ms)
    if ip is None or im is None:
        return None
    return band(lambda ov: max(0.0, ov.get(PREDICTED_NOISE, ip.nominal) - ov.get(MEASURED_NOISE, im.nominal)
                               + im.nominal), [ip, im])


@dataclass(frozen=True)
class SplitRow:
    stage: str = column()
    workers: int = column()
    kind: str = column()
    bs: int = column()
    giants: int = column()
    devices_used: int = column()
    measured_ms: float = column()
    predicted_ms: float = column()
    error_pct: float = column()
    band_low_ms: float | None = column()
    band_high_ms: float | None = column()
    measured_inside: bool | None = column()
    agreement_bits: float | None = column()


def split_rows(record: SplitRecord) -> list[SplitRow]:
    """One row per stage, worker count and kind: means over the rounds, the model's error, its
    band and the worst agreement in bits with the stage computed in one process."""
    rows = []
    for c in record.configs:
        meas, pred = statistics.fmean(c.walls) * 1e3, statistics.fmean(c.predicted) * 1e3
        b = noise_band(c.predicted, c.walls)
        finite = [v for v in c.bits if v is not None and np.isfinite(v)]
        bits = min(finite) if finite else None          # None: every run equal to the reference, bit for bit
        rows.append(SplitRow(c.stage, c.workers, c.kind, c.bs, c.giants, c.active, meas, pred,
                             (pred / meas - 1) * 100, b.low if b else None, b.high if b else None,
                             b.contains(meas) if b else None, bits))
    return rows


def _per_round(record: SplitRecord, n: int, kind: str, what: Literal["walls", "predicted"]) -> list[float]:
    """The sum over the stages run of one configuration's samples, per round."""
    cs = [c for c in record.configs if c.workers == n and c.kind == kind]
    return [float(sum(v)) for v in zip(*(c.walls if what == "walls" else c.predicted for c in cs))] if cs else []


@dataclass(frozen=True)
class SpeedupRow:
    workers: int = column()
    naive_ms: float | None = column()
    tuned_ms: float | None = column()
    speedup: float | None = column()
    speedup_low: float | None = column()
    speedup_high: float | None = column()
    predicted_speedup: float | None = column()
    naive_error_pct: float | None = column()
    tuned_error_pct: float | None = column()
    tuned_bs: str = column()
    note: str = column()


def speedup_band(record: SplitRecord, n: int) -> Band | None:
    """The speedup of tuning at ``n`` workers (naive over tuned, all stages, one ratio per
    round): its t-interval over the rounds; ``None`` below the minimum rounds."""
    ratios = [a / b for a, b in zip(_per_round(record, n, "naive", "walls"), _per_round(record, n, "tuned", "walls"))]
    inp = measured_input(SPEEDUP_NOISE, ratios) if ratios else None
    return None if inp is None else band(lambda ov: ov.get(SPEEDUP_NOISE, inp.nominal), [inp])


def speedup_rows(record: SplitRecord) -> list[SpeedupRow]:
    """Per worker count run: both totals, the measured speedup with its band, the model's, the
    model's errors; then the paper's device counts this machine could not run, empty."""
    run = list(record.settings.workers)
    rows = []
    for n in run:
        walls = {k: _per_round(record, n, k, "walls") for k in KINDS}
        pred = {k: _per_round(record, n, k, "predicted") for k in KINDS}
        ratios = [a / b for a, b in zip(walls["naive"], walls["tuned"])]
        b = speedup_band(record, n)
        tuned = ", ".join(f"{st} {per[n]}" for st, per in record.tuned.items())
        m = {k: statistics.fmean(walls[k]) for k in KINDS}
        p = {k: statistics.fmean(pred[k]) for k in KINDS}
        rows.append(SpeedupRow(n, m["naive"] * 1e3, m["tuned"] * 1e3, statistics.fmean(ratios),
                               b.low if b else None, b.high if b else None,
                               statistics.fmean(a / c for a, c in zip(pred["naive"], pred["tuned"])),
                               (p["naive"] / m["naive"] - 1) * 100, (p["tuned"] / m["tuned"] - 1) * 100, tuned,
                               "" if b else interval_text(len(ratios))))
    cores = record.workers_on_machine
    for n in (d for d in PAPER_DEVICES if d > 1 and d not in run):
        rows.append(SpeedupRow(n, None, None, None, None, None, None, None, None, "",
                               f"not run: {n} workers on this {cores}-core machine would share cores (the issue: "
                               "where cores allow)"))
    return rows


def paper_speedup_rows(rows: Sequence[SpeedupRow]) -> list[SpeedupRow]:
    """The paper's Table 1 speedup (naive / tuned, derived from its printed times) at the same
    device counts, N = 2 and above (at one device the paper tunes nothing: 1.00 by construction)."""
    speedup = dict(zip(PAPER_DEVICES, PAPER_SPEEDUP))
    return [SpeedupRow(r.workers, None, None, speedup[r.workers], None, None, None, None, None, "", "")
            for r in rows if r.workers in speedup and r.workers > 1]


def _where(record: SplitRecord) -> str:
    m, s = record.machine, record.settings
    return (f"N = {s.ring} (insecure study ring), plan {s.plan.level_budget}, {s.rounds} rounds, "
            f"on {m.get('cpu', 'an unnamed CPU')}, {m.get('cores', '?')} cores, {record.date}")


def split_table(record: SplitRecord, word: str) -> Table:
    """Every configuration run, measured (``word``: ``measured`` or ``stored``) beside the model."""
    return table_of(
        SplitRow, split_rows(record), id="bootstrap_split", key_columns=3, provenance="mixed", inputs=[],
        title=f"Bootstrap stages split over Dask workers (replicated baby steps, ciphertexts kept on the workers), "
              f"{word} beside the model: {_where(record)}",
        column_provenance={"measured_ms": word, "predicted_ms": "simulated", "error_pct": "derived",
                           "band_low_ms": "derived", "band_high_ms": "derived", "measured_inside": "derived",
                           "agreement_bits": word, "devices_used": word, "giants": word, "bs": word},
        note="measured_ms: wall time from the graph's submission to the stage's rescaled output (mean over rounds); "
             "predicted_ms: the op-DAG model priced with the stage's part costs re-timed on the workers in the same "
             "round (mean of one prediction per round); band: predicted +- a t-interval of each round's predictions "
             "and of the wall times (4 corners; fewer than five rounds: none); naive = the plan's baby-step count at "
             "every worker count, tuned = the candidate the model prices fastest for that count; agreement_bits: "
             "-log2 of the largest slot difference from the stage computed in one process (empty: equal bit for "
             f"bit). {record.security}")


def speedup_table(record: SplitRecord, word: str) -> Table:
    rows = speedup_rows(record)
    return table_of(
        SpeedupRow, rows, paper=paper_speedup_rows(rows), id="bootstrap_split_speedup", provenance="mixed",
        inputs=[], reproduces="Table 1 speedup",      # nothing fitted: the runs' own costs and times
        title=f"Tuning the baby-step count per worker count, all bootstrap stages run ({word}), beside the "
              "paper's Table 1 speedups (a dense 256-diagonal product on U280s)",
        column_provenance={"naive_ms": word, "tuned_ms": word, "speedup": word, "speedup_low": "derived",
                           "speedup_high": "derived", "predicted_speedup": "simulated", "naive_error_pct": "derived",
                           "tuned_error_pct": "derived", "tuned_bs": "derived", "note": "derived"},
        paper_derived={"speedup": from_printed("Table 1, naive / tuned per N")},
        note="speedup: naive over tuned, summed over the stages, one ratio per round (mean; band: its t-interval). "
             "The paper's speedups (1.08x, 1.22x, 1.42x at N = 2, 4, 8) are for one dense product on FPGAs; ours "
             "for a bootstrap's sparse stages on CPU worker processes sharing a 2-core machine: the shape (tuning "
             "gains more with more devices) is what stands beside it.")


# ---- verdicts and the study's part ------------------------------------------------------------------
def speedup_verdicts(table: Table, record: SplitRecord, how: Judging) -> list[Verdict]:
    """A verdict for every measured speedup beside a paper value, against no tuning (1.0)."""
    from cryptoffload.report.verdicts import paper_cells

    paper = dict(zip(PAPER_DEVICES, zip(PAPER_NAIVE, PAPER_TUNED, PAPER_SPEEDUP)))
    out = []
    for key, col in paper_cells(table):
        n = int(key[0])
        naive, tuned, sp = paper[n]
        b = speedup_band(record, n)
        banded = Banded(f"speedup of tuning at {n} workers", b, sp, []) if b is not None else None
        out.append(judge(table, key, col, banded, how, figure=f"bootstrap stages: speedup of tuning bs at {n} workers",
                         paper_source=from_printed(f"Table 1, naive / tuned at N = {n} ({naive * 1e3:.4g} / "
                                                   f"{tuned * 1e3:.4g} ms)"),
                         alternative=1.0, alternative_what="no tuning (a speedup of 1)",
                         no_band=interval_text(len(_per_round(record, n, "naive", "walls"))),
                         narrow="more rounds (the full run's five or more)"))
    return out


def headline(record: SplitRecord, word: str) -> str:
    rows = split_rows(record)
    within = sum(abs(r.error_pct) <= MODEL_TARGET * 100 for r in rows)
    med = statistics.median(abs(r.error_pct) for r in rows)
    sp = {r.workers: r for r in speedup_rows(record) if r.speedup is not None}
    two = sp.get(2)
    tail = (f"; tuning bs at 2 workers: {two.speedup:.2f}x {word} (model {two.predicted_speedup:.2f}x; the paper's "
            f"1.08x at N = 2 on U280s)" if two and two.predicted_speedup else "")
    return (f"Bootstrap stages on Dask workers ({word}, N = {record.settings.ring}): the model within "
            f"{MODEL_TARGET:.0%} of {within} of {len(rows)} configurations (median |error| {med:.1f} %){tail}")


@dataclass
class SplitPart:
    tables: list[Table]
    verdicts: list[Verdict]
    headline: list[str]
    notes: list[str]
    figures: list[tuple[str, Callable[[Path], None]]] = field(default_factory=list)


def split_figure(record: SplitRecord, word: str) -> Callable[[Path], None]:
    """Every configuration's measured (or stored) time beside the model's, one bar each."""
    def draw(path: Path) -> None:
        from cryptoffload.report.plots import bar_plot

        labels, values, kinds = [], [], []
        for r in split_rows(record):
            lab = f"{r.stage} {r.workers}w {r.kind} bs={r.bs}"
            labels += [f"{lab} {word}", f"{lab} model"]
            values += [r.measured_ms, r.predicted_ms]
            kinds += [word, "simulated"]
        bar_plot(path, labels, values, kinds=kinds, logy=False, ylabel="time (ms)",
                 title=f"Bootstrap stages on Dask workers, N = {record.settings.ring}: {word} vs the model")
    return draw


def split_part(record: SplitRecord | None, measured: bool, how: Judging) -> SplitPart:
    """The study's tables, verdicts, headline and notes from a record: this run's (``measured``)
    or the stored benchmark's (``stored``, with its machine and date); a note without one."""
    if record is None:
        return SplitPart([], [], [], [SPLIT_MISSING])
    word = "measured" if measured else provenance_word(stored_from(record.to_json(), "benchmarks/bootstrap_split.py"))
    speed = speedup_table(record, word)
    notes = [r.note for r in speedup_rows(record) if r.note.startswith("not run")][:1]
    return SplitPart([split_table(record, word), speed], speedup_verdicts(speed, record, how),
                     [headline(record, word)], notes, [("bootstrap_split.png", split_figure(record, word))])


__all__ = ["KINDS", "SPLIT_RESULT", "SPLIT_SECURITY", "STUDY_QUICK_WHY", "RecordRefused", "STUDY_SETTINGS", "SplitConfig", "SplitPart", "SplitRecord", "SplitRow",
           "SplitRun", "SplitSettings", "SpeedupRow",
           "load_record", "measure_record", "measure_split", "noise_band", "prepare", "speedup_band", "speedup_rows",
           "split_part", "split_record", "split_rows", "split_table", "speedup_table", "speedup_verdicts", "study_part"]


#: the study's full run: a small insecure ring, every stage of a (2, 2) plan, 1 and 2 workers, 5 rounds
STUDY_SETTINGS = SplitSettings(ring=2048, rounds=MIN_SAMPLES)
STUDY_QUICK_WHY = ("quick mode shows the stored record of benchmarks/bootstrap_split.py, another run than the full "
                   "run's own")


class SplitStudyConfig(Protocol):
    """What :func:`study_part` reads of the bsgs-multidevice study's configuration."""

    quick: bool
    measure: bool
    bootstrap_split: bool
    scheduler: str | None
    dask_credentials: str | None
    insecure_plain_tcp_scheduler: bool


def study_part(cfg: SplitStudyConfig, say: Callable[[str], None], how: Judging) -> SplitPart:
    """The bsgs-multidevice study's part: in a full run that measures (``cfg.measure`` and
    ``cfg.bootstrap_split``), :data:`STUDY_SETTINGS` run now on the study's Dask scheduler
    (a local TLS cluster unless given); otherwise the stored record, labelled stored."""
    if cfg.quick or not (cfg.measure and cfg.bootstrap_split):
        return split_part(load_record(), False, how)
    record = measure_record(STUDY_SETTINGS, say, scheduler=cfg.scheduler, credentials=cfg.dask_credentials,
                            insecure_plain_tcp=cfg.insecure_plain_tcp_scheduler)
    return split_part(record, True, how)
