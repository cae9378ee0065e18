"""Wire format of the ridge protocol between processes: JSON envelopes, ciphertext batches.

Every message is one JSON object (UTF-8) with the same envelope::

    {"protocol": "cryptoffload-ridge/1", "type": "upload", "message_id": "<uuid4>",
     "key_fingerprint": "<32 hex digits>", ...type-specific fields...}

Why an envelope on every message: the receiver can refuse, before looking at any payload,
a peer that speaks another protocol version (``protocol``), a message meant for another
deployment (``key_fingerprint`` names the Paillier key the message is about: the upload key
for uploads, finalisation and unpacking, the solve key for the solve and the model), a
type it does not serve, and a replay (``message_id``: a server refuses an id it has already
processed with HTTP 409). Retries therefore send a *new* message id; what makes a retried
upload idempotent is its ``upload_id``, not its message id.

Ciphertexts travel as one base64 string per field (a *batch*), not one JSON number per value,
because a batch of 1000 records holds ~18,000 ciphertexts of 256 bytes each: JSON integers
would double the size and cost a Python int per value to parse. A batch is a single header
followed by fixed-length values, the compact equivalent of concatenating
:meth:`~cryptoffload.crypto.paillier.Ciphertext.to_bytes` (which repeats the header per
value)::

    magic "CORW" | version (1 byte) | key fingerprint (16 bytes) | value bytes (u16, big endian)
    | count (u32, big endian) | count values, each little-endian in `value bytes` bytes

``value bytes`` is 8 * ceil(bits(n^2) / 64): the values are exactly the little-endian 64-bit
word buffer that :func:`cryptoffload.crypto._native.core.column_products` reads, so the
platform folds a whole upload into its aggregate in one C call without building a Python
integer per ciphertext (it still reads each value once, to check it lies below n^2).

Small integer vectors modulo the solve key's n (the masks R, r, the masked solution w' and
its proof) are lists of lowercase hex strings; an exclusion's proof (:mod:`.proofs`) is an
object ``{"contribution", "plaintext", "value", "root"}`` (two integers, two hex strings).
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import hashlib
import json
import struct
import uuid
from dataclasses import dataclass
from typing import Any, Mapping, Sequence, TypeAlias

import gmpy2

from cryptoffload.apps import _http
from cryptoffload.apps.ridge.params import MAX_PROVIDERS, RidgeParams, upload_layout
from cryptoffload.apps.ridge.proofs import ExclusionProof
from cryptoffload.crypto import native
from cryptoffload.crypto.paillier import CiphertextFormatError, PublicKey, key_from_dict
from cryptoffload.checks import JsonValue
from cryptoffload.errors import ConfigError, CryptoffloadError

PROTOCOL = "cryptoffload-ridge/1"

# message types -----------------------------------------------------------------------------
PARAMS = "params"                            # CSP/platform -> anyone: parameters and public keys
STATUS = "status"                            # CSP/platform -> anyone: progress, no secrets
UPLOAD = "upload"                            # provider -> platform
UPLOAD_ACK = "upload_ack"                    # platform -> provider
FINALIZE = "finalize"                        # buyer -> platform
FINALIZED = "finalized"                      # platform -> buyer
MASK_REQUEST = "mask_request"                # buyer -> platform
MASK = "mask"                                # platform -> buyer: R, r and the masked system
COMMIT = "commit"                            # platform -> CSP: the aggregate it will unpack
COMMITTED = "committed"                      # CSP -> platform
UNPACK_REQUEST = "unpack_request"            # platform -> CSP: masked aggregate
UNPACK_RESPONSE = "unpack_response"          # CSP -> platform: fields under the solve key, exclusions' proofs
SOLVE_REQUEST = "solve_request"              # platform -> CSP: Enc(A R), Enc(b + A r)
SOLVE_ACK = "solve_ack"                      # CSP -> platform (w' is *not* in it)
COEFFICIENTS_REQUEST = "coefficients_request"  # buyer -> CSP
COEFFICIENTS = "coefficients"                # CSP -> buyer: w' and its proof
ERROR = "error"

BATCH_MAGIC = b"CORW"
BATCH_VERSION = 1
_BATCH_HEAD = struct.Struct(">4sB16sHI")

#: bytes of a message besides its ciphertext batch (envelope, ids, counts): a generous bound
ENVELOPE_BYTES = 8192


class ProtocolError(CryptoffloadError):
    """A message was refused. ``status`` is the HTTP status a server answers with, ``code`` a
    stable machine-readable reason (``replayed_message``, ``foreign_key``, ...)."""

    def __init__(self, message: str, status: int = 400, code: str = "bad_request") -> None:
        super().__init__(message)
        self.status = status
        self.code = code


#: A protocol message: a JSON object (what every party sends, and what :func:`parse_message`
#: returns once its envelope is checked; each field is checked where it is read).
Message: TypeAlias = "dict[str, JsonValue]"


# envelopes ---------------------------------------------------------------------------------


def new_message(type_: str, key_fingerprint: bytes, **fields: Any) -> Message:
    """A fresh envelope (new uuid4 message id) with ``fields`` added."""
    return {"protocol": PROTOCOL, "type": type_, "message_id": str(uuid.uuid4()),
            "key_fingerprint": key_fingerprint.hex(), **fields}


def with_new_id(message: Mapping[str, JsonValue]) -> Message:
    """The same message under a fresh message id: what a retry sends (the old id may have
    been processed, and would then be refused as a replay)."""
    return {**message, "message_id": str(uuid.uuid4())}


def dumps(message: Mapping[str, JsonValue]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()


def error_message(status: int, code: str, text: str) -> Message:
    """The JSON body of every 4xx/5xx answer."""
    return {"protocol": PROTOCOL, "type": ERROR, "status": status, "error": code, "message": text}


def parse_message(body: bytes | str | Mapping[str, JsonValue], expected: Mapping[str, bytes | None]) -> Message:
    """Check the envelope of a received message and return it as a dict.

    ``expected`` maps each message type this receiver accepts to the key fingerprint such a
    message must carry (None: any well-formed fingerprint). Raises :class:`ProtocolError`
    (HTTP 400) for a body that is not a JSON object (truncated or garbled), another protocol
    version, an unknown type, a malformed message id or a foreign key fingerprint."""
    if isinstance(body, Mapping):
        msg: object = dict(body)
    else:
        try:  # whatever the parser raises (huge integers, deep nesting, bad UTF-8) is a 400
            msg = _http.parse_json(body, "the message body")
        except _http.MalformedJSON as exc:
            raise ProtocolError(str(exc.text), code="malformed") from None
    if not isinstance(msg, dict):
        raise ProtocolError("message body must be a JSON object", code="malformed")
    proto = msg.get("protocol")
    if proto != PROTOCOL:
        raise ProtocolError(f"unsupported protocol {proto!r}: this party speaks {PROTOCOL}", code="protocol_version")
    kind = msg.get("type")
    if not isinstance(kind, str) or kind not in expected:
        raise ProtocolError(f"unknown message type {kind!r} here (accepted: {', '.join(sorted(expected))})",
                            code="unknown_type")
    mid = msg.get("message_id")
    try:  # canonical form only: an upper-case or braced copy of a seen id is the same id
        if not isinstance(mid, str) or len(mid) != 36 or uuid.UUID(mid).version != 4 or str(uuid.UUID(mid)) != mid:
            raise ValueError
    except ValueError:
        raise ProtocolError(f"message_id must be a uuid4 string, got {str(mid)[:60]!r}", code="malformed") from None
    fp = msg.get("key_fingerprint")
    if not isinstance(fp, str) or len(fp) != 32 or any(c not in "0123456789abcdef" for c in fp):
        raise ProtocolError("key_fingerprint must be 32 lowercase hex digits", code="malformed")
    want = expected[kind]
    if want is not None and fp != want.hex():
        raise ProtocolError(f"message is about key {fp}, not this session's key {want.hex()}", code="foreign_key")
    return msg


def int_field(msg: Mapping[str, JsonValue], name: str, minimum: int = 0, maximum: int | None = None) -> int:
    value = msg.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum or \
            (maximum is not None and value > maximum):
        bound = f"in {minimum}..{maximum}" if maximum is not None else f">= {minimum}"
        raise ProtocolError(f"field {name!r} must be an integer {bound}, got {str(value)[:40]!r}", code="malformed")
    return value


def int_list_field(msg: Mapping[str, JsonValue], name: str, minimum: int = 0) -> list[int]:
    """A list of integers ``>= minimum`` (absent: empty)."""
    value = msg.get(name, [])
    if not isinstance(value, list) or any(isinstance(v, bool) or not isinstance(v, int) or v < minimum
                                          for v in value):
        raise ProtocolError(f"field {name!r} must be a list of integers >= {minimum}", code="malformed")
    return [v for v in value if isinstance(v, int)]


def envelope(msg: Mapping[str, JsonValue]) -> tuple[str, str]:
    """``(type, message_id)`` of a message :func:`parse_message` returned (it checked both)."""
    kind, mid = msg.get("type"), msg.get("message_id")
    if not isinstance(kind, str) or not isinstance(mid, str):   # not from parse_message: a bug
        raise AssertionError("a message whose envelope parse_message did not check")
    return kind, mid


def str_field(msg: Mapping[str, JsonValue], name: str, max_len: int = 200) -> str:
    value = msg.get(name)
    if not isinstance(value, str) or not 1 <= len(value) <= max_len or not value.isprintable():
        raise ProtocolError(f"field {name!r} must be a printable string of 1..{max_len} characters", code="malformed")
    return value


# ciphertext batches ------------------------------------------------------------------------


def value_bytes(pk: PublicKey) -> int:
    """Bytes per ciphertext in a batch: whole 64-bit words covering n^2."""
    return 8 * native.words_for_bits(pk.nsquare.bit_length())


def message_bytes(count: int, pk: PublicKey) -> int:
    """Largest body of a message carrying one batch of ``count`` ciphertexts under ``pk``: what a
    server sizes that route's body limit by."""
    return 4 * -(-(_BATCH_HEAD.size + count * value_bytes(pk)) // 3) + ENVELOPE_BYTES


def encode_words(words: bytes, count: int, pk: PublicKey) -> str:
    """A batch (module docstring) from a little-endian word buffer of ``count`` values."""
    size = value_bytes(pk)
    if len(words) != count * size:
        raise ConfigError(f"word buffer of {len(words)} bytes does not hold {count} values of {size} bytes")
    head = _BATCH_HEAD.pack(BATCH_MAGIC, BATCH_VERSION, pk.fingerprint, size, count)
    return base64.b64encode(head + words).decode("ascii")


def encode_ciphertexts(values: Sequence[int], pk: PublicKey) -> str:
    return encode_words(native.ints_to_words(values, pk.nsquare), len(values), pk)


@dataclass(frozen=True)
class CiphertextBatch:
    """A decoded batch: the raw word buffer (for native calls) and the values as ints."""

    words: bytes
    values: list[int]

    @property
    def digest(self) -> str:
        """sha256 of the values (hex): names a batch in logs, caches and the database."""
        return hashlib.sha256(self.words).hexdigest()


def decode_ciphertexts(text: object, pk: PublicKey, *, count: int | None = None, name: str = "ciphertexts",
                       check_units: bool = True) -> CiphertextBatch:
    """Parse a batch made under ``pk``. Refuses (400) bad base64, a truncated or garbled
    header or body, another key's batch (``foreign_key``), a count other than ``count``,
    and any value that is not a ciphertext of ``pk`` (0 < c < n^2; with ``check_units`` also
    a unit mod n, checked one by one; the platform checks units in bulk instead, on the
    aggregate)."""
    if not isinstance(text, str):
        raise ProtocolError(f"field {name!r} must be a base64 string", code="malformed")
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise ProtocolError(f"field {name!r} is not valid base64 (truncated or garbled)", code="malformed") from None
    head = _BATCH_HEAD.size
    if len(raw) < head:
        raise ProtocolError(f"ciphertext batch {name!r} is truncated ({len(raw)} bytes, header alone is {head})",
                            code="malformed")
    magic, version, fp, size, n = _BATCH_HEAD.unpack_from(raw)
    if magic != BATCH_MAGIC:
        raise ProtocolError(f"ciphertext batch {name!r} has a bad header (garbled)", code="malformed")
    if version != BATCH_VERSION:
        raise ProtocolError(f"unsupported ciphertext batch version {version}", code="protocol_version")
    if fp != pk.fingerprint:
        raise ProtocolError(f"ciphertexts in {name!r} were made under key {fp.hex()}, not {pk.fingerprint.hex()}",
                            code="foreign_key")
    want = value_bytes(pk)
    if size != want:
        raise ProtocolError(f"ciphertext batch {name!r} declares {size}-byte values, this key's are {want}",
                            code="malformed")
    body = raw[head:]
    if len(body) != n * size:
        raise ProtocolError(f"ciphertext batch {name!r} declares {n} values but carries {len(body)} bytes, not "
                            f"{n * size} (truncated or garbled)", code="malformed")
    if count is not None and n != count:
        raise ProtocolError(f"expected {count} ciphertexts in {name!r}, got {n}", code="malformed")
    n2 = pk.nsquare
    values = [int.from_bytes(body[i:i + size], "little") for i in range(0, len(body), size)]
    for i, c in enumerate(values):
        if not 0 < c < n2:
            raise ProtocolError(f"ciphertext {i} of {name!r} is not below n^2 (garbled)", code="malformed")
    if check_units:
        nn = gmpy2.mpz(pk.n)
        for i, c in enumerate(values):
            if gmpy2.gcd(c, nn) != 1:
                raise ProtocolError(f"ciphertext {i} of {name!r} is not a unit modulo n (garbled)", code="malformed")
    return CiphertextBatch(body, values)


# integers, parameters, keys ----------------------------------------------------------------


def ints_to_hex(values: Sequence[int]) -> list[str]:
    return [format(int(v), "x") for v in values]


def hex_to_ints(value: object, count: int, bound: int, name: str) -> list[int]:
    """A list of ``count`` hex strings, each an integer in [0, bound)."""
    if not isinstance(value, list) or len(value) != count:
        raise ProtocolError(f"field {name!r} must be a list of {count} hex strings", code="malformed")
    out = []
    limit = (bound.bit_length() + 3) // 4 + 1
    for i, v in enumerate(value):
        try:
            if not isinstance(v, str) or not 0 < len(v) <= limit:
                raise ValueError
            x = int(v, 16)
        except ValueError:
            raise ProtocolError(f"{name}[{i}] is not a hex integer", code="malformed") from None
        if not 0 <= x < bound:
            raise ProtocolError(f"{name}[{i}] is out of range", code="malformed")
        out.append(x)
    return out


def exclusion_proofs_to_json(proofs: Sequence[ExclusionProof]) -> list[Message]:
    return [{"contribution": p.contribution, "plaintext": p.plaintext, "value": format(p.value, "x"),
             "root": format(p.root, "x")} for p in proofs]


def exclusion_proofs_from(value: object, plaintexts: int, n: int) -> list[ExclusionProof]:
    """The exclusions' proofs of an unpack answer (a CSP's answer: a malformed one is a 502),
    each naming a contribution (0..MAX_PROVIDERS-1), one of its ``plaintexts`` plaintexts, and
    two integers below the upload key's ``n``. Whether they prove anything is
    :func:`~.proofs.check_exclusions`'s business."""
    what = "the CSP's unpack answer"
    if not isinstance(value, list) or len(value) > MAX_PROVIDERS:
        raise ProtocolError(f"{what} has no valid 'exclusion_proofs' list", 502, code="bad_answer")
    out = []
    for i, item in enumerate(value):
        if not isinstance(item, dict) or set(item) != {"contribution", "plaintext", "value", "root"}:
            raise ProtocolError(f"{what}: exclusion proof {i} is not an object of contribution, plaintext, value, "
                                "root", 502, code="bad_answer")
        try:
            contribution = int_field(item, "contribution", 0, MAX_PROVIDERS - 1)
            plaintext = int_field(item, "plaintext", 0, plaintexts - 1)
            [v, root] = [hex_to_ints([item[k]], 1, n, f"exclusion_proofs[{i}].{k}")[0] for k in ("value", "root")]
        except ProtocolError as exc:
            raise ProtocolError(f"{what}: {exc}", 502, code="bad_answer") from None
        out.append(ExclusionProof(contribution, plaintext, v, root))
    return out


def params_to_dict(params: RidgeParams) -> Message:
    return dataclasses.asdict(params)


def params_from_dict(value: object) -> RidgeParams:
    if not isinstance(value, dict):
        raise ProtocolError("field 'params' must be an object", code="malformed")
    names = {f.name for f in dataclasses.fields(RidgeParams)}
    unknown = set(value) - names
    if unknown:
        raise ProtocolError(f"unknown parameter(s) {', '.join(sorted(unknown))}", code="malformed")
    try:
        return RidgeParams(**value)
    except (ConfigError, TypeError) as exc:
        raise ProtocolError(f"invalid parameters: {exc}", code="malformed") from None


def public_key_from(value: object, name: str) -> PublicKey:
    """A public key from its JSON dict; a private key (or anything else) is refused."""
    if not isinstance(value, dict) or value.get("kind") != "public":
        raise ProtocolError(f"field {name!r} must be a public key", code="malformed")
    try:
        # structure is checked here (key_from_dict refuses what anyone can factor, and keys
        # under 512 bits); the 2048-bit floor is the receiving party's policy, which knows
        # whether the session asked for a study size
        key = key_from_dict(value, insecure_study_size=True)
    except (CiphertextFormatError, ConfigError) as exc:
        raise ProtocolError(f"field {name!r}: {exc}", code="malformed") from None
    assert isinstance(key, PublicKey)
    return key


# the session ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class SessionInfo:
    """Parameters and public keys of one CSP session, as every party learns them (what
    ``GET /params`` carries)."""

    params: RidgeParams
    upload_pk: PublicKey
    solve_pk: PublicKey
    buyer_token_sha256: str

    @property
    def fingerprint(self) -> str:
        """What a provider pins (``--csp-fingerprint``): SHA-256 over both moduli and the
        parameters. Not over the DJN bases h_s: a provider makes its own (see
        :func:`~.provider.pinned_upload_key`)."""
        body = json.dumps({"params": params_to_dict(self.params), "upload_n": format(self.upload_pk.n, "x"),
                           "solve_n": format(self.solve_pk.n, "x")}, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(b"cryptoffload-ridge-session\x00" + body.encode()).hexdigest()

    def to_message(self, role: str) -> Message:
        layout = upload_layout(self.params, self.upload_pk)
        return new_message(
            PARAMS, self.upload_pk.fingerprint, role=role, params=params_to_dict(self.params),
            upload_key=self.upload_pk.to_dict(), solve_key=self.solve_pk.to_dict(),
            buyer_token_sha256=self.buyer_token_sha256,
            plaintexts_per_record=layout.plaintexts_needed(self.params.value_count))

    @classmethod
    def from_message(cls, msg: Mapping[str, JsonValue]) -> "SessionInfo":
        params = params_from_dict(msg.get("params"))
        upk = public_key_from(msg.get("upload_key"), "upload_key")
        spk = public_key_from(msg.get("solve_key"), "solve_key")
        if msg.get("key_fingerprint") != upk.fingerprint.hex():
            raise ProtocolError("parameters message names another key than its upload key", code="foreign_key")
        th = msg.get("buyer_token_sha256")
        if not isinstance(th, str) or len(th) != 64:
            raise ProtocolError("parameters lack buyer_token_sha256", code="malformed")
        return cls(params, upk, spk, th)
