// Runs the GPU kernels of kernels.cu on the CPU: one launch_<kernel> per __global__ kernel,
// taking the launch geometry (grid x, grid y, block x) and the kernel's arguments, looping over
// the blocks and threads the GPU would run. Element-wise kernels and NTT stages call the same
// body functions the kernels call; the shared-memory kernels (ntt_tail, intt_head) are mirrored
// stage by stage (every thread of a stage, then the barrier), which is what __syncthreads
// guarantees. Built by tests/crypto/ckks/gpu/cuda_host.py with a host C++ compiler, without
// fused multiply-adds (-ffp-contract=off), and driven through arith_cuda.py so that its launch
// shapes are exercised too.
#include <vector>

#include "kernels.cu"

#define FOR_THREADS(total) for (i64 idx = 0; idx < (i64)gx * bx && idx < (total); ++idx)

extern "C" {

void launch_ntt_stage(int gx, int gy, int bx, u64* a, const i64* rows, const u64* q, const u64* psi,
                      const u64* psi_sh, int n, int m, int h, i64 total) {
    FOR_THREADS(total) ntt_stage_body(idx, a, rows, q, psi, psi_sh, n, m, h);
}

void launch_intt_stage(int gx, int gy, int bx, u64* a, const i64* rows, const u64* q, const u64* ipsi,
                       const u64* ipsi_sh, const u64* ninv, const u64* ninv_sh, int n, int half, int h, int scale,
                       i64 total) {
    FOR_THREADS(total) intt_stage_body(idx, a, rows, q, ipsi, ipsi_sh, ninv, ninv_sh, n, half, h, scale);
}

void launch_ntt_tail(int gx, int gy, int bx, u64* a, const i64* rows, const u64* q, const u64* psi,
                     const u64* psi_sh, int n, int m0) {
    int T = bx;
    std::vector<u64> s(2 * T);
    for (i64 r = 0; r < gy; ++r)
        for (i64 c = 0; c < gx; ++c) {
            i64 k = rows[r];
            u64* x = a + r * n + c * 2 * T;
            for (int t = 0; t < 2 * T; ++t) s[t] = x[t];
            for (int h = T, m = m0; h >= 1; h >>= 1, m <<= 1)
                for (int t = 0; t < T; ++t) ntt_chunk_body(s.data(), t, T, c, k, q, psi, psi_sh, n, m, h);
            for (int t = 0; t < 2 * T; ++t) x[t] = s[t];
        }
}

void launch_intt_head(int gx, int gy, int bx, u64* a, const i64* rows, const u64* q, const u64* ipsi,
                      const u64* ipsi_sh, const u64* ninv, const u64* ninv_sh, int n, int scale) {
    int T = bx;
    std::vector<u64> s(2 * T);
    for (i64 r = 0; r < gy; ++r)
        for (i64 c = 0; c < gx; ++c) {
            i64 k = rows[r];
            u64* x = a + r * n + c * 2 * T;
            for (int t = 0; t < 2 * T; ++t) s[t] = x[t];
            for (int h = 1, half = n / 2; h <= T; h <<= 1, half >>= 1)
                for (int t = 0; t < T; ++t) intt_chunk_body(s.data(), t, T, c, k, q, ipsi, ipsi_sh, n, half, h);
            if (scale)
                for (int t = 0; t < 2 * T; ++t) s[t] = shoup_mul(s[t], ninv[k], ninv_sh[k], q[k]);
            for (int t = 0; t < 2 * T; ++t) x[t] = s[t];
        }
}

void launch_add_k(int gx, int gy, int bx, const u64* a, const u64* b, const i64* rows, const u64* q, int n,
                  i64 total, u64* out) {
    FOR_THREADS(total) add_body(idx, a, b, rows, q, n, out);
}

void launch_sub_k(int gx, int gy, int bx, const u64* a, const u64* b, const i64* rows, const u64* q, int n,
                  i64 total, u64* out) {
    FOR_THREADS(total) sub_body(idx, a, b, rows, q, n, out);
}

void launch_neg_k(int gx, int gy, int bx, const u64* a, const i64* rows, const u64* q, int n, i64 total,
                  u64* out) {
    FOR_THREADS(total) neg_body(idx, a, rows, q, n, out);
}

void launch_mul_k(int gx, int gy, int bx, const u64* a, const u64* b, const i64* rows, const u64* q,
                  const double* qinv, int n, i64 total, u64* out) {
    FOR_THREADS(total) mul_body(idx, a, b, rows, q, qinv, n, out);
}

void launch_mul_const_k(int gx, int gy, int bx, const u64* a, const u64* c, const u64* c_sh, const i64* rows,
                        const u64* q, int n, i64 total, u64* out) {
    FOR_THREADS(total) mul_const_body(idx, a, c, c_sh, rows, q, n, out);
}

void launch_base_convert_k(int gx, int gy, int bx, const u64* x, const i64* src, const i64* dst, const u64* yinv,
                           const u64* yinv_sh, const u64* mat, const u64* qmod, int use_exact, const u64* q,
                           const double* qinv, int S, int D, int n, u64* out) {
    FOR_THREADS(n) base_convert_body(idx, x, src, dst, yinv, yinv_sh, mat, qmod, use_exact, q, qinv, S, D, n, out);
}

void launch_ks_inner_k(int gx, int gy, int bx, const u64* digits, const u64* key, const i64* key_rows,
                       const i64* rows, const u64* q, const double* qinv, int G, int R, int K, int n, u64* out) {
    FOR_THREADS((i64)R * n) ks_inner_body(idx, digits, key, key_rows, rows, q, qinv, G, R, K, n, out);
}

void launch_permute_k(int gx, int gy, int bx, const u64* a, const i64* perm, int n, i64 total, u64* out) {
    FOR_THREADS(total) permute_body(idx, a, perm, n, out);
}

}  // extern "C"
