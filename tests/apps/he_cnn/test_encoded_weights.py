"""The plan's encoded weights kept beside the keys (apps/he_cnn/encoded_weights.py): the second
call reads them back and classifies as the first; a trace encodes them anyway; another model
gets another file; a corrupted file is encoded again and replaced; one another user could
write is refused. Real SEAL at the full parameters with a one-channel model (~10 s)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from cryptoffload.apps.he_cnn.encoded_weights import prepared_weights, weights_file
from cryptoffload.apps.he_cnn.infer import infer_image
from cryptoffload.apps.he_cnn.keys import keyed_backend
from cryptoffload.apps.he_cnn.packing import PerChannelPlan
from cryptoffload.crypto.ckks import DEFAULT_PARAMS
from cryptoffload.errors import ConfigError

from .he_cnn_helpers import small_model

pytest.importorskip("tenseal")


def test_weights_are_kept_read_back_and_classify_the_same(tmp_path: Path) -> None:
    model, path = small_model(tmp_path, hidden=16)
    folder = tmp_path / "keys"
    first = infer_image(3, path, backend="seal", key_dir=folder)
    second = infer_image(3, path, backend="seal", key_dir=folder)
    assert (first.keys, first.weights, second.keys, second.weights) == ("made", "encoded", "reused", "reused")
    assert second.prediction == first.prediction == second.plain_prediction
    assert second.max_abs_error < 0.05 and np.allclose(second.logits, first.logits, atol=0.05)
    kept = sorted(folder.glob("*.weights"))
    assert len(kept) == 1 and kept[0].stat().st_mode & 0o777 == 0o600
    traced = infer_image(3, path, backend="seal", key_dir=folder, trace_out=tmp_path / "t.json")
    assert traced.weights == "encoded"  # the trace's weights phase holds the encode ops


def test_another_model_another_file_and_a_corrupted_one_is_replaced(tmp_path: Path) -> None:
    model, _ = small_model(tmp_path, hidden=16)
    other, _ = small_model(tmp_path / "o", hidden=32)
    plan, plan2 = PerChannelPlan(model, DEFAULT_PARAMS), PerChannelPlan(other, DEFAULT_PARAMS)
    keys = keyed_backend("seal", DEFAULT_PARAMS, sorted({*plan.rotation_steps(), *plan2.rotation_steps()}),
                         tmp_path / "keys")
    path = weights_file(keys, plan)
    assert path is not None and path != weights_file(keys, plan2) and path.parent == tmp_path / "keys"
    _, how = prepared_weights(plan, keys)
    assert how == "encoded" and path.exists()
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 3] ^= 1
    path.write_bytes(bytes(raw))
    _, how = prepared_weights(plan, keys)
    assert how == "encoded" and path.read_bytes() != bytes(raw)  # encoded again, replaced
    assert prepared_weights(plan, keys)[1] == "reused"
    os.chmod(path, 0o660)
    with pytest.raises(ConfigError, match="open to others .mode 0660.; run: chmod 600"):
        prepared_weights(plan, keys)
