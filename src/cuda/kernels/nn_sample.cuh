// THCUNN's padding and upsampling layers (src/nn/sample): one kernel maps a contiguous input of
// `planes` planes (depth x height x width, depth 1 for the 2-D layers) to a contiguous output,
// one thread per output element, by a small table per dimension (CSR: row `o` of a dimension
// lists the input positions `col[j]` and weights `w[j]` that output position `o` reads, for j in
// [rp[o], rp[o + 1]); all tables in one int buffer and one weight buffer, at offsets):
//
//   y[p, z, y, x] = sum_a sum_b wz[a] * wy[b] * (sum_c wx[c] * x[p, cz[a], cy[b], cx[c]])
//
// The host builds the tables: padding and nearest upsampling one entry of weight 1 per output,
// (bi/tri)linear upsampling two taps; their backward passes use the transposed tables (each input
// position lists, ascending, the (output, tap) pairs that read it), so every gradient element is
// summed by one thread in the host's order (no atomics: deterministic). The products and sums are
// the host's, in the compute type R and the same association (see `mode`), rounded once.
#ifndef TH_CUDA_NN_SAMPLE_CUH
#define TH_CUDA_NN_SAMPLE_CUH

struct THCSample {
  long long n;                 // output elements (planes * o[0] * o[1] * o[2])
  int o[3];                    // output sizes (depth, height, width)
  int i[3];                    // input sizes (a plane of each fits an int: the host checks)
  int mode;                    // TH_SAMPLE_COPY or 0
  int pad_;
  unsigned long long x, y;     // input and output addresses
  unsigned long long ints;     // the tables' ints: per dimension o[d] + 1 row pointers, positions
  unsigned long long wts;      // the tables' weights (R)
  int rp[3], col[3], w[3];     // per dimension: where its row pointers, positions, weights start
  int pad2_;
};
static_assert(sizeof(THCSample) == 112, "THCSample layout");
#ifdef TH_EMULATOR
static_assert(__builtin_offsetof(THCSample, x) == 40 && __builtin_offsetof(THCSample, rp) == 72,
              "THCSample layout");
#endif

// The sum starts at -0 (so that a single term is copied exactly, -0 included, as the host's
// gather copies) instead of the +0 the host's accumulating passes start from.
#define TH_SAMPLE_COPY 1
// (th_nnSampleBack, the kernels' ADJ: each term is weighted as `wx * ((wz * wy) * v)`, the
// host's backward passes, instead of `(wz * wy) * (sum of wx * v)`, the forward passes; a
// template parameter, not a mode bit: with both forms in one kernel ptxas spilled the double
// ones.)

// The table loops run a few times each: unrolling them only adds live values (ptxas spilled the
// unrolled double kernels).
#ifdef TH_EMULATOR
#define TH_SAMPLE_LOOP
#else
#define TH_SAMPLE_LOOP _Pragma("unroll 1")
#endif

template <class I, class T, bool ADJ> __device__ void th_nn_sample(const THCSample &q) {
  typedef typename th_offset<I>::type O;
  typedef th_traits<T> X;
  typedef typename X::R R;
  const T *x = (const T *)q.x;
  T *y = (T *)q.y;
  const int *tab = (const int *)q.ints;
  const R *wt = (const R *)q.wts;
  const I n = (I)q.n, stride = (I)blockDim.x * (I)gridDim.x;
  // one division of the index width per element, the rest in int within a plane
  const int oh = q.o[1], ow = q.o[2], ih = q.i[1], iw = q.i[2];
  const unsigned oplane = (unsigned)q.o[0] * (unsigned)oh * (unsigned)ow;
  const O iplane = (O)q.i[0] * (O)ih * (O)iw;
  const R zero = (q.mode & TH_SAMPLE_COPY) ? -(R)0 : (R)0;
  for (I e = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; e < n; e += stride) {
    const I pl = e / (I)oplane;
    unsigned r = (unsigned)(e - pl * (I)oplane);
    const int ox = (int)(r % (unsigned)ow);
    r /= (unsigned)ow;
    const int oy = (int)(r % (unsigned)oh), oz = (int)(r / (unsigned)oh);
    const T *src = x + (O)pl * iplane;
    R acc = zero;
    const int a1 = tab[q.rp[0] + oz + 1], b0 = tab[q.rp[1] + oy], b1 = tab[q.rp[1] + oy + 1];
    const int k0 = tab[q.rp[2] + ox], k1 = tab[q.rp[2] + ox + 1];
    TH_SAMPLE_LOOP
    for (int a = tab[q.rp[0] + oz]; a < a1; ++a) {
      const int zo = tab[q.col[0] + a] * ih;
      const R wz = wt[q.w[0] + a];
      TH_SAMPLE_LOOP
      for (int b = b0; b < b1; ++b) {
        const T *row = src + (zo + tab[q.col[1] + b]) * iw;
        const R c = wz * wt[q.w[1] + b];
        // the forward sums `wx * (1 * v)` from -0 and adds `c *` the sum; the adjoint adds
        // `wx * (c * v)` to the running sum itself
        const R m = ADJ ? c : (R)1;
        R s = ADJ ? acc : -(R)0;
        TH_SAMPLE_LOOP
        for (int k = k0; k < k1; ++k) s += wt[q.w[2] + k] * (m * X::to_r(row[tab[q.col[2] + k]]));
        acc = ADJ ? s : acc + c * s;
      }
    }
    y[e] = X::from_r(acc);
  }
}

#define TH_NN_SAMPLE_KERNEL(name, sfx, T, adj)                                                        \
  TH_KERNEL(th_##name##_##sfx##_i32, TH_EMU_INDEPENDENT, THCSample, th_nn_sample<unsigned int, T, adj>)  \
  TH_KERNEL(th_##name##_##sfx##_i64, TH_EMU_INDEPENDENT, THCSample, th_nn_sample<unsigned long long, T, adj>)
#define TH_NN_SAMPLE_KERNELS(sfx, T)                                                                  \
  TH_NN_SAMPLE_KERNEL(nnSample, sfx, T, false) TH_NN_SAMPLE_KERNEL(nnSampleBack, sfx, T, true)

#endif  // TH_CUDA_NN_SAMPLE_CUH
