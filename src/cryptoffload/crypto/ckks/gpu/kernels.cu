// The RNS-CKKS backend's GPU kernels, compiled at run time by NVRTC through cupy.RawModule.
//
// Same inputs and outputs as the NumPy reference (arith_ref.py) and the numba twin
// (arith_numba.py): uint64 arrays of canonical residues (< q < 2^31), a row -> prime index
// array `rows` (int64), tables indexed [prime * n + i]. Reductions are the twin's: Shoup's
// quotient for constants, a float64-estimated quotient corrected once each way for products
// of two variables, so every kernel returns exactly the twin's residues.
//
// Every kernel is a thin __global__ wrapper around __host__ __device__ bodies: one thread's work,
// or for the two shared-memory kernels one block's schedule of stages (written over an `each`
// functor: see ntt_tail_block). Compiled without __CUDACC__ (the test suite builds it as C++ on
// a machine without a GPU), the bodies are plain functions that tests/crypto/ckks/gpu/
// kernels_host.cpp calls for every thread and block of the launch, so the arithmetic, the
// indexing and the stage loops are checked against the twin bit for bit on any machine; the
// one-line wrappers themselves run only on a GPU.

typedef unsigned long long u64;
typedef unsigned int u32;
typedef long long i64;

#ifdef __CUDACC__
#define HD __host__ __device__ __forceinline__
#define DADD(a, b) __dadd_rn((a), (b))
#define DMUL(a, b) __dmul_rn((a), (b))
#else
#include <cmath>
#define HD inline
#define DADD(a, b) ((a) + (b))
#define DMUL(a, b) ((a) * (b))
#endif

#define MAX_SRC 32

// ---- modular arithmetic ---------------------------------------------------------------------

HD u64 shoup_mul(u64 x, u64 w, u64 ws, u64 q) {
    // x < 2^32, w < q < 2^31, ws = floor(w 2^32 / q): x w - floor(x ws / 2^32) q is in [0, 2q)
    u64 r = x * w - ((x * ws) >> 32) * q;
    return r >= q ? r - q : r;
}

HD u64 mul_mod(u64 a, u64 b, u64 q, double qinv) {
    // a, b < q: p < 2^62; the float64 quotient is off by at most one either way
    u64 p = a * b;
    u64 est = (u64)((double)p * qinv);
    i64 r = (i64)(p - est * q);
    if (r < 0) r += (i64)q;
    else if (r >= (i64)q) r -= (i64)q;
    return (u64)r;
}

HD u64 add_mod(u64 a, u64 b, u64 q) { u64 s = a + b; return s >= q ? s - q : s; }
HD u64 sub_mod(u64 a, u64 b, u64 q) { u64 d = a + q - b; return d >= q ? d - q : d; }

// ---- NTT bodies ---------------------------------------------------------------------------------
// Rows are addressed through a row table `tab` of (row offset, prime index) pairs: row r of a launch
// is a[tab[2r] * n ...] modulo q[tab[2r + 1]], so one launch transforms any set of rows of a buffer
// (every row of a batch, or only the special rows of a key-switching accumulator). The first
// launch of a transform may read from `src` (same offsets) and write to `a`: an out-of-place
// transform costs no extra copy. In place, src == a.
//
// Forward (Cooley-Tukey, bit-reversed output): at the stage with m blocks of 2h coefficients,
// butterfly b (< n/2) of a row is block i = b / h, element j = 2 i h + b % h, twiddle psi[m + i].

HD void ct_butterfly(const u64* in, u64* x, int j, int h, u64 w, u64 ws, u64 q) {
    u64 u = in[j];
    u64 v = shoup_mul(in[j + h], w, ws, q);
    x[j] = add_mod(u, v, q);
    x[j + h] = sub_mod(u, v, q);
}

// Inverse (Gentleman-Sande): block i of the stage with `half` blocks of 2h, twiddle ipsi[half + i].
HD void gs_butterfly(const u64* in, u64* x, int j, int h, u64 w, u64 ws, u64 q) {
    u64 u = in[j];
    u64 v = in[j + h];
    x[j] = add_mod(u, v, q);
    x[j + h] = shoup_mul(u + q - v, w, ws, q);
}

// One thread t (< T) of a block that holds chunk c (2T coefficients) of a row in `s`, at the
// stage with m blocks of 2h (h <= T): the chunk covers stage blocks c T/h .. (c+1) T/h - 1.
HD void ntt_chunk_body(u64* s, int t, int T, i64 c, i64 k, const u64* q, const u64* psi, const u64* psi_sh,
                       int n, int m, int h) {
    int il = t / h;
    int j = 2 * il * h + t % h;
    i64 gi = c * (T / h) + il;
    ct_butterfly(s, s, j, h, psi[k * n + m + gi], psi_sh[k * n + m + gi], q[k]);
}

HD void intt_chunk_body(u64* s, int t, int T, i64 c, i64 k, const u64* q, const u64* ipsi, const u64* ipsi_sh,
                        int n, int half, int h) {
    int il = t / h;
    int j = 2 * il * h + t % h;
    i64 gi = c * (T / h) + il;
    gs_butterfly(s, s, j, h, ipsi[k * n + half + gi], ipsi_sh[k * n + half + gi], q[k]);
}

// ---- shared-memory blocks --------------------------------------------------------------------------
// The NTT's last stages (h = T .. 1) and the inverse's first ones (h = 1 .. T) run on a chunk of
// 2T coefficients of one row in shared memory `s`, one block of T threads, with a barrier
// between stages. A launch has one block per (row, chunk): block b is chunk b % chunks of row
// b / chunks (chunks = n / 2T), so the rows are folded into grid.x (grid.y would cap them at
// 65,535). Each block's schedule is written once, over `each`: each(f) runs f(t) for every
// thread t of the block and then waits for all of them -- on the GPU, f(threadIdx.x) and
// __syncthreads(); in the host harness (kernels_host.cpp), a loop over t.

template <class Each>
HD void ntt_tail_block(Each each, u64* s, i64 b, int T, u64* a, const u64* src, const i64* tab, const u64* q,
                       const u64* psi, const u64* psi_sh, int n, int m0) {
    i64 chunks = n / (2 * T);
    i64 r = b / chunks, c = b % chunks;
    i64 k = tab[2 * r + 1];
    i64 off = tab[2 * r] * n + c * 2 * T;
    u64* x = a + off;
    const u64* xs = src + off;
    each([&](int t) { s[t] = xs[t]; s[t + T] = xs[t + T]; });
    for (int h = T, m = m0; h >= 1; h >>= 1, m <<= 1)
        each([&](int t) { ntt_chunk_body(s, t, T, c, k, q, psi, psi_sh, n, m, h); });
    each([&](int t) { x[t] = s[t]; x[t + T] = s[t + T]; });
}

// With `scale` (no global stage follows) the chunk is also multiplied by n^-1.
template <class Each>
HD void intt_head_block(Each each, u64* s, i64 b, int T, u64* a, const u64* src, const i64* tab, const u64* q,
                        const u64* ipsi, const u64* ipsi_sh, const u64* ninv, const u64* ninv_sh, int n,
                        int scale) {
    i64 chunks = n / (2 * T);
    i64 r = b / chunks, c = b % chunks;
    i64 k = tab[2 * r + 1];
    i64 off = tab[2 * r] * n + c * 2 * T;
    u64* x = a + off;
    const u64* xs = src + off;
    each([&](int t) { s[t] = xs[t]; s[t + T] = xs[t + T]; });
    for (int h = 1, half = n / 2; h <= T; h <<= 1, half >>= 1)
        each([&](int t) { intt_chunk_body(s, t, T, c, k, q, ipsi, ipsi_sh, n, half, h); });
    each([&](int t) {
        if (scale) {
            s[t] = shoup_mul(s[t], ninv[k], ninv_sh[k], q[k]);
            s[t + T] = shoup_mul(s[t + T], ninv[k], ninv_sh[k], q[k]);
        }
        x[t] = s[t];
        x[t + T] = s[t + T];
    });
}

// The NTT's first stages (h = N/2 .. 2T) and the inverse's last ones (h = 2T .. N/2) pair only
// coefficients with equal j mod 2T: column c (< 2T) of a row is the K = N / 2T coefficients
// c + 2T kk. A block holds G = 2T / K consecutive columns (2T words, coefficient (kk, g) at
// s[kk G + g]: loads and stores of G consecutive words) and runs all those stages in shared
// memory, T threads doing one butterfly each per stage. Block b: column block b % K of row b / K
// (K blocks per row, like the chunks of ntt_tail). So a transform is two launches: these stages,
// then the chunked ones.
// Where shared word e of a column block lies in its row (from the block's first column).
HD i64 column_word(int e, int T, int G) { return (e % G) + (i64)2 * T * (e / G); }

// Block b's geometry: K words a column, G columns, its row's prime k, its first word's offset.
struct ColumnBlock {
    int K, G;
    i64 k, off;
};

HD ColumnBlock column_block(i64 b, int T, const i64* tab, int n) {
    ColumnBlock c;
    c.K = n / (2 * T);
    c.G = 2 * T / c.K;
    i64 r = b / c.K;
    c.k = tab[2 * r + 1];
    c.off = tab[2 * r] * n + (b % c.K) * c.G;
    return c;
}

template <class Each>
HD void ntt_upper_block(Each each, u64* s, i64 b, int T, u64* a, const u64* src, const i64* tab, const u64* q,
                        const u64* psi, const u64* psi_sh, int n) {
    ColumnBlock c = column_block(b, T, tab, n);
    int K = c.K, G = c.G;
    i64 k = c.k;
    u64* x = a + c.off;
    const u64* xs = src + c.off;
    each([&](int t) { s[t] = xs[column_word(t, T, G)]; s[t + T] = xs[column_word(t + T, T, G)]; });
    for (int hl = K / 2, m = 1; hl >= 1; hl >>= 1, m <<= 1)
        each([&](int t) {
            int g = t % G, bb = t / G, il = bb / hl;
            int kk = 2 * il * hl + bb % hl;
            ct_butterfly(s + g, s + g, kk * G, hl * G, psi[k * n + m + il], psi_sh[k * n + m + il], q[k]);
        });
    each([&](int t) { x[column_word(t, T, G)] = s[t]; x[column_word(t + T, T, G)] = s[t + T]; });
}

// The inverse's last stages, then the multiplication by n^-1.
template <class Each>
HD void intt_upper_block(Each each, u64* s, i64 b, int T, u64* a, const u64* src, const i64* tab, const u64* q,
                         const u64* ipsi, const u64* ipsi_sh, const u64* ninv, const u64* ninv_sh, int n) {
    ColumnBlock c = column_block(b, T, tab, n);
    int K = c.K, G = c.G;
    i64 k = c.k;
    u64* x = a + c.off;
    const u64* xs = src + c.off;
    each([&](int t) { s[t] = xs[column_word(t, T, G)]; s[t + T] = xs[column_word(t + T, T, G)]; });
    for (int hl = 1, half = K / 2; hl <= K / 2; hl <<= 1, half >>= 1)
        each([&](int t) {
            int g = t % G, bb = t / G, il = bb / hl;
            int kk = 2 * il * hl + bb % hl;
            gs_butterfly(s + g, s + g, kk * G, hl * G, ipsi[k * n + half + il], ipsi_sh[k * n + half + il], q[k]);
        });
    each([&](int t) {
        x[column_word(t, T, G)] = shoup_mul(s[t], ninv[k], ninv_sh[k], q[k]);
        x[column_word(t + T, T, G)] = shoup_mul(s[t + T], ninv[k], ninv_sh[k], q[k]);
    });
}

// ---- elementwise, conversion, key switching, automorphism bodies --------------------------------

HD void add_body(i64 idx, const u64* a, const u64* b, const i64* rows, const u64* q, int n, u64* out) {
    out[idx] = add_mod(a[idx], b[idx], q[rows[idx / n]]);
}

HD void sub_body(i64 idx, const u64* a, const u64* b, const i64* rows, const u64* q, int n, u64* out) {
    out[idx] = sub_mod(a[idx], b[idx], q[rows[idx / n]]);
}

HD void neg_body(i64 idx, const u64* a, const i64* rows, const u64* q, int n, u64* out) {
    u64 x = a[idx];
    out[idx] = x == 0 ? 0 : q[rows[idx / n]] - x;
}

HD void mul_body(i64 idx, const u64* a, const u64* b, const i64* rows, const u64* q, const double* qinv, int n,
                 u64* out) {
    i64 k = rows[idx / n];
    out[idx] = mul_mod(a[idx], b[idx], q[k], qinv[k]);
}

HD void mul_const_body(i64 idx, const u64* a, const u64* c, const u64* c_sh, const i64* rows, const u64* q, int n,
                       u64* out) {
    i64 r = idx / n;
    out[idx] = shoup_mul(a[idx], c[r], c_sh[r], q[rows[r]]);
}

// One coefficient j: y_s = x_s yinv_s mod q_s; out_d = sum_s y_s mat[s, d] mod t_d; with
// use_exact, minus v (Qs mod t_d), v = floor(sum_s y_s (1/q_s) + 1/2) summed in row order
// with round-to-nearest adds and multiplies (no fused multiply-add), as the twin does.
HD void base_convert_body(i64 j, const u64* x, const i64* src, const i64* dst, const u64* yinv, const u64* yinv_sh,
                          const u64* mat, const u64* qmod, int use_exact, const u64* q, const double* qinv,
                          int S, int D, int n, u64* out) {
    u64 y[MAX_SRC];
    double acc = 0.0;
    for (int s = 0; s < S; ++s) {
        y[s] = shoup_mul(x[(i64)s * n + j], yinv[s], yinv_sh[s], q[src[s]]);
        acc = DADD(acc, DMUL((double)y[s], qinv[src[s]]));
    }
    u64 v = use_exact ? (u64)floor(DADD(acc, 0.5)) : 0;
    for (int d = 0; d < D; ++d) {
        i64 k = dst[d];
        u64 t = q[k];
        u64 sum = 0;
        for (int s = 0; s < S; ++s) sum += mul_mod(y[s], mat[(i64)s * D + d], t, qinv[k]);
        u64 r = sum % t;
        if (use_exact) r = sub_mod(r, (v * qmod[d]) % t, t);
        out[(i64)d * n + j] = r;
    }
}

HD void permute_body(i64 idx, const u64* a, const i64* perm, int n, u64* out) {
    i64 base = idx - idx % n;
    out[idx] = a[base + perm[idx % n]];
}

// ---- batched bodies: many conversions, key switches and combinations in one launch -------------

// Job `job` (8 int64 fields) of a multi-job base conversion, coefficient j: the source rows are
// S consecutive rows of x from element x_off (primes sprime[src_off + s], with their yinv); the
// D destination rows are out[out_off + drow[dst_off + d] * n] (primes dprime[dst_off + d]), the
// matrix mat[mat_off + s * D + d], and with `exact` the correction qmod[dst_off + d]. One thread
// is base_convert_body's thread for one job, with the same arithmetic in the same order.
#define JOB_FIELDS 8
HD void conv_job_body(i64 j, const i64* job, const u64* x, const i64* sprime, const u64* yinv,
                      const u64* yinv_sh, const i64* dprime, const i64* drow, const u64* mat, const u64* qmod,
                      const u64* q, const double* qinv, int n, u64* out) {
    i64 x_off = job[0], src_off = job[2], dst_off = job[4], mat_off = job[5], out_off = job[6];
    int S = (int)job[1], D = (int)job[3], use_exact = (int)job[7];
    u64 y[MAX_SRC];
    double acc = 0.0;
    for (int s = 0; s < S; ++s) {
        i64 k = sprime[src_off + s];
        y[s] = shoup_mul(x[x_off + (i64)s * n + j], yinv[src_off + s], yinv_sh[src_off + s], q[k]);
        acc = DADD(acc, DMUL((double)y[s], qinv[k]));
    }
    u64 v = use_exact ? (u64)floor(DADD(acc, 0.5)) : 0;
    for (int d = 0; d < D; ++d) {
        i64 k = dprime[dst_off + d];
        u64 t = q[k];
        u64 sum = 0;
        for (int s = 0; s < S; ++s) sum += mul_mod(y[s], mat[mat_off + (i64)s * D + d], t, qinv[k]);
        u64 r = sum % t;
        if (use_exact) r = sub_mod(r, (v * qmod[dst_off + d]) % t, t);
        out[out_off + drow[dst_off + d] * n + j] = r;
    }
}

// One (item, row p, coefficient j) of the key-switching inner products of many items: item k
// (3 int64: digit set b, key index, permutation index or -1) multiplies the G digits of set b
// (digits: (B, G, QP, n)), read through the Galois permutation if any (hoisting: the rotated
// digits are an index map of the decomposed ones), by key `key` of the stacked key store
// (keys: (NK, GK, 2, KR, n)), row key_rows[p]; out: (K, 2, QP, n). Keys are 32-bit words: every
// residue is below 2^31, and keys are most of a bootstrap's memory (half of it this way).
HD void ks_items_body(i64 idx, const u64* digits, const u32* keys, const i64* perms, const i64* items,
                      const i64* key_rows, const i64* rows, const u64* q, const double* qinv, int G, int QP,
                      int GK, int KR, int n, u64* out) {
    i64 k = idx / ((i64)QP * n);
    i64 p = (idx / n) % QP;
    i64 j = idx % n;
    i64 b = items[3 * k], key = items[3 * k + 1], perm = items[3 * k + 2];
    i64 jj = perm >= 0 ? perms[perm * n + j] : j;
    i64 kq = rows[p];
    u64 t = q[kq];
    double ti = qinv[kq];
    i64 kr = key_rows[p];
    const u32* kbase = keys + key * ((i64)GK * 2 * KR * n);
    u64 acc0 = 0, acc1 = 0;
    for (int g = 0; g < G; ++g) {
        u64 d = digits[((b * G + g) * QP + p) * n + jj];
        acc0 += mul_mod(d, kbase[(((i64)g * 2 + 0) * KR + kr) * n + j], t, ti);
        acc1 += mul_mod(d, kbase[(((i64)g * 2 + 1) * KR + kr) * n + j], t, ti);
    }
    out[((k * 2 + 0) * QP + p) * n + j] = acc0 % t;
    out[((k * 2 + 1) * QP + p) * n + j] = acc1 % t;
}

// One (item i, row r, coefficient j) of the end of a ModDown or a rescale: (a - conv) * c[r]
// (c: P^-1 or q_last^-1 per row, with Shoup quotients), plus, where the item names one, a base
// polynomial read through a Galois permutation (a rotation's permuted c0). Item: (a_off,
// base_off or -1, perm or -1); a and base rows are R consecutive rows from their offsets.
HD void combine_body(i64 idx, const u64* a, const u64* conv, const u64* base, const i64* perms, const i64* items,
                     const i64* rows, const u64* q, const u64* c, const u64* c_sh, int R, int n, u64* out) {
    i64 i = idx / ((i64)R * n);
    i64 r = (idx / n) % R;
    i64 j = idx % n;
    i64 a_off = items[3 * i], base_off = items[3 * i + 1], perm = items[3 * i + 2];
    u64 qq = q[rows[r]];
    u64 v = shoup_mul(sub_mod(a[a_off + r * n + j], conv[idx], qq), c[r], c_sh[r], qq);
    if (base_off >= 0) {
        i64 jj = perm >= 0 ? perms[perm * n + j] : j;
        v = add_mod(v, base[base_off + r * n + jj], qq);
    }
    out[idx] = v;
}

// One (row, coefficient) of sum_t ct_t * pt_t (+ acc): ct_t has CR rows (size x R), pt_t R rows,
// row r of a ciphertext is multiplied by row r % R of the plaintext. Products are canonical,
// their sum (at most MAX_TERMS of them, each < 2^31) is reduced once: the same value as a chain
// of mul and add. Plaintexts are 64-bit words (dot_k) or 32-bit ones (dot32_k: a bootstrap's
// diagonals, held in half the memory -- every residue is below 2^31).
#define MAX_TERMS 16
template <class P>
HD void dot_body(i64 idx, const u64* const* cts, const P* const* pts, int terms, const u64* acc, int use_acc,
                 const i64* rows, const u64* q, const double* qinv, int R, int n, u64* out) {
    i64 row = idx / n;
    i64 j = idx % n;
    i64 pr = row % R;
    i64 k = rows[pr];
    u64 qq = q[k];
    double qi = qinv[k];
    u64 sum = use_acc ? acc[idx] : 0;
    for (int t = 0; t < terms; ++t) sum += mul_mod(cts[t][idx], pts[t][pr * n + j], qq, qi);
    out[idx] = sum % qq;
}

// The tensor product of two size-2 ciphertexts (R rows each part): (a0 b0, a0 b1 + a1 b0, a1 b1).
HD void tensor_body(i64 idx, const u64* a, const u64* b, const i64* rows, const u64* q, const double* qinv, int R,
                    int n, u64* out) {
    i64 part = (i64)R * n;
    i64 k = rows[idx / n];
    u64 qq = q[k];
    double qi = qinv[k];
    u64 a0 = a[idx], a1 = a[part + idx], b0 = b[idx], b1 = b[part + idx];
    out[idx] = mul_mod(a0, b0, qq, qi);
    out[part + idx] = add_mod(mul_mod(a0, b1, qq, qi), mul_mod(a1, b0, qq, qi), qq);
    out[2 * part + idx] = mul_mod(a1, b1, qq, qi);
}

// One (output r, part s, row, coefficient j) of a dense layer of constants: out[r] =
// sum_p c[r, p, row] x[p] (x: (P, S, R, n), c and its Shoup quotients: (R_out, P, R)). Each
// product is canonical, so a sum of P < 2^32 of them fits a u64 and is reduced once.
HD void lincomb_body(i64 idx, const u64* x, const u64* c, const u64* c_sh, const i64* rows, const u64* q, int P,
                     int S, int R, int n, u64* out) {
    i64 j = idx % n;
    i64 row = (idx / n) % R;
    i64 part = (idx / ((i64)R * n)) % S;
    i64 r = idx / ((i64)S * R * n);
    u64 qq = q[rows[row]];
    const u64* cr = c + (r * P) * R + row;
    const u64* cs = c_sh + (r * P) * R + row;
    u64 sum = 0;
    for (int p = 0; p < P; ++p)
        sum += shoup_mul(x[(((i64)p * S + part) * R + row) * n + j], cr[(i64)p * R], cs[(i64)p * R], qq);
    out[idx] = sum % qq;
}

// Element idx of the concatenation of `count` sources of `each` words.
HD void gather_body(i64 idx, const u64* const* src, i64 each, u64* out) {
    out[idx] = src[idx / each][idx % each];
}

// ---- the kernels (GPU only) -----------------------------------------------------------------------
#ifdef __CUDACC__

#define GLOBAL_ID ((i64)blockIdx.x * blockDim.x + threadIdx.x)
// MAX_TERMS pointers passed by value (kernel parameters: captured in a CUDA graph as they are,
// with no table to copy to the device first).
#define PTRS(p) const u64 *p##0, const u64 *p##1, const u64 *p##2, const u64 *p##3, const u64 *p##4, \
    const u64 *p##5, const u64 *p##6, const u64 *p##7, const u64 *p##8, const u64 *p##9, const u64 *p##10, \
    const u64 *p##11, const u64 *p##12, const u64 *p##13, const u64 *p##14, const u64 *p##15
#define PTR_ARRAY(p) {p##0, p##1, p##2, p##3, p##4, p##5, p##6, p##7, p##8, p##9, p##10, p##11, p##12, p##13, \
    p##14, p##15}
#define PTRS32(p) const u32 *p##0, const u32 *p##1, const u32 *p##2, const u32 *p##3, const u32 *p##4, \
    const u32 *p##5, const u32 *p##6, const u32 *p##7, const u32 *p##8, const u32 *p##9, const u32 *p##10, \
    const u32 *p##11, const u32 *p##12, const u32 *p##13, const u32 *p##14, const u32 *p##15

// One thread of a shared-memory block: run this thread's part of each stage, then wait.
struct BlockEach {
    template <class F>
    __device__ void operator()(F f) const {
        f((int)threadIdx.x);
        __syncthreads();
    }
};

// ntt_tail_block / intt_head_block / ntt_upper_block / intt_upper_block over blocks of
// T = blockDim.x threads, 2T words of dynamic shared memory; grid.x = rows * n / (2T).
extern "C" __global__ void ntt_tail(u64* a, const u64* src, const i64* tab, const u64* q, const u64* psi,
                                    const u64* psi_sh, int n, int m0) {
    extern __shared__ u64 s[];
    ntt_tail_block(BlockEach(), s, (i64)blockIdx.x, (int)blockDim.x, a, src, tab, q, psi, psi_sh, n, m0);
}

extern "C" __global__ void intt_head(u64* a, const u64* src, const i64* tab, const u64* q, const u64* ipsi,
                                     const u64* ipsi_sh, const u64* ninv, const u64* ninv_sh, int n, int scale) {
    extern __shared__ u64 s[];
    intt_head_block(BlockEach(), s, (i64)blockIdx.x, (int)blockDim.x, a, src, tab, q, ipsi, ipsi_sh, ninv,
                    ninv_sh, n, scale);
}

extern "C" __global__ void ntt_upper(u64* a, const u64* src, const i64* tab, const u64* q, const u64* psi,
                                     const u64* psi_sh, int n) {
    extern __shared__ u64 s[];
    ntt_upper_block(BlockEach(), s, (i64)blockIdx.x, (int)blockDim.x, a, src, tab, q, psi, psi_sh, n);
}

extern "C" __global__ void intt_upper(u64* a, const u64* src, const i64* tab, const u64* q, const u64* ipsi,
                                      const u64* ipsi_sh, const u64* ninv, const u64* ninv_sh, int n) {
    extern __shared__ u64 s[];
    intt_upper_block(BlockEach(), s, (i64)blockIdx.x, (int)blockDim.x, a, src, tab, q, ipsi, ipsi_sh, ninv, ninv_sh,
                     n);
}

extern "C" __global__ void add_k(const u64* a, const u64* b, const i64* rows, const u64* q, int n, i64 total,
                                 u64* out) {
    i64 idx = GLOBAL_ID;
    if (idx < total) add_body(idx, a, b, rows, q, n, out);
}

extern "C" __global__ void sub_k(const u64* a, const u64* b, const i64* rows, const u64* q, int n, i64 total,
                                 u64* out) {
    i64 idx = GLOBAL_ID;
    if (idx < total) sub_body(idx, a, b, rows, q, n, out);
}

extern "C" __global__ void neg_k(const u64* a, const i64* rows, const u64* q, int n, i64 total, u64* out) {
    i64 idx = GLOBAL_ID;
    if (idx < total) neg_body(idx, a, rows, q, n, out);
}

extern "C" __global__ void mul_k(const u64* a, const u64* b, const i64* rows, const u64* q, const double* qinv,
                                 int n, i64 total, u64* out) {
    i64 idx = GLOBAL_ID;
    if (idx < total) mul_body(idx, a, b, rows, q, qinv, n, out);
}

extern "C" __global__ void mul_const_k(const u64* a, const u64* c, const u64* c_sh, const i64* rows, const u64* q,
                                       int n, i64 total, u64* out) {
    i64 idx = GLOBAL_ID;
    if (idx < total) mul_const_body(idx, a, c, c_sh, rows, q, n, out);
}

extern "C" __global__ void base_convert_k(const u64* x, const i64* src, const i64* dst, const u64* yinv,
                                          const u64* yinv_sh, const u64* mat, const u64* qmod, int use_exact,
                                          const u64* q, const double* qinv, int S, int D, int n, u64* out) {
    i64 j = GLOBAL_ID;
    if (j < n) base_convert_body(j, x, src, dst, yinv, yinv_sh, mat, qmod, use_exact, q, qinv, S, D, n, out);
}

// grid.y = jobs (one job per y: at most 65,535 per launch)
extern "C" __global__ void conv_jobs_k(const u64* x, const i64* jobs, const i64* sprime, const u64* yinv,
                                       const u64* yinv_sh, const i64* dprime, const i64* drow, const u64* mat,
                                       const u64* qmod, const u64* q, const double* qinv, int n, u64* out) {
    i64 j = GLOBAL_ID;
    if (j < n) conv_job_body(j, jobs + (i64)blockIdx.y * JOB_FIELDS, x, sprime, yinv, yinv_sh, dprime, drow, mat,
                             qmod, q, qinv, n, out);
}

extern "C" __global__ void ks_items_k(const u64* digits, const u32* keys, const i64* perms, const i64* items,
                                      const i64* key_rows, const i64* rows, const u64* q, const double* qinv,
                                      int G, int QP, int GK, int KR, int n, i64 total, u64* out) {
    i64 idx = GLOBAL_ID;
    if (idx < total) ks_items_body(idx, digits, keys, perms, items, key_rows, rows, q, qinv, G, QP, GK, KR, n, out);
}

extern "C" __global__ void combine_k(const u64* a, const u64* conv, const u64* base, const i64* perms,
                                     const i64* items, const i64* rows, const u64* q, const u64* c, const u64* c_sh,
                                     int R, int n, i64 total, u64* out) {
    i64 idx = GLOBAL_ID;
    if (idx < total) combine_body(idx, a, conv, base, perms, items, rows, q, c, c_sh, R, n, out);
}

extern "C" __global__ void dot_k(const u64* acc, int use_acc, const i64* rows, const u64* q, const double* qinv,
                                 int R, int n, int terms, i64 total, u64* out, PTRS(c), PTRS(p)) {
    i64 idx = GLOBAL_ID;
    const u64* cts[MAX_TERMS] = PTR_ARRAY(c);
    const u64* pts[MAX_TERMS] = PTR_ARRAY(p);
    if (idx < total) dot_body(idx, cts, pts, terms, acc, use_acc, rows, q, qinv, R, n, out);
}

extern "C" __global__ void dot32_k(const u64* acc, int use_acc, const i64* rows, const u64* q, const double* qinv,
                                   int R, int n, int terms, i64 total, u64* out, PTRS(c), PTRS32(p)) {
    i64 idx = GLOBAL_ID;
    const u64* cts[MAX_TERMS] = PTR_ARRAY(c);
    const u32* pts[MAX_TERMS] = PTR_ARRAY(p);
    if (idx < total) dot_body(idx, cts, pts, terms, acc, use_acc, rows, q, qinv, R, n, out);
}

extern "C" __global__ void tensor_k(const u64* a, const u64* b, const i64* rows, const u64* q, const double* qinv,
                                    int R, int n, i64 total, u64* out) {
    i64 idx = GLOBAL_ID;
    if (idx < total) tensor_body(idx, a, b, rows, q, qinv, R, n, out);
}

extern "C" __global__ void lincomb_k(const u64* x, const u64* c, const u64* c_sh, const i64* rows, const u64* q,
                                     int P, int S, int R, int n, i64 total, u64* out) {
    i64 idx = GLOBAL_ID;
    if (idx < total) lincomb_body(idx, x, c, c_sh, rows, q, P, S, R, n, out);
}

extern "C" __global__ void gather_k(i64 each, i64 total, u64* out, PTRS(s)) {
    i64 idx = GLOBAL_ID;
    const u64* src[MAX_TERMS] = PTR_ARRAY(s);
    if (idx < total) gather_body(idx, src, each, out);
}

extern "C" __global__ void permute_k(const u64* a, const i64* perm, int n, i64 total, u64* out) {
    i64 idx = GLOBAL_ID;
    if (idx < total) permute_body(idx, a, perm, n, out);
}

#endif  // __CUDACC__
