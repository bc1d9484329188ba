// THC's 2-D convolutions (THCTensorConv.h) for Float, Double and Half, launched by
// src/cuda/conv.rs (the THCConv parameter) for src/ops/conv/device (the ops):
// - th_convUnfold_<dtype>: the unfolded (im2col) matrix, one column element per thread. The
//   host then multiplies it by the kernel matrix with one strided batched GEMM (cuBLAS).
// - th_convMap_<dtype>: conv2Dmap's connection-table form, one output element per thread (a
//   direct loop: each output plane has its own list of (input, kernel) planes, see map.rs).
// Both take one THCConv. `n` comes first so that a launch with n == 0 touches nothing.
#ifndef TH_CUDA_CONV_CUH
#define TH_CUDA_CONV_CUH

struct THCConv {
  long long n;                             // work items: column elements, or output elements
  unsigned long long out, in, ker, table;  // device addresses (ker, table: map only)
  long long g[2];     // unfold: groups (outer, inner); map: output planes, fanin
  long long k[2];     // kernel rows, columns
  long long o[2];     // output rows, columns
  long long i[2];     // input rows, columns
  long long lim[2];   // map: input planes, kernel planes (the table's value ranges)
  long long is[4];    // input strides: outer group (unused by map), plane, row, column
  long long os[3];    // unfold: column strides of the outer and inner group; map: output strides
  long long ks[3];    // map: kernel strides (plane, row, column)
  long long ts[2];    // map: table strides (row, column)
  long long step[2];  // rows, columns between neighbouring outputs (the stride; full: the divisor)
  long long dil[2];   // rows, columns between neighbouring kernel taps (1; the stride for Rev)
  int full, flip;
};
static_assert(sizeof(THCConv) == 256, "THCConv layout");
#ifdef TH_EMULATOR
static_assert(__builtin_offsetof(THCConv, g) == 40, "THCConv layout");
static_assert(__builtin_offsetof(THCConv, is) == 120, "THCConv layout");
static_assert(__builtin_offsetof(THCConv, os) == 152, "THCConv layout");
static_assert(__builtin_offsetof(THCConv, step) == 216, "THCConv layout");
static_assert(__builtin_offsetof(THCConv, full) == 248, "THCConv layout");
#endif

// Column element e of the matrix [g0][g1][kh][kw][oh][ow] (stored at g0*os[0] + g1*os[1] + the
// row-major rest) is the input element that multiplies kernel tap (ky, kx) for output (oy, ox).
// With e = the tap index the output sees (flip: kh-1-ky, the convolution's reversed kernel):
// valid and Rev: input (oy*step + e*dil); full: the zero-padded, `step`-dilated input, i.e.
// input ((oy - e) / step) where that divides exactly and lands inside, else 0.
template <class I, class T> __device__ void th_conv_unfold(const THCConv &p) {
  typedef typename th_offset<I>::type O;
  typedef typename th_traits<T>::R R;
  const T *in = (const T *)p.in;
  T *cols = (T *)p.out;
  const I n = (I)p.n, stride = (I)blockDim.x * (I)gridDim.x;
  const I kh = (I)p.k[0], kw = (I)p.k[1], oh = (I)p.o[0], ow = (I)p.o[1], g1 = (I)p.g[1];
  const T zero = th_traits<T>::from_r((R)0);
  for (I e = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; e < n; e += stride) {
    I r = e;
    const I ox = r % ow;
    r /= ow;
    const I oy = r % oh;
    r /= oh;
    const I kx = r % kw;
    r /= kw;
    const I ky = r % kh;
    r /= kh;
    const I c = r % g1, b = r / g1;
    const O ey = (O)(p.flip ? kh - 1 - ky : ky), ex = (O)(p.flip ? kw - 1 - kx : kx);
    const O sy = (O)p.step[0], sx = (O)p.step[1];
    O y, x;
    bool inside = true;
    if (p.full) {
      const O dy = (O)oy - ey, dx = (O)ox - ex;
      inside = dy >= 0 && dx >= 0 && dy % sy == 0 && dx % sx == 0;
      y = dy / sy;
      x = dx / sx;
    } else {
      y = (O)oy * sy + ey * (O)p.dil[0];
      x = (O)ox * sx + ex * (O)p.dil[1];
    }
    inside = inside && y >= 0 && x >= 0 && y < (O)p.i[0] && x < (O)p.i[1];
    T v = zero;
    if (inside) v = in[(O)b * (O)p.is[0] + (O)c * (O)p.is[1] + y * (O)p.is[2] + x * (O)p.is[3]];
    cols[(O)b * (O)p.os[0] + (O)c * (O)p.os[1] + (O)(((ky * kw + kx) * oh + oy) * ow + ox)] = v;
  }
}

// Output element (o, y, x) += sum over the fanin rows f of table block o (row o*fanin + f holds
// the 1-based input plane and kernel plane, checked by the host) of the valid cross-correlation
// of that input plane with that kernel plane at (y*step, x*step); summed in the compute type
// (float for Half), rows in table order, taps in row-major order, then added to the output once.
template <class I, class T> __device__ void th_conv_map(const THCConv &p) {
  typedef typename th_offset<I>::type O;
  typedef typename th_traits<T>::R R;
  const T *in = (const T *)p.in, *ker = (const T *)p.ker, *table = (const T *)p.table;
  T *out = (T *)p.out;
  const I n = (I)p.n, stride = (I)blockDim.x * (I)gridDim.x;
  const I oh = (I)p.o[0], ow = (I)p.o[1];
  const O fanin = (O)p.g[1], kh = (O)p.k[0], kw = (O)p.k[1];
  for (I e = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; e < n; e += stride) {
    const I x = e % ow, y = (e / ow) % oh, o = e / (ow * oh);
    R acc = (R)0;
    for (O f = 0; f < fanin; ++f) {
      const O row = (O)o * fanin + f;
      const double pv = th_traits<T>::to_f64(table[row * (O)p.ts[0]]);
      const double kv = th_traits<T>::to_f64(table[row * (O)p.ts[0] + (O)p.ts[1]]);
      // (checked by the host; compared as doubles first so that no value is cast out of range)
      if (!(pv >= 1.0 && pv <= (double)p.lim[0] && kv >= 1.0 && kv <= (double)p.lim[1])) continue;
      const O plane = (O)pv - 1, kp = (O)kv - 1;
      const T *ip = in + plane * (O)p.is[1] + (O)y * (O)p.step[0] * (O)p.is[2] + (O)x * (O)p.step[1] * (O)p.is[3];
      const T *w = ker + kp * (O)p.ks[0];
      for (O ky = 0; ky < kh; ++ky)
        for (O kx = 0; kx < kw; ++kx)
          acc += th_traits<T>::to_r(ip[ky * (O)p.is[2] + kx * (O)p.is[3]]) *
                 th_traits<T>::to_r(w[ky * (O)p.ks[1] + kx * (O)p.ks[2]]);
    }
    T *dst = out + (O)o * (O)p.os[0] + (O)y * (O)p.os[1] + (O)x * (O)p.os[2];
    *dst = th_traits<T>::from_r(th_traits<T>::to_r(*dst) + acc);
  }
}

#define TH_CONV_KERNELS(sfx, T)                                                                      \
  TH_KERNEL(th_convUnfold_##sfx##_i32, TH_EMU_INDEPENDENT, THCConv, th_conv_unfold<unsigned int, T>) \
  TH_KERNEL(th_convUnfold_##sfx##_i64, TH_EMU_INDEPENDENT, THCConv, th_conv_unfold<unsigned long long, T>) \
  TH_KERNEL(th_convMap_##sfx##_i32, TH_EMU_INDEPENDENT, THCConv, th_conv_map<unsigned int, T>)       \
  TH_KERNEL(th_convMap_##sfx##_i64, TH_EMU_INDEPENDENT, THCConv, th_conv_map<unsigned long long, T>)

#endif  // TH_CUDA_CONV_CUH
