#!/usr/bin/env bash
# Installs th into a temporary prefix (scripts/install.sh, reusing the debug build unless
# TH_INSTALL_PROFILE=release) and checks it the way a user would: the soname and symlinks, a C
# example built with `pkg-config --cflags --libs th` and run, and (when cmake is present) a tiny
# CMake project using find_package(th) and th::th, built and run. Nothing outside the prefix.
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

if command -v cmake >/dev/null 2>&1; then
  cmake -S tests/install -B "$work/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$work/build" >/dev/null
  "$work/build/basic" >/dev/null
  TH_TEST_TMPDIR="$work" "$work/build/cpp_basic" >/dev/null
  echo "install: CMake find_package(th) project ok"
else
  echo "install: cmake not found, skipping the find_package(th) check"
fi
