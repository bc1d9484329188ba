#!/usr/bin/env bash
# Installs th into a temporary prefix (scripts/install.sh, reusing the debug build unless
# TH_INSTALL_PROFILE=release) and checks it the way a user would: the soname and symlinks, a C
# example built with `pkg-config --cflags --libs th` and run, and (when cmake is present) a tiny
# CMake project using find_package(th) and th::th, built and run; the installed libraries are
# stripped, and the shared library's debug info (PREFIX/lib/debug/...) is the file its
# .gnu_debuglink names, which gdb (when present) finds and reads. A second install with
# --no-debug-info has no debug file. Nothing outside the prefix.
set -euo pipefail
cd "$(dirname "$0")/../.."

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix="$work/usr"
if [ "${TH_INSTALL_PROFILE:-debug}" = release ]; then
  scripts/install.sh --prefix "$prefix" >/dev/null
else
  scripts/install.sh --prefix "$prefix" --debug --no-build >/dev/null
fi

version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
lib="$prefix/lib"
test -f "$lib/libth.so.$version" && test -L "$lib/libth.so.0" && test -L "$lib/libth.so" && test -f "$lib/libth.a"
readelf -d "$lib/libth.so.$version" | grep -q 'SONAME.*\[libth\.so\.0\]' || { echo "install: wrong soname"; exit 1; }
for h in TH.h THFile.h THDiskFile.h THMemoryFile.h th.hpp; do test -f "$prefix/include/TH/$h"; done

# Stripped, with its debug info apart: no debug sections nor symbol table, a debuglink to the
# installed debug file (name and CRC-32), which holds the line tables.
so="$lib/libth.so.$version"
dbg="$lib/debug$prefix/lib/libth.so.$version.debug"
if readelf -SW "$so" | grep -Eq ' \.(debug_[a-z_]+|symtab) '; then echo "install: $so is not stripped"; exit 1; fi
if readelf -SW "$lib/libth.a" | grep -q ' \.debug_'; then echo "install: libth.a has debug info"; exit 1; fi
test -f "$dbg" || { echo "install: no debug file $dbg"; exit 1; }
readelf -SW "$dbg" | grep -q ' \.debug_line ' || { echo "install: $dbg holds no line tables"; exit 1; }
link=$(readelf -x .gnu_debuglink "$so" | sed -n 's/^  0x[0-9a-f]* //p' | cut -c1-35 | tr -d ' \n')
python3 - "$link" "$dbg" <<'PY' || { echo "install: the debuglink does not name $dbg with its CRC"; exit 1; }
import binascii, os, sys, zlib
raw = binascii.unhexlify(sys.argv[1])
name = raw[: raw.index(b"\0")]
crc = int.from_bytes(raw[(len(name) + 4) // 4 * 4 :][:4], "little")
data = open(sys.argv[2], "rb").read()
sys.exit(0 if name.decode() == os.path.basename(sys.argv[2]) and zlib.crc32(data) == crc else 1)
PY
id=$(readelf -n "$so" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p' | head -1)
if [ -n "$id" ]; then cmp -s "$dbg" "$lib/debug/.build-id/${id:0:2}/${id:2}.debug" || { echo "install: no build-id link"; exit 1; }; fi
if command -v gdb >/dev/null 2>&1; then
  gdb -nx -batch -iex "set debug-file-directory $lib/debug" -ex "info line THFloatTensor_add" "$so" 2>&1 |
    grep -q 'Line [0-9]* of "src/' || { echo "install: gdb does not find the debug info"; exit 1; }
  echo "install: gdb reads the separate debug info"
fi

export PKG_CONFIG_PATH="$lib/pkgconfig"
test "$(pkg-config --modversion th)" = "$version"
# shellcheck disable=SC2046
cc -std=c99 -Wall -Wextra -Werror ffi_examples/basic.c $(pkg-config --cflags --libs th) \
   -Wl,-rpath,"$lib" -o "$work/basic"
readelf -d "$work/basic" | grep -q 'NEEDED.*\[libth\.so\.0\]' || { echo "install: example does not need libth.so.0"; exit 1; }
"$work/basic" >/dev/null
# shellcheck disable=SC2046
c++ -std=c++17 -Wall -Wextra -Werror ffi_examples/cpp_basic.cpp $(pkg-config --cflags --libs th) \
   -Wl,-rpath,"$lib" -o "$work/cpp_basic"
TH_TEST_TMPDIR="$work" "$work/cpp_basic" >/dev/null
echo "install: pkg-config C and C++ examples ok"

# --no-debug-info: the stripped library alone
if [ "${TH_INSTALL_PROFILE:-debug}" = release ]; then
  scripts/install.sh --prefix "$work/nodbg" --no-build --no-debug-info >/dev/null
else
  scripts/install.sh --prefix "$work/nodbg" --debug --no-build --no-debug-info >/dev/null
fi
test ! -e "$work/nodbg/lib/debug" || { echo "install: --no-debug-info installed debug info"; exit 1; }
if readelf -SW "$work/nodbg/lib/libth.so.$version" | grep -Eq ' \.(debug_[a-z_]+|gnu_debuglink|symtab) '; then
  echo "install: --no-debug-info library not stripped"; exit 1
fi
rm -rf "$work/nodbg"
echo "install: stripped library, separate debug info and --no-debug-info ok"

if command -v cmake >/dev/null 2>&1; then
  cmake -S tests/install -B "$work/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$work/build" >/dev/null
  "$work/build/basic" >/dev/null
  TH_TEST_TMPDIR="$work" "$work/build/cpp_basic" >/dev/null
  echo "install: CMake find_package(th) project ok"
else
  echo "install: cmake not found, skipping the find_package(th) check"
fi
