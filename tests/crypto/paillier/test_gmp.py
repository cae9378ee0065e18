"""gmpy2 is imported on first use: the package, the GPU path and the GPU tests import where it
is not installed (the lent GPU machine has numpy and CuPy, not gmpy2, cffi, phe, simpy or
tomli-w); what needs it says so in one line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cryptoffload.crypto.paillier import gmp
from cryptoffload.errors import BackendUnavailable

TESTS = Path(__file__).resolve().parents[2]
# what the GPU image lacks, made unimportable in a fresh interpreter
_BLOCK = ("import sys\n"
          "for m in ('gmpy2', 'cffi', '_cffi_backend', 'phe', 'simpy', 'tomli_w', 'dask', 'distributed', 'tenseal'):\n"
          "    sys.modules[m] = None\n")


def test_a_missing_gmpy2_is_a_one_line_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "gmpy2", None)
    with pytest.raises(BackendUnavailable, match="gmpy2 is not installed") as err:
        gmp._LazyGmpy2().powmod(2, 3, 5)
    assert "\n" not in str(err.value)


def test_gmpy2_is_the_module_once_used() -> None:
    import gmpy2

    assert gmp.gmpy2.powmod is gmpy2.powmod


def test_gpu_path_and_gpu_tests_import_without_gmpy2_and_cffi(tmp_path: Path) -> None:
    code = _BLOCK + (
        "import cryptoffload.crypto.paillier as pl, cryptoffload.crypto.paillier_gpu, cryptoffload.engines.gpu\n"
        "pk = pl.PublicKey(3 * 5 * 7 * 11 * 13 * 17 * 19 * 23 + 0, 2)\n"
        "import pytest\n"
        f"sys.exit(pytest.main(['-q', '--collect-only', '-p', 'no:cacheprovider', '--rootdir', {str(TESTS.parent)!r},\n"
        f"    {str(TESTS / 'crypto' / 'paillier_gpu')!r}, {str(TESTS / 'engines' / 'test_gpu.py')!r}]))\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                         env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}, timeout=300)
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
    assert "error" not in run.stdout.lower() and " tests collected" in run.stdout
