"""Paillier encryption (g = n + 1) with DJN randomness, CRT decryption and safe serialisation.

What flows in and out: plaintext integers (signed or fixed-point through :mod:`.encoding`) in,
:class:`Ciphertext` objects or integers modulo n^2 out; keys and ciphertexts as JSON key files
and checksummed byte frames. The engines send bare integers (n, h_s, m), never key objects.

One module per concept, from the bottom up:

* :mod:`.errors` -- the package's user errors; :mod:`.gmp` -- gmpy2, imported lazily;
* :mod:`.djn` -- the arithmetic on bare integers, written once: the DJN formula
  (1 + m n) h_s^a mod n^2, the plaintext range check, a random unit;
* :mod:`.validation` -- what makes key material acceptable (sizes, factors, the DJN base);
* :mod:`.public_key` -- :class:`PublicKey`, a plain value: n, h_s and what follows from them;
* :mod:`.framing` -- ciphertexts as bytes; :mod:`.encoding` -- signed and fixed-point
  plaintexts; :mod:`.bounds` -- the bound |m| <= B that travels with ciphertext files, carried
  through arithmetic and checked on decryption;
* :mod:`.ciphertext` -- :class:`Ciphertext`, a value, and homomorphic arithmetic;
* :mod:`.keys` -- :class:`PrivateKey` (decryption) and :func:`generate_keypair`;
* :mod:`.encryptor` -- fixed-base DJN encryption (a table of h_s), the arithmetic backends
  (gmpy2, the C core, AVX512-IFMA) and :func:`resolve_backend`;
* :mod:`.service` -- :data:`ENCRYPTION`, the encryption service: **start here** to encrypt
  (``ENCRYPTION.encrypt_many(pk, values)``); it resolves each call's backend once and keeps
  the tables;
* :mod:`.keyfile` -- key files (0600, per-field checksums); :mod:`.pool` -- offline randomness;
* :mod:`.proof` -- proofs of correct decryption (the n-th root of c (1 + n)^-m), checked
  with the public key alone.

Everything public is re-exported here, so callers write
``from cryptoffload.crypto import paillier as pl``.

Key sizes: 2048-bit n by default (112-bit security); smaller keys are refused unless the caller
asks for a study size explicitly (``insecure_study_size=True``), e.g. the paper's 1024 bits.
See docs/crypto/paillier.md for measured costs and the file formats.
"""

from cryptoffload.crypto.paillier.bounds import DEFAULT_BOUND
from cryptoffload.crypto.paillier.ciphertext import (Ciphertext, CiphertextFrame, ciphertext_from_bytes,
                                                     ciphertexts_from_bytes, ciphertexts_to_bytes, frame_from_bytes,
                                                     summed)
from cryptoffload.crypto.paillier.encoding import FixedPoint, decode_signed, encode_signed
from cryptoffload.crypto.paillier.encryptor import (BACKENDS, DEFAULT_MAX_TABLE_BYTES, DEFAULT_WINDOWS_BY_BITS,
                                                    Encryptor, default_window, resolve_backend,
                                                    table_bytes_estimate)
from cryptoffload.crypto.paillier.errors import (CiphertextFormatError, InvalidKeyError, KeyMismatchError,
                                                 PaillierError, PlaintextRangeError)
from cryptoffload.crypto.paillier.framing import CIPHERTEXT_MAGIC, CIPHERTEXT_VERSION, FrameHeader
from cryptoffload.crypto.paillier.keyfile import (check_new_key_paths, key_from_dict, key_from_json, load_key,
                                                  save_key, save_keypair)
from cryptoffload.crypto.paillier.keys import DEFAULT_KEY_BITS, PrivateKey, generate_keypair
from cryptoffload.crypto.paillier.pool import RandomnessPool
from cryptoffload.crypto.paillier.proof import (decryption_root, decryption_roots, verify_decryption,
                                                verify_decryptions)
from cryptoffload.crypto.paillier.public_key import FORMAT, FORMAT_VERSION, PublicKey, field_checksum, key_fingerprint
from cryptoffload.crypto.paillier.service import ENCRYPTION, EncryptionService
from cryptoffload.crypto.paillier.validation import (MAX_KEY_BITS, MIN_SECURE_KEY_BITS, MIN_STUDY_KEY_BITS,
                                                     check_key_bits)

__all__ = [
    "BACKENDS", "CIPHERTEXT_MAGIC", "CIPHERTEXT_VERSION", "DEFAULT_BOUND", "DEFAULT_KEY_BITS", "DEFAULT_MAX_TABLE_BYTES",
    "DEFAULT_WINDOWS_BY_BITS", "ENCRYPTION", "FORMAT", "FORMAT_VERSION", "MAX_KEY_BITS", "MIN_SECURE_KEY_BITS",
    "MIN_STUDY_KEY_BITS", "Ciphertext", "CiphertextFormatError", "CiphertextFrame", "EncryptionService", "Encryptor", "FixedPoint",
    "FrameHeader", "InvalidKeyError",
    "KeyMismatchError", "PaillierError", "PlaintextRangeError", "PrivateKey", "PublicKey", "RandomnessPool",
    "check_key_bits", "check_new_key_paths", "ciphertext_from_bytes", "ciphertexts_from_bytes", "ciphertexts_to_bytes", "decode_signed",
    "decryption_root", "decryption_roots",
    "default_window", "encode_signed", "field_checksum", "frame_from_bytes", "generate_keypair", "key_fingerprint",
    "key_from_dict", "key_from_json",
    "load_key", "resolve_backend", "save_key", "save_keypair", "summed", "table_bytes_estimate", "verify_decryption",
    "verify_decryptions",
]
