"""Products of powers (apps/ridge/powm.py) and the platform's masking built on them: every route
on every arithmetic path against Python's ``pow``, and the masked system decrypted against the
plaintext matrix products modulo n.

Keys: 512- and 544-bit solve keys (study sizes: n^2 of 1024 bits fits the ADX kernel and
crypto_mb's 1024-bit kernel; of 1088 bits, 17 words, neither) keep the cost per case low; the
module's 2048-bit solve key runs the size the app uses once.
"""

from __future__ import annotations

import secrets

import pytest
from hypothesis import given, settings, strategies as st

from cryptoffload.apps.ridge import RidgeParams, TradingPlatform
from cryptoffload.apps.ridge import powm
from cryptoffload.apps.ridge.protocol import EncryptedSystem
from cryptoffload.crypto._native import core as native
from cryptoffload.crypto.paillier import ENCRYPTION, generate_keypair
from cryptoffload.errors import ConfigError

#: environment -> the arithmetic path it leaves (where this CPU has it)
PATH_ENV = {"default": {}, "no-ifma": {"COPL_DISABLE_IFMA": "1"},
            "gmp": {"COPL_DISABLE_IFMA": "1", "COPL_DISABLE_ADX": "1"}}


def on_path(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    for var in ("COPL_DISABLE_IFMA", "COPL_DISABLE_ADX"):
        monkeypatch.delenv(var, raising=False)
    for var, value in PATH_ENV[name].items():
        monkeypatch.setenv(var, value)


def reference(base_rows: list[list[int]], exponents: list[list[int]], m: int) -> list[list[int]]:
    out = []
    for row in base_rows:
        outs = []
        for e in exponents:
            acc = 1
            for b, x in zip(row, e):
                acc = acc * pow(b, x, m) % m
            outs.append(acc)
        out.append(outs)
    return out


@pytest.fixture(scope="module")
def small_keys() -> dict[int, tuple]:
    return {bits: generate_keypair(bits, insecure_study_size=True) for bits in (512, 544)}


@settings(max_examples=15, deadline=None)
@given(rows=st.integers(1, 3), count=st.integers(1, 4), k=st.integers(1, 4), exp_bits=st.integers(1, 130),
       mod_bits=st.sampled_from([1024, 1088, 2048]), workers=st.integers(1, 3), data=st.data())
def test_every_route_matches_pow(rows: int, count: int, k: int, exp_bits: int, mod_bits: int, workers: int,
                                 data: st.DataObject) -> None:
    m = (1 << (mod_bits - 1)) | secrets.randbits(mod_bits - 1) | 1
    base_rows = [[secrets.randbelow(m) for _ in range(k)] for _ in range(rows)]
    exponents = [[secrets.randbits(exp_bits) for _ in range(k)] for _ in range(count)]
    want = reference(base_rows, exponents, m)
    for route in ("multiexp", "batch"):
        got, name = powm.products_of_powers(base_rows, exponents, m, exp_bits, workers, route)
        assert got == want, (route, name)


@pytest.mark.parametrize("path", sorted(PATH_ENV))
def test_each_path_names_its_kernel_and_agrees(path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The route table's choice on each path, and the kernel each route ran, against pow."""
    on_path(monkeypatch, path)
    m = (1 << 1023) | secrets.randbits(1023) | 1   # 16 words: ADX fits, crypto_mb's 1024-bit kernel too
    base_rows = [[secrets.randbelow(m) for _ in range(3)] for _ in range(2)]
    exponents = [[secrets.randbits(300) for _ in range(3)] for _ in range(4)]
    want = reference(base_rows, exponents, m)
    got, name = powm.products_of_powers(base_rows, exponents, m, 300, 2)
    assert got == want
    assert powm.route_for() == powm.ROUTES[native.cpu_path()]
    if powm.route_for() == "multiexp":
        assert name == f"multi-exponentiation, {'MULX/ADX' if native.adx_available() else 'GMP'} kernel"
    _, batch_name = powm.products_of_powers(base_rows, exponents, m, 300, 2, "batch")
    assert ("crypto_mb" in batch_name) == native.ifma_available()


def test_more_workers_than_rows_split_the_exponent_rows() -> None:
    m = (1 << 1087) | secrets.randbits(1087) | 1
    base_rows = [[secrets.randbelow(m) for _ in range(2)]]
    exponents = [[secrets.randbits(64) for _ in range(2)] for _ in range(5)]
    got, _ = powm.products_of_powers(base_rows, exponents, m, 64, 3, "multiexp")
    assert got == reference(base_rows, exponents, m)


def test_route_table_and_bad_input() -> None:
    assert set(powm.ROUTES) == {"ifma", "adx", "gmp", "none"}
    assert set(powm.ROUTES.values()) <= {"multiexp", "batch"}
    with pytest.raises(ConfigError, match="unknown exponentiation route 'fast'"):
        powm.route_for("fast")
    with pytest.raises(ConfigError, match="one exponent per base"):
        powm.products_of_powers([[2, 3]], [[1]], 101, 8, 1)
    assert powm.products_of_powers([[2], [3]], [], 101, 8, 1)[0] == [[], []]


def encrypted_system(pk, d: int) -> tuple[EncryptedSystem, list[list[int]], list[int]]:
    """Enc(A), Enc(b) of a random A (d x d) and b over Z_n, with the plaintexts."""
    A = [[secrets.randbelow(pk.n) for _ in range(d)] for _ in range(d)]
    b = [secrets.randbelow(pk.n) for _ in range(d)]
    enc = ENCRYPTION.encryptor(pk)
    cts = enc.encrypt_raw([v for row in A for v in row] + b)
    return EncryptedSystem(pk.fingerprint, [cts[i * d:(i + 1) * d] for i in range(d)], cts[d * d:]), A, b


def check_decrypts(sk, masked, A: list[list[int]], b: list[int], R, r) -> None:
    """Dec(Enc(A R)) = A R mod n and Dec(Enc(b + A r)) = b + A r mod n, entry by entry."""
    n, d = sk.public_key.n, len(A)
    plain = sk.raw_decrypt_many([v for row in masked.AR for v in row] + list(masked.c))
    AR = [[sum(A[i][j] * R[j][k] for j in range(d)) % n for k in range(d)] for i in range(d)]
    c = [(b[i] + sum(A[i][j] * r[j] for j in range(d))) % n for i in range(d)]
    assert plain[:d * d] == [v for row in AR for v in row]
    assert plain[d * d:] == c


@pytest.mark.parametrize("bits", [512, 544])
@pytest.mark.parametrize("path", sorted(PATH_ENV))
def test_masking_decrypts_to_the_matrix_products(bits: int, path: str, small_keys, monkeypatch) -> None:
    """Both routes give the same masked system on every path, and it decrypts to A R and b + A r."""
    on_path(monkeypatch, path)
    pk, sk = small_keys[bits]
    d = 4
    params = RidgeParams(d=d, max_records=10, x_bound=1.0, y_bound=1.0, frac_bits=8)
    platform = TradingPlatform(params, pk, pk, workers=2)
    system, A, b = encrypted_system(pk, d)
    R = [[secrets.randbelow(pk.n) for _ in range(d)] for _ in range(d)]
    r = [secrets.randbelow(pk.n) for _ in range(d)]
    new = platform.apply_masks(system, R, r, "multiexp")
    old = platform.apply_masks(system, R, r, "batch")
    assert new == old
    check_decrypts(sk, new, A, b, R, r)


def test_mask_system_at_the_app_size(solve_keys, upload_keys) -> None:
    """A 2048-bit solve key (n^2 of 4096 bits), fresh R and r: the masked system decrypts to
    A R and b + A r, and the platform reports d^3 + d^2 powers and the route that ran."""
    pk, sk = solve_keys
    d = 3
    params = RidgeParams(d=d, max_records=100, x_bound=1.0, y_bound=1.0)
    platform = TradingPlatform(params, upload_keys[0], pk, workers=2)
    system, A, b = encrypted_system(pk, d)
    masked, secret = platform.mask_system(system)
    check_decrypts(sk, masked, A, b, secret.R, secret.r)
    assert platform.exponentiations == d ** 3 + d ** 2
    assert platform.powm_backend.startswith("multi-exponentiation" if powm.route_for() == "multiexp" else "separate")
