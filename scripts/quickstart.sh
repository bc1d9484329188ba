#!/usr/bin/env bash
# Builds libth (release) and runs the C quick-start example against it.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release
mkdir -p target/examples
cc -std=c99 -Wall -Wextra -Werror -Iinclude ffi_examples/basic.c \
   -Ltarget/release -lth -Wl,-rpath,"$PWD/target/release" -o target/examples/basic
./target/examples/basic
