"""Key pairs: structure, sizes, CRT decryption against the reference, and key setup without
variable-time operations on secrets."""

from __future__ import annotations

import re
from pathlib import Path

import gmpy2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cryptoffload.crypto import paillier as pl
from cryptoffload.crypto._native import core as native
from cryptoffload.crypto.paillier import ENCRYPTION, keys as keys_module
from cryptoffload.crypto.paillier import validation
from cryptoffload.errors import BackendUnavailable, ConfigError


def test_default_key_size_is_2048_bits() -> None:
    assert pl.DEFAULT_KEY_BITS == 2048
    with pytest.raises(ConfigError, match="insecure-study-size"):
        pl.generate_keypair(1024)


def test_key_structure(keys) -> None:
    pk, sk = keys
    assert pk.bits == 1024 and pk.n == sk.p * sk.q
    assert sk.p % 4 == 3 and sk.q % 4 == 3
    assert pk.g == pk.n + 1
    assert pk.exp_bits == 512
    # h_s is an n-th residue: h_s = h^n for h = -x^2, so it encrypts 0
    assert sk.raw_decrypt_reference(pk.hs) == 0
    assert "p=" not in repr(sk) and str(sk.p) not in repr(sk)


def test_bad_key_sizes_refused_at_once() -> None:
    for bits in (1023, 0, "2048", True, 8194, 200_000, 10**9):
        with pytest.raises(ConfigError):
            pl.check_key_bits(bits, insecure_study_size=True)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="8192-bit limit"):
        pl.generate_keypair(200_000)  # refused before any prime search (it used to hang)
    assert pl.check_key_bits(pl.MAX_KEY_BITS, insecure_study_size=False) == 8192


@pytest.mark.skipif(not native.native_available(), reason="native core not built")
def test_native_decryption_matches_reference_with_and_without_ifma(keys) -> None:
    pk, sk = keys
    cts = ENCRYPTION.encrypt_many(pk, list(range(19)))
    vals = [c.value for c in cts]
    ref = [sk.raw_decrypt_reference(v) for v in vals]
    assert ref == list(range(19))
    assert sk.raw_decrypt_many(vals, use_ifma=False) == ref
    assert sk.raw_decrypt_many(vals, use_ifma=True) == ref


def _decryption_paths(sk: pl.PrivateKey) -> list[str]:
    return native.CrtDecryptor(sk.p, sk.q).paths()


@pytest.fixture(scope="module")
def phe_pair(keys):
    phe = pytest.importorskip("phe")
    pk, sk = keys
    ppk = phe.PaillierPublicKey(pk.n)
    return ppk, phe.PaillierPrivateKey(ppk, sk.p, sk.q)


@pytest.mark.skipif(not native.native_available(), reason="native core not built")
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plain=st.lists(st.integers(min_value=0), min_size=1, max_size=11), edge=st.sampled_from([0, 1, -1]))
def test_every_decryption_path_agrees_with_phe(keys, phe_pair, plain: list[int], edge: int) -> None:
    """Batch CRT decryption on each path (four-lane AVX2, the ADX exponentiation, crypto_mb,
    GMP) against an independent implementation: phe decrypting the same ciphertexts; batches of
    any length (the IFMA path works in groups of 8, the AVX2 one in groups of 4 and 3 with the
    rest on ADX, the ADX one in any count)."""
    pk, sk = keys
    _, psk = phe_pair
    ms = [m % pk.n for m in plain] + [edge % pk.n]
    vals = [c.value for c in ENCRYPTION.encrypt_many(pk, ms)]
    assert [psk.raw_decrypt(v) for v in vals] == ms
    for path in _decryption_paths(sk):
        assert sk.raw_decrypt_many(vals, path=path) == ms, path


@pytest.mark.skipif(not native.adx_available(), reason="no BMI2 + ADX + AVX2 here")
@pytest.mark.parametrize("bits", [1536, 2048])
def test_batch_decryption_paths_agree_at_other_sizes(bits: int) -> None:
    """p^2 of 24 and 32 words (three and four unrolled blocks; 56 and 74 digits in the lanes):
    batches of 7 (a group of four, one of three) and 9 (two groups, one single) on every path,
    against the gmpy2 reference, with the extreme plaintexts 0 and n - 1."""
    pk, sk = pl.generate_keypair(bits, insecure_study_size=True)
    ms = [0, pk.n - 1, 1, 2, pk.n // 2, 12345, pk.n - 2, 7, 8]
    vals = [c.value for c in ENCRYPTION.encrypt_many(pk, ms)]
    assert [sk.raw_decrypt_reference(v) for v in vals] == ms
    for path in _decryption_paths(sk):
        assert sk.raw_decrypt_many(vals, path=path) == ms, path
        assert sk.raw_decrypt_many(vals[:7], path=path) == ms[:7], path


@pytest.mark.skipif(not native.adx_available(), reason="no BMI2 + ADX + AVX2 here")
def test_decryption_path_follows_the_cpu(keys, monkeypatch) -> None:
    pk, sk = keys
    fresh = pl.PrivateKey(pk, sk.p, sk.q)
    monkeypatch.setenv("COPL_DISABLE_IFMA", "1")
    assert fresh.decrypt_path() == "avx2"
    assert fresh.raw_decrypt_many([ENCRYPTION.encrypt(pk, 5).value], path="adx") == [5]
    monkeypatch.setenv("COPL_DISABLE_ADX", "1")
    assert fresh.decrypt_path() == "gmp"
    with pytest.raises(BackendUnavailable, match="'adx' is not available"):
        fresh.raw_decrypt_many([ENCRYPTION.encrypt(pk, 1).value], path="adx")


def test_python_key_setup_uses_no_variable_time_operation_on_secrets(keys, monkeypatch) -> None:
    """The attack: key setup ran variable-time powmod/invert on p and q. Poison gmpy2's
    variable-time calls in the modules that handle secrets: building and checking a private key
    and the reference decryption still work, so they do not use them."""
    pk, sk = keys

    def poisoned(*args, **kwargs):
        raise AssertionError("variable-time gmpy2 call on secret data")

    class Gmpy2WithoutVariableTime:
        def __getattr__(self, name):
            if name in ("powmod", "invert", "divm", "gcdext"):
                return poisoned
            return getattr(gmpy2, name)

    monkeypatch.setattr(keys_module, "gmpy2", Gmpy2WithoutVariableTime())
    monkeypatch.setattr(validation, "gmpy2", Gmpy2WithoutVariableTime())
    sk2 = pl.PrivateKey(pk, sk.p, sk.q)
    c = ENCRYPTION.encrypt(pk, 31337, backend="gmp" if native.native_available() else "gmpy2")
    assert sk2.raw_decrypt_reference(c.value) == 31337


def test_native_key_setup_source_has_no_variable_time_calls() -> None:
    """The C side of the same attack: ``copl_dec_new`` (the decryptor's set-up on p and q)
    calls neither ``mpz_powm`` nor ``mpz_invert``; its inverses go through Fermat with
    ``mpz_powm_sec``. Behaviourally the native decryptor matches the reference (above)."""
    source = (Path(native.__file__).parent / "paillier_core.c").read_text()
    setup = source[source.index("copl_dec *copl_dec_new("):]
    setup = setup[:setup.index("\n}\n")]
    assert "mpz_powm_sec" in setup
    assert not re.search(r"mpz_powm\s*\(|mpz_invert\s*\(", setup)
    fermat = source[source.index("static int fermat_inverse("):]
    fermat = fermat[:fermat.index("\n}\n")]
    assert "mpz_powm_sec" in fermat and not re.search(r"mpz_powm\s*\(|mpz_invert\s*\(", fermat)


def test_key_data_carries_a_checksum_for_every_field(keys) -> None:
    """issue 22: the fingerprint covers n only (the key's identity), so each number of a key
    file carries its own checksum; one for another field or value never matches."""
    pk, sk = keys
    d = sk.to_dict()
    assert d["version"] == pl.FORMAT_VERSION == 2
    assert set(d["checksums"]) == {"n", "hs", "p", "q"} and set(pk.to_dict()["checksums"]) == {"n", "hs"}
    for field in ("n", "hs", "p", "q"):
        assert d["checksums"][field] == pl.field_checksum(field, int(d[field], 16))
    assert pl.field_checksum("p", sk.p) != pl.field_checksum("q", sk.p)
    assert pl.field_checksum("hs", pk.hs) != pl.field_checksum("hs", pk.hs ^ 1)


def test_generated_bases_pass_the_public_checks(keys) -> None:
    pk, _ = keys
    validation.check_djn_base_public(pk.n, pk.hs)
    validation.check_djn_base_public(pk.n, pl.PublicKey(pk.n).hs)
