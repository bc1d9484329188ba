#!/usr/bin/env bash
# Puts a real NVIDIA driver library (Debian non-free `libcuda1`, with the PTX JIT library it
# depends on) into target/libcuda/lib when it is missing, and prints that folder, for
#
#   TH_LIBCUDA_DIR=$(scripts/libcuda_nodevice.sh) cargo test --test c_api thc_meets_the_real_driver
#
# On a machine without a GPU (or without the kernel module) that library loads, and cuInit
# then reports that there is no device: THC's "driver present, no device" error paths run
# against the real driver instead of a fake.
#
# No root and no change to the system's apt configuration: apt reads a private sources list
# and keeps its lists and cache in a temporary folder. apt checks each .deb against the signed
# index; this script also checks it against the SHA-256 pinned below for the default version.
# TH_LIBCUDA_VERSION picks another Debian version (then only apt's own check applies).
# Progress goes to stderr, so stdout is only the folder.
set -euo pipefail
cd "$(dirname "$0")/.."

DEFAULT_VERSION=535.261.03-1
VERSION=${TH_LIBCUDA_VERSION:-$DEFAULT_VERSION}
PACKAGES=(libcuda1 libnvidia-ptxjitcompiler1)
DIR=target/libcuda
LIB="$DIR/lib"

# SHA-256 of the default version's .debs (from Debian's signed Packages index of bookworm).
pinned_sha256() {
  case "$1_$DEFAULT_VERSION" in
    libcuda1_535.261.03-1) echo de1e9ca34164a5983b3f752e6699cf1ad924790f1a843b7d582bab6f99206e1e ;;
    libnvidia-ptxjitcompiler1_535.261.03-1) echo 4e03bb994324a81d1a39d1e3eb0fed3f7f3c31a2b606a6e9110300de4f4fa1a0 ;;
    *) echo "" ;;
  esac
}

if [ -f "$LIB/libcuda.so.1" ] && [ "$(cat "$DIR/VERSION" 2>/dev/null)" = "$VERSION" ]; then
  echo "$(pwd)/$LIB"
  exit 0
fi

for tool in apt-get apt-cache dpkg-deb sha256sum; do
  command -v "$tool" >/dev/null || { echo "libcuda_nodevice.sh: needs $tool (a Debian system)" >&2; exit 1; }
done
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -f "$keyring" ] || { echo "libcuda_nodevice.sh: no $keyring (package debian-archive-keyring)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/lists/partial" "$tmp/cache/archives/partial" "$tmp/x"
# bookworm holds the pinned version; bookworm-security the newer ones a TH_LIBCUDA_VERSION may name.
cat >"$tmp/sources.list" <<EOF
deb [signed-by=$keyring] http://deb.debian.org/debian bookworm non-free
deb [signed-by=$keyring] http://deb.debian.org/debian-security bookworm-security non-free
EOF
apt_opts=(
  -o "Dir::Etc::sourcelist=$tmp/sources.list" -o Dir::Etc::sourceparts=/nonexistent
  -o "Dir::State::Lists=$tmp/lists" -o "Dir::Cache=$tmp/cache" -o Dir::State::status=/dev/null
  -o Debug::NoLocking=1 -o APT::Architecture=amd64
)
# As root apt would hand downloads to the _apt user, who cannot write into our private folder.
[ "$(id -u)" -eq 0 ] && apt_opts+=(-o APT::Sandbox::User=root)

echo "libcuda_nodevice.sh: fetching ${PACKAGES[*]} $VERSION" >&2
apt-get "${apt_opts[@]}" -qq update >&2
(cd "$tmp" && apt-get "${apt_opts[@]}" -qq download "${PACKAGES[@]/%/=$VERSION}" >&2)

for p in "${PACKAGES[@]}"; do
  deb=$(ls "$tmp/${p}_"*.deb)
  got=$(sha256sum "$deb" | cut -d' ' -f1)
  indexed=$(apt-cache "${apt_opts[@]}" show "$p=$VERSION" | awk '/^SHA256:/ {print $2; exit}')
  want=$indexed
  [ "$VERSION" = "$DEFAULT_VERSION" ] && want=$(pinned_sha256 "$p")
  if [ "$got" != "$want" ] || [ "$got" != "$indexed" ]; then
    echo "libcuda_nodevice.sh: checksum mismatch for $deb: got $got, pinned $want, index $indexed" >&2
    exit 1
  fi
  dpkg-deb -x "$deb" "$tmp/x"
done

src="$tmp/x/usr/lib/x86_64-linux-gnu/nvidia/current"
[ -f "$src/libcuda.so.1" ] || { echo "libcuda_nodevice.sh: no libcuda.so.1 in the packages" >&2; exit 1; }
rm -rf "$DIR"
mkdir -p "$LIB"
cp -a "$src"/. "$LIB"/
echo "$VERSION" >"$DIR/VERSION"
echo "$(pwd)/$LIB"
