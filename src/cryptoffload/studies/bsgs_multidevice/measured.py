"""The measured half of the bsgs-multidevice study: real BSGS products with SEAL ciphertexts on
Dask workers, interleaved in rounds with the timings the model is given, the model's
prediction for each, and the claims the comparison supports.

Why apart from the study: the study module reads as the study's table of contents; this part
runs the engine (``engines/bsgs_run.py``) and the calibration (``calibrate/ckks.py``) on this
machine, checks every product against the plaintext one, predicts each from costs re-timed in
the same minutes -- nothing fitted to the runs -- and lays out the measured tables (typed rows,
:mod:`cryptoffload.report.rows`). The claims they support, with the bands this run's own noise
gives them, are in ``measured_claims``; each row keeps the samples those bands need.
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
from cryptoffload.profiles.loader import Profile, load_profile
from cryptoffload.report.result import Table
from cryptoffload.report.rows import cells_of, column, table_of
from cryptoffload.sim.op_dag import DagCosts
from cryptoffload.workloads.bsgs import STRATEGIES, BsgsShape, Split

if TYPE_CHECKING:
    from cryptoffload.crypto.ckks import Ciphertext, CkksBackend, CkksParams
    from cryptoffload.engines.dask import DaskRunner
    from cryptoffload.studies.bsgs_multidevice.study import BsgsMultideviceConfig


@dataclass
class MeasuredRow:
    """One measured configuration: the model's prediction and the summary of its runs (seconds).

    ``walls_s`` are the wall times of its runs, one per round, and ``round_predicted_s`` the
    prediction priced with each round's re-timed costs alone: their spreads are this run's own
    noise on the measured and on the predicted time (``measured_claims``); empty when not
    kept."""

    devices: int
    strategy: str
    baby: int
    predicted_s: float
    measured_s: float
    span_s: float
    max_error: float
    measured_min_s: float = 0.0
    measured_max_s: float = 0.0
    walls_s: tuple[float, ...] = ()
    round_predicted_s: tuple[float, ...] = ()

    @property
    def error(self) -> float:
        return self.predicted_s / self.measured_s - 1.0

    @property
    def spread(self) -> float:
        """(max - min) / the measured value (median or minimum) of the wall times over the rounds."""
        return (self.measured_max_s - self.measured_min_s) / self.measured_s


#: how the rounds are summarised -- the median, or the minimum (the least disturbed round: on a
#: machine shared with other users' processes, the estimate closest to the undisturbed system)
Statistic = Callable[[Sequence[float]], float]
STATISTICS: dict[str, Statistic] = {"median": np.median, "min": np.min}
#: the link costs re-timed every round (measure_link; the busy ones when noise left them positive)
LINK_FIELDS = ("task_s", "latency_s", "busy_latency_s", "busy_bandwidth_Bps")
WINDOW_FIELDS = ("rotate_s", "rotate_low_s", "pmul_s", "add_s", "add_low_s", "rescale_s", "serialize_s",
                 "deserialize_s")


@dataclass(frozen=True)
class MeasuredRun:
    """What the measured half found: a row per configuration, the measured profile (and its
    path), the costs the predictions used, and per round the concurrent slowdown (rounds with
    more than one worker) and the CPU share of a worker alone and together (:func:`cpu_share`)."""

    rows: list[MeasuredRow]
    profile: Profile
    profile_path: str
    costs: DagCosts
    slowdowns: list[float]
    shares: list[tuple[float, float]]


@dataclass(frozen=True)
class Product:
    """One measured configuration: the split product to run and the plaintext product it must
    decrypt to."""

    devices: int
    strategy: str
    baby: int
    shape: BsgsShape
    diagonals: np.ndarray
    split: Split
    want: np.ndarray


@dataclass(frozen=True)
class Workload:
    """The client's keys and input, and every configuration to measure, in run order."""

    params: CkksParams
    backend: CkksBackend
    ct: Ciphertext
    products: list[Product]


@dataclass(frozen=True)
class RoundCosts:
    """The costs re-timed in one round: op costs on worker 0 alone, the CPU share (alone,
    together), and with more than one worker the concurrent slowdown and the link costs
    (``None`` when the link measurement was refused)."""

    ops: dict[str, float]
    share: tuple[float, float]
    slowdown: float | None = None
    link: dict[str, float] | None = None


@dataclass(frozen=True)
class ProductRun:
    """One run of one product: client wall time, worker span, and the decrypted result's
    largest error against the plaintext product."""

    wall_s: float
    span_s: float
    error: float


def measure_run(cfg: BsgsMultideviceConfig, out: Path, say: Callable[[str], None]) -> MeasuredRun:
    """Calibrate (or load) a measured profile, run real products in rounds, re-time the op costs,
    the concurrent slowdown, the scheduler round trip and the transfer latency once per round,
    and predict each product with their summary over the rounds (the profile's bandwidth and
    sizes)."""
    from cryptoffload.engines.dask import DaskRunner

    with DaskRunner(cfg.scheduler, workers=max(cfg.measured_devices), credentials=cfg.dask_credentials,
                    insecure_plain_tcp=cfg.insecure_plain_tcp_scheduler) as runner:
        prof_path = measured_profile_path(cfg, out, runner, say)
        profile = load_profile(prof_path)
        work = workload(cfg)
        rounds, runs = run_rounds(cfg, runner, work, say)
    stat = STATISTICS[cfg.statistic]
    base = DagCosts.from_profile(profile)
    costs = costs_over_rounds(base, rounds, stat)
    each = [costs_over_rounds(base, [r], stat) for r in rounds]
    return MeasuredRun(predict(work.products, runs, costs, stat, each), profile, str(prof_path), costs,
                       [r.slowdown for r in rounds if r.slowdown is not None], [r.share for r in rounds])


def measure(cfg: BsgsMultideviceConfig, out: Path, say: Callable[[str], None]
            ) -> tuple[list[MeasuredRow], Profile, str, DagCosts, list[float], list[tuple[float, float]]]:
    """:func:`measure_run` as the tuple benchmarks/bsgs.py unpacks (until it reads :class:`MeasuredRun`)."""
    m = measure_run(cfg, out, say)
    return m.rows, m.profile, m.profile_path, m.costs, m.slowdowns, m.shares


def measured_profile_path(cfg: BsgsMultideviceConfig, out: Path, runner: DaskRunner,
                          say: Callable[[str], None]) -> Path:
    """The profile the user named, else one calibrated now on ``runner``'s workers."""
    from cryptoffload.calibrate.ckks import calibrate_ckks

    if cfg.calibration:
        return Path(cfg.calibration)
    say("calibrating CKKS op and transfer costs on this machine")
    return calibrate_ckks(out / "calibration" / "ckks.toml", repeats=3 if cfg.quick else 7, progress=False,
                          runner=runner)


def workload(cfg: BsgsMultideviceConfig) -> Workload:
    """Keys for every measured bs, a random matrix and input (``cfg.seed``; the cryptography is
    never seeded), and every configuration: one worker replicated, more with every strategy."""
    from cryptoffload.calibrate.ckks import DEFAULT_CALIBRATION_PARAMS
    from cryptoffload.crypto.ckks import make_backend
    from cryptoffload.workloads.bsgs import diagonals_of, split

    params = DEFAULT_CALIBRATION_PARAMS
    backend = make_backend("seal", params)
    slots, level = backend.slots, params.levels
    rng = np.random.default_rng(cfg.seed)
    matrix = rng.uniform(-1, 1, (slots, slots)) / 8
    x = rng.uniform(-1, 1, slots)
    steps: set[int] = set()
    for bs in cfg.measured_babies:
        steps.update(BsgsShape(cfg.measured_diagonals, bs, slots=slots, level=level).rotation_steps())
    backend.keygen(rotations=sorted(steps))
    ct = backend.encrypt(x)
    products = []
    for n in cfg.measured_devices:
        for strategy in (("replicate",) if n == 1 else STRATEGIES):
            for bs in cfg.measured_babies:
                shape = BsgsShape(cfg.measured_diagonals, bs, slots=slots, level=level)
                diags = diagonals_of(matrix, shape)
                products.append(Product(n, strategy, bs, shape, diags, split(shape, n, strategy),
                                        _plain_product(diags, shape, x)))
    return Workload(params, backend, ct, products)


def run_rounds(cfg: BsgsMultideviceConfig, runner: DaskRunner, work: Workload,
               say: Callable[[str], None]) -> tuple[list[RoundCosts], list[list[ProductRun]]]:
    """``cfg.repeats`` rounds, each re-timing the costs and then running every product once.

    Rounds over every configuration rather than repeats back to back: the machine's speed
    drifts over minutes, and it must not drift into one configuration only. Returns the costs
    of each round and, per product, its runs."""
    addrs = runner.worker_addresses()
    rounds: list[RoundCosts] = []
    runs: list[list[ProductRun]] = [[] for _ in work.products]
    for rnd in range(cfg.repeats):
        rounds.append(round_costs(runner, work.params, addrs, max(cfg.measured_devices)))
        for product, done in zip(work.products, runs):
            if rnd == 0:
                say(f"measured: {product.devices} worker(s), {product.strategy}, bs = {product.baby} "
                    f"({cfg.repeats} rounds)")
            done.append(run_product(runner, work, product, warmup=1 if rnd == 0 else 0))
    return rounds, runs


def round_costs(runner: DaskRunner, params: CkksParams, addrs: Sequence[str], workers: int) -> RoundCosts:
    """The op costs re-timed on a worker, alone and with every worker busy at once: the
    calibration then spans the same minutes as the runs it predicts. The machine's speed drifts
    by 20-30 %, and the CPU share two workers get together -- the 2 cores are shared with other
    users' processes -- swings from ~2 cores to less than one. With several workers, the
    scheduler round trip and the transfer latency too: under load, every hop between processes
    waits for a time slice, and the 2-worker runs have more hops."""
    from cryptoffload.calibrate.ckks import measure_link, measure_ops_on_worker
    from cryptoffload.engines.bsgs_run import SWITCH_INTERVAL_S

    ops = runner.submit(measure_ops_on_worker, params, "seal", 3, worker=addrs[0]).result()[0]
    share = cpu_share(runner, workers)
    if len(addrs) < 2:
        return RoundCosts(ops, share)
    slowdown = concurrent_slowdown(runner, params, ops)
    link = None
    with contextlib.suppress(CryptoffloadError):
        measured = measure_link(runner, int(ops["bytes"]), 2, rounds=1, busy_call_s=ops["rotate_s"],
                                switch_interval_s=SWITCH_INTERVAL_S)
        link = {f: measured[f] for f in LINK_FIELDS if f in measured}
    return RoundCosts(ops, share, slowdown, link)


def run_product(runner: DaskRunner, work: Workload, product: Product, warmup: int) -> ProductRun:
    """One run of ``product`` on the workers, checked against the plaintext product."""
    from cryptoffload.engines.bsgs_run import run_bsgs

    be = work.backend
    res = run_bsgs(runner, be, product.diagonals, product.shape, product.split, work.ct, repeats=1, warmup=warmup)
    got = be.decrypt(be.deserialize_ciphertext(res.result))
    return ProductRun(res.wall_s, res.span_s, float(np.max(np.abs(np.asarray(got)[:be.slots] - product.want))))


def costs_over_rounds(costs: DagCosts, rounds: Sequence[RoundCosts], stat: Statistic) -> DagCosts:
    """``costs`` with every re-timed value replaced by its ``stat`` over the rounds (the busy
    link values over the rounds where noise left both positive; a slowdown never below 1)."""
    def over(samples: Sequence[dict[str, float]], f: str) -> float:
        return float(stat([sample[f] for sample in samples]))

    ops = [r.ops for r in rounds]
    costs = replace(costs, rotate_s=over(ops, "rotate_s"), rotate_low_s=over(ops, "rotate_low_s"),
                    pmul_s=over(ops, "pmul_s"), add_s=over(ops, "add_s"), add_low_s=over(ops, "add_low_s"),
                    rescale_s=over(ops, "rescale_s"), serialize_s=over(ops, "serialize_s"),
                    deserialize_s=over(ops, "deserialize_s"))  # every one of WINDOW_FIELDS
    links = [r.link for r in rounds if r.link is not None]
    if links:
        costs = replace(costs, task_s=over(links, "task_s"), latency_s=over(links, "latency_s"))
        busy = [lk for lk in links if "busy_bandwidth_Bps" in lk]
        if busy:
            costs = replace(costs, busy_latency_s=over(busy, "busy_latency_s"),
                            busy_bandwidth_Bps=over(busy, "busy_bandwidth_Bps"))
    slowdowns = [r.slowdown for r in rounds if r.slowdown is not None]
    if slowdowns:
        costs = replace(costs, concurrent_slowdown=max(1.0, float(stat(slowdowns))))
    return costs


def predict(products: Sequence[Product], runs: Sequence[Sequence[ProductRun]], costs: DagCosts,
            stat: Statistic, round_costs: Sequence[DagCosts] = ()) -> list[MeasuredRow]:
    """Each product's prediction from ``costs`` beside the ``stat`` of its runs, with the wall
    times and the prediction from each round's costs alone (``round_costs``) kept for the noise."""
    rows = []
    for p, done in zip(products, runs):
        walls = [r.wall_s for r in done]
        rows.append(MeasuredRow(p.devices, p.strategy, p.baby, predicted_s(p, costs), float(stat(walls)),
                                float(stat([r.span_s for r in done])), max([0.0] + [r.error for r in done]),
                                float(min(walls)), float(max(walls)), tuple(walls),
                                tuple(predicted_s(p, c) for c in round_costs)))
    return rows


def predicted_s(product: Product, costs: DagCosts) -> float:
    """The model's time for ``product`` priced with ``costs``, as the client sees it."""
    return (tuner.evaluate(product.shape, product.devices, product.strategy, product.baby, costs,
                           batched_sends=True)[0].predicted_s + client_tail_s(costs))


def _spin(seconds: float) -> float:
    """CPU seconds this worker process got while spinning for ``seconds`` of wall time."""
    c0, w0 = time.process_time(), time.perf_counter()
    x = 0
    while time.perf_counter() - w0 < seconds:
        x += 1
    return (time.process_time() - c0) / (time.perf_counter() - w0)


def cpu_share(runner: DaskRunner, workers: int, seconds: float = 0.2) -> tuple[float, float]:
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


def concurrent_slowdown(runner: DaskRunner, params: CkksParams, alone: dict[str, float]) -> float:
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


@dataclass(frozen=True)
class ScalingRow:
    bs: int = column()
    measured_speedup: float = column()
    predicted_speedup: float = column()
    parallelism_available: float = column()


def two_workers_vs_one(measured: Sequence[MeasuredRow], shares: Sequence[tuple[float, float]]) -> list[ScalingRow]:
    """Per bs: the measured speedup of two workers over one (replicated baby steps), the
    model's, and the parallelism the CPU allowed (:func:`parallelism`)."""
    one = {r.baby: r for r in measured if r.devices == 1}
    return [ScalingRow(r.baby, one[r.baby].measured_s / r.measured_s, one[r.baby].predicted_s / r.predicted_s,
                       parallelism(shares))
            for r in measured if r.devices == 2 and r.strategy == "replicate" and r.baby in one]


def scaling_rows(measured: Sequence[MeasuredRow], shares: Sequence[tuple[float, float]]) -> list[list[Any]]:
    """:func:`two_workers_vs_one` as the plain lists benchmarks/bsgs.py unpacks (until it reads
    :class:`ScalingRow`)."""
    return [cells_of(r) for r in two_workers_vs_one(measured, shares)]


@dataclass(frozen=True)
class ProfileValueRow:
    name: str = column("field")
    value: Any = column()
    source: str = column()


def measured_profile_table(run: MeasuredRun) -> Table:
    prof = run.profile
    return table_of(ProfileValueRow, [ProfileValueRow(k, v.value, v.source) for k, v in sorted(prof.values.items())],
                    id="measured_profile", title=f"Measured on this machine ({prof.name})", provenance="measured")


@dataclass(frozen=True)
class CostRow:
    cost: str = column()
    value: float = column()


def op_costs_table(run: MeasuredRun) -> Table:
    """The costs the predictions used, re-timed over the rounds."""
    used = run.costs
    rows = [CostRow(f, getattr(used, f)) for f in WINDOW_FIELDS + LINK_FIELDS]
    rows.append(CostRow("concurrent_slowdown (all workers busy / one alone)", used.concurrent_slowdown))
    return table_of(CostRow, rows, id="op_costs_over_runs", title="Costs used for the predictions: medians of one "
                    "timing per round, on the workers, interleaved with the runs", provenance="measured")


@dataclass(frozen=True)
class ModelVsMeasuredRow:
    workers: int = column()
    strategy: str = column()
    bs: int = column()
    predicted_ms: float = column()
    measured_ms: float = column()
    error_pct: float = column()
    measured_min_ms: float = column()
    measured_max_ms: float = column()
    spread_pct: float = column()
    worker_span_ms: float = column()
    max_abs_error: float = column()


def model_vs_measured_row(r: MeasuredRow) -> ModelVsMeasuredRow:
    return ModelVsMeasuredRow(r.devices, r.strategy, r.baby, r.predicted_s * 1e3, r.measured_s * 1e3, r.error * 100,
                              r.measured_min_s * 1e3, r.measured_max_s * 1e3, r.spread * 100, r.span_s * 1e3,
                              r.max_error)


def model_vs_measured_table(run: MeasuredRun, cfg: BsgsMultideviceConfig) -> Table:
    return table_of(
        ModelVsMeasuredRow, [model_vs_measured_row(r) for r in run.rows], id="model_vs_measured",
        title="Real BSGS products on Dask workers (SEAL): the model's prediction vs the measurement",
        provenance="mixed", key_columns=3,
        column_provenance={"predicted_ms": "simulated", "measured_ms": "measured", "error_pct": "derived",
                           "measured_min_ms": "measured", "measured_max_ms": "measured", "spread_pct": "derived",
                           "worker_span_ms": "measured", "max_abs_error": "measured"},
        note=f"Measured: {cfg.statistic} wall time of {cfg.repeats} runs (in rounds over all configurations), "
             f"C = {cfg.measured_diagonals} diagonals, client-side from submit to result; min/max over "
             "the rounds, spread = (max - min) / measured. Predicted: the same DAG priced with the "
             "measured profile, op costs, concurrent slowdown, scheduler round trip and latency re-timed "
             f"every round ({cfg.statistic} over the rounds), plus the "
             "result's serialisation and one scheduler notification (client_tail_s). "
             "max_abs_error: decrypted result vs the plaintext product.")


def two_workers_vs_one_table(run: MeasuredRun) -> Table | None:
    """``None`` when no bs was measured on both one and two workers."""
    rows = two_workers_vs_one(run.rows, run.shares)
    if not rows:
        return None
    return table_of(
        ScalingRow, rows, id="two_workers_vs_one", title="Two workers vs one, replicated baby steps: measured "
        "speedup, the model's, and the CPU the two workers actually had", provenance="mixed",
        column_provenance={"measured_speedup": "measured", "predicted_speedup": "simulated",
                           "parallelism_available": "measured"},
        note="parallelism_available = 2 x the CPU share each of two busy workers got over the share "
             "one got alone (a 0.2 s spin, median over the rounds; per round alone/together: "
             + ", ".join(f"{a:.2f}/{b:.2f}" for a, b in run.shares) + "): 2 when each worker has a core "
             "of its own, 1 or less when the two share one core's worth of CPU (this machine's 2 "
             "cores are shared with other users' processes) -- then two workers cannot beat one.")


def measured_tables(run: MeasuredRun, cfg: BsgsMultideviceConfig) -> list[Table]:
    """The measured half's tables, in the order the report shows them."""
    tables = [measured_profile_table(run), op_costs_table(run), model_vs_measured_table(run, cfg)]
    scaling = two_workers_vs_one_table(run)
    return tables + ([scaling] if scaling is not None else [])


def client_tail_s(costs: DagCosts) -> float:
    """What a Dask client waits for after the product exists on device 0 and the model's
    makespan ends: the result's serialisation (for the client) and one scheduler notification."""
    return costs.serialize_s + costs.task_s


def _plain_product(diags: np.ndarray, shape: BsgsShape, x: np.ndarray) -> np.ndarray:
    from cryptoffload.workloads.bsgs import matrix_of

    return matrix_of(diags, shape) @ x
