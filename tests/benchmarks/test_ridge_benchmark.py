"""benchmarks/ridge.py's issue-34 sections at tiny sizes: every case of the masked solve gives the
same products, the scaling of a case timed on some rows, and a section written into the JSON
keeps the file's other parts (a guard against rot, not a timing test)."""

from __future__ import annotations

import importlib.util
import io
import json
import sys
from pathlib import Path

import pytest
from rich.console import Console

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch):
    """The script as a module under a name of its own (``ridge`` is also a test package)."""
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location("ridge_benchmark", ROOT / "benchmarks" / "ridge.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "ridge_benchmark", mod)
    spec.loader.exec_module(mod)
    return mod


def test_solve_section_runs_every_case_and_agrees(bench) -> None:
    rs = bench.rs
    paths = [p for p in ("ifma", "adx", "gmp") if rs.path_runs(p)]
    sec = rs.solve_section(paths, 1, 1, lambda _: None, key_bits=512)
    assert sec["same_products"] is True
    assert {c["path"] for c in sec["cases"]} == set(paths)
    assert all(c["wall_s"] > 0 and c["cpu_s"] >= 0 for c in sec["cases"])
    old = [c for c in sec["cases"] if c["route"] == "batch" and c["path"] != "ifma"]
    assert all(c["scaled_from_rows"] and c["rows_timed"] == 1 for c in old)
    assert sec["paper_solve_s"] == 20.0 and "Zhou" in sec["paper"]
    bench.solve_table(sec)  # renders


def test_scaling_of_a_case_timed_on_some_rows(bench) -> None:
    case = bench.rs.SolveCase("c", "adx", "batch", 2, 4, wall=[1.0, 3.0, 2.0], cpu=[2.0, 6.0, 4.0])
    rec = case.record()
    assert rec["wall_s"] == pytest.approx(10.0) and rec["cpu_s"] == pytest.approx(20.0)
    assert rec["cpu_s_per_worker"] == pytest.approx(10.0) and rec["scaled_from_rows"] is True


def test_a_section_keeps_the_rest_of_the_file(bench, tmp_path: Path) -> None:
    out = tmp_path / "ridge.json"
    out.write_text(json.dumps({"records": 1000000, "phases": {"x": 1}, "pipeline_per_path": {"old": 1}}))
    console = Console(file=io.StringIO())
    bench.save_merged({"masked_solve": {"new": 2}}, out, console)
    assert json.loads(out.read_text()) == {"records": 1000000, "phases": {"x": 1}, "pipeline_per_path": {"old": 1},
                                           "masked_solve": {"new": 2}}
    # a full run replaces the top level and keeps both sections
    bench.save_merged({"records": 200000, "phases": {}}, out, console)
    assert json.loads(out.read_text()) == {"records": 200000, "phases": {}, "pipeline_per_path": {"old": 1},
                                           "masked_solve": {"new": 2}}
