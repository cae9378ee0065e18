"""The one place that asks whether a CUDA GPU is usable and compiles CUDA modules: one-line
reasons without CuPy, and (with a stand-in for CuPy) one NVRTC compilation per source and
options however many threads ask, failures reported in one line and remembered."""

from __future__ import annotations

import sys
import threading
import time
from types import SimpleNamespace

import pytest

from cryptoffload import cuda
from cryptoffload.errors import BackendUnavailable
from cryptoffload.machine import machine_info


def test_without_cupy_every_question_has_the_same_one_line_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "cupy", None)   # import cupy -> ImportError, on any machine
    why = cuda.cuda_reason()
    assert why is not None and "\n" not in why and "CuPy is not importable" in why and "cupy-cuda13x" in why
    with pytest.raises(BackendUnavailable) as err:
        cuda.cupy()
    assert str(err.value) == why
    assert cuda.device_count() == 0 and cuda.device_info() is None
    assert cuda.build_reason("extern \"C\" __global__ void k() {}", (), "k", "a test kernel") == why
    assert machine_info()["gpu"] is None


class _FakeCupy:
    """What cuda.py uses of CuPy: RawModule(code, options).get_function(name)."""

    def __init__(self, fail: bool = False) -> None:
        self.compiled = 0
        self.fail = fail
        fake = self

        class RawModule:
            def __init__(self, code: str, options: tuple[str, ...]) -> None:
                self.code, self.options = code, options

            def get_function(self, name: str) -> object:
                fake.compiled += 1
                time.sleep(0.05)   # a slow compilation: other threads arrive meanwhile
                if fake.fail:
                    raise RuntimeError("nvrtc: error: identifier \"x\" is undefined\n  1 error detected")
                return SimpleNamespace(name=name, options=self.options)

        self.RawModule = RawModule


@pytest.fixture
def fake_cupy(monkeypatch: pytest.MonkeyPatch):
    def install(fail: bool = False) -> _FakeCupy:
        cp = _FakeCupy(fail)
        monkeypatch.setattr(cuda, "_import_cupy", lambda: (cp, None))
        monkeypatch.setattr(cuda, "_device_reason", lambda: None)
        monkeypatch.setattr(cuda, "_MODULES", {})
        monkeypatch.setattr(cuda, "_BUILDS", {})
        return cp

    return install


def test_a_module_is_compiled_once_however_many_threads_ask(fake_cupy) -> None:
    cp = fake_cupy()
    got: list[object] = []
    threads = [threading.Thread(target=lambda: got.append(cuda.kernel("src", ("-DW=16",), "k"))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert cp.compiled == 1 and len(got) == 8 and all(g is got[0] for g in got)
    other = cuda.kernel("src", ("-DW=32",), "k")   # other options: another module
    assert cp.compiled == 2 and other is not got[0] and other.options == ("-DW=32",)


def test_build_reason_reports_a_failed_compilation_in_one_line_and_remembers_it(fake_cupy) -> None:
    cp = fake_cupy(fail=True)
    why = cuda.build_reason("src", (), "k", "the test kernels")
    assert why is not None and "\n" not in why and "the test kernels" in why and "nvrtc" in why
    assert cuda.build_reason("src", (), "k", "the test kernels") == why and cp.compiled == 1
    ok = fake_cupy()
    assert cuda.build_reason("src", (), "k", "the test kernels") is None and ok.compiled == 1
