/*
 * Native core of cryptoffload's Paillier: fixed-base exponentiation for DJN encryption,
 * CRT decryption and batch modular exponentiation.
 *
 * Why native: a Paillier encryption at n = 1024 bits is a few dozen 2048-bit modular
 * multiplications once the randomness h_s^a comes from a fixed-base table; in Python each of
 * those costs more in interpreter overhead than in arithmetic. Why GMP's mpn layer and our own
 * Montgomery reduction: mpz_powm cannot reuse a table across calls, and the mpn functions run
 * in time that depends only on operand sizes, which the constant-time mode relies on.
 *
 * Three arithmetic back ends share one table layout idea (k windows of w bits, entry e of window
 * i holds base^(e * 2^(i*w)) in Montgomery form):
 *   - GMP: one encryption at a time, 64-bit limbs, Montgomery radix 2^(64*N).
 *   - ADX (paillier_mont.h): the same table and radix, multiplied by our MULX/ADX Montgomery
 *     kernel and scanned with AVX2; for CPUs with BMI2 + ADX + AVX2 and moduli of 8k words.
 *   - IFMA (optional, COPL_HAVE_MBX): eight encryptions at a time, 52-bit digits in Intel's
 *     multi-buffer layout (digit j of lane l at [j*8 + l]), multiplied with crypto_mb's
 *     ifma_amm52xD_mb8 (almost-Montgomery multiplication, radix 2^(52*D)).
 *
 * Constant time: the table lookup indexes by digits of the secret exponent. In constant-time
 * mode every lookup reads every entry of the window (GMP: masked OR over all entries; IFMA:
 * every 8-entry vector is loaded and the wanted one is picked with a permute and a mask), so
 * the memory trace does not depend on the exponent. Variable-time mode reads one entry.
 *
 * All big numbers cross the boundary as little-endian arrays of 64-bit words of a fixed
 * length, so nothing here branches on the size of a secret value.
 */
#include <gmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef COPL_HAVE_MBX
#include <immintrin.h>
#include <crypto_mb/cpu_features.h>
#include <crypto_mb/exp.h>
/* Exported by libcrypto_mb.a (pinned version); not in its public headers. */
void ifma_amm52x20_mb8(int64u *out, const int64u *a, const int64u *b, const int64u *m, const int64u *k0);
void ifma_amm52x40_mb8(int64u *out, const int64u *a, const int64u *b, const int64u *m, const int64u *k0);
void ifma_amm52x60_mb8(int64u *out, const int64u *a, const int64u *b, const int64u *m, const int64u *k0);
void ifma_amm52x79_mb8(int64u *out, const int64u *a, const int64u *b, const int64u *m, const int64u *k0);
typedef void (*amm_fn)(int64u *, const int64u *, const int64u *, const int64u *, const int64u *);
#endif

/* GMP's assembly Montgomery reduction: exported by libgmp (since 5.0) though documented only
 * in gmp-impl.h; same contract as the loop it replaces (invm = -1/m mod 2^64, returns carry). */
mp_limb_t __gmpn_redc_1(mp_ptr rp, mp_ptr up, mp_srcptr mp, mp_size_t n, mp_limb_t invm);

#include "paillier_mont.h"

#define LIMB_BITS 64
#define DIGIT_BITS 52
#define DIGIT_MASK ((uint64_t)0xFFFFFFFFFFFFFull)

/* ----------------------------------------------------------------------------------------- */
/* helpers                                                                                     */

static uint64_t neg_inverse_mod_2_64(uint64_t m0)
{
    uint64_t inv = m0; /* correct to 3 bits for odd m0; Newton doubles the bits each step */
    for (int i = 0; i < 6; i++)
        inv *= 2 - m0 * inv;
    return (uint64_t)0 - inv;
}

static void mpz_from_words(mpz_t z, const uint64_t *w, int n)
{
    mpz_import(z, (size_t)n, -1, sizeof(uint64_t), 0, 0, w);
}

static void mpz_to_words(uint64_t *w, int n, const mpz_t z)
{
    size_t count = 0;
    memset(w, 0, (size_t)n * sizeof(uint64_t));
    if (mpz_sizeinbase(z, 2) <= (size_t)n * 64)
        mpz_export(w, &count, -1, sizeof(uint64_t), 0, 0, z);
}

/* digit i (w bits) of a little-endian exponent of nwords 64-bit words */
static inline unsigned exp_digit(const uint64_t *e, int nwords, int i, int w)
{
    int bit = i * w;
    int word = bit >> 6, off = bit & 63;
    uint64_t v = 0;
    if (word < nwords) {
        v = e[word] >> off;
        if (off + w > 64 && word + 1 < nwords)
            v |= e[word + 1] << (64 - off);
    }
    return (unsigned)(v & ((1u << w) - 1u));
}

/* Montgomery product r = a*b/R mod m (r < R, not fully reduced), R = 2^(64N).
 * t needs 2N words. Constant time: mpn_sec_mul (schoolbook) and redc_1 depend on sizes only,
 * and the final correction is a masked subtraction. Not mpn_mul_n: above ~20 words it runs
 * Karatsuba, whose sign handling branches on the operands (valgrind's memcheck showed it,
 * tests/crypto/_native/test_constant_time.py). */
static void mont_mul(mp_limb_t *r, const mp_limb_t *a, const mp_limb_t *b, const mp_limb_t *m,
                     int N, mp_limb_t minv, mp_limb_t *t)
{
    mpn_sec_mul(t, a, N, b, N, t + 2 * N); /* needs no scratch (mpn_sec_mul_itch = 0) */
    mp_limb_t cy = __gmpn_redc_1(r, t, m, N, minv);
    mpn_cnd_sub_n(cy, r, r, m, N);
}

/* Montgomery square r = a^2/R mod m (r < R), t: 2N words; constant time as mont_mul:
 * mpn_sec_sqr (schoolbook squaring, no scratch: mpn_sec_sqr_itch = 0) and redc_1. */
static void mont_sqr(mp_limb_t *r, const mp_limb_t *a, const mp_limb_t *m, int N, mp_limb_t minv, mp_limb_t *t)
{
    mpn_sec_sqr(t, a, N, t + 2 * N);
    mp_limb_t cy = __gmpn_redc_1(r, t, m, N, minv);
    mpn_cnd_sub_n(cy, r, r, m, N);
}

/* The same product with mpn_mul_n (Karatsuba from ~20 words: 15-20 % faster at 32-64 words
 * but branching on the operands): only for variable-time tables, whose lookup leaks the
 * exponent's digits through the cache anyway. */
static void mont_mul_vt(mp_limb_t *r, const mp_limb_t *a, const mp_limb_t *b, const mp_limb_t *m,
                        int N, mp_limb_t minv, mp_limb_t *t)
{
    mpn_mul_n(t, a, b, N);
    mp_limb_t cy = __gmpn_redc_1(r, t, m, N, minv);
    mpn_cnd_sub_n(cy, r, r, m, N);
}

/* gm = 1 + msg * n, N words (msg, n: nn words, 2 nn <= N + 1), in time independent of the
 * (secret) message: schoolbook product and a carry chain through every word, where
 * mpn_mul_n would branch inside Karatsuba and mpn_add_1 stops where the carry does. */
static void one_plus_mn(mp_limb_t *gm, const mp_limb_t *msg, const mp_limb_t *n, int nn, int N, mp_limb_t *t)
{
    memset(gm, 0, (size_t)N * sizeof(mp_limb_t));
    mpn_sec_mul(t, msg, nn, n, nn, t + 2 * nn);
    memcpy(gm, t, (size_t)(2 * nn < N ? 2 * nn : N) * sizeof(mp_limb_t));
    unsigned char cy = 1;
    for (int j = 0; j < N; j++) {
        unsigned long long v;
        cy = _addcarry_u64(cy, gm[j], 0, &v);
        gm[j] = v;
    }
}

/* reduce r < R to r < m, with m >= R/4 (top word of m non-zero and >= 2^62 not required:
 * three masked subtractions cover R/m <= 4) */
static void final_reduce(mp_limb_t *r, const mp_limb_t *m, int N, mp_limb_t *tmp)
{
    for (int k = 0; k < 3; k++) {
        mp_limb_t borrow = mpn_sub_n(tmp, r, m, N);
        mpn_cnd_swap(borrow == 0, r, tmp, N);
    }
}

/* A kernel set: the Montgomery product, the Montgomery square and the constant-time scan that
 * one back end runs. Products and squares take scratch t of 2N+4 words and radix R = 2^(64N). */
typedef void (*copl_mul_fn)(uint64_t *, const uint64_t *, const uint64_t *, const uint64_t *, int, uint64_t,
                            uint64_t *);
typedef void (*copl_sqr_fn)(uint64_t *, const uint64_t *, const uint64_t *, int, uint64_t, uint64_t *);
typedef void (*copl_sel_fn)(uint64_t *, const uint64_t *, int, int, uint64_t);
typedef struct {
    copl_mul_fn mul;
    copl_sqr_fn sqr;
    copl_sel_fn sel;
} copl_kernels;

#define COPL_BACKEND_GMP 0
#define COPL_BACKEND_IFMA 1
#define COPL_BACKEND_ADX 2
#define COPL_DEC_AVX2 3 /* decryption only: four ciphertexts a time on AVX2 (paillier_mb4.h), the rest on ADX */

/* cpuid once (the race between threads writes the same value) */
static int cpu_adx = -1, cpu_avx2 = -1;

int copl_have_adx(void)
{
    if (cpu_adx < 0)
        cpu_adx = copl_cpu_adx_avx2();
    return cpu_adx;
}

static int have_avx2(void)
{
    if (cpu_avx2 < 0)
        cpu_avx2 = copl_cpu_avx2();
    return cpu_avx2;
}

/* cpuid leaf 1's EAX (stepping, model, family with their extensions): with the model name it
 * tells CPU generations apart that report the same name (an "AMD EPYC" is Zen 2, 3 or 4),
 * which is what the window cache is keyed by. */
unsigned copl_cpu_signature(void)
{
    unsigned a = 0, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) ? a : 0;
}

/* Version of the kernels' cost shape: a core whose kernels change bumps it, so windows
 * measured on the old kernels are measured again. */
int copl_kernel_version(void) { return 3; }

/* The ADX kernels need a modulus of a multiple of 8 words (the row loop's unrolling). */
int copl_adx_fits(int words) { return words >= 8 && words % 8 == 0; }

static copl_kernels kernels_for(int backend)
{
    copl_kernels k;
    if (backend == COPL_BACKEND_ADX) {
        k.mul = mont_mul_adx;
        k.sqr = mont_sqr_adx;
        k.sel = ct_select_avx2;
    } else {
        k.mul = mont_mul;
        k.sqr = mont_sqr;
        k.sel = have_avx2() ? ct_select_avx2 : ct_select_portable;
    }
    return k;
}

#include "paillier_mb4.h"

/* ----------------------------------------------------------------------------------------- */
/* fixed-base context                                                                          */

typedef struct {
    int N;           /* 64-bit words of the modulus (n^2) */
    int nn;          /* words of n */
    int mod_bits;
    int exp_bits;
    int w, k, E;     /* window bits, windows, entries per window (2^w) */
    int ct;          /* constant-time lookup */
    int backend;     /* 0 = GMP, 1 = IFMA, 2 = ADX */
    mp_limb_t *m, *n, minv;
    mp_limb_t *tab;  /* GMP: [k][E][N] Montgomery form */
    size_t table_bytes;
    copl_mb4 mb;     /* ADX: n^2 in the four-lane AVX2 form (paillier_mb4.h) */
    uint64_t *mbbuf; /* its digits (12 D words), then K2 (4 D); NULL: no four-lane groups */
#ifdef COPL_HAVE_MBX
    int D;           /* 52-bit digits */
    amm_fn amm;
    uint64_t *tab52; /* IFMA: ct ? [k][D][E] : [k][E][D] */
    uint64_t *m_mb8, *k0_mb8;
#endif
} copl_fb;

int copl_have_ifma(void)
{
#ifdef COPL_HAVE_MBX
    int64u f = mbx_get_cpu_features();
    return mbx_is_crypto_mb_applicable(f) ? 1 : 0;
#else
    return 0;
#endif
}

int copl_built_with_ifma(void)
{
#ifdef COPL_HAVE_MBX
    return 1;
#else
    return 0;
#endif
}

#ifdef COPL_HAVE_MBX
static int ifma_digits_for(int mod_bits, amm_fn *fn)
{
    /* almost-Montgomery needs 4m < 2^(52D) */
    if (mod_bits + 2 <= 20 * 52) { *fn = ifma_amm52x20_mb8; return 20; }
    if (mod_bits + 2 <= 40 * 52) { *fn = ifma_amm52x40_mb8; return 40; }
    if (mod_bits + 2 <= 60 * 52) { *fn = ifma_amm52x60_mb8; return 60; }
    if (mod_bits + 2 <= 79 * 52) { *fn = ifma_amm52x79_mb8; return 79; }
    return 0;
}

/* split an integer given as mpz into D 52-bit digits (plain array) */
static void mpz_to_digits(uint64_t *d, int D, const mpz_t z)
{
    mpz_t t;
    mpz_init_set(t, z);
    for (int j = 0; j < D; j++) {
        d[j] = mpz_get_ui(t) & DIGIT_MASK;
        mpz_fdiv_q_2exp(t, t, DIGIT_BITS);
    }
    mpz_clear(t);
}

/* 64-bit words -> 52-bit digits (lane l of an mb8 buffer) */
static void words_to_mb8_lane(uint64_t *mb, int D, int lane, const uint64_t *w, int nw)
{
    for (int j = 0; j < D; j++) {
        int bit = j * DIGIT_BITS;
        int word = bit >> 6, off = bit & 63;
        uint64_t v = 0;
        if (word < nw) {
            v = w[word] >> off;
            if (off + DIGIT_BITS > 64 && word + 1 < nw)
                v |= w[word + 1] << (64 - off);
        }
        mb[j * 8 + lane] = v & DIGIT_MASK;
    }
}

/* lane l of an mb8 buffer (digits possibly unnormalised) -> 64-bit words */
static void mb8_lane_to_words(uint64_t *w, int nw, const uint64_t *mb, int D, int lane)
{
    memset(w, 0, (size_t)nw * sizeof(uint64_t));
    unsigned __int128 carry = 0;
    int bit = 0;
    /* accumulate digit by digit with carry so unnormalised digits are handled */
    uint64_t acc_words[160];
    memset(acc_words, 0, sizeof(acc_words));
    for (int j = 0; j < D; j++) {
        unsigned __int128 v = (unsigned __int128)mb[j * 8 + lane] + carry;
        uint64_t digit = (uint64_t)v & DIGIT_MASK;
        carry = v >> DIGIT_BITS;
        int word = bit >> 6, off = bit & 63;
        acc_words[word] |= digit << off;
        if (off + DIGIT_BITS > 64)
            acc_words[word + 1] |= digit >> (64 - off);
        bit += DIGIT_BITS;
    }
    memcpy(w, acc_words, (size_t)nw * sizeof(uint64_t));
}
#endif

/* 52-bit digits of the IFMA fixed-base kernel for a modulus of mod_bits, or 0 when no
 * crypto_mb kernel is wide enough (the widest, 79 digits, holds moduli up to 4,106 bits, i.e.
 * n^2 of keys up to 2,053 bits) or the core was built without crypto_mb. Python asks this
 * before choosing the IFMA backend, so a 3072-bit key falls back to GMP instead of failing. */
int copl_ifma_fb_digits(int mod_bits)
{
#ifdef COPL_HAVE_MBX
    amm_fn fn;
    return mod_bits > 0 ? ifma_digits_for(mod_bits, &fn) : 0;
#else
    (void)mod_bits;
    return 0;
#endif
}

void copl_fb_free(copl_fb *c)
{
    if (!c)
        return;
    free(c->m);
    free(c->n);
    free(c->tab);
    free(c->mbbuf);
#ifdef COPL_HAVE_MBX
    free(c->tab52);
    free(c->m_mb8);
    free(c->k0_mb8);
#endif
    free(c);
}

size_t copl_fb_table_bytes(const copl_fb *c) { return c->table_bytes; }
int copl_fb_backend(const copl_fb *c) { return c->backend; }

/* pseudo-random filler for synthetic tables (timing only, never cryptographic) */
static uint64_t fill_next(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* The four-lane groups of an ADX table (see fb_encrypt4): n^2 in the AVX2 form and
 * K2 = R4^(k+1) / R^k mod m (R = 2^(64N), the table's radix; R4 = 2^(28D), the lanes'), the
 * constant that turns a product of k table entries, taken with the lanes' radix, into the
 * ciphertext with one more product. Returns 0 when out of memory. */
static int fb_mb4_setup(copl_fb *c)
{
    const int N = c->N, D = mb4_digits(64 * N);
    c->mbbuf = aligned_alloc(32, (size_t)16 * D * sizeof(uint64_t));
    uint64_t *k2w = malloc((size_t)N * sizeof(uint64_t));
    if (!c->mbbuf || !k2w) {
        free(k2w);
        return 0;
    }
    mb4_setup(&c->mb, c->m, N, c->mbbuf);
    mpz_t M, r, t; /* n^2 and the radices are public: GMP's variable-time calls are fine here */
    mpz_inits(M, r, t, NULL);
    mpz_from_words(M, c->m, N);
    mpz_set_ui(r, 1);
    mpz_mul_2exp(r, r, (mp_bitcnt_t)64 * N);
    int ok = mpz_invert(r, r, M);
    mpz_set_ui(t, (unsigned long)c->k);
    mpz_powm(r, r, t, M); /* R^-k */
    mpz_set_ui(t, 1);
    mpz_mul_2exp(t, t, (mp_bitcnt_t)MB4_K * D * (c->k + 1));
    mpz_mul(r, r, t);
    mpz_mod(r, r, M);
    mpz_to_words(k2w, N, r);
    for (int l = 0; l < 4; l++)
        mb4_lane_from_words(c->mbbuf + 12 * D, D, l, k2w, N);
    mpz_clears(M, r, t, NULL);
    free(k2w);
    return ok;
}

/*
 * Build a fixed-base table for base (< m) modulo m = n^2 (N words), exponents of exp_bits
 * bits, windows of w bits. backend: 0 GMP, 1 IFMA, 2 ADX. Returns NULL on bad arguments,
 * a back end this CPU or build lacks, or no memory. synthetic: fill the table with values
 * below m that are no powers of anything (base unused) -- a table of the same size and
 * layout for timing the window choice without the cost of computing powers.
 */
static copl_fb *fb_new(const uint64_t *base, const uint64_t *mod, int N, const uint64_t *n, int nn,
                       int exp_bits, int w, int ct, int backend, int synthetic)
{
    if (N < 1 || nn < 1 || exp_bits < 1 || w < 1 || w > 16 || !(mod[0] & 1) || mod[N - 1] == 0)
        return NULL;
    if (backend < 0 || backend > 2 || (backend == COPL_BACKEND_ADX && (!copl_have_adx() || !copl_adx_fits(N))))
        return NULL;
#ifndef COPL_HAVE_MBX
    if (backend == COPL_BACKEND_IFMA)
        return NULL;
#endif
    copl_fb *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->N = N;
    c->nn = nn;
    c->exp_bits = exp_bits;
    c->w = w;
    c->E = 1 << w;
    c->k = (exp_bits + w - 1) / w;
    c->ct = ct ? 1 : 0;
    c->backend = backend;
    c->m = malloc((size_t)N * sizeof(mp_limb_t));
    c->n = malloc((size_t)nn * sizeof(mp_limb_t));
    if (!c->m || !c->n) {
        copl_fb_free(c);
        return NULL;
    }
    memcpy(c->m, mod, (size_t)N * sizeof(mp_limb_t));
    memcpy(c->n, n, (size_t)nn * sizeof(mp_limb_t));
    c->minv = neg_inverse_mod_2_64(mod[0]);

    mpz_t M, B, cur, x, Rz;
    mpz_inits(M, B, cur, x, Rz, NULL);
    mpz_from_words(M, mod, N);
    c->mod_bits = (int)mpz_sizeinbase(M, 2);
    if (!synthetic) {
        mpz_from_words(B, base, N);
        mpz_mod(B, B, M);
    }

    int ok = 1;
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    if (backend != COPL_BACKEND_IFMA) {
        size_t words = (size_t)c->k * c->E * N;
        c->table_bytes = words * sizeof(mp_limb_t);
        c->tab = aligned_alloc(64, (c->table_bytes + 63) & ~(size_t)63);
        if (!c->tab)
            ok = 0;
        for (size_t j = 0; ok && synthetic && j < words; j++)  /* below m: top word zero */
            c->tab[j] = (j % (size_t)N == (size_t)N - 1) ? 0 : fill_next(&seed);
        for (int i = 0; ok && !synthetic && i < c->k; i++) {
            mpz_set_ui(cur, 1);
            for (int e = 0; e < c->E; e++) {
                /* Montgomery form: cur * 2^(64N) mod M */
                mpz_mul_2exp(x, cur, (mp_bitcnt_t)64 * N);
                mpz_mod(x, x, M);
                mpz_to_words(c->tab + ((size_t)i * c->E + e) * N, N, x);
                mpz_mul(cur, cur, B);
                mpz_mod(cur, cur, M);
            }
            /* next window's base: B^(2^w) */
            for (int s = 0; s < w; s++) {
                mpz_mul(B, B, B);
                mpz_mod(B, B, M);
            }
        }
    }
#ifdef COPL_HAVE_MBX
    else {
        int D = ifma_digits_for(c->mod_bits, &c->amm);
        if (D == 0) {
            ok = 0;
        } else {
            c->D = D;
            size_t words = (size_t)c->k * c->E * D;
            c->table_bytes = words * sizeof(uint64_t);
            c->tab52 = aligned_alloc(64, (c->table_bytes + 63) & ~(size_t)63);
            c->m_mb8 = aligned_alloc(64, (size_t)D * 8 * sizeof(uint64_t));
            c->k0_mb8 = aligned_alloc(64, 8 * sizeof(uint64_t));
            if (!c->tab52 || !c->m_mb8 || !c->k0_mb8)
                ok = 0;
        }
        if (ok) {
            uint64_t *d = malloc((size_t)c->D * sizeof(uint64_t));
            uint64_t k0 = neg_inverse_mod_2_64(mod[0]) & DIGIT_MASK;
            for (int l = 0; l < 8; l++)
                words_to_mb8_lane(c->m_mb8, c->D, l, mod, N), c->k0_mb8[l] = k0;
            if (synthetic) {  /* digits from the top one holding m's top bit on are zero */
                size_t words = (size_t)c->k * c->E * c->D;
                int top = (c->mod_bits - 1) / DIGIT_BITS;
                for (size_t j = 0; j < words; j++) {
                    int digit = (int)(c->ct ? (j / (size_t)c->E) % (size_t)c->D : j % (size_t)c->D);
                    c->tab52[j] = digit >= top ? 0 : fill_next(&seed) & DIGIT_MASK;
                }
            }
            for (int i = 0; ok && !synthetic && i < c->k; i++) {
                mpz_set_ui(cur, 1);
                for (int e = 0; e < c->E; e++) {
                    mpz_mul_2exp(x, cur, (mp_bitcnt_t)DIGIT_BITS * c->D);
                    mpz_mod(x, x, M);
                    mpz_to_digits(d, c->D, x);
                    for (int j = 0; j < c->D; j++) {
                        size_t pos = c->ct ? ((size_t)i * c->D + j) * c->E + e
                                           : ((size_t)i * c->E + e) * c->D + j;
                        c->tab52[pos] = d[j];
                    }
                    mpz_mul(cur, cur, B);
                    mpz_mod(cur, cur, M);
                }
                for (int s = 0; s < w; s++) {
                    mpz_mul(B, B, B);
                    mpz_mod(B, B, M);
                }
            }
            free(d);
        }
    }
#endif
    mpz_clears(M, B, cur, x, Rz, NULL);
    if (ok && backend == COPL_BACKEND_ADX && mb4_digits(64 * N) <= MB4_MAX_DIGITS)
        ok = fb_mb4_setup(c);
    if (!ok) {
        copl_fb_free(c);
        return NULL;
    }
    return c;
}

copl_fb *copl_fb_new(const uint64_t *base, const uint64_t *mod, int N, const uint64_t *n, int nn,
                     int exp_bits, int w, int ct, int backend)
{
    return fb_new(base, mod, N, n, nn, exp_bits, w, ct, backend, 0);
}

/* A table of the size and layout copl_fb_new would build, filled with arbitrary values below
 * mod: what the window calibration times (its encryptions are of nothing). */
copl_fb *copl_fb_new_synthetic(const uint64_t *mod, int N, const uint64_t *n, int nn, int exp_bits, int w, int ct,
                               int backend)
{
    return fb_new(NULL, mod, N, n, nn, exp_bits, w, ct, backend, 1);
}

#define FB_LANES 8

/* GMP and ADX back ends: acc[l] = table product for the exponent of lane l (lanes <=
 * FB_LANES, exponents ew words apart), Montgomery form, < m. Window-major: every lane takes
 * its entry of window i before window i+1 is touched, so the constant-time scans of all
 * lanes but the first read the window from L1/L2, not from wherever the table lives. */
static void fb_pow_mont(const copl_fb *c, const copl_kernels *K, const uint64_t *exps, int ew, int lanes,
                        mp_limb_t *acc, mp_limb_t *sel, mp_limb_t *t)
{
    const int N = c->N, E = c->E;
    for (int i = 0; i < c->k; i++) {
        const mp_limb_t *win = c->tab + (size_t)i * E * N;
        for (int l = 0; l < lanes; l++) {
            const uint64_t *e = exps + (size_t)l * ew;
            mp_limb_t *a = acc + (size_t)l * N;
            unsigned dgt = exp_digit(e, ew, i, c->w);
            const mp_limb_t *entry;
            if (c->ct) {
                K->sel(sel, win, E, N, dgt);
                entry = sel;
            } else {
                entry = win + (size_t)dgt * N;
                if (i + 1 < c->k) { /* the next window's entry is known now: fetch it meanwhile */
                    const char *nx = (const char *)(win + (size_t)E * N + (size_t)exp_digit(e, ew, i + 1, c->w) * N);
                    for (int o = 0; o < N * 8; o += 64)
                        __builtin_prefetch(nx + o);
                }
            }
            if (i == 0)
                memcpy(a, entry, (size_t)N * sizeof(mp_limb_t));
            else
                K->mul(a, a, entry, c->m, N, c->minv, t);
        }
    }
}

/* Four ciphertexts of an ADX table on the four-lane AVX2 kernels: each window's four entries
 * (chosen by the constant-time scan or read directly, as the table says), converted to 28-bit
 * digits and multiplied into the lanes' accumulators. The entries hold powers times R =
 * 2^(64N) and the lanes' products divide by R4 = 2^(28D), so after the k windows an
 * accumulator holds h^a R^k / R4^(k-1); one product with gm K2 / R4 (K2 = R4^(k+1) / R^k, from
 * fb_mb4_setup) gives h^a gm. gm4: the four (1 + m n), N words each; out4: 4 N words.
 * buf: 4 N + 24 D words, 32-byte aligned. */
static void fb_encrypt4(const copl_fb *c, const uint64_t *const lane_exp[4], int ew, const uint64_t *gm4,
                        uint64_t *out4, uint64_t *buf)
{
    const copl_mb4 *C = &c->mb;
    const int N = c->N, D = C->D, E = c->E, V = 4 * D;
    uint64_t *wv = buf, *sel = wv + 4 * N, *acc = sel + V, *x = acc + V, *q = x + V, *y = q + V;
    for (int i = 0; i < c->k; i++) {
        const uint64_t *win = c->tab + (size_t)i * E * N;
        uint64_t dg[4];
        for (int l = 0; l < 4; l++)
            dg[l] = exp_digit(lane_exp[l], ew, i, c->w);
        if (c->ct)
            mb4_select_words(wv, win, E, N, dg);
        else
            mb4_gather_words(wv, win, N, dg);
        mb4_words_to_digits(i == 0 ? acc : sel, wv, N, D);
        if (i > 0) {
            uint64_t *sw = acc;
            mb4_mul(x, acc, sel, C->m, C->minv, D, q);
            acc = x, x = sw;
        }
    }
    for (int l = 0; l < 4; l++)
        mb4_lane_from_words(sel, D, l, gm4 + (size_t)l * N, N);
    mb4_mul(y, sel, c->mbbuf + 12 * D, C->m, C->minv, D, q); /* gm K2 / R4 */
    mb4_mul(x, acc, y, C->m, C->minv, D, q);
    for (int l = 0; l < 4; l++) /* x < 2m */
        mb4_lane_to_reduced(out4 + (size_t)l * N, N, x, D, l, c->m, wv);
}

#ifdef COPL_HAVE_MBX
/* Constant-time lookup of window i for eight lanes: every 8-entry block of every digit row is
 * loaded; a permute picks each lane's entry inside the block and a mask keeps it only in the
 * block that holds it. Table layout [k][D][E]. */
__attribute__((target("avx512f"))) static void ct_gather_mb8(const copl_fb *c, int i, const uint64_t *const lane_exp[8],
                                                           int ew, uint64_t *dst)
{
    const int D = c->D, E = c->E;
    const uint64_t *win = c->tab52 + (size_t)i * D * E;
    uint64_t dg[8];
    for (int l = 0; l < 8; l++)
        dg[l] = exp_digit(lane_exp[l], ew, i, c->w);
    __m512i dv = _mm512_loadu_si512((const void *)dg);
    __m512i lo = _mm512_and_si512(dv, _mm512_set1_epi64(7));
    __m512i hi = _mm512_srli_epi64(dv, 3);
    int blocks = E >= 8 ? E / 8 : 1;
    __mmask8 km[8192];
    for (int x = 0; x < blocks; x++)
        km[x] = _mm512_cmpeq_epi64_mask(hi, _mm512_set1_epi64(x));
    for (int j = 0; j < D; j++) {
        const uint64_t *row = win + (size_t)j * E;
        __m512i v = _mm512_setzero_si512();
        if (E >= 8) {
            for (int x = 0; x < blocks; x++) {
                __m512i blk = _mm512_loadu_si512((const void *)(row + 8 * x));
                v = _mm512_mask_mov_epi64(v, km[x], _mm512_permutexvar_epi64(lo, blk));
            }
        } else {
            uint64_t tmp8[8] = {0};
            memcpy(tmp8, row, (size_t)E * sizeof(uint64_t));
            v = _mm512_permutexvar_epi64(lo, _mm512_loadu_si512((const void *)tmp8));
        }
        _mm512_storeu_si512((void *)(dst + (size_t)j * 8), v);
    }
}
#endif

/* The ADX table's four-lane groups of copl_fb_encrypt: ciphertexts from 0 in groups of four
 * (and a last group of three, one lane repeated: a wasted lane costs less than three single
 * ones), *done set to where the one-at-a-time lanes take over. Returns 0 or -2. */
static int fb_encrypt_groups(const copl_fb *c, int count, const uint64_t *msgs, const uint64_t *exps, int ew,
                             uint64_t *out, int *done)
{
    const int N = c->N, nn = c->nn, D = c->mb.D;
    uint64_t *buf = aligned_alloc(32, (size_t)(14 * N + 24 * D + 8) * sizeof(uint64_t)); /* t: 2N + 8 */
    if (!buf)
        return -2;
    uint64_t *gm4 = buf + 4 * N + 24 * D, *out4 = gm4 + 4 * N, *t = out4 + 4 * N;
    int s0 = 0;
    for (; count - s0 >= 3; s0 += 4) {
        const int lanes = count - s0 < 4 ? count - s0 : 4;
        const uint64_t *lane_exp[4];
        for (int l = 0; l < 4; l++) {
            int s = s0 + (l < lanes ? l : lanes - 1);
            lane_exp[l] = exps + (size_t)s * ew;
            one_plus_mn(gm4 + (size_t)l * N, msgs + (size_t)s * nn, c->n, nn, N, t);
        }
        fb_encrypt4(c, lane_exp, ew, gm4, out4, buf);
        memcpy(out + (size_t)s0 * N, out4, (size_t)lanes * N * sizeof(uint64_t));
    }
    *done = s0;
    free(buf);
    return 0;
}

/*
 * DJN encryption core for count plaintexts:
 *   out_i = h^(a_i) * (1 + m_i * n) mod n^2
 * msgs: count * nn words (each < n), exps: count * ew words, out: count * N words.
 * Returns 0 on success.
 */
int copl_fb_encrypt(const copl_fb *c, int count, const uint64_t *msgs, const uint64_t *exps, int ew,
                    uint64_t *out)
{
    const int N = c->N, nn = c->nn;
    if (2 * nn > N + 1)
        return -1;
    mp_limb_t *acc = malloc(sizeof(mp_limb_t) * (size_t)N * (6 + FB_LANES) + sizeof(mp_limb_t) * 8);
    if (!acc)
        return -2;
    mp_limb_t *sel = acc + (size_t)N * FB_LANES, *t = sel + N, *gm = t + 2 * N + 4, *tmp = gm + N;
    int rc = 0;
    if (c->backend != COPL_BACKEND_IFMA) {
        copl_kernels K = kernels_for(c->backend);
        if (c->backend == COPL_BACKEND_GMP && !c->ct)
            K.mul = mont_mul_vt;
        int s0 = 0;
        if (c->mbbuf != NULL)
            rc = fb_encrypt_groups(c, count, msgs, exps, ew, out, &s0);
        for (; rc == 0 && s0 < count; s0 += FB_LANES) {
            int lanes = count - s0 < FB_LANES ? count - s0 : FB_LANES;
            fb_pow_mont(c, &K, exps + (size_t)s0 * ew, ew, lanes, acc, sel, t);
            for (int l = 0; l < lanes; l++) {
                int s = s0 + l;
                mp_limb_t *a = acc + (size_t)l * N;
                /* gm = 1 + m*n (< n^2 since m < n), plain form; Montgomery product with the
                 * Montgomery-form acc gives h^a * gm in plain form directly */
                one_plus_mn(gm, msgs + (size_t)s * nn, c->n, nn, N, t);
                K.mul(a, a, gm, c->m, N, c->minv, t);
                final_reduce(a, c->m, N, tmp);
                memcpy(out + (size_t)s * N, a, (size_t)N * sizeof(mp_limb_t));
            }
        }
    }
#ifdef COPL_HAVE_MBX
    else {
        const int D = c->D, E = c->E;
        uint64_t *a = aligned_alloc(64, (size_t)D * 8 * sizeof(uint64_t));
        uint64_t *b = aligned_alloc(64, (size_t)D * 8 * sizeof(uint64_t));
        uint64_t *r = aligned_alloc(64, (size_t)D * 8 * sizeof(uint64_t));
        if (!a || !b || !r) {
            free(a), free(b), free(r), free(acc);
            return -2;
        }
        for (int s0 = 0; s0 < count; s0 += 8) {
            int lanes = count - s0 < 8 ? count - s0 : 8;
            const uint64_t *lane_exp[8];
            for (int l = 0; l < 8; l++)
                lane_exp[l] = exps + (size_t)(s0 + (l < lanes ? l : 0)) * ew;
            for (int i = 0; i < c->k; i++) {
                uint64_t *dst = (i == 0) ? a : b;
                if (c->ct) {
                    ct_gather_mb8(c, i, lane_exp, ew, dst);
                } else {
                    const uint64_t *win = c->tab52 + (size_t)i * E * D;
                    if (i + 1 < c->k) { /* prefetch the next window's eight entries */
                        for (int l = 0; l < 8; l++) {
                            const char *nx = (const char *)(win + (size_t)E * D +
                                                            (size_t)exp_digit(lane_exp[l], ew, i + 1, c->w) * D);
                            for (int o = 0; o < D * 8; o += 64)
                                __builtin_prefetch(nx + o);
                        }
                    }
                    for (int l = 0; l < 8; l++) {
                        const uint64_t *src = win + (size_t)exp_digit(lane_exp[l], ew, i, c->w) * D;
                        for (int j = 0; j < D; j++)
                            dst[j * 8 + l] = src[j];
                    }
                }
                if (i > 0) {
                    c->amm((int64u *)r, (const int64u *)a, (const int64u *)b, (const int64u *)c->m_mb8, (const int64u *)c->k0_mb8);
                    uint64_t *sw = a;
                    a = r;
                    r = sw;
                }
            }
            /* multiply by 1 + m*n (plain form) leaves plain h^a (1 + m n) */
            for (int l = 0; l < 8; l++) {
                int s = s0 + (l < lanes ? l : 0);
                one_plus_mn(gm, msgs + (size_t)s * nn, c->n, nn, N, t);
                words_to_mb8_lane(b, D, l, gm, N);
            }
            c->amm((int64u *)r, (const int64u *)a, (const int64u *)b, (const int64u *)c->m_mb8, (const int64u *)c->k0_mb8);
            for (int l = 0; l < lanes; l++) {
                mb8_lane_to_words(acc, N, r, D, l);
                final_reduce(acc, c->m, N, tmp);
                memcpy(out + (size_t)(s0 + l) * N, acc, (size_t)N * sizeof(mp_limb_t));
            }
        }
        free(a), free(b), free(r);
    }
#endif
    free(acc);
    return rc;
}

#include "paillier_exp.h"

/*
 * One Montgomery product or square on a named kernel, for tests against a reference (the
 * kernels are otherwise reached only through the exponentiations): kernel 0/1 GMP product /
 * square, 2/3 MULX/ADX product / square, 4/5 four-lane AVX2 product / square. lanes values of
 * N words each in a, b and out (lanes = 4 for the AVX2 kernels, else 1), each below the odd
 * modulus m of N words; out = a b / R mod m (or a^2 / R), fully reduced. Returns the bits of R
 * (64 N, or 28 D for the AVX2 kernels), -1 on bad arguments, -2 out of memory, -3 a kernel this
 * CPU lacks.
 */
int copl_mont_kernel(int kernel, int N, const uint64_t *a, const uint64_t *b, const uint64_t *m, uint64_t *out)
{
    if (kernel < 0 || kernel > 5 || N < 1 || !(m[0] & 1) || m[N - 1] == 0)
        return -1;
    if (kernel >= 2 && !(copl_have_adx() && copl_adx_fits(N)))
        return -3;
    const uint64_t minv = neg_inverse_mod_2_64(m[0]);
    if (kernel < 4) {
        uint64_t *t = malloc((size_t)(3 * N + 8) * sizeof(uint64_t));
        if (!t)
            return -2;
        if (kernel == 0)
            mont_mul(out, a, b, m, N, minv, t);
        else if (kernel == 1)
            mont_sqr(out, a, m, N, minv, t);
        else if (kernel == 2)
            mont_mul_adx(out, a, b, m, N, minv, t);
        else
            mont_sqr_adx(out, a, m, N, minv, t);
        final_reduce(out, m, N, t);
        free(t);
        return 64 * N;
    }
    const int D = mb4_digits(64 * N);
    if (D > MB4_MAX_DIGITS) /* moduli above 5,598 bits: p^2 of keys up to 5,598 bits fit */
        return -3;
    uint64_t *buf = aligned_alloc(32, (size_t)16 * D * sizeof(uint64_t)), *t = malloc((size_t)(2 * N + 2) * sizeof(uint64_t));
    if (!buf || !t) {
        free(buf), free(t);
        return -2;
    }
    copl_mb4 C;
    uint64_t *A = buf, *B = A + 4 * D, *Q = B + 4 * D, *r = Q + 4 * D, *ctx = aligned_alloc(32, (size_t)12 * D * 8);
    if (!ctx) {
        free(buf), free(t);
        return -2;
    }
    mb4_setup(&C, m, N, ctx);
    for (int l = 0; l < 4; l++) {
        mb4_lane_from_words(A, D, l, a + (size_t)l * N, N);
        mb4_lane_from_words(B, D, l, b + (size_t)l * N, N);
    }
    if (kernel == 4)
        mb4_mul(r, A, B, C.m, C.minv, D, Q);
    else
        mb4_sqr(r, A, C.m, C.minv, D, Q);
    for (int l = 0; l < 4; l++)
        mb4_lane_to_reduced(out + (size_t)l * N, N, r, D, l, m, t);
    free(buf), free(t), free(ctx);
    return MB4_K * D;
}

/* ----------------------------------------------------------------------------------------- */
/* generic batch modular exponentiation (the unit of work a QAT-style engine offloads)         */

/* out_i = base_i ^ exp_i mod mod_i, GMP. secret != 0 uses mpz_powm_sec (odd moduli only). */
int copl_powm_batch(int count, const uint64_t *bases, const uint64_t *exps, int ew, const uint64_t *mods,
                    int N, int secret, uint64_t *out)
{
    mpz_t b, e, m, r;
    mpz_inits(b, e, m, r, NULL);
    int rc = 0;
    for (int s = 0; s < count; s++) {
        mpz_from_words(b, bases + (size_t)s * N, N);
        mpz_from_words(e, exps + (size_t)s * ew, ew);
        mpz_from_words(m, mods + (size_t)s * N, N);
        if (mpz_sgn(m) == 0) {
            rc = -1;
            break;
        }
        if (secret && mpz_odd_p(m) && mpz_sgn(e) > 0)
            mpz_powm_sec(r, b, e, m);
        else
            mpz_powm(r, b, e, m);
        mpz_to_words(out + (size_t)s * N, N, r);
    }
    mpz_clears(b, e, m, r, NULL);
    return rc;
}

/* Eight-lane IFMA modexp through crypto_mb (what Intel's IPCL does): all lanes share one
 * modulus of mod_bits (1024/2048/3072/4096). Returns -3 when not built with IFMA. */
int copl_mbx_powm_batch(int count, const uint64_t *bases, const uint64_t *exps, int exp_bits, const uint64_t *mod,
                        int mod_bits, uint64_t *out)
{
#ifdef COPL_HAVE_MBX
    int N = mod_bits / 64, ew = (exp_bits + 63) / 64;
    int buflen = mbx_exp_BufferSize(mod_bits);
    if (buflen <= 0)
        return -1;
    int8u *buf = aligned_alloc(64, ((size_t)buflen + 63) & ~(size_t)63);
    if (!buf)
        return -2;
    int rc = 0;
    for (int s0 = 0; s0 < count && rc == 0; s0 += 8) {
        int64u *o[8];
        const int64u *bp[8], *ep[8], *mp[8];
        int64u scratch[8][64];
        for (int l = 0; l < 8; l++) {
            int s = s0 + l;
            if (s < count) {
                o[l] = (int64u *)(out + (size_t)s * N);
                bp[l] = (const int64u *)(bases + (size_t)s * N);
                ep[l] = (const int64u *)(exps + (size_t)s * ew);
            } else {
                o[l] = scratch[l];
                bp[l] = (const int64u *)bases;
                ep[l] = (const int64u *)exps;
            }
            mp[l] = (const int64u *)mod;
        }
        mbx_status st = mbx_exp_mb8(o, bp, ep, exp_bits, mp, mod_bits, buf, buflen);
        if (st != MBX_STATUS_OK)
            rc = -4;
    }
    free(buf);
    return rc;
#else
    (void)count, (void)bases, (void)exps, (void)exp_bits, (void)mod, (void)mod_bits, (void)out;
    return -3;
#endif
}

/* ----------------------------------------------------------------------------------------- */
/* CRT decryption                                                                              */

typedef struct {
    int N, nn, ph;          /* words of n^2, n, p^2 (= q^2 words, p and q of equal size) */
    mpz_t p, q, p2, q2, pm1, qm1, hp, hq, pinvq, n;
    int pbits, pw;
    uint64_t *p2w, *q2w, *pm1w, *qm1w;
    uint64_t *mont;         /* R^2 mod p^2, R^2 mod q^2, 1 (ph words each): the ADX path's constants */
    copl_mb4 mbp, mbq;      /* p^2 and q^2 for the four-lane AVX2 kernels (paillier_mb4.h) */
    uint64_t *mb4buf;       /* their digits; NULL where p^2 is too wide for them */
} copl_dec;

void copl_dec_free(copl_dec *d)
{
    if (!d)
        return;
    mpz_clears(d->p, d->q, d->p2, d->q2, d->pm1, d->qm1, d->hp, d->hq, d->pinvq, d->n, NULL);
    free(d->p2w);
    free(d->q2w);
    free(d->pm1w);
    free(d->qm1w);
    free(d->mont);
    free(d->mb4buf);
    free(d);
}

/* r = x^-1 mod prime (Fermat, constant-time exponentiation); e is scratch. Returns 0 when x is
 * not invertible (x = 0 mod prime) or prime is not prime (the product check fails). */
static int fermat_inverse(mpz_t r, const mpz_t x, const mpz_t prime, mpz_t e)
{
    mpz_sub_ui(e, prime, 2);
    mpz_mod(r, x, prime);
    if (mpz_sgn(r) == 0)
        return 0;
    mpz_powm_sec(r, r, e, prime);
    mpz_mul(e, r, x);
    mpz_mod(e, e, prime);
    return mpz_cmp_ui(e, 1) == 0;
}

/* p, q: pw words each; hp = L_p(g^(p-1) mod p^2)^(-1) mod p etc. are computed here (g = n+1). */
copl_dec *copl_dec_new(const uint64_t *p, const uint64_t *q, int pw)
{
    copl_dec *d = calloc(1, sizeof(*d));
    if (!d)
        return NULL;
    mpz_inits(d->p, d->q, d->p2, d->q2, d->pm1, d->qm1, d->hp, d->hq, d->pinvq, d->n, NULL);
    mpz_from_words(d->p, p, pw);
    mpz_from_words(d->q, q, pw);
    mpz_mul(d->n, d->p, d->q);
    mpz_mul(d->p2, d->p, d->p);
    mpz_mul(d->q2, d->q, d->q);
    mpz_sub_ui(d->pm1, d->p, 1);
    mpz_sub_ui(d->qm1, d->q, 1);
    d->pbits = (int)mpz_sizeinbase(d->p, 2);
    d->nn = (int)((mpz_sizeinbase(d->n, 2) + 63) / 64);
    d->N = 2 * d->nn;
    d->ph = 2 * pw;
    /* Key setup touches only secret values (p, q and what derives from them), so it uses no
     * variable-time GMP exponentiation or inversion: mpz_powm runs a sliding window whose
     * memory trace follows the exponent, and mpz_invert's extended gcd branches on the
     * operands. Exponentiations use mpz_powm_sec (odd modulus, positive exponent: both hold).
     * Inverses use Fermat, x^-1 = x^(r-2) mod r, through mpz_powm_sec: r is p or q, both
     * checked prime by the Python side before a key is used (paillier.validation), and
     * Fermat needs no randomness, unlike mpz_invert on blinded operands, and costs one
     * half-size exponentiation per inverse, once per key. A zero x (not invertible) is
     * caught by checking x * x^-1 = 1. */
    mpz_t g, t, e;
    mpz_inits(g, t, e, NULL);
    int ok = mpz_cmp_ui(d->p, 3) >= 0 && mpz_cmp_ui(d->q, 3) >= 0 && mpz_odd_p(d->p) && mpz_odd_p(d->q);
    if (ok) {
        mpz_add_ui(g, d->n, 1);
        /* hp = (L_p(g^(p-1) mod p^2))^-1 mod p */
        mpz_powm_sec(t, g, d->pm1, d->p2);
        mpz_sub_ui(t, t, 1);
        mpz_divexact(t, t, d->p);
        ok = fermat_inverse(d->hp, t, d->p, e);
        mpz_powm_sec(t, g, d->qm1, d->q2);
        mpz_sub_ui(t, t, 1);
        mpz_divexact(t, t, d->q);
        ok = ok && fermat_inverse(d->hq, t, d->q, e);
        mpz_mod(t, d->p, d->q);
        ok = ok && fermat_inverse(d->pinvq, t, d->q, e);
    }
    mpz_clears(g, t, e, NULL);
    d->p2w = calloc((size_t)d->ph, sizeof(uint64_t));
    d->q2w = calloc((size_t)d->ph, sizeof(uint64_t));
    d->pm1w = calloc((size_t)pw, sizeof(uint64_t));
    d->qm1w = calloc((size_t)pw, sizeof(uint64_t));
    d->mont = calloc((size_t)3 * d->ph, sizeof(uint64_t));
    d->pw = pw;
    if (!ok || !d->p2w || !d->q2w || !d->pm1w || !d->qm1w || !d->mont) {
        copl_dec_free(d);
        return NULL;
    }
    mpz_to_words(d->p2w, d->ph, d->p2);
    mpz_to_words(d->q2w, d->ph, d->q2);
    mpz_to_words(d->pm1w, pw, d->pm1);
    mpz_to_words(d->qm1w, pw, d->qm1);
    copl_mont M;
    mont_setup(&M, d->p2w, d->ph, d->mont, d->mont + 2 * d->ph);
    mont_setup(&M, d->q2w, d->ph, d->mont + d->ph, d->mont + 2 * d->ph);
    const int D = mb4_digits(64 * d->ph);
    if (D <= MB4_MAX_DIGITS && (d->mb4buf = aligned_alloc(32, (size_t)24 * D * sizeof(uint64_t))) != NULL) {
        mb4_setup(&d->mbp, d->p2w, d->ph, d->mb4buf);
        mb4_setup(&d->mbq, d->q2w, d->ph, d->mb4buf + 12 * D);
    }
    return d;
}

static void dec_combine(const copl_dec *d, mpz_t m, mpz_t xp, mpz_t xq, mpz_t t);

/* Ciphertexts s .. s+3 (the last one repeated where fewer are left) through the four-lane AVX2
 * exponentiation (paillier_mb4.h), both halves: one instruction stream serves four
 * ciphertexts. buf: 12 ph words. Returns 0 or -2 (out of memory). */
static int dec_four_mb4(const copl_dec *d, int count, int s, const uint64_t *cts, uint64_t *out, uint64_t *buf,
                        mpz_t c, mpz_t xp, mpz_t xq, mpz_t m, mpz_t t)
{
    const int ph = d->ph, lanes = count - s < 4 ? count - s : 4;
    const int w = multiexp_window(1, 1, d->pbits, ph);
    uint64_t *bases = buf, *res = buf + 4 * ph; /* res: the p half's four results, then the q half's */
    for (int half = 0; half < 2; half++) {
        for (int l = 0; l < 4; l++) {
            mpz_from_words(c, cts + (size_t)(s + (l < lanes ? l : lanes - 1)) * d->N, d->N);
            mpz_mod(t, c, half ? d->q2 : d->p2);
            mpz_to_words(bases + (size_t)l * ph, ph, t);
        }
        int rc = mb4_powm(half ? &d->mbq : &d->mbp, bases, half ? d->qm1w : d->pm1w, d->pw, d->pbits, w,
                          res + (size_t)half * 4 * ph);
        if (rc != 0)
            return rc;
    }
    for (int l = 0; l < lanes; l++) {
        mpz_from_words(xp, res + (size_t)l * ph, ph);
        mpz_from_words(xq, res + (size_t)(4 + l) * ph, ph);
        dec_combine(d, m, xp, xq, t);
        mpz_to_words(out + (size_t)(s + l) * d->nn, d->nn, m);
    }
    return 0;
}

/* The ADX and AVX2 paths of copl_dec_batch. With lanes4 (AVX2), groups of four ciphertexts
 * (and of three: a wasted lane still costs less than three single ones) go through the
 * four-lane AVX2 kernels; the rest, one at a time, through the constant-time fixed-window exponentiation of paillier_exp.h on the
 * MULX/ADX kernels. Both halves of every ciphertext run constant time. */
static int dec_batch_adx(const copl_dec *d, int count, const uint64_t *cts, uint64_t *out, int lanes4)
{
    const int ph = d->ph, w = multiexp_window(1, 1, d->pbits, ph);
    const copl_kernels K = kernels_for(COPL_BACKEND_ADX);
    size_t tab_words = ((size_t)1 << w) * ph;
    uint64_t *tab = aligned_alloc(64, tab_words * 8);
    uint64_t *buf = malloc((size_t)(12 * ph + 8) * sizeof(uint64_t));
    if (!tab || !buf) {
        free(tab), free(buf);
        return -2;
    }
    uint64_t *x = buf, *r = x + ph, *scr = r + ph;
    copl_mont Mp, Mq;
    Mp.N = Mq.N = ph;
    Mp.m = d->p2w, Mq.m = d->q2w;
    Mp.minv = neg_inverse_mod_2_64(d->p2w[0]), Mq.minv = neg_inverse_mod_2_64(d->q2w[0]);
    Mp.r2 = d->mont, Mq.r2 = d->mont + ph;
    Mp.one = Mq.one = d->mont + 2 * ph;
    mpz_t c, xp, xq, m, t;
    mpz_inits(c, xp, xq, m, t, NULL);
    int s = 0, rc = 0;
    if (lanes4)
        for (; rc == 0 && count - s >= 3; s += 4)
            rc = dec_four_mb4(d, count, s, cts, out, buf, c, xp, xq, m, t);
    for (; rc == 0 && s < count; s++) {
        mpz_from_words(c, cts + (size_t)s * d->N, d->N);
        for (int half = 0; half < 2; half++) {
            const copl_mont *M = half ? &Mq : &Mp;
            mpz_mod(t, c, half ? d->q2 : d->p2);
            mpz_to_words(x, ph, t);
            pow_table(M, &K, x, w, tab, scr);
            multiexp_tables(M, &K, 1, tab, w, half ? d->qm1w : d->pm1w, d->pw, d->pbits, r, scr);
            mpz_from_words(half ? xq : xp, r, ph);
        }
        dec_combine(d, m, xp, xq, t);
        mpz_to_words(out + (size_t)s * d->nn, d->nn, m);
    }
    mpz_clears(c, xp, xq, m, t, NULL);
    free(tab), free(buf);
    return rc;
}

/* m = CRT(L_p(xp) hp mod p, L_q(xq) hq mod q) */
static void dec_combine(const copl_dec *d, mpz_t m, mpz_t xp, mpz_t xq, mpz_t t)
{
    mpz_sub_ui(xp, xp, 1);
    mpz_divexact(xp, xp, d->p);
    mpz_mul(xp, xp, d->hp);
    mpz_mod(xp, xp, d->p);
    mpz_sub_ui(xq, xq, 1);
    mpz_divexact(xq, xq, d->q);
    mpz_mul(xq, xq, d->hq);
    mpz_mod(xq, xq, d->q);
    mpz_sub(t, xq, xp);
    mpz_mul(t, t, d->pinvq);
    mpz_mod(t, t, d->q);
    mpz_mul(t, t, d->p);
    mpz_add(m, xp, t);
}

/*
 * Decrypt count ciphertexts (N words each) into count plaintexts (nn words each), all
 * exponentiations constant time. backend 1 (IFMA): both half-size exponentiations of eight
 * ciphertexts go through crypto_mb's 8-lane modexp; 2 (ADX): our fixed-window exponentiation
 * on the MULX/ADX kernel (needs copl_have_adx() and p^2 of a multiple of 8 words, else -3);
 * 3 (AVX2): as 2, but four ciphertexts at a time through the four-lane AVX2 kernels of
 * paillier_mb4.h where the batch allows; 0 (GMP): mpz_powm_sec. Returns 0 on success.
 */
int copl_dec_batch(const copl_dec *d, int count, const uint64_t *cts, uint64_t *out, int backend)
{
    if (backend == COPL_BACKEND_ADX || backend == COPL_DEC_AVX2) {
        int lanes4 = backend == COPL_DEC_AVX2;
        if (!copl_have_adx() || !copl_adx_fits(d->ph) || (lanes4 && d->mb4buf == NULL))
            return -3;
        return dec_batch_adx(d, count, cts, out, lanes4);
    }
    int use_ifma = backend == COPL_BACKEND_IFMA;
    mpz_t c, xp, xq, m, t;
    mpz_inits(c, xp, xq, m, t, NULL);
    int rc = 0;
#ifdef COPL_HAVE_MBX
    int ph_bits = d->ph * 64;
    if (use_ifma && (ph_bits == 1024 || ph_bits == 2048 || ph_bits == 3072 || ph_bits == 4096)) {
        int buflen = mbx_exp_BufferSize(ph_bits);
        int8u *buf = aligned_alloc(64, ((size_t)buflen + 63) & ~(size_t)63);
        uint64_t *bp = calloc((size_t)8 * d->ph, sizeof(uint64_t));
        uint64_t *bq = calloc((size_t)8 * d->ph, sizeof(uint64_t));
        uint64_t *rp = calloc((size_t)8 * d->ph, sizeof(uint64_t));
        uint64_t *rq = calloc((size_t)8 * d->ph, sizeof(uint64_t));
        if (!buf || !bp || !bq || !rp || !rq)
            rc = -2;
        for (int s0 = 0; rc == 0 && s0 < count; s0 += 8) {
            int lanes = count - s0 < 8 ? count - s0 : 8;
            int64u *op[8], *oq[8];
            const int64u *ip[8], *iq[8], *ep[8], *eq[8], *mp[8], *mq[8];
            for (int l = 0; l < 8; l++) {
                int s = s0 + (l < lanes ? l : 0);
                mpz_from_words(c, cts + (size_t)s * d->N, d->N);
                mpz_mod(xp, c, d->p2);
                mpz_mod(xq, c, d->q2);
                mpz_to_words(bp + (size_t)l * d->ph, d->ph, xp);
                mpz_to_words(bq + (size_t)l * d->ph, d->ph, xq);
                op[l] = (int64u *)(rp + (size_t)l * d->ph);
                oq[l] = (int64u *)(rq + (size_t)l * d->ph);
                ip[l] = (const int64u *)(bp + (size_t)l * d->ph);
                iq[l] = (const int64u *)(bq + (size_t)l * d->ph);
                ep[l] = (const int64u *)d->pm1w;
                eq[l] = (const int64u *)d->qm1w;
                mp[l] = (const int64u *)d->p2w;
                mq[l] = (const int64u *)d->q2w;
            }
            if (mbx_exp_mb8(op, ip, ep, d->pbits, mp, ph_bits, buf, buflen) != MBX_STATUS_OK ||
                mbx_exp_mb8(oq, iq, eq, d->pbits, mq, ph_bits, buf, buflen) != MBX_STATUS_OK) {
                rc = -4;
                break;
            }
            for (int l = 0; l < lanes; l++) {
                mpz_from_words(xp, rp + (size_t)l * d->ph, d->ph);
                mpz_from_words(xq, rq + (size_t)l * d->ph, d->ph);
                dec_combine(d, m, xp, xq, t);
                mpz_to_words(out + (size_t)(s0 + l) * d->nn, d->nn, m);
            }
        }
        free(buf), free(bp), free(bq), free(rp), free(rq);
        mpz_clears(c, xp, xq, m, t, NULL);
        return rc;
    }
#endif
    (void)use_ifma;
    for (int s = 0; s < count; s++) {
        mpz_from_words(c, cts + (size_t)s * d->N, d->N);
        mpz_mod(xp, c, d->p2);
        mpz_mod(xq, c, d->q2);
        mpz_powm_sec(xp, xp, d->pm1, d->p2);
        mpz_powm_sec(xq, xq, d->qm1, d->q2);
        dec_combine(d, m, xp, xq, t);
        mpz_to_words(out + (size_t)s * d->nn, d->nn, m);
    }
    mpz_clears(c, xp, xq, m, t, NULL);
    return rc;
}

/* ----------------------------------------------------------------------------------------- */
/* aggregation: products of ciphertexts, column by column                                      */

/*
 * out[c] = prod over r of vals[r][c] mod m, for a row-major matrix of rows x cols values of
 * N words each (every value < m). Homomorphic addition of Paillier ciphertexts is this product;
 * a batch of uploaded records is a matrix (record x plaintext index).
 *
 * Montgomery products chain without conversions: k values multiplied with mont_mul give
 * prod * R^-(k-1), fixed at the end by one product with R^(k-1) (in Montgomery form).
 */
int copl_column_products(int rows, int cols, const uint64_t *vals, const uint64_t *mod, int N, uint64_t *out)
{
    if (rows < 1 || cols < 1 || N < 1 || !(mod[0] & 1))
        return -1;
    mp_limb_t minv = neg_inverse_mod_2_64(mod[0]);
    mp_limb_t *acc = malloc(sizeof(mp_limb_t) * (size_t)N * 6);
    if (!acc)
        return -2;
    mp_limb_t *t = acc + N, *corr = t + 2 * N, *tmp = corr + N;
    mpz_t M, Rk, e;
    mpz_inits(M, Rk, e, NULL);
    mpz_from_words(M, mod, N);
    /* corr = R^(rows-1) in Montgomery form = R^rows mod M */
    mpz_set_ui(Rk, 1);
    mpz_mul_2exp(Rk, Rk, (mp_bitcnt_t)64 * N);
    mpz_mod(Rk, Rk, M);
    mpz_set_ui(e, (unsigned long)rows);
    mpz_powm(Rk, Rk, e, M);
    mpz_to_words(corr, N, Rk);
    for (int c = 0; c < cols; c++) {
        memcpy(acc, vals + (size_t)c * N, (size_t)N * sizeof(mp_limb_t));
        for (int r = 1; r < rows; r++)
            mont_mul(acc, acc, vals + ((size_t)r * cols + c) * N, mod, N, minv, t);
        mont_mul(acc, acc, corr, mod, N, minv, t);
        final_reduce(acc, mod, N, tmp);
        memcpy(out + (size_t)c * N, acc, (size_t)N * sizeof(mp_limb_t));
    }
    mpz_clears(M, Rk, e, NULL);
    free(acc);
    return 0;
}
