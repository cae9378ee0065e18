"""The encryption service: each call resolves its backend once, tables are kept per key's
numbers within the cache's bounds, each plaintext is checked once, and a key is a plain value
(it pickles, and carries no encryptor)."""

from __future__ import annotations

import pickle
from collections import Counter
from typing import Any, Callable

import pytest

from cryptoffload.crypto import paillier as pl
from cryptoffload.crypto.paillier import djn, encryptor, service
from cryptoffload.errors import ConfigError


def _counting(monkeypatch: pytest.MonkeyPatch, counts: Counter[str], module: Any, name: str) -> None:
    """Replace ``module.name`` by a wrapper that counts its calls under ``name``."""
    real: Callable[..., Any] = getattr(module, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        counts[name] += 1
        return real(*args, **kwargs)
    monkeypatch.setattr(module, name, counted)


def _count_resolutions(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Every place that could resolve a backend, counted together."""
    counts: Counter[str] = Counter()
    for module in (service, encryptor):
        _counting(monkeypatch, counts, module, "resolve_backend")
    return counts


def test_one_encryption_resolves_its_backend_once(keys, monkeypatch: pytest.MonkeyPatch) -> None:
    """The review found three resolutions on one encrypt (the caller, the key's cache, the
    encryptor); the service resolves once, cold (table built) and warm (table kept) alike."""
    pk, sk = keys
    svc = pl.EncryptionService()
    counts = _count_resolutions(monkeypatch)
    for expected, values in ((1, [1, 2, 3]), (2, [4])):
        cts = svc.encrypt_many(pk, values)
        assert counts["resolve_backend"] == expected
        assert sk.decrypt_many(cts) == values
    svc.encryptor(pk, "gmpy2")
    assert counts["resolve_backend"] == 3


def test_an_encryptor_takes_a_resolved_backend_and_never_resolves(keys, monkeypatch: pytest.MonkeyPatch) -> None:
    pk, _ = keys
    counts = _count_resolutions(monkeypatch)
    enc = pl.Encryptor(pk, "gmpy2")
    assert counts["resolve_backend"] == 0 and enc.backend == "gmpy2"
    for request in ("auto", "qat"):
        with pytest.raises(ConfigError, match="takes a resolved backend.*encryption service"):
            pl.Encryptor(pk, request)


def test_each_plaintext_is_checked_once(keys, monkeypatch: pytest.MonkeyPatch) -> None:
    pk, sk = keys
    counts: Counter[str] = Counter()
    _counting(monkeypatch, counts, djn, "check_plaintext")
    values = [0, 5, pk.n - 1]
    cts = pl.ENCRYPTION.encrypt_many(pk, values)
    assert counts["check_plaintext"] == len(values)
    assert sk.decrypt_many(cts) == values
    with pytest.raises(pl.PlaintextRangeError):
        pl.ENCRYPTION.encrypt(pk, pk.n)
    # a boundary that checked its values already encrypts them without another check
    counts.clear()
    assert sk.decrypt_many(pl.ENCRYPTION.encryptor(pk).ciphertexts([7, 8])) == [7, 8]
    assert counts["check_plaintext"] == 0


def test_tables_are_kept_by_the_keys_numbers(keys) -> None:
    """An engine rebuilds the key from (n, h_s) for every batch: the same numbers find the same
    table; another h_s, lookup mode or backend is another table."""
    pk, _ = keys
    svc = pl.EncryptionService()
    enc = svc.encryptor(pk)
    assert svc.encryptor(pl.PublicKey(pk.n, pk.hs)) is enc
    assert svc.encryptor(pl.PublicKey(pk.n)) is not enc  # a fresh h_s
    assert svc.encryptor(pk, constant_time=False) is not enc
    assert svc.encryptor(pk, "gmpy2") is not enc
    assert svc.cached() == 4
    svc.forget()
    assert svc.cached() == 0 and svc.encryptor(pk) is not enc


def test_the_cache_is_bounded_least_recently_used_first(keys, other_keys) -> None:
    pk, _ = keys
    opk, _ = other_keys
    svc = pl.EncryptionService(max_entries=2)
    a = svc.encryptor(pk, "gmpy2")
    b = svc.encryptor(opk, "gmpy2")
    assert svc.encryptor(pk, "gmpy2") is a   # a used last: b goes first
    svc.encryptor(pk, "gmpy2", constant_time=False)
    assert svc.cached() == 2
    assert svc.encryptor(pk, "gmpy2") is a and svc.encryptor(opk, "gmpy2") is not b
    tight = pl.EncryptionService(cache_bytes=0)
    first = tight.encryptor(pk)
    assert tight.encryptor(pk) is first  # the one just built stays, whatever its size
    tight.encryptor(opk)
    assert tight.cached() == 1 if first.table_bytes else tight.cached() == 2


def test_rerandomize_keeps_the_plaintexts_and_changes_the_ciphertexts(keys) -> None:
    pk, sk = keys
    cts = pl.ENCRYPTION.encrypt_many(pk, [3, 0])
    fresh = pl.ENCRYPTION.rerandomize(pk, cts)
    assert sk.decrypt_many(fresh) == [3, 0]
    assert all(a.value != b.value for a, b in zip(cts, fresh))
    assert pl.ENCRYPTION.rerandomize(pk, []) == []


def test_a_public_key_is_a_plain_value(keys) -> None:
    """It holds its numbers only: it pickles (a worker process gets it whole), compares by n,
    and has no encryptor or table of its own."""
    pk, sk = keys
    pl.ENCRYPTION.encryptor(pk)  # a table exists for it now, in the service
    copy = pickle.loads(pickle.dumps(pk))
    assert copy == pk and copy.hs == pk.hs and copy.fingerprint == pk.fingerprint
    assert not hasattr(pk, "encryptor") and not hasattr(pk, "encrypt")
    assert sk.decrypt(pl.ENCRYPTION.encrypt(copy, 41)) == 41


def test_summed_adds_the_plaintexts(keys) -> None:
    pk, sk = keys
    cts = pl.ENCRYPTION.encrypt_many(pk, [1, 2, 3])
    assert sk.decrypt(pl.summed(pk, cts)) == 6
    assert sk.decrypt(pl.summed(pk, [])) == 0
