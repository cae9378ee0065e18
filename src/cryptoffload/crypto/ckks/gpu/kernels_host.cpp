// Runs the GPU kernels of kernels.cu on the CPU: one launch_<kernel> per __global__ kernel, taking
// the launch geometry (grid x, grid y, block x) and the kernel's arguments, looping over the blocks
// and threads the GPU would run. Every launch calls the very bodies the kernel calls: one thread's
// body for the element-wise and conversion kernels; for the shared-memory NTT kernels (ntt_upper,
// ntt_tail, intt_head, intt_upper) the block's schedule itself (ntt_upper_block, ...), with an
// `each` that runs a stage for every thread of the block before the next stage starts -- what
// __syncthreads guarantees on the GPU. Built by launch.py (the `cuda-host` kernel set: the CPU twin
// driving the GPU's launch code) with a host C++ compiler, without fused multiply-adds
// (-ffp-contract=off), so its results are the GPU's bit for bit.
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

extern "C" {

void launch_ntt_upper(int gx, int gy, int bx, u64* a, const u64* src, const i64* tab, const u64* q,
                      const u64* psi, const u64* psi_sh, int n) {
    std::vector<u64> s(2 * bx);
    for (i64 b = 0; b < gx; ++b) ntt_upper_block(HostEach{bx}, s.data(), b, bx, a, src, tab, q, psi, psi_sh, n);
}

void launch_intt_upper(int gx, int gy, int bx, u64* a, const u64* src, const i64* tab, const u64* q,
                       const u64* ipsi, const u64* ipsi_sh, const u64* ninv, const u64* ninv_sh, int n) {
    std::vector<u64> s(2 * bx);
    for (i64 b = 0; b < gx; ++b)
        intt_upper_block(HostEach{bx}, s.data(), b, bx, a, src, tab, q, ipsi, ipsi_sh, ninv, ninv_sh, n);
}

void launch_ntt_tail(int gx, int gy, int bx, u64* a, const u64* src, const i64* tab, const u64* q, const u64* psi,
                     const u64* psi_sh, int n, int m0) {
    std::vector<u64> s(2 * bx);
    for (int y = 0; y < gy; ++y)   // the kernel reads blockIdx.x only, as here
        for (i64 b = 0; b < gx; ++b)
            ntt_tail_block(HostEach{bx}, s.data(), b, bx, a, src, tab, q, psi, psi_sh, n, m0);
}

void launch_intt_head(int gx, int gy, int bx, u64* a, const u64* src, const i64* tab, const u64* q,
                      const u64* ipsi, const u64* ipsi_sh, const u64* ninv, const u64* ninv_sh, int n, int scale) {
    std::vector<u64> s(2 * bx);
    for (int y = 0; y < gy; ++y)
        for (i64 b = 0; b < gx; ++b)
            intt_head_block(HostEach{bx}, s.data(), b, bx, a, src, tab, q, ipsi, ipsi_sh, ninv, ninv_sh, n, scale);
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

void launch_conv_jobs_k(int gx, int gy, int bx, const u64* x, const i64* jobs, const i64* sprime, const u64* yinv,
                        const u64* yinv_sh, const i64* dprime, const i64* drow, const u64* mat, const u64* qmod,
                        const u64* q, const double* qinv, int n, u64* out) {
    for (int y = 0; y < gy; ++y)
        FOR_THREADS(n) conv_job_body(idx, jobs + (i64)y * JOB_FIELDS, x, sprime, yinv, yinv_sh, dprime, drow, mat,
                                     qmod, q, qinv, n, out);
}

void launch_ks_items_k(int gx, int gy, int bx, const u64* digits, const u64* keys, const i64* perms,
                       const i64* items, const i64* key_rows, const i64* rows, const u64* q, const double* qinv,
                       int G, int QP, int GK, int KR, int n, i64 total, u64* out) {
    FOR_THREADS(total) ks_items_body(idx, digits, keys, perms, items, key_rows, rows, q, qinv, G, QP, GK, KR, n, out);
}

void launch_combine_k(int gx, int gy, int bx, const u64* a, const u64* conv, const u64* base, const i64* perms,
                      const i64* items, const i64* rows, const u64* q, const u64* c, const u64* c_sh, int R, int n,
                      i64 total, u64* out) {
    FOR_THREADS(total) combine_body(idx, a, conv, base, perms, items, rows, q, c, c_sh, R, n, out);
}

void launch_dot_k(int gx, int gy, int bx, const u64* acc, int use_acc, const i64* rows, const u64* q,
                  const double* qinv, int R, int n, int terms, i64 total, u64* out, PTRS(c), PTRS(p)) {
    const u64* cts[MAX_TERMS] = PTR_ARRAY(c);
    const u64* pts[MAX_TERMS] = PTR_ARRAY(p);
    FOR_THREADS(total) dot_body(idx, cts, pts, terms, acc, use_acc, rows, q, qinv, R, n, out);
}

void launch_tensor_k(int gx, int gy, int bx, const u64* a, const u64* b, const i64* rows, const u64* q,
                     const double* qinv, int R, int n, i64 total, u64* out) {
    FOR_THREADS(total) tensor_body(idx, a, b, rows, q, qinv, R, n, out);
}

void launch_lincomb_k(int gx, int gy, int bx, const u64* x, const u64* c, const u64* c_sh, const i64* rows,
                      const u64* q, int P, int S, int R, int n, i64 total, u64* out) {
    FOR_THREADS(total) lincomb_body(idx, x, c, c_sh, rows, q, P, S, R, n, out);
}

void launch_gather_k(int gx, int gy, int bx, i64 each, i64 total, u64* out, PTRS(s)) {
    const u64* src[MAX_TERMS] = PTR_ARRAY(s);
    FOR_THREADS(total) gather_body(idx, src, each, out);
}

void launch_permute_k(int gx, int gy, int bx, const u64* a, const i64* perm, int n, i64 total, u64* out) {
    FOR_THREADS(total) permute_body(idx, a, perm, n, out);
}

}  // extern "C"
