/*
 * Constant-time check of the native Paillier kernels under valgrind's memcheck
 * (tests/crypto/_native/test_constant_time.py compiles and runs it).
 *
 * The secrets -- DJN exponents and plaintexts for the fixed-base encryption (ADX: four
 * ciphertexts on the four-lane AVX2 kernels and one on MULX/ADX), exponents for the
 * multi-exponentiation (the ridge masking's and single ciphertexts' CRT decryption, on the
 * Montgomery products and squares of both kernel sets) and for the four-lane AVX2
 * exponentiation (CRT decryption of batches) -- are marked
 * undefined with a client request. memcheck then reports every conditional branch and every
 * memory address computed from them ("depends on uninitialised value(s)", "Use of
 * uninitialised value"), and --error-exitcode turns a report into a failed run. The result is
 * marked defined again before it is printed (printing is no leak).
 *
 * usage: ct_harness MODE SEED WORDS, MODE in fb-adx, fb-gmp, multiexp-adx, multiexp-gmp, powm4-avx2;
 * WORDS the size of n in 64-bit words (the modulus n^2 has twice as many).
 */
#include "paillier_core.c"
#include <stdio.h>
#include <valgrind/memcheck.h>
static uint64_t rnd(uint64_t *x){*x^=*x<<13;*x^=*x>>7;*x^=*x<<17;return *x;}
int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "fb-adx";
    uint64_t seed = argc > 2 ? strtoull(argv[2], 0, 10) : 1;
    int nn = argc > 3 ? atoi(argv[3]) : 8, N = 2 * nn, backend = strstr(mode, "adx") ? COPL_BACKEND_ADX : COPL_BACKEND_GMP;
    cpu_adx = 1; /* valgrind runs MULX/ADCX/ADOX on any host; its cpuid need not show them */
    uint64_t n[32], m[64], base[64], msgs[5 * 32], exps[16], out[5 * 64], x = 88172645463325252ull;
    memset(out, 0, sizeof out);
    for (int j = 0; j < nn; j++) n[j] = rnd(&x);
    n[0] |= 1; n[nn - 1] |= 1ull << 63;
    mpn_sqr(m, n, nn);
    for (int j = 0; j < N; j++) base[j] = j < N - 1 ? rnd(&x) : 0;
    for (int j = 0; j < 5 * nn; j++) msgs[j] = j % nn == nn - 1 ? 0 : rnd(&seed);
    for (int j = 0; j < 16; j++) exps[j] = rnd(&seed);
    VALGRIND_MAKE_MEM_UNDEFINED(exps, sizeof exps);   /* the secrets */
    VALGRIND_MAKE_MEM_UNDEFINED(msgs, sizeof msgs);
    int rc;
    if (strncmp(mode, "fb-", 3) == 0) {
        copl_fb *c = copl_fb_new(base, m, N, n, nn, 128, 5, 1, backend);
        if (!c) return 10;
        rc = copl_fb_encrypt(c, 5, msgs, exps, 2, out);   /* ADX: a four-lane AVX2 group and one single */
        copl_fb_free(c);
    } else if (strncmp(mode, "powm4-", 6) == 0) {   /* four bases, one secret exponent */
        static uint64_t bases4[4 * 64], ctx[12 * 160] __attribute__((aligned(32)));   /* D <= 148 here */
        copl_mb4 C;
        for (int j = 0; j < 4 * N; j++) bases4[j] = j % N < N - 1 ? rnd(&x) : 0;
        mb4_setup(&C, m, N, ctx);
        rc = mb4_powm(&C, bases4, exps, 2, 128, 4, out);
    } else {   /* multi-exponentiation: 2 bases, 2 rows of secret exponents */
        rc = copl_multiexp(2, 2, base, exps, 2, 128, m, N, backend, out);
    }
    VALGRIND_MAKE_MEM_DEFINED(out, sizeof out);
    uint64_t h = 0;
    for (int j = 0; j < 4 * N; j++) h = h * 31 + out[j];
    printf("%s rc=%d %016llx\n", mode, rc, (unsigned long long)h);
    return rc;
}
