"""The serialised frame of every CKKS object: a versioned header, the payload, a checksum.

Why: a ciphertext or context from another backend, parameter set or key set would be parsed
by the library without complaint and decrypt to garbage; truncated or garbled bytes may crash
it. The header (magic, version, kind, backend, parameter digest, key-set id) and a BLAKE2b
checksum let every such input be refused with a :class:`CkksError` before the library parses
anything. Contexts carry a JSON header and named binary sections inside the payload.
"""

from __future__ import annotations

import hashlib
import json
import struct
from typing import Mapping, Sequence

from cryptoffload.checks import JsonDict, JsonValue, strict_json
from cryptoffload.crypto.ckks.errors import CkksError
from cryptoffload.crypto.ckks.params import CkksParams

__all__ = [
    "KIND_CIPHERTEXT", "KIND_NAMES", "KIND_PLAINTEXT", "KIND_PUBLIC", "KIND_SECRET", "galois_steps", "header_int",
    "load_context_header", "pack_frame", "pack_sections", "peek_context", "peek_context_header", "unpack_frame", "unpack_sections",
]

_MAGIC = b"CKKS"
_VERSION = 1
KIND_CIPHERTEXT, KIND_PUBLIC, KIND_SECRET, KIND_PLAINTEXT = 1, 2, 3, 4
KIND_NAMES = {KIND_CIPHERTEXT: "ciphertext", KIND_PUBLIC: "public context", KIND_SECRET: "secret context",
               KIND_PLAINTEXT: "plaintext"}
_HEADER = struct.Struct("<4sBB16s16s16sQ")  # magic, version, kind, backend, params digest, key id, payload len
_CHECK = 16


def _checksum(data: bytes | memoryview) -> bytes:
    return hashlib.blake2b(data, digest_size=_CHECK, person=b"ckks-frame").digest()


def pack_frame(kind: int, backend: str, params_digest: bytes, key_id: bytes, payload: bytes) -> bytes:
    """Frame ``payload`` with a versioned header and a checksum (public so other adapters can
    reuse it)."""
    head = _HEADER.pack(_MAGIC, _VERSION, kind, backend.encode()[:16].ljust(16, b"\0"), params_digest,
                        key_id, len(payload))
    body = head + payload
    return body + _checksum(body)


def unpack_frame(data: bytes, kind: int, backend: str, params_digest: bytes | None,
                 key_id: bytes | None) -> tuple[bytes, bytes, bytes]:
    """Check a frame and return ``(payload, key_id, params_digest)``; every refusal is a
    :class:`CkksError` that says what is wrong (not ours, truncated, corrupted, other
    backend/parameters/keys). ``None`` for ``params_digest``/``key_id`` accepts any (loading a
    context, whose parameters are inside the payload)."""
    what = KIND_NAMES[kind]
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise CkksError(f"a serialised {what} is bytes, got {type(data).__name__}")
    data = bytes(data)
    if len(data) < _HEADER.size + _CHECK:
        if not data.startswith(_MAGIC[: len(data)]) or not data:
            raise CkksError(f"not a serialised CKKS {what} (bad magic)")
        raise CkksError(f"serialised {what} is truncated ({len(data)} bytes, header alone is "
                        f"{_HEADER.size + _CHECK})")
    magic, version, k, be, pd, kid, n = _HEADER.unpack_from(data)
    if magic != _MAGIC:
        raise CkksError(f"not a serialised CKKS {what} (bad magic {magic!r})")
    if version != _VERSION:
        raise CkksError(f"serialised {what} has format version {version}; this build reads version {_VERSION}")
    total = _HEADER.size + n + _CHECK
    if len(data) < total:
        raise CkksError(f"serialised {what} is truncated ({len(data)} of {total} bytes)")
    if len(data) > total:
        raise CkksError(f"serialised {what} has {len(data) - total} unexpected trailing bytes")
    if _checksum(memoryview(data)[: total - _CHECK]) != data[total - _CHECK:]:
        raise CkksError(f"serialised {what} is corrupted (checksum mismatch)")
    if k != kind:
        raise CkksError(f"expected a serialised {what}, got a {KIND_NAMES.get(k, f'kind {k}')}")
    be_name = be.rstrip(b"\0").decode(errors="replace")
    if be_name != backend:
        raise CkksError(f"serialised {what} comes from the {be_name!r} backend, not {backend!r}")
    if params_digest is not None and pd != params_digest:
        raise CkksError(f"serialised {what} was made with other CKKS parameters than this context's")
    if key_id is not None and kid != key_id:
        raise CkksError(f"serialised {what} belongs to another key set (key id {kid.hex()[:8]}, "
                        f"this context {key_id.hex()[:8]}); it would decrypt to garbage")
    return data[_HEADER.size: _HEADER.size + n], kid, pd


def pack_sections(header: Mapping[str, JsonValue], sections: Sequence[tuple[str, bytes]]) -> bytes:
    header = dict(header, sections=[[name, len(blob)] for name, blob in sections])
    h = json.dumps(header, sort_keys=True).encode()
    return struct.pack("<I", len(h)) + h + b"".join(blob for _, blob in sections)


def unpack_sections(payload: bytes, what: str) -> tuple[JsonDict, dict[str, bytes]]:
    try:
        (hl,) = struct.unpack_from("<I", payload)
        header = strict_json(payload[4: 4 + hl])  # no NaN, no key twice, no integer past 4,300 digits
        pos = 4 + hl
        out = {}
        for name, size in header["sections"]:
            if isinstance(size, bool) or not isinstance(size, int) or size < 0:
                raise ValueError(f"section {str(name)[:40]!r} has size {size!r}")
            out[str(name)] = payload[pos: pos + size]
            pos += size
    except (struct.error, ValueError, KeyError, TypeError) as exc:
        raise CkksError(f"malformed {what}: {exc}") from None
    if pos != len(payload):
        raise CkksError(f"malformed {what}: section sizes do not add up")
    return header, out


def galois_steps(header: Mapping[str, JsonValue], what: str) -> list[tuple[int, str]]:
    """A context header's Galois keys, ``[[step, key name], ...]``, each checked: the one reader
    of the list every backend's header carries."""
    raw = header.get("galois", [])
    if not isinstance(raw, list):
        raise CkksError(f"malformed {what}: its Galois key list is not a list")
    steps = []
    for item in raw:
        if not isinstance(item, list) or len(item) != 2 or isinstance(item[0], bool) or not isinstance(item[0], int):
            raise CkksError(f"malformed {what}: a Galois key is not a [step, name] pair")
        steps.append((item[0], str(item[1])))
    return steps


def header_int(header: Mapping[str, JsonValue], key: str, what: str, default: int | None = None) -> int:
    """The integer ``key`` of a context header (``default`` when absent; refused when not an integer)."""
    value = header.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise CkksError(f"malformed {what}: {key} must be an integer, got {value!r}")
    return value


def peek_context(data: bytes) -> tuple[str, int]:
    """``(backend name, kind)`` of a serialised context, without validating it."""
    if not isinstance(data, (bytes, bytearray, memoryview)) or len(data) < _HEADER.size + _CHECK:
        raise CkksError("not a serialised CKKS context (too short)")
    magic, _v, kind, be, *_ = _HEADER.unpack_from(bytes(data[: _HEADER.size]))
    if magic != _MAGIC:
        raise CkksError("not a serialised CKKS context (bad magic)")
    return be.rstrip(b"\0").decode(errors="replace"), kind


def peek_context_header(data: bytes) -> JsonDict:
    """The JSON header of a serialised context (parameters, Galois steps, section sizes) read
    from its first bytes, the frame not yet checked: what loading it would allocate can be
    bounded before anything else is read. Loading checks everything again."""
    peek_context(data)
    try:
        (hl,) = struct.unpack_from("<I", data, _HEADER.size)
        if _HEADER.size + 4 + hl > len(data) - _CHECK:
            raise ValueError("its header runs past the frame")
        header = strict_json(bytes(data[_HEADER.size + 4: _HEADER.size + 4 + hl]))
    except (struct.error, ValueError) as exc:
        raise CkksError(f"malformed serialised context: {exc}") from None
    if not isinstance(header, dict):
        raise CkksError("malformed serialised context: its header is not an object")
    return header


def load_context_header(backend: str, data: bytes,
                        kind: int) -> tuple[CkksParams, JsonDict, dict[str, bytes], bytes]:
    """Validate a serialised context of ``backend``: ``(params, header, sections, key_id)``."""
    be, _k = peek_context(data)
    if be != backend:
        raise CkksError(f"the context comes from the {be!r} backend, not {backend!r}")
    payload, key_id, pd = unpack_frame(data, kind, backend, None, None)
    header, sections = unpack_sections(payload, KIND_NAMES[kind])
    params = CkksParams.from_dict(header.get("params"))
    if params.digest() != pd:
        raise CkksError(f"serialised {KIND_NAMES[kind]}: its parameters do not match its header")
    return params, header, sections, key_id
