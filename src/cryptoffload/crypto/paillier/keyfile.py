"""Paillier keys as JSON files: parsing with full validation, and writing safely.

Why so strict: a key file is outside input. Loading refuses what would silently break secrecy
or correctness (:mod:`.validation`), keys below 2048 bits unless the caller asks for a study
size, and a private key file that is not ours alone (:mod:`cryptoffload.private_files`: another
user's, open to others -- as ssh refuses it --, a link, or in a folder others can write), saying
what fixes it. Writing goes through a temporary file (a crash leaves no half key), private keys
are created 0600 and never overwrite an existing file unless asked.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from cryptoffload.crypto.paillier.errors import CiphertextFormatError, InvalidKeyError, PaillierError
from cryptoffload.crypto.paillier.keys import PrivateKey
from cryptoffload.crypto.paillier.public_key import FORMAT, FORMAT_VERSION, PublicKey, field_checksum, key_fingerprint
from cryptoffload.crypto.paillier.validation import (MAX_KEY_BITS, check_djn_base_public, check_modulus,
                                                     check_modulus_bits)
from cryptoffload.checks import JsonRefused, strict_json
from cryptoffload.errors import ConfigError, CryptoffloadError
from cryptoffload.io import atomic_write, read_input_stat, same_file
from cryptoffload.private_files import check_folders_above, check_private, write_private

MAX_KEY_FILE_BYTES = 64 * 1024  # an 8192-bit private key is about 6 KB of JSON
_MAX_HEX_DIGITS = 2 * MAX_KEY_BITS // 4  # h_s is below n^2


_PUBLIC_FIELDS = ("n", "hs")
_PRIVATE_FIELDS = ("p", "q")
_OTHER_FIELDS = ("format", "version", "kind", "fingerprint", "checksums")


def _parse_hex(d: dict[str, object], field: str) -> int:
    """A number as the writer wrote it: lowercase hexadecimal without sign, prefix, spaces or
    leading zeros (so that a flipped bit cannot hide, e.g. a -> A reading the same value)."""
    v = d.get(field)
    if not isinstance(v, str):
        raise CiphertextFormatError(f"key data lacks field {field!r}")
    if len(v) > _MAX_HEX_DIGITS:
        raise CiphertextFormatError(f"key field {field!r} has {len(v)} hex digits, more than a "
                                    f"{MAX_KEY_BITS}-bit key can have")
    if not v or any(c not in "0123456789abcdef" for c in v) or (v[0] == "0" and len(v) > 1):
        raise CiphertextFormatError(f"key field {field!r} is not lowercase hexadecimal as keys are written "
                                    "(garbled key data)")
    return int(v, 16)


def _check_fields(d: dict[str, object], fields: tuple[str, ...]) -> dict[str, int]:
    """Every field of the file parsed and matched to its checksum (format version 2); an unknown
    field or a mismatch is refused naming the field."""
    unknown = sorted(set(d) - set(fields) - set(_OTHER_FIELDS))
    if unknown:
        raise CiphertextFormatError(f"key data has an unknown field {unknown[0]!r} (garbled key data)")
    values = {f: _parse_hex(d, f) for f in fields}
    sums = d.get("checksums")
    if d.get("version") == 1:
        return values
    if not isinstance(sums, dict) or set(sums) != set(fields):
        raise CiphertextFormatError(f"key data's field 'checksums' must hold one checksum for each of "
                                    f"{', '.join(fields)} (garbled key data)")
    for f in fields:
        if sums[f] != field_checksum(f, values[f]):
            raise CiphertextFormatError(f"key field {f!r} does not match its checksum: a bit changed since the key "
                                        "was written (restore the key from a copy)")
    return values


def _check_header(d: dict[str, object]) -> str:
    if not isinstance(d, dict) or d.get("format") != FORMAT:
        raise CiphertextFormatError("not a cryptoffload Paillier key")
    kind = d.get("kind")
    if kind not in ("public", "private"):
        raise CiphertextFormatError(f"unknown key kind {kind!r}")
    if d.get("version") == 1 and kind == "public":
        raise CiphertextFormatError(
            "public key file has format version 1, whose h_s no checksum covers (written by an older cryptoffload); "
            "use the private key file instead (version 1 private keys are still read, their h_s proven against p "
            "and q), or generate a new key pair with `cryptoffload paillier keygen`")
    if d.get("version") not in (1, FORMAT_VERSION):
        raise CiphertextFormatError(f"unsupported key format version {d.get('version')!r} "
                                    f"(this cryptoffload reads version {FORMAT_VERSION})")
    return str(kind)


def key_from_dict(d: dict[str, object], *, insecure_study_size: bool = False) -> PublicKey | PrivateKey:
    """Rebuild a key from :meth:`~.keys.PublicKey.to_dict` output, checking format, version,
    every field against its checksum, the fingerprint, size (>= 2048 bits unless
    ``insecure_study_size``; never below 512 or above 8192) and structure (:mod:`.validation`:
    n, and h_s publicly and, for a private key, against p and q).

    Format version 1 (no checksums) is read for private keys only: there every field is
    proven against the factorisation; a version 1 public key's h_s could be garbled unseen."""
    kind = _check_header(d)
    fields = _PUBLIC_FIELDS + (_PRIVATE_FIELDS if kind == "private" else ())
    v = _check_fields(d, fields)
    n = v["n"]
    if d.get("fingerprint") != key_fingerprint(n).hex():
        raise CiphertextFormatError("key field 'fingerprint' does not match the modulus n (garbled key data)")
    check_modulus_bits(n.bit_length(), insecure_study_size, "the")
    check_modulus(n)
    check_djn_base_public(n, v["hs"])
    try:
        pub = PublicKey(n, v["hs"])
    except ConfigError as exc:
        raise InvalidKeyError(f"invalid key data: {exc}") from None
    if kind == "public":
        return pub
    return PrivateKey(pub, v["p"], v["q"])


def key_from_json(text: str, *, insecure_study_size: bool = False) -> PublicKey | PrivateKey:
    return key_from_dict(_json_dict(text), insecure_study_size=insecure_study_size)


def _json_dict(text: str) -> dict[str, object]:
    try:
        d = strict_json(text)
    except JsonRefused as exc:
        raise CiphertextFormatError(f"key data is not valid JSON (truncated or garbled: {exc})") from None
    if not isinstance(d, dict):
        raise CiphertextFormatError("not a cryptoffload Paillier key")
    return d


def load_key(path: str | os.PathLike[str], *, insecure_study_size: bool = False) -> PublicKey | PrivateKey:
    """A key from a file; every refusal names the file. A private key file must pass the rule
    of :mod:`cryptoffload.private_files` -- ours, open to nobody else (as ssh asks), not a
    link, in folders only we or root can write: a planted key would decrypt for its planter --
    refused with the fix. A public key may be anyone's, and reached through a link."""
    path = Path(path)
    raw, st = read_input_stat(path, "key file", max_bytes=MAX_KEY_FILE_BYTES, error=PaillierError)
    try:
        d = _json_dict(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise CiphertextFormatError(f"{path}: not a key file (not UTF-8 text)") from None
    except CiphertextFormatError as exc:
        raise CiphertextFormatError(f"{path}: {exc}") from None
    if d.get("kind") == "private":
        check_private(path, st, "private key", error=InvalidKeyError)
    try:
        return key_from_dict(d, insecure_study_size=insecure_study_size)
    except CryptoffloadError as exc:
        raise type(exc)(f"{path}: {exc}") from None


def save_key(key: PublicKey | PrivateKey, path: str | os.PathLike[str], *, overwrite: bool = True) -> Path:
    """Write a key as JSON through a temporary file, so a crash leaves no half-written key.
    A private key is written under the rule of :mod:`cryptoffload.private_files`: 0600 from
    creation, never through a link, only into a folder no other user can write. With
    ``overwrite=False`` an existing file is never replaced."""
    text = json.dumps(key.to_dict())
    if isinstance(key, PrivateKey):
        return write_private(path, text, "private key", overwrite=overwrite)
    return atomic_write(path, text, overwrite=overwrite)


def check_new_key_paths(private_path: str | os.PathLike[str], public_path: str | os.PathLike[str]) -> None:
    """Refuse, before any key is generated, two names for one file (also through symlinks or
    ``..``), a name that exists, a folder that does not, or a private key's folder that another
    user could replace it in (:func:`cryptoffload.private_files.check_folders_above`)."""
    a, b = Path(private_path), Path(public_path)
    if same_file(a, b):
        raise PaillierError(f"the private key ({a}) and the public key ({b}) would be the same file; "
                            "give --public-out another path")
    for p in (a, b):
        if os.path.lexists(p):
            raise PaillierError(f"{p} exists; refusing to overwrite a key (remove it or choose another path)")
        parent = p.parent if str(p.parent) else Path(".")
        if not parent.is_dir():
            raise PaillierError(f"cannot write key file {p}: folder {parent} does not exist")
    check_folders_above(a.parent, f"the private key file {a}", PaillierError)


def save_keypair(public_key: PublicKey, private_key: PrivateKey, private_path: str | os.PathLike[str],
                 public_path: str | os.PathLike[str]) -> tuple[Path, Path]:
    """Write both keys as new files (never over existing ones); if the second cannot be
    written the first is removed, so a failure leaves nothing behind."""
    check_new_key_paths(private_path, public_path)
    sk_path = save_key(private_key, private_path, overwrite=False)
    try:
        pk_path = save_key(public_key, public_path, overwrite=False)
    except BaseException:
        sk_path.unlink(missing_ok=True)
        raise
    return sk_path, pk_path
