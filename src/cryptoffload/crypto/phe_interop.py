"""Conversion of keys and ciphertexts to and from python-paillier (``phe``).

Why it works without re-encryption: both libraries use g = n + 1 and the same plaintext
space, so a ciphertext is just an integer modulo n^2 that either side decrypts. Ours draws its
randomness as h_s^a (DJN) instead of r^n, but h_s^a = ((-x^2)^a)^n is itself an n-th power,
so phe decrypts our ciphertexts unchanged. Only the key objects differ: phe keeps n (and p, q),
ours also keeps the DJN base h_s, which anyone can generate from n alone (it is public and
does not affect decryption), so importing a phe public key draws a fresh h_s unless one is given.

Signed integers use the same convention (x mod n, negatives near n), with one boundary
difference: phe accepts |x| <= n//3 - 1, ours |x| <= n//3.

Exponents: phe's ``EncodedNumber`` stores value = mantissa * 16^exponent and carries the
exponent beside the ciphertext; ours has no exponent (fixed-point scale is the caller's
:class:`~cryptoffload.crypto.paillier.FixedPoint`, a power of two). Since 16^e = 2^(4e), a phe
number converts *exactly* to our ints scaled by 2^frac_bits whenever 4*exponent + frac_bits >= 0:
the ciphertext is multiplied by 2^(4*exponent + frac_bits) homomorphically (nothing to do at
exponent 0, frac_bits 0). A conversion that would have to divide, i.e. lose precision, is
refused rather than rounded. The other way, a FixedPoint scale of f bits with f % 4 == 0 is
phe exponent -f/4.

Obfuscation: phe skips re-randomising the results of arithmetic until ``ciphertext()`` is asked
for with ``be_secure=True``. Conversion is local and keeps the value as it is (``be_secure=False``);
exported numbers are marked un-obfuscated, so phe re-randomises them before they are shared.
Before sending one of ours elsewhere, call :meth:`Ciphertext.rerandomize`.
"""

from __future__ import annotations

from phe import EncryptedNumber, PaillierPrivateKey, PaillierPublicKey

from cryptoffload.crypto.paillier import (
    Ciphertext,
    FixedPoint,
    KeyMismatchError,
    PaillierError,
    PlaintextRangeError,
    PrivateKey,
    PublicKey,
)

#: phe's EncodedNumber.BASE as a power of two (16 = 2^4)
PHE_BASE_LOG2 = 4


def _check_type(obj: object, cls: type, what: str) -> None:
    if not isinstance(obj, cls):
        raise PaillierError(f"expected {what}, got {type(obj).__name__}")


def to_phe_public_key(pk: PublicKey) -> PaillierPublicKey:
    """phe's public key for the same n (phe has no h_s; it encrypts with r^n)."""
    _check_type(pk, PublicKey, "a cryptoffload PublicKey")
    return PaillierPublicKey(pk.n)


def from_phe_public_key(phe_pk: PaillierPublicKey, hs: int | None = None) -> PublicKey:
    """Our public key for phe's n; a fresh DJN base h_s is drawn unless ``hs`` is given
    (pass the saved one to keep the same encryption tables across imports)."""
    _check_type(phe_pk, PaillierPublicKey, "a phe PaillierPublicKey")
    if phe_pk.g != phe_pk.n + 1:
        raise PaillierError("only phe keys with g = n + 1 are supported")
    return PublicKey(phe_pk.n, hs)


def to_phe_private_key(sk: PrivateKey, phe_pk: PaillierPublicKey | None = None) -> PaillierPrivateKey:
    """phe's private key from p, q (reusing ``phe_pk`` when the caller already has it)."""
    _check_type(sk, PrivateKey, "a cryptoffload PrivateKey")
    if phe_pk is None:
        phe_pk = to_phe_public_key(sk.public_key)
    elif phe_pk.n != sk.public_key.n:
        raise KeyMismatchError("phe public key does not match the private key")
    return PaillierPrivateKey(phe_pk, sk.p, sk.q)


def from_phe_private_key(phe_sk: PaillierPrivateKey, public_key: PublicKey | None = None) -> PrivateKey:
    """Our private key from phe's p, q; pass our ``public_key`` to attach it (same n required),
    else a public key with a fresh h_s is made."""
    _check_type(phe_sk, PaillierPrivateKey, "a phe PaillierPrivateKey")
    if public_key is None:
        public_key = from_phe_public_key(phe_sk.public_key)
    elif public_key.n != phe_sk.public_key.n:
        raise KeyMismatchError(
            f"phe private key is for another modulus than key {public_key.fingerprint.hex()}")
    return PrivateKey(public_key, phe_sk.p, phe_sk.q)


def to_phe_encrypted_number(ct: Ciphertext, exponent: int = 0,
                            phe_pk: PaillierPublicKey | None = None) -> EncryptedNumber:
    """A phe EncryptedNumber holding our ciphertext as mantissa * 16^exponent.

    Exponent 0 (default) for plain ints; for values encoded with FixedPoint(f), f a multiple
    of 4, use :func:`phe_exponent_for`. Pass ``phe_pk`` when converting many numbers so they
    share one phe key object (phe compares keys by n anyway)."""
    _check_type(ct, Ciphertext, "a cryptoffload Ciphertext")
    if isinstance(exponent, bool) or not isinstance(exponent, int):
        raise PaillierError(f"exponent must be an int, got {type(exponent).__name__}")
    if phe_pk is None:
        phe_pk = to_phe_public_key(ct.public_key)
    elif phe_pk.n != ct.public_key.n:
        raise KeyMismatchError("ciphertext was encrypted under another key than the phe public key")
    return EncryptedNumber(phe_pk, ct.value, exponent)


def phe_exponent_for(fixed_point: FixedPoint) -> int:
    """phe's base-16 exponent for our FixedPoint scale (needs frac_bits % 4 == 0)."""
    if fixed_point.frac_bits % PHE_BASE_LOG2:
        raise PaillierError(
            f"FixedPoint({fixed_point.frac_bits}) has no phe exponent: phe scales by powers of 16, "
            "so frac_bits must be a multiple of 4")
    return -fixed_point.frac_bits // PHE_BASE_LOG2


def from_phe_encrypted_number(enc: EncryptedNumber, public_key: PublicKey, *, frac_bits: int = 0) -> Ciphertext:
    """Our ciphertext of phe's value scaled by 2^frac_bits (an int for frac_bits = 0, else the
    encoding of :class:`FixedPoint` (frac_bits)).

    Refuses a number under another key (:class:`KeyMismatchError`) and one whose exponent needs
    more fractional bits than ``frac_bits`` (:class:`PlaintextRangeError`): converting it would
    need a division. Rescaling up (positive phe exponents, or more frac_bits than the exponent
    needs) multiplies the plaintext homomorphically; like phe's ``decrease_exponent_to`` it
    cannot check for overflow, which shows as a decode error when decrypting."""
    _check_type(enc, EncryptedNumber, "a phe EncryptedNumber")
    _check_type(public_key, PublicKey, "a cryptoffload PublicKey")
    if isinstance(frac_bits, bool) or not isinstance(frac_bits, int) or frac_bits < 0:
        raise PaillierError(f"frac_bits must be a non-negative int, got {frac_bits!r}")
    if enc.public_key.n != public_key.n:
        raise KeyMismatchError(
            f"phe number was encrypted under another key than {public_key.fingerprint.hex()}")
    shift = PHE_BASE_LOG2 * enc.exponent + frac_bits
    if shift < 0:
        raise PlaintextRangeError(
            f"phe number has exponent {enc.exponent} (16^{enc.exponent} = 2^{PHE_BASE_LOG2 * enc.exponent}); "
            f"converting it exactly needs frac_bits >= {-PHE_BASE_LOG2 * enc.exponent}, got {frac_bits}")
    ct = Ciphertext(public_key, public_key.check_ciphertext(enc.ciphertext(be_secure=False)))
    return ct * (1 << shift) if shift else ct


def from_phe_encrypted_numbers(encs: list[EncryptedNumber], public_key: PublicKey, *,
                               frac_bits: int = 0) -> list[Ciphertext]:
    """:func:`from_phe_encrypted_number` for a list."""
    return [from_phe_encrypted_number(e, public_key, frac_bits=frac_bits) for e in encs]


__all__ = [
    "from_phe_encrypted_number",
    "from_phe_encrypted_numbers",
    "from_phe_private_key",
    "from_phe_public_key",
    "phe_exponent_for",
    "to_phe_encrypted_number",
    "to_phe_private_key",
    "to_phe_public_key",
]
