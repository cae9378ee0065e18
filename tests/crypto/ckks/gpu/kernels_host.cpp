// Runs the GPU kernels of kernels.cu on the CPU: one launch_<kernel> per __global__ kernel,
// taking the launch geometry (grid x, grid y, block x) and the kernel's arguments, looping over
// the blocks and threads the GPU would run. Every launch calls the very bodies the kernel calls:
// one thread's body for the element-wise kernels and NTT stages; for the shared-memory kernels
// (ntt_tail, intt_head) the block's schedule itself (ntt_tail_block, intt_head_block), with an
// `each` that runs a stage for every thread of the block before the next stage starts -- what
// __syncthreads guarantees on the GPU. Built by tests/crypto/ckks/gpu/cuda_host.py with a host
// C++ compiler, without fused multiply-adds (-ffp-contract=off), and driven through
// arith_cuda.py so that its launch shapes are exercised too.
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
    std::vector<u64> s(2 * bx);
    for (int y = 0; y < gy; ++y)   // the kernel reads blockIdx.x only, as here
        for (i64 b = 0; b < gx; ++b) ntt_tail_block(HostEach{bx}, s.data(), b, bx, a, rows, q, psi, psi_sh, n, m0);
}

void launch_intt_head(int gx, int gy, int bx, u64* a, const i64* rows, const u64* q, const u64* ipsi,
                      const u64* ipsi_sh, const u64* ninv, const u64* ninv_sh, int n, int scale) {
    std::vector<u64> s(2 * bx);
    for (int y = 0; y < gy; ++y)
        for (i64 b = 0; b < gx; ++b)
            intt_head_block(HostEach{bx}, s.data(), b, bx, a, rows, q, ipsi, ipsi_sh, ninv, ninv_sh, n, scale);
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
