"""EvalMod (bootstrap/evalmod.py): in plaintext it is ``sin(2 pi x)`` -- so ``x mod 1`` near the
integers, times ``1 / 2 pi`` -- over the whole range the mod-raise leaves (|I| <= K); on
ciphertexts it is the plaintext steps (exactly on the emulator, within the twin's noise) at the
depth the schedule counts."""

from __future__ import annotations

import numpy as np
import pytest

from cryptoffload.crypto.ckks import CkksParams, make_backend
from cryptoffload.crypto.ckks.bootstrap import evalmod
from cryptoffload.crypto.ckks.errors import CkksError

PARAMS = evalmod.choose(16, message_ratio_bits=12)
DEEP = CkksParams(1024, (60,) + (58,) * 12 + (60,), 58)


def test_the_chosen_degree_meets_its_target_and_one_less_does_not():
    assert evalmod.interpolation_error(PARAMS) <= 2.0 ** -evalmod.TARGET_ERROR_BITS
    fewer = evalmod.EvalModParams(16, 3, PARAMS.degree - 1, 12)
    assert evalmod.interpolation_error(fewer) > 2.0 ** -evalmod.TARGET_ERROR_BITS
    # the series 6 levels, 3 double angles, 2 for the arcsine (OpenFHE's SPARSE_ENCAPSULATED: 10, no arcsine)
    assert PARAMS.depth == 11 and PARAMS.degree <= 40


@pytest.mark.parametrize("double_angles", [2, 3, 4])
def test_plaintext_eval_mod_is_the_sine_over_the_whole_overflow_range(double_angles):
    p = evalmod.choose(16, message_ratio_bits=12, double_angles=double_angles, arcsine=False)
    x = np.linspace(-16.2, 16.2, 20001)
    got = evalmod.reference(p, x / p.interval)
    bound = evalmod.amplification(p) * evalmod.interpolation_error(p) + 1e-13
    assert np.max(np.abs(got - np.sin(2 * np.pi * x))) <= bound


@pytest.mark.parametrize("arcsine,ratio,relative", [(False, 12, 2.0 ** -20), (True, 8, 2.0 ** -24)])
def test_near_the_integers_it_is_the_reduction_modulo_one(arcsine, ratio, relative):
    """sin(2 pi e) / 2 pi = e (1 - (2 pi e)^2 / 6 + ...); with the arcsine's first terms the
    relative error is 3 (2 pi e)^4 / 40: below 2^-24 at e = 2^-8, where the sine alone is 2^-13."""
    p = evalmod.choose(16, message_ratio_bits=ratio, arcsine=arcsine)
    bound = 2.0 ** -ratio
    eps = np.linspace(-bound, bound, 101)
    for i in range(-16, 17):
        got = evalmod.reference(p, (i + eps) / p.interval) / p.gain
        assert np.max(np.abs(got - eps)) <= relative * bound + 2.0 ** -38


@pytest.fixture(scope="module", params=["emulator", "gpu-twin"])
def backend(request):
    b = make_backend(request.param, DEEP, insecure_study=True)
    b.keygen([])
    return b


def test_eval_mod_on_ciphertexts_is_the_plaintext_steps(backend):
    rng = np.random.default_rng(5)
    y = (rng.integers(-16, 17, backend.slots) + rng.uniform(-1e-3, 1e-3, backend.slots)) / PARAMS.interval
    top = DEEP.levels
    ct = backend.encrypt(y, level=top, scale=float(backend.primes[top]))
    out_level = top - PARAMS.depth
    scale = float(backend.primes[out_level + PARAMS.double_angles + 2])
    (out,) = evalmod.eval_mod(backend, [ct], PARAMS, scale)
    assert backend.level(out) == out_level
    want = evalmod.reference(PARAMS, y)
    tol = 1e-10 if backend.name == "emulator" else 2.0 ** -22     # values up to 7 (the arcsine's u (6 + u^2))
    assert np.max(np.abs(backend.decrypt(out) - want)) < tol


def test_parameters_out_of_range_are_refused():
    with pytest.raises(CkksError, match="out of range"):
        evalmod.EvalModParams(0, 3, 30, 12)
    with pytest.raises(CkksError, match="no Chebyshev degree"):
        evalmod.choose(16, message_ratio_bits=12, double_angles=0, target_bits=50)
