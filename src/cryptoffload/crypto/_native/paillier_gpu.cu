/*
 * Batched Paillier arithmetic for a GPU, with a CPU twin built from this very file.
 *
 * Layout: ONE THREAD PER INSTANCE (ciphertext, exponentiation, product chain), numbers in
 * 32-bit limbs, products in 64 bits, Montgomery multiplication by CIOS with R = 2^(32 W) for a
 * width of W limbs fixed at compile time (a template parameter; the host picks the smallest
 * width that holds the modulus). Why this layout and not a cooperative one (several threads
 * per number exchanging limbs through warp shuffles, as CGBN does):
 *   - it is the one that runs unchanged on the CPU twin: a cooperative layout needs lanes that
 *     step in lockstep and exchange registers, which a loop over instances cannot reproduce
 *     without a second implementation of every routine -- and then the twin would no longer
 *     test the GPU's code;
 *   - every thread of a warp executes the same instruction stream: all loops have bounds fixed
 *     by the width, window size and exponent length (public), so no warp ever diverges;
 *   - the batches this project has are large (ridge uploads: millions of ciphertexts;
 *     aggregation: tens of millions), so there are always enough instances to fill the GPU.
 *     Its costs are registers and latency: ptxas (CUDA 13.0, sm_90) gives most kernels 255
 *     registers a thread from 48-64 limbs up (n = 1024's n^2 is 64 limbs), so an SM holds 256
 *     of these threads (65,536 registers), 132 x 256 = 33,792 resident threads on an H100; and
 *     per-thread state spills to local memory from 48 limbs (crt_decrypt) and 64 limbs (powm:
 *     848 bytes of spill stores) up to tens of kilobytes at 128-192 limbs. These are
 *     compile-time readings (the table in docs/crypto/paillier-gpu.md), not GPU measurements.
 *     One thread also does a whole ciphertext, so a single one is slow. A cooperative layout
 *     would hold less per thread; it is the documented next step.
 *
 * Memory: per-instance arrays (bases, messages, exponents, ciphertexts) are "limb-major"
 * (structure of arrays): limb j of instance i at [j * count + i], so the 32 threads of a warp
 * read 32 consecutive words (one coalesced transaction). Shared, read-only data (the modulus,
 * R mod m, the fixed-base table, a private key) is contiguous and read at the same address by
 * every thread of a warp (a broadcast).
 *
 * Modulus context `ctx` (3 W + 1 words): m, R mod m, R^2 mod m, then minv = -m^-1 mod 2^32.
 *
 * Constant time (no branch and no memory address depends on a secret):
 *   - mont_mul: fixed loops; the final subtraction is selected with a mask;
 *   - table lookups by a secret digit (encryption randomness, decryption exponent) read every
 *     entry and keep the wanted one with a mask (ct_select). On a GPU every thread of a warp
 *     then reads the same addresses (a broadcast), but the scan is not free: at n = 1024 a
 *     constant-time encryption costs about 3x the operations of a variable-time one (2.11M
 *     against 0.70M by the count in docs/crypto/paillier-gpu.md);
 *   - exponentiation: fixed 4-bit windows over a public exponent length (the host pads secret
 *     exponents to a bound that does not depend on them: crypto/paillier_gpu/modulus.py),
 *     always squaring and always multiplying (by the selected entry, 1 in Montgomery form for
 *     a zero digit);
 *   - CRT decryption: the exact division, the half-size products and the recombination are
 *     fixed sequences with masked corrections.
 * The variable-time encryption lookup (ct = 0) reads only the wanted entry: faster, but its
 * address depends on the secret exponent; it exists for studies and is never the default.
 *
 * Randomness: none is drawn here. The DJN exponents are drawn by the host from the operating
 * system's CSPRNG and passed in; there is no GPU random number generator in this file.
 */
#include "gpu_portable.h"

typedef copg_u32 u32;
typedef copg_u64 u64;

/* ------------------------------------------------------------------------------------------ */
/* limb helpers                                                                                 */

/* all ones when a == b, else zero; no branch */
COPG_DEV u32 ct_eq_mask(u32 a, u32 b)
{
    u32 x = a ^ b;
    return ((x | (0u - x)) >> 31) - 1u;
}

template <int W>
COPG_DEV void copy_n(u32 *dst, const u32 *src)
{
    for (int j = 0; j < W; j++)
        dst[j] = src[j];
}

/* load instance i of a limb-major array of `count` instances */
template <int W>
COPG_DEV void load_soa(u32 *dst, const u32 *src, u64 count, u64 i)
{
    for (int j = 0; j < W; j++)
        dst[j] = src[(u64)j * count + i];
}

template <int W>
COPG_DEV void store_soa(u32 *dst, u64 count, u64 i, const u32 *src)
{
    for (int j = 0; j < W; j++)
        dst[(u64)j * count + i] = src[j];
}

/* r = (t >= m) ? t - m : t for t of W limbs plus a top limb `top`, in constant time */
template <int W>
COPG_DEV void cond_sub(u32 *r, const u32 *t, u32 top, const u32 *COPG_RESTRICT m)
{
    u32 s[W];
    u32 borrow = 0;
    for (int j = 0; j < W; j++) {
        u64 d = (u64)t[j] - m[j] - borrow;
        s[j] = (u32)d;
        borrow = (u32)(d >> 63);
    }
    u32 keep_t = 0u - (u32)(((u64)top - borrow) >> 63); /* all ones when t < m */
    for (int j = 0; j < W; j++)
        r[j] = (t[j] & keep_t) | (s[j] & ~keep_t);
}

/*
 * Montgomery product r = a b R^-1 mod m, fully reduced, for a, b with a b < m R (in
 * particular a, b < m, or a < R and b < m). r may alias a or b. CIOS: the product and the
 * reduction are interleaved limb by limb, so t never exceeds W + 2 limbs.
 */
template <int W>
COPG_DEV void mont_mul(u32 *r, const u32 *a, const u32 *b, const u32 *COPG_RESTRICT m, u32 minv)
{
    u32 t[W + 2];
    for (int j = 0; j < W + 2; j++)
        t[j] = 0;
    COPG_NO_UNROLL
    for (int i = 0; i < W; i++) {
        const u32 bi = b[i];
        u64 c = 0;
        for (int j = 0; j < W; j++) {
            c += (u64)a[j] * bi + t[j];
            t[j] = (u32)c;
            c >>= 32;
        }
        c += t[W];
        t[W] = (u32)c;
        t[W + 1] = (u32)(c >> 32);
        const u32 q = t[0] * minv;
        c = ((u64)q * m[0] + t[0]) >> 32;
        for (int j = 1; j < W; j++) {
            c += (u64)q * m[j] + t[j];
            t[j - 1] = (u32)c;
            c >>= 32;
        }
        c += t[W];
        t[W - 1] = (u32)c;
        t[W] = t[W + 1] + (u32)(c >> 32);
    }
    cond_sub<W>(r, t, t[W], m); /* t < 2m */
}

/* r = a + b mod m for a, b < m */
template <int W>
COPG_DEV void mod_add(u32 *r, const u32 *a, const u32 *b, const u32 *COPG_RESTRICT m)
{
    u32 s[W];
    u64 c = 0;
    for (int j = 0; j < W; j++) {
        c += (u64)a[j] + b[j];
        s[j] = (u32)c;
        c >>= 32;
    }
    cond_sub<W>(r, s, (u32)c, m);
}

/* w bits of an exponent starting at bit `bit`; word j of the exponent at e[j * stride]
 * (stride = count for a limb-major batch, 1 for one contiguous number). Which words are read
 * depends only on the public position. */
COPG_DEV u32 exp_digit(const u32 *e, u64 stride, int ew, int bit, int w)
{
    const int word = bit >> 5, off = bit & 31;
    u32 v = 0;
    if (word < ew) {
        v = e[(u64)word * stride] >> off;
        if (off + w > 32 && word + 1 < ew)
            v |= e[(u64)(word + 1) * stride] << (32 - off);
    }
    return v & ((1u << w) - 1u);
}

/* out = table[idx] for a table of `entries` numbers of W limbs, reading every entry */
template <int W>
COPG_DEV void ct_select(u32 *out, const u32 *table, int entries, u32 idx)
{
    for (int j = 0; j < W; j++)
        out[j] = 0;
    COPG_NO_UNROLL
    for (int x = 0; x < entries; x++) {
        const u32 mask = ct_eq_mask((u32)x, idx);
        const u32 *src = table + (u64)x * W;
        for (int j = 0; j < W; j++)
            out[j] |= src[j] & mask;
    }
}

#define COPG_POW_WINDOW 4
#define COPG_POW_ENTRIES (1 << COPG_POW_WINDOW)

/*
 * acc = base^e in Montgomery form (base_m = base R mod m, one_m = R mod m), e of `ebits`
 * public bits. Fixed 4-bit windows from the top; every window squares four times and
 * multiplies by a constant-time selected power.
 */
template <int W>
COPG_DEV void powm_mont(u32 *acc, const u32 *base_m, const u32 *e, u64 estride, int ew, int ebits,
                        const u32 *COPG_RESTRICT one_m, const u32 *COPG_RESTRICT m, u32 minv)
{
    u32 tab[COPG_POW_ENTRIES * W];
    u32 sel[W];
    copy_n<W>(tab, one_m);
    copy_n<W>(tab + W, base_m);
    COPG_NO_UNROLL
    for (int x = 2; x < COPG_POW_ENTRIES; x++)
        mont_mul<W>(tab + x * W, tab + (x - 1) * W, base_m, m, minv);
    copy_n<W>(acc, one_m);
    const int windows = (ebits + COPG_POW_WINDOW - 1) / COPG_POW_WINDOW;
    COPG_NO_UNROLL
    for (int win = windows - 1; win >= 0; win--) {
    COPG_NO_UNROLL
        for (int s = 0; s < COPG_POW_WINDOW; s++)
            mont_mul<W>(acc, acc, acc, m, minv);
        ct_select<W>(sel, tab, COPG_POW_ENTRIES, exp_digit(e, estride, ew, win * COPG_POW_WINDOW, COPG_POW_WINDOW));
        mont_mul<W>(acc, acc, sel, m, minv);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* kernels                                                                                      */

/* out_i = a_i b_i mod m (homomorphic addition of ciphertexts); a_i, b_i < m */
template <int W>
COPG_DEV void k_mulmod(u64 count, const u32 *a, const u32 *b, const u32 *ctx, u32 *out)
{
    const u32 *m = ctx, *r2 = ctx + 2 * W;
    const u32 minv = ctx[3 * W];
    COPG_FOR_EACH(i, count)
    {
        u32 x[W], y[W];
        load_soa<W>(x, a, count, i);
        load_soa<W>(y, b, count, i);
        mont_mul<W>(x, x, y, m, minv);  /* a b / R */
        mont_mul<W>(x, x, r2, m, minv); /* a b */
        store_soa<W>(out, count, i, x);
    }
}

/* out_i = base_i ^ exp_i mod m, constant time in the exponent (ew limbs, all 32 ew bits
 * processed); base_i < m. Scalar multiplication of ciphertexts, generic modexp jobs. */
template <int W>
COPG_DEV void k_powm(u64 count, const u32 *base, const u32 *exp, int ew, const u32 *ctx, u32 *out)
{
    const u32 *m = ctx, *r1 = ctx + W, *r2 = ctx + 2 * W;
    const u32 minv = ctx[3 * W];
    COPG_FOR_EACH(i, count)
    {
        u32 b[W], acc[W], one[W];
        load_soa<W>(b, base, count, i);
        mont_mul<W>(b, b, r2, m, minv);
        powm_mont<W>(acc, b, exp + i, count, ew, 32 * ew, r1, m, minv);
        for (int j = 0; j < W; j++)
            one[j] = j == 0;
        mont_mul<W>(acc, acc, one, m, minv);
        store_soa<W>(out, count, i, acc);
    }
}

/*
 * Fixed-base table: window v (0 <= v < k), entry x (0 <= x < 2^w) holds
 * B_v^x R mod m, B_v = bases[v] (contiguous, plain, < m), entry-major [k][2^w][W].
 * One thread per (window, run of `chunk` entries): a short exponentiation to the run's first
 * entry, then one product per entry.
 */
template <int W>
COPG_DEV void k_fb_table(int k, int w, int chunk, const u32 *bases, const u32 *ctx, u32 *table)
{
    const u32 *m = ctx, *r1 = ctx + W, *r2 = ctx + 2 * W;
    const u32 minv = ctx[3 * W];
    const int E = 1 << w;
    const int runs = E / chunk;
    COPG_FOR_EACH(t, (u64)k * runs)
    {
        const int v = (int)(t / runs), s = (int)(t % runs);
        u32 bm[W], acc[W];
        mont_mul<W>(bm, bases + (u64)v * W, r2, m, minv);
        const u32 start = (u32)(s * chunk);
        powm_mont<W>(acc, bm, &start, 1, 1, w, r1, m, minv);
        u32 *dst = table + ((u64)v * E + (u64)s * chunk) * W;
    COPG_NO_UNROLL
        for (int x = 0; x < chunk; x++) {
            copy_n<W>(dst + (u64)x * W, acc);
            mont_mul<W>(acc, acc, bm, m, minv);
        }
    }
}

/*
 * DJN encryption: out_i = h^a_i (1 + m_i n) mod n^2 with the fixed-base table of h
 * (k windows of w bits). msg: W/2 limbs per instance (m_i < n); exp: ew limbs (a_i);
 * n: W/2 contiguous limbs; ctx: the context of n^2. ct != 0: constant-time lookups.
 */
template <int W>
COPG_DEV void k_fb_encrypt(u64 count, const u32 *msg, const u32 *exp, int ew, const u32 *table, int k, int w,
                           int ct, const u32 *n, const u32 *ctx, u32 *out)
{
    const int H = W / 2;
    const int E = 1 << w;
    const u32 *m = ctx;
    const u32 minv = ctx[3 * W];
    COPG_FOR_EACH(i, count)
    {
        u32 acc[W], sel[W], gm[W];
    COPG_NO_UNROLL
        for (int v = 0; v < k; v++) {
            const u32 d = exp_digit(exp + i, count, ew, v * w, w);
            const u32 *win = table + (u64)v * E * W;
            const u32 *entry;
            if (ct) { /* public flag, the same for every thread */
                ct_select<W>(sel, win, E, d);
                entry = sel;
            } else {
                entry = win + (u64)d * W;
            }
            if (v == 0)
                copy_n<W>(acc, entry);
            else
                mont_mul<W>(acc, acc, entry, m, minv);
        }
        /* gm = 1 + m_i n (plain, < n^2) */
        for (int j = 0; j < W; j++)
            gm[j] = 0;
        for (int a = 0; a < H; a++) {
            const u32 ma = msg[(u64)a * count + i];
            u64 c = 0;
            for (int b = 0; b < H; b++) {
                c += (u64)ma * n[b] + gm[a + b];
                gm[a + b] = (u32)c;
                c >>= 32;
            }
            gm[a + H] = (u32)c;
        }
        u64 c = 1;
        for (int j = 0; j < W; j++) {
            c += gm[j];
            gm[j] = (u32)c;
            c >>= 32;
        }
        /* (h^a R) (1 + m n) R^-1 = h^a (1 + m n): plain, fully reduced */
        mont_mul<W>(acc, acc, gm, m, minv);
        store_soa<W>(out, count, i, acc);
    }
}

/*
 * One level of column products. `in` holds rows x cols numbers (row-major index r*cols + c,
 * limb-major storage); out holds ceil(rows/group) x cols, out (g, c) being the Montgomery
 * product chain of in (g*group + j, c) over j. Each Montgomery product divides by R once, and
 * any grouping of `rows` values takes rows - 1 products in all, so after the last level a
 * column holds prod R^-(rows-1), which the host corrects with one multiplication by
 * R^(rows-1) mod m (sizes only: nothing secret).
 */
template <int W>
COPG_DEV void k_col_reduce(u64 rows, u64 cols, u64 group, const u32 *in, const u32 *ctx, u32 *out)
{
    const u32 *m = ctx;
    const u32 minv = ctx[3 * W];
    const u64 out_rows = (rows + group - 1) / group;
    const u64 total = out_rows * cols, in_count = rows * cols;
    COPG_FOR_EACH(t, total)
    {
        const u64 g = t / cols, c = t % cols;
        u32 acc[W], x[W];
        load_soa<W>(acc, in, in_count, g * group * cols + c);
    COPG_NO_UNROLL
        for (u64 j = 1; j < group && g * group + j < rows; j++) { /* bounds: public sizes */
            load_soa<W>(x, in, in_count, (g * group + j) * cols + c);
            mont_mul<W>(acc, acc, x, m, minv);
        }
        store_soa<W>(out, total, t, acc);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* CRT decryption                                                                               */

/*
 * Private-key blob, NP = limbs of p^2 (and q^2), H = NP / 2 limbs of p and q (p < q, equal bit
 * lengths). Per prime (p shown; q's block follows, then the CRT constant):
 *   p2ctx [3 NP + 1]  context of p^2            p2r3 [NP]   R^3 mod p^2 (R = 2^(32 NP))
 *   pm1   [H]         p - 1 (the exponent)      pctx [3H+1] context of p (R_H = 2^(32 H))
 *   pinv  [H]         p^-1 mod 2^(32 H)         hp   [H]    hp R_H mod p, hp = L_p(g^(p-1))^-1
 * then pinvq [H] = (p^-1 mod q) R_H mod q, and ebits [1] = bit length of p.
 * The host (crypto/paillier_gpu.py, private_key_blob) writes the same layout.
 */
template <int NP>
struct DecLayout {
    static const int H = NP / 2;
    static const int P2CTX = 0;
    static const int P2R3 = 3 * NP + 1;
    static const int PM1 = P2R3 + NP;
    static const int PCTX = PM1 + H;
    static const int PINV = PCTX + 3 * H + 1;
    static const int HP = PINV + H;
    static const int BLOCK = HP + H;
    static const int PINVQ = 2 * BLOCK;
    static const int EBITS = PINVQ + H;
    static const int WORDS = EBITS + 1;
};

/* one prime's half: mres = L_p(c^(p-1) mod p^2) hp mod p (H limbs), c = instance i of cts */
template <int NP>
COPG_DEV void crt_half(u32 *mres, const u32 *cts, u64 count, u64 i, const u32 *blk, int ebits)
{
    typedef DecLayout<NP> L;
    const int H = L::H;
    const u32 *p2 = blk + L::P2CTX, *p2r1 = p2 + NP, *p2r2 = p2 + 2 * NP;
    const u32 p2minv = p2[3 * NP];
    const u32 *p = blk + L::PCTX;
    const u32 pminv = p[3 * H];
    u32 lo[NP], hi[NP], x[NP], y[NP];
    load_soa<NP>(lo, cts, count, i);
    load_soa<NP>(hi, cts + (u64)NP * count, count, i);
    /* c R mod p^2 = hi R^2 + lo R, c = hi R + lo */
    mont_mul<NP>(x, hi, blk + L::P2R3, p2, p2minv);
    mont_mul<NP>(y, lo, p2r2, p2, p2minv);
    mod_add<NP>(x, x, y, p2);
    powm_mont<NP>(y, x, blk + L::PM1, 1, H, ebits, p2r1, p2, p2minv);
    for (int j = 0; j < NP; j++)
        x[j] = j == 0;
    mont_mul<NP>(y, y, x, p2, p2minv); /* u = c^(p-1) mod p^2 = 1 + L p */
    /* L = (u - 1) / p, exact: (u - 1) p^-1 mod 2^(32 H) */
    u32 u1[H];
    u32 borrow = 1;
    for (int j = 0; j < H; j++) {
        u64 d = (u64)y[j] - borrow;
        u1[j] = (u32)d;
        borrow = (u32)(d >> 63);
    }
    const u32 *pinv = blk + L::PINV;
    u32 l[H];
    for (int j = 0; j < H; j++)
        l[j] = 0;
    for (int a = 0; a < H; a++) {
        u64 c = 0;
        for (int b = 0; a + b < H; b++) {
            c += (u64)u1[a] * pinv[b] + l[a + b];
            l[a + b] = (u32)c;
            c >>= 32;
        }
    }
    mont_mul<H>(mres, l, blk + L::HP, p, pminv); /* L hp mod p */
}

/* out_i = the plaintext of ciphertext i (NP limbs; cts: 2 NP limbs per instance, < n^2) */
template <int NP>
COPG_DEV void k_crt_decrypt(u64 count, const u32 *cts, const u32 *key, u32 *out)
{
    typedef DecLayout<NP> L;
    const int H = L::H;
    const int ebits = (int)key[L::EBITS];
    const u32 *q = key + L::BLOCK + L::PCTX;
    const u32 qminv = q[3 * H];
    COPG_FOR_EACH(i, count)
    {
        u32 mp[H], mq[H], d[H], h[H], res[NP];
        crt_half<NP>(mp, cts, count, i, key, ebits);
        crt_half<NP>(mq, cts, count, i, key + L::BLOCK, ebits);
        /* d = mq - mp mod q (mp < p < q) */
        u32 borrow = 0;
        for (int j = 0; j < H; j++) {
            u64 t = (u64)mq[j] - mp[j] - borrow;
            d[j] = (u32)t;
            borrow = (u32)(t >> 63);
        }
        const u32 add = 0u - borrow;
        u64 c = 0;
        for (int j = 0; j < H; j++) {
            c += (u64)d[j] + (q[j] & add);
            d[j] = (u32)c;
            c >>= 32;
        }
        mont_mul<H>(h, d, key + L::PINVQ, q, qminv); /* (mq - mp) p^-1 mod q */
        /* m = mp + p h */
        const u32 *p = key + L::PCTX;
        for (int j = 0; j < NP; j++)
            res[j] = j < H ? mp[j] : 0;
        for (int a = 0; a < H; a++) {
            u64 cc = 0;
            for (int b = 0; b < H; b++) {
                cc += (u64)h[a] * p[b] + res[a + b];
                res[a + b] = (u32)cc;
                cc >>= 32;
            }
            for (int j = a + H; j < NP; j++) { /* carry through the upper limbs: public bounds */
                cc += res[j];
                res[j] = (u32)cc;
                cc >>= 32;
            }
        }
        store_soa<NP>(out, count, i, res);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* entry points: one macro per kernel, instantiated per width                                   */
/*
 * The CPU twin instantiates every kernel at every width. On the GPU the host compiles ONE
 * kernel at ONE width per NVRTC module (-DCOPG_ONLY_WIDTH=W -DCOPG_ONLY_KERNEL=COPG_ENTRY_name),
 * on first use: a key of n = 1024 bits needs fb_encrypt at 64 limbs and crt_decrypt at 32, and
 * compiling the other five kernels at each width would only add NVRTC time (ptxas spends tens
 * of seconds per kernel at the larger widths; docs/crypto/paillier-gpu.md has the figures).
 */

#define COPG_ENTRY_mulmod(W)                                                                               \
    COPG_KERNEL void copg_mulmod_##W(u64 count, const u32 *a, const u32 *b, const u32 *ctx, u32 *out)       \
    {                                                                                                      \
        k_mulmod<W>(count, a, b, ctx, out);                                                                \
    }
#define COPG_ENTRY_powm(W)                                                                                 \
    COPG_KERNEL void copg_powm_##W(u64 count, const u32 *base, const u32 *exp, int ew, const u32 *ctx,      \
                                   u32 *out)                                                               \
    {                                                                                                      \
        k_powm<W>(count, base, exp, ew, ctx, out);                                                         \
    }
#define COPG_ENTRY_fb_table(W)                                                                             \
    COPG_KERNEL void copg_fb_table_##W(int k, int w, int chunk, const u32 *bases, const u32 *ctx,          \
                                       u32 *table)                                                         \
    {                                                                                                      \
        k_fb_table<W>(k, w, chunk, bases, ctx, table);                                                     \
    }
#define COPG_ENTRY_fb_encrypt(W)                                                                           \
    COPG_KERNEL void copg_fb_encrypt_##W(u64 count, const u32 *msg, const u32 *exp, int ew,                 \
                                         const u32 *table, int k, int w, int ct, const u32 *n,              \
                                         const u32 *ctx, u32 *out)                                         \
    {                                                                                                      \
        k_fb_encrypt<W>(count, msg, exp, ew, table, k, w, ct, n, ctx, out);                                \
    }
#define COPG_ENTRY_col_reduce(W)                                                                           \
    COPG_KERNEL void copg_col_reduce_##W(u64 rows, u64 cols, u64 group, const u32 *in, const u32 *ctx,     \
                                         u32 *out)                                                         \
    {                                                                                                      \
        k_col_reduce<W>(rows, cols, group, in, ctx, out);                                                  \
    }
#define COPG_ENTRY_crt_decrypt(W)                                                                          \
    COPG_KERNEL void copg_crt_decrypt_##W(u64 count, const u32 *cts, const u32 *key, u32 *out)              \
    {                                                                                                      \
        k_crt_decrypt<W>(count, cts, key, out);                                                            \
    }

#define COPG_WIDTH_KERNELS(W)                                                                              \
    COPG_ENTRY_mulmod(W) COPG_ENTRY_powm(W) COPG_ENTRY_fb_table(W) COPG_ENTRY_fb_encrypt(W)                \
        COPG_ENTRY_col_reduce(W) COPG_ENTRY_crt_decrypt(W)

#define COPG_APPLY(M, W) M(W) /* expands both arguments before M pastes W into a name */

#if defined(COPG_ONLY_WIDTH) && defined(COPG_ONLY_KERNEL)
COPG_APPLY(COPG_ONLY_KERNEL, COPG_ONLY_WIDTH)
#elif defined(COPG_ONLY_WIDTH)
COPG_APPLY(COPG_WIDTH_KERNELS, COPG_ONLY_WIDTH)
#else
COPG_WIDTH_KERNELS(16)
COPG_WIDTH_KERNELS(32)
COPG_WIDTH_KERNELS(48)
COPG_WIDTH_KERNELS(64)
COPG_WIDTH_KERNELS(96)
COPG_WIDTH_KERNELS(128)
COPG_WIDTH_KERNELS(192)
#endif
