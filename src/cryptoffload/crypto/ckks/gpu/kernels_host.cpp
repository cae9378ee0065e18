// Runs the GPU kernels of kernels.cu on the CPU (the `cuda-host` kernel set: the CPU twin driving
// the GPU's launch code, built by launch.py with a host C++ compiler, without fused multiply-adds:
// -ffp-contract=off), one exported launch_<kernel> per __global__ kernel, taking the launch
// geometry (grid x, grid y, block x) and the kernel's arguments. Two orders of the same work:
//
// * launch_<kernel>_gpu_order: the blocks and threads the GPU would run, one after another, each
//   calling the kernel's very bodies (one thread's body; for the shared-memory NTT kernels the
//   block's schedule, ntt_upper_block ..., with an `each` that runs a stage for every thread of
//   the block before the next starts -- what __syncthreads guarantees on the GPU);
// * launch_<kernel>: what the twin runs -- the same arithmetic (the kernels' shoup_mul, mul_mod,
//   add_mod, sub_mod, the float64 sums in the same order) in a CPU loop order: row by row, each
//   row's words in contiguous loops the compiler vectorises, no index division per word. Every
//   output word is canonical, so it is the same word as the GPU order's (tested, launch by launch
//   and over whole programs); the GPU order runs ~3-50x slower on a CPU. Kernels without a CPU
//   order (base_convert_k, lincomb_k) forward to their GPU order.
#include <cstring>
#include <vector>

#include "kernels.cu"

// A block's threads, one stage at a time: stage f for every thread, then the next (the barrier).
struct HostEach {
    int T;
    template <class F>
    void operator()(F f) const {
        for (int t = 0; t < T; ++t) f(t);
    }
};

#define FOR_THREADS(total) for (i64 idx = 0; idx < (i64)gx * bx && idx < (total); ++idx)
#define PTRS(p) const u64 *p##0, const u64 *p##1, const u64 *p##2, const u64 *p##3, const u64 *p##4, \
    const u64 *p##5, const u64 *p##6, const u64 *p##7, const u64 *p##8, const u64 *p##9, const u64 *p##10, \
    const u64 *p##11, const u64 *p##12, const u64 *p##13, const u64 *p##14, const u64 *p##15
#define PTR_ARRAY(p) {p##0, p##1, p##2, p##3, p##4, p##5, p##6, p##7, p##8, p##9, p##10, p##11, p##12, p##13, \
    p##14, p##15}
#define PTRS32(p) const u32 *p##0, const u32 *p##1, const u32 *p##2, const u32 *p##3, const u32 *p##4, \
    const u32 *p##5, const u32 *p##6, const u32 *p##7, const u32 *p##8, const u32 *p##9, const u32 *p##10, \
    const u32 *p##11, const u32 *p##12, const u32 *p##13, const u32 *p##14, const u32 *p##15
#define PTR_ARGS(p) p##0, p##1, p##2, p##3, p##4, p##5, p##6, p##7, p##8, p##9, p##10, p##11, p##12, p##13, p##14, \
    p##15

// ---- the GPU order ---------------------------------------------------------------------------------
extern "C" {


void launch_ntt_upper_gpu_order(int gx, int gy, int bx, u64* a, const u64* src, const i64* tab, const u64* q,
                      const u64* psi, const u64* psi_sh, int n) {
    std::vector<u64> s(2 * bx);
    for (i64 b = 0; b < gx; ++b) ntt_upper_block(HostEach{bx}, s.data(), b, bx, a, src, tab, q, psi, psi_sh, n);
}

void launch_intt_upper_gpu_order(int gx, int gy, int bx, u64* a, const u64* src, const i64* tab, const u64* q,
                       const u64* ipsi, const u64* ipsi_sh, const u64* ninv, const u64* ninv_sh, int n) {
    std::vector<u64> s(2 * bx);
    for (i64 b = 0; b < gx; ++b)
        intt_upper_block(HostEach{bx}, s.data(), b, bx, a, src, tab, q, ipsi, ipsi_sh, ninv, ninv_sh, n);
}

void launch_ntt_tail_gpu_order(int gx, int gy, int bx, u64* a, const u64* src, const i64* tab, const u64* q, const u64* psi,
                     const u64* psi_sh, int n, int m0) {
    std::vector<u64> s(2 * bx);
    for (int y = 0; y < gy; ++y)   // the kernel reads blockIdx.x only, as here
        for (i64 b = 0; b < gx; ++b)
            ntt_tail_block(HostEach{bx}, s.data(), b, bx, a, src, tab, q, psi, psi_sh, n, m0);
}

void launch_intt_head_gpu_order(int gx, int gy, int bx, u64* a, const u64* src, const i64* tab, const u64* q,
                      const u64* ipsi, const u64* ipsi_sh, const u64* ninv, const u64* ninv_sh, int n, int scale) {
    std::vector<u64> s(2 * bx);
    for (int y = 0; y < gy; ++y)
        for (i64 b = 0; b < gx; ++b)
            intt_head_block(HostEach{bx}, s.data(), b, bx, a, src, tab, q, ipsi, ipsi_sh, ninv, ninv_sh, n, scale);
}

void launch_add_k_gpu_order(int gx, int gy, int bx, const u64* a, const u64* b, const i64* rows, const u64* q, int n,
                  i64 total, u64* out) {
    FOR_THREADS(total) add_body(idx, a, b, rows, q, n, out);
}

void launch_sub_k_gpu_order(int gx, int gy, int bx, const u64* a, const u64* b, const i64* rows, const u64* q, int n,
                  i64 total, u64* out) {
    FOR_THREADS(total) sub_body(idx, a, b, rows, q, n, out);
}

void launch_neg_k_gpu_order(int gx, int gy, int bx, const u64* a, const i64* rows, const u64* q, int n, i64 total,
                  u64* out) {
    FOR_THREADS(total) neg_body(idx, a, rows, q, n, out);
}

void launch_mul_k_gpu_order(int gx, int gy, int bx, const u64* a, const u64* b, const i64* rows, const u64* q,
                  const double* qinv, int n, i64 total, u64* out) {
    FOR_THREADS(total) mul_body(idx, a, b, rows, q, qinv, n, out);
}

void launch_mul_const_k_gpu_order(int gx, int gy, int bx, const u64* a, const u64* c, const u64* c_sh, const i64* rows,
                        const u64* q, int n, i64 total, u64* out) {
    FOR_THREADS(total) mul_const_body(idx, a, c, c_sh, rows, q, n, out);
}

void launch_base_convert_k_gpu_order(int gx, int gy, int bx, const u64* x, const i64* src, const i64* dst, const u64* yinv,
                           const u64* yinv_sh, const u64* mat, const u64* qmod, int use_exact, const u64* q,
                           const double* qinv, int S, int D, int n, u64* out) {
    FOR_THREADS(n) base_convert_body(idx, x, src, dst, yinv, yinv_sh, mat, qmod, use_exact, q, qinv, S, D, n, out);
}

void launch_conv_jobs_k_gpu_order(int gx, int gy, int bx, const u64* x, const i64* jobs, const i64* sprime, const u64* yinv,
                        const u64* yinv_sh, const i64* dprime, const i64* drow, const u64* mat, const u64* qmod,
                        const u64* q, const double* qinv, int n, u64* out) {
    for (int y = 0; y < gy; ++y)
        FOR_THREADS(n) conv_job_body(idx, jobs + (i64)y * JOB_FIELDS, x, sprime, yinv, yinv_sh, dprime, drow, mat,
                                     qmod, q, qinv, n, out);
}

void launch_ks_items_k_gpu_order(int gx, int gy, int bx, const u64* digits, const u32* keys, const i64* perms,
                       const i64* items, const i64* key_rows, const i64* rows, const u64* q, const double* qinv,
                       int G, int QP, int GK, int KR, int n, i64 total, u64* out) {
    FOR_THREADS(total) ks_items_body(idx, digits, keys, perms, items, key_rows, rows, q, qinv, G, QP, GK, KR, n, out);
}

void launch_combine_k_gpu_order(int gx, int gy, int bx, const u64* a, const u64* conv, const u64* base, const i64* perms,
                      const i64* items, const i64* rows, const u64* q, const u64* c, const u64* c_sh, int R, int n,
                      i64 total, u64* out) {
    FOR_THREADS(total) combine_body(idx, a, conv, base, perms, items, rows, q, c, c_sh, R, n, out);
}

void launch_dot_k_gpu_order(int gx, int gy, int bx, const u64* acc, int use_acc, const i64* rows, const u64* q,
                  const double* qinv, int R, int n, int terms, i64 total, u64* out, PTRS(c), PTRS(p)) {
    const u64* cts[MAX_TERMS] = PTR_ARRAY(c);
    const u64* pts[MAX_TERMS] = PTR_ARRAY(p);
    FOR_THREADS(total) dot_body(idx, cts, pts, terms, acc, use_acc, rows, q, qinv, R, n, out);
}

void launch_dot32_k_gpu_order(int gx, int gy, int bx, const u64* acc, int use_acc, const i64* rows, const u64* q,
                  const double* qinv, int R, int n, int terms, i64 total, u64* out, PTRS(c), PTRS32(p)) {
    const u64* cts[MAX_TERMS] = PTR_ARRAY(c);
    const u32* pts[MAX_TERMS] = PTR_ARRAY(p);
    FOR_THREADS(total) dot_body(idx, cts, pts, terms, acc, use_acc, rows, q, qinv, R, n, out);
}

void launch_tensor_k_gpu_order(int gx, int gy, int bx, const u64* a, const u64* b, const i64* rows, const u64* q,
                     const double* qinv, int R, int n, i64 total, u64* out) {
    FOR_THREADS(total) tensor_body(idx, a, b, rows, q, qinv, R, n, out);
}

void launch_lincomb_k_gpu_order(int gx, int gy, int bx, const u64* x, const u64* c, const u64* c_sh, const i64* rows,
                      const u64* q, int P, int S, int R, int n, i64 total, u64* out) {
    FOR_THREADS(total) lincomb_body(idx, x, c, c_sh, rows, q, P, S, R, n, out);
}

void launch_gather_k_gpu_order(int gx, int gy, int bx, i64 each, i64 total, u64* out, PTRS(s)) {
    const u64* src[MAX_TERMS] = PTR_ARRAY(s);
    FOR_THREADS(total) gather_body(idx, src, each, out);
}

void launch_permute_k_gpu_order(int gx, int gy, int bx, const u64* a, const i64* perm, int n, i64 total, u64* out) {
    FOR_THREADS(total) permute_body(idx, a, perm, n, out);
}

}  // extern "C"

// ---- the CPU order: NTTs ----------------------------------------------------------------------------
extern "C" {

// The four NTT launches on the CPU. The GPU's block schedules (*_gpu_order: every block's
// stages over its shared-memory chunk, one thread after another) give the right values but run
// ~10x slower than the CPU allows: their gathers and the per-thread index arithmetic defeat the
// compiler. So a CPU launch does the same stages of the same rows -- ntt_upper the stages with
// h >= 2T (T = block size), ntt_tail the rest; intt_head the first ones, intt_upper the others
// and N^-1 -- row by row, each stage a loop over contiguous runs with one twiddle per run, which
// the compiler vectorises. Every butterfly returns canonical residues (ct_stage / gs_stage use
// the kernels' own shoup_mul, add_mod and sub_mod), so each launch's output is the mathematically
// determined value, the same word for word as the GPU's (tested against the GPU order).

// Stages with short runs (h < 8) loop over the runs inside: consecutive runs have consecutive
// twiddles, so the inner loop is long and reads the twiddles in order (strided data).
static void ct_stage(u64* __restrict x, i64 m, i64 h, const u64* __restrict w, const u64* __restrict ws, u64 q) {
    if (h < 8) {
        for (i64 j = 0; j < h; ++j)
            for (i64 i = 0; i < m; ++i) {
                u64* lo = x + 2 * i * h + j;
                u64 u = lo[0];
                u64 v = shoup_mul(lo[h], w[m + i], ws[m + i], q);
                lo[0] = add_mod(u, v, q);
                lo[h] = sub_mod(u, v, q);
            }
        return;
    }
    for (i64 i = 0; i < m; ++i) {
        u64 wi = w[m + i], wsi = ws[m + i];
        u64* __restrict lo = x + 2 * i * h;
        u64* __restrict hi = lo + h;
        for (i64 j = 0; j < h; ++j) {
            u64 u = lo[j];
            u64 v = shoup_mul(hi[j], wi, wsi, q);
            lo[j] = add_mod(u, v, q);
            hi[j] = sub_mod(u, v, q);
        }
    }
}

static void gs_stage(u64* __restrict x, i64 half, i64 h, const u64* __restrict w, const u64* __restrict ws, u64 q) {
    if (h < 8) {
        for (i64 j = 0; j < h; ++j)
            for (i64 i = 0; i < half; ++i) {
                u64* lo = x + 2 * i * h + j;
                u64 u = lo[0], v = lo[h];
                lo[0] = add_mod(u, v, q);
                lo[h] = shoup_mul(u + q - v, w[half + i], ws[half + i], q);
            }
        return;
    }
    for (i64 i = 0; i < half; ++i) {
        u64 wi = w[half + i], wsi = ws[half + i];
        u64* __restrict lo = x + 2 * i * h;
        u64* __restrict hi = lo + h;
        for (i64 j = 0; j < h; ++j) {
            u64 u = lo[j], v = hi[j];
            lo[j] = add_mod(u, v, q);
            hi[j] = shoup_mul(u + q - v, wi, wsi, q);
        }
    }
}

// The forward transform's last three stages (h = 4, 2, 1: m = n/8, n/4, n/2) and the inverse's
// first three, fused: each block of 8 words goes through its 12 butterflies in registers (the
// short runs would otherwise be strided loops; 3.4x faster here). Same butterflies, same order
// within each pair, so the same words.
static inline void ct_pair(u64& a, u64& b, u64 w, u64 ws, u64 q) {
    u64 u = a, v = shoup_mul(b, w, ws, q);
    a = add_mod(u, v, q);
    b = sub_mod(u, v, q);
}

static inline void gs_pair(u64& a, u64& b, u64 w, u64 ws, u64 q) {
    u64 u = a, v = b;
    a = add_mod(u, v, q);
    b = shoup_mul(u + q - v, w, ws, q);
}

static void ct_last3(u64* __restrict x, i64 n, const u64* __restrict w, const u64* __restrict ws, u64 q) {
    i64 m = n / 8;
    for (i64 i = 0; i < m; ++i) {
        u64* b = x + 8 * i;
        u64 v0 = b[0], v1 = b[1], v2 = b[2], v3 = b[3], v4 = b[4], v5 = b[5], v6 = b[6], v7 = b[7];
        u64 w0 = w[m + i], s0 = ws[m + i];
        ct_pair(v0, v4, w0, s0, q); ct_pair(v1, v5, w0, s0, q); ct_pair(v2, v6, w0, s0, q); ct_pair(v3, v7, w0, s0, q);
        const u64 *W = w + 2 * m + 2 * i, *S = ws + 2 * m + 2 * i;
        ct_pair(v0, v2, W[0], S[0], q); ct_pair(v1, v3, W[0], S[0], q);
        ct_pair(v4, v6, W[1], S[1], q); ct_pair(v5, v7, W[1], S[1], q);
        W = w + 4 * m + 4 * i;
        S = ws + 4 * m + 4 * i;
        ct_pair(v0, v1, W[0], S[0], q); ct_pair(v2, v3, W[1], S[1], q);
        ct_pair(v4, v5, W[2], S[2], q); ct_pair(v6, v7, W[3], S[3], q);
        b[0] = v0; b[1] = v1; b[2] = v2; b[3] = v3; b[4] = v4; b[5] = v5; b[6] = v6; b[7] = v7;
    }
}

static void gs_first3(u64* __restrict x, i64 n, const u64* __restrict w, const u64* __restrict ws, u64 q) {
    i64 m = n / 8;
    for (i64 i = 0; i < m; ++i) {
        u64* b = x + 8 * i;
        u64 v0 = b[0], v1 = b[1], v2 = b[2], v3 = b[3], v4 = b[4], v5 = b[5], v6 = b[6], v7 = b[7];
        const u64 *W = w + 4 * m + 4 * i, *S = ws + 4 * m + 4 * i;
        gs_pair(v0, v1, W[0], S[0], q); gs_pair(v2, v3, W[1], S[1], q);
        gs_pair(v4, v5, W[2], S[2], q); gs_pair(v6, v7, W[3], S[3], q);
        W = w + 2 * m + 2 * i;
        S = ws + 2 * m + 2 * i;
        gs_pair(v0, v2, W[0], S[0], q); gs_pair(v1, v3, W[0], S[0], q);
        gs_pair(v4, v6, W[1], S[1], q); gs_pair(v5, v7, W[1], S[1], q);
        u64 w0 = w[m + i], s0 = ws[m + i];
        gs_pair(v0, v4, w0, s0, q); gs_pair(v1, v5, w0, s0, q); gs_pair(v2, v6, w0, s0, q); gs_pair(v3, v7, w0, s0, q);
        b[0] = v0; b[1] = v1; b[2] = v2; b[3] = v3; b[4] = v4; b[5] = v5; b[6] = v6; b[7] = v7;
    }
}

static void scale_row(u64* __restrict x, int n, u64 c, u64 cs, u64 q) {
    for (int j = 0; j < n; ++j) x[j] = shoup_mul(x[j], c, cs, q);
}

// Row r of a launch: its words (copied from src first when the launch is out of place) and prime.
static u64* launch_row(u64* a, const u64* src, const i64* tab, i64 r, int n, i64* k) {
    *k = tab[2 * r + 1];
    u64* x = a + tab[2 * r] * n;
    const u64* xs = src + tab[2 * r] * n;
    if (xs != x) for (int j = 0; j < n; ++j) x[j] = xs[j];
    return x;
}

// Forward stages m = m_from .. m_to - 1 (h = n / 2m) of every row of a launch of `gx` blocks.
static void ntt_rows(int gx, int bx, u64* a, const u64* src, const i64* tab, const u64* q, const u64* psi,
                     const u64* psi_sh, int n, i64 m_from, i64 m_to) {
    i64 rows = (i64)gx / (n / (2 * bx));
    for (i64 r = 0; r < rows; ++r) {
        i64 k;
        u64* x = launch_row(a, src, tab, r, n, &k);
        const u64 *w = psi + k * n, *ws = psi_sh + k * n;
        bool fuse = m_to == n && m_from <= n / 8 && n >= 8;   // the last three stages are this launch's
        for (i64 m = m_from; m < (fuse ? n / 8 : m_to); m <<= 1) ct_stage(x, m, n / (2 * m), w, ws, q[k]);
        if (fuse) ct_last3(x, n, w, ws, q[k]);
    }
}

// Inverse stages with half = half_from .. half_to + 1 blocks (h = n / 2 half), then N^-1 if asked.
static void intt_rows(int gx, int bx, u64* a, const u64* src, const i64* tab, const u64* q, const u64* ipsi,
                      const u64* ipsi_sh, const u64* ninv, const u64* ninv_sh, int n, i64 half_from, i64 half_to,
                      int scale) {
    i64 rows = (i64)gx / (n / (2 * bx));
    for (i64 r = 0; r < rows; ++r) {
        i64 k;
        u64* x = launch_row(a, src, tab, r, n, &k);
        const u64 *w = ipsi + k * n, *ws = ipsi_sh + k * n;
        i64 half = half_from;
        if (half_from == n / 2 && half_to < n / 8 && n >= 8) {   // the first three stages are this launch's
            gs_first3(x, n, w, ws, q[k]);
            half = n / 16;
        }
        for (; half > half_to; half >>= 1) gs_stage(x, half, n / (2 * half), w, ws, q[k]);
        if (scale) scale_row(x, n, ninv[k], ninv_sh[k], q[k]);
    }
}

void launch_ntt_upper(int gx, int gy, int bx, u64* a, const u64* src, const i64* tab, const u64* q,
                      const u64* psi, const u64* psi_sh, int n) {
    ntt_rows(gx, bx, a, src, tab, q, psi, psi_sh, n, 1, n / (2 * bx));
}

void launch_ntt_tail(int gx, int gy, int bx, u64* a, const u64* src, const i64* tab, const u64* q, const u64* psi,
                     const u64* psi_sh, int n, int m0) {
    ntt_rows(gx, bx, a, src, tab, q, psi, psi_sh, n, m0, n);
}

void launch_intt_head(int gx, int gy, int bx, u64* a, const u64* src, const i64* tab, const u64* q,
                      const u64* ipsi, const u64* ipsi_sh, const u64* ninv, const u64* ninv_sh, int n, int scale) {
    intt_rows(gx, bx, a, src, tab, q, ipsi, ipsi_sh, ninv, ninv_sh, n, n / 2, n / (4 * bx), scale);
}

void launch_intt_upper(int gx, int gy, int bx, u64* a, const u64* src, const i64* tab, const u64* q,
                       const u64* ipsi, const u64* ipsi_sh, const u64* ninv, const u64* ninv_sh, int n) {
    intt_rows(gx, bx, a, src, tab, q, ipsi, ipsi_sh, ninv, ninv_sh, n, n / (4 * bx), 0, 1);
}


// ---- the CPU order: conversions and key-switching products -------------------------------------------
// conv_jobs_k and ks_items_k on the CPU: each GPU thread is one coefficient, whose sums the CPU
// would run one after another with an index computation per term; here a block of CPU_BLOCK
// coefficients goes through each step together, so the loops over the block vectorise. The
// arithmetic per coefficient is the kernels' own, in the same order (shoup_mul, mul_mod, the
// float64 sum of the exact conversion); the final `sum % t` of a sum below 2^37 is reduce_sum,
// the same canonical remainder without a division. Tested against the GPU order.
#define CPU_BLOCK 256

// x mod t for any 64-bit x and t < 2^31 (mul_mod without its product): the float64 quotient of a
// 64-bit x is off by at most one either way, so one correction gives the canonical residue. Lets
// the CPU order sum up to four raw products (each < 2^62) before reducing: LAZY terms at a time.
#define LAZY 4
static inline u64 reduce64(u64 x, u64 t, double tinv) {
    u64 est = (u64)((double)x * tinv);
    i64 r = (i64)(x - est * t);
    if (r < 0) r += (i64)t;
    else if (r >= (i64)t) r -= (i64)t;
    return (u64)r;
}

// x mod t for x < 2^52: the float64 quotient is off by at most one either way.
static inline u64 reduce_sum(u64 x, u64 t, double tinv) {
    u64 est = (u64)((double)x * tinv);
    i64 r = (i64)(x - est * t);
    if (r < 0) r += (i64)t;
    else if (r >= (i64)t) r -= (i64)t;
    return (u64)r;
}

static void conv_job_cpu(const i64* job, const u64* x, const i64* sprime, const u64* yinv, const u64* yinv_sh,
                         const i64* dprime, const i64* drow, const u64* mat, const u64* qmod, const u64* q,
                         const double* qinv, int n, u64* out) {
    i64 x_off = job[0], src_off = job[2], dst_off = job[4], mat_off = job[5], out_off = job[6];
    int S = (int)job[1], D = (int)job[3], use_exact = (int)job[7];
    static thread_local u64 y[MAX_SRC][CPU_BLOCK];
    u64 v[CPU_BLOCK], sum[CPU_BLOCK];
    double acc[CPU_BLOCK];
    for (int j0 = 0; j0 < n; j0 += CPU_BLOCK) {
        int B = n - j0 < CPU_BLOCK ? n - j0 : CPU_BLOCK;
        for (int b = 0; b < B; ++b) acc[b] = 0.0;
        for (int s = 0; s < S; ++s) {
            i64 k = sprime[src_off + s];
            u64 w = yinv[src_off + s], ws = yinv_sh[src_off + s], qk = q[k];
            double qi = qinv[k];
            const u64* xs = x + x_off + (i64)s * n + j0;
            for (int b = 0; b < B; ++b) {
                y[s][b] = shoup_mul(xs[b], w, ws, qk);
                acc[b] = DADD(acc[b], DMUL((double)y[s][b], qi));
            }
        }
        for (int b = 0; b < B; ++b) v[b] = use_exact ? (u64)floor(DADD(acc[b], 0.5)) : 0;
        for (int d = 0; d < D; ++d) {
            i64 k = dprime[dst_off + d];
            u64 t = q[k];
            double ti = qinv[k];
            for (int b = 0; b < B; ++b) sum[b] = 0;
            for (int s0 = 0; s0 < S; s0 += LAZY) {           // raw products, reduced every LAZY terms
                int s1 = s0 + LAZY < S ? s0 + LAZY : S;
                u64 raw[CPU_BLOCK];
                for (int b = 0; b < B; ++b) raw[b] = 0;
                for (int s = s0; s < s1; ++s) {
                    u64 m = mat[mat_off + (i64)s * D + d];
                    for (int b = 0; b < B; ++b) raw[b] += y[s][b] * m;
                }
                for (int b = 0; b < B; ++b) sum[b] += reduce64(raw[b], t, ti);
            }
            u64* o = out + out_off + drow[dst_off + d] * n + j0;
            u64 qm = qmod[dst_off + d];
            for (int b = 0; b < B; ++b) {
                u64 r = reduce_sum(sum[b], t, ti);
                o[b] = use_exact ? sub_mod(r, reduce_sum(v[b] * qm, t, ti), t) : r;
            }
        }
    }
}

void launch_conv_jobs_k(int gx, int gy, int bx, const u64* x, const i64* jobs, const i64* sprime, const u64* yinv,
                        const u64* yinv_sh, const i64* dprime, const i64* drow, const u64* mat, const u64* qmod,
                        const u64* q, const double* qinv, int n, u64* out) {
    for (int y = 0; y < gy; ++y)
        conv_job_cpu(jobs + (i64)y * JOB_FIELDS, x, sprime, yinv, yinv_sh, dprime, drow, mat, qmod, q, qinv, n, out);
}

void launch_ks_items_k(int gx, int gy, int bx, const u64* digits, const u32* keys, const i64* perms,
                       const i64* items, const i64* key_rows, const i64* rows, const u64* q, const double* qinv,
                       int G, int QP, int GK, int KR, int n, i64 total, u64* out) {
    i64 count = total / ((i64)QP * n);
    u64 d[CPU_BLOCK], acc0[CPU_BLOCK], acc1[CPU_BLOCK];
    for (i64 it = 0; it < count; ++it) {
        i64 b = items[3 * it], key = items[3 * it + 1], perm = items[3 * it + 2];
        const u32* kbase = keys + key * ((i64)GK * 2 * KR * n);
        for (int p = 0; p < QP; ++p) {
            i64 kq = rows[p], kr = key_rows[p];
            u64 t = q[kq];
            double ti = qinv[kq];
            u64* o0 = out + ((it * 2 + 0) * QP + p) * n;
            u64* o1 = out + ((it * 2 + 1) * QP + p) * n;
            for (int j0 = 0; j0 < n; j0 += CPU_BLOCK) {
                int B = n - j0 < CPU_BLOCK ? n - j0 : CPU_BLOCK;
                for (int c = 0; c < B; ++c) acc0[c] = acc1[c] = 0;
                for (int g0 = 0; g0 < G; g0 += LAZY) {           // raw products, reduced every LAZY digits
                    int g1 = g0 + LAZY < G ? g0 + LAZY : G;
                    u64 raw0[CPU_BLOCK], raw1[CPU_BLOCK];
                    for (int c = 0; c < B; ++c) raw0[c] = raw1[c] = 0;
                    for (int g = g0; g < g1; ++g) {
                        const u64* dig = digits + ((b * G + g) * QP + p) * n;
                        const u32* k0 = kbase + (((i64)g * 2 + 0) * KR + kr) * n + j0;
                        const u32* k1 = kbase + (((i64)g * 2 + 1) * KR + kr) * n + j0;
                        if (perm >= 0) for (int c = 0; c < B; ++c) d[c] = dig[perms[perm * n + j0 + c]];
                        else for (int c = 0; c < B; ++c) d[c] = dig[j0 + c];
                        for (int c = 0; c < B; ++c) {
                            raw0[c] += d[c] * (u64)k0[c];
                            raw1[c] += d[c] * (u64)k1[c];
                        }
                    }
                    for (int c = 0; c < B; ++c) {
                        acc0[c] += reduce64(raw0[c], t, ti);
                        acc1[c] += reduce64(raw1[c], t, ti);
                    }
                }
                for (int c = 0; c < B; ++c) {
                    o0[j0 + c] = reduce_sum(acc0[c], t, ti);
                    o1[j0 + c] = reduce_sum(acc1[c], t, ti);
                }
            }
        }
    }
}


// ---- the CPU order: element-wise kernels, row by row -------------------------------------------------
#define FOR_ROWS(total) for (i64 r = 0, rows_ = (total) / n; r < rows_; ++r)

void launch_add_k(int gx, int gy, int bx, const u64* a, const u64* b, const i64* rows, const u64* q, int n,
                  i64 total, u64* out) {
    FOR_ROWS(total) {
        u64 qq = q[rows[r]];
        const u64 *x = a + r * n, *y = b + r * n;
        u64* o = out + r * n;
        for (int j = 0; j < n; ++j) o[j] = add_mod(x[j], y[j], qq);
    }
}

void launch_sub_k(int gx, int gy, int bx, const u64* a, const u64* b, const i64* rows, const u64* q, int n,
                  i64 total, u64* out) {
    FOR_ROWS(total) {
        u64 qq = q[rows[r]];
        const u64 *x = a + r * n, *y = b + r * n;
        u64* o = out + r * n;
        for (int j = 0; j < n; ++j) o[j] = sub_mod(x[j], y[j], qq);
    }
}

void launch_neg_k(int gx, int gy, int bx, const u64* a, const i64* rows, const u64* q, int n, i64 total,
                  u64* out) {
    FOR_ROWS(total) {
        u64 qq = q[rows[r]];
        const u64* x = a + r * n;
        u64* o = out + r * n;
        for (int j = 0; j < n; ++j) o[j] = x[j] == 0 ? 0 : qq - x[j];
    }
}

void launch_mul_k(int gx, int gy, int bx, const u64* a, const u64* b, const i64* rows, const u64* q,
                  const double* qinv, int n, i64 total, u64* out) {
    FOR_ROWS(total) {
        i64 k = rows[r];
        u64 qq = q[k];
        double qi = qinv[k];
        const u64 *x = a + r * n, *y = b + r * n;
        u64* o = out + r * n;
        for (int j = 0; j < n; ++j) o[j] = mul_mod(x[j], y[j], qq, qi);
    }
}

void launch_mul_const_k(int gx, int gy, int bx, const u64* a, const u64* c, const u64* c_sh, const i64* rows,
                        const u64* q, int n, i64 total, u64* out) {
    FOR_ROWS(total) {
        u64 qq = q[rows[r]], w = c[r], ws = c_sh[r];
        const u64* x = a + r * n;
        u64* o = out + r * n;
        for (int j = 0; j < n; ++j) o[j] = shoup_mul(x[j], w, ws, qq);
    }
}

void launch_permute_k(int gx, int gy, int bx, const u64* a, const i64* perm, int n, i64 total, u64* out) {
    FOR_ROWS(total) {
        const u64* x = a + r * n;
        u64* o = out + r * n;
        for (int j = 0; j < n; ++j) o[j] = x[perm[j]];
    }
}

void launch_gather_k(int gx, int gy, int bx, i64 each, i64 total, u64* out, PTRS(s)) {
    const u64* src[MAX_TERMS] = PTR_ARRAY(s);
    for (i64 t = 0; t * each < total; ++t) std::memcpy(out + t * each, src[t], (size_t)each * sizeof(u64));
}

// ---- the CPU order: ModDown's end, products -----------------------------------------------------------

void launch_combine_k(int gx, int gy, int bx, const u64* a, const u64* conv, const u64* base, const i64* perms,
                      const i64* items, const i64* rows, const u64* q, const u64* c, const u64* c_sh, int R, int n,
                      i64 total, u64* out) {
    for (i64 i = 0; i * R * n < total; ++i) {
        i64 a_off = items[3 * i], base_off = items[3 * i + 1], perm = items[3 * i + 2];
        for (int r = 0; r < R; ++r) {
            u64 qq = q[rows[r]], w = c[r], ws = c_sh[r];
            const u64* x = a + a_off + (i64)r * n;
            const u64* cv = conv + (i * R + r) * n;
            u64* o = out + (i * R + r) * n;
            for (int j = 0; j < n; ++j) o[j] = shoup_mul(sub_mod(x[j], cv[j], qq), w, ws, qq);
            if (base_off < 0) continue;
            const u64* br = base + base_off + (i64)r * n;
            if (perm >= 0) {
                const i64* pm = perms + perm * n;
                for (int j = 0; j < n; ++j) o[j] = add_mod(o[j], br[pm[j]], qq);
            } else {
                for (int j = 0; j < n; ++j) o[j] = add_mod(o[j], br[j], qq);
            }
        }
    }
}

}  // extern "C": a template has C++ linkage

template <class P>
static void dot_cpu(const u64* acc, int use_acc, const i64* rows, const u64* q, const double* qinv, int R, int n,
                    int terms, i64 total, u64* out, const u64* const* cts, const P* const* pts) {
    u64 sum[CPU_BLOCK];
    FOR_ROWS(total) {
        i64 pr = r % R, k = rows[pr];
        u64 qq = q[k];
        double qi = qinv[k];
        for (int j0 = 0; j0 < n; j0 += CPU_BLOCK) {
            int B = n - j0 < CPU_BLOCK ? n - j0 : CPU_BLOCK;
            i64 at = r * n + j0;
            for (int b = 0; b < B; ++b) sum[b] = use_acc ? acc[at + b] : 0;
            for (int t0 = 0; t0 < terms; t0 += LAZY) {           // raw products, reduced every LAZY terms
                int t1 = t0 + LAZY < terms ? t0 + LAZY : terms;
                u64 raw[CPU_BLOCK];
                for (int b = 0; b < B; ++b) raw[b] = 0;
                for (int t = t0; t < t1; ++t) {
                    const u64* ct = cts[t] + at;
                    const P* pt = pts[t] + pr * n + j0;
                    for (int b = 0; b < B; ++b) raw[b] += ct[b] * (u64)pt[b];
                }
                for (int b = 0; b < B; ++b) sum[b] += reduce64(raw[b], qq, qi);
            }
            for (int b = 0; b < B; ++b) out[at + b] = reduce_sum(sum[b], qq, qi);
        }
    }
}

extern "C" {

void launch_dot_k(int gx, int gy, int bx, const u64* acc, int use_acc, const i64* rows, const u64* q,
                  const double* qinv, int R, int n, int terms, i64 total, u64* out, PTRS(c), PTRS(p)) {
    const u64* cts[MAX_TERMS] = PTR_ARRAY(c);
    const u64* pts[MAX_TERMS] = PTR_ARRAY(p);
    dot_cpu(acc, use_acc, rows, q, qinv, R, n, terms, total, out, cts, pts);
}

void launch_dot32_k(int gx, int gy, int bx, const u64* acc, int use_acc, const i64* rows, const u64* q,
                    const double* qinv, int R, int n, int terms, i64 total, u64* out, PTRS(c), PTRS32(p)) {
    const u64* cts[MAX_TERMS] = PTR_ARRAY(c);
    const u32* pts[MAX_TERMS] = PTR_ARRAY(p);
    dot_cpu(acc, use_acc, rows, q, qinv, R, n, terms, total, out, cts, pts);
}

void launch_tensor_k(int gx, int gy, int bx, const u64* a, const u64* b, const i64* rows, const u64* q,
                     const double* qinv, int R, int n, i64 total, u64* out) {
    i64 part = (i64)R * n;
    FOR_ROWS(total) {
        i64 k = rows[r];
        u64 qq = q[k];
        double qi = qinv[k];
        for (int j = 0; j < n; ++j) {
            i64 idx = r * n + j;
            u64 a0 = a[idx], a1 = a[part + idx], b0 = b[idx], b1 = b[part + idx];
            out[idx] = mul_mod(a0, b0, qq, qi);
            out[part + idx] = add_mod(mul_mod(a0, b1, qq, qi), mul_mod(a1, b0, qq, qi), qq);
            out[2 * part + idx] = mul_mod(a1, b1, qq, qi);
        }
    }
}

// ---- kernels with no CPU order of their own ---------------------------------------------------------

void launch_base_convert_k(int gx, int gy, int bx, const u64* x, const i64* src, const i64* dst, const u64* yinv,
                           const u64* yinv_sh, const u64* mat, const u64* qmod, int use_exact, const u64* q,
                           const double* qinv, int S, int D, int n, u64* out) {
    launch_base_convert_k_gpu_order(gx, gy, bx, x, src, dst, yinv, yinv_sh, mat, qmod, use_exact, q, qinv, S, D, n,
                                    out);
}

void launch_lincomb_k(int gx, int gy, int bx, const u64* x, const u64* c, const u64* c_sh, const i64* rows,
                      const u64* q, int P, int S, int R, int n, i64 total, u64* out) {
    launch_lincomb_k_gpu_order(gx, gy, bx, x, c, c_sh, rows, q, P, S, R, n, total, out);
}

}  // extern "C"
