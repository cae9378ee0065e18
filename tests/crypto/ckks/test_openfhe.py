"""The OpenFHE CKKS adapter: every op against numpy, hoisted rotations against plain ones,
agreement with the SEAL adapter on the same computation, refusals, serialisation, contexts
(also loaded in a fresh process), tracing and bootstrapping.

OpenFHE is optional: its wheels import on Python 3.10 here, so these tests run in
``.venv-openfhe`` (``make openfhe``) and are skipped elsewhere with the import error as reason.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cryptoffload.crypto.ckks import (
    DEFAULT_PARAMS,
    CkksError,
    CkksParams,
    RecordingBackend,
    backend_from_context,
    make_backend,
)
from cryptoffload.crypto.ckks.openfhe import openfhe_import_error
from cryptoffload.errors import BackendUnavailable, ConfigError

OPENFHE_MISSING = openfhe_import_error()
needs_openfhe = pytest.mark.skipif(
    OPENFHE_MISSING is not None,
    reason=f"openfhe does not import here ({OPENFHE_MISSING}); run `make openfhe` (Python 3.10 venv)")

try:
    import tenseal.sealapi  # noqa: F401
    SEAL_MISSING = None
except Exception as exc:  # noqa: BLE001
    SEAL_MISSING = f"{type(exc).__name__}: {exc}"
needs_seal = pytest.mark.skipif(SEAL_MISSING is not None, reason=f"tenseal does not import: {SEAL_MISSING}")

SRC = Path(__file__).resolve().parents[3] / "src"
# 128-bit secure for both libraries (SEAL: 190 <= 218 bits; OpenFHE: Q*P with a one-prime P)
P = CkksParams(8192, (50, 40, 40, 60), 40)
TOL = 1e-5          # |values| <= ~2, Delta = 2^40: errors are ~1e-6 at most
FEW = settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def fhe():
    b = make_backend("openfhe", P)
    b.keygen()  # power-of-two rotation keys, relinearisation key
    return b


@pytest.fixture(scope="module")
def rng():
    return np.random.default_rng(20240601)


def vec(rng, n, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, n)


def close(got, want, tol=TOL):
    err = float(np.max(np.abs(np.asarray(got) - np.asarray(want))))
    assert err < tol, f"max error {err:.3g} >= {tol:g}"


# --------------------------------------------------------------------------------------------
# availability


@pytest.mark.skipif(OPENFHE_MISSING is None, reason="openfhe imports here")
def test_missing_openfhe_is_reported_not_crashing():
    with pytest.raises(BackendUnavailable, match="openfhe"):
        make_backend("openfhe", P)


@needs_openfhe
def test_make_backend_and_parameter_mapping(fhe):
    from cryptoffload.crypto.ckks.openfhe import OpenFheBackend

    assert isinstance(fhe, OpenFheBackend) and fhe.name == "openfhe" and fhe.hoists_rotations
    cc = fhe.crypto_context
    assert cc.GetRingDimension() == 8192 and cc.GetBatchSize() == fhe.slots == 4096
    assert fhe.depth == P.levels == 2
    ct = fhe.encrypt([1.0, 2.0])
    assert fhe.level(ct) == 2 and fhe.scale(ct) == 2.0 ** 40 and fhe.size(ct) == 2
    assert fhe.ciphertext_bytes(ct) == P.ciphertext_bytes(2) == 2 * 3 * 8192 * 8
    # each limb its own key-switching digit and a one-prime P: SEAL's key size
    assert fhe.key_bytes()["relin"] == P.ksk_bytes
    assert set(fhe.key_bytes()) == {"relin"} | {f"galois:{s}" for s in fhe.rotation_steps}


@needs_openfhe
def test_default_params_work():
    b = make_backend("openfhe")
    assert b.params == DEFAULT_PARAMS
    b.keygen(rotations=[1])
    x = np.linspace(-1, 1, b.slots)
    c = b.rescale(b.relinearize(b.mul(b.encrypt(x), b.encrypt(x))))
    # scale 2^30 under FIXEDMANUAL: the rescale error |q - 2^30| / 2^30 is ~1e-4 relative
    close(b.decrypt(b.rotate(c, 1)), np.roll(x * x, -1), 2e-3)


@needs_openfhe
def test_parameters_openfhe_cannot_express_are_refused():
    with pytest.raises(ConfigError, match="middle primes"):
        make_backend("openfhe", CkksParams(8192, (50, 40, 30, 60), 40))
    # SEAL accepts 60+40+40+60 = 200 bits at N = 8192; OpenFHE's P for a 60-bit first prime is two
    # primes, Q*P exceeds the HE standard: refused, unless for a study
    big = CkksParams(8192, (60, 40, 40, 60), 40)
    with pytest.raises(ConfigError, match="OpenFHE refuses"):
        make_backend("openfhe", big)
    make_backend("openfhe", big, insecure_study=True)


# --------------------------------------------------------------------------------------------
# every op against numpy


@needs_openfhe
def test_encrypt_decrypt_and_linear_ops(fhe, rng):
    x, y, w = vec(rng, fhe.slots), vec(rng, fhe.slots), vec(rng, fhe.slots)
    cx, cy = fhe.encrypt(x), fhe.encrypt(y)
    close(fhe.decrypt(cx), x)
    close(fhe.decrypt(fhe.encrypt(x[:10]))[:10], x[:10])
    close(fhe.decrypt(fhe.encrypt(x[:10]))[10:], 0.0)
    close(fhe.decrypt(fhe.encrypt(0.25)), np.full(fhe.slots, 0.25))      # a scalar fills every slot
    close(fhe.decrypt(fhe.add(cx, cy)), x + y)
    close(fhe.decrypt(fhe.sub(cx, cy)), x - y)
    close(fhe.decrypt(fhe.negate(cx)), -x)
    close(fhe.decrypt(fhe.add_plain(cx, fhe.encode(w, like=cx))), x + w)
    close(fhe.decrypt(fhe.sub_plain(cx, fhe.encode(w, like=cx))), x - w)
    close(fhe.decode(fhe.encode(w)), w, 1e-12)


@needs_openfhe
def test_multiplications_levels_and_scales(fhe, rng):
    x, y, w = vec(rng, fhe.slots), vec(rng, fhe.slots), vec(rng, fhe.slots)
    cx, cy = fhe.encrypt(x), fhe.encrypt(y)
    m = fhe.mul(cx, cy)
    assert fhe.size(m) == 3 and fhe.level(m) == 2 and fhe.scale(m) == 2.0 ** 80
    close(fhe.decrypt(m), x * y)                                  # decrypts at size 3 as well
    r = fhe.relinearize(m)
    assert fhe.size(r) == 2
    s = fhe.rescale(r)
    assert fhe.level(s) == 1 and fhe.scale(s) == 2.0 ** 40
    close(fhe.decrypt(s), x * y)
    mp = fhe.rescale(fhe.mul_plain(cx, fhe.encode(w, like=cx)))
    assert fhe.level(mp) == 1
    close(fhe.decrypt(mp), x * w)
    # the next level: add a mod-switched fresh ciphertext, multiply again
    cz = fhe.mod_switch_to(cx, 1)
    assert fhe.level(cz) == 1 and fhe.scale(cz) == 2.0 ** 40
    close(fhe.decrypt(cz), x)
    t = fhe.rescale(fhe.relinearize(fhe.mul(fhe.add(s, cz), mp)))
    assert fhe.level(t) == 0
    close(fhe.decrypt(t), (x * y + x) * (x * w))
    # plaintexts follow a ciphertext's level and scale, and mod-switch too
    pw = fhe.encode(w, level=1)
    assert fhe.level(pw) == 1 and fhe.scale(pw) == 2.0 ** 40
    close(fhe.decrypt(fhe.add_plain(s, pw)), x * y + w)
    pw0 = fhe.mod_switch_to(pw, 0)
    assert fhe.level(pw0) == 0
    close(fhe.decrypt(fhe.add_plain(fhe.mod_switch_to(s, 0), pw0)), x * y + w)
    deg2 = fhe.encode(w, like=r)                                   # scale Delta^2 for a raw product
    close(fhe.decrypt(fhe.add_plain(r, deg2)), x * y + w)


@needs_openfhe
@pytest.mark.parametrize("step", [1, -1, 2, 5, -7, 100, 4095, -2048, 0])
def test_rotations_vs_numpy(fhe, rng, step):
    x = vec(rng, fhe.slots)
    close(fhe.decrypt(fhe.rotate(fhe.encrypt(x), step)), np.roll(x, -step))


@needs_openfhe
@FEW
@given(st.lists(st.floats(-4, 4, allow_nan=False), min_size=1, max_size=64),
       st.integers(-4095, 4095))
def test_property_rotate_add_square(fhe, values, step):
    x = np.zeros(fhe.slots)
    x[: len(values)] = values
    c = fhe.encrypt(x)
    sq = fhe.rescale(fhe.relinearize(fhe.mul(c, c)))
    got = fhe.decrypt(fhe.add(fhe.rotate(sq, step), fhe.mod_switch_to(fhe.rotate(c, step), 1)))
    close(got, np.roll(x * x + x, -step), 1e-4 * 16)


# --------------------------------------------------------------------------------------------
# hoisted rotations


@needs_openfhe
def test_hoisted_rotations_equal_plain_rotations(fhe, rng):
    x = vec(rng, fhe.slots)
    c = fhe.encrypt(x)
    steps = [1, 2, -4, 64, -2048, 0, 3, -5]          # 3 and -5 have no key of their own: composed
    hoisted = fhe.rotate_many(c, steps)
    plain = [fhe.rotate(c, s) for s in steps]
    for s, h, p in zip(steps, hoisted, plain):
        dh, dp = fhe.decrypt(h), fhe.decrypt(p)
        close(dh, np.roll(x, -s))
        close(dh, dp, 2e-6)
        assert fhe.level(h) == fhe.level(p) and fhe.scale(h) == fhe.scale(p)
    # at a lower level, after a product
    s1 = fhe.rescale(fhe.relinearize(fhe.mul(c, c)))
    for s, h in zip([1, 8, -16], fhe.rotate_many(s1, [1, 8, -16])):
        close(fhe.decrypt(h), np.roll(x * x, -s))


@needs_openfhe
def test_hoisting_really_shares_the_decomposition(rng):
    """The OpenFHE calls themselves: one precompute, then per-step fast rotations."""
    b = make_backend("openfhe", P)
    b.keygen(rotations=[1, 2, 3, 4])
    x = vec(rng, b.slots)
    c = b.encrypt(x)
    cc = b.crypto_context
    digits = cc.EvalFastRotationPrecompute(c.raw)
    m = cc.GetCyclotomicOrder()
    for s in (1, 2, 3, 4):
        d = cc.Decrypt(cc.EvalFastRotation(c.raw, s, m, digits), b._sk)
        d.SetLength(b.slots)
        close(d.GetRealPackedValueArray(), np.roll(x, -s))
    assert [len(b.rotation_plan(s)) for s in (1, 2, 3, 4)] == [1, 1, 1, 1]


# --------------------------------------------------------------------------------------------
# agreement with SEAL


def _program(be, x, y, w):
    """A small conv-like program using every kind of op: plain and ciphertext products, rescales,
    rotations (own keys, composed and hoisted), additions, a plaintext subtraction, a square."""
    cx, cy = be.encrypt(x), be.encrypt(y)
    a = be.rescale(be.mul_plain(cx, be.encode(w, like=cx)))
    b = be.rotate(be.rescale(be.relinearize(be.mul(cx, cy))), 1)
    s = be.sub_plain(be.add(a, b), be.encode(y, like=a))
    s = be.add(s, be.rotate(s, -3))
    sq = be.rescale(be.relinearize(be.mul(s, s)))
    r1, r2 = be.rotate_many(sq, [2, 5])
    out = be.negate(be.add(r1, r2))
    levels = [be.level(a), be.level(b), be.level(s), be.level(out)]
    return be.decrypt(out), levels, [be.scale(a), be.scale(sq)]


def _program_numpy(x, y, w):
    s = x * w + np.roll(x * y, -1) - y
    s = s + np.roll(s, 3)
    sq = s * s
    return -(np.roll(sq, -2) + np.roll(sq, -5))


@needs_openfhe
@needs_seal
def test_agreement_with_seal(fhe, rng):
    seal = make_backend("seal", P)
    seal.keygen()
    x, y, w = (vec(rng, fhe.slots, -0.5, 0.5) for _ in range(3))
    want = _program_numpy(x, y, w)
    got_f, lv_f, sc_f = _program(fhe, x, y, w)
    got_s, lv_s, sc_s = _program(seal, x, y, w)
    close(got_f, want)
    close(got_s, want)
    close(got_f, got_s)
    assert lv_f == lv_s == [1, 1, 1, 0]
    # scales: OpenFHE says Delta, SEAL Delta^2/q with q ~ 2^40
    for a, b in zip(sc_f, sc_s):
        assert abs(np.log2(a) - np.log2(b)) < 1e-3
    # sizes: the same in-memory RNS layout
    cf, cs = fhe.encrypt(x), seal.encrypt(x)
    assert fhe.ciphertext_bytes(cf) == seal.ciphertext_bytes(cs)
    assert fhe.ciphertext_bytes(fhe.mul(cf, cf)) == seal.ciphertext_bytes(seal.mul(cs, cs))
    assert fhe.plaintext_bytes(fhe.encode(x, level=1)) == seal.plaintext_bytes(seal.encode(x, level=1))
    assert fhe.key_bytes()["relin"] == seal.key_bytes()["relin"]
    assert [fhe.rotation_plan(s) for s in (1, 3, -5, 100)] == [seal.rotation_plan(s) for s in (1, 3, -5, 100)]


@needs_openfhe
@needs_seal
@pytest.mark.parametrize("backend", ["seal", "openfhe"])
def test_same_refusals_as_seal(backend, rng):
    be = make_backend(backend, P)
    be.keygen(rotations=[1, 2])
    x = vec(rng, be.slots)
    c = be.encrypt(x)
    s = be.rescale(be.relinearize(be.mul(c, c)))
    with pytest.raises(CkksError, match="level mismatch"):
        be.add(c, s)
    with pytest.raises(CkksError, match="scale mismatch"):
        be.add(be.mul(c, c), c)
    with pytest.raises(CkksError, match="no Galois key"):
        be.rotate(c, 8)
    with pytest.raises(CkksError, match="relinearize first"):
        be.rotate(be.mul(c, c), 1)
    with pytest.raises(CkksError, match="already size 2"):
        be.relinearize(c)
    low = be.mod_switch_to(c, 0)
    with pytest.raises(CkksError, match="level 0"):
        be.rescale(low)
    with pytest.raises(CkksError, match="between 0 and the current level"):
        be.mod_switch_to(low, 1)
    other = make_backend(backend, P)
    other.keygen(rotations=[])
    with pytest.raises(CkksError, match="another context or key set"):
        other.decrypt(c)
    with pytest.raises(CkksError, match="another context or key set"):
        be.add(c, other.encrypt(x))
    with pytest.raises(CkksError, match="another key set"):
        other.deserialize_ciphertext(be.serialize_ciphertext(c))


@needs_openfhe
def test_openfhe_only_refusals(fhe):
    c = fhe.encrypt([1.0])
    with pytest.raises(CkksError, match="FIXEDMANUAL"):
        fhe.encode([1.0], scale=2.0 ** 40 + 12345)           # SEAL would take it
    with pytest.raises(CkksError, match="slots"):
        fhe.encode(np.zeros(fhe.slots + 1))
    with pytest.raises(CkksError, match="bootstrap"):
        fhe.bootstrap(c)
    with pytest.raises(CkksError, match="bootstrap_level_budget"):
        fhe.bootstrap_setup()


# --------------------------------------------------------------------------------------------
# serialisation and contexts


@needs_openfhe
def test_ciphertext_and_plaintext_serialisation(fhe, rng):
    x = vec(rng, fhe.slots)
    c = fhe.rescale(fhe.relinearize(fhe.mul(fhe.encrypt(x), fhe.encrypt(x))))
    data = fhe.serialize_ciphertext(c)
    back = fhe.deserialize_ciphertext(data)
    assert fhe.level(back) == 1 and fhe.scale(back) == fhe.scale(c)
    close(fhe.decrypt(back), x * x)
    for bad in (data[:-1], data[:100], data[:60] + bytes([data[60] ^ 1]) + data[61:]):
        with pytest.raises(CkksError):
            fhe.deserialize_ciphertext(bad)
    seal_like = bytearray(data)
    seal_like[6:22] = b"seal".ljust(16, b"\0")
    with pytest.raises(CkksError):
        fhe.deserialize_ciphertext(bytes(seal_like))
    pt = fhe.encode(x, level=1)
    pt2 = fhe.deserialize_plaintext(fhe.serialize_plaintext(pt))
    assert fhe.level(pt2) == 1
    close(fhe.decode(pt2), x, 1e-12)


@needs_openfhe
def test_public_and_secret_contexts_in_process(tmp_path, rng):
    client = make_backend("openfhe", P)
    client.keygen(rotations=[1, 2])
    server = backend_from_context(client.public_context())
    assert not server.can_decrypt and server.rotation_steps == [1, 2]
    x, w = vec(rng, client.slots), vec(rng, client.slots)
    ct = server.deserialize_ciphertext(client.serialize_ciphertext(client.encrypt(x)))
    out = server.rotate(server.rescale(server.mul_plain(ct, server.encode(w, like=ct))), 2)
    with pytest.raises(CkksError, match="no secret key"):
        server.decrypt(out)
    close(client.decrypt(client.deserialize_ciphertext(server.serialize_ciphertext(out))), np.roll(x * w, -2))
    path = client.save_secret_context(tmp_path / "keys.ctx")
    assert (path.stat().st_mode & 0o777) == 0o600
    again = type(client).load_secret_context(path)
    assert again.can_decrypt and again.fingerprint == client.fingerprint
    close(again.decrypt(again.deserialize_ciphertext(client.serialize_ciphertext(client.encrypt(x)))), x)
    with pytest.raises(CkksError):
        backend_from_context(client.public_context()[:-3])


@needs_openfhe
def test_public_context_in_a_fresh_process(tmp_path, rng):
    """What a server really does: no secret key and no OpenFHE state from the client."""
    client = make_backend("openfhe", P)
    client.keygen(rotations=[1])
    x, y = vec(rng, client.slots), vec(rng, client.slots)
    (tmp_path / "pub.ctx").write_bytes(client.public_context())
    (tmp_path / "x.ct").write_bytes(client.serialize_ciphertext(client.encrypt(x)))
    (tmp_path / "y.ct").write_bytes(client.serialize_ciphertext(client.encrypt(y)))
    script = textwrap.dedent("""
        import sys
        from pathlib import Path
        from cryptoffload.crypto.ckks import backend_from_context
        d = Path(sys.argv[1])
        be = backend_from_context((d / "pub.ctx").read_bytes())
        assert not be.can_decrypt
        a = be.deserialize_ciphertext((d / "x.ct").read_bytes())
        b = be.deserialize_ciphertext((d / "y.ct").read_bytes())
        r = be.rotate(be.rescale(be.relinearize(be.mul(a, b))), 1)
        (d / "r.ct").write_bytes(be.serialize_ciphertext(r))
    """)
    env = dict(os.environ, PYTHONPATH=str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", script, str(tmp_path)], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    r = client.deserialize_ciphertext((tmp_path / "r.ct").read_bytes())
    close(client.decrypt(r), np.roll(x * y, -1))


# --------------------------------------------------------------------------------------------
# tracing and bootstrapping


@needs_openfhe
def test_recording_backend_on_openfhe(fhe, rng):
    tr = RecordingBackend(fhe, phase="t")
    x = vec(rng, fhe.slots)
    c = tr.label(tr.encrypt(x), "x")
    outs = tr.rotate_many(c, [1, 2, 3])
    s = tr.add(tr.add(outs[0], outs[1]), outs[2])
    close(tr.decrypt(s), np.roll(x, -1) + np.roll(x, -2) + np.roll(x, -3))
    trace = tr.trace()
    assert trace["backend"] == "openfhe"
    rot = [op for op in trace["ops"] if op["op"] == "rotate"]
    assert len(rot) == 4 and all(op.get("hoisted") for op in rot)       # step 3 = 1 + 2: two keys
    assert trace["key_bytes"]["relin"] == P.ksk_bytes


@needs_openfhe
def test_rotation_key_steps_lists_the_keys_made():
    b = make_backend("openfhe", P)
    b.keygen(rotations=[1, 5, -3])
    assert b.rotation_key_steps() == sorted([1, 5, b.slots - 3])
    b.add_rotation_keys([64])
    assert b.rotation_key_steps() == sorted([1, 5, 64, b.slots - 3])


@needs_openfhe
def test_bootstrapping_small_insecure_ring():
    """EvalBootstrap at N = 4096 (insecure, a functional check; timing is another study's)."""
    params = CkksParams(4096, (60, 59, 59, 60), 59)
    b = make_backend("openfhe", params, insecure_study=True, bootstrap_level_budget=(2, 2))
    assert b.depth > params.levels
    b.keygen(rotations=[])
    with pytest.raises(CkksError, match="dim1 is a pair"):   # OpenFHE itself would read past the end
        b.bootstrap_setup(dim1=(4,))
    took = b.bootstrap_setup()
    assert set(took) == {"setup_s", "keygen_s"} and min(took.values()) > 0
    steps = b.rotation_key_steps()                             # bootstrapping's own rotation keys
    assert steps and 1 in steps and all(0 < s < b.slots for s in steps)
    x = np.linspace(-0.5, 0.5, b.slots)
    c = b.encrypt(x, level=1)                                  # one level left
    fresh = b.bootstrap(c)
    assert b.level(fresh) == params.levels + 1 and b.scale(fresh) == 2.0 ** 118
    fresh = b.rescale(fresh)
    assert b.level(fresh) == params.levels
    close(b.decrypt(fresh), x, 1e-2)
    sq = b.rescale(b.relinearize(b.mul(fresh, fresh)))
    close(b.decrypt(sq), x * x, 1e-2)


@needs_openfhe
def test_bootstrapping_takes_a_plan_with_sparse_slots_and_the_encapsulated_secret():
    """The planner's BootstrapPlan (level budget, dim1, slots) on OpenFHE, as on our RNS backend:
    sparse packing from then on (values repeat every plan.slots), SPARSE_ENCAPSULATED's depth."""
    from cryptoffload.crypto.ckks.bootstrap.plan import BootstrapPlan
    from cryptoffload.crypto.ckks.bootstrap.precision import precision

    params = CkksParams(4096, (60, 59, 59, 60), 59)
    with pytest.raises(ConfigError, match="secret must be one of"):
        make_backend("openfhe", params, insecure_study=True, bootstrap_level_budget=(2, 2), secret="dense")
    b = make_backend("openfhe", params, insecure_study=True, bootstrap_level_budget=(2, 2), secret="sparse_encapsulated")
    assert b.depth == params.levels + 14            # GetBootstrapDepth([2, 2], SPARSE_ENCAPSULATED)
    b.keygen(rotations=[])
    b.bootstrap_setup(BootstrapPlan((2, 2), (4, 4), 256))
    x = np.tile(np.linspace(-0.9, 0.9, 256), b.slots // 256)
    fresh = b.rescale(b.bootstrap(b.encrypt(x, level=1)))
    assert precision(b.decrypt(fresh), x).mean_bits >= 15
    with pytest.raises(CkksError, match="repeat every 256 slots"):
        b.encrypt(np.linspace(-1, 1, b.slots))
