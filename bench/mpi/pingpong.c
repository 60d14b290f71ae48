/* Latency and bandwidth of MPI point-to-point messages between two ranks
 * (the alpha and beta of bench/mpimodel). Built and run by
 * bench/mpi_pingpong.sh with mpicc and mpirun (Open MPI, libopenmpi-dev);
 * kept out of bench/ itself so that the plain build never needs MPI.
 * Half the round-trip time per size, the median of several batches; alpha
 * = the 8-byte time, beta from the two largest sizes. JSON lines. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (!rank) fprintf(stderr, "pingpong: run with exactly 2 ranks\n");
        MPI_Finalize();
        return 2;
    }
    enum { NS = 7, BATCH = 9 };
    const int bytes[NS] = {8, 64, 512, 4096, 32768, 262144, 4194304};
    char *buf = calloc(4194304, 1);
    double half[NS];
    for (int s = 0; s < NS; s++) {
        int reps = bytes[s] >= 262144 ? 50 : 2000;
        double t[BATCH];
        for (int b = 0; b < BATCH; b++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (int i = 0; i < reps; i++) {
                if (rank == 0) {
                    MPI_Send(buf, bytes[s], MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                    MPI_Recv(buf, bytes[s], MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else {
                    MPI_Recv(buf, bytes[s], MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Send(buf, bytes[s], MPI_BYTE, 0, 0, MPI_COMM_WORLD);
                }
            }
            t[b] = (MPI_Wtime() - t0) / (2.0 * reps);
        }
        qsort(t, BATCH, sizeof *t, cmp);
        half[s] = t[BATCH / 2];
        if (!rank) printf("{\"bench\": \"mpi_pingpong\", \"bytes\": %d, \"half_round_trip_us\": %.3f}\n", bytes[s], 1e6 * half[s]);
    }
    if (!rank) {
        double beta = (half[NS - 1] - half[NS - 2]) / (double)(bytes[NS - 1] - bytes[NS - 2]);
        printf("{\"bench\": \"mpi_pingpong\", \"alpha_us\": %.3f, \"beta_gbs\": %.2f}\n", 1e6 * half[0], 1e-9 / beta);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
