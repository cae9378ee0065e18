"""The he-cnn key folder (apps/he_cnn/keys.py): a key set made once, kept as a private file and
read back by the next call with the same backend, parameters and steps; the rule for secrets
enforced on the folder and the file (refused, never used, never silently replaced); a file of
ours that is no longer a context made anew. The emulator keeps it fast (its contexts are the
same frames as SEAL's, a few hundred bytes)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from cryptoffload.apps.he_cnn.keys import default_key_dir, key_file_name, keyed_backend
from cryptoffload.crypto.ckks import CkksParams
from cryptoffload.errors import ConfigError

PARAMS = CkksParams(8192, (60, 40, 40, 60), 40)
STEPS = [1, 2, 5]


def test_keys_are_made_kept_and_reused(tmp_path: Path) -> None:
    said: list[str] = []
    folder = tmp_path / "keys"
    first = keyed_backend("emulator", PARAMS, STEPS, folder, said.append)
    assert first.how == "made" and first.path == folder / key_file_name("emulator", PARAMS, STEPS)
    assert len(said) == 1 and said[0].startswith("made new keys in ") and str(first.path) in said[0]
    assert folder.stat().st_mode & 0o777 == 0o700 and first.path.stat().st_mode & 0o777 == 0o600
    second = keyed_backend("emulator", PARAMS, STEPS, folder, said.append)
    assert second.reused and len(said) == 1  # nothing said when keys are reused
    ct = first.backend.encrypt(np.arange(4.0))
    assert np.allclose(second.backend.decrypt(second.backend.deserialize_ciphertext(
        first.backend.serialize_ciphertext(ct)))[:4], np.arange(4.0))  # the same secret key
    other = keyed_backend("emulator", PARAMS, [1, 3], folder)
    assert other.how == "made" and other.path != first.path  # other steps: another key set, another file


def test_seal_keys_are_kept_as_a_key_file_and_read_back(tmp_path: Path) -> None:
    """SEAL's key file (crypto/ckks/keyfile.py): the Galois keys whole, read straight from the
    file; the key set read back is the one made."""
    first = keyed_backend("seal", PARAMS, STEPS, tmp_path / "keys")
    assert first.path is not None and first.path.name.endswith(".keys")
    with first.path.open("rb") as fh:
        fh.seek(-8, os.SEEK_END)
        assert fh.read() == b"CKKSKEY1"
    second = keyed_backend("seal", PARAMS, STEPS, tmp_path / "keys")
    assert second.reused and second.backend.fingerprint == first.backend.fingerprint
    x = np.linspace(-1, 1, 8)
    ct = second.backend.rotate(first.backend.encrypt(x), 5)
    assert np.allclose(first.backend.decrypt(ct)[:3], x[5:], atol=1e-4)


def test_a_file_holding_another_key_set_than_its_name_says_is_refused_with_the_fix(tmp_path: Path) -> None:
    folder = tmp_path / "k"
    mine = keyed_backend("emulator", PARAMS, STEPS, folder)
    other = keyed_backend("emulator", PARAMS, [1, 3], folder)
    assert mine.path is not None and other.path is not None
    os.replace(other.path, mine.path)  # renamed by hand
    with pytest.raises(ConfigError, match=r"holds no Galois key for rotations \[2, 5\], not the key set its name "
                                          r"stands for .*: remove it .cryptoffload makes a new key set."):
        keyed_backend("emulator", PARAMS, STEPS, folder)
    assert mine.path.exists()  # refused, not replaced


def test_no_folder_keeps_nothing(tmp_path: Path) -> None:
    keys = keyed_backend("emulator", PARAMS, STEPS, None)
    assert keys.how == "made" and keys.path is None and list(tmp_path.iterdir()) == []


def test_the_rule_for_secrets_is_enforced(tmp_path: Path) -> None:
    folder = tmp_path / "open"
    folder.mkdir(mode=0o755)
    os.chmod(folder, 0o755)
    with pytest.raises(ConfigError, match="open to others .*chmod 700"):
        keyed_backend("emulator", PARAMS, STEPS, folder)
    os.chmod(folder, 0o700)
    made = keyed_backend("emulator", PARAMS, STEPS, folder)
    assert made.path is not None
    os.chmod(made.path, 0o644)
    with pytest.raises(ConfigError, match="open to others .*chmod 600"):
        keyed_backend("emulator", PARAMS, STEPS, folder)
    assert made.path.stat().st_mode & 0o777 == 0o644  # refused, not replaced
    os.chmod(made.path, 0o600)
    made.path.unlink()
    made.path.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ConfigError, match="symbolic link"):
        keyed_backend("emulator", PARAMS, STEPS, folder)


def test_a_file_of_ours_that_is_no_context_is_made_anew(tmp_path: Path) -> None:
    said: list[str] = []
    made = keyed_backend("emulator", PARAMS, STEPS, tmp_path / "k")
    assert made.path is not None
    made.path.write_bytes(b"truncated")
    again = keyed_backend("emulator", PARAMS, STEPS, tmp_path / "k", said.append)
    assert again.how == "made" and said and made.path.read_bytes() != b"truncated"


def test_default_key_dir_is_in_the_projects_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("CRYPTOFFLOAD_HE_CNN_KEYS", "CRYPTOFFLOAD_CACHE", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    assert default_key_dir() == Path.home() / ".cache" / "cryptoffload" / "he-cnn-keys"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_key_dir() == tmp_path / "cryptoffload" / "he-cnn-keys"
    monkeypatch.setenv("CRYPTOFFLOAD_CACHE", str(tmp_path / "c"))  # the compiled kernels' cache too
    assert default_key_dir() == tmp_path / "c" / "he-cnn-keys"
    monkeypatch.setenv("CRYPTOFFLOAD_HE_CNN_KEYS", "relative/path")  # the XDG rule: a relative value is ignored
    assert default_key_dir() == tmp_path / "c" / "he-cnn-keys"
    monkeypatch.setenv("CRYPTOFFLOAD_HE_CNN_KEYS", str(tmp_path / "k"))
    assert default_key_dir() == tmp_path / "k"
