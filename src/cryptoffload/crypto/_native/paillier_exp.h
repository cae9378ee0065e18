/*
 * Constant-time exponentiation and multi-exponentiation on a kernel set (GMP or ADX), for
 * CRT decryption (one base, the secret exponent p-1 modulo p^2) and for products of powers
 * whose exponents are secret (the ridge solve's masking: each output is a product of k
 * powers of shared bases). Included by paillier_core.c after its helpers.
 *
 * Method: Straus with fixed windows. Each base gets a table of its 2^w first powers in
 * Montgomery form; the exponents are read w bits at a time from the top; one accumulator takes
 * w squarings per window (shared by all k bases: the saving of a multi-exponentiation; the
 * kernel set's dedicated Montgomery square, as they are most of the work for few bases) and
 * one product per base with the entry the scan selected. Every step runs whatever the
 * exponents' bits are: the window digit only feeds the scan's masks, so neither a branch nor
 * an address depends on a secret. Leading zero windows are multiplied like the others (the
 * entry for digit 0 is the Montgomery one).
 */
#ifndef COPL_PAILLIER_EXP_H
#define COPL_PAILLIER_EXP_H

/* Montgomery context of one modulus of N words */
typedef struct {
    int N;
    const uint64_t *m;
    uint64_t minv;
    uint64_t *r2;  /* R^2 mod m */
    uint64_t *one; /* 1, plain */
} copl_mont;

/* r2 = R^2 mod m and one = 1 into caller-given N-word buffers */
static void mont_setup(copl_mont *M, const uint64_t *m, int N, uint64_t *r2, uint64_t *one)
{
    mpz_t z, Mz;
    mpz_inits(z, Mz, NULL);
    mpz_from_words(Mz, m, N);
    mpz_set_ui(z, 1);
    mpz_mul_2exp(z, z, (mp_bitcnt_t)128 * N);
    mpz_mod(z, z, Mz);
    mpz_to_words(r2, N, z);
    mpz_clears(z, Mz, NULL);
    memset(one, 0, (size_t)N * sizeof(uint64_t));
    one[0] = 1;
    M->N = N;
    M->m = m;
    M->minv = neg_inverse_mod_2_64(m[0]);
    M->r2 = r2;
    M->one = one;
}

/* tab[e] = base^e R mod m for e < 2^w (base < m); t: 2N+4 words of scratch */
static void pow_table(const copl_mont *M, const copl_kernels *K, const uint64_t *base, int w, uint64_t *tab,
                      uint64_t *t)
{
    const int N = M->N, E = 1 << w;
    K->mul(tab, M->r2, M->one, M->m, N, M->minv, t); /* R mod m */
    if (E > 1)
        K->mul(tab + N, base, M->r2, M->m, N, M->minv, t);
    for (int e = 2; e < E; e++)
        K->mul(tab + (size_t)e * N, tab + (size_t)(e - 1) * N, tab + N, M->m, N, M->minv, t);
}

/* out = prod_j base_j^exp_j mod m (< m, plain), given the k tables (k * 2^w * N words) and k
 * exponents of ew words each; exp_bits bounds every exponent. scr: 4N+4 words. */
static void multiexp_tables(const copl_mont *M, const copl_kernels *K, int k, const uint64_t *tabs, int w,
                            const uint64_t *exps, int ew, int exp_bits, uint64_t *out, uint64_t *scr)
{
    const int N = M->N, E = 1 << w;
    const int nwin = (exp_bits + w - 1) / w;
    uint64_t *acc = scr, *sel = acc + N, *t = sel + N;
    memcpy(acc, tabs, (size_t)N * sizeof(uint64_t)); /* Montgomery one */
    for (int i = nwin - 1; i >= 0; i--) {
        if (i != nwin - 1)
            for (int s = 0; s < w; s++)
                K->sqr(acc, acc, M->m, N, M->minv, t);
        for (int j = 0; j < k; j++) {
            K->sel(sel, tabs + (size_t)j * E * N, E, N, exp_digit(exps + (size_t)j * ew, ew, i, w));
            K->mul(acc, acc, sel, M->m, N, M->minv, t);
        }
    }
    K->mul(out, acc, M->one, M->m, N, M->minv, t); /* out of Montgomery form */
    final_reduce(out, M->m, N, t);
}

/* Window for k bases, count products sharing their tables, exp_bits-bit exponents: the w
 * that minimises Montgomery products (tables amortised over count, a scanned entry costing
 * about 1/(8N) of a product), at most 8 bits. */
static int multiexp_window(int k, int count, int exp_bits, int N)
{
    int best = 1;
    double best_cost = 0;
    for (int w = 1; w <= 8; w++) {
        double E = (double)(1 << w), nwin = (double)((exp_bits + w - 1) / w);
        double cost = k * (E - 1) / count + exp_bits + k * nwin * (1.0 + E / (8.0 * N));
        if (w == 1 || cost < best_cost) {
            best = w;
            best_cost = cost;
        }
    }
    return best;
}

/*
 * out[s] = prod_{j<k} bases[j] ^ exps[s][j] mod m for s < count: k bases shared by count
 * products (tables built once), exponents secret (constant time), bounded by exp_bits bits
 * and given as ew words each, layout exps[(s*k + j)*ew]. bases: k*N words, each < m; m odd,
 * N words; backend 0 (GMP products) or 2 (ADX, needs copl_have_adx() and N a multiple of 8).
 * Returns 0, -1 on bad arguments, -2 out of memory, -3 back end unavailable.
 */
int copl_multiexp(int count, int k, const uint64_t *bases, const uint64_t *exps, int ew, int exp_bits,
                  const uint64_t *mod, int N, int backend, uint64_t *out)
{
    if (count < 1 || k < 1 || ew < 1 || exp_bits < 1 || exp_bits > 64 * ew || N < 1 || !(mod[0] & 1) ||
        mod[N - 1] == 0)
        return -1;
    if (backend == COPL_BACKEND_ADX ? !(copl_have_adx() && copl_adx_fits(N)) : backend != COPL_BACKEND_GMP)
        return -3;
    const copl_kernels K = kernels_for(backend);
    const int w = multiexp_window(k, count, exp_bits, N);
    size_t tab_words = (size_t)k * ((size_t)1 << w) * N;
    uint64_t *tabs = aligned_alloc(64, ((tab_words * 8) + 63) & ~(size_t)63);
    uint64_t *buf = malloc((size_t)(8 * N + 8) * sizeof(uint64_t));
    if (!tabs || !buf) {
        free(tabs), free(buf);
        return -2;
    }
    uint64_t *r2 = buf, *one = r2 + N, *scr = one + N;
    copl_mont M;
    mont_setup(&M, mod, N, r2, one);
    for (int j = 0; j < k; j++)
        pow_table(&M, &K, bases + (size_t)j * N, w, tabs + (size_t)j * ((size_t)1 << w) * N, scr + 2 * N);
    for (int s = 0; s < count; s++)
        multiexp_tables(&M, &K, k, tabs, w, exps + (size_t)s * k * ew, ew, exp_bits, out + (size_t)s * N, scr);
    free(tabs), free(buf);
    return 0;
}

#endif
