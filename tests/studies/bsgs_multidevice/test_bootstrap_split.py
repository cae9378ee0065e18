"""The bootstrap stages split over Dask workers in the bsgs-multidevice study
(studies/bsgs_multidevice/bootstrap_split.py): a record's rows, bands and speedups are the arithmetic of its
samples; the speedup at 2 workers beside the paper's Table 1 gets the one rule's verdict (and
none in quick mode); too few rounds give no band; and one real run at a small insecure ring
tunes, runs and checks every configuration against the stage in one process."""

from __future__ import annotations

import pytest

from cryptoffload.report.verdicts import AGREEMENT, DIVERGENCE, INCONCLUSIVE, NOT_JUDGED, check_verdicts
from cryptoffload.studies.bsgs_multidevice import bootstrap_split as bs
from cryptoffload.studies.verdicts import Judging

FULL = Judging(False, "sample", "cryptoffload study bsgs-multidevice --out DIR")
QUICK = Judging(True, "sample", "cryptoffload study bsgs-multidevice --out DIR", bs.STUDY_QUICK_WHY)


def config(stage: str, workers: int, kind: str, bs_: int, walls: list[float], predicted: list[float],
           giants: int = 4) -> dict:
    return {"stage": stage, "workers": workers, "kind": kind, "bs": bs_, "giants": giants,
            "active": min(workers, giants), "walls": walls, "spans": walls, "predicted": predicted,
            "bits": [None] * len(walls)}


def record_json(speedup_2: float, rounds: int = 5, jitter: float = 0.002) -> dict:
    """Two stages, 1 and 2 workers; at 2 workers the tuned runs are ``speedup_2`` times faster:
    the JSON a split run writes."""
    wig = [1 + jitter * (i - rounds // 2) for i in range(rounds)]
    configs = []
    for stage in ("CoeffToSlot 0", "SlotToCoeff 0"):
        configs += [config(stage, 1, "naive", 16, [0.10 * w for w in wig], [0.11] * rounds),
                    config(stage, 1, "tuned", 16, [0.10 * w for w in wig], [0.11] * rounds),
                    config(stage, 2, "naive", 16, [0.08 * w for w in wig], [0.07 * w for w in wig]),
                    config(stage, 2, "tuned", 8, [0.08 / speedup_2 * w * w for w in wig], [0.06] * rounds)]
    return {"benchmark": "bootstrap_split", "issue": 33, "security": bs.SPLIT_SECURITY,
            "machine": {"cpu": "a test CPU", "cores": 2}, "date": "2026-12-06T10:00:00+00:00",
            "settings": bs.SplitSettings(rounds=rounds).to_dict(),
            "workers_on_machine": 2, "tuned": {"CoeffToSlot 0": {"1": 16, "2": 8}, "SlotToCoeff 0": {"1": 16, "2": 8}},
            "configs": configs, "costs_alone": [], "concurrent_slowdown": [], "links": [None] * rounds,
            "load_average_1min": [1.0] * rounds, "setup_s": {"keys_and_setup_s": 1.0}, "key_bytes": 1}


def record(speedup_2: float, rounds: int = 5, jitter: float = 0.002) -> bs.SplitRecord:
    """:func:`record_json` read as a stored record is."""
    return bs.SplitRecord.from_json(record_json(speedup_2, rounds, jitter))


def test_rows_are_the_means_of_the_rounds_and_the_band_holds_the_prediction() -> None:
    rec = record(1.08)
    rows = bs.split_rows(rec)
    assert [(r.stage, r.workers, r.kind) for r in rows][:4] == [("CoeffToSlot 0", 1, "naive"),
                                                                ("CoeffToSlot 0", 1, "tuned"),
                                                                ("CoeffToSlot 0", 2, "naive"),
                                                                ("CoeffToSlot 0", 2, "tuned")]
    first = rows[0]
    assert first.measured_ms == pytest.approx(100.0) and first.predicted_ms == pytest.approx(110.0)
    assert first.error_pct == pytest.approx(10.0)
    for r in rows:
        assert r.band_low_ms is not None and r.band_high_ms is not None
        assert r.band_low_ms <= r.predicted_ms <= r.band_high_ms
        assert r.agreement_bits is None                   # equal bit for bit
    sp = {r.workers: r for r in bs.speedup_rows(rec)}
    assert sp[2].speedup == pytest.approx(1.08, rel=1e-3) and sp[2].tuned_bs == "CoeffToSlot 0 8, SlotToCoeff 0 8"
    assert sp[2].predicted_speedup == pytest.approx(0.14 / 0.12, rel=1e-2)
    assert sp[1].speedup == pytest.approx(1.0)
    assert sp[4].speedup is None and "not run" in sp[4].note and "2-core" in sp[4].note


@pytest.mark.parametrize("speedup, kind", [(1.08, AGREEMENT), (1.40, DIVERGENCE)])
def test_the_speedup_at_two_workers_is_judged_by_the_rule_beside_the_paper(speedup: float, kind: str) -> None:
    rec = record(speedup)
    part = bs.split_part(rec, True, FULL)
    table = {t.id: t for t in part.tables}["bootstrap_split_speedup"]
    paper = {r[0]: r[table.columns.index("speedup")] for r in table.paper or []}
    assert paper == {2: 1.08, 4: 1.22, 8: 1.42, 16: 1.84}       # the paper's shape beside ours
    (v,) = part.verdicts
    assert (v.key, v.column, v.kind, v.provenance) == ([2], "speedup", kind, "measured")
    assert v.paper_source.startswith("derived: Table 1, naive / tuned at N = 2")
    assert v.alternative == 1.0
    assert table.paper_derived and table.paper_derived["speedup"].startswith("derived")
    # nothing in it was fitted to the paper's table: a study that fitted other inputs still labels it honestly
    from cryptoffload.report.provenance import check_table

    assert check_table(table, {"bsgs_u280:ops.rotate_s": "Table 1"}) == []


def test_quick_mode_abstains_and_a_stored_record_is_labelled_stored(tmp_path) -> None:
    part = bs.split_part(record(1.08), False, QUICK)
    ((name, draw),) = part.figures
    draw(tmp_path / name)
    assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    (v,) = part.verdicts
    assert v.kind == NOT_JUDGED and v.provenance == "stored" and "stored record" in v.reason()
    tables = {t.id: t for t in part.tables}
    assert tables["bootstrap_split"].column_provenance["measured_ms"] == "stored"
    assert "stored" in part.headline[0] and part.notes and "not run" in part.notes[0]


def test_too_few_rounds_give_no_band_and_an_inconclusive_verdict() -> None:
    rec = record(1.08, rounds=3)
    assert all(r.band_low_ms is None and r.measured_inside is None for r in bs.split_rows(rec))
    (v,) = bs.split_part(rec, True, FULL).verdicts
    assert v.kind == INCONCLUSIVE and v.band is None and "fewer than the 5" in v.why


def test_no_record_is_a_note() -> None:
    part = bs.split_part(None, False, QUICK)
    assert not part.tables and not part.verdicts and part.notes == [bs.SPLIT_MISSING]


def test_settings_are_validated() -> None:
    from cryptoffload.errors import ConfigError

    with pytest.raises(ConfigError, match="insecure study ring"):
        bs.SplitSettings(ring=65536).validate()
    with pytest.raises(ConfigError, match="worker counts"):
        bs.SplitSettings(workers=()).validate()


@pytest.mark.slow
def test_a_real_run_tunes_runs_and_checks_every_configuration(monkeypatch) -> None:
    """The study's full-mode path (``study_part`` measuring) with one stage at N = 1024
    (insecure study ring), one round, 1 and 2 workers: timings are not asserted
    (benchmarks/bootstrap_split.py prints them), only what the run must hold."""
    from types import SimpleNamespace


    monkeypatch.setattr(bs, "STUDY_SETTINGS", bs.SplitSettings(ring=1024, stages=("CoeffToSlot 1",), rounds=1))
    cfg = SimpleNamespace(quick=False, measure=True, bootstrap_split=True, scheduler=None, dask_credentials=None,
                          insecure_plain_tcp_scheduler=False)
    part = bs.study_part(cfg, lambda m: None, FULL)
    tables = {t.id: t for t in part.tables}
    t = tables["bootstrap_split"]
    rows = [dict(zip(t.columns, r)) for r in t.rows]
    assert t.column_provenance["measured_ms"] == "measured" and "N = 1024" in t.title
    assert {(r["workers"], r["kind"]) for r in rows} == {(1, "naive"), (1, "tuned"), (2, "naive"), (2, "tuned")}
    for r in rows:
        assert r["measured_ms"] > 0 and r["predicted_ms"] > 0 and r["band_low_ms"] is None     # one round: no band
        assert r["agreement_bits"] is None or r["agreement_bits"] >= 30   # the stage in one process, within precision
        assert r["devices_used"] == min(r["workers"], r["giants"])
    (naive,) = {r["bs"] for r in rows if r["kind"] == "naive"}          # the plan's count at every worker count
    assert all(b & (b - 1) == 0 and 2 <= b <= 2 * naive for b in (r["bs"] for r in rows))   # candidates
    (v,) = part.verdicts
    assert v.kind == INCONCLUSIVE and v.provenance == "measured" and "fewer than the 5" in v.why


def test_the_stored_record_ships_with_the_package_and_names_its_machine() -> None:
    import json
    from pathlib import Path

    packaged = bs.load_record()
    assert packaged is not None and packaged.machine["cpu"] and packaged.date
    repo = Path(__file__).resolve().parents[3] / "benchmarks" / "results" / bs.SPLIT_RESULT
    if repo.is_file():      # the benchmark's own output and the shipped copy must not drift apart
        assert json.loads(repo.read_text(encoding="utf-8")) == packaged.to_json()   # read back key for key
    assert packaged.settings.rounds >= 5 and set(packaged.settings.workers) == {1, 2}
    part = bs.split_part(packaged, False, QUICK)
    assert all(v.kind == NOT_JUDGED for v in part.verdicts) and part.verdicts
    assert all(r.band_low_ms is not None for r in bs.split_rows(packaged))


def test_a_record_reads_back_what_it_writes_and_a_bad_one_is_refused_where_it_enters(monkeypatch) -> None:
    import copy
    import re

    data = record_json(1.08)
    rec = bs.SplitRecord.from_json(data)
    assert rec.to_json() == data and bs.SplitRecord.from_json(rec.to_json()) == rec
    assert rec.tuned["CoeffToSlot 0"][2] == 8 and rec.configs[0].walls[0] == pytest.approx(0.1 * 0.996)
    for edit, where in [(lambda d: d.pop("machine"), "'machine'"),
                        (lambda d: d.update(date=""), "machine and date"),
                        (lambda d: d["configs"][1]["walls"].pop(), "configs[1]"),
                        (lambda d: d["configs"][0].update(workers="2"), "configs[0].workers"),
                        (lambda d: d["configs"][0].update(kind="fast"), "configs[0].kind"),
                        (lambda d: d["tuned"]["SlotToCoeff 0"].pop("2"), "tuned.SlotToCoeff 0"),
                        (lambda d: d["settings"].update(ring=65536), "settings: "),
                        (lambda d: d.update(benchmark="other"), "not a bootstrap_split record")]:
        bad = copy.deepcopy(data)
        edit(bad)
        with pytest.raises(bs.RecordRefused, match=re.escape(where)):
            bs.SplitRecord.from_json(bad)
    # a stored file that is not a record reads as none, as an unreadable one does
    from importlib import resources

    class Files:
        def joinpath(self, name: str):
            return self

        def read_text(self, encoding: str) -> str:
            return '{"machine": {"cpu": "x"}, "date": "today"}'

    monkeypatch.setattr(resources, "files", lambda package: Files())
    assert bs.load_record() is None
