"""Constant-time CRT decryption on every runtime present, against the textbook formula; the
private key is wiped from the device on close."""

from __future__ import annotations

import math
import secrets

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import paillier_reference as ref
from cryptoffload.crypto._native import gpu_runtime as gr
from cryptoffload.crypto.paillier_gpu import GpuDecryptor, GpuPaillier, decryptor, private_key_blob
from cryptoffload.errors import ConfigError

_DECRYPTORS: dict[str, GpuDecryptor] = {}


def _decryptor(rt: gr.Runtime) -> GpuDecryptor:
    if rt.device not in _DECRYPTORS:
        _DECRYPTORS[rt.device] = GpuDecryptor(ref.keypair(1024)[1], rt)
    return _DECRYPTORS[rt.device]


@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_decryption_matches_the_reference(rt: gr.Runtime, data: st.DataObject) -> None:
    pk, sk = ref.keypair(1024)
    cts = data.draw(st.lists(st.integers(1, pk.nsquare - 1), min_size=1, max_size=4), label="cts")
    cts = [c for c in cts if math.gcd(c, pk.n) == 1] or [1]
    assert _decryptor(rt).decrypt(cts) == sk.decrypt_many(cts)


@pytest.mark.parametrize("bits", [2048, 3072])
def test_larger_keys(rt: gr.Runtime, bits: int) -> None:
    pk, sk = ref.keypair(bits)
    msgs = [0, pk.n - 1, secrets.randbelow(pk.n)]
    cts = [ref.encrypt(pk, m, secrets.randbits(pk.exp_bits)) for m in msgs]
    with GpuDecryptor(sk, rt) as dec:
        assert dec.decrypt(cts) == msgs
    assert "p=" not in repr(dec) and str(sk.p) not in repr(dec)


def test_close_wipes_the_key_on_the_device(monkeypatch: pytest.MonkeyPatch) -> None:
    """On the twin the "device" array is inspectable: close() leaves zeros, and the host words
    the key was built in are zeroed once uploaded."""
    if gr.twin_reason() is not None:
        pytest.skip(gr.twin_reason())
    rt = gr.get_runtime("cpu-twin")
    pk, sk = ref.keypair(1024)
    blobs: list[np.ndarray] = []
    real_blob = decryptor.private_key_blob

    def spy(p: int, q: int):
        blob, width = real_blob(p, q)
        blobs.append(blob)
        return blob, width

    monkeypatch.setattr(decryptor, "private_key_blob", spy)
    dec = GpuDecryptor(sk, rt)
    assert not blobs[0].any()                     # the host copy: zeroed after the upload
    on_device = dec._key
    assert on_device.any()
    ct = GpuPaillier(pk, rt, window=2).encrypt_raw([42])
    assert dec.decrypt(ct) == [42]
    dec.close()
    assert not on_device.any()                    # the device copy: zeroed
    with pytest.raises(ConfigError, match="closed"):
        dec.decrypt(ct)
    dec.close()   # idempotent


def test_private_key_blob_needs_ordered_factors() -> None:
    with pytest.raises(ConfigError, match="p < q"):
        private_key_blob(11, 7)
