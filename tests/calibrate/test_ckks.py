"""CKKS calibration: a quick run (small ring, few samples) writes a *measured* profile that the
loader accepts, with every field the BSGS model reads, all positive; bad arguments are refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from cryptoffload.crypto.ckks import CkksParams
from cryptoffload.errors import ConfigError
from cryptoffload.profiles.loader import load_profile
from cryptoffload.calibrate.ckks import REQUIRED_FIELDS, calibrate_ckks, measure_link

SMALL = CkksParams(4096, (40, 30, 39), 30)      # one level: input 2 limbs, one rescale


def test_quick_calibration_writes_a_measured_profile(tmp_path: Path) -> None:
    path = calibrate_ckks(tmp_path / "ckks.toml", params=SMALL, repeats=3,
                          hold_s=0.01, progress=False)
    prof = load_profile(path, required=REQUIRED_FIELDS)
    assert prof.kind == "measured" and prof.name == "measured-ckks-seal-n4096"
    for name in REQUIRED_FIELDS:
        assert prof.value(name) > 0, name
        assert "measured" in prof.source(name) or "parameter" in prof.source(name) \
            or "RNS limbs" in prof.source(name), name
    assert prof.value("ring.poly_modulus_degree") == 4096 and prof.value("ring.limbs") == 2
    assert prof.value("ciphertext.bytes") > prof.value("ciphertext.bytes_low")
    for key in ("cpu", "cores", "date", "command"):
        assert isinstance(prof.meta[key], str) and prof.meta[key], key
    assert "SAME worker" in prof.source("overhead.task_s")
    raw = prof.meta["link_raw_s"]       # the busy-sender gaps, at the BSGS execution's switch interval
    assert raw["gap_ct_busy_s"] > 0 and raw["gap_batch_busy_s"] > 0 and raw["switch_interval_s"] == 0.001
    if "link.busy_bandwidth_Bps" in prof.values:       # left out when noise makes it non-positive
        assert prof.value("link.busy_bandwidth_Bps") > 0 and prof.value("link.busy_latency_s") > 0
        assert "computing" in prof.source("link.busy_latency_s")


def test_link_with_a_busy_sender_restores_the_switch_interval() -> None:
    import sys

    from cryptoffload.engines.dask import DaskRunner

    with DaskRunner(workers=2) as r:
        before = r.client.run(sys.getswitchinterval)
        link = measure_link(r, 4096, 1, rounds=3, busy_call_s=0.001, switch_interval_s=0.002)
        assert r.client.run(sys.getswitchinterval) == before
    assert link["switch_interval_s"] == 0.002 and link["busy_call_s"] == 0.001
    assert link["gap_ct_busy_s"] > 0 and link["busy_batch_bytes"] == 8 * 4096


class _OneWorker:
    def worker_addresses(self) -> list[str]:
        return ["tcp://127.0.0.1:1"]


def test_bad_arguments_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="repeats must be a positive integer"):
        calibrate_ckks(tmp_path / "x.toml", params=SMALL, repeats=0, progress=False)
    with pytest.raises(ConfigError, match="params must be a CkksParams"):
        calibrate_ckks(tmp_path / "x.toml", params="small", progress=False)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="hold_s must be"):
        calibrate_ckks(tmp_path / "x.toml", params=SMALL, hold_s=-1, progress=False)
    with pytest.raises(ConfigError, match="2 workers or more, got 1"):
        measure_link(_OneWorker(), 1000, 1)
    assert not (tmp_path / "x.toml").exists()
