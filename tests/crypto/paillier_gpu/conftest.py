"""The runtimes every GPU Paillier test runs on: the CPU twin here, and also CUDA where a GPU is
(the same tests then check the GPU itself), and the sizes they use on each.

On CUDA every new (kernel, width) is an NVRTC compilation (seconds to minutes of CPU time at
the larger widths; docs/crypto/paillier-gpu.md), so the property tests draw moduli of at most
:data:`CUDA_PROPERTY_BITS` bits there; the twin has every width built already and takes all."""

from __future__ import annotations

import pytest

from cryptoffload.crypto._native import gpu_runtime as gr

DEVICES = [d for d, why in (("cpu-twin", gr.twin_reason()), ("cuda", gr.cuda_reason())) if why is None]
CUDA_PROPERTY_BITS = 2048


def property_bits(rt: gr.Runtime, bits: list[int]) -> list[int]:
    """The modulus sizes a property test draws from on ``rt``."""
    return [b for b in bits if b <= CUDA_PROPERTY_BITS] if rt.device == "cuda" else bits


@pytest.fixture(scope="module", params=DEVICES)   # no device: pytest skips (empty parameter set)
def rt(request: pytest.FixtureRequest) -> gr.Runtime:
    return gr.get_runtime(request.param)
