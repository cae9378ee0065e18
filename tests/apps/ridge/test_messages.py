"""The wire format: envelopes and ciphertext batches."""

from __future__ import annotations

import pytest

from cryptoffload.apps.ridge import messages as m


def test_batch_round_trip_and_refusals(keys: tuple) -> None:
    pk = keys[0][0]
    values = pk.encrypt_many([1, 2, 3])
    text = m.encode_ciphertexts([c.value for c in values], pk)
    batch = m.decode_ciphertexts(text, pk, count=3)
    assert batch.values == [c.value for c in values]
    with pytest.raises(m.ProtocolError, match="expected 4"):
        m.decode_ciphertexts(text, pk, count=4)
    with pytest.raises(m.ProtocolError) as exc:
        m.decode_ciphertexts(text, keys[1][0])
    assert exc.value.code == "foreign_key"
    with pytest.raises(m.ProtocolError, match="unsupported protocol"):
        m.parse_message(b'{"protocol": "x"}', {m.UPLOAD: None})
