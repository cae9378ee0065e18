"""The Python API's CKKS (cryptoffload.api.ckks): vectors' arithmetic against NumPy on the exact
emulator (fast) and on SEAL (real encryption, small parameters), levels matched, rotation keys
made on first use, the scale mismatch refused with its fix, keys saved as a private file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cryptoffload import ckks


@pytest.fixture(scope="module")
def emu() -> ckks.Context:
    return ckks.context("emulator")


def test_arithmetic_matches_numpy_on_the_emulator(emu: ckks.Context) -> None:
    a, b = np.array([1.0, -2.0, 3.5]), np.array([0.5, 4.0, -1.0])
    x, y = emu.encrypt(a), emu.encrypt(b)
    assert len(x) == 3 and x.level == emu.params.levels
    for got, want in (((x + y), a + b), ((x - y), a - b), ((-x), -a), ((x * y), a * b), ((x * 2.5), a * 2.5),
                      ((x + 1.0), a + 1.0), ((3.0 - x), 3.0 - a), ((x * [1.0, 0.0, 2.0]), a * [1, 0, 2]),
                      ((x * y * x), a * b * a)):
        assert np.allclose(got.decrypt(), want, atol=1e-9)
    assert (x * y).level == x.level - 1
    assert np.allclose((x * y + x * x).decrypt(), a * b + a * a)


def test_rotations_make_their_keys_and_sum_adds_every_slot(emu: ckks.Context) -> None:
    x = emu.encrypt([1.0, 2.0, 3.0, 4.0])
    assert np.allclose(x.rotate(1).decrypt(), [2.0, 3.0, 4.0, 0.0])
    assert np.allclose(x.rotate(-1).decrypt()[1:], [1.0, 2.0, 3.0])
    s = x.sum()
    assert len(s) == 1 and np.allclose(s.decrypt(), [10.0])


def test_a_scale_mismatch_names_the_fix_and_like_fixes_it(emu: ckks.Context) -> None:
    x, y = emu.encrypt([1.0, 2.0]), emu.encrypt([3.0, 4.0])
    p = x * y
    with pytest.raises(ckks.CkksError, match="different scales .*ctx.encrypt\\(values, like=product\\)"):
        p + x
    assert np.allclose((p + emu.encrypt([1.0, 1.0], like=p)).decrypt(), [4.0, 9.0])


def test_refusals(emu: ckks.Context) -> None:
    other = ckks.context("emulator")
    with pytest.raises(ckks.CkksError, match="belongs to another context"):
        emu.encrypt([1.0]) + other.encrypt([1.0])
    with pytest.raises(ckks.CkksError, match="do not fit the 4,096 slots"):
        emu.encrypt(np.zeros(4097))
    with pytest.raises(ckks.CkksError, match="one-dimensional"):
        emu.encrypt(np.zeros((2, 2)))
    with pytest.raises(ckks.CkksError, match="finite"):
        emu.encrypt([float("inf")])
    with pytest.raises(ckks.CkksError, match="steps must be an integer"):
        emu.encrypt([1.0]).rotate(1.5)  # type: ignore[arg-type]
    with pytest.raises(Exception, match="unknown CKKS backend 'sael'"):
        ckks.context("sael")
    assert ckks.backends()[0] == "seal"


def test_seal_encrypts_for_real_and_saves_its_keys_privately(tmp_path: Path) -> None:
    pytest.importorskip("tenseal")
    ctx = ckks.context("seal")
    x, y = ctx.encrypt([1.0, 2.0, 3.0]), ctx.encrypt([0.5, 0.25, 2.0])
    assert np.allclose((x * y).decrypt(), [0.5, 0.5, 6.0], atol=1e-4)
    assert np.allclose(x.rotate(2).decrypt()[:1], [3.0], atol=1e-4)
    path = ctx.save(tmp_path / "ctx.bin")
    assert path.stat().st_mode & 0o777 == 0o600
    again = ckks.load(path)
    assert np.allclose(again.encrypt([2.0]).decrypt(), [2.0], atol=1e-4)
    from cryptoffload.crypto.ckks import backend_from_context

    assert not backend_from_context(ctx.public_context()).can_decrypt  # what a server gets: no secret key
