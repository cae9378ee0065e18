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
// Forward (Cooley-Tukey, bit-reversed output): at the stage with m blocks of 2h coefficients,
// butterfly b (< n/2) of a row is block i = b / h, element j = 2 i h + b % h, twiddle psi[m + i].

HD void ct_butterfly(u64* x, int j, int h, u64 w, u64 ws, u64 q) {
    u64 u = x[j];
    u64 v = shoup_mul(x[j + h], w, ws, q);
    x[j] = add_mod(u, v, q);
    x[j + h] = sub_mod(u, v, q);
}

// Inverse (Gentleman-Sande): block i of the stage with `half` blocks of 2h, twiddle ipsi[half + i].
HD void gs_butterfly(u64* x, int j, int h, u64 w, u64 ws, u64 q) {
    u64 u = x[j];
    u64 v = x[j + h];
    x[j] = add_mod(u, v, q);
    x[j + h] = shoup_mul(u + q - v, w, ws, q);
}

HD void ntt_stage_body(i64 tid, u64* a, const i64* rows, const u64* q, const u64* psi, const u64* psi_sh,
                       int n, int m, int h) {
    i64 r = tid / (n / 2);
    int b = (int)(tid % (n / 2));
    int i = b / h;
    int j = 2 * i * h + b % h;
    i64 k = rows[r];
    ct_butterfly(a + r * n, j, h, psi[k * n + m + i], psi_sh[k * n + m + i], q[k]);
}

HD void intt_stage_body(i64 tid, u64* a, const i64* rows, const u64* q, const u64* ipsi, const u64* ipsi_sh,
                        const u64* ninv, const u64* ninv_sh, int n, int half, int h, int scale) {
    i64 r = tid / (n / 2);
    int b = (int)(tid % (n / 2));
    int i = b / h;
    int j = 2 * i * h + b % h;
    i64 k = rows[r];
    u64 qq = q[k];
    u64* x = a + r * n;
    gs_butterfly(x, j, h, ipsi[k * n + half + i], ipsi_sh[k * n + half + i], qq);
    if (scale) {  // the last stage also multiplies by n^-1
        x[j] = shoup_mul(x[j], ninv[k], ninv_sh[k], qq);
        x[j + h] = shoup_mul(x[j + h], ninv[k], ninv_sh[k], qq);
    }
}

// One thread t (< T) of a block that holds chunk c (2T coefficients) of a row in `s`, at the
// stage with m blocks of 2h (h <= T): the chunk covers stage blocks c T/h .. (c+1) T/h - 1.
HD void ntt_chunk_body(u64* s, int t, int T, i64 c, i64 k, const u64* q, const u64* psi, const u64* psi_sh,
                       int n, int m, int h) {
    int il = t / h;
    int j = 2 * il * h + t % h;
    i64 gi = c * (T / h) + il;
    ct_butterfly(s, j, h, psi[k * n + m + gi], psi_sh[k * n + m + gi], q[k]);
}

HD void intt_chunk_body(u64* s, int t, int T, i64 c, i64 k, const u64* q, const u64* ipsi, const u64* ipsi_sh,
                        int n, int half, int h) {
    int il = t / h;
    int j = 2 * il * h + t % h;
    i64 gi = c * (T / h) + il;
    gs_butterfly(s, j, h, ipsi[k * n + half + gi], ipsi_sh[k * n + half + gi], q[k]);
}

// ---- shared-memory blocks --------------------------------------------------------------------------
// The NTT's last stages (h = T .. 1) and the inverse's first ones (h = 1 .. T) run on a chunk of
// 2T coefficients of one row in shared memory `s`, one block of T threads, with a barrier
// between stages. A launch has one block per (row, chunk): block b is chunk b % chunks of row
// b / chunks (chunks = n / 2T), so the rows are folded into grid.x (grid.y would cap them at
// 65,535). Each block's schedule is written once, over `each`: each(f) runs f(t) for every
// thread t of the block and then waits for all of them -- on the GPU, f(threadIdx.x) and
// __syncthreads(); in the host harness, a loop over t.

template <class Each>
HD void ntt_tail_block(Each each, u64* s, i64 b, int T, u64* a, const i64* rows, const u64* q, const u64* psi,
                       const u64* psi_sh, int n, int m0) {
    i64 chunks = n / (2 * T);
    i64 r = b / chunks, c = b % chunks;
    i64 k = rows[r];
    u64* x = a + r * n + c * 2 * T;
    each([&](int t) { s[t] = x[t]; s[t + T] = x[t + T]; });
    for (int h = T, m = m0; h >= 1; h >>= 1, m <<= 1)
        each([&](int t) { ntt_chunk_body(s, t, T, c, k, q, psi, psi_sh, n, m, h); });
    each([&](int t) { x[t] = s[t]; x[t + T] = s[t + T]; });
}

// With `scale` (no global stage follows) the chunk is also multiplied by n^-1.
template <class Each>
HD void intt_head_block(Each each, u64* s, i64 b, int T, u64* a, const i64* rows, const u64* q, const u64* ipsi,
                        const u64* ipsi_sh, const u64* ninv, const u64* ninv_sh, int n, int scale) {
    i64 chunks = n / (2 * T);
    i64 r = b / chunks, c = b % chunks;
    i64 k = rows[r];
    u64* x = a + r * n + c * 2 * T;
    each([&](int t) { s[t] = x[t]; s[t + T] = x[t + T]; });
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

// One (row r, coefficient j) of out[c] = sum_g digits[g] key[g, c, key_rows[r]] (c = 0, 1).
HD void ks_inner_body(i64 idx, const u64* digits, const u64* key, const i64* key_rows, const i64* rows,
                      const u64* q, const double* qinv, int G, int R, int K, int n, u64* out) {
    i64 r = idx / n;
    i64 j = idx % n;
    i64 k = rows[r];
    u64 t = q[k];
    double ti = qinv[k];
    i64 kr = key_rows[r];
    u64 acc0 = 0, acc1 = 0;
    for (int g = 0; g < G; ++g) {
        u64 d = digits[((i64)g * R + r) * n + j];
        acc0 += mul_mod(d, key[(((i64)g * 2 + 0) * K + kr) * n + j], t, ti);
        acc1 += mul_mod(d, key[(((i64)g * 2 + 1) * K + kr) * n + j], t, ti);
    }
    out[r * n + j] = acc0 % t;
    out[((i64)R + r) * n + j] = acc1 % t;
}

HD void permute_body(i64 idx, const u64* a, const i64* perm, int n, u64* out) {
    i64 base = idx - idx % n;
    out[idx] = a[base + perm[idx % n]];
}

// ---- the kernels (GPU only) -----------------------------------------------------------------------
#ifdef __CUDACC__

#define GLOBAL_ID ((i64)blockIdx.x * blockDim.x + threadIdx.x)

extern "C" __global__ void ntt_stage(u64* a, const i64* rows, const u64* q, const u64* psi, const u64* psi_sh,
                                     int n, int m, int h, i64 total) {
    i64 tid = GLOBAL_ID;
    if (tid < total) ntt_stage_body(tid, a, rows, q, psi, psi_sh, n, m, h);
}

extern "C" __global__ void intt_stage(u64* a, const i64* rows, const u64* q, const u64* ipsi, const u64* ipsi_sh,
                                      const u64* ninv, const u64* ninv_sh, int n, int half, int h, int scale,
                                      i64 total) {
    i64 tid = GLOBAL_ID;
    if (tid < total) intt_stage_body(tid, a, rows, q, ipsi, ipsi_sh, ninv, ninv_sh, n, half, h, scale);
}

// One thread of a shared-memory block: run this thread's part of each stage, then wait.
struct BlockEach {
    template <class F>
    __device__ void operator()(F f) const {
        f((int)threadIdx.x);
        __syncthreads();
    }
};

// ntt_tail_block / intt_head_block over blocks of T = blockDim.x threads, 2T words of dynamic
// shared memory; grid.x = rows * n / (2T).
extern "C" __global__ void ntt_tail(u64* a, const i64* rows, const u64* q, const u64* psi, const u64* psi_sh,
                                    int n, int m0) {
    extern __shared__ u64 s[];
    ntt_tail_block(BlockEach(), s, (i64)blockIdx.x, (int)blockDim.x, a, rows, q, psi, psi_sh, n, m0);
}

extern "C" __global__ void intt_head(u64* a, const i64* rows, const u64* q, const u64* ipsi, const u64* ipsi_sh,
                                     const u64* ninv, const u64* ninv_sh, int n, int scale) {
    extern __shared__ u64 s[];
    intt_head_block(BlockEach(), s, (i64)blockIdx.x, (int)blockDim.x, a, rows, q, ipsi, ipsi_sh, ninv, ninv_sh, n,
                    scale);
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

extern "C" __global__ void ks_inner_k(const u64* digits, const u64* key, const i64* key_rows, const i64* rows,
                                      const u64* q, const double* qinv, int G, int R, int K, int n, u64* out) {
    i64 idx = GLOBAL_ID;
    if (idx < (i64)R * n) ks_inner_body(idx, digits, key, key_rows, rows, q, qinv, G, R, K, n, out);
}

extern "C" __global__ void permute_k(const u64* a, const i64* perm, int n, i64 total, u64* out) {
    i64 idx = GLOBAL_ID;
    if (idx < total) permute_body(idx, a, perm, n, out);
}

#endif  // __CUDACC__
