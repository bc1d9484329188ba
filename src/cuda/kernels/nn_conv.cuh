// THCUNN's GEMM convolutions (src/nn/conv/device.rs) for Float, Double and Half: the unfolding
// and folding around the device GEMMs, launched by src/cuda/nn/conv.rs (the THNNConv parameter).
// An image is `nb` samples of `c` planes of t x h x w (a 2-D image has depth 1), addressed by
// five strides (sample, plane, t, h, w); its column matrix has one row per (plane, kt, kh, kw)
// and one column per grid position (ot, oh, ow). Grid position y of a dimension reads image
// index y * s - p + tap * d.
// - th_nnIm2col_<dtype>: one column element per thread (zero where the patch is in the padding),
//   written in the compute type R (float for Half: the GEMMs run in R).
// - th_nnCol2im_<dtype>: one image element per thread (owner per output element): the sum, in
//   the compute type (float for Half), of the column entries that map to it, taps in row-major
//   order (kt, kh, kw), plus the bias of its plane when `bias` is not 0; rounded once, written
//   (not accumulated). No atomics: the result is deterministic. Its columns are in R too (the
//   GEMM before it writes them unrounded).
// `n` comes first so that a launch with n == 0 touches nothing.
#ifndef TH_CUDA_NN_CONV_CUH
#define TH_CUDA_NN_CONV_CUH

struct THNNConv {
  long long n;                        // work items: column elements, or image elements
  unsigned long long img, col, bias;  // device addresses (bias: col2im only, 0 for none)
  long long nb, c;                    // samples, image planes
  long long i[3], o[3], k[3], s[3], p[3], d[3];  // image, grid, kernel, stride, pad, dilation
  long long is[5];                    // image strides: sample, plane, t, h, w
  long long cs[2];                    // column strides: sample, row (a row's columns are dense)
  long long bs;                       // bias stride
};
static_assert(sizeof(THNNConv) == 256, "THNNConv layout");
#ifdef TH_EMULATOR
static_assert(__builtin_offsetof(THNNConv, nb) == 32, "THNNConv layout");
static_assert(__builtin_offsetof(THNNConv, is) == 192, "THNNConv layout");
static_assert(__builtin_offsetof(THNNConv, bs) == 248, "THNNConv layout");
#endif

template <class I, class T> __device__ void th_nn_im2col(const THNNConv &p) {
  typedef typename th_offset<I>::type O;
  typedef typename th_traits<T>::R R;
  const T *img = (const T *)p.img;
  R *col = (R *)p.col;
  const I n = (I)p.n, stride = (I)blockDim.x * (I)gridDim.x;
  const I o0 = (I)p.o[0], o1 = (I)p.o[1], o2 = (I)p.o[2];
  const I k0 = (I)p.k[0], k1 = (I)p.k[1], k2 = (I)p.k[2], c = (I)p.c;
  const I cols = o0 * o1 * o2, rows = c * k0 * k1 * k2;
  for (I e = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; e < n; e += stride) {
    const I j = e % cols, row = (e / cols) % rows, b = e / cols / rows;
    I r = j;
    const I ow = r % o2;
    r /= o2;
    const I oh = r % o1, ot = r / o1;
    r = row;
    const I kw = r % k2;
    r /= k2;
    const I kh = r % k1;
    r /= k1;
    const I kt = r % k0, ch = r / k0;
    const O t = (O)ot * (O)p.s[0] - (O)p.p[0] + (O)kt * (O)p.d[0];
    const O h = (O)oh * (O)p.s[1] - (O)p.p[1] + (O)kh * (O)p.d[1];
    const O w = (O)ow * (O)p.s[2] - (O)p.p[2] + (O)kw * (O)p.d[2];
    R v = (R)0;
    if (t >= 0 && h >= 0 && w >= 0 && t < (O)p.i[0] && h < (O)p.i[1] && w < (O)p.i[2])
      v = th_traits<T>::to_r(img[(O)b * (O)p.is[0] + (O)ch * (O)p.is[1] + t * (O)p.is[2] + h * (O)p.is[3] + w * (O)p.is[4]]);
    col[(O)b * (O)p.cs[0] + (O)row * (O)p.cs[1] + (O)j] = v;
  }
}

// The grid position of image index x for tap `tap` of one dimension, or -1 when none reads it.
template <class O> __device__ __forceinline__ O th_nn_grid(O x, O tap, O s, O pad, O d, O len) {
  const O y = x + pad - tap * d;
  if (y < 0 || y % s != 0) return -1;
  return y / s < len ? y / s : (O)-1;
}

template <class I, class T> __device__ void th_nn_col2im(const THNNConv &p) {
  typedef typename th_offset<I>::type O;
  typedef typename th_traits<T>::R R;
  const R *col = (const R *)p.col;
  const T *bias = (const T *)p.bias;
  T *img = (T *)p.img;
  const I n = (I)p.n, stride = (I)blockDim.x * (I)gridDim.x;
  const I i0 = (I)p.i[0], i1 = (I)p.i[1], i2 = (I)p.i[2], c = (I)p.c;
  const O k0 = (O)p.k[0], k1 = (O)p.k[1], k2 = (O)p.k[2], o1 = (O)p.o[1], o2 = (O)p.o[2];
  for (I e = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; e < n; e += stride) {
    I r = e;
    const I iw = r % i2;
    r /= i2;
    const I ih = r % i1;
    r /= i1;
    const I it = r % i0;
    r /= i0;
    const I ch = r % c, b = r / c;
    const R *cb = col + (O)b * (O)p.cs[0];
    R acc = (R)0;
    for (O kt = 0; kt < k0; ++kt) {
      const O y = th_nn_grid<O>((O)it, kt, (O)p.s[0], (O)p.p[0], (O)p.d[0], (O)p.o[0]);
      if (y < 0) continue;
      for (O kh = 0; kh < k1; ++kh) {
        const O x = th_nn_grid<O>((O)ih, kh, (O)p.s[1], (O)p.p[1], (O)p.d[1], o1);
        if (x < 0) continue;
        for (O kw = 0; kw < k2; ++kw) {
          const O z = th_nn_grid<O>((O)iw, kw, (O)p.s[2], (O)p.p[2], (O)p.d[2], o2);
          if (z < 0) continue;
          const O row = (((O)ch * k0 + kt) * k1 + kh) * k2 + kw;
          acc += cb[row * (O)p.cs[1] + (y * o1 + x) * o2 + z];
        }
      }
    }
    if (bias) acc += th_traits<T>::to_r(bias[(O)ch * (O)p.bs]);
    img[(O)b * (O)p.is[0] + (O)ch * (O)p.is[1] + (O)it * (O)p.is[2] + (O)ih * (O)p.is[3] + (O)iw * (O)p.is[4]] =
        th_traits<T>::from_r(acc);
  }
}

#define TH_NN_CONV_KERNELS(sfx, T)                                                                   \
  TH_KERNEL(th_nnIm2col_##sfx##_i32, TH_EMU_INDEPENDENT, THNNConv, th_nn_im2col<unsigned int, T>)    \
  TH_KERNEL(th_nnIm2col_##sfx##_i64, TH_EMU_INDEPENDENT, THNNConv, th_nn_im2col<unsigned long long, T>) \
  TH_KERNEL(th_nnCol2im_##sfx##_i32, TH_EMU_INDEPENDENT, THNNConv, th_nn_col2im<unsigned int, T>)    \
  TH_KERNEL(th_nnCol2im_##sfx##_i64, TH_EMU_INDEPENDENT, THNNConv, th_nn_col2im<unsigned long long, T>)

#endif  // TH_CUDA_NN_CONV_CUH
