#!/usr/bin/env bash
# The MPI examples (ffi_examples/mpi) run the way a user runs them: Open MPI from the
# distribution (openmpi-bin, libopenmpi-dev; installed if mpicc/mpirun are missing), th installed
# into a temporary prefix (scripts/install.sh --debug --no-build, as tests/install/run.sh), the C
# programs built with `mpicc $(pkg-config --cflags --libs th)`, then C and Python (mpi4py on th
# tensors; mpi4py installed into the Python's environment if missing) each on 4 ranks with
# `mpirun -np 4 --oversubscribe`. Each program checks itself and exits non-zero on failure:
#   linreg   data-parallel least squares: every rank's parameters bit-identical, and within
#            1e-5 of the single-process run on the whole data; zero-copy Allreduce/Bcast
#   scatter  Scatterv/Gatherv of a 2003 x 1001 tensor by row blocks (contiguous views) and
#            column blocks (non-contiguous views: a derived datatype, checked against a
#            contiguous copy)
#   node_shared  one shared-memory copy of a tensor per node (MPI_COMM_TYPE_SHARED + th's
#            THRefcountedMapAllocator storages), the ranks' shards as views of it (C only)
# Needs target/debug/libth.so (cargo build) and, for the Python half, the th package installed
# into $PYTHON (default .venv/bin/python; scripts/test.sh pip-installs it before this step).
# TH_MPI_SKIP_PYTHON=1 runs the C half only.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-.venv/bin/python}"
case "$PYTHON" in */*) PYTHON="$(cd "$(dirname "$PYTHON")" && pwd)/$(basename "$PYTHON")" ;; esac
NP="${TH_MPI_NP:-4}"
now() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); } # milliseconds
lap() { local d=$(($(now) - $2)); printf 'mpi: %-40s %4d.%d s\n' "$1" $((d / 1000)) $((d % 1000 / 100)); }
t_all=$(now)

t=$(now)
if ! command -v mpicc >/dev/null 2>&1 || ! command -v mpirun >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq openmpi-bin libopenmpi-dev >/dev/null
fi
if [ "${TH_MPI_SKIP_PYTHON:-0}" != 1 ] && ! "$PYTHON" -c "import mpi4py" 2>/dev/null; then
  # mpi4py >= 4.1 has binary wheels that load the system's Open MPI at run time (seconds);
  # without one pip builds it from source with mpicc (about a minute).
  "$PYTHON" -m pip install -q --disable-pip-version-check --prefer-binary "mpi4py>=4.1"
fi
lap "installs (Open MPI, mpi4py) if missing" "$t"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
t=$(now)
[ -f target/debug/libth.so ] || cargo build -q
scripts/install.sh --prefix "$work/usr" --debug --no-build >/dev/null
lib="$work/usr/lib"
export PKG_CONFIG_PATH="$lib/pkgconfig"
for prog in linreg scatter node_shared; do
  # shellcheck disable=SC2046
  mpicc -std=c99 -O2 -Wall -Wextra -Werror "ffi_examples/mpi/$prog.c" $(pkg-config --cflags --libs th) \
    -lm -Wl,-rpath,"$lib" -o "$work/$prog"
done
lap "install th, build the C examples" "$t"

# Open MPI refuses to start as root unless told (CI containers often run as root).
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
# One th thread per rank: 4 ranks share 2 cores. Shared-memory transport without the CMA
# single-copy path, which containers without ptrace permission refuse.
export TH_NUM_THREADS=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
# More ranks than cores: bind no rank to a core.
mpirun=(timeout 300 mpirun -np "$NP" --oversubscribe --bind-to none -x TH_NUM_THREADS)

for prog in linreg scatter node_shared; do
  t=$(now)
  "${mpirun[@]}" "$work/$prog"
  lap "C $prog, $NP ranks" "$t"
done
if [ "${TH_MPI_SKIP_PYTHON:-0}" != 1 ]; then
  for prog in linreg scatter; do
    t=$(now)
    # `-m mpi4py`: an uncaught exception on one rank aborts the whole job instead of hanging it
    (cd ffi_examples/mpi && "${mpirun[@]}" "$PYTHON" -m mpi4py "$prog.py")
    lap "Python $prog, $NP ranks" "$t"
  done
fi
lap "total" "$t_all"
echo "mpi: C and Python examples passed on $NP ranks"
