#!/usr/bin/env bash
# Runs every test. On a fresh machine (Rust, gcc, python3 only) it first installs what the tests
# need: valgrind (Debian package) and a local venv (.venv) with numpy and pytest. Steps:
#   1. cargo fmt --check, cargo clippy -D warnings
#   2. cargo test: Rust unit tests, header staleness + symbol set, C tests + examples + C++ header
#   3. the C tests and examples again under valgrind (no errors, no definite leaks)
#   4. the numpy differential suite (tests/python) against target/debug/libth.so
#   5. the Python package: `pip install ./ffi_examples/python` into .venv (its backend runs
#      `cargo build --release`, reusing target/release when it is current), then its pytest suite
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v valgrind >/dev/null 2>&1 || need_apt+=(valgrind)
command -v cc >/dev/null 2>&1 || need_apt+=(gcc)
command -v c++ >/dev/null 2>&1 || need_apt+=(g++)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "installing: ${need_apt[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c "import numpy, pytest" 2>/dev/null; then
  python3 -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check "numpy==2.4.6" "pytest>=8"
fi

cargo fmt --check
cargo clippy --all-targets -- -D warnings
cargo test
TH_VALGRIND=1 cargo test --test c_api
cargo build
TH_LIB="$PWD/target/debug/libth.so" .venv/bin/python -m pytest -q tests/python
.venv/bin/pip install -q --disable-pip-version-check --force-reinstall --no-deps ./ffi_examples/python
(cd ffi_examples/python/tests && ../../../.venv/bin/python -m pytest -q -p no:cacheprovider .)
echo "all tests passed"
