"""What machine we are on: the first processor block of /proc/cpuinfo, the model and flags read
from it on x86 and Arm, and the plain-typed summary every measured number carries."""

from __future__ import annotations

import json

import pytest

from cryptoffload import machine
from cryptoffload.machine import CRYPTO_FLAGS, _cpuinfo_fields, cpu_flags, cpu_model, machine_info

X86 = """processor\t: 0
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R)   Platinum 8480+
flags\t\t: fpu aes avx2 avx512f avx512ifma sha_ni
processor\t: 1
model name\t: Second CPU, never read

processor\t: 2
model name\t: Third CPU
"""
ARM = "processor\t: 0\nFeatures\t: fp asimd aes pmull sha1\nHardware\t: Neoverse  N1 board\n\nHardware\t: another\n"


def test_first_processor_block_only() -> None:
    f = _cpuinfo_fields(X86)
    assert f["model name"] == "Intel(R) Xeon(R)   Platinum 8480+"       # the first of the repeated key
    assert "avx512ifma" in f["flags"].split() and f["processor"] == "0"
    assert _cpuinfo_fields("\n\n" + ARM)["Features"].startswith("fp ")  # leading blank lines skipped
    assert _cpuinfo_fields(ARM)["Hardware"] == "Neoverse  N1 board"


@pytest.mark.parametrize("text, model, flags", [
    (X86, "Intel(R) Xeon(R) Platinum 8480+", {"fpu", "aes", "avx2", "avx512f", "avx512ifma", "sha_ni"}),
    (ARM, "Neoverse N1 board", {"fp", "asimd", "aes", "pmull", "sha1"}),
])
def test_model_and_flags(monkeypatch: pytest.MonkeyPatch, text: str, model: str, flags: set[str]) -> None:
    monkeypatch.setattr(machine, "_fields", lambda: _cpuinfo_fields(text))
    assert cpu_model() == model                                     # white space runs as one space
    assert cpu_flags() == frozenset(flags)
    info = machine_info()
    assert info["flags"] == [f for f in CRYPTO_FLAGS if f in flags]  # only the crypto-relevant, in table order


def test_machine_info_shape() -> None:
    info = machine_info()
    assert info["cpu"] == cpu_model() and isinstance(info["cpu"], str) and info["cpu"]
    assert isinstance(info["cores"], int) and info["cores"] >= 1
    assert isinstance(info["flags"], list)
    assert json.loads(json.dumps(info)) == info                       # plain types only
