// The C++ wrapper (include/TH/th.hpp): owning handles with copy = retain, move = steal and
// destructor = free, errors as exceptions, a THFile round trip and a .npy file.
//
//   cargo build --release
//   c++ -std=c++17 -Iinclude ffi_examples/cpp_basic.cpp -Ltarget/release -lth
//       -Wl,-rpath,$PWD/target/release -o cpp_basic && ./cpp_basic
#include <TH/th.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#define EXPECT(cond)                                                  \
  do {                                                                \
    if (!(cond)) {                                                    \
      std::fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond); \
      std::exit(1);                                                   \
    }                                                                 \
  } while (0)

int main() {
  // A 2x3 tensor; b shares it (retain), c steals b's reference (move).
  th::FloatTensor a = th::FloatTensor::zeros({2, 3});
  for (int64_t i = 0; i < 2; i++)
    for (int64_t j = 0; j < 3; j++) a.set({i, j}, float(10 * i + j));
  th::FloatTensor b = a;
  EXPECT(b.get() == a.get());
  th::FloatTensor c = std::move(b);
  EXPECT(!b && c.get() == a.get());

  // Views share the storage; clone() does not.
  th::FloatTensor at = a.transpose(0, 1);
  EXPECT(at.size(0) == 3 && !at.is_contiguous() && at.get({2, 1}) == 12.0f);
  th::FloatTensor copy = at.clone();
  a.set({1, 2}, -1.0f);
  EXPECT(at.get({2, 1}) == -1.0f && copy.get({2, 1}) == 12.0f);
  std::printf("%s, at(2,1) = %g\n", at.desc().c_str(), double(at.get({2, 1})));

  // Any C function is available through get().
  th::FloatTensor sum = th::FloatTensor::empty({2, 3});
  THFloatTensor_cadd(sum.get(), a.get(), 2.0f, a.get());
  EXPECT(sum.get({0, 1}) == 3.0f);

  // Errors become exceptions carrying the library's message.
  bool threw = false;
  try {
    a.narrow(0, 1, 5);
  } catch (const th::Error &e) {
    threw = true;
    std::printf("caught: %s\n", e.what());
  }
  EXPECT(threw);

  // Storages of every dtype, a generator, a memory file.
  th::LongStorage ls(4);
  ls.fill(7);
  th::File f = th::File::memory("rw");
  f.binary();
  EXPECT(f.write(ls) == 4);
  f.seek(0);
  th::LongStorage back(4);
  EXPECT(f.read(back) == 4 && back.get(3) == 7);
  th::File f2 = f;  // retain: both close the file only when the last goes
  f2.ascii();
  f2.write_string("hello\n");
  f2.seek(32);
  EXPECT(f2.read_string("*l") == "hello");

  th::Generator g(42);
  th::Generator g2 = g;  // retain: the same generator, one stream
  uint64_t r1 = g.random(), r2 = g2.random();
  th::Generator h(42);
  EXPECT(h.random() == r1 && h.random() == r2);
  th::BoolTensor m = th::BoolTensor::full({3}, 1);
  EXPECT(m.numel() == 3 && m.get({2}) == 1);

  // .npy round trip through a temporary file.
  const char *tmp = std::getenv("TH_TEST_TMPDIR");
  std::string path = std::string(tmp ? tmp : "/tmp") + "/th_cpp_basic.npy";
  at.save_npy(path);
  th::FloatTensor loaded = th::FloatTensor::load_npy(path);
  EXPECT(loaded.sizes() == at.sizes() && loaded.get({2, 1}) == -1.0f && loaded.is_contiguous());
  std::remove(path.c_str());
  std::printf("ok\n");
  return 0;
}
