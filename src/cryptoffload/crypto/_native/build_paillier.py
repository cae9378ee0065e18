"""cffi builder for the native Paillier core (run by setuptools through ``cffi_modules``).

Why it looks for Intel's multi-buffer library through package metadata: pip builds the
extension in an isolated environment where ``ipp-crypto-static``/``ipp-crypto-include`` are
build requirements; their files (a static ``libcrypto_mb.a`` and headers) are data files,
not modules, so metadata is the only reliable way to find them. When they are absent, or
``COPL_NO_IFMA=1`` is set, the core is built with GMP only and IFMA is reported unavailable.
"""

from __future__ import annotations

import os
from importlib import metadata
from pathlib import Path

from cffi import FFI

HERE = Path(__file__).resolve().parent

CDEF = """
typedef struct copl_fb copl_fb;
typedef struct copl_dec copl_dec;
int copl_have_ifma(void);
int copl_have_adx(void);
int copl_adx_fits(int words);
unsigned copl_cpu_signature(void);
int copl_kernel_version(void);
int copl_built_with_ifma(void);
int copl_ifma_fb_digits(int mod_bits);
copl_fb *copl_fb_new(const uint64_t *base, const uint64_t *mod, int N, const uint64_t *n, int nn,
                     int exp_bits, int w, int ct, int backend);
copl_fb *copl_fb_new_synthetic(const uint64_t *mod, int N, const uint64_t *n, int nn, int exp_bits, int w, int ct,
                               int backend);
void copl_fb_free(copl_fb *c);
size_t copl_fb_table_bytes(const copl_fb *c);
int copl_fb_backend(const copl_fb *c);
int copl_fb_encrypt(const copl_fb *c, int count, const uint64_t *msgs, const uint64_t *exps, int ew,
                    uint64_t *out);
int copl_powm_batch(int count, const uint64_t *bases, const uint64_t *exps, int ew, const uint64_t *mods,
                    int N, int secret, uint64_t *out);
int copl_mbx_powm_batch(int count, const uint64_t *bases, const uint64_t *exps, int exp_bits,
                        const uint64_t *mod, int mod_bits, uint64_t *out);
copl_dec *copl_dec_new(const uint64_t *p, const uint64_t *q, int pw);
void copl_dec_free(copl_dec *d);
int copl_dec_batch(const copl_dec *d, int count, const uint64_t *cts, uint64_t *out, int backend);
int copl_mont_kernel(int kernel, int N, const uint64_t *a, const uint64_t *b, const uint64_t *m, uint64_t *out);
int copl_multiexp(int count, int k, const uint64_t *bases, const uint64_t *exps, int ew, int exp_bits,
                  const uint64_t *mod, int N, int backend, uint64_t *out);
int copl_column_products(int rows, int cols, const uint64_t *vals, const uint64_t *mod, int N, uint64_t *out);
"""


def _find_crypto_mb() -> tuple[Path, Path] | None:
    """(include dir, libcrypto_mb.a) from the installed ipp-crypto wheels, or None."""
    if os.environ.get("COPL_NO_IFMA") == "1":
        return None
    try:
        inc_files = metadata.distribution("ipp-crypto-include").files or []
        lib_files = metadata.distribution("ipp-crypto-static").files or []
    except metadata.PackageNotFoundError:
        return None
    header = next((f for f in inc_files if str(f).endswith("crypto_mb/exp.h")), None)
    lib = next((f for f in lib_files if str(f).endswith("libcrypto_mb.a")), None)
    if header is None or lib is None:
        return None
    header_path = Path(str(metadata.distribution("ipp-crypto-include").locate_file(header))).resolve()
    lib_path = Path(str(metadata.distribution("ipp-crypto-static").locate_file(lib))).resolve()
    if not header_path.exists() or not lib_path.exists():
        return None
    return header_path.parent.parent, lib_path


def make_builder() -> FFI:
    ffibuilder = FFI()
    ffibuilder.cdef(CDEF)
    # struct names are opaque to Python; the C file defines them as typedefs of anonymous
    # structs, so give them tags the cdef can name.
    source = (HERE / "paillier_core.c").read_text()
    source = source.replace("typedef struct {\n    int N;           /* 64-bit words of the modulus",
                            "typedef struct copl_fb {\n    int N;           /* 64-bit words of the modulus")
    source = source.replace("typedef struct {\n    int N, nn, ph;", "typedef struct copl_dec {\n    int N, nn, ph;")
    extra_objects: list[str] = []
    include_dirs: list[str] = []
    macros: list[tuple[str, str | None]] = []
    libraries = ["gmp"]
    found = _find_crypto_mb()
    if found is not None:
        inc, lib = found
        include_dirs.append(str(inc))
        extra_objects.append(str(lib))
        macros.append(("COPL_HAVE_MBX", "1"))
        libraries.append("crypto")  # crypto_mb's OpenSSL-flavoured entry points use BN_*
    ffibuilder.set_source(
        "cryptoffload.crypto._native._paillier",
        source,
        libraries=libraries,
        extra_objects=extra_objects,
        define_macros=macros,
        # paillier_core.c includes its kernels (paillier_mont.h, paillier_exp.h, paillier_mb4.h) from here
        include_dirs=include_dirs + [str(HERE)],
        extra_compile_args=["-O3", "-std=gnu11"],
    )
    return ffibuilder


ffibuilder = make_builder()

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
