// Line kernels: ops whose work item walks one dimension of each operand (triangles, cross
// products, and the index, scan and sort families). A launch iterates items over `it` (a
// THCPointwise whose dims keep the caller's order, so the item index counts row-major over the
// iteration shape); operand k's line starts at its offset for the item and has len[k] elements
// step[k] apart. One thread owns a whole line, so a line's elements are visited in order: the
// results (last write wins, accumulation order) are the host engine's whatever the grid.
#ifndef TH_CUDA_LINES_CUH
#define TH_CUDA_LINES_CUH

// The one parameter of every line kernel (mirrored in src/cuda/launch.rs).
struct THCLines {
  THCPointwise it;
  long long len[TH_CUDA_MAX_OPERANDS];
  long long step[TH_CUDA_MAX_OPERANDS];
};
static_assert(sizeof(THCLines) == 784, "THCLines layout");
#ifdef TH_EMULATOR
static_assert(__builtin_offsetof(THCLines, len) == 720, "THCLines layout");
static_assert(__builtin_offsetof(THCLines, step) == 752, "THCLines layout");
#endif

// The loops along a line stay rolled: unrolled copies keep more offsets live than they save,
// and made ptxas spill at low register counts.
#ifdef TH_EMULATOR
#define TH_LINE_LOOP _Pragma("GCC unroll 1")
#else
#define TH_LINE_LOOP _Pragma("unroll 1")
#endif

// The two index widths of a line kernel: `name_i32`, `name_i64` (see TH_POINTWISE).
#define TH_LINES(name, body, ...)                                                                     \
  TH_KERNEL(name##_i32, TH_EMU_INDEPENDENT, THCLines, body<unsigned int, __VA_ARGS__>)              \
  TH_KERNEL(name##_i64, TH_EMU_INDEPENDENT, THCLines, body<unsigned long long, __VA_ARGS__>)
// ... for kernels whose block shares a line (__syncthreads, shared memory).
#define TH_LINES_COOPERATIVE(name, body, ...)                                                         \
  TH_KERNEL(name##_i32, TH_EMU_COOPERATIVE, THCLines, body<unsigned int, __VA_ARGS__>)              \
  TH_KERNEL(name##_i64, TH_EMU_COOPERATIVE, THCLines, body<unsigned long long, __VA_ARGS__>)

// ---- triangles: zero what lies outside one (in place, after the source was copied) ----

// Item r is row r of the matrix (operand 0, its line the row's columns); i[0] = k (already
// clamped by the host to +-(rows + cols)), i[1] = 1 for triu (keeps c >= r + k), 0 for tril
// (keeps c <= r + k).
template <class I, class T> void th_lines_tri(const THCLines &p) {
  typedef typename th_offset<I>::type O;
  T *o = th_ptr<T>(p.it, 0);
  const long long k = p.it.i[0], cols = p.len[0];
  const bool upper = p.it.i[1] != 0;
  const O step = (O)p.step[0];
  const T zero = th_make<T>::from_i64(0);
  th_for_each<I, 1>(p.it, [&](I r, const O *off) {
    const long long edge = (long long)r + k;
    long long lo = upper ? 0 : edge + 1, hi = upper ? edge : cols;
    lo = lo < 0 ? 0 : (lo > cols ? cols : lo);
    hi = hi < 0 ? 0 : (hi > cols ? cols : hi);
TH_LINE_LOOP
    for (long long c = lo; c < hi; ++c) o[off[0] + (O)c * step] = zero;
  });
}

// ---- cross products along a dimension of size 3 ----

// Integers wrap in their own width (the host's wrapping mul/sub); floats compute in double and
// round once, as the host does.
template <class T, int K = th_traits<T>::kind> struct th_cross_of {
  static __forceinline__ T at(T xu, T yv, T xv, T yu) {
    const unsigned long long a = (unsigned long long)(long long)xu, b = (unsigned long long)(long long)yv;
    const unsigned long long c = (unsigned long long)(long long)xv, d = (unsigned long long)(long long)yu;
    return (T)(a * b - c * d);
  }
};
template <class T> struct th_cross_of<T, TH_KIND_FLOAT> {
  static __forceinline__ T at(T xu, T yv, T xv, T yu) {
    return th_make<T>::from_f64((double)xu * (double)yv - (double)xv * (double)yu);
  }
};
template <class T> struct th_cross_of<T, TH_KIND_HALF> {
  static __forceinline__ T at(T xu, T yv, T xv, T yu) {
    const double a = th_traits<T>::to_f64(xu), b = th_traits<T>::to_f64(yv);
    const double c = th_traits<T>::to_f64(xv), d = th_traits<T>::to_f64(yu);
    return th_make<T>::from_f64(a * b - c * d);
  }
};

// Operands: out, a, b; each item one position of the other dims, each line of length 3.
template <class I, class T> void th_lines_cross(const THCLines &p) {
  typedef typename th_offset<I>::type O;
  T *o = th_ptr<T>(p.it, 0);
  const T *a = th_ptr<const T>(p.it, 1), *b = th_ptr<const T>(p.it, 2);
  const O so = (O)p.step[0], sa = (O)p.step[1], sb = (O)p.step[2];
  th_for_each<I, 3>(p.it, [&](I, const O *off) {
    const T x[3] = {a[off[1]], a[off[1] + sa], a[off[1] + 2 * sa]};
    const T y[3] = {b[off[2]], b[off[2] + sb], b[off[2] + 2 * sb]};
    for (int c = 0; c < 3; ++c) {
      const int u = (c + 1) % 3, v = (c + 2) % 3;
      o[off[0] + (O)c * so] = th_cross_of<T>::at(x[u], y[v], x[v], y[u]);
    }
  });
}

#define TH_LINE_KERNELS(sfx, T) TH_LINES(th_tri_##sfx, th_lines_tri, T)
#define TH_LINE_NUM_KERNELS(sfx, T) TH_LINES(th_cross_##sfx, th_lines_cross, T)

#endif  // TH_CUDA_LINES_CUH
