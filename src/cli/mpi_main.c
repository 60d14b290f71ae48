/* avi-mpi: the avi command on MPI ranks (issue 31), `mpirun -np N avi-mpi
 * run SCENE -o OUT.h5`. Every rank runs the whole command; the engine
 * cuts each time slice over the ranks and exchanges the results after it
 * (avi_set_ranks, include/avi/engine.h), so that every rank holds the
 * serial state, bit for bit, and the rest of the run (small slices,
 * contact, observers, checkpoints) is the same on every rank. Rank 0 writes
 * the output and prints; the others write into a private directory that
 * is removed at their exit (a resume starts there from copies of OUT.h5 and
 * its checkpoint), with their output streams closed, so that bad input
 * gives one message and every rank the same exit status. */
#include "avi/engine.h"

#include <mpi.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int avi_cli_main(int argc, char **argv); /* src/cli/main.c, built as avi_cli_main here */

/* This rank's collectives and their bytes (--exchange-stats). */
typedef struct {
    unsigned long long gathers, alltoalls, agreements, bytes_out, bytes_in;
} exchange_stats;

static int gather(void *ctx, const void *send, void *recv, const size_t *counts)
{
    exchange_stats *st = ctx;
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *cnt = malloc(2 * (size_t)size * sizeof *cnt);
    if (!cnt) return -1;
    int *disp = cnt + size, rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    size_t off = 0;
    for (int r = 0; r < size; r++) {
        if (counts[r] > (size_t)2147483647 || off > (size_t)2147483647) {
            free(cnt);
            return -1;
        }
        cnt[r] = (int)counts[r];
        disp[r] = (int)off;
        off += counts[r];
    }
    int rc = MPI_Allgatherv(send, cnt[rank], MPI_BYTE, recv, cnt, disp, MPI_BYTE, MPI_COMM_WORLD);
    st->gathers++;
    st->bytes_out += counts[rank];
    st->bytes_in += off - counts[rank];
    free(cnt);
    return rc == MPI_SUCCESS ? 0 : -1;
}

static int alltoallv(void *ctx, const void *send, const size_t *send_counts, void *recv, const size_t *recv_counts)
{
    exchange_stats *st = ctx;
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *v = malloc(4 * (size_t)size * sizeof *v);
    if (!v) return -1;
    int *sc = v, *sd = v + size, *rc = v + 2 * size, *rd = v + 3 * size;
    size_t so = 0, ro = 0;
    for (int r = 0; r < size; r++) {
        if (send_counts[r] > (size_t)2147483647 || recv_counts[r] > (size_t)2147483647 || so > (size_t)2147483647 ||
            ro > (size_t)2147483647) {
            free(v);
            return -1;
        }
        sc[r] = (int)send_counts[r];
        sd[r] = (int)so;
        rc[r] = (int)recv_counts[r];
        rd[r] = (int)ro;
        so += send_counts[r];
        ro += recv_counts[r];
    }
    int ok = MPI_Alltoallv(send, sc, sd, MPI_BYTE, recv, rc, rd, MPI_BYTE, MPI_COMM_WORLD) == MPI_SUCCESS;
    st->alltoalls++;
    st->bytes_out += so;
    st->bytes_in += ro;
    free(v);
    return ok ? 0 : -1;
}

static int any(void *ctx, int flag)
{
    ((exchange_stats *)ctx)->agreements++;
    int in = flag != 0, out = 0;
    if (MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD) != MPI_SUCCESS) return -1;
    return out != 0;
}

/* Copies file src to dst (a resume's inputs, for a rank other than 0). */
static int copy_file(const char *src, const char *dst)
{
    int in = open(src, O_RDONLY), out = -1, ok = 0;
    if (in >= 0) out = open(dst, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (out >= 0) {
        char buf[1 << 16];
        ssize_t n;
        ok = 1;
        while ((n = read(in, buf, sizeof buf)) > 0)
            if (write(out, buf, (size_t)n) != n) ok = 0;
        if (n < 0) ok = 0;
    }
    if (in >= 0) close(in);
    if (out >= 0) close(out);
    return ok ? 0 : -1;
}

/* Removes the private directory and the files in it. */
static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *x;
    char path[4096];
    while ((x = readdir(d)))
        if (strcmp(x->d_name, ".") && strcmp(x->d_name, "..")) {
            snprintf(path, sizeof path, "%s/%s", dir, x->d_name);
            unlink(path);
        }
    closedir(d);
    rmdir(dir);
}

int main(int argc, char **argv)
{
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "avi-mpi: MPI_Init failed\n");
        return 1;
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    exchange_stats st = {0, 0, 0, 0, 0};
    avi_ranks ranks = {rank, size, &st, gather, any, alltoallv};
    avi_set_ranks(&ranks);
    char **args = calloc((size_t)argc + 3, sizeof *args);
    char dir[4096] = "", out[4200] = "";
    if (!args) MPI_Abort(MPI_COMM_WORLD, 1);
    int n = 0, stats = 0;
    for (int i = 0; i < argc; i++) {
        if (i > 1 && !strcmp(argv[i], "--exchange-stats")) {
            stats = 1;
            continue;
        }
        args[n++] = argv[i];
    }
    if (rank != 0) {
        /* Quiet, and writing into its own directory. */
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) {
            dup2(null, STDOUT_FILENO);
            dup2(null, STDERR_FILENO);
            close(null);
        }
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/avi-mpi-%d-XXXXXX", tmp && *tmp ? tmp : "/tmp", rank);
        if (!mkdtemp(dir)) MPI_Abort(MPI_COMM_WORLD, 1);
        snprintf(out, sizeof out, "%s/out.h5", dir);
        if (argc > 1 && !strcmp(argv[1], "run")) {
            /* Every -o/--output dropped; its own appended. */
            n = 0;
            for (int i = 0; i < argc; i++) {
                if (i > 1 && !strcmp(argv[i], "--exchange-stats")) continue;
                if ((!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) && i + 1 < argc) {
                    i++;
                    continue;
                }
                if (!strncmp(argv[i], "--output=", 9)) continue;
                args[n++] = argv[i];
            }
            args[n++] = "-o";
            args[n++] = out;
        } else if (argc > 2 && !strcmp(argv[1], "resume")) {
            /* The file and its checkpoint, copied. */
            char ck[4300], ck_out[4300];
            snprintf(ck, sizeof ck, "%s.ckpt", argv[2]);
            snprintf(ck_out, sizeof ck_out, "%s.ckpt", out);
            copy_file(argv[2], out);
            copy_file(ck, ck_out);
            args[2] = out;
        }
    }
    args[n] = NULL;
    int rc = avi_cli_main(n, args);
    if (rank != 0) remove_dir(dir);
    if (stats) {
        /* Every rank's counts, printed by rank 0 (the others' stderr is
         * closed): the inputs of a latency-bandwidth model. */
        unsigned long long mine[5] = {st.gathers, st.alltoalls, st.agreements, st.bytes_out, st.bytes_in};
        unsigned long long *all = rank == 0 ? calloc(5 * (size_t)size, sizeof *all) : NULL;
        if (MPI_Gather(mine, 5, MPI_UNSIGNED_LONG_LONG, all, 5, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD) ==
                MPI_SUCCESS && all)
            for (int r = 0; r < size; r++)
                fprintf(stderr, "avi-mpi: rank %d: %llu exchanges (allgather), %llu to neighbours (alltoallv), "
                                "%llu agreements (allreduce), %llu bytes sent, %llu received\n",
                        r, all[5 * r], all[5 * r + 1], all[5 * r + 2], all[5 * r + 3], all[5 * r + 4]);
        free(all);
    }
    free(args);
    MPI_Finalize();
    return rc;
}
