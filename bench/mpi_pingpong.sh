#!/usr/bin/env bash
# Measures alpha (latency) and beta (bandwidth) of MPI between two ranks on
# this machine (shared memory) for bench/mpimodel --alpha-us --beta-gbs.
# Needs Open MPI (apt-get install openmpi-bin libopenmpi-dev); not part of
# make: the engine does not link MPI.
#   bench/mpi_pingpong.sh      JSON lines on stdout
set -eu
cd "$(dirname "$0")/.."
command -v mpicc >/dev/null && command -v mpirun >/dev/null || {
    echo "mpi_pingpong: mpicc and mpirun not found (apt-get install openmpi-bin libopenmpi-dev)" >&2
    exit 2
}
mkdir -p build/mpi
mpicc -O2 -std=c11 -Wall -Wextra -o build/mpi/pingpong bench/mpi/pingpong.c
root=()
[ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
exec mpirun "${root[@]}" --oversubscribe -np 2 build/mpi/pingpong
