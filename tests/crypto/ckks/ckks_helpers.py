"""Parameters, tolerance and helpers shared by the CKKS tests (fixtures are in conftest.py).

Parameters: N = 8192 with primes (60, 40, 40, 60) -- 200 bits, inside the 218-bit bound for
128-bit security -- and a 40-bit scale: two levels, enough for mul -> rescale -> mul_plain ->
rescale. Keys are made once per module (about 0.1 s).

Tolerance. A CKKS result is the exact result plus noise of absolute size ``e / scale``, where
``e`` is the noise in the scaled (integer) domain. At N = 8192 a fresh encryption gives
``e`` around 2^13 (measured ~7e-9 x 2^40) and a key switch (relinearisation or rotation) whose
special prime is no larger than the largest data prime adds up to about 2^19-2^20 (measured
5.5e-7 x 2^40 for a rotation composed of two key switches). After a rescale the scale is back
near 2^40, so every result here stays within ``TOL = 2**24 / 2**40`` (~1.5e-5) for inputs in
[-1, 1]: a margin of at least 16x over the noisiest op tested.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from cryptoffload.crypto.ckks import CkksParams

PARAMS = CkksParams(8192, (60, 40, 40, 60), 40)
TOL = 2.0 ** 24 / PARAMS.scale
ROTATIONS = [1, -1, 2, 4, -4, 5, 64]
FEW = settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

vectors = arrays(np.float64, st.integers(1, 64),
                 elements=st.floats(-1.0, 1.0, allow_nan=False, allow_infinity=False, width=64))


def padded(x: np.ndarray, slots: int = PARAMS.slots) -> np.ndarray:
    out = np.zeros(slots)
    out[: len(x)] = x
    return out


def close(got: np.ndarray, want: np.ndarray, tol: float = TOL) -> None:
    err = float(np.max(np.abs(got - want)))
    assert err < tol, f"max error {err:.3g} >= {tol:.3g}"


MISUSE_CASES = ["level", "scale", "rescale0", "missing_key", "rotate_size3", "relin_twice", "plain_level", "foreign"]


def misuse(b, case: str) -> None:
    """Commit misuse ``case`` on backend ``b`` (each must raise a CkksError); shared by every
    backend's tests so that all are held to the same refusals and messages."""
    from cryptoffload.crypto.ckks import make_backend

    def fresh(rotations):
        other = make_backend(b.name, b.params, insecure_study=b.insecure_study)
        other.keygen(rotations)
        return other

    ct = b.encrypt([0.5, 0.25])
    top = b.params.levels
    if case == "level":
        b.add(ct, b.mod_switch_to(ct, top - 1))
    elif case == "scale":
        b.add(b.rescale(b.relinearize(b.mul(ct, ct))), b.mod_switch_to(ct, top - 1))
    elif case == "rescale0":
        b.rescale(b.mod_switch_to(ct, 0))
    elif case == "missing_key":
        few = fresh([1])
        few.rotate(few.encrypt([1.0]), 7)
    elif case == "rotate_size3":
        b.rotate(b.mul(ct, ct), 1)
    elif case == "relin_twice":
        b.relinearize(b.relinearize(b.mul(ct, ct)))
    elif case == "plain_level":
        b.mul_plain(ct, b.encode([1.0], level=top - 1))
    elif case == "foreign":
        b.add(ct, fresh([]).encrypt([1.0]))
