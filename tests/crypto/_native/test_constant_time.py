"""The constant-time kernels leak nothing through branches or addresses, checked by valgrind.

``ct_harness.c`` includes the core's source, marks the secret exponents and plaintexts
undefined with memcheck's client requests and runs the fixed-base encryption and the
multi-exponentiation (CRT decryption's and the ridge masking's kernel: Montgomery products
and squares) on the ADX and GMP kernel sets, and the four-lane AVX2 exponentiation that
decrypts batches; memcheck reports any branch or address computed from a secret. The same harness
built with ``COPL_CT_LEAKY_TEST`` (the scan replaced by a direct read and a branch on the
digit) must fail: a check that cannot fail proves nothing.

Needs gcc, valgrind with its headers and libgmp-dev; skipped without them.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import cryptoffload.crypto._native as native_pkg

HERE = Path(__file__).resolve().parent
NATIVE = Path(native_pkg.__file__).resolve().parent


def _missing() -> str | None:
    if shutil.which("gcc") is None:
        return "no gcc"
    if shutil.which("valgrind") is None:
        return "no valgrind"
    if not Path("/usr/include/valgrind/memcheck.h").exists() or not Path("/usr/include/gmp.h").exists() and \
            not list(Path("/usr/include").glob("*/gmp.h")):
        return "no valgrind or GMP headers (apt-get install valgrind libgmp-dev)"
    return None


pytestmark = pytest.mark.skipif(_missing() is not None, reason=str(_missing()))


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("ct")
    built = {}
    for name, flags in (("ok", []), ("leaky", ["-DCOPL_CT_LEAKY_TEST"])):
        exe = out / f"ct_{name}"
        subprocess.run(["gcc", "-O2", "-g", *flags, f"-I{NATIVE}", str(HERE / "ct_harness.c"), "-lgmp", "-o", str(exe)],
                       check=True, capture_output=True, text=True)
        built[name] = exe
    return built


def _memcheck(exe: Path, mode: str, seed: int, words: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["valgrind", "-q", "--error-exitcode=3", str(exe), mode, str(seed), str(words)],
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("words", [8, 32])
@pytest.mark.parametrize("mode", ["fb-adx", "fb-gmp", "multiexp-adx", "multiexp-gmp", "powm4-avx2"])
def test_kernels_have_no_secret_dependent_branch_or_address(harness, mode: str, words: int) -> None:
    """n of 512 and 2048 bits (n^2: 16 and 64 words; 64 words is where GMP's Karatsuba used to
    branch on the operands); two different secrets give the same verdict."""
    outputs = set()
    for seed in (1, 2):
        run = _memcheck(harness["ok"], mode, seed, words)
        assert run.returncode == 0, run.stderr[-3000:]
        outputs.add(run.stdout)
    assert len(outputs) == 2   # different secrets, different results: the secrets were used


@pytest.mark.parametrize("mode", ["fb-adx", "multiexp-adx", "multiexp-gmp", "powm4-avx2"])
def test_the_check_catches_a_leaky_lookup(harness, mode: str) -> None:
    run = _memcheck(harness["leaky"], mode, 1, 8)
    assert run.returncode == 3
    assert "uninitialised value" in run.stderr
