"""``make gpu-check`` (benchmarks/gpu_check.py, gpu_check_summary.py): what the GPU run depends
on and no GPU is needed to check -- the file limit, the budget, a step's failure or time-out
not stopping the next, the wheels, and a summary that never calls a twin figure a GPU one."""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

import pytest

from .bench_helpers import ROOT, benchmark_module


@pytest.fixture(scope="module")
def gc():
    return benchmark_module("gpu_check")


@pytest.fixture(scope="module")
def gs(gc):
    return importlib.import_module("gpu_check_summary")


def test_a_run_writes_at_most_eight_files_and_the_dry_run_names_them_twin(gc) -> None:
    for mode in ("gpu", "twin"):
        names = gc.out_files(mode)
        assert len(set(names.values())) == len(names) <= gc.MAX_OUT_FILES
    twin = gc.out_files("twin")
    assert not any("gpu" in name for name in twin.values())
    assert {"peer", "batch"} <= set(gc.out_files("gpu")) and not {"peer", "batch"} & set(twin)


def test_step_timeouts_share_what_is_left(gc) -> None:
    assert gc.step_timeout(100, 1, 3) == 25
    assert gc.step_timeout(100, 2, 0) == 100           # the last step gets all that is left
    assert gc.step_timeout(0, 1, 1) == 0 and gc.step_timeout(-5, 1, 1) == 0


def _steps(gc, code: list[str], shares: list[float]):
    return [gc.Step(f"s{i}", [sys.executable, "-c", c] if c else [], sh, note="not here")
            for i, (c, sh) in enumerate(zip(code, shares))]


def test_a_failed_or_timed_out_step_does_not_stop_the_next(gc, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(gc, "MIN_STEP_S", 0.1)
    files = gc.out_files("twin")
    steps = _steps(gc, ["raise SystemExit(3)", "import time; print('slow', flush=True); time.sleep(60)", "",
                        "print('done')"], [1, 1, 1, 1])
    t = __import__("time").monotonic()
    res = gc.run_steps(steps, 3.0, tmp_path, files, dict(__import__("os").environ), lambda m: None)
    assert __import__("time").monotonic() - t < 20
    assert res["s0"]["status"] == "failed (exit 3)"
    assert res["s1"]["status"].startswith("timed out") and res["s1"]["tail"] == ["slow"]
    assert res["s2"] == {"status": "skipped", "note": "not here"}
    assert res["s3"]["status"] == "ok" and res["s3"]["tail"] == ["done"]
    log = (tmp_path / files["log"]).read_text()
    assert log.count("=====") == 3 and "done" in log


def test_a_step_is_skipped_once_the_budget_is_spent(gc, tmp_path: Path) -> None:
    res = gc.run_steps(_steps(gc, ["print(1)"], [1]), 1.0, tmp_path, gc.out_files("twin"), {}, lambda m: None)
    assert res["s0"]["status"] == "skipped" and "budget" in res["s0"]["note"]


def test_budget_placeholder_is_three_quarters_of_the_limit(gc, tmp_path: Path) -> None:
    step = gc.Step("b", [sys.executable, "-c", "import sys; print(sys.argv[1])", "{budget}"], 1)
    res = gc.run_step(step, 40.0, tmp_path, gc.out_files("twin"), dict(__import__("os").environ))
    assert res["tail"][-1] == "30"


def test_out_keeps_other_files_and_reports_going_over_the_limit(gc, tmp_path: Path) -> None:
    (tmp_path / "summary.json").write_text("old")
    (tmp_path / "mine.txt").write_text("keep")
    gc.prepare_out(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["mine.txt"]
    for i in range(8):
        (tmp_path / f"f{i}").write_text("")
    rep = gc.files_report(tmp_path)
    assert rep["count"] == 9 and rep["over_limit"]


def test_wheels_are_pinned_where_the_project_pins_them(gc) -> None:
    specs = gc.wheel_specs(peer=False)
    assert "gmpy2==2.3.2" in specs and "tomli-w==1.2.0" in specs and "tenseal==0.3.18" in specs
    assert not any(s.startswith("desilofhe") for s in specs)
    assert any(s.startswith("desilofhe-cu130==") for s in gc.wheel_specs(peer=True))
    make = (ROOT / "Makefile").read_text()
    assert f"mlxtend=={gc.EXTRA_PINS['mlxtend']}" in make      # the venv installs the same


def test_only_the_wheels_of_missing_modules_are_installed(gc) -> None:
    wheels = [Path(n) for n in ("gmpy2-2.3.2-cp312-cp312-manylinux_2_28_x86_64.whl", "tomli_w-1.2.0-py3-none-any.whl",
                                "cffi-2.1.1-cp312-cp312-manylinux2014_x86_64.whl", "desilofhe_cu130-1.17.0-cp312.whl")]
    got = gc.to_install(wheels, {"tomli_w", "_cffi_backend", "desilofhe"})
    assert [w.name.split("-")[0] for w in got] == ["tomli_w", "cffi", "desilofhe_cu130"]
    assert gc.wheel_dist("tomli_w-1.2.0-py3-none-any.whl") == "tomli-w"


def test_pytest_counts_are_read_from_its_log(gc, tmp_path: Path) -> None:
    log = tmp_path / "tests.log"
    log.write_text("....\nFAILED x\n===== 2 failed, 83 passed, 6 skipped, 1 error in 20.1s =====\n")
    assert gc.test_counts(log) == {"failed": 2, "passed": 83, "skipped": 6, "error": 1}
    assert gc.test_counts(tmp_path / "none.log") == {}


def _data(count: int = 20_000_000):
    size = {"device": {"encrypt_kernel_ops": 1.2e6, "encrypt_with_copies_ops": 9e5, "decrypt_kernel_ops": 3.1e5,
                       "decrypt_with_copies_ops": 2.9e5},
            "aggregate": {"ciphertexts": count, "device_wall_s": 1.5}}
    ckks = {"he_cnn": {"gpu": {"latency_s": {"median": 0.025}, "launches_per_image": 450, "host_s_per_launch": 4e-6,
                               "capture": "n/a: the backend has no capture()"},
                       "gpu-twin": {"latency_s": {"median": 2.5}, "launches_per_image": "n/a: no count"}},
            "targets": {"predictions_equal_across_backends": True}}
    return {"paillier": {"sizes": {"1024": size, "2048": size}}, "ckks": ckks, "peer": None, "batch": None}


def _row(rows, start):
    return next(r for r in rows if r["label"].startswith(start))


def test_gpu_figures_are_judged_against_their_targets(gs) -> None:
    rows = gs.figures("gpu", _data(), {"peer": {"status": "skipped", "note": "no wheel"}})
    assert _row(rows, "Paillier n=1024 enc/s, kernel")["met"] is True
    assert _row(rows, "Paillier n=1024 enc/s, copies")["met"] is False
    assert _row(rows, "Paillier n=1024 CRT dec/s, copies")["met"] is False
    assert _row(rows, "Paillier n=1024 aggregate 20,000,000")["met"] is True
    assert _row(rows, "Paillier n=2048 aggregate")["met"] is None          # the target is n = 1024's
    img = _row(rows, "CKKS HE-CNN image, ms")
    assert img["value"] == pytest.approx(25.0) and img["met"] is False
    assert _row(rows, "CKKS kernel launches")["met"] is True
    assert _row(rows, "CKKS host time per launch")["value"] == pytest.approx(4.0)
    assert _row(rows, "CKKS HE-CNN image, graph")["why"] == "n/a: the backend has no capture()"
    assert _row(rows, "CKKS predictions equal")["met"] is True
    assert _row(rows, "DESILO")["why"] == "no wheel"
    assert all(r["device"] == "gpu" for r in rows)


def test_an_aggregation_of_fewer_than_20m_is_not_judged(gs) -> None:
    row = _row(gs.figures("gpu", _data(400), {}), "Paillier n=1024 aggregate")
    assert row["met"] is None and "400 aggregated" in row["why"]


def test_the_dry_run_never_judges_or_labels_a_figure_as_the_gpu(gs) -> None:
    rows = gs.figures("twin", _data(), {})
    assert all(r["met"] is None and r["device"] == "cpu-twin" and r["label"].endswith("[twin]") for r in rows)
    assert _row(rows, "CKKS HE-CNN image, ms")["value"] == pytest.approx(2500.0)    # the twin's, not the GPU's
    assert "no count" in _row(rows, "CKKS kernel launches")["why"]


def _summary(gs, mode: str) -> dict:
    return {"mode": mode, "facts": {"gpu": mode == "gpu", "reason": "CuPy is not importable; install it",
                                    "device": {"name": "NVIDIA H100 80GB HBM3", "multiprocessors": 132}},
            "budget_s": 420, "wall_s": 300, "out": "/tmp/o",
            "steps": {"warm": {"status": "ok", "seconds": 20}, "tests": {"status": "failed (exit 1)", "seconds": 50,
                                                                          "counts": {"passed": 80, "failed": 1},
                                                                          "tail": ["FAILED test_x"]}},
            "figures": gs.figures(mode, _data(), {}),
            "files": {"files": ["summary.json", "run.log"], "count": 2, "limit": 8, "over_limit": False}}


@pytest.mark.parametrize("mode", ["gpu", "twin"])
def test_the_summary_fits_one_screen(gs, mode: str) -> None:
    text = gs.render_summary(_summary(gs, mode))
    lines = text.splitlines()
    assert len(lines) <= 45 and max(map(len, lines)) <= gs.WIDTH
    assert "tests: failed (exit 1): FAILED test_x" in text
    marks = [ln.split()[-1] for ln in lines if ln.startswith(("Paillier", "CKKS", "DESILO"))]
    if mode == "twin":
        assert "DRY RUN" in text and set(marks) == {"twin"}
        assert not re.search(r"\bH100\b", text)
    else:
        assert "NVIDIA H100" in text and {"yes", "NO"} <= set(marks)


def test_a_bad_budget_is_one_error_line(gc, capsys) -> None:
    assert gc.main(["run", "--budget", "0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1


def test_a_failed_step_is_said_once_not_at_every_figure(gs) -> None:
    s = _summary(gs, "gpu")
    data = _data()
    data["paillier"] = None
    s["figures"] = gs.figures("gpu", data, {"paillier": {"status": "failed (exit 2)"}})
    text = gs.render_summary(s)
    assert text.count("(failed (exit 2))") == 1 and len(text.splitlines()) <= 45


def test_the_steps_follow_what_the_machine_has(gc, tmp_path: Path) -> None:
    def plan(mode, **facts):
        return {s.name: s for s in gc.plan_steps(mode, facts, tmp_path, gc.out_files(mode))}

    gpu = plan("gpu", tenseal=True, desilofhe=False)
    assert gpu["warm"].argv and gpu["batch"].argv and not gpu["peer"].argv
    assert "gpu,seal" in gpu["ckks"].argv and "--device" not in gpu["paillier"].argv
    assert gpu["calibrate"].argv[-4:] == ["calibrate", "gpu", "--out", str(tmp_path / "calibrate_gpu.toml")]
    assert plan("gpu", tenseal=False, desilofhe=True)["peer"].argv
    assert "gpu,gpu-twin" in plan("gpu", tenseal=False)["ckks"].argv
    twin = plan("twin", twin=True)
    assert not twin["warm"].argv and not twin["batch"].argv and not twin["peer"].argv
    assert twin["paillier"].argv[-2:] == ["--device", "cpu-twin"]
    bare = plan("twin", twin=False)
    assert not bare["paillier"].argv and "twin is not built" in bare["calibrate"].note
    assert all(t in bare["tests"].argv for t in gc.GPU_TESTS)
    assert all((ROOT / t).exists() for t in gc.GPU_TESTS)


def test_warm_builds_the_benchmarks_and_tests_kernels_and_no_other(gc, monkeypatch) -> None:
    from cryptoffload.crypto._native import gpu_cuda
    from cryptoffload.crypto._native import gpu_runtime as gr
    from cryptoffload.crypto.ckks.gpu.device import gpu_reason

    seen = {}
    monkeypatch.setattr(gpu_cuda, "precompile", lambda pairs, also: seen.update(pairs=set(pairs), also=also) or {})
    gc.warm_here([1024, 2048])
    want = {p for b in (512, 1024, 2048, 3072) for p in gr.key_kernels(b)} | {("mulmod", 16)}
    want |= {(k, w) for k in ("mulmod", "powm") for w in gr.WIDTHS}
    assert seen["pairs"] == want and ("crt_decrypt", 192) not in want
    assert seen["also"] == [gpu_reason]


def test_the_gpu_header_names_the_device_and_driver(gs) -> None:
    s = _summary(gs, "gpu")
    s["facts"].update(cuda_runtime=13000, nvidia_smi="NVIDIA H100 80GB HBM3, 580.159.04", python="3.12.3")
    s["facts"]["device"].update(compute_capability="9.0", cupy="14.2.0")
    head = gs.render_summary(s).splitlines()[1:3]
    assert "132 SMs, sm_90" in head[0] and "driver 580.159.04" in head[0] and "CUDA runtime 13.0" in head[0]
    assert "CuPy 14.2.0" in head[1]
