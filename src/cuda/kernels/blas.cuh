// Integer matrix products (cuBLAS has none): th_gemm_<dtype> for Byte, Char, Short, Int, Long.
// C[p](i, j) = beta*C[p](i, j) + alpha*sum_l A[p](i, l)*B[p](l, j) on any element strides, one
// thread per output element (grid-stride over batch x m x n), in the element type's wrapping
// arithmetic: every product and sum is taken modulo 2^64 and truncated to T once, which is the
// same residue modulo 2^bits as the CPU kernel's (linalg::gemm::int) step-by-step wrapping.
// beta == 0 does not read C; alpha == 0 does not read A, B. Mirrored in src/cuda/blas/mod.rs.
#ifndef TH_CUDA_BLAS_CUH
#define TH_CUDA_BLAS_CUH

struct THCGemm {
  unsigned long long a, b, c;
  long long m, n, k, batch;
  // Row, column and batch strides (elements) of A, B, C.
  long long sa[3], sb[3], sc[3];
  long long alpha, beta;
};
static_assert(sizeof(THCGemm) == 144, "THCGemm layout");

template <typename T>
__device__ __forceinline__ unsigned long long th_gemm_wide(T v) {
  return (unsigned long long)(long long)v;
}

template <typename T>
__device__ void th_gemm_body(const THCGemm &p) {
  const unsigned long long m = (unsigned long long)p.m, n = (unsigned long long)p.n;
  const unsigned long long total = (unsigned long long)p.batch * m * n;
  const unsigned long long alpha = (unsigned long long)p.alpha, beta = (unsigned long long)p.beta;
  for (unsigned long long t = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; t < total;
       t += (unsigned long long)gridDim.x * blockDim.x) {
    const long long j = (long long)(t % n), i = (long long)((t / n) % m), z = (long long)(t / (m * n));
    unsigned long long acc = 0;
    if (alpha != 0) {
      const T *a = (const T *)p.a + z * p.sa[2] + i * p.sa[0];
      const T *b = (const T *)p.b + z * p.sb[2] + j * p.sb[1];
      for (long long l = 0; l < p.k; ++l) acc += th_gemm_wide(a[l * p.sa[1]]) * th_gemm_wide(b[l * p.sb[0]]);
    }
    T *c = (T *)p.c + z * p.sc[2] + i * p.sc[0] + j * p.sc[1];
    unsigned long long r = alpha * acc;
    if (beta != 0) r += beta * th_gemm_wide(*c);
    *c = (T)r;
  }
}

#define TH_GEMM_KERNELS(sfx, T) TH_KERNEL(th_gemm_##sfx, TH_EMU_INDEPENDENT, THCGemm, th_gemm_body<T>)

#endif  // TH_CUDA_BLAS_CUH
