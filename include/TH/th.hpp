/* th.hpp: a header-only C++ (C++11 and later) wrapper over th's C API (TH/TH.h).
 *
 * Every handle type gets an owning smart pointer, th::Ptr<Handle>, using the handle's intrusive
 * reference count: copying retains, moving steals, destruction frees. C++ code never calls
 * _retain/_free by hand:
 *
 *   th::FloatTensor a = th::FloatTensor::zeros({2, 3});   // owns a new THFloatTensor
 *   th::FloatTensor b = a;                                  // THFloatTensor_retain
 *   a.set({1, 2}, 5.0f);
 *   THFloatTensor_cadd(out.get(), a.get(), 1.0f, b.get());  // any C function via get()
 *
 * Errors: the wrappers' methods check the library's thread-local last error after each call
 * and throw th::Error (code + message). Define TH_HPP_NO_EXCEPTIONS (or build with
 * -fno-exceptions) to get plain return values instead; the error then stays readable through
 * THGetLastError(). th::checked(f) runs any lambda of C calls with the same checking.
 *
 * Ownership helpers: Ptr<H>::adopt(p) takes over a +1 reference (what new* functions return);
 * Ptr<H>::borrow(p) retains a borrowed pointer (e.g. THFloatTensor_storage(t)); release() gives
 * the reference back to C.
 */
#ifndef TH_TH_HPP
#define TH_TH_HPP

#include <TH/TH.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#if !defined(TH_HPP_NO_EXCEPTIONS) && (defined(__cpp_exceptions) || defined(__EXCEPTIONS))
#define TH_HPP_EXCEPTIONS 1
#include <stdexcept>
#else
#define TH_HPP_EXCEPTIONS 0
#endif

namespace th {

#if TH_HPP_EXCEPTIONS
/** A failing library call: the code (TH_ERR_*) and the message THGetLastError() gave. */
class Error : public std::runtime_error {
 public:
  Error(THErrorCode code, const std::string &msg) : std::runtime_error(msg), code_(code) {}
  THErrorCode code() const noexcept { return code_; }

 private:
  THErrorCode code_;
};
#endif

/** Throws th::Error if the last library call on this thread failed (no-op without exceptions). */
inline void check_last_error() {
#if TH_HPP_EXCEPTIONS
  THErrorCode code = static_cast<THErrorCode>(THGetLastErrorCode());
  if (code != TH_OK) {
    const char *msg = THGetLastError();
    std::string text = msg ? msg : "th: unknown error";
    THClearLastError();
    throw Error(code, text);
  }
#endif
}

namespace detail {
template <class R>
struct Run {
  template <class F>
  static R go(F &f) {
    R r = f();
    check_last_error();
    return r;
  }
};
template <>
struct Run<void> {
  template <class F>
  static void go(F &f) {
    f();
    check_last_error();
  }
};
}  // namespace detail

/** Runs f (a lambda of C calls) with the last error cleared first and checked after; returns
 *  f's result. */
template <class F>
auto checked(F &&f) -> decltype(f()) {
  THClearLastError();
  return detail::Run<decltype(f())>::go(f);
}

/** How to retain and free a handle type. */
template <class H>
struct handle_traits;

#define TH_HPP_HANDLE(H, RETAIN, FREE)                    \
  template <>                                             \
  struct handle_traits<H> {                               \
    static void retain(H *p) noexcept { RETAIN(p); }      \
    static void release(H *p) noexcept { FREE(p); }       \
  };

TH_HPP_HANDLE(THGenerator, THGenerator_retain, THGenerator_free)
TH_HPP_HANDLE(THFile, THFile_retain, THFile_free)

/** An owning intrusive pointer to a th handle: copy = retain, move = steal, destructor = free. */
template <class H>
class Ptr {
 public:
  using handle_type = H;

  Ptr() noexcept : p_(nullptr) {}
  Ptr(std::nullptr_t) noexcept : p_(nullptr) {}
  Ptr(const Ptr &o) noexcept : p_(o.p_) {
    if (p_) handle_traits<H>::retain(p_);
  }
  Ptr(Ptr &&o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  ~Ptr() { reset(); }
  Ptr &operator=(Ptr o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }

  /** Takes over one reference the caller owns (the +1 of a new* function). */
  static Ptr adopt(H *p) noexcept {
    Ptr r;
    r.p_ = p;
    return r;
  }
  /** Adds a reference to a borrowed pointer. */
  static Ptr borrow(H *p) noexcept {
    if (p) handle_traits<H>::retain(p);
    return adopt(p);
  }

  H *get() const noexcept { return p_; }
  explicit operator bool() const noexcept { return p_ != nullptr; }
  /** Gives the reference away: the caller now frees it. */
  H *release() noexcept {
    H *p = p_;
    p_ = nullptr;
    return p;
  }
  void reset() noexcept {
    if (p_) handle_traits<H>::release(p_);
    p_ = nullptr;
  }
  friend bool operator==(const Ptr &a, const Ptr &b) noexcept { return a.p_ == b.p_; }
  friend bool operator!=(const Ptr &a, const Ptr &b) noexcept { return a.p_ != b.p_; }

 protected:
  H *p_;
};

/** Per-dtype facts: element type and the C functions the wrappers use. */
template <class T>
struct tensor_traits;
template <class S>
struct storage_traits;

#define TH_HPP_DTYPE(R, real)                                                                \
  TH_HPP_HANDLE(TH##R##Storage, TH##R##Storage_retain, TH##R##Storage_free)                 \
  TH_HPP_HANDLE(TH##R##Tensor, TH##R##Tensor_retain, TH##R##Tensor_free)                    \
  template <>                                                                                \
  struct storage_traits<TH##R##Storage> {                                                    \
    typedef real value_type;                                                                 \
    static TH##R##Storage *new_size(ptrdiff_t n) { return TH##R##Storage_newWithSize(n); }   \
    static ptrdiff_t size(const TH##R##Storage *s) { return TH##R##Storage_size(s); }        \
    static real *data(const TH##R##Storage *s) { return TH##R##Storage_data(s); }            \
    static real get(const TH##R##Storage *s, ptrdiff_t i) { return TH##R##Storage_get(s, i); } \
    static void set(TH##R##Storage *s, ptrdiff_t i, real v) { TH##R##Storage_set(s, i, v); } \
    static void fill(TH##R##Storage *s, real v) { TH##R##Storage_fill(s, v); }               \
    static size_t read(THFile *f, TH##R##Storage *s) { return THFile_read##R(f, s); }         \
    static size_t write(THFile *f, TH##R##Storage *s) { return THFile_write##R(f, s); }       \
  };                                                                                         \
  template <>                                                                                \
  struct tensor_traits<TH##R##Tensor> {                                                      \
    typedef real value_type;                                                                 \
    typedef TH##R##Storage storage_type;                                                     \
    static const char *name() { return #R; }                                                 \
    static TH##R##Tensor *new_() { return TH##R##Tensor_new(); }                             \
    static TH##R##Tensor *new_size(THLongStorage *s) { return TH##R##Tensor_newWithSize(s, NULL); } \
    static int ndim(const TH##R##Tensor *t) { return TH##R##Tensor_nDimension(t); }          \
    static int64_t size(const TH##R##Tensor *t, int d) { return TH##R##Tensor_size(t, d); }  \
    static int64_t stride(const TH##R##Tensor *t, int d) { return TH##R##Tensor_stride(t, d); } \
    static ptrdiff_t numel(const TH##R##Tensor *t) { return TH##R##Tensor_nElement(t); }    \
    static real *data(const TH##R##Tensor *t) { return TH##R##Tensor_data(t); }             \
    static TH##R##Storage *storage(const TH##R##Tensor *t) { return TH##R##Tensor_storage(t); } \
    static int is_contiguous(const TH##R##Tensor *t) { return TH##R##Tensor_isContiguous(t); } \
    static void fill(TH##R##Tensor *t, real v) { TH##R##Tensor_fill(t, v); }                 \
    static void zero(TH##R##Tensor *t) { TH##R##Tensor_zero(t); }                            \
    static void copy(TH##R##Tensor *t, TH##R##Tensor *s) { TH##R##Tensor_copy(t, s); }       \
    static TH##R##Tensor *transpose(TH##R##Tensor *t, int a, int b) { return TH##R##Tensor_newTranspose(t, a, b); } \
    static TH##R##Tensor *narrow(TH##R##Tensor *t, int d, int64_t f, int64_t n) { return TH##R##Tensor_newNarrow(t, d, f, n); } \
    static TH##R##Tensor *contiguous(TH##R##Tensor *t) { return TH##R##Tensor_newContiguous(t); } \
    static THDescBuff desc(const TH##R##Tensor *t) { return TH##R##Tensor_desc(t); }         \
    static void save_npy(const char *p, TH##R##Tensor *t) { TH##R##Tensor_saveNpy(p, t); }   \
    static TH##R##Tensor *load_npy(const char *p) { return TH##R##Tensor_loadNpy(p); }       \
  };

TH_HPP_DTYPE(Byte, uint8_t)
TH_HPP_DTYPE(Char, int8_t)
TH_HPP_DTYPE(Short, int16_t)
TH_HPP_DTYPE(Int, int32_t)
TH_HPP_DTYPE(Long, int64_t)
TH_HPP_DTYPE(Float, float)
TH_HPP_DTYPE(Double, double)
TH_HPP_DTYPE(Half, THHalf)
TH_HPP_DTYPE(BFloat16, THBFloat16)
TH_HPP_DTYPE(Bool, THBool)

/** A storage of one dtype (S is the C handle type, e.g. THFloatStorage). */
template <class S>
class Storage : public Ptr<S> {
  typedef storage_traits<S> tr;

 public:
  typedef typename tr::value_type value_type;
  using Ptr<S>::get;
  Storage() noexcept {}
  Storage(Ptr<S> p) noexcept : Ptr<S>(std::move(p)) {}
  /** A new storage of n (uninitialised) elements. */
  explicit Storage(ptrdiff_t n) : Ptr<S>(Ptr<S>::adopt(checked([&] { return tr::new_size(n); }))) {}
  ptrdiff_t size() const { return tr::size(this->p_); }
  value_type *data() const { return tr::data(this->p_); }
  value_type get(ptrdiff_t i) const {
    return checked([&] { return tr::get(this->p_, i); });
  }
  void set(ptrdiff_t i, value_type v) {
    checked([&] { tr::set(this->p_, i, v); });
  }
  void fill(value_type v) {
    checked([&] { tr::fill(this->p_, v); });
  }
};

/** A tensor of one dtype (T is the C handle type, e.g. THFloatTensor). */
template <class T>
class Tensor : public Ptr<T> {
  typedef tensor_traits<T> tr;

 public:
  typedef typename tr::value_type value_type;
  typedef Storage<typename tr::storage_type> storage_type;
  using Ptr<T>::get;

  /** A new empty tensor (no dimensions). */
  Tensor() : Ptr<T>(Ptr<T>::adopt(tr::new_())) {}
  Tensor(Ptr<T> p) noexcept : Ptr<T>(std::move(p)) {}
  static Tensor adopt(T *p) noexcept { return Tensor(Ptr<T>::adopt(p)); }

  /** A new contiguous tensor of the given sizes, uninitialised. */
  static Tensor empty(const std::vector<int64_t> &sizes) {
    THLongStorage *s = THLongStorage_newWithSize((ptrdiff_t)sizes.size());
    for (size_t i = 0; i < sizes.size(); i++) THLongStorage_set(s, (ptrdiff_t)i, sizes[i]);
    T *t = tr::new_size(s);
    THLongStorage_free(s);
    check_last_error();
    return adopt(t);
  }
  static Tensor zeros(const std::vector<int64_t> &sizes) {
    Tensor t = empty(sizes);
    tr::zero(t.get());
    return t;
  }
  static Tensor full(const std::vector<int64_t> &sizes, value_type v) {
    Tensor t = empty(sizes);
    t.fill(v);
    return t;
  }
  /** Reads a NumPy .npy file of this dtype. */
  static Tensor load_npy(const std::string &path) {
    return adopt(checked([&] { return tr::load_npy(path.c_str()); }));
  }

  int dim() const { return tr::ndim(this->p_); }
  int64_t size(int d) const {
    return checked([&] { return tr::size(this->p_, d); });
  }
  int64_t stride(int d) const {
    return checked([&] { return tr::stride(this->p_, d); });
  }
  std::vector<int64_t> sizes() const {
    std::vector<int64_t> v;
    for (int d = 0; d < dim(); d++) v.push_back(tr::size(this->p_, d));
    return v;
  }
  ptrdiff_t numel() const { return tr::numel(this->p_); }
  bool is_contiguous() const { return tr::is_contiguous(this->p_) != 0; }
  /** Pointer to element (0, ..., 0) (borrowed; NULL for an empty tensor). */
  value_type *data() const { return tr::data(this->p_); }
  storage_type storage() const { return storage_type(Ptr<typename tr::storage_type>::borrow(tr::storage(this->p_))); }
  /** "torch.FloatTensor of size 2x3". */
  std::string desc() const { return tr::desc(this->p_).str; }

  /** Element at a full index (bounds-checked; 0-based). */
  value_type get(std::initializer_list<int64_t> idx) const {
    int64_t off = offset(idx);
    return off < 0 ? value_type() : data()[off];
  }
  void set(std::initializer_list<int64_t> idx, value_type v) {
    int64_t off = offset(idx);
    if (off >= 0) data()[off] = v;
  }
  void fill(value_type v) {
    checked([&] { tr::fill(this->p_, v); });
  }
  void copy_from(const Tensor &src) {
    checked([&] { tr::copy(this->p_, src.get()); });
  }
  Tensor transpose(int d0, int d1) const {
    return adopt(checked([&] { return tr::transpose(this->p_, d0, d1); }));
  }
  Tensor narrow(int d, int64_t first, int64_t n) const {
    return adopt(checked([&] { return tr::narrow(this->p_, d, first, n); }));
  }
  /** This tensor (shared) when contiguous, else a contiguous copy. */
  Tensor contiguous() const {
    return adopt(checked([&] { return tr::contiguous(this->p_); }));
  }
  /** A contiguous copy that shares nothing with this tensor. */
  Tensor clone() const {
    Tensor r = empty(sizes());
    r.copy_from(*this);
    return r;
  }
  void save_npy(const std::string &path) const {
    checked([&] { tr::save_npy(path.c_str(), this->p_); });
  }

 private:
  /* Storage offset from data() of a full index; -1 (and an exception when enabled) if out of
   * range. */
  int64_t offset(std::initializer_list<int64_t> idx) const {
    bool ok = (int)idx.size() == dim() && dim() > 0;
    int64_t off = 0;
    int d = 0;
    for (int64_t i : idx) {
      if (!ok) break;
      ok = i >= 0 && i < tr::size(this->p_, d);
      off += i * tr::stride(this->p_, d);
      d++;
    }
    if (ok) return off;
#if TH_HPP_EXCEPTIONS
    throw Error(TH_ERR_INDEX, "th::Tensor: index out of range or wrong number of indices");
#else
    return -1;
#endif
  }
};

/** A random generator (refcounted; copies share the stream). */
class Generator : public Ptr<THGenerator> {
 public:
  /** A new generator seeded from /dev/urandom. */
  Generator() : Ptr<THGenerator>(Ptr<THGenerator>::adopt(THGenerator_new())) {}
  explicit Generator(uint64_t seed) : Generator() { manual_seed(seed); }
  void manual_seed(uint64_t seed) {
    checked([&] { THRandom_manualSeed(p_, seed); });
  }
  uint64_t random() {
    return checked([&] { return THRandom_random(p_); });
  }
  double uniform(double a, double b) {
    return checked([&] { return THRandom_uniform(p_, a, b); });
  }
};

/** A THFile (disk file, pipe or memory file); closed when the last copy goes. */
class File : public Ptr<THFile> {
 public:
  File() noexcept {}
  File(Ptr<THFile> p) noexcept : Ptr<THFile>(std::move(p)) {}
  static File disk(const std::string &name, const std::string &mode) {
    return File(Ptr<THFile>::adopt(checked([&] { return THDiskFile_new(name.c_str(), mode.c_str(), 0); })));
  }
  static File memory(const std::string &mode) {
    return File(Ptr<THFile>::adopt(checked([&] { return THMemoryFile_new(mode.c_str()); })));
  }
  File &binary() {
    checked([&] { THFile_binary(p_); });
    return *this;
  }
  File &ascii() {
    checked([&] { THFile_ascii(p_); });
    return *this;
  }
  void seek(size_t pos) {
    checked([&] { THFile_seek(p_, pos); });
  }
  size_t position() const {
    return checked([&] { return THFile_position(p_); });
  }
  void close() {
    checked([&] { THFile_close(p_); });
  }
  template <class S>
  size_t write(const Storage<S> &s) {
    return checked([&] { return storage_traits<S>::write(p_, s.get()); });
  }
  template <class S>
  size_t read(Storage<S> &s) {
    return checked([&] { return storage_traits<S>::read(p_, s.get()); });
  }
  void write_string(const std::string &s) {
    checked([&] { return THFile_writeStringRaw(p_, s.data(), s.size()); });
  }
  /** format "*a" (all), "*l" (a line) or "*n" (a number token). */
  std::string read_string(const char *format) {
    char *p = NULL;
    size_t n = checked([&] { return THFile_readStringRaw(p_, format, &p); });
    std::string r(p ? p : "", n);
    THFree(p);
    return r;
  }

};

#define TH_HPP_ALIASES(R)                                                                  \
  typedef Tensor<TH##R##Tensor> R##Tensor;                                                 \
  typedef Storage<TH##R##Storage> R##Storage;

TH_HPP_ALIASES(Byte)
TH_HPP_ALIASES(Char)
TH_HPP_ALIASES(Short)
TH_HPP_ALIASES(Int)
TH_HPP_ALIASES(Long)
TH_HPP_ALIASES(Float)
TH_HPP_ALIASES(Double)
TH_HPP_ALIASES(Half)
TH_HPP_ALIASES(BFloat16)
TH_HPP_ALIASES(Bool)

#undef TH_HPP_ALIASES
#undef TH_HPP_DTYPE
#undef TH_HPP_HANDLE

}  // namespace th

#endif /* TH_TH_HPP */
