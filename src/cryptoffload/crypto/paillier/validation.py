"""Checks that key material is a real Paillier key of an acceptable size.

Why each check: a loaded key is outside input. A "private key" with p = 1, q = n, or with
composite factors, makes decryption silently wrong (CRT and Fermat inverses assume primes); a
public key with n = 15, or a prime n, or n with a small factor, can be factored by anyone, so
whatever is encrypted under it is readable by whoever made it; a huge n makes every operation
hang. Primality is tested with GMP's ``mpz_probab_prime_p``: from GMP 6.2 on it runs BPSW and
then ``reps - 24`` Miller-Rabin rounds, so :data:`PRIME_TEST_REPS` = 32 gives BPSW plus eight
rounds (no BPSW pseudoprime is known; FIPS 186-5 accepts Miller-Rabin with a Lucas test).
"""

from __future__ import annotations

import functools

from cryptoffload.crypto.paillier.gmp import gmpy2

from cryptoffload.crypto.paillier.errors import InvalidKeyError
from cryptoffload.errors import ConfigError

MIN_SECURE_KEY_BITS = 2048  # 112-bit security (NIST SP 800-57 for factoring-based keys)
MIN_STUDY_KEY_BITS = 512
MAX_KEY_BITS = 8192  # keygen at 8192 bits takes minutes on one core; beyond, it would hang
PRIME_TEST_REPS = 32
SMALL_FACTOR_BOUND = 1 << 16


def check_key_bits(bits: int, insecure_study_size: bool) -> int:
    """A key size to generate: an even number of bits from 2048 (512 with
    ``insecure_study_size``) to :data:`MAX_KEY_BITS`."""
    if isinstance(bits, bool) or not isinstance(bits, int) or bits % 2:
        raise ConfigError(f"key size must be an even number of bits, got {bits!r}")
    check_modulus_bits(bits, insecure_study_size)
    return bits


def check_modulus_bits(bits: int, insecure_study_size: bool, what: str = "a") -> None:
    if bits > MAX_KEY_BITS:
        raise ConfigError(f"{what} {bits}-bit Paillier key is above the {MAX_KEY_BITS}-bit limit "
                          "(such keys would take hours per operation); use 2048 to 4096 bits")
    if bits < MIN_STUDY_KEY_BITS:
        raise ConfigError(f"{what} {bits}-bit Paillier key is below the {MIN_STUDY_KEY_BITS}-bit floor "
                          "(anyone could factor it); use at least 2048 bits")
    if bits < MIN_SECURE_KEY_BITS and not insecure_study_size:
        raise ConfigError(
            f"{what} {bits}-bit Paillier key is below the 112-bit security level (needs >= {MIN_SECURE_KEY_BITS}); "
            "pass --insecure-study-size to use it for reproducing a paper")


@functools.lru_cache(maxsize=1)
def _small_primes_product() -> int:
    return int(gmpy2.primorial(SMALL_FACTOR_BOUND))


def check_modulus(n: int) -> None:
    """n could be a product of two large primes: odd, not prime, no factor below 2^16, not a
    perfect power. (Without the factors nothing more can be checked.)"""
    if n < 3 or n % 2 == 0:
        raise InvalidKeyError("a Paillier modulus must be an odd integer > 2")
    if gmpy2.gcd(n, _small_primes_product()) != 1:
        raise InvalidKeyError(f"the key's modulus has a factor below {SMALL_FACTOR_BOUND} (anyone can factor it)")
    if gmpy2.is_power(n):
        raise InvalidKeyError("the key's modulus is a perfect power (anyone can factor it)")
    # a prime n always passes Fermat's test; a product of two large primes essentially never does
    if gmpy2.powmod(2, n - 1, n) == 1:
        raise InvalidKeyError("the key's modulus is prime, not a product of two primes (anyone can decrypt)")


def check_factors(n: int, p: int, q: int) -> None:
    """p and q are distinct primes of equal size with p q = n."""
    if p * q != n:
        raise InvalidKeyError("private key factors do not multiply to the public modulus (p q != n)")
    if p == q or p < 3 or q < 3:
        raise InvalidKeyError("private key factors must be two distinct primes > 2")
    if p.bit_length() != q.bit_length():
        raise InvalidKeyError(f"private key factors differ in size ({p.bit_length()} and {q.bit_length()} bits); "
                              "Paillier keys here use two primes of equal size")
    for name, f in (("p", p), ("q", q)):
        if not gmpy2.is_prime(f, PRIME_TEST_REPS):
            raise InvalidKeyError(f"private key factor {name} is not prime")


SMALL_ORDER_BOUND = 1 << 12  # h_s mod n whose order divides lcm(1..4096) is refused (18 ms at 2048 bits)


@functools.lru_cache(maxsize=1)
def _small_orders_exponent() -> int:
    e = gmpy2.mpz(1)
    for k in range(2, SMALL_ORDER_BOUND + 1):
        e = gmpy2.lcm(e, k)
    return int(e)


_REGENERATE = "generate a new key pair with `cryptoffload paillier keygen`"


def check_djn_base_public(n: int, hs: int) -> None:
    """What anyone can check of the DJN base from n alone: 1 < h_s < n^2, a unit, not +-1
    modulo n (h_s = 1, n^2 - 1, n + 1, any +-(1 + k n): their powers take two values, so
    anyone strips them off a ciphertext and reads m), no small order modulo n (h_s^a would take
    few values: an order whose prime powers are all <= :data:`SMALL_ORDER_BOUND` is refused),
    and the Jacobi symbol the generator's (-x^2)^n always has, that of -1 modulo n. (Whether
    h_s is an n-th residue needs the factors: :func:`check_djn_base`.)"""
    if not 1 < hs < n * n:
        raise InvalidKeyError(f"the key's DJN base h_s is out of range (it must lie in 2 .. n^2 - 1); {_REGENERATE}")
    if gmpy2.gcd(hs, n) != 1:
        raise InvalidKeyError(f"the key's DJN base h_s shares a factor with n (anyone can factor n); {_REGENERATE}")
    h = hs % n
    if h in (1, n - 1):
        raise InvalidKeyError("the key's DJN base h_s is +-1 modulo n: its powers take two values, so anyone "
                              f"could decrypt what is encrypted under it; {_REGENERATE}")
    if gmpy2.powmod(h, _small_orders_exponent(), n) == 1:
        raise InvalidKeyError(f"the key's DJN base h_s has a small order modulo n (its powers take few values, so "
                              f"anyone could decrypt what is encrypted under it); {_REGENERATE}")
    if gmpy2.jacobi(h, n) != gmpy2.jacobi(n - 1, n):
        raise InvalidKeyError("the key's DJN base h_s is not of the form (-x^2)^n mod n^2 (its Jacobi symbol "
                              f"modulo n is wrong): a garbled key; {_REGENERATE}")


def check_djn_base(p: int, q: int, hs: int) -> None:
    """h_s is exactly of the form the generator makes, (-x^2)^n mod n^2 for a unit x:

    * an n-th residue modulo n^2 (h_s = y^n), which DJN encryption needs to decrypt
      correctly: then h_s^(p-1) = 1 mod p^2 and h_s^(q-1) = 1 mod q^2 (the group mod p^2 has
      order p(p-1), which divides n(p-1));
    * modulo each prime f (the other one g), -h_s is a square: h_s = -x^(2n) = -(x^g)^2 mod f
      (x^f = x mod f). Conversely, an n-th residue is fixed by its residues mod p and q, and
      as q does not divide p - 1 (equal-sized primes), x -> x^(2q) reaches every square mod p:
      the two checks together hold exactly for the generator's outputs.

    Constant-time exponentiation throughout: p and q are secret."""
    for f in (p, q):
        if gmpy2.powmod_sec(hs, f - 1, f * f) != 1:
            raise InvalidKeyError("the key's DJN base h_s is not an n-th residue: encryptions under it would not "
                                  f"decrypt (a garbled key); {_REGENERATE}")
        if gmpy2.powmod_sec((-hs) % f, (f - 1) // 2, f) != 1:
            raise InvalidKeyError("the key's DJN base h_s is not of the form (-x^2)^n mod n^2 that key generation "
                                  f"makes (a garbled or forged key); {_REGENERATE}")
