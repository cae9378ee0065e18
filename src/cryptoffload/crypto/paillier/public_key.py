"""A Paillier public key (g = n + 1) with its DJN base h_s: a plain value.

Why a plain value: a key is n and h_s and what follows from them (n^2, the sizes, the
fingerprint), compared and hashed by n. It knows no backend, builds no table and holds no
lock -- that is the encryption service's work (:mod:`.service`, which resolves the backend
once per call and owns the tables) -- so a key pickles, crosses to a worker process, and
reads the same wherever it is used. What it does compute is arithmetic on its own numbers,
written once in :mod:`.djn`: the plaintext and ciphertext range checks and the reference
encryptions the faster backends are tested against.

Why DJN (Damgard-Jurik-Nielsen) randomness: textbook Paillier needs r^n mod n^2, a full-size
exponentiation per ciphertext. DJN publishes h_s = (-x^2)^n mod n^2 and uses h_s^a with a
short random a (n/2 bits, as Intel's IPCL does), which a fixed-base table makes cheap
(:mod:`.encryptor`).
"""

from __future__ import annotations

import hashlib
import json
import math
import secrets

from cryptoffload.crypto.paillier import djn
from cryptoffload.crypto.paillier.errors import CiphertextFormatError, InvalidKeyError
from cryptoffload.crypto.paillier.gmp import gmpy2
from cryptoffload.crypto.paillier.validation import MIN_STUDY_KEY_BITS, check_djn_base_public
from cryptoffload.errors import ConfigError

FORMAT = "cryptoffload-paillier"  # key files (JSON); ciphertext frames have their own version
FORMAT_VERSION = 2  # version 1 had no per-field checksums (keyfile.py reads its private keys)


def key_fingerprint(n: int) -> bytes:
    """The key's identity: its modulus. h_s is not part of it on purpose -- a ciphertext is one
    of n whatever valid h_s made it (ridge providers draw their own); key files protect h_s
    with :func:`field_checksum`."""
    return hashlib.sha256(b"cryptoffload-paillier-key\x00" + n.to_bytes((n.bit_length() + 7) // 8, "big")).digest()[:16]


def field_checksum(field: str, value: int) -> str:
    """A key file's checksum of one field (BLAKE2b-64 over its name and value): a flipped bit
    in any field is refused, naming the field. Unkeyed: it detects corruption, not forgery."""
    data = field.encode("ascii") + b"\x00" + value.to_bytes((value.bit_length() + 7) // 8, "big")
    return hashlib.blake2b(data, digest_size=8, person=b"paillier-key").hexdigest()


def _djn_generator(n: int, nsquare: int) -> int:
    """(-x^2)^n mod n^2 for a random unit x, drawn again in the (negligible) case that it fails
    the public checks (+-1 or a small order modulo n) every loaded key must pass. (Toy moduli
    below the study floor, which no key file may hold, are not checked: all their units can
    have small orders.)"""
    while True:
        x = secrets.randbelow(n - 2) + 2
        if math.gcd(x, n) == 1:
            hs = int(gmpy2.powmod_sec((-x * x) % n, n, nsquare))
            if n.bit_length() < MIN_STUDY_KEY_BITS:
                return hs
            try:
                check_djn_base_public(n, hs)
            except InvalidKeyError:  # pragma: no cover - probability about 2^-400 at 512 bits
                continue
            return hs


class PublicKey:
    """n, g = n + 1 and the DJN base h_s (drawn when not given). Equality and identity are by n
    (the fingerprint).

    The constructor checks only what every use needs (odd n, h_s a unit); keys from outside
    are checked fully by :func:`~.keyfile.key_from_dict`. To encrypt, hand the key to the
    encryption service (:data:`.service.ENCRYPTION`)."""

    __slots__ = ("n", "nsquare", "hs", "bits", "exp_bits", "max_int", "fingerprint")

    def __init__(self, n: int, hs: int | None = None) -> None:
        n = int(n)
        if n < 3 or n % 2 == 0:
            raise ConfigError("a Paillier modulus must be an odd integer > 2")
        self.n = n
        self.nsquare = n * n
        self.bits = n.bit_length()
        self.hs = int(hs) if hs is not None else _djn_generator(n, self.nsquare)
        if not 0 < self.hs < self.nsquare or math.gcd(self.hs, n) != 1:
            raise ConfigError("the DJN base h_s is not a unit modulo n^2")
        self.exp_bits = (self.bits + 1) // 2
        self.max_int = n // 3
        self.fingerprint = key_fingerprint(n)

    @property
    def g(self) -> int:
        return self.n + 1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PublicKey) and other.n == self.n

    def __hash__(self) -> int:
        return hash(self.n)

    def __repr__(self) -> str:
        return f"PublicKey(bits={self.bits}, fingerprint={self.fingerprint.hex()})"

    # -- arithmetic on the key's own numbers ------------------------------------------------
    def check_plaintext(self, m: int) -> int:
        return djn.check_plaintext(m, self.n)

    def check_ciphertext(self, c: int) -> int:
        if isinstance(c, bool) or not isinstance(c, int) or not 0 < c < self.nsquare or math.gcd(c, self.n) != 1:
            raise CiphertextFormatError("not a valid ciphertext for this key (must be a unit modulo n^2)")
        return c

    def random_exponent(self) -> int:
        return secrets.randbits(self.exp_bits)

    def random_unit(self) -> int:
        return djn.random_unit(self.n)

    def raw_encrypt(self, m: int, a: int | None = None) -> int:
        """Reference DJN encryption with gmpy2: (1 + m n) h_s^a mod n^2."""
        self.check_plaintext(m)
        a = self.random_exponent() if a is None else a
        return djn.encrypt(m, a, self.n, self.hs, self.nsquare)

    def raw_encrypt_classic(self, m: int, r: int | None = None) -> int:
        """Textbook Paillier, g^m r^n mod n^2 with both exponentiations (what libhcs and the
        QAT paper compute; used by the offload study to reproduce its two-modexp structure)."""
        self.check_plaintext(m)
        if r is None:
            r = self.random_unit()
        gm = gmpy2.powmod(self.g, m, self.nsquare)
        rn = gmpy2.powmod(r, self.n, self.nsquare)
        return int(gm * rn % self.nsquare)

    @property
    def ciphertext_bytes(self) -> int:
        return (self.nsquare.bit_length() + 7) // 8

    # -- serialisation ----------------------------------------------------------------------
    def to_dict(self) -> dict[str, object]:
        return {"format": FORMAT, "version": FORMAT_VERSION, "kind": "public",
                "n": format(self.n, "x"), "hs": format(self.hs, "x"), "fingerprint": self.fingerprint.hex(),
                "checksums": self.checksums()}

    def checksums(self) -> dict[str, str]:
        """One :func:`field_checksum` per field of the key file (a private key adds its own)."""
        return {"n": field_checksum("n", self.n), "hs": field_checksum("hs", self.hs)}

    def to_json(self) -> str:
        return json.dumps(self.to_dict())
