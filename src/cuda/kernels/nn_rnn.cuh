// THCUNN's fused GRU and LSTM cells (src/nn/rnn): one thread per state element (row r, unit i)
// computes that unit's gates of its row, the host's expressions operation for operation in the
// compute type R, each stored value rounded once. Every operand is contiguous (the host side
// copies the others); the gate tensors are rows of 3H (GRU) or 4H (LSTM) elements, the
// state tensors rows of H, GRU's storage rows of 5H. A bias address of 0 means none (zero).
#ifndef TH_CUDA_NN_RNN_CUH
#define TH_CUDA_NN_RNN_CUH

struct THCRnn {
  long long n;                // state elements (rows * h)
  long long h;                // the hidden size
  unsigned long long p[7];    // device addresses, in the order each kernel lists
};
static_assert(sizeof(THCRnn) == 72, "THCRnn layout");
#ifdef TH_EMULATOR
static_assert(__builtin_offsetof(THCRnn, p) == 16, "THCRnn layout");
#endif

__forceinline__ float th_ctanh(float x) { return ::tanhf(x); }
__forceinline__ double th_ctanh(double x) { return ::tanh(x); }

template <class R> __forceinline__ R th_rnn_sigmoid(R x) { return (R)1 / ((R)1 + th_cexp(-x)); }

// Element k of a bias (0 where there is none).
template <class T> __forceinline__ typename th_traits<T>::R th_rnn_bias(unsigned long long b, long long k) {
  typedef typename th_traits<T>::R R;
  return b ? th_traits<T>::to_r(((const T *)b)[k]) : (R)0;
}

// GRU forward. p: input, hidden, bias1, bias2, hx, hy, storage.
template <class I, class T> __device__ void th_rnn_gru(const THCRnn &q) {
  typedef typename th_offset<I>::type O;
  typedef th_traits<T> X;
  typedef typename X::R R;
  const T *gi = (const T *)q.p[0], *gh = (const T *)q.p[1], *hx = (const T *)q.p[4];
  T *hy = (T *)q.p[5], *st = (T *)q.p[6];
  const I n = (I)q.n, stride = (I)blockDim.x * (I)gridDim.x;
  const O h = (O)q.h;
  for (I e = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; e < n; e += stride) {
    const O r = (O)e / h, i = (O)e % h, g = 3 * h * r, s = 5 * h * r;
    const R x = X::to_r(hx[(O)e]);
    const R rg = th_rnn_sigmoid(X::to_r(gi[g + i]) + X::to_r(gh[g + i]) + th_rnn_bias<T>(q.p[2], (long long)i) +
                                th_rnn_bias<T>(q.p[3], (long long)i));
    const R zg = th_rnn_sigmoid(X::to_r(gi[g + h + i]) + X::to_r(gh[g + h + i]) +
                                th_rnn_bias<T>(q.p[2], (long long)(h + i)) + th_rnn_bias<T>(q.p[3], (long long)(h + i)));
    const R hn = X::to_r(gh[g + 2 * h + i]) + th_rnn_bias<T>(q.p[3], (long long)(2 * h + i));
    const R ng = th_ctanh(X::to_r(gi[g + 2 * h + i]) + th_rnn_bias<T>(q.p[2], (long long)(2 * h + i)) + rg * hn);
    hy[(O)e] = X::from_r(ng + zg * (x - ng));
    st[s + i] = X::from_r(rg);
    st[s + h + i] = X::from_r(zg);
    st[s + 2 * h + i] = X::from_r(ng);
    st[s + 3 * h + i] = X::from_r(x);
    st[s + 4 * h + i] = X::from_r(hn);
  }
}

// GRU backward. p: gradInInput, gradInHidden, gradOutput, gradInputHx, storage.
template <class I, class T> __device__ void th_rnn_gru_back(const THCRnn &q) {
  typedef typename th_offset<I>::type O;
  typedef th_traits<T> X;
  typedef typename X::R R;
  T *gi = (T *)q.p[0], *gh = (T *)q.p[1], *ghx = (T *)q.p[3];
  const T *go = (const T *)q.p[2], *st = (const T *)q.p[4];
  const I n = (I)q.n, stride = (I)blockDim.x * (I)gridDim.x;
  const O h = (O)q.h;
  const R one = (R)1;
  for (I e = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; e < n; e += stride) {
    const O r = (O)e / h, i = (O)e % h, g = 3 * h * r, s = 5 * h * r;
    const R rg = X::to_r(st[s + i]), zg = X::to_r(st[s + h + i]), ng = X::to_r(st[s + 2 * h + i]);
    const R hx = X::to_r(st[s + 3 * h + i]), hn = X::to_r(st[s + 4 * h + i]), go_ = X::to_r(go[(O)e]);
    const R gz = go_ * (hx - ng) * (one - zg) * zg;
    const R gn = go_ * (one - zg) * (one - ng * ng);
    const R gr = gn * hn * (one - rg) * rg;
    gi[g + i] = X::from_r(gr);
    gi[g + h + i] = X::from_r(gz);
    gi[g + 2 * h + i] = X::from_r(gn);
    gh[g + i] = X::from_r(gr);
    gh[g + h + i] = X::from_r(gz);
    gh[g + 2 * h + i] = X::from_r(gn * rg);
    ghx[(O)e] = X::from_r(go_ * zg);
  }
}

// LSTM forward. p: input (the gates, overwritten with their activations), hidden, bias1, bias2,
// cx, hy, cy.
template <class I, class T> __device__ void th_rnn_lstm(const THCRnn &q) {
  typedef typename th_offset<I>::type O;
  typedef th_traits<T> X;
  typedef typename X::R R;
  T *gates = (T *)q.p[0], *hy = (T *)q.p[5], *cy = (T *)q.p[6];
  const T *gh = (const T *)q.p[1], *cx = (const T *)q.p[4];
  const I n = (I)q.n, stride = (I)blockDim.x * (I)gridDim.x;
  const O h = (O)q.h;
  for (I e = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; e < n; e += stride) {
    const O r = (O)e / h, i = (O)e % h, g = 4 * h * r;
    R a[4];
    for (int k = 0; k < 4; ++k) {
      const O j = (O)k * h + i;
      a[k] = X::to_r(gates[g + j]) + X::to_r(gh[g + j]) + th_rnn_bias<T>(q.p[2], (long long)j) +
             th_rnn_bias<T>(q.p[3], (long long)j);
    }
    const R ig = th_rnn_sigmoid(a[0]), fg = th_rnn_sigmoid(a[1]), cg = th_ctanh(a[2]), og = th_rnn_sigmoid(a[3]);
    const R c1 = fg * X::to_r(cx[(O)e]) + ig * cg;
    cy[(O)e] = X::from_r(c1);
    hy[(O)e] = X::from_r(og * th_ctanh(c1));
    gates[g + i] = X::from_r(ig);
    gates[g + h + i] = X::from_r(fg);
    gates[g + 2 * h + i] = X::from_r(cg);
    gates[g + 3 * h + i] = X::from_r(og);
  }
}

// LSTM backward. p: storage, gradInGates, cx, cy, gradOutput, gradOutputCell, gradInputCx.
template <class I, class T> __device__ void th_rnn_lstm_back(const THCRnn &q) {
  typedef typename th_offset<I>::type O;
  typedef th_traits<T> X;
  typedef typename X::R R;
  const T *st = (const T *)q.p[0], *cx = (const T *)q.p[2], *cy = (const T *)q.p[3];
  const T *go = (const T *)q.p[4], *goc = (const T *)q.p[5];
  T *gg = (T *)q.p[1], *gcx = (T *)q.p[6];
  const I n = (I)q.n, stride = (I)blockDim.x * (I)gridDim.x;
  const O h = (O)q.h;
  const R one = (R)1;
  for (I e = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; e < n; e += stride) {
    const O r = (O)e / h, i = (O)e % h, g = 4 * h * r;
    const R ig = X::to_r(st[g + i]), fg = X::to_r(st[g + h + i]), cg = X::to_r(st[g + 2 * h + i]),
            og = X::to_r(st[g + 3 * h + i]);
    const R t = th_ctanh(X::to_r(cy[(O)e])), go_ = X::to_r(go[(O)e]);
    const R gc = go_ * og * (one - t * t) + X::to_r(goc[(O)e]);
    gg[g + i] = X::from_r(gc * cg * (one - ig) * ig);
    gg[g + h + i] = X::from_r(gc * X::to_r(cx[(O)e]) * (one - fg) * fg);
    gg[g + 2 * h + i] = X::from_r(gc * ig * (one - cg * cg));
    gg[g + 3 * h + i] = X::from_r(go_ * t * (one - og) * og);
    gcx[(O)e] = X::from_r(gc * fg);
  }
}

#define TH_NN_RNN_KERNEL(name, body, sfx, T)                                                          \
  TH_KERNEL(th_##name##_##sfx##_i32, TH_EMU_INDEPENDENT, THCRnn, body<unsigned int, T>)             \
  TH_KERNEL(th_##name##_##sfx##_i64, TH_EMU_INDEPENDENT, THCRnn, body<unsigned long long, T>)
#define TH_NN_RNN_KERNELS(sfx, T)                                                                     \
  TH_NN_RNN_KERNEL(rnnGru, th_rnn_gru, sfx, T) TH_NN_RNN_KERNEL(rnnGruBack, th_rnn_gru_back, sfx, T)   \
  TH_NN_RNN_KERNEL(rnnLstm, th_rnn_lstm, sfx, T) TH_NN_RNN_KERNEL(rnnLstmBack, th_rnn_lstm_back, sfx, T)

#endif  // TH_CUDA_NN_RNN_CUH
