"""Quick mode agrees with the full run or abstains (issue 35), held on small configurations of
the studies whose full run is cheap enough for the suite: each study is run both ways and every
quick verdict must be the full run's or "not judged in quick mode" (the rule itself is held for
any bands in tests/report/test_verdicts.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cryptoffload.report.result import StudyResult
from cryptoffload.report.verdicts import NOT_JUDGED
from cryptoffload.studies.fpga_reconfig import study as fpga_reconfig
from cryptoffload.studies.paillier_offload import study as paillier_offload


def _both(run, make, tmp_path: Path) -> tuple[StudyResult, StudyResult]:
    return run(make(True), tmp_path / "quick"), run(make(False), tmp_path / "full")


def _held(quick: StudyResult, full: StudyResult) -> list[str]:
    """Every quick verdict that is neither the full run's nor an abstention."""
    by = {(v.table, repr(v.key), v.column): v for v in full.verdicts}
    assert {(v.table, repr(v.key), v.column) for v in quick.verdicts} == set(by)  # the same rows judged
    return [f"{v.figure}: quick {v.kind}, full {by[(v.table, repr(v.key), v.column)].kind}"
            for v in quick.verdicts if v.kind not in (NOT_JUDGED, by[(v.table, repr(v.key), v.column)].kind)]


@pytest.mark.parametrize("study", ["paillier-offload", "fpga-reconfig"])
def test_every_quick_verdict_is_the_full_runs_or_not_judged(study: str, tmp_path: Path) -> None:
    """(bsgs-multidevice's Table 1 bands are computed alike in both modes, so its quick verdicts
    are its full ones: tests/studies/bsgs_multidevice/test_bands.py holds that without running it twice.)"""
    if study == "paillier-offload":  # the ceiling's band is the full run's; the simulated ratios are not
        quick, full = _both(paillier_offload.run, lambda q: paillier_offload.PaillierOffloadConfig(
            quick=q, measure=False, sim_count=600, sweep_inflight=[4]), tmp_path)
    else:  # fewer seeds and requests: only the fitted Table 7 carries over
        quick, full = _both(fpga_reconfig.run, lambda q: fpga_reconfig.FpgaReconfigConfig(
            quick=q, requests=4_000, seeds=2, workers=1, readings=False,
            policies=["software", "hardware", "nopredict", "predict", "predict-5mb", "fix5", "fix-all", "oracle"]),
            tmp_path)
    assert full.verdicts and all(v.kind != NOT_JUDGED for v in full.verdicts)
    assert _held(quick, full) == []
    assert quick.scoreboard.rows == full.scoreboard.rows
