/*
 * Montgomery kernels of the native Paillier core for CPUs without AVX512-IFMA, and the
 * constant-time table scan, chosen at run time (cpuid). Included by paillier_core.c.
 *
 * Why our own multiply: the portable path is GMP's mpn_mul_n + redc_1, two passes over the
 * operands with a call and a fresh carry chain each; and mpn_mul_n switches to Karatsuba
 * (toom22) above ~20-30 limbs, whose sign handling branches on the operands' values -- a
 * secret-dependent branch in what we call the constant-time path. The MULX/ADX kernel is a
 * CIOS Montgomery product: per word of b, one pass t += a*b_i and one pass t += m*q, each an
 * unrolled loop of 8 words that keeps two independent carry chains (ADCX on CF for the low
 * halves, ADOX on OF for the high halves), so MULX issues every cycle instead of waiting on
 * one carry chain. Its only branches are on the (public) limb count; the final subtraction is
 * masked. Sizes: moduli of 8k words (n = 1024..3072 bits -> 16..48 words, n^2 -> 32..96).
 *
 * The scan (constant-time lookup of entry `digit` of a window of E entries of N words) reads
 * every entry with 256-bit loads, ANDs each with an all-ones/all-zeros mask from a vector
 * compare and ORs into eight ymm accumulators: no secret-dependent branch or address, and
 * the window's 2^w entries cost about 8 vector loads each.
 *
 * COPL_CT_LEAKY_TEST (test-only builds, tests/crypto/_native/test_constant_time.py) replaces
 * the scan by a direct read of the wanted entry and adds a branch on the digit, so the
 * constant-time test can show that it detects a leak.
 */
#ifndef COPL_PAILLIER_MONT_H
#define COPL_PAILLIER_MONT_H

#include <cpuid.h>
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ------------------------------------------------------------------------------------- */
/* CPU features                                                                            */

/* 1 when the CPU has BMI2 (MULX), ADX (ADCX/ADOX) and AVX2 and the OS saves ymm state. */
static int copl_cpu_avx2(void);
static int copl_cpu_adx_avx2(void)
{
    unsigned a, b, c, d;
    if (!copl_cpu_avx2())        /* also checks that the OS saves ymm state */
        return 0;
    __cpuid_count(7, 0, a, b, c, d);
    return ((b >> 8) & 1) && ((b >> 19) & 1); /* BMI2 (MULX) and ADX (ADCX/ADOX) */
}

/* 1 when the CPU has AVX2 and the OS saves ymm state (the scan alone needs no more). */
static int copl_cpu_avx2(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !((c >> 27) & 1) || !((c >> 28) & 1))
        return 0;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    if ((lo & 6) != 6 || __get_cpuid_max(0, NULL) < 7)
        return 0;
    __cpuid_count(7, 0, a, b, c, d);
    return (b >> 5) & 1;
}

/* ------------------------------------------------------------------------------------- */
/* MULX/ADX rows                                                                           */

/* one word of a row: lo:hi = a[j]*rdx; lo += t[j] (CF chain) + hprev (OF chain); t[j] = lo */
#define COPL_LIMB(off, hnew, hprev)                      \
    "mulx " #off "(%[a]), %[lo], %[" #hnew "]\n\t"        \
    "adcx " #off "(%[t]), %[lo]\n\t"                     \
    "adox %[" #hprev "], %[lo]\n\t"                      \
    "movq %[lo], " #off "(%[t])\n\t"

/* t[0..8*blocks-1] += a[0..8*blocks-1] * b; returns the carry word (belongs at t[8*blocks]). */
__attribute__((target("bmi2,adx"))) static inline uint64_t adx_row(uint64_t *t, const uint64_t *a,
                                                                  uint64_t b, uint64_t blocks)
{
    uint64_t lo, h0, h1, z;
    __asm__ volatile(
        "xorl %k[z], %k[z]\n\t" /* z = 0; clears CF and OF */
        "movq %[z], %[h1]\n\t"
        "1:\n\t"
        COPL_LIMB(0, h0, h1) COPL_LIMB(8, h1, h0) COPL_LIMB(16, h0, h1) COPL_LIMB(24, h1, h0)
        COPL_LIMB(32, h0, h1) COPL_LIMB(40, h1, h0) COPL_LIMB(48, h0, h1) COPL_LIMB(56, h1, h0)
        "leaq 64(%[a]), %[a]\n\t"
        "leaq 64(%[t]), %[t]\n\t"
        "leaq -1(%[n]), %[n]\n\t" /* lea and jrcxz leave CF and OF alone */
        "jrcxz 2f\n\t"
        "jmp 1b\n\t"
        "2:\n\t"
        "adcx %[z], %[h1]\n\t"
        "adox %[z], %[h1]\n\t"
        : [t] "+r"(t), [a] "+r"(a), [n] "+c"(blocks), [lo] "=&r"(lo), [h0] "=&r"(h0), [h1] "=&r"(h1),
          [z] "=&r"(z)
        : "d"(b)
        : "cc", "memory");
    return h1;
}

/* The Montgomery products' last step: r = T - m when T (N words and top word `top`) >= m,
 * else T; d: N words of scratch. The choice is a mask, not a branch. */
static inline void adx_final_sub(uint64_t *r, const uint64_t *T, uint64_t top, const uint64_t *m, int N, uint64_t *d)
{
    unsigned char bw = 0;
    for (int j = 0; j < N; j++) {
        unsigned long long s;
        bw = _subborrow_u64(bw, T[j], m[j], &s);
        d[j] = s;
    }
    uint64_t take = (uint64_t)0 - ((uint64_t)(bw ^ 1) | top); /* all ones: use T - m */
    for (int j = 0; j < N; j++)
        r[j] = (d[j] & take) | (T[j] & ~take);
}

/* Montgomery product r = a*b/R mod m (R = 2^(64N), N a multiple of 8), with r < m when
 * a, b < m (r < R when a, b < R). t: scratch of 2N+2 words. a, b may alias r. */
__attribute__((target("bmi2,adx"))) static void mont_mul_adx(uint64_t *r, const uint64_t *a, const uint64_t *b,
                                                            const uint64_t *m, int N, uint64_t minv, uint64_t *t)
{
    const uint64_t blocks = (uint64_t)N / 8;
    memset(t, 0, (size_t)(2 * N + 2) * sizeof(uint64_t));
    uint64_t *T = t;
    for (int i = 0; i < N; i++, T++) {
        unsigned long long s;
        uint64_t c = adx_row(T, a, b[i], blocks);
        unsigned char cy = _addcarry_u64(0, T[N], c, &s);
        T[N] = s;
        T[N + 1] += cy;
        uint64_t q = T[0] * minv;
        c = adx_row(T, m, q, blocks);
        cy = _addcarry_u64(0, T[N], c, &s);
        T[N] = s;
        T[N + 1] += cy;
    }
    /* T = t + N holds the result (N words) and its top word T[N] (0 or 1): subtract m when
     * T >= m, chosen by a mask */
    adx_final_sub(r, t + N, t[2 * N], m, N, t); /* the low half of t is free now */
}

/* t[0..L-1] += a[0..L-1] * b for any L >= 1 (the squaring's rows, of every length); returns
 * the carry word (belongs at t[L]). The same unrolled body as adx_row, entered at word
 * (8 - L mod 8) mod 8 of its first block through a jump table (pointers moved back so the fixed
 * offsets line up): the entry depends on the public length only. */
__attribute__((target("bmi2,adx"))) static inline uint64_t adx_row_any(uint64_t *t, const uint64_t *a,
                                                                      uint64_t b, uint64_t L)
{
    uint64_t p = (8 - (L & 7)) & 7, blocks = (L + 7) >> 3;
    uint64_t lo, h0, h1, z;
    t -= p, a -= p;
    __asm__ volatile(
        "leaq 7f(%%rip), %[h0]\n\t"
        "movslq (%[h0],%[p],4), %[lo]\n\t"
        "addq %[h0], %[lo]\n\t"
        "xorl %k[z], %k[z]\n\t" /* z = 0; clears CF and OF (after the add above) */
        "movq %[z], %[h0]\n\t"
        "movq %[z], %[h1]\n\t"
        "jmp *%[lo]\n\t"
        ".balign 4\n"
        "7:\n\t"
        ".long 10f-7b, 11f-7b, 12f-7b, 13f-7b, 14f-7b, 15f-7b, 16f-7b, 17f-7b\n"
        "1:\n"
        "10:\n\t" COPL_LIMB(0, h0, h1)
        "11:\n\t" COPL_LIMB(8, h1, h0)
        "12:\n\t" COPL_LIMB(16, h0, h1)
        "13:\n\t" COPL_LIMB(24, h1, h0)
        "14:\n\t" COPL_LIMB(32, h0, h1)
        "15:\n\t" COPL_LIMB(40, h1, h0)
        "16:\n\t" COPL_LIMB(48, h0, h1)
        "17:\n\t" COPL_LIMB(56, h1, h0)
        "leaq 64(%[a]), %[a]\n\t"
        "leaq 64(%[t]), %[t]\n\t"
        "leaq -1(%[n]), %[n]\n\t"
        "jrcxz 2f\n\t"
        "jmp 1b\n\t"
        "2:\n\t"
        "adcx %[z], %[h1]\n\t"
        "adox %[z], %[h1]\n\t"
        : [t] "+r"(t), [a] "+r"(a), [n] "+c"(blocks), [lo] "=&r"(lo), [h0] "=&r"(h0), [h1] "=&r"(h1),
          [z] "=&r"(z)
        : "d"(b), [p] "r"(p)
        : "cc", "memory");
    return h1;
}

/* t[0..2N-1] = 2 t + sum_j a_j^2 2^(128 j): the off-diagonal half of a square doubled and its
 * diagonal added, in one pass (ADCX doubles word by word on CF, ADOX adds the squares on OF);
 * N a multiple of 4. No carry leaves the top word: the result is a^2 < 2^(128N). */
__attribute__((target("bmi2,adx"))) static inline void adx_double_add_squares(uint64_t *t, const uint64_t *a,
                                                                              uint64_t N)
{
    uint64_t lo, hi, x0, x1, n = N / 4;
#define COPL_DIAG(j)                          \
    "movq " #j "*8(%[a]), %%rdx\n\t"          \
    "mulx %%rdx, %[lo], %[hi]\n\t"            \
    "movq " #j "*16(%[t]), %[x0]\n\t"         \
    "movq " #j "*16+8(%[t]), %[x1]\n\t"       \
    "adcx %[x0], %[x0]\n\t"                   \
    "adcx %[x1], %[x1]\n\t"                   \
    "adox %[lo], %[x0]\n\t"                   \
    "adox %[hi], %[x1]\n\t"                   \
    "movq %[x0], " #j "*16(%[t])\n\t"         \
    "movq %[x1], " #j "*16+8(%[t])\n\t"
    __asm__ volatile(
        "xorl %k[lo], %k[lo]\n\t" /* clears CF and OF */
        "1:\n\t"
        COPL_DIAG(0) COPL_DIAG(1) COPL_DIAG(2) COPL_DIAG(3)
        "leaq 32(%[a]), %[a]\n\t"
        "leaq 64(%[t]), %[t]\n\t"
        "leaq -1(%[n]), %[n]\n\t"
        "jrcxz 2f\n\t"
        "jmp 1b\n\t"
        "2:\n\t"
        : [t] "+r"(t), [a] "+r"(a), [n] "+c"(n), [lo] "=&r"(lo), [hi] "=&r"(hi), [x0] "=&r"(x0), [x1] "=&r"(x1)
        :
        : "rdx", "cc", "memory");
#undef COPL_DIAG
}

/* Montgomery square r = a^2/R mod m (r < m when a < m), N a multiple of 8; t: 2N+2 words of
 * scratch; a may alias r. Why not the product with b = a: the square's cross products
 * a_i a_j (i < j) are computed once and doubled, N(N-1)/2 + N word products for the square
 * instead of N^2, then the N rows of the reduction; 15-20 % less time at 16-64 words on the
 * Zen 4 this was written on. Rows: a_i times a_{i+1..N-1} into t from word 2i+1, each row's
 * carry word landing in a word no earlier row reached. */
__attribute__((target("bmi2,adx"))) static void mont_sqr_adx(uint64_t *r, const uint64_t *a, const uint64_t *m, int N,
                                                            uint64_t minv, uint64_t *t)
{
    const uint64_t blocks = (uint64_t)N / 8;
    memset(t, 0, (size_t)(2 * N) * sizeof(uint64_t));
    for (int i = 0; i < N - 1; i++)
        t[i + N] = adx_row_any(t + 2 * i + 1, a + i + 1, a[i], (uint64_t)(N - 1 - i));
    adx_double_add_squares(t, a, (uint64_t)N);
    unsigned char cy = 0; /* the carry out of word i + N, into word i + N + 1 */
    for (int i = 0; i < N; i++) {
        unsigned long long s;
        uint64_t c = adx_row(t + i, m, t[i] * minv, blocks);
        cy = _addcarry_u64(cy, t[i + N], c, &s);
        t[i + N] = s;
    }
    adx_final_sub(r, t + N, cy, m, N, t);
}

/* ------------------------------------------------------------------------------------- */
/* constant-time scan                                                                      */

#ifndef COPL_CT_LEAKY_TEST
#define COPL_SCAN_BLOCK(REGS)                                                              \
    for (; c + 4 * (REGS) <= N; c += 4 * (REGS)) {                                         \
        __m256i acc[REGS];                                                                 \
        for (int r = 0; r < (REGS); r++)                                                   \
            acc[r] = _mm256_setzero_si256();                                               \
        __m256i idx = _mm256_setzero_si256();                                              \
        for (int x = 0; x < E; x++) {                                                      \
            __m256i mk = _mm256_cmpeq_epi64(idx, want);                                    \
            idx = _mm256_add_epi64(idx, one);                                              \
            const __m256i *p = (const __m256i *)(win + (size_t)x * N + c);                 \
            for (int r = 0; r < (REGS); r++)                                               \
                acc[r] = _mm256_or_si256(acc[r], _mm256_and_si256(mk, _mm256_loadu_si256(p + r))); \
        }                                                                                  \
        for (int r = 0; r < (REGS); r++)                                                   \
            _mm256_storeu_si256((__m256i *)(dst + c) + r, acc[r]);                         \
    }

/* dst = entry `digit` of a window of E entries of N words (N a multiple of 4), reading all. */
__attribute__((target("avx2"))) static void ct_select_avx2(uint64_t *dst, const uint64_t *win, int E, int N,
                                                           uint64_t digit)
{
    const __m256i want = _mm256_set1_epi64x((long long)digit), one = _mm256_set1_epi64x(1);
    int c = 0;
    COPL_SCAN_BLOCK(8)
    COPL_SCAN_BLOCK(4)
    COPL_SCAN_BLOCK(1)
    for (; c < N; c++) { /* words past the last multiple of 4 */
        uint64_t v = 0;
        for (int x = 0; x < E; x++) {
            uint64_t d = (uint64_t)x ^ digit;
            v |= win[(size_t)x * N + c] & (((d | ((uint64_t)0 - d)) >> 63) - 1);
        }
        dst[c] = v;
    }
}
#undef COPL_SCAN_BLOCK
#else
/* test-only leaky lookup: the address and a branch follow the secret digit */
static void ct_select_avx2(uint64_t *dst, const uint64_t *win, int E, int N, uint64_t digit)
{
    (void)E;
    if (digit == 0)
        memset(dst, 0, (size_t)N * sizeof(uint64_t));
    memcpy(dst, win + (size_t)digit * N, (size_t)N * sizeof(uint64_t));
}
#endif

/* portable constant-time scan (CPUs without AVX2): masked OR over every entry */
static void ct_select_portable(uint64_t *dst, const uint64_t *win, int E, int N, uint64_t digit)
{
    memset(dst, 0, (size_t)N * sizeof(uint64_t));
    for (int x = 0; x < E; x++) {
        uint64_t v = (uint64_t)x ^ digit;
        uint64_t mask = ((v | ((uint64_t)0 - v)) >> 63) - 1;
        const uint64_t *src = win + (size_t)x * N;
        for (int j = 0; j < N; j++)
            dst[j] |= src[j] & mask;
    }
}

#endif
