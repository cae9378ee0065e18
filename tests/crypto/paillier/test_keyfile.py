"""Key files: written 0600 and atomically, loaded with checks; the attacks (keygen's two
outputs on one path, private keys others can read) refused."""

from __future__ import annotations

import json
import os
import stat

import pytest

from attacker_helpers import ATTACKER, planted_file, root_only
from cryptoffload.crypto import paillier as pl
from cryptoffload.crypto.paillier import ENCRYPTION, keyfile
from cryptoffload.errors import OutputError


def test_round_trip_and_modes(keys, tmp_path) -> None:
    pk, sk = keys
    assert pl.key_from_json(pk.to_json(), insecure_study_size=True) == pk
    sk2 = pl.load_key(pl.save_key(sk, tmp_path / "sk.json"), insecure_study_size=True)
    assert isinstance(sk2, pl.PrivateKey) and sk2.p == sk.p
    assert stat.S_IMODE(os.stat(tmp_path / "sk.json").st_mode) == 0o600
    assert sk2.decrypt(ENCRYPTION.encrypt(pk, 9)) == 9
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_garbled_key_data_refused(keys) -> None:
    pk, sk = keys
    d = json.loads(pk.to_json())
    d["n"] = format(pk.n + 2, "x")
    with pytest.raises(pl.CiphertextFormatError, match="field 'n' does not match its checksum"):
        pl.key_from_dict(d, insecure_study_size=True)
    d["checksums"]["n"] = pl.field_checksum("n", pk.n + 2)
    with pytest.raises(pl.CiphertextFormatError, match="field 'fingerprint'"):
        pl.key_from_dict(d, insecure_study_size=True)
    with pytest.raises(pl.CiphertextFormatError, match="JSON"):
        pl.key_from_json(pk.to_json()[:-5])
    with pytest.raises(pl.CiphertextFormatError, match="JSON"):
        pl.key_from_json("[" * 100_000 + "]" * 100_000)
    d = sk.to_dict()
    d["version"] = 99
    with pytest.raises(pl.CiphertextFormatError, match="version"):
        pl.key_from_dict(d, insecure_study_size=True)
    d = sk.to_dict()
    d["p"] = format(sk.p + 2, "x")
    d["checksums"]["p"] = pl.field_checksum("p", sk.p + 2)
    with pytest.raises(pl.KeyMismatchError):
        pl.key_from_dict(d, insecure_study_size=True)


def test_private_key_readable_by_others_refused_with_the_chmod(keys, tmp_path) -> None:
    pk, sk = keys
    path = pl.save_key(sk, tmp_path / "k.json")
    for mode in (0o644, 0o640, 0o604, 0o660):
        os.chmod(path, mode)
        with pytest.raises(pl.InvalidKeyError, match=f"mode {mode:04o}.*chmod 600 {path}"):
            pl.load_key(path, insecure_study_size=True)
    os.chmod(path, 0o600)
    assert isinstance(pl.load_key(path, insecure_study_size=True), pl.PrivateKey)
    public = pl.save_key(pk, tmp_path / "k.pub")
    os.chmod(public, 0o644)  # public keys are public
    assert pl.load_key(public, insecure_study_size=True) == pk


def test_a_linked_private_key_is_refused_a_linked_public_key_read(keys, tmp_path) -> None:
    """A private key reached through a link is whatever the link's maker points it at (their key
    decrypts for them); a public key may be anyone's, so a link to one is read."""
    pk, sk = keys
    theirs = pl.save_key(sk, tmp_path / "attacker.json")  # a key the attacker controls, 0600
    link = tmp_path / "k.json"
    link.symlink_to(theirs)
    with pytest.raises(pl.InvalidKeyError) as exc:
        pl.load_key(link, insecure_study_size=True)
    assert str(exc.value) == (f"the private key file {link} is a symbolic link (to {theirs}); refusing to follow "
                              "it: give the file itself, or replace the link by the file (mode 0600)")
    public = tmp_path / "k.pub"
    public.symlink_to(pl.save_key(pk, tmp_path / "real.pub"))
    assert pl.load_key(public, insecure_study_size=True) == pk


@root_only
def test_a_private_key_another_user_wrote_is_refused_though_0600(keys, tmp_path) -> None:
    _, sk = keys
    path = planted_file(tmp_path / "k.json", json.dumps(sk.to_dict()))
    with pytest.raises(pl.InvalidKeyError, match=f"private key file {path} belongs to uid {ATTACKER}, not to you"):
        pl.load_key(path, insecure_study_size=True)


def test_a_private_key_is_never_written_into_a_folder_others_can_write(keys, tmp_path) -> None:
    pk, sk = keys
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(pl.PaillierError, match=f"lies in {shared}, which is writable by others"):
        pl.check_new_key_paths(shared / "k.json", tmp_path / "k.pub")  # before the prime search
    with pytest.raises(OutputError, match=f"lies in {shared}, which is writable by others"):
        pl.save_key(sk, shared / "k.json")
    assert pl.save_key(pk, shared / "k.pub").exists()  # a public key may go anywhere
    assert sorted(p.name for p in shared.iterdir()) == ["k.pub"]


def test_unreadable_and_odd_files_refused(tmp_path) -> None:
    with pytest.raises(pl.PaillierError, match="cannot read"):
        pl.load_key(tmp_path / "missing.json")
    with pytest.raises(pl.PaillierError, match="not a regular file"):
        pl.load_key(tmp_path)
    (tmp_path / "latin1.json").write_bytes(b'{"format": "\xe9"}')
    with pytest.raises(pl.CiphertextFormatError, match="not UTF-8"):
        pl.load_key(tmp_path / "latin1.json")
    (tmp_path / "big.json").write_bytes(b" " * (keyfile.MAX_KEY_FILE_BYTES + 1))
    with pytest.raises(pl.PaillierError, match="at most"):
        pl.load_key(tmp_path / "big.json")
    (tmp_path / "list.json").write_text("[1, 2]")
    with pytest.raises(pl.CiphertextFormatError, match="list.json: not a cryptoffload Paillier key"):
        pl.load_key(tmp_path / "list.json")


@pytest.mark.parametrize("second", ["same", "dotdot", "symlink"])
def test_one_path_for_both_keys_refused_and_nothing_written(keys, tmp_path, second) -> None:
    pk, sk = keys
    first = tmp_path / "k.json"
    (tmp_path / "sub").mkdir()
    other = {"same": first, "dotdot": tmp_path / "sub" / ".." / "k.json", "symlink": tmp_path / "link.json"}[second]
    if second == "symlink":
        os.symlink(first, other)  # dangling until k.json exists
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(pl.PaillierError, match="same file"):
        pl.save_keypair(pk, sk, first, other)
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_keypair_never_overwrites_and_leaves_nothing_on_failure(keys, tmp_path, monkeypatch) -> None:
    pk, sk = keys
    (tmp_path / "taken.json").write_text("mine")
    with pytest.raises(pl.PaillierError, match="exists"):
        pl.save_keypair(pk, sk, tmp_path / "taken.json", tmp_path / "new.pub")
    assert (tmp_path / "taken.json").read_text() == "mine"
    with pytest.raises(pl.PaillierError, match="does not exist"):
        pl.save_keypair(pk, sk, tmp_path / "k.json", tmp_path / "nowhere" / "k.pub")
    # the public key fails after the private key was written: the private key is removed
    real = keyfile.save_key

    def failing_for_public(key, path, **kw):
        if isinstance(key, pl.PublicKey):
            raise pl.PaillierError("disk full")
        return real(key, path, **kw)

    monkeypatch.setattr(keyfile, "save_key", failing_for_public)
    with pytest.raises(pl.PaillierError, match="disk full"):
        pl.save_keypair(pk, sk, tmp_path / "a.json", tmp_path / "a.pub")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken.json"]


def test_save_without_overwrite_keeps_an_existing_file(keys, tmp_path) -> None:
    pk, _ = keys
    (tmp_path / "x.pub").write_text("keep")
    with pytest.raises(OutputError, match="exists"):
        pl.save_key(pk, tmp_path / "x.pub", overwrite=False)
    assert (tmp_path / "x.pub").read_text() == "keep"
    assert [p.name for p in tmp_path.iterdir()] == ["x.pub"]


def _flips(text: str):
    data = text.encode()
    for i in range(len(data)):
        for bit in range(8):
            yield i, bytes(data[:i]) + bytes([data[i] ^ (1 << bit)]) + data[i + 1:]


def _field_at(text: str, i: int) -> str | None:
    """The field (n, hs, p, q, fingerprint, or one in checksums) whose value holds character i."""
    d = json.loads(text)
    for name, value in list(d.items()) + list(d["checksums"].items()):
        if name in ("n", "hs", "p", "q", "fingerprint"):
            at = text.find(f'"{value}"')
            if at < i <= at + len(value):
                return name
    return None


@pytest.mark.parametrize("kind", ["public", "private"])
def test_every_flipped_bit_of_a_key_file_is_refused(keys, kind) -> None:
    """The attack: one flipped bit in h_s passed (the fingerprint covered n only) and the
    owner's `paillier decrypt` printed a wrong number with exit 0. Every single-bit change of
    a key file is refused; inside a number, the message names its field."""
    pk, sk = keys
    text = json.dumps((pk if kind == "public" else sk).to_dict())  # as save_key writes it
    for i, flipped in _flips(text):
        try:
            flipped_text = flipped.decode("utf-8")
        except UnicodeDecodeError:
            continue  # load_key refuses it ("not UTF-8"), tested above
        with pytest.raises(pl.CiphertextFormatError) as err:
            pl.key_from_json(flipped_text, insecure_study_size=True)
        field = _field_at(text, i)
        if field is not None and "JSON" not in str(err.value):
            assert f"'{field}'" in str(err.value), (i, str(err.value))


def test_version_1_private_keys_are_read_and_public_keys_refused_with_the_fix(keys) -> None:
    pk, sk = keys
    old = sk.to_dict()
    old["version"] = 1
    del old["checksums"]
    assert pl.key_from_dict(old, insecure_study_size=True).p == sk.p
    old_pub = pk.to_dict()
    old_pub["version"] = 1
    del old_pub["checksums"]
    with pytest.raises(pl.CiphertextFormatError, match="version 1.*private key file.*paillier keygen"):
        pl.key_from_dict(old_pub, insecure_study_size=True)
    old["hs"] = format(pk.hs ^ 4, "x")  # version 1 has no checksum: p and q still catch it
    with pytest.raises(pl.InvalidKeyError, match="h_s"):
        pl.key_from_dict(old, insecure_study_size=True)
