/*
 * Four-lane AVX2 Montgomery arithmetic: the batch CRT decryption's exponentiation on CPUs
 * without AVX512-IFMA. Included by paillier_core.c after its helpers and paillier_exp.h.
 *
 * Why: decrypting a batch raises many ciphertexts to the same secret exponent (p-1 modulo
 * p^2, q-1 modulo q^2). Four of them go in the four 64-bit lanes of a ymm register and share
 * every instruction: one VPMULUDQ multiplies four pairs of 28-bit digits, and this CPU class
 * issues two a cycle where MULX issues one 64x64 product. Measured on a Zen 4 (the machine
 * this was written on): a 1024-bit Montgomery product costs 172 ns a lane against 265 ns for
 * the MULX/ADX kernel of paillier_mont.h, a square less again. The method is what OpenSSL's
 * rsaz-avx2 and Intel's crypto_mb (on IFMA) do, written here in C intrinsics for the batch.
 *
 * Layout: a number of D digits of 28 bits; digit j of lane l at word [4j + l] (one ymm per
 * digit). Radix R = 2^(28 D) with 28 D >= bits + 2, so almost-Montgomery products of values
 * below 2m stay below 2m (R > 4m); D = 37 for 1,024-bit moduli, 74 for 2,048. Products are
 * column-wise (product scanning), two columns a step (one alone where D is odd): each
 * column's sums stay in registers and a digit of the product is written once, so memory
 * traffic is one load per multiply; the inner loops are unrolled by four (their counter and
 * pointer updates were a quarter of the instructions: 6-13 % less time measured). Column
 * sums are lazy: a lane
 * accumulates at most D products of two 28-bit digits (< 2^56) and a carry, below 2^64 for
 * D <= MB4_MAX_DIGITS.
 *
 * Constant time: no branch or address depends on a digit's value; the table scan reads every
 * entry and keeps the wanted one with a mask from a vector compare (all lanes share the
 * exponent, so they share the digit). tests/crypto/_native/ct_harness.c runs it under memcheck.
 */
#ifndef COPL_PAILLIER_MB4_H
#define COPL_PAILLIER_MB4_H

#define MB4_K 28
#define MB4_MASK ((1ull << MB4_K) - 1)
#define MB4_MAX_DIGITS 200 /* D products < 2^56 and a carry < 2^37 fit a 64-bit lane */

#define MB4_MUL _mm256_mul_epu32
#define MB4_ADD _mm256_add_epi64
#define MB4_AND _mm256_and_si256
#define MB4_SRL(x) _mm256_srli_epi64((x), MB4_K)

/* digits of an almost-Montgomery radix for moduli of `bits` bits: 28 D >= bits + 2 (and at
 * least 4, what the column pairs assume) */
static int mb4_digits(int bits)
{
    int D = (bits + 2 + MB4_K - 1) / MB4_K;
    return D < 4 ? 4 : D;
}

/* lane `lane` of a 4-lane number of D digits <- nw little-endian words */
static void mb4_lane_from_words(uint64_t *v, int D, int lane, const uint64_t *w, int nw)
{
    for (int j = 0; j < D; j++) {
        int bit = j * MB4_K, word = bit >> 6, off = bit & 63;
        uint64_t x = 0;
        if (word < nw) {
            x = w[word] >> off;
            if (off + MB4_K > 64 && word + 1 < nw)
                x |= w[word + 1] << (64 - off);
        }
        v[4 * j + lane] = x & MB4_MASK;
    }
}

/* nw words <- lane `lane` of a 4-lane number (digits below 2^28; bits past nw words dropped:
 * see mb4_lane_to_reduced for values that may reach them) */
static void mb4_lane_to_words(uint64_t *w, int nw, const uint64_t *v, int D, int lane)
{
    memset(w, 0, (size_t)nw * sizeof(uint64_t));
    for (int j = 0; j < D; j++) {
        int bit = j * MB4_K, word = bit >> 6, off = bit & 63;
        uint64_t x = v[4 * j + lane];
        if (word < nw)
            w[word] |= x << off;
        if (off + MB4_K > 64 && word + 1 < nw)
            w[word + 1] |= x >> (64 - off);
    }
}

/* nw words <- lane `lane` of a 4-lane value below 2m, reduced below m (m: nw words): an
 * almost-Montgomery result may reach 2^(64 nw) when m is close to it, so it is taken with one
 * word more and m is subtracted under a mask. tmp: 2 nw + 2 words. */
static void mb4_lane_to_reduced(uint64_t *w, int nw, const uint64_t *v, int D, int lane, const uint64_t *m,
                                uint64_t *tmp)
{
    uint64_t *x = tmp, *d = tmp + nw + 1;
    mb4_lane_to_words(x, nw + 1, v, D, lane);
    mp_limb_t borrow = mpn_sub_n(d, x, m, nw);
    mpn_cnd_swap((x[nw] | (borrow ^ 1)) & 1, x, d, nw); /* x >= m: keep x - m */
    memcpy(w, x, (size_t)nw * sizeof(uint64_t));
}

/* a column pair's end: digits c and c+1 of the low half from the sums (A: the a*b or a^2
 * part, B: the q*m part) -- q_c, q_{c+1} chosen so both digits become zero -- and the carry */
__attribute__((target("avx2"))) static inline __m256i mb4_low_pair(__m256i A0, __m256i B0, __m256i A1, __m256i B1,
                                                                   const __m256i *m, __m256i minv, __m256i *qc)
{
    const __m256i mask = _mm256_set1_epi64x((long long)MB4_MASK);
    __m256i s = MB4_ADD(MB4_AND(A0, mask), MB4_AND(B0, mask));
    __m256i q = MB4_AND(MB4_MUL(s, minv), mask);
    qc[0] = q;
    s = MB4_ADD(s, MB4_MUL(q, m[0]));
    A1 = MB4_ADD(A1, MB4_ADD(MB4_ADD(MB4_SRL(A0), MB4_SRL(B0)), MB4_SRL(s)));
    B1 = MB4_ADD(B1, MB4_MUL(q, m[1]));
    s = MB4_ADD(MB4_AND(A1, mask), MB4_AND(B1, mask));
    q = MB4_AND(MB4_MUL(s, minv), mask);
    qc[1] = q;
    s = MB4_ADD(s, MB4_MUL(q, m[0]));
    return MB4_ADD(MB4_ADD(MB4_SRL(A1), MB4_SRL(B1)), MB4_SRL(s));
}

/* a column pair's end in the high half: output digits r[0], r[1] and the carry */
__attribute__((target("avx2"))) static inline __m256i mb4_high_pair(__m256i A0, __m256i B0, __m256i A1, __m256i B1,
                                                                    __m256i *r)
{
    const __m256i mask = _mm256_set1_epi64x((long long)MB4_MASK);
    __m256i s = MB4_ADD(MB4_AND(A0, mask), MB4_AND(B0, mask));
    r[0] = MB4_AND(s, mask);
    A1 = MB4_ADD(A1, MB4_ADD(MB4_ADD(MB4_SRL(A0), MB4_SRL(B0)), MB4_SRL(s)));
    s = MB4_ADD(MB4_AND(A1, mask), MB4_AND(B1, mask));
    r[1] = MB4_AND(s, mask);
    return MB4_ADD(MB4_ADD(MB4_SRL(A1), MB4_SRL(B1)), MB4_SRL(s));
}

/* a single column's end (where D is odd): low half, q_c chosen so the digit becomes zero;
 * high half, the output digit r[0]; both return the carry */
__attribute__((target("avx2"))) static inline __m256i mb4_low_single(__m256i A0, __m256i B0, const __m256i *m,
                                                                     __m256i minv, __m256i *qc)
{
    const __m256i mask = _mm256_set1_epi64x((long long)MB4_MASK);
    __m256i s = MB4_ADD(MB4_AND(A0, mask), MB4_AND(B0, mask));
    __m256i q = MB4_AND(MB4_MUL(s, minv), mask);
    qc[0] = q;
    s = MB4_ADD(s, MB4_MUL(q, m[0]));
    return MB4_ADD(MB4_ADD(MB4_SRL(A0), MB4_SRL(B0)), MB4_SRL(s));
}

__attribute__((target("avx2"))) static inline __m256i mb4_high_single(__m256i A0, __m256i B0, __m256i *r)
{
    const __m256i mask = _mm256_set1_epi64x((long long)MB4_MASK);
    __m256i s = MB4_ADD(MB4_AND(A0, mask), MB4_AND(B0, mask));
    r[0] = MB4_AND(s, mask);
    return MB4_ADD(MB4_ADD(MB4_SRL(A0), MB4_SRL(B0)), MB4_SRL(s));
}

/* the q*m sum of one column c: terms q_i m_{c-i} for i from lo to min(c, D) - 1 */
#define MB4_QM_ONE(c, lo, hi)                                      \
    do {                                                           \
        _Pragma("GCC unroll 4") for (int i = (lo); i < (hi); i++)  \
            B0 = MB4_ADD(B0, MB4_MUL(q[i], m[(c) - i]));           \
    } while (0)

/* the q*m sums of columns c and c+1 of the low half (terms q_i m_{c-i}, q_i m_{c+1-i}, i < c):
 * the register keeps m_{c+1-i}, which is the next step's m_{c-i}: one load per multiply */
#define MB4_QM_LOW(c)                                              \
    do {                                                           \
        __m256i mn = m[(c) + 1];                                   \
        _Pragma("GCC unroll 4") for (int i = 0; i < (c); i++) {                            \
            __m256i qi = q[i], mc = m[(c) - i];                    \
            B0 = MB4_ADD(B0, MB4_MUL(qi, mc));                     \
            B1 = MB4_ADD(B1, MB4_MUL(qi, mn));                     \
            mn = mc;                                               \
        }                                                          \
    } while (0)

/* the same in the high half (columns c, c+1 >= D: i from c-D+1, resp. c-D+2, to D-1) */
#define MB4_QM_HIGH(c)                                             \
    do {                                                           \
        __m256i mn = m[D - 1];                                     \
        B0 = MB4_MUL(q[(c) - D + 1], m[D - 1]);                    \
        _Pragma("GCC unroll 4") for (int i = (c) - D + 2; i < D; i++) {                    \
            __m256i qi = q[i], mc = m[(c) - i];                    \
            B0 = MB4_ADD(B0, MB4_MUL(qi, mc));                     \
            B1 = MB4_ADD(B1, MB4_MUL(qi, mn));                     \
            mn = mc;                                               \
        }                                                          \
    } while (0)

/* r = a b / R mod m, four lanes, r < 2m when a, b < 2m; D digits, q: D vectors of scratch;
 * r may not alias a or b. minv = -1/m mod 2^28. */
__attribute__((target("avx2"))) static void mb4_mul(uint64_t *rw, const uint64_t *aw, const uint64_t *bw,
                                                    const uint64_t *mw, uint64_t minv64, int D, uint64_t *qw)
{
    __m256i *r = (__m256i *)rw, *q = (__m256i *)qw;
    const __m256i *a = (const __m256i *)aw, *b = (const __m256i *)bw, *m = (const __m256i *)mw;
    const __m256i z = _mm256_setzero_si256(), minv = _mm256_set1_epi64x((long long)minv64);
    __m256i carry = z;
    int c = 0;
    for (; c + 1 < D; c += 2) {
        __m256i A0 = carry, A1 = z, B0 = z, B1 = z, bn = b[c + 1];
        _Pragma("GCC unroll 4") for (int i = 0; i <= c; i++) { /* a_i b_{c-i} and a_i b_{c+1-i} */
            __m256i ai = a[i], bc = b[c - i];
            A0 = MB4_ADD(A0, MB4_MUL(ai, bc));
            A1 = MB4_ADD(A1, MB4_MUL(ai, bn));
            bn = bc;
        }
        A1 = MB4_ADD(A1, MB4_MUL(a[c + 1], bn));
        MB4_QM_LOW(c);
        carry = mb4_low_pair(A0, B0, A1, B1, m, minv, q + c);
    }
    if (D & 1) { /* odd D: the low half's last column and the high half's first alone */
        __m256i A0 = carry, B0 = z;
        for (int i = 0; i <= c; i++)
            A0 = MB4_ADD(A0, MB4_MUL(a[i], b[c - i]));
        MB4_QM_ONE(c, 0, c);
        carry = mb4_low_single(A0, B0, m, minv, q + c);
        c = D, A0 = carry, B0 = z;
        for (int i = 1; i < D; i++)
            A0 = MB4_ADD(A0, MB4_MUL(a[i], b[c - i]));
        MB4_QM_ONE(c, 1, D);
        carry = mb4_high_single(A0, B0, r);
        c = D + 1;
    }
    for (; c < 2 * D - 2; c += 2) {
        __m256i A0 = MB4_ADD(carry, MB4_MUL(a[c - D + 1], b[D - 1])), A1 = z, B0, B1 = z, bn = b[D - 1];
        _Pragma("GCC unroll 4") for (int i = c - D + 2; i < D; i++) {
            __m256i ai = a[i], bc = b[c - i];
            A0 = MB4_ADD(A0, MB4_MUL(ai, bc));
            A1 = MB4_ADD(A1, MB4_MUL(ai, bn));
            bn = bc;
        }
        MB4_QM_HIGH(c);
        carry = mb4_high_pair(A0, B0, A1, B1, r + (c - D));
    }
    __m256i A0 = MB4_ADD(carry, MB4_MUL(a[D - 1], b[D - 1])), B0 = MB4_MUL(q[D - 1], m[D - 1]);
    const __m256i mask = _mm256_set1_epi64x((long long)MB4_MASK);
    __m256i s = MB4_ADD(MB4_AND(A0, mask), MB4_AND(B0, mask));
    r[D - 2] = MB4_AND(s, mask);
    r[D - 1] = MB4_ADD(MB4_ADD(MB4_SRL(A0), MB4_SRL(B0)), MB4_SRL(s)); /* < 2^28: r < 2m < R/2 */
}

/* r = a^2 / R mod m, four lanes (as mb4_mul with b = a): each cross product a_i a_j (i < j) of
 * a column once, the sum doubled, the diagonal a_{c/2}^2 added: a quarter fewer multiplies. */
__attribute__((target("avx2"))) static void mb4_sqr(uint64_t *rw, const uint64_t *aw, const uint64_t *mw,
                                                    uint64_t minv64, int D, uint64_t *qw)
{
    __m256i *r = (__m256i *)rw, *q = (__m256i *)qw;
    const __m256i *a = (const __m256i *)aw, *m = (const __m256i *)mw;
    const __m256i z = _mm256_setzero_si256(), minv = _mm256_set1_epi64x((long long)minv64);
    __m256i carry = z;
    int c = 0;
    for (; c + 1 < D; c += 2) { /* cross terms i < c-i and i < c+1-i: i < c/2, and i = c/2 for c+1 */
        __m256i A0 = z, A1 = z, B0 = z, B1 = z, an = a[c + 1];
        _Pragma("GCC unroll 4") for (int i = 0; i < c / 2; i++) {
            __m256i ai = a[i], ac = a[c - i];
            A0 = MB4_ADD(A0, MB4_MUL(ai, ac));
            A1 = MB4_ADD(A1, MB4_MUL(ai, an));
            an = ac;
        }
        __m256i h = a[c / 2];
        A1 = MB4_ADD(A1, MB4_MUL(h, an));
        A0 = MB4_ADD(MB4_ADD(carry, MB4_ADD(A0, A0)), MB4_MUL(h, h));
        A1 = MB4_ADD(A1, A1);
        MB4_QM_LOW(c);
        carry = mb4_low_pair(A0, B0, A1, B1, m, minv, q + c);
    }
    if (D & 1) { /* odd D: column D-1 (even: a diagonal term) and column D (odd: none) alone */
        __m256i A0 = z, B0 = z;
        for (int i = 0; i < c / 2; i++)
            A0 = MB4_ADD(A0, MB4_MUL(a[i], a[c - i]));
        A0 = MB4_ADD(MB4_ADD(carry, MB4_ADD(A0, A0)), MB4_MUL(a[c / 2], a[c / 2]));
        MB4_QM_ONE(c, 0, c);
        carry = mb4_low_single(A0, B0, m, minv, q + c);
        c = D, A0 = z, B0 = z;
        for (int i = 1; i <= c / 2; i++)
            A0 = MB4_ADD(A0, MB4_MUL(a[i], a[c - i]));
        A0 = MB4_ADD(carry, MB4_ADD(A0, A0));
        MB4_QM_ONE(c, 1, D);
        carry = mb4_high_single(A0, B0, r);
        c = D + 1;
    }
    for (; c < 2 * D - 2; c += 2) { /* i from c-D+1 (c) or c-D+2 (c+1) */
        __m256i A0 = MB4_MUL(a[c - D + 1], a[D - 1]), A1 = z, B0, B1 = z, an = a[D - 1];
        _Pragma("GCC unroll 4") for (int i = c - D + 2; i < c / 2; i++) {
            __m256i ai = a[i], ac = a[c - i];
            A0 = MB4_ADD(A0, MB4_MUL(ai, ac));
            A1 = MB4_ADD(A1, MB4_MUL(ai, an));
            an = ac;
        }
        __m256i h = a[c / 2];
        A1 = MB4_ADD(A1, MB4_MUL(h, an));
        A0 = MB4_ADD(MB4_ADD(carry, MB4_ADD(A0, A0)), MB4_MUL(h, h));
        A1 = MB4_ADD(A1, A1);
        MB4_QM_HIGH(c);
        carry = mb4_high_pair(A0, B0, A1, B1, r + (c - D));
    }
    __m256i A0 = MB4_ADD(carry, MB4_MUL(a[D - 1], a[D - 1])), B0 = MB4_MUL(q[D - 1], m[D - 1]);
    const __m256i mask = _mm256_set1_epi64x((long long)MB4_MASK);
    __m256i s = MB4_ADD(MB4_AND(A0, mask), MB4_AND(B0, mask));
    r[D - 2] = MB4_AND(s, mask);
    r[D - 1] = MB4_ADD(MB4_ADD(MB4_SRL(A0), MB4_SRL(B0)), MB4_SRL(s));
}

#ifndef COPL_CT_LEAKY_TEST
/* dst = entry `digit` of a table of E entries of D four-lane digits, reading every entry */
__attribute__((target("avx2"))) static void mb4_select(uint64_t *dst, const uint64_t *tab, int E, int D, uint64_t digit)
{
    const __m256i want = _mm256_set1_epi64x((long long)digit), one = _mm256_set1_epi64x(1);
    __m256i *d = (__m256i *)dst;
    const __m256i *t = (const __m256i *)tab;
    for (int j = 0; j < D; j++)
        d[j] = _mm256_setzero_si256();
    __m256i idx = _mm256_setzero_si256();
    for (int x = 0; x < E; x++) {
        __m256i mk = _mm256_cmpeq_epi64(idx, want);
        idx = _mm256_add_epi64(idx, one);
        for (int j = 0; j < D; j++)
            d[j] = _mm256_or_si256(d[j], _mm256_and_si256(mk, t[(size_t)x * D + j]));
    }
}
#else
/* test-only leaky lookup (as ct_select_avx2's): the address follows the secret digit */
static void mb4_select(uint64_t *dst, const uint64_t *tab, int E, int D, uint64_t digit)
{
    (void)E;
    memcpy(dst, tab + (size_t)digit * 4 * D, (size_t)D * 4 * sizeof(uint64_t));
}
#endif

/* Four lanes' entries of one window of a word-form table (E entries of N words, N a multiple
 * of 8), lane l's entry dg[l], into wv (word j of lane l at [4j + l]). Constant time: every
 * entry is read (broadcast word by word) and kept in a lane by a mask from a vector compare
 * of the lanes' digits. */
#ifndef COPL_CT_LEAKY_TEST
__attribute__((target("avx2"))) static void mb4_select_words(uint64_t *wv, const uint64_t *win, int E, int N,
                                                             const uint64_t dg[4])
{
    const __m256i want = _mm256_loadu_si256((const __m256i *)dg), one = _mm256_set1_epi64x(1);
    for (int jb = 0; jb < N; jb += 8) {
        __m256i acc[8];
        for (int r = 0; r < 8; r++)
            acc[r] = _mm256_setzero_si256();
        __m256i idx = _mm256_setzero_si256();
        for (int x = 0; x < E; x++) {
            const __m256i mk = _mm256_cmpeq_epi64(idx, want);
            const uint64_t *e = win + (size_t)x * N + jb;
            idx = _mm256_add_epi64(idx, one);
            for (int r = 0; r < 8; r++)
                acc[r] = _mm256_or_si256(acc[r], _mm256_and_si256(mk, _mm256_set1_epi64x((long long)e[r])));
        }
        for (int r = 0; r < 8; r++)
            _mm256_storeu_si256((__m256i *)(wv + 4 * (size_t)(jb + r)), acc[r]);
    }
}
#else
/* test-only leaky lookup: the address follows the secret digits */
static void mb4_select_words(uint64_t *wv, const uint64_t *win, int E, int N, const uint64_t dg[4])
{
    (void)E;
    for (int l = 0; l < 4; l++)
        for (int j = 0; j < N; j++)
            wv[4 * j + l] = win[(size_t)dg[l] * N + j];
}
#endif

/* the same by direct reads (variable-time tables: the lookup leaks the digits anyway) */
static void mb4_gather_words(uint64_t *wv, const uint64_t *win, int N, const uint64_t dg[4])
{
    for (int l = 0; l < 4; l++) {
        const uint64_t *e = win + (size_t)dg[l] * N;
        for (int j = 0; j < N; j++)
            wv[4 * j + l] = e[j];
    }
}

/* four lanes of N words (word j of lane l at [4j + l]) -> D digits of 28 bits, all lanes at
 * once (the shifts depend on the digit's position only) */
__attribute__((target("avx2"))) static void mb4_words_to_digits(uint64_t *dig, const uint64_t *wv, int N, int D)
{
    const __m256i mask = _mm256_set1_epi64x((long long)MB4_MASK);
    const __m256i *w = (const __m256i *)wv;
    __m256i *d = (__m256i *)dig;
    for (int j = 0; j < D; j++) {
        int bit = j * MB4_K, word = bit >> 6, off = bit & 63;
        __m256i x = _mm256_setzero_si256();
        if (word < N)
            x = _mm256_srl_epi64(_mm256_loadu_si256(w + word), _mm_cvtsi32_si128(off));
        if (off + MB4_K > 64 && word + 1 < N)
            x = _mm256_or_si256(x, _mm256_sll_epi64(_mm256_loadu_si256(w + word + 1), _mm_cvtsi32_si128(64 - off)));
        d[j] = _mm256_and_si256(x, mask);
    }
}

/* A modulus in the four-lane form: its digits, R^2 mod m and 1, each in all four lanes. */
typedef struct {
    int D, nw;      /* digits; words of the modulus */
    uint64_t minv;  /* -1/m mod 2^28 */
    const uint64_t *mw;     /* the modulus, nw words */
    uint64_t *m, *r2, *one; /* 4 D words each */
} copl_mb4;

/* ctx for the nw-word odd modulus m; buf: 12 D words (32-byte aligned). D <= MB4_MAX_DIGITS. */
static void mb4_setup(copl_mb4 *C, const uint64_t *m, int nw, uint64_t *buf)
{
    const int D = mb4_digits(64 * nw);
    uint64_t *r2w = malloc((size_t)nw * sizeof(uint64_t));
    mpz_t z, M;
    mpz_inits(z, M, NULL);
    mpz_from_words(M, m, nw);
    mpz_set_ui(z, 1);
    mpz_mul_2exp(z, z, (mp_bitcnt_t)2 * MB4_K * D);
    mpz_mod(z, z, M);
    C->D = D, C->nw = nw, C->mw = m;
    C->minv = neg_inverse_mod_2_64(m[0]) & MB4_MASK;
    C->m = buf, C->r2 = buf + 4 * D, C->one = buf + 8 * D;
    memset(C->one, 0, (size_t)4 * D * sizeof(uint64_t));
    if (r2w) {
        mpz_to_words(r2w, nw, z);
        for (int l = 0; l < 4; l++) {
            mb4_lane_from_words(C->m, D, l, m, nw);
            mb4_lane_from_words(C->r2, D, l, r2w, nw);
            C->one[l] = 1;
        }
    }
    free(r2w);
    mpz_clears(z, M, NULL);
}

/*
 * out[l] = base[l] ^ e mod m for four bases (nw words each, below m) and one exponent of ew
 * words bounded by exp_bits bits (the same secret for all lanes), windows of w bits;
 * constant time. out: 4 nw words. Returns 0, or -2 out of memory.
 */
static int mb4_powm(const copl_mb4 *C, const uint64_t *base, const uint64_t *e, int ew, int exp_bits, int w,
                    uint64_t *out)
{
    const int D = C->D, nw = C->nw, E = 1 << w, V = 4 * D;
    const int nwin = (exp_bits + w - 1) / w;
    uint64_t *tab = aligned_alloc(32, ((size_t)(E + 4) * V) * sizeof(uint64_t));
    uint64_t *tmp = malloc((size_t)(2 * nw + 2) * sizeof(uint64_t));
    if (!tab || !tmp) {
        free(tab), free(tmp);
        return -2;
    }
    uint64_t *acc = tab + (size_t)E * V, *sel = acc + V, *q = sel + V, *x = q + V;
    for (int l = 0; l < 4; l++)
        mb4_lane_from_words(x, D, l, base + (size_t)l * nw, nw);
    mb4_mul(tab, C->r2, C->one, C->m, C->minv, D, q); /* R mod m: the Montgomery one */
    mb4_mul(tab + V, x, C->r2, C->m, C->minv, D, q);
    for (int k = 2; k < E; k++)
        mb4_mul(tab + (size_t)k * V, tab + (size_t)(k - 1) * V, tab + V, C->m, C->minv, D, q);
    memcpy(acc, tab, (size_t)V * sizeof(uint64_t));
    for (int i = nwin - 1; i >= 0; i--) {
        uint64_t *sw;
        if (i != nwin - 1)
            for (int s = 0; s < w; s++) {
                mb4_sqr(x, acc, C->m, C->minv, D, q);
                sw = acc, acc = x, x = sw;
            }
        mb4_select(sel, tab, E, D, exp_digit(e, ew, i, w));
        mb4_mul(x, acc, sel, C->m, C->minv, D, q);
        sw = acc, acc = x, x = sw;
    }
    mb4_mul(x, acc, C->one, C->m, C->minv, D, q); /* out of Montgomery form: <= m */
    for (int l = 0; l < 4; l++)
        mb4_lane_to_reduced(out + (size_t)l * nw, nw, x, D, l, C->mw, tmp);
    free(tab), free(tmp);
    return 0;
}

#endif
