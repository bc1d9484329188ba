#!/usr/bin/env bash
# Installs th the way C libraries are installed:
#   PREFIX/lib/libth.so.X.Y.Z (soname libth.so.X) + libth.so.X and libth.so symlinks, libth.a
#     (both stripped of debug info; the shared library's symbol table is stripped too, its
#     exported symbols stay)
#   PREFIX/lib/debug/PREFIX/lib/libth.so.X.Y.Z.debug   the shared library's debug info, found by
#     gdb through the library's .gnu_debuglink (CRC-checked) under the debug root PREFIX/lib/debug
#     (gdb's default root is /usr/lib/debug, so with PREFIX=/usr as is; else
#     `set debug-file-directory PREFIX/lib/debug`), and by build id: PREFIX/lib/debug/.build-id/
#     xx/yyyy.debug (a symlink), as distributions lay out their -dbg packages
#   PREFIX/include/TH/{TH.h,THFile.h,THDiskFile.h,THMemoryFile.h,th.hpp}
#   PREFIX/lib/pkgconfig/th.pc                      (pkg-config --cflags --libs th)
#   PREFIX/lib/cmake/th/thConfig.cmake + version    (find_package(th) -> th::th, th::th_static)
#
# Usage: scripts/install.sh --prefix DIR [--libdir NAME] [--no-build] [--debug] [--no-debug-info]
#   --libdir NAME     library directory under the prefix (default: lib)
#   --no-build        install what target/<profile> already holds
#   --debug           install the debug build instead of the release build
#   --no-debug-info   install the stripped libraries only (no PREFIX/lib/debug)
# DESTDIR is honoured (files go to $DESTDIR$PREFIX; the .pc/.cmake files name $PREFIX).
set -euo pipefail
cd "$(dirname "$0")/.."

prefix="" libdir="lib" build=1 profile=release debuginfo=1
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix="$2"; shift 2 ;;
    --prefix=*) prefix="${1#*=}"; shift ;;
    --libdir) libdir="$2"; shift 2 ;;
    --libdir=*) libdir="${1#*=}"; shift ;;
    --no-build) build=0; shift ;;
    --debug) profile=debug; shift ;;
    --no-debug-info) debuginfo=0; shift ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
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
so="$dest/$libdir/libth.so.$version"
# The debug info goes to its own file (kept only with debug info), then the installed copy is
# stripped: of its debug sections and of the symbols it does not export (--strip-unneeded keeps
# .dynsym), and tied to the debug file by a .gnu_debuglink (its name and CRC).
rm -f "$so"
if [ "$debuginfo" = 1 ]; then
  dbgroot="$dest/$libdir/debug"
  dbgdir="$dbgroot$prefix/$libdir"
  dbg="$dbgdir/libth.so.$version.debug"
  install -d "$dbgdir"
  objcopy --only-keep-debug --compress-debug-sections=zlib "$src/libth.so" "$dbg"
  chmod 644 "$dbg"
  objcopy --strip-unneeded --add-gnu-debuglink="$dbg" "$src/libth.so" "$so"
  # gdb's other lookup: DEBUGROOT/.build-id/xx/yyyy.debug
  id=$(readelf -n "$so" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p' | head -1)
  if [ -n "$id" ]; then
    install -d "$dbgroot/.build-id/${id:0:2}"
    ln -sf "$(realpath --relative-to="$dbgroot/.build-id/${id:0:2}" "$dbg")" "$dbgroot/.build-id/${id:0:2}/${id:2}.debug"
  fi
else
  objcopy --strip-unneeded "$src/libth.so" "$so"
fi
chmod 755 "$so"
ln -sf "libth.so.$version" "$dest/$libdir/libth.so.$major"
ln -sf "libth.so.$major" "$dest/$libdir/libth.so"
objcopy --strip-debug "$src/libth.a" "$dest/$libdir/libth.a"
chmod 644 "$dest/$libdir/libth.a"
install -m 644 include/TH/*.h include/TH/*.hpp "$dest/include/TH/"

subst() {
  sed -e "s|@PREFIX@|$prefix|g" -e "s|@LIBDIR@|$libdir|g" -e "s|@VERSION@|$version|g" -e "s|@MAJOR@|$major|g" "$1"
}
subst packaging/th.pc.in > "$dest/$libdir/pkgconfig/th.pc"
subst packaging/thConfig.cmake.in > "$dest/$libdir/cmake/th/thConfig.cmake"
subst packaging/thConfigVersion.cmake.in > "$dest/$libdir/cmake/th/thConfigVersion.cmake"
chmod 644 "$dest/$libdir/pkgconfig/th.pc" "$dest/$libdir/cmake/th/"*.cmake
echo "installed th $version into $dest"
