"""Zhou and Hua (QAT Paillier offload), part 2: privacy-preserving ridge regression for data
trading, measured.

Why it is built this way: the paper encrypts 1,000,000 records (d = 20) per record on a QAT
card (10.6 min), aggregates the ciphertext matrices on a K80 GPU (116 s), and solves with a
garbled circuit (20 s). We run the same per-record workload with the protocol of
``apps/ridge/protocol.py`` -- Paillier only, masked unpacking and a masked solve instead of
garbled circuits -- on this machine's cores through Dask (``apps/ridge/bulk.py``), and put
each phase beside the paper's. Accuracy is checked against scikit-learn's ``Ridge`` on
generated data and on scikit-learn's diabetes data set, held to the fixed-point error the
protocol is expected to make (``apps/ridge/accuracy.py``), not to a worst case.

Everything here is measured, except the transfer row, which is derived from the measured byte
count at the paper's 10 Gb/s (our parties run on one machine; over HTTP,
the party modules of ``apps/ridge/`` move real bytes over loopback).
"""

from __future__ import annotations

import functools
import time as _time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cryptoffload.apps.ridge import protocol as P
from cryptoffload.apps.ridge.bulk import BULK_ENGINES, BulkRun, chunk_records, run_bulk, run_per_provider
from cryptoffload.apps.ridge.params import error_bound_from_normal, required_solve_key_bits
from cryptoffload.checks import BATCH, FEATURES, LAMBDA, RECORDS, STAT_BITS, WORKERS, check_bounded, check_int
from cryptoffload.apps.ridge.session import RidgeSession, run_in_process
from cryptoffload.crypto.paillier import PrivateKey
from cryptoffload.engines.dask import parse_scheduler
from cryptoffload.engines.dask_tls import CREDENTIALS_FLAG, INSECURE_FLAG, INSECURE_HELP, scheduler_credentials
from cryptoffload.engines.registry import ENGINES
from cryptoffload.errors import ConfigError
from cryptoffload.papers import PAPERS
from cryptoffload.report.plots import bar_plot, line_plot
from cryptoffload.report.result import Claim, Table
from cryptoffload.report.rows import column, hidden, table_of
from cryptoffload.studies import frame
from cryptoffload.studies import paillier_gpu as _gpu
from cryptoffload.studies.ridge import bands as rb
from cryptoffload.studies.ridge import verdicts as rv
from cryptoffload.report.provenance import printed
from cryptoffload.report.verdicts import Verdict
from cryptoffload.studies.bands import Banded
from cryptoffload.studies.frame import Sections
from cryptoffload.studies.verdicts import Judging, full_command
from cryptoffload.studies.registry import Option, as_str, negated, register_study
from cryptoffload.apps.ridge.accuracy import Z_MARGIN, ReplaySums, replayed_error, rounding_sigma
from cryptoffload.workloads.ridge_data import algorithm1_y_bound, load_diabetes_scaled

NAME = "ridge"
TITLE = "Privacy-preserving ridge regression for data trading, Paillier only"
PAPER = f"{PAPERS['qat-paillier'].cite()}, Table 2; solve after Giacomelli et al., ACNS 2018"

PAPER_RECORDS = 1_000_000
PAPER_D = 20
PAPER_PHASES_S = {"encryption": 10.6 * 60, "aggregation": 116.0, "solve": 20.0}
PAPER_PLAINTEXTS = 17      # per record: 420 values packed into 1024-bit plaintexts
PAPER_BYTES = 2e9          # "about 2 GB of ciphertext matrices"
PAPER_LINK_BPS = 10e9 / 8  # 10 Gb/s between the two servers
QUICK_RECORDS = 10_000


@dataclass(kw_only=True)
class RidgeConfig:
    quick: bool = True
    seed: int = 1
    records: int | None = None
    d: int = PAPER_D
    lam: float = 1.0
    chunk: int = 20_000
    workers: int | None = None
    scheduler: str | None = None
    dask_credentials: str | None = None          # the tls:// scheduler's ca.pem, cert.pem, key.pem
    insecure_plain_tcp_scheduler: bool = False   # accept a tcp:// scheduler (no TLS, no authentication)
    stat_bits: int = 40
    constant_time: bool = True
    upload_bits: int = 1024
    accuracy: bool = True
    engine: str = "cpu"
    gpu: bool = True

    def validate(self) -> None:
        if self.engine not in BULK_ENGINES:
            raise ConfigError(f"engine must be one of {', '.join(BULK_ENGINES)}, got {self.engine!r}")
        if self.records is not None:
            check_int("--records", self.records, maximum=100_000_000)
        if self.workers is not None:
            check_int("--workers", self.workers, maximum=1024)
        check_int("--d", self.d, maximum=64)
        check_int("--chunk", self.chunk, maximum=10_000_000)
        check_bounded("--lam", self.lam, LAMBDA, allow_zero=True)
        if self.stat_bits not in (40, 80):
            raise ConfigError(f"stat-bits must be 40 or 80, got {self.stat_bits!r}")
        # a tcp:// scheduler without the opt-in, or a tls:// one without good credentials, is
        # refused here, before any key is made or worker started
        scheduler_credentials(parse_scheduler(self.scheduler) if self.scheduler is not None else None,
                              self.dask_credentials, self.insecure_plain_tcp_scheduler)

    @property
    def n(self) -> int:
        return self.records or (QUICK_RECORDS if self.quick else PAPER_RECORDS)


def sklearn_on_run(cfg: RidgeConfig, records: int, chunk: int, params: P.RidgeParams) -> tuple[np.ndarray, ReplaySums]:
    """scikit-learn's Ridge on the very records the run encrypted (regenerated from the same
    seeds, ``chunk`` records at a time), as an independent plaintext reference; returns
    ``(coef, sums)``, ``sums`` holding the replayed rounding (:class:`ReplaySums`).

    Memory holds one chunk, not the data set: the records are folded into ``X^T X`` and
    ``X^T y``, and Ridge is fitted on the d x d system ``(R, z)`` with ``R^T R = X^T X`` (a
    Cholesky factor) and ``R^T z = X^T y``, whose ridge problem is the same as the records'
    (``R^T R + alpha I``, ``R^T z``) -- scikit-learn still does its own solve."""
    from sklearn.linear_model import Ridge

    sums = ReplaySums(cfg.d, params.scale, params.symmetric)
    for start in range(0, records, chunk):
        sums.add(*chunk_records(cfg.seed, start, min(chunk, records - start), cfg.d))
    R = np.linalg.cholesky(sums.xtx).T
    z = np.linalg.solve(R.T, sums.xty)
    return Ridge(alpha=cfg.lam, fit_intercept=False).fit(R, z).coef_, sums


@dataclass(frozen=True)
class PhaseRow:
    """One phase of table2_phases; the paper's row of the same phase has the same label and key."""

    phase: str = column()
    provenance: str = column()
    time_s: float | None = column()
    bytes: int | float | None = column()
    time_s_at_1m_records: float | None = column()
    bytes_at_1m_records: float | None = column()
    key: str = hidden()  # what the study calls the phase: "encryption", "solve", "total", ...


#: the paper's (time_s_at_1m_records, bytes_at_1m_records) for each phase key (None: not given);
#: its figures are for 1,000,000 records, so they stand beside ours at that count only (a quick
#: run's own time and bytes are for its fewer records)
_ENC, _AGG, _SOLVE = PAPER_PHASES_S["encryption"], PAPER_PHASES_S["aggregation"], PAPER_PHASES_S["solve"]
PAPER_PHASE_VALUES: dict[str, tuple[float | None, float | None]] = {
    "encryption": (_ENC, PAPER_BYTES),
    "aggregation": (_AGG, None),
    "pipeline": (None, None),
    "solve": (_SOLVE, None),
    "transfer": (None, None),
    "total": (sum(PAPER_PHASES_S.values()), None),
    "per_provider": (None, None),
    "gpu_aggregation": (_AGG, None),
    "gpu_encrypt_aggregate": (_ENC + _AGG, None),
}


@dataclass(frozen=True)
class LayoutRow:
    quantity: str = column()
    value: Any = column()


@dataclass(frozen=True)
class AccuracyRow:
    """Our coefficients against a reference's, held to the fixed-point error expected of the protocol."""

    data: str = column()
    records: int = column()
    d: int = column()
    lam: float = column("lambda")
    max_abs_diff: float = column()
    expected_sigma: float = column()
    max_z: float = column()
    within: bool = column(f"within_{Z_MARGIN:g}_sigma")
    replay_gap: float | None = column()
    worst_case_bound: float = column()


def accuracy_row(name: str, ours: np.ndarray, ref: np.ndarray, xtx: np.ndarray, xty: np.ndarray, m: int,
                 params: P.RidgeParams, xmax: float, ymax: float, replay: np.ndarray | None = None) -> AccuracyRow:
    """One row of the accuracy table: our coefficients minus the reference's, held to the
    fixed-point error expected of the protocol (``apps/ridge/accuracy.py``): each coefficient
    within ``Z_MARGIN`` of its standard deviation and, where the data are at hand, equal to the
    replayed rounding error up to float error (``replay_gap``). The worst-case bound of
    ``apps/ridge/params.py`` is shown beside, for scale."""
    diff = np.asarray(ours, dtype=np.float64) - np.asarray(ref, dtype=np.float64)
    sigma = rounding_sigma(xtx, xty, m, params.scale, params.lam)
    z = np.abs(diff) / sigma
    gap = None if replay is None else float(np.abs(diff - replay).max())
    worst = error_bound_from_normal(xtx, xty, m, xmax, ymax, params)
    return AccuracyRow(name, m, params.d, params.lam, float(np.abs(diff).max()), float(sigma.max()), float(z.max()),
                       bool((z <= Z_MARGIN).all()), gap, worst)


Coefs = dict[str, tuple[np.ndarray, np.ndarray]]  # name -> (ours, reference)


def _accuracy_rows(cfg: RidgeConfig) -> tuple[list[AccuracyRow], Coefs]:
    """Our protocol vs scikit-learn's Ridge on a real data set (diabetes), in one process."""
    from sklearn.linear_model import Ridge

    rows: list[AccuracyRow] = []
    coefs: Coefs = {}
    cases = [("diabetes (scikit-learn)", load_diabetes_scaled(), 0.5)]
    for name, data, lam in cases:
        params = P.RidgeParams(d=data.d, max_records=max(data.n, 1), x_bound=data.x_bound, y_bound=data.y_bound,
                               lam=lam, stat_bits=cfg.stat_bits)
        res = run_in_process(data.X, data.y, params, upload_bits=cfg.upload_bits,
                             insecure_study_size=cfg.upload_bits < 2048)
        ref = Ridge(alpha=lam, fit_intercept=False).fit(data.X, data.y).coef_
        replay = replayed_error(data.X, data.y, params.scale, params.lam_int, lam, params.symmetric)
        rows.append(accuracy_row(name, res.coef, ref, data.X.T @ data.X, data.X.T @ data.y, data.n, params,
                                 float(np.abs(data.X).max()), float(np.abs(data.y).max()), replay))
        coefs[name] = (res.coef, ref)
    return rows, coefs


@register_study(
    name=NAME, title=TITLE, paper=PAPERS["qat-paillier"], config=RidgeConfig,
    summary="Privacy-preserving ridge regression (Paillier only) of the paper's data-trading application, "
            "phases vs the paper.",
    quick=f"{QUICK_RECORDS:,} records instead of 1,000,000, in {rb.NOISE_CHUNKS} chunks over the Dask workers: "
          "about 40 s on 2 cores (docs/report.md).",
    seed="Seed of the generated records (cryptography is never seeded).",
    options=[
        Option("--records", "records", int, help=f"Records (default 1,000,000; quick {QUICK_RECORDS:,}).",
               bound=RECORDS, maximum=100_000_000),
        Option("--d", "d", int, PAPER_D, "Features per record (paper: 20).", bound=FEATURES),
        Option("--lam", "lam", float, 1.0, "Ridge lambda (scikit-learn's alpha).", bound=LAMBDA),
        Option("--chunk", "chunk", int, 20_000,
               f"Records per Dask task, at most: a run is cut into at least {rb.NOISE_CHUNKS} tasks where it has the "
               "records, so its chunk times give its run-to-run noise.", bound=BATCH),
        Option("--workers", "workers", int, help="Local Dask workers (default: one per core).", bound=WORKERS),
        Option("--scheduler", "scheduler", help="Use a running Dask cluster (tls://host:8786; default: a local "
               "cluster, TLS with per-run certificates)."),
        Option(CREDENTIALS_FLAG, "dask_credentials", Path, convert=as_str,
               help="Folder holding the tls:// scheduler's ca.pem, cert.pem and key.pem (`cryptoffload dask "
                    "credentials`)."),
        Option(INSECURE_FLAG, "insecure_plain_tcp_scheduler", bool, False, INSECURE_HELP),
        Option("--stat-bits", "stat_bits", int, 40, "Statistical hiding of the unpack masks: 40 or 80.",
               bound=STAT_BITS, maximum=80),
        Option("--variable-time", "constant_time", bool, False,
               "Faster encryption table lookup (leaks cache access patterns).", convert=negated),
        Option("--no-accuracy", "accuracy", bool, False, "Skip the scikit-learn comparisons.", convert=negated),
        Option("--engine", "engine", str, "cpu",
               "Where the per-record upload is encrypted and aggregated: cpu, gpu (Dask workers declaring a GPU "
               "resource; a local cluster declares one per worker), gpu-twin (the GPU kernels on the CPU, slow)."),
        Option("--gpu/--no-gpu", "gpu", bool, True,
               "Also measure GPU aggregation rows where a CUDA GPU is present."),
    ],
)
def run(cfg: RidgeConfig) -> Sections:
    """The study's table of contents: parties and keys, the two upload modes on Dask, the
    solve, then one table (or claim) per step below."""
    gpu_reason = ENGINES["gpu"].reason() if cfg.gpu else None
    frame.expect((6 if cfg.accuracy else 4) + (3 if cfg.gpu and gpu_reason is None else 0))
    n = cfg.n
    found = Sections(key_figure="phases.png", paper=PAPER)
    frame.step("CSP key generation")
    parties = _parties(cfg)
    uploads = _upload_runs(cfg, parties)
    frame.step("masked unpack and solve")
    models = _solve(cfg, parties, uploads)
    times = _phase_times(n, uploads, models)
    rows = _phase_rows(n, uploads, models, times)
    if cfg.gpu and gpu_reason is None:
        gpu_rows, gpu_line = _gpu_rows(cfg, parties, uploads, times)
        rows += gpu_rows
        found.headline.append(gpu_line)
    if gpu_reason is not None:
        found.extra["gpu_not_measured"] = gpu_reason
    paper = _paper_rows(rows)
    acc_rows, coefs = _accuracy(cfg, parties.params, models, uploads)
    found.tables += [_phases_table(cfg, uploads.bulk, rows, paper, gpu_reason), _layout_table(cfg, parties, uploads),
                     _accuracy_table(parties.params, acc_rows)]
    bands = _phase_bands(cfg, uploads, times)
    accuracy = rb.accuracy_band(acc_rows[0].max_z, parties.params.frac_bits, cfg.d)
    found.tables += rb.band_tables(list(bands.values()), accuracy, _scaled_provenance(n))
    found.notes = _notes(acc_rows, models.same_model)
    found.headline += _headlines(cfg, uploads, times)
    found.verdicts = rv.phase_verdicts(found.by_id["table2_phases"], rows, bands,
                                       Judging(cfg.quick, "sample", full_command(NAME), f"{n:,} records scaled linearly"))
    if cfg.d == PAPER_D:
        found.headline += _phase_claims(found.verdicts, n, uploads.bulk.result.ciphertexts,
                                        uploads.bulk.result.encode_s + uploads.bulk.result.encrypt_s,
                                        uploads.bulk.result.aggregate_s, uploads.workers)
    found.headline.append(_accuracy_claim(acc_rows, models, accuracy))
    found.extra.update(_extra(cfg, uploads, models, times))
    found.figures = [("phases.png", functools.partial(_phases_plot, n=n, times=times)),
                     ("coefficients.png", functools.partial(_coefficients_plot, coefs=coefs))]
    return found


def _run_params(cfg: RidgeConfig) -> P.RidgeParams:
    """The session's parameters: Algorithm 1's bounds, sized for the paper's million records
    at least (so the packing is the paper's whatever the run's size)."""
    return P.RidgeParams(d=cfg.d, max_records=max(cfg.n, PAPER_RECORDS), x_bound=1.0,
                         y_bound=algorithm1_y_bound(cfg.d), lam=cfg.lam, stat_bits=cfg.stat_bits)


@dataclass(frozen=True)
class Parties:
    """The run's session (:class:`~cryptoffload.apps.ridge.session.RidgeSession`): the study plays
    every party, and keeps the upload key pair (``upload_sk``) to check the GPU rows by decryption."""

    session: RidgeSession
    upload_sk: PrivateKey
    keygen_s: float

    @property
    def params(self) -> P.RidgeParams:
        return self.session.params


def _parties(cfg: RidgeConfig) -> Parties:
    params = _run_params(cfg)
    t0 = _time.perf_counter()
    session = RidgeSession.generate(params, upload_bits=cfg.upload_bits, insecure_study_size=cfg.upload_bits < 2048,
                                    workers=2)
    keygen_s = _time.perf_counter() - t0
    assert session.keys is not None
    return Parties(session, session.keys.upload[1], keygen_s)


@dataclass(frozen=True)
class Uploads:
    """The same records uploaded both ways on Dask: per record (the paper's workload) and per
    provider (summed in the clear, one upload), with the ciphertexts of the latter."""

    bulk: BulkRun
    per_provider: BulkRun
    per_provider_cts: list[int]
    workers: int


def _upload_runs(cfg: RidgeConfig, parties: Parties) -> Uploads:
    from cryptoffload.engines.dask import DaskRunner

    n, params, upload_pk = cfg.n, parties.params, parties.session.upload_pk
    gpu_bulk = cfg.engine != "cpu"
    with DaskRunner(cfg.scheduler, cfg.workers, resources={"GPU": 1} if gpu_bulk and cfg.scheduler is None else None,
                    credentials=cfg.dask_credentials, insecure_plain_tcp=cfg.insecure_plain_tcp_scheduler) as runner:
        frame.step(f"per-record upload: {n:,} records on {runner.describe()}" + (f" ({cfg.engine})" if gpu_bulk else ""))
        bulk = run_bulk(runner, upload_pk, params, n, seed=cfg.seed, chunk=rb.noise_chunk(n, cfg.chunk),
                        constant_time=cfg.constant_time, progress="encrypt + aggregate" if frame.shown() else False,
                        engine=cfg.engine)
        frame.step("per-provider mode, same records")
        pp_run, pp_cts = run_per_provider(runner, upload_pk, params, n, seed=cfg.seed,
                                          progress="encode + sum" if frame.shown() else False)
        return Uploads(bulk, pp_run, pp_cts, bulk.workers)


@dataclass(frozen=True)
class Models:
    """The per-record run's model (with its solve timings) and float reference, and whether
    the per-provider run's model is the same fractions."""

    model: P.RidgeModel
    timings: dict[str, float]
    reference: np.ndarray
    max_abs_err: float
    per_provider_timings: dict[str, float]
    same_model: bool


def _solve(cfg: RidgeConfig, parties: Parties, uploads: Uploads) -> Models:
    session, r = parties.session, uploads.bulk.result
    agg = session.aggregator()
    agg.add_products(r.aggregate, r.records)
    timings: dict[str, float] = {}
    model = session.finalize(agg.result(), timings)
    reference = np.linalg.solve(r.xtx + cfg.lam * np.eye(cfg.d), r.xty)
    pp_agg = session.aggregator()
    pp_agg.add(P.Upload(session.upload_pk.fingerprint, uploads.per_provider_cts, 1, uploads.per_provider.result.records))
    pp_t: dict[str, float] = {}
    pp_model = session.finalize(pp_agg.result(), pp_t)
    return Models(model, timings, reference, float(np.abs(model.coef - reference).max()), pp_t,
                  list(pp_model.fractions) == list(model.fractions))


@dataclass(frozen=True)
class PhaseTimes:
    """Our phase times (seconds) and the factor to the paper's 1,000,000 records."""

    encrypt_s: float  # encode + pack + encrypt, worker-seconds / workers
    aggregate_s: float
    solve_s: float
    transfer_s: float  # derived: the wire bytes at the paper's 10 Gb/s
    scale: float
    #: the pipeline at 1,000,000 records: its wall clock in a full run, else the steady-state
    #: pipeline time (worker-seconds / workers) scaled -- the wall clock of a small run also
    #: holds worker start-up and first imports
    pipeline_at_1m_s: float

    @property
    def total_at_1m_s(self) -> float:
        return self.pipeline_at_1m_s + self.solve_s


def _phase_times(n: int, uploads: Uploads, models: Models) -> PhaseTimes:
    r, w, t = uploads.bulk.result, uploads.workers, models.timings
    scale = PAPER_RECORDS / n
    steady = (r.encode_s + r.encrypt_s + r.aggregate_s) / w
    return PhaseTimes(encrypt_s=r.encrypt_s / w + r.encode_s / w, aggregate_s=r.aggregate_s / w,
                      solve_s=t["unpack"] + t["mask_solve"] + t["csp_solve"] + t["recover"],
                      transfer_s=r.wire_bytes / PAPER_LINK_BPS, scale=scale,
                      pipeline_at_1m_s=uploads.bulk.wall_s if n == PAPER_RECORDS else steady * scale)


def _phase_rows(n: int, uploads: Uploads, models: Models, times: PhaseTimes) -> list[PhaseRow]:
    r, wall, pp = uploads.bulk.result, uploads.bulk.wall_s, uploads.per_provider
    x = times.scale
    return [
        PhaseRow("encryption (encode + pack + encrypt), per record", "measured", times.encrypt_s, r.wire_bytes,
                 times.encrypt_s * x, r.wire_bytes * x, "encryption"),
        PhaseRow("aggregation (column products)", "measured", times.aggregate_s, None, times.aggregate_s * x, None,
                 "aggregation"),
        PhaseRow("encrypt + aggregate pipeline, wall clock", "measured", wall, None, times.pipeline_at_1m_s, None,
                 "pipeline"),
        PhaseRow("solve: masked unpack + masked solve + recovery", "measured", times.solve_s, None, times.solve_s,
                 None, "solve"),
        PhaseRow("transfer of the ciphertexts at 10 Gb/s", "derived", times.transfer_s, r.wire_bytes,
                 times.transfer_s * x, r.wire_bytes * x, "transfer"),
        PhaseRow("total: pipeline + solve", "measured", wall + times.solve_s, None, times.total_at_1m_s, None, "total"),
        PhaseRow("per-provider mode (same records), all phases", "measured",
                 pp.wall_s + sum(models.per_provider_timings.values()), pp.result.wire_bytes, None, None,
                 "per_provider"),
    ]


def _gpu_rows(cfg: RidgeConfig, parties: Parties, uploads: Uploads, times: PhaseTimes) -> tuple[list[PhaseRow], str]:
    """The GPU's aggregation of the run's ciphertexts, and its encryption + aggregation, each
    checked by decryption against the CPU run's aggregate; and its headline."""
    r = uploads.bulk.result
    prov = parties.session.provider()
    g = _gpu.measure_ridge_gpu(parties.session.upload_pk, parties.upload_sk,
                               prov.packed_records(*chunk_records(cfg.seed, 0, cfg.n, cfg.d)), cfg.n, prov.plaintexts,
                               r.aggregate)
    line = (f"GPU ({g.device}): aggregation of {g.ciphertexts:,} ciphertexts {g.aggregate_s:.2f} s "
            f"with copies (measured; paper's K80 at 1,000,000 records: 116 s)")
    return [
        PhaseRow(f"aggregation on the GPU ({g.device}): host to device, column products, back", "measured",
                 g.aggregate_s, r.wire_bytes, g.aggregate_s * times.scale, None, "gpu_aggregation"),
        PhaseRow(f"encryption + aggregation on the GPU ({g.device}), ciphertexts kept on the device", "measured",
                 g.encrypt_aggregate_s, None, g.encrypt_aggregate_s * times.scale, None, "gpu_encrypt_aggregate"),
    ], line


def _scaled_provenance(n: int) -> str:
    """A figure at 1,000,000 records is measured in a full run, derived (scaled) from a smaller one."""
    return "measured" if n == PAPER_RECORDS else "derived"


#: the paper's seconds for each phase it times, keyed like table2_phases' rows
PAPER_PHASE_S = {"encryption": _ENC, "aggregation": _AGG, "solve": _SOLVE, "total": _ENC + _AGG + _SOLVE}


def _phase_bands(cfg: RidgeConfig, uploads: Uploads, times: PhaseTimes) -> dict[str, Banded]:
    """Each timed phase at 1,000,000 records over this run's noise (``studies/ridge/bands.py``);
    the paper's value beside it where the run has the paper's d."""
    figures = rb.PhaseFigures(times.encrypt_s * times.scale, times.aggregate_s * times.scale, times.pipeline_at_1m_s,
                              times.solve_s)
    paper: dict[str, float | None] = dict(PAPER_PHASE_S) if cfg.d == PAPER_D else {}
    return rb.phase_bands(figures, rb.chunk_noise(uploads.bulk.result.per_chunk), paper)


def _paper_rows(rows: list[PhaseRow]) -> list[PhaseRow]:
    """The paper's row beside each of ours (cited; None where the paper gives no figure)."""
    return [PhaseRow(row.phase, printed(), None, None, *PAPER_PHASE_VALUES[row.key], row.key) for row in rows]


def worker_share(bulk: BulkRun) -> str:
    """Who ran the chunks: ``2 of 2 Dask workers (5,000 + 5,000 records)`` -- the workers that
    ran tasks, not merely those connected, since worker-seconds are divided by them."""
    shares = " + ".join(f"{r:,}" for r in bulk.shares)
    return f"{bulk.workers} of {bulk.workers_available} Dask worker(s) ({shares} records)"


def _phases_table(cfg: RidgeConfig, bulk: BulkRun, rows: list[PhaseRow], paper: list[PhaseRow],
                  gpu_reason: str | None) -> Table:
    gpu_note = f" GPU rows: not measured: {gpu_reason}." if gpu_reason is not None else ""
    scaled = cfg.n != PAPER_RECORDS  # the last columns extrapolate: derived, whatever the row measured
    return table_of(PhaseRow, rows, paper=paper, id="table2_phases", provenance="mixed",
                    column_provenance=({"time_s_at_1m_records": "derived", "bytes_at_1m_records": "derived"}
                                       if scaled else None),
                    title=f"Phases for {cfg.n:,} records, d = {cfg.d}, {cfg.upload_bits}-bit upload key "
                          f"({worker_share(bulk)})",
                    note="Paper: QAT DH8970 encryption (QHCS1), K80 aggregation, garbled-circuit solve. Ours: this "
                         "machine's cores via Dask; encryption/aggregation times are worker-seconds divided by the "
                         "workers that ran chunks (they overlap in one pipeline, whose wall clock is the third row). The "
                         "last two columns scale linearly to 1,000,000 records where the run had fewer (quick mode), "
                         "from worker-seconds (start-up excluded) -- an extrapolation, not a measurement. The paper's "
                         "figures are for 1,000,000 records, so they stand beside those columns only." + gpu_note)


def _layout_table(cfg: RidgeConfig, parties: Parties, uploads: Uploads) -> Table:
    params, csp, platform, r = parties.params, parties.session.csp, parties.session.platform, uploads.bulk.result
    rows = [
        LayoutRow("values per record (upper triangle + b)", params.value_count),
        LayoutRow("plaintexts per record (paper: 17)", platform.layout.plaintexts_needed(params.value_count)),
        LayoutRow("slot bits (value + guard + sign + mask headroom)", platform.layout.slot_bits),
        LayoutRow("statistical hiding of the unpack masks (bits)", cfg.stat_bits),
        LayoutRow("upload key bits", csp.upload_pk.bits),
        LayoutRow("solve key bits (needed)", f"{csp.solve_pk.bits} ({required_solve_key_bits(params)})"),
        LayoutRow("ciphertexts uploaded", r.ciphertexts),
        LayoutRow("masked-solve exponentiations", platform.exponentiations),
        LayoutRow("key generation (s)", parties.keygen_s),
        LayoutRow("peak worker memory (MiB)", r.peak_rss_bytes / 2**20),
    ]
    return table_of(LayoutRow, rows, id="layout", title="Packing and keys", provenance="measured")


def _accuracy(cfg: RidgeConfig, params: P.RidgeParams, models: Models,
              uploads: Uploads) -> tuple[list[AccuracyRow], Coefs]:
    """This run against its float normal equations, and (``cfg.accuracy``) against
    scikit-learn on the same records and on the diabetes data; the coefficients to plot."""
    r, coef = uploads.bulk.result, models.model.coef
    rows = [accuracy_row("this run vs float normal equations", coef, models.reference, r.xtx, r.xty, cfg.n, params,
                         1.0, params.y_bound)]
    coefs: Coefs = {"this run": (coef, models.reference)}
    if not cfg.accuracy:
        return rows, coefs
    frame.step("accuracy vs scikit-learn")
    sk, sums = sklearn_on_run(cfg, cfg.n, cfg.chunk, params)
    rows.append(accuracy_row("this run vs scikit-learn Ridge (Algorithm 1 data)", coef, sk, r.xtx, r.xty, cfg.n,
                             params, sums.x_max, sums.y_max, sums.error(params.lam_int, cfg.lam)))
    more, more_coefs = _accuracy_rows(cfg)
    return rows + more, {"this run vs scikit-learn": (coef, sk), **more_coefs}


def _accuracy_table(params: P.RidgeParams, rows: list[AccuracyRow]) -> Table:
    return table_of(
        AccuracyRow, rows, id="accuracy", provenance="mixed",
        title="Coefficients vs scikit-learn Ridge (fit_intercept=False), held to the fixed-point error expected of "
              "the protocol",
        column_provenance={"max_abs_diff": "measured", "expected_sigma": "derived", "max_z": "derived",
                           f"within_{Z_MARGIN:g}_sigma": "derived", "replay_gap": "derived",
                           "worst_case_bound": "derived"},
        note=f"expected_sigma: standard deviation of the worst coefficient's fixed-point error (independent "
             f"roundings to 2^-{params.frac_bits}, exact rational solve; apps/ridge/accuracy.py). max_z: "
             f"the largest |error| / its own sigma; a correct protocol exceeds {Z_MARGIN:g} with probability "
             "below d x 6.3e-5. replay_gap: |our error - the rounding error replayed in float| (float-solve "
             "noise only). worst_case_bound: apps/ridge/params.py's bound, for scale.")


def _notes(acc_rows: list[AccuracyRow], same_model: bool) -> list[str]:
    notes = []
    if not all(row.within for row in acc_rows):
        notes.append(f"a coefficient differs from the reference by more than {Z_MARGIN:g} standard deviations "
                            "of the expected fixed-point error")
    if not same_model:
        notes.append("per-record and per-provider models differ (they should be identical fractions)")
    return notes


def _headlines(cfg: RidgeConfig, uploads: Uploads, times: PhaseTimes) -> list[str]:
    where = worker_share(uploads.bulk) + (f" at {cfg.scheduler}" if cfg.scheduler else " on this machine")
    lines = [f"{cfg.n:,} records on {where}: encrypt + aggregate {uploads.bulk.wall_s:,.1f} s, solve "
                           f"{times.solve_s:,.1f} s (measured); paper 10.6 min + 116 s + 20 s = "
                           f"{sum(PAPER_PHASES_S.values()):,.0f} s"]
    if cfg.n != PAPER_RECORDS:
        lines.append(f"scaled linearly to 1,000,000 records: {times.total_at_1m_s:,.0f} s (derived from "
                     "this run)")
    return lines


def _accuracy_claim(acc_rows: list[AccuracyRow], models: Models, accuracy: rb.AccuracyBand) -> Claim:
    """The paper gives no accuracy figure; ours is the first accuracy row (this run against its
    float normal equations), banded in z by what a correct protocol stays within (no paper
    value: it stays a claim)."""
    this_run = acc_rows[0]
    return Claim(paper="no accuracy figure given", provenance="measured", table="accuracy", key=[this_run.data],
                 ours=f"max |ours - float ridge| = {models.max_abs_err:.1e}, {this_run.max_z:.1f} standard deviations "
                      f"of the fixed-point error expected of the protocol ({this_run.expected_sigma:.1e}); "
                      f"per-provider model identical: {models.same_model}",
                 band=[accuracy.low, accuracy.high], most_sensitive=accuracy.most_sensitive,
                 band_method=accuracy.method)


def _extra(cfg: RidgeConfig, uploads: Uploads, models: Models, times: PhaseTimes) -> dict[str, Any]:
    return dict(config={"records": cfg.n, "d": cfg.d, "lam": cfg.lam, "chunk": cfg.chunk, "workers": uploads.workers,
                        "scheduler": cfg.scheduler, "stat_bits": cfg.stat_bits, "constant_time": cfg.constant_time},
                bulk=uploads.bulk.summary(), per_provider=uploads.per_provider.summary(), timings=models.timings,
                total_at_1m_s=times.total_at_1m_s, paper_total_s=sum(PAPER_PHASES_S.values()),
                same_model=models.same_model)


def _phases_plot(path: Path, *, n: int, times: PhaseTimes) -> None:
    labels = ["encryption", "aggregation", "solve"]
    ours = [times.encrypt_s * times.scale, times.aggregate_s * times.scale, times.solve_s]
    theirs = [PAPER_PHASES_S[k] for k in labels]
    bar_plot(path, [f"{k} (ours)" for k in labels] + [f"{k} (paper)" for k in labels], ours + theirs,
             kinds=["measured" if n == PAPER_RECORDS else "measured, scaled to 1M records"] * 2 + ["measured"]
             + [printed()] * 3,
             title="Ridge regression on 1,000,000 records, d = 20: phase times", ylabel="seconds")


def _coefficients_plot(path: Path, *, coefs: Coefs) -> None:
    name = next(iter(coefs))
    ours, ref = coefs[name]
    idx = list(range(1, len(ours) + 1))
    line_plot(path, idx, {"ours (encrypted)": list(ours), "reference (plaintext)": list(ref)},
              title=f"Coefficients, {name}", xlabel="coefficient", ylabel="value", logx=False, logy=False,
              provenance="measured")   # both computed in this run: ours decrypted, the reference in the clear


#: the phases the paper times (keys of table2_phases' rows)
_PHASES = ("encryption", "aggregation", "solve", "total")
PAPER_HARDWARE = {"encryption": "one QAT DH8970 (QHCS1)", "aggregation": "a K80 GPU", "solve": "a garbled circuit",
                  "total": "QAT + K80 + garbled circuit"}


def _phase_claims(judged: list[Verdict], n: int, ciphertexts: int, encrypt_ws: float,
                  aggregate_ws: float, workers: int) -> list[Claim]:
    """The paper's three phases and its total at 1,000,000 records, each with its verdict and why
    ours differs (the scoreboard counts every row)."""
    reasons = _phase_reasons(n, ciphertexts, encrypt_ws, aggregate_ws)
    scaled = "" if n == PAPER_RECORDS else f", scaled linearly from {n:,} records"
    by = {v.figure: v for v in judged}
    found = []
    for name in _PHASES:
        v = by.get(f"{name} at 1,000,000 records (s)")
        if v is None:
            continue
        found.append(Claim.of_verdict(
            v, paper=f"{name} of 1,000,000 records: {v.paper:,.0f} s on {PAPER_HARDWARE[name]}",
            ours=f"{name}: {v.ours:,.0f} s ({100 * (v.ours / v.paper - 1):+.0f} %) with {workers} Dask worker(s) "
                 f"here{scaled}",
            why=f"measured on this machine, nothing predicted: nothing of ours models {PAPER_HARDWARE[name]}; "
                + reasons[name]))
    return found


def _phase_reasons(n: int, ciphertexts: int, encrypt_ws: float, aggregate_ws: float) -> dict[str, str]:
    """Why each phase differs from the paper's, in per-ciphertext costs (worker-seconds over the
    ciphertexts) against the paper's (its phase time over its 17 ciphertexts per record)."""
    paper_cts = PAPER_RECORDS * PAPER_PLAINTEXTS  # one ciphertext per plaintext
    enc = (encrypt_ws / ciphertexts * 1e6, PAPER_PHASES_S["encryption"] / paper_cts * 1e6)
    agg = (aggregate_ws / ciphertexts * 1e6, PAPER_PHASES_S["aggregation"] / paper_cts * 1e6)
    return {
        "encryption": f"{round(ciphertexts / n)} plaintexts per record (the paper: {PAPER_PLAINTEXTS}, its slots need "
                      f"no unpack mask) at {enc[0]:.0f} us per ciphertext per core here against {enc[1]:.0f} us per "
                      "ciphertext on the paper's QAT DH8970 card",
        "aggregation": f"one modular product per ciphertext: {agg[0]:.2f} us per ciphertext per core here against the "
                       f"paper's K80 at {agg[1]:.1f} us, copies included (the paper does not break its 116 s down)",
        "solve": "a masked Paillier solve (Giacomelli et al.) replaces the paper's garbled circuit",
        "total": "encryption is most of both totals",
    }
