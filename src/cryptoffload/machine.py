"""What machine are we on: CPU model, core count, the instruction-set flags that matter, the GPU.

Why: a *measured* profile is only meaningful next to the machine it was measured on, and the
speed of software crypto depends on a few CPU features (AES-NI and VAES for AES and Camellia,
AVX-512 IFMA for multi-buffer big-integer arithmetic), and a GPU run on the GPU it ran on.
Every measured number carries this.
"""

from __future__ import annotations

import os
import platform
from functools import lru_cache
from pathlib import Path

from cryptoffload.cuda import device_info

#: CPU flags worth recording for crypto work (Linux /proc/cpuinfo names).
CRYPTO_FLAGS: tuple[str, ...] = (
    "aes",
    "vaes",
    "pclmulqdq",
    "vpclmulqdq",
    "sha_ni",
    "avx2",
    "avx512f",
    "avx512ifma",
    "avx512vl",
    "adx",
    "bmi2",
)

_CPUINFO = Path("/proc/cpuinfo")


def _cpuinfo_fields(text: str) -> dict[str, str]:
    """Fields of the first processor block of /proc/cpuinfo."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            if out:
                break
            continue
        key, sep, value = line.partition(":")
        if sep:
            out.setdefault(key.strip(), value.strip())
    return out


@lru_cache(maxsize=1)
def _fields() -> dict[str, str]:
    try:
        return _cpuinfo_fields(_CPUINFO.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return {}


def cpu_model() -> str:
    """Human-readable CPU model ("Intel(R) Xeon(R) ..."), or the platform's best guess."""
    f = _fields()
    for key in ("model name", "Model", "cpu model", "Hardware"):
        if f.get(key):
            return " ".join(f[key].split())
    return platform.processor() or platform.machine() or "unknown CPU"


def cpu_flags() -> frozenset[str]:
    """All CPU feature flags the kernel reports (x86 "flags", Arm "Features")."""
    f = _fields()
    return frozenset((f.get("flags") or f.get("Features") or "").split())


def machine_info() -> dict[str, object]:
    """CPU model, logical cores, the crypto-relevant flags present, OS and Python version, and
    ``gpu``: the first CUDA GPU (name, memory, compute capability; :func:`~cryptoffload.cuda.
    device_info`) where one is usable, else None -- as the result contract's ``machine.gpu``.

    Plain types only, so it can go straight into a JSON result (a TOML ``[meta]`` table takes
    it without ``gpu`` when that is None: TOML has no null).
    """
    flags = cpu_flags()
    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count() or 1,
        "flags": [f for f in CRYPTO_FLAGS if f in flags],
        "arch": platform.machine(),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "gpu": device_info(),
    }
