"""The CUDA runtime where no GPU is: a one-line refusal; and what can be checked without one --
its launches pass the same argument checks as the twin's before CuPy is touched."""

from __future__ import annotations

import numpy as np
import pytest

from cryptoffload.crypto._native import gpu_cuda
from cryptoffload.crypto._native import gpu_runtime as gr
from cryptoffload.errors import BackendUnavailable


def test_cuda_refused_with_a_one_line_reason_without_a_gpu() -> None:
    reason = gpu_cuda.cuda_reason()
    if reason is None:
        pytest.skip("a CUDA GPU is present")
    assert "\n" not in reason
    with pytest.raises(BackendUnavailable) as err:
        gr.get_runtime("cuda")
    assert str(err.value) == reason


def test_cupy_launch_checks_arguments_like_the_twin() -> None:
    """A CupyRuntime's launch refuses a wrong dtype or a strided array before it reaches CuPy
    (built without __init__: no GPU needed to get this far)."""
    rt = object.__new__(gpu_cuda.CupyRuntime)
    stream = object.__new__(gpu_cuda._CudaStream)
    a = np.zeros((16, 2), dtype=np.uint32)
    ctx = np.zeros(3 * 16 + 1, dtype=np.uint32)
    with pytest.raises(TypeError, match="uint32"):
        rt.launch("mulmod", 16, 2, (2, a.astype(np.int64), a, ctx, a), stream)
    with pytest.raises(TypeError, match="C-contiguous"):
        rt.launch("mulmod", 16, 2, (2, np.zeros((16, 4), dtype=np.uint32)[:, ::2], a, ctx, a), stream)


def test_the_probe_builds_the_smallest_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """cuda_reason asks cryptoffload.cuda to build and load mulmod at 16 limbs (the smallest
    module), so a GPU that cannot run NVRTC's output is never picked."""
    seen = []

    def build_reason(source, options, name, what):
        seen.append((options, name))
        return "no"

    monkeypatch.setattr(gpu_cuda.cuda, "build_reason", build_reason)
    assert gpu_cuda.cuda_reason() == "no"
    ((options, name),) = seen
    assert name == "copg_mulmod_16" and "-DCOPG_ONLY_KERNEL=COPG_ENTRY_mulmod" in options


def test_precompile_refuses_without_a_gpu() -> None:
    if gpu_cuda.cuda_reason() is None:
        pytest.skip("a CUDA GPU is present")
    with pytest.raises(BackendUnavailable):
        gpu_cuda.precompile([("mulmod", 16)])


def test_precompile_builds_each_module_once_costliest_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """One worker (in this process, so the build can be watched): repeats dropped, the
    costliest (kernel, width) first, another source's probe run after, its reason an error."""
    built = []
    monkeypatch.setattr(gpu_cuda, "cuda_reason", lambda: None)
    monkeypatch.setattr(gpu_cuda.cuda, "kernel", lambda source, options, name: built.append(name))
    got = gpu_cuda.precompile([("mulmod", 16), ("crt_decrypt", 32), ("fb_encrypt", 64), ("mulmod", 16)],
                              also=[lambda: "the CKKS kernels cannot be built"], workers=1)
    assert built == ["copg_crt_decrypt_32", "copg_fb_encrypt_64", "copg_mulmod_16"]   # 3.9 s, 1.6 s, 0.4 s
    assert set(got["modules"]) == {"fb_encrypt@64", "crt_decrypt@32", "mulmod@16"} and got["workers"] == 1
    assert list(got["errors"].values()) == ["the CKKS kernels cannot be built"]


def test_compile_order_puts_the_longest_compilation_first() -> None:
    order = gpu_cuda.compile_order([("mulmod", 192), ("crt_decrypt", 96), ("powm", 16), ("crt_decrypt", 96)])
    assert order == [("crt_decrypt", 96), ("mulmod", 192), ("powm", 16)]
