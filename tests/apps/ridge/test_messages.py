"""The wire format: envelopes and ciphertext batches."""

from __future__ import annotations

import pytest

from cryptoffload.apps.ridge import messages as m
from cryptoffload.crypto.paillier import ENCRYPTION


def test_batch_round_trip_and_refusals(keys: tuple) -> None:
    pk = keys[0][0]
    values = ENCRYPTION.encrypt_many(pk, [1, 2, 3])
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


def test_exclusion_proofs_round_trip_and_malformed_ones_are_bad_answers() -> None:
    """The CSP's exclusion proofs on the wire: what the platform parses (a CSP's answer, so a
    malformed one is a 502 bad_answer, never an exception of another kind)."""
    from cryptoffload.apps.ridge.proofs import ExclusionProof

    n = (1 << 127) - 1
    proofs = [ExclusionProof(2, 1, 12345, n - 1), ExclusionProof(5, 0, 0, 1)]
    assert m.exclusion_proofs_from(m.exclusion_proofs_to_json(proofs), 3, n) == proofs
    good = m.exclusion_proofs_to_json(proofs)[0]
    for bad in (None, {}, [None], [{**good, "extra": 1}], [{**good, "plaintext": 3}], [{**good, "contribution": -1}],
                [{**good, "value": format(n, "x")}], [{**good, "root": "zz"}], [{**good, "root": 7}],
                [{**good, "contribution": True}], [good] * 300):
        with pytest.raises(m.ProtocolError) as err:
            m.exclusion_proofs_from(bad, 3, n)
        assert err.value.status == 502 and err.value.code == "bad_answer", bad
