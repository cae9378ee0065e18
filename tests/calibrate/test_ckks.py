"""CKKS calibration: a quick run (small ring, few samples) writes a *measured* profile that the
loader accepts, with every field the BSGS model reads, all positive; bad arguments are refused;
on a fake device whose work finishes only when waited for, each op cost is exactly its work."""

from __future__ import annotations

from pathlib import Path

import pytest

from cryptoffload.crypto.ckks import CkksParams
from cryptoffload.errors import ConfigError
from cryptoffload.profiles.loader import load_profile
from cryptoffload.calibrate import ckks
from cryptoffload.calibrate.ckks import REQUIRED_FIELDS, calibrate_ckks, measure_link, measure_ops_in_context
from late_device import LateDevice, fake_clock

SMALL = CkksParams(4096, (40, 30, 39), 30)      # one level: input 2 limbs, one rescale


@pytest.mark.slow
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


def test_op_costs_are_the_device_work_after_a_warm_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a late device (tests/late_device.py: an op's work finishes only when waited for, and
    the first call of each op queues 100 s more, a kernel compilation) every op cost is exactly
    that op's steady work: each call is waited for before and after (no sync missing, nothing
    from the set-up's keygen/encrypt/encode), and the first, untimed pass absorbs first calls."""
    work = {"rotate": 1.0, "mul_plain": 2.0, "add": 0.25, "rescale": 8.0, "serialize_ciphertext": 0.5,
            "deserialize_ciphertext": 4.0, "keygen": 1e3, "encrypt": 1e4, "encode": 1e5}
    clock = fake_clock(monkeypatch)
    made: list[LateDevice] = []

    def make(name: str, params: CkksParams, **kw: bool) -> LateDevice:
        made.append(LateDevice(params, clock, work, first_call=100.0, **kw))
        return made[-1]

    monkeypatch.setattr(ckks, "make_backend", make)
    ops = measure_ops_in_context(SMALL, "late", repeats=1)    # one timed pass: no median hides a first call
    assert ops == {"rotate_s": 1.0, "rotate_low_s": 1.0, "pmul_s": 2.0, "add_s": 0.25, "add_low_s": 0.25,
                   "rescale_s": 8.0, "serialize_s": 0.5, "deserialize_s": 4.0}
    assert len(made) == 1 and made[0].counts["rescale"] == 2     # the warm-up pass and the timed one
