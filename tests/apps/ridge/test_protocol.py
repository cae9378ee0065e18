"""Private ridge regression: the in-process protocol against scikit-learn, and each step alone.

Keys are made once per module (a 1024-bit upload key at study size, a 2048-bit solve key).
The d = 20 case's masking costs d (d + 1) = 420 multi-exponentiations of 20 powers modulo a
4096-bit n^2 (about 0.8 s of CPU per row of A on the ADX kernel), the bulk of this file's time.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import Ridge

from cryptoffload.apps.ridge import (
    Aggregator,
    Csp,
    TradingPlatform,
    Provider,
    RidgeParams,
    SingularMatrixError,
    Upload,
    aggregate,
    error_bound,
    recover_model,
    run_in_process,
)
from cryptoffload.crypto.paillier import ENCRYPTION, KeyMismatchError
from cryptoffload.errors import ConfigError
from cryptoffload.apps.ridge.accuracy import Z_MARGIN, replayed_error, rounding_sigma, solve_float_error
from cryptoffload.workloads.ridge_data import generate, load_diabetes_scaled

def sklearn_coef(X, y, lam):
    return Ridge(alpha=lam, fit_intercept=False).fit(X, y).coef_


def check_against_sklearn(result, X, y, params, label):
    """Our coefficients minus scikit-learn's are the fixed-point rounding error itself: equal to
    it replayed in float (up to the two float solves' noise) and within Z_MARGIN standard
    deviations of it per coefficient (apps/ridge/accuracy.py), not merely within the
    worst-case bound (which is kept in the printout, for scale)."""
    expected = sklearn_coef(X, y, params.lam)
    diff = result.coef - expected
    replay = replayed_error(X, y, params.scale, params.lam_int, params.lam, params.symmetric)
    sigma = rounding_sigma(X.T @ X, X.T @ y, X.shape[0], params.scale, params.lam, params.symmetric)
    noise = solve_float_error(X.T @ X, params.lam, expected)
    bound = error_bound(X, y, params)
    print(f"\n{label}: max|w - w_sklearn| = {np.abs(diff).max():.3e}, |z| <= {np.abs(diff / sigma).max():.2f}, "
          f"replay gap {np.abs(diff - replay).max():.1e}, worst-case bound {bound:.3e}, "
          f"{result.plaintexts_per_record} plaintexts/record, timings "
          + ", ".join(f"{k} {v:.2f}s" for k, v in result.timings.items()))
    assert np.abs(diff - replay).max() <= noise
    assert (np.abs(diff) <= Z_MARGIN * sigma + noise).all()
    return float(np.linalg.norm(diff)), bound


# --------------------------------------------------------------------------------------------
# end to end


def test_generated_d5_both_modes_agree_and_match_sklearn(upload_keys, solve_keys):
    data = generate(300, 5, seed=11)
    params = RidgeParams(d=5, max_records=1000, x_bound=data.x_bound, y_bound=data.y_bound, lam=2.5)
    per_record = run_in_process(data.X, data.y, params, mode="per-record", providers=3,
                                upload_keys=upload_keys, solve_keys=solve_keys, chunk=64)
    per_provider = run_in_process(data.X, data.y, params, mode="per-provider", providers=3,
                                  upload_keys=upload_keys, solve_keys=solve_keys)
    # the same rounded integers are summed either way: the exact fractions agree
    assert per_record.fractions == per_provider.fractions
    assert per_record.ciphertexts_uploaded == 300 * per_record.plaintexts_per_record
    assert per_provider.ciphertexts_uploaded == 3 * per_record.plaintexts_per_record
    assert per_record.exponentiations == 5 ** 3 + 5 ** 2
    check_against_sklearn(per_record, data.X, data.y, params, "generated n=300 d=5")


@pytest.mark.slow
def test_generated_d20(upload_keys, solve_keys):
    data = generate(40, 20, seed=5)
    params = RidgeParams(d=20, max_records=1_000_000, y_bound=data.y_bound, lam=1.0)
    result = run_in_process(data.X, data.y, params, mode="per-record", providers=2,
                            upload_keys=upload_keys, solve_keys=solve_keys, workers=2)
    assert result.plaintexts_per_record == 20  # 230 values, 12 slots of 84 bits (1 check bit) per 1024-bit plaintext
    assert result.layout["slots"] == 12 and result.layout["slot_bits"] == 84
    check_against_sklearn(result, data.X, data.y, params, "generated n=40 d=20")


def test_diabetes(upload_keys, solve_keys):
    data = load_diabetes_scaled()
    params = RidgeParams(d=10, max_records=1000, x_bound=1.0, y_bound=data.y_bound, lam=0.5)
    result = run_in_process(data.X, data.y, params, mode="per-provider", providers=4,
                            upload_keys=upload_keys, solve_keys=solve_keys)
    check_against_sklearn(result, data.X, data.y, params, "diabetes n=442 d=10")


def test_full_matrix_upload_gives_the_same_model(upload_keys, solve_keys):
    data = generate(50, 3, seed=2)
    sym = RidgeParams(d=3, max_records=100, y_bound=data.y_bound, lam=1.0)
    full = RidgeParams(d=3, max_records=100, y_bound=data.y_bound, lam=1.0, symmetric=False)
    assert (sym.value_count, full.value_count) == (9, 12)
    a = run_in_process(data.X, data.y, sym, upload_keys=upload_keys, solve_keys=solve_keys)
    b = run_in_process(data.X, data.y, full, upload_keys=upload_keys, solve_keys=solve_keys)
    assert a.fractions == b.fractions
    check_against_sklearn(b, data.X, data.y, full, "full matrix n=50 d=3")


def test_gmp_fallback_gives_the_same_model(upload_keys, solve_keys, monkeypatch):
    """Without AVX512-IFMA and the ADX kernels the masked solve's multi-exponentiations run on
    GMP's products, split over two threads, and give the same model."""
    data = generate(25, 3, seed=6)
    params = RidgeParams(d=3, max_records=100, y_bound=data.y_bound, lam=1.0)
    fast = run_in_process(data.X, data.y, params, upload_keys=upload_keys, solve_keys=solve_keys)
    monkeypatch.setenv("COPL_DISABLE_IFMA", "1")
    monkeypatch.setenv("COPL_DISABLE_ADX", "1")
    slow = run_in_process(data.X, data.y, params, upload_keys=upload_keys, solve_keys=solve_keys, workers=2,
                          backend="gmp")
    assert slow.powm_backend == "multi-exponentiation, GMP kernel"
    assert slow.fractions == fast.fractions


def test_singular_system_refused(upload_keys, solve_keys):
    data = generate(30, 3, seed=4)
    X = data.X.copy()
    X[:, 2] = X[:, 0]  # collinear features, lambda = 0: X^T X is singular
    params = RidgeParams(d=3, max_records=100, y_bound=data.y_bound, lam=0.0)
    with pytest.raises(SingularMatrixError, match="singular"):
        run_in_process(X, data.y, params, upload_keys=upload_keys, solve_keys=solve_keys)
    # lambda > 0 makes it solvable again
    ridge = RidgeParams(d=3, max_records=100, y_bound=data.y_bound, lam=0.25)
    res = run_in_process(X, data.y, ridge, upload_keys=upload_keys, solve_keys=solve_keys)
    check_against_sklearn(res, X, data.y, ridge, "collinear, lambda 0.25")


def test_provider_refuses_records_beyond_bounds(upload_keys):
    params = RidgeParams(d=2, max_records=10, x_bound=1.0, y_bound=2.0)
    prov = Provider(params, upload_keys[0])
    with pytest.raises(ConfigError, match=r"record 1 feature 0 .* outside the declared \|x\| <= 1.0"):
        prov.encode(np.array([[0.5, 0.5], [1.5, 0.0]]), np.array([0.0, 0.0]))
    with pytest.raises(ConfigError, match=r"record 0 target"):
        prov.encode(np.array([[0.5, 0.5]]), np.array([np.nan]))
    with pytest.raises(ConfigError, match="2 features"):
        prov.encode(np.zeros((1, 3)), np.zeros(1))
    with pytest.raises(ConfigError, match="11 records exceed"):
        prov.per_provider(np.zeros((11, 2)), np.zeros(11))


def test_encoding_is_rounded_fixed_point(upload_keys):
    params = RidgeParams(d=2, max_records=10, x_bound=1.0, y_bound=4.0, frac_bits=4)
    prov = Provider(params, upload_keys[0])
    vals = prov.encode(np.array([[0.5, -0.3]]), np.array([3.0]))
    # upper triangle (x0x0, x0x1, x1x1) then b = y x, each round(v * 16)
    assert vals.tolist() == [[round(0.25 * 16), round(-0.15 * 16), round(0.09 * 16), round(1.5 * 16), round(-0.9 * 16)]]


def test_aggregator_refuses_overflow_and_foreign_keys(upload_keys):
    params = RidgeParams(d=2, max_records=3)
    prov = Provider(params, upload_keys[0])
    X, y = np.full((2, 2), 0.5), np.full(2, 0.5)
    agg = Aggregator(params, upload_keys[0])
    (first,) = prov.per_record(X, y)
    agg.add(first)
    with pytest.raises(ConfigError, match="4 records exceed max_records = 3"):
        agg.add(first)
    assert agg.records == 2
    foreign = Upload(b"\0" * 16, first.ciphertexts, 2, 2)
    with pytest.raises(KeyMismatchError):
        agg.add(foreign)
    with pytest.raises(ConfigError, match="must hold"):
        agg.add(Upload(first.key_fingerprint, first.ciphertexts[:-1], 2, 2))


# --------------------------------------------------------------------------------------------
# the unpacking masks


def test_csp_sees_only_masked_slots(upload_keys, solve_keys):
    data = generate(20, 4, seed=8)
    params = RidgeParams(d=4, max_records=100, y_bound=data.y_bound)
    prov = Provider(params, upload_keys[0])
    true = prov.encode(data.X, data.y).sum(axis=0).tolist()
    agg = aggregate(prov.per_record(data.X, data.y, chunk=7), params, upload_keys[0])
    assert agg.records == 20
    csp = Csp(params, upload_keys, solve_keys)
    platform = TradingPlatform(params, upload_keys[0], solve_keys[0])
    bias = platform.layout.mask_bias
    masked = platform.mask_for_unpack(agg)
    masks = list(platform._masks[0])          # one contribution: its masks
    view = csp.decrypt_split(masked)
    assert len(view) == params.value_count
    assert all(v != t and v != t + bias for v, t in zip(view, true))
    assert platform.layout.unmask(view, masks) == true  # masks removed: the true sums
    # a second masking of the same aggregate shows the CSP different numbers
    assert csp.decrypt_split(platform.mask_for_unpack(agg)) != view
    # unmasking under the solve key gives Enc_solve of the true sums (plus lambda on A's diagonal)
    system = platform.unmask(csp.split_and_reencrypt(platform.mask_for_unpack(agg)))
    sk = solve_keys[1]
    b = [v if v < sk.public_key.n // 2 else v - sk.public_key.n for v in sk.raw_decrypt_many(system.b)]
    assert b == true[params.a_values:]
    a01 = sk.raw_decrypt_many([system.A[0][1], system.A[1][0]])
    assert a01[0] == a01[1] == true[1] % sk.public_key.n
    with pytest.raises(ConfigError, match="before mask_for_unpack"):
        platform.unmask([0] * params.value_count)


def test_masked_solve_and_recovery_step_by_step(upload_keys, solve_keys):
    """The CSP's solve sees A R, not A; the buyer's R w' - r is A^-1 b."""
    params = RidgeParams(d=3, max_records=10, y_bound=10.0)
    platform = TradingPlatform(params, upload_keys[0], solve_keys[0])
    csp = Csp(params, upload_keys, solve_keys)
    pk = solve_keys[0]
    A = [[5, 1, 0], [1, 4, -2], [0, -2, 6]]
    b = [3, -7, 11]
    enc = ENCRYPTION.encryptor(pk)
    from cryptoffload.apps.ridge.protocol import EncryptedSystem

    system = EncryptedSystem(pk.fingerprint, [enc.encrypt_raw([v % pk.n for v in row]) for row in A],
                             enc.encrypt_raw([v % pk.n for v in b]))
    masked, secret = platform.mask_system(system)
    AR = [solve_keys[1].raw_decrypt_many(row) for row in masked.AR]
    assert AR != [[v % pk.n for v in row] for row in A]
    solution = csp.solve(masked)
    model = recover_model(solution.w_prime, secret, params, pk)
    exact = np.linalg.solve(np.array(A, float), np.array(b, float))
    assert np.allclose(model.coef, exact, rtol=0, atol=1e-12)
    det = round(np.linalg.det(np.array(A, float)))
    assert all(det % f.denominator == 0 for f in model.fractions)


def test_the_csp_leaves_out_contributions_that_leave_their_masked_range(upload_keys, solve_keys):
    """Issue 22, attacks 2 and 3, at the protocol level: each provider's aggregate is masked on
    its own; the CSP leaves out one whose plaintext does not split (a sum above its field, one
    below zero that borrows, garbage modulo n) and sums the others; a carry of exactly one
    whole field is the same plaintext as a different value in the next slot, so it is *not*
    caught (documented: poisoning within the masked field needs range proofs)."""
    from cryptoffload.apps.ridge.protocol import Aggregate, Csp, TradingPlatform, TooFewContributions

    params = RidgeParams(d=2, max_records=10, y_bound=10.0)
    csp = Csp(params, upload_keys, solve_keys)
    ev = TradingPlatform(params, csp.upload_pk, csp.solve_pk)
    layout, pk, n = ev.layout, csp.upload_pk, csp.upload_pk.n
    count = params.value_count

    def contribution(values):
        cts = ENCRYPTION.encryptor(pk).encrypt_raw([v % n for v in layout._pack_unchecked(list(values))])
        return Aggregate(pk.fingerprint, cts, 1)

    honest = [[3, -2, 5, 7, -1], [1, 1, 1, 1, 1]]
    top = 1 << (layout.slot_bits - 1)
    bad = {"above": [0, top, 0, 0, 0], "below": [0, 0, -(layout.mask_bias + layout.mask_limit), 0, 0],
           "garbage": [0, 0, 0, 0, n // 3]}
    for name, values in bad.items():
        masked = ev.mask_contributions([contribution(v) for v in (honest[0], values, honest[1])])
        unpacked = csp.unpack_contributions(masked, minimum=2)
        fields, excluded = unpacked.fields, unpacked.excluded
        assert excluded == [1], name
        system = ev.unmask(fields, excluded)
        sk = solve_keys[1]
        b = [v if v < csp.solve_pk.n // 2 else v - csp.solve_pk.n for v in sk.raw_decrypt_many(system.b)]
        assert b == [honest[0][k] + honest[1][k] for k in range(params.a_values, count)], name
    carry = [1 << layout.slot_bits, 0, 0, 0, 0]      # +1 into slot 1, no error: a different value there
    masked = ev.mask_contributions([contribution(v) for v in (honest[0], carry)])
    assert csp.unpack_contributions(masked, minimum=2).excluded == []
    masked = ev.mask_contributions([contribution(v) for v in (honest[0], bad["above"])])
    with pytest.raises(TooFewContributions, match="1 of 2"):
        csp.unpack_contributions(masked, minimum=2)


def test_the_providers_steps_report_their_phases_and_add_up_once(upload_keys):
    """The one per-record and per-provider path (what the in-process runner, the HTTP provider
    and the Dask chunks all call) records its encode / encrypt / aggregate phases when given a
    recorder, and the two modes aggregate to the same sums."""
    from cryptoffload.apps.ridge.phases import Phases

    params = RidgeParams(d=2, max_records=5)
    prov = Provider(params, upload_keys[0])
    X, y = np.array([[0.5, -0.25], [0.125, 1.0], [-1.0, 0.0]]), np.array([0.5, -1.0, 0.25])
    phases = Phases()
    agg = Aggregator(params, upload_keys[0])
    added = agg.add_timed(prov.per_record(X, y, chunk=2, phases=phases), phases)
    assert (added, agg.records) == (3 * prov.plaintexts, 3)
    assert sorted(phases.seconds) == ["aggregate", "encode", "encrypt"]
    one = prov.per_provider(X, y, chunk=2, phases=Phases())
    assert (one.vectors, one.records, len(one.ciphertexts)) == (1, 3, prov.plaintexts)
    assert prov.encoded_sum(X, y, chunk=2).tolist() == prov.encode(X, y).sum(axis=0).tolist()
    with pytest.raises(ConfigError, match=r"^6 records exceed max_records = 5$"):
        prov.per_provider(np.zeros((6, 2)), np.zeros(6))
