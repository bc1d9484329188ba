#!/usr/bin/env bash
# Installs th the way C libraries are installed:
#   PREFIX/lib/libth.so.X.Y.Z (soname libth.so.X) + libth.so.X and libth.so symlinks, libth.a
#   PREFIX/include/TH/{TH.h,THFile.h,THDiskFile.h,THMemoryFile.h,th.hpp}
#   PREFIX/lib/pkgconfig/th.pc                      (pkg-config --cflags --libs th)
#   PREFIX/lib/cmake/th/thConfig.cmake + version    (find_package(th) -> th::th, th::th_static)
#
# Usage: scripts/install.sh --prefix DIR [--libdir NAME] [--no-build] [--debug]
#   --libdir NAME   library directory under the prefix (default: lib)
#   --no-build      install what target/<profile> already holds
#   --debug         install the debug build instead of the release build
# DESTDIR is honoured (files go to $DESTDIR$PREFIX; the .pc/.cmake files name $PREFIX).
set -euo pipefail
cd "$(dirname "$0")/.."

prefix="" libdir="lib" build=1 profile=release
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix="$2"; shift 2 ;;
    --prefix=*) prefix="${1#*=}"; shift ;;
    --libdir) libdir="$2"; shift 2 ;;
    --libdir=*) libdir="${1#*=}"; shift ;;
    --no-build) build=0; shift ;;
    --debug) profile=debug; shift ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "install.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ -n "$prefix" ] || { echo "install.sh: --prefix DIR is required" >&2; exit 2; }
case "$prefix" in /*) ;; *) prefix="$PWD/$prefix" ;; esac

version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
major=${version%%.*}

if [ "$build" = 1 ]; then
  if [ "$profile" = release ]; then cargo build --release; else cargo build; fi
fi
src="target/$profile"
[ -f "$src/libth.so" ] && [ -f "$src/libth.a" ] || { echo "install.sh: $src/libth.so or libth.a missing" >&2; exit 1; }

dest="${DESTDIR:-}$prefix"
install -d "$dest/$libdir/pkgconfig" "$dest/$libdir/cmake/th" "$dest/include/TH"
install -m 755 "$src/libth.so" "$dest/$libdir/libth.so.$version"
ln -sf "libth.so.$version" "$dest/$libdir/libth.so.$major"
ln -sf "libth.so.$major" "$dest/$libdir/libth.so"
install -m 644 "$src/libth.a" "$dest/$libdir/libth.a"
install -m 644 include/TH/*.h include/TH/*.hpp "$dest/include/TH/"

subst() {
  sed -e "s|@PREFIX@|$prefix|g" -e "s|@LIBDIR@|$libdir|g" -e "s|@VERSION@|$version|g" -e "s|@MAJOR@|$major|g" "$1"
}
subst packaging/th.pc.in > "$dest/$libdir/pkgconfig/th.pc"
subst packaging/thConfig.cmake.in > "$dest/$libdir/cmake/th/thConfig.cmake"
subst packaging/thConfigVersion.cmake.in > "$dest/$libdir/cmake/th/thConfigVersion.cmake"
chmod 644 "$dest/$libdir/pkgconfig/th.pc" "$dest/$libdir/cmake/th/"*.cmake
echo "installed th $version into $dest"
