"""A bootstrap's stages split over Dask workers (engines/bootstrap_run.py) on the CPU twin at a
small insecure ring (a study setting): one 2-worker TLS LocalCluster and one key set for the
module. The whole bootstrap with every stage split over 2 devices decrypts to the values
the bootstrap in one process gives (within its precision); one stage split equals the stage in
one process; input mistakes are one-line ConfigErrors and no secret key reaches a worker."""

from __future__ import annotations

from typing import Iterator

import numpy as np
import pytest

from cryptoffload.crypto.ckks import CkksParams, make_backend
from cryptoffload.crypto.ckks.bootstrap import dft
from cryptoffload.crypto.ckks.bootstrap.plan import BootstrapPlan
from cryptoffload.crypto.ckks.bootstrap.precision import precision
from cryptoffload.crypto.ckks.errors import CkksError
from cryptoffload.crypto.ckks.gpu.dnum import params_for_dnum
from cryptoffload.engines.bootstrap_run import (StageSession, StagesOnWorkers, StageWork, bootstrap_on_workers,
                                                stage_in_process, stage_part_costs, verify_stage)
from cryptoffload.engines.dask import DaskRunner
from cryptoffload.errors import ConfigError
from cryptoffload.workloads.bsgs import split

#: N = 1024 (insecure: a study setting), as tests/crypto/ckks/bootstrap/test_bootstrap.py
PARAMS = params_for_dnum(CkksParams(1024, (60,) + (59,) * 17 + (60,), 59), 3)
PLAN = BootstrapPlan((2, 2))


# run on the workers (top-level, so they pickle by reference)
def sessions_left() -> int:
    from cryptoffload.engines import ckks_workers

    return len(ckks_workers.SESSIONS)


def holds_secret() -> list[bool]:
    from cryptoffload.engines import ckks_workers

    return [b.can_decrypt for b in ckks_workers.BACKENDS.values()]


@pytest.fixture(scope="module")
def runner() -> Iterator[DaskRunner]:
    with DaskRunner(workers=2) as r:
        yield r


@pytest.fixture(scope="module")
def twin():
    be = make_backend("gpu-twin", PARAMS, insecure_study=True)
    be.keygen([])
    be.bootstrap_setup(PLAN)
    return be


def _values(n: int) -> np.ndarray:
    rng = np.random.default_rng()
    return rng.uniform(-1, 1, n)


def test_a_bootstrap_with_its_stages_on_workers_gives_the_single_process_values(runner, twin) -> None:
    x = _values(twin.slots)
    ct = twin.encrypt(x, level=1)
    alone = twin.decrypt(twin.bootstrap(ct))
    with StagesOnWorkers(runner, twin, 2) as stages:
        out, run = bootstrap_on_workers(stages, ct)
        assert [name for name, _ in stages.runs] == ["CoeffToSlot 0", "CoeffToSlot 1", "SlotToCoeff 0",
                                                     "SlotToCoeff 1"]
        assert all(r.active_devices == min(2, r.giants) for _, r in stages.runs)
        assert max(r.active_devices for _, r in stages.runs) == 2      # some stage really is split
        y = _values(twin.slots)
        again, _ = bootstrap_on_workers(stages, twin.encrypt(y, level=1))   # the sessions reused: inputs move
        assert len(stages.sessions) == 4 and len(stages.runs) == 8 and stages.load_s > 0
    got = twin.decrypt(out)
    assert twin.level(out) == twin.bootstrapper.schedule.after and run.level_out == twin.level(out)
    assert precision(got, x).mean_bits >= 20
    assert precision(got, alone).worst_bits >= 30           # the values of the bootstrap in one process
    assert precision(twin.decrypt(again), y).mean_bits >= 20
    assert runner.gather([runner.submit(sessions_left, worker=a) for a in runner.worker_addresses()]) == [0, 0]
    assert not any(v for held in runner.gather([runner.submit(holds_secret, worker=a)
                                                for a in runner.worker_addresses()]) for v in held)


def test_one_stage_split_equals_the_stage_in_one_process_and_its_parts_are_timed(runner, twin) -> None:
    spec = twin.bootstrapper.stage_encodings(dft.SLOT_TO_COEFF)[0]
    work = StageWork.of(spec)
    ct = twin.encrypt_complex(_values(twin.slots) * 0.5, level=spec.level, scale=float(twin.primes[spec.level]))
    ref = stage_in_process(twin, work, ct)
    with StageSession(runner, twin, work, ct) as session:
        for devices in (1, 2, 3):                            # 3 devices on 2 workers: round-robin
            res = session.run(devices, warmup=0)
            assert verify_stage(twin, res, ref) >= 30
            assert res.devices == devices and res.workers == min(devices, 2)
            assert ("round-robin" in res.note) == (devices > 2)
        costs = session.costs(2, 1)
        assert len(costs) == 2 and all(c["bytes"] > 0 and c["baby_s"] > 0 for c in costs)
        with pytest.raises(ConfigError, match="replicated baby steps only"):
            session.run(split(session.shape, 2, "broadcast"))
        with pytest.raises(ConfigError, match="at level"):
            session.load(twin.encrypt(_values(twin.slots), level=1))
    enc = twin.bootstrapper.encoded(dft.SLOT_TO_COEFF)[0]
    assert set(stage_part_costs(twin, enc, ct, 1)) >= {"baby_first_s", "term_s", "moddown_s"}


def test_mistakes_are_one_line_config_errors(runner, twin) -> None:
    spec = twin.bootstrapper.stage_encodings(dft.COEFF_TO_SLOT)[0]
    work = StageWork.of(spec)
    low = twin.encrypt(_values(twin.slots), level=1)
    with pytest.raises(ConfigError, match="at level 1, the stage runs at level"):
        StageSession(runner, twin, work, low)
    with pytest.raises(ConfigError, match="positive integer"):
        work.with_baby(0)
    with pytest.raises(ConfigError, match="StageWork"):
        StageSession(runner, twin, spec, low)
    with pytest.raises(ConfigError, match="devices must be a positive integer"):
        StagesOnWorkers(runner, twin, 0)
    fresh = make_backend("gpu-twin", PARAMS, insecure_study=True)
    fresh.keygen([])
    with pytest.raises(CkksError, match="bootstrap_setup"):
        bootstrap_on_workers(StagesOnWorkers(runner, fresh, 1), fresh.encrypt(_values(fresh.slots), level=1))
