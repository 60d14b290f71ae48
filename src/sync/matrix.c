/* Block-sparse symmetric Newton matrices, their factorization (CHOLMOD,
 * SuiteSparse; or UMFPACK's LU of the full matrix for root finding as a
 * general nonlinear solver) and a Jacobi-preconditioned conjugate gradient. */
#include "sync/sync_internal.h"
#include "base/jacobi.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cholmod.h> /* CHOLMOD_CFLAGS in the Makefile */
#include <umfpack.h>

struct avi_sync_matrix {
    size_t nv, nblk, nelem; /* nv: records (mesh vertices and auxiliary records) */
    uint32_t *row, *col;    /* block (row, col), row <= col, sorted by (col, row) */
    double (*val)[9];       /* row-major 3x3 blocks */
    uint32_t *eblk;         /* per elastic potential e: n^2 block ids from eoff[e], [a * n + b] */
    size_t *eoff;
    uint32_t *diag;         /* block id of (i, i) */
    unsigned char *pinned;
    /* CHOLMOD */
    cholmod_common cc;
    cholmod_sparse *S;      /* upper triangle, columns in dof order */
    size_t *src;            /* S->x[k] = val[src[k] / 9][src[k] % 9] */
    cholmod_factor *L, *Lldl;
    cholmod_dense *B, *X, *Y, *E;
    int factored_ldl;
    /* UMFPACK (avi_sync_matrix_factor_lu): both triangles, built on first use */
    int *Up, *Ui;
    double *Ux;
    size_t *usrc;           /* Ux[k] = val[usrc[k] / 9][usrc[k] % 9] */
    void *symbolic, *numeric;
    int factored_lu;
};

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint32_t find_block(const avi_sync_matrix *A, const uint64_t *keys, uint32_t r, uint32_t c)
{
    uint64_t k = ((uint64_t)c << 32) | r;
    size_t lo = 0, hi = A->nblk;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (keys[mid] < k) lo = mid + 1;
        else hi = mid;
    }
    return (uint32_t)lo;
}

avi_sync_matrix *avi_sync_matrix_create(const avi_model *m, const avi_constraint *con, size_t nc)
{
    avi_sync_matrix *A = calloc(1, sizeof *A);
    if (!A) return NULL;
    size_t nrec = avi_model_record_count(m);
    uint64_t *keys = NULL;
    A->nv = nrec;
    A->nelem = avi_elem_count(m);
    A->eoff = malloc((A->nelem + 1) * sizeof *A->eoff);
    if (!A->eoff) goto fail;
    size_t cap = nrec + nc + 1, nk = 0;
    A->eoff[0] = 0;
    for (size_t e = 0; e < A->nelem; e++) {
        size_t n = (size_t)avi_elem_get(m, e).n;
        cap += n * (n - 1) / 2;
        A->eoff[e + 1] = A->eoff[e] + n * n;
    }
    keys = malloc(cap * sizeof *keys);
    A->pinned = calloc(nrec ? nrec : 1, 1);
    A->eblk = malloc((A->eoff[A->nelem] ? A->eoff[A->nelem] : 1) * sizeof *A->eblk);
    A->diag = malloc((nrec ? nrec : 1) * sizeof *A->diag);
    if (!keys || !A->pinned || !A->eblk || !A->diag) goto fail;
    for (size_t i = 0; i < nrec; i++) {
        keys[nk++] = ((uint64_t)i << 32) | i;
        A->pinned[i] = m->vert[i].inv_mass == 0.0;
    }
    for (size_t e = 0; e < A->nelem; e++) {
        avi_elem el = avi_elem_get(m, e);
        for (int a = 0; a < el.n; a++)
            for (int b = a + 1; b < el.n; b++) {
                uint32_t r = el.v[a] < el.v[b] ? el.v[a] : el.v[b], c = el.v[a] < el.v[b] ? el.v[b] : el.v[a];
                keys[nk++] = ((uint64_t)c << 32) | r;
            }
    }
    for (size_t k = 0; k < nc; k++)
        if (con[k].kind == AVI_CONSTRAINT_LINK) {
            uint32_t r = con[k].a < con[k].b ? con[k].a : con[k].b, c = con[k].a < con[k].b ? con[k].b : con[k].a;
            keys[nk++] = ((uint64_t)c << 32) | r;
        }
    qsort(keys, nk, sizeof *keys, cmp_u64);
    size_t u = 0;
    for (size_t k = 0; k < nk; k++)
        if (u == 0 || keys[k] != keys[u - 1]) keys[u++] = keys[k];
    A->nblk = u;
    A->row = malloc(u * sizeof *A->row);
    A->col = malloc(u * sizeof *A->col);
    A->val = calloc(u, sizeof *A->val);
    if (!A->row || !A->col || !A->val) goto fail;
    for (size_t k = 0; k < u; k++) {
        A->row[k] = (uint32_t)(keys[k] & 0xffffffffu);
        A->col[k] = (uint32_t)(keys[k] >> 32);
    }
    for (size_t i = 0; i < nrec; i++) A->diag[i] = find_block(A, keys, (uint32_t)i, (uint32_t)i);
    for (size_t e = 0; e < A->nelem; e++) {
        avi_elem el = avi_elem_get(m, e);
        for (int a = 0; a < el.n; a++)
            for (int b = 0; b < el.n; b++) {
                uint32_t r = el.v[a] < el.v[b] ? el.v[a] : el.v[b], c = el.v[a] < el.v[b] ? el.v[b] : el.v[a];
                A->eblk[A->eoff[e] + (size_t)(a * el.n + b)] = find_block(A, keys, r, c);
            }
    }
    free(keys);
    keys = NULL;

    /* CHOLMOD's upper triangle, column by column in dof order. */
    cholmod_start(&A->cc);
    A->cc.print = 0;
    A->cc.error_handler = NULL;
    size_t n = 3 * nrec, nnz = 0;
    for (size_t k = 0; k < u; k++) nnz += A->row[k] == A->col[k] ? 6 : 9;
    A->S = cholmod_allocate_sparse(n ? n : 1, n ? n : 1, nnz ? nnz : 1, 1, 1, 1, CHOLMOD_REAL, &A->cc);
    A->src = malloc((nnz ? nnz : 1) * sizeof *A->src);
    A->B = cholmod_zeros(n ? n : 1, 1, CHOLMOD_REAL, &A->cc);
    if (!A->S || !A->src || !A->B) goto fail;
    int *Sp = A->S->p, *Si = A->S->i;
    size_t pos = 0, k0 = 0;
    for (size_t j = 0; j < nrec; j++) {
        size_t k1 = k0;
        while (k1 < u && A->col[k1] == j) k1++;
        for (int beta = 0; beta < 3; beta++) {
            Sp[3 * j + (size_t)beta] = (int)pos;
            for (size_t k = k0; k < k1; k++) {
                int top = A->row[k] == j ? beta : 2;
                for (int alpha = 0; alpha <= top; alpha++) {
                    Si[pos] = (int)(3 * A->row[k] + (size_t)alpha);
                    A->src[pos] = 9 * k + (size_t)(3 * alpha + beta);
                    pos++;
                }
            }
        }
        k0 = k1;
    }
    Sp[n] = (int)pos;
    return A;
fail:
    free(keys);
    avi_sync_matrix_destroy(A);
    return NULL;
}

void avi_sync_matrix_destroy(avi_sync_matrix *A)
{
    if (!A) return;
    if (A->S || A->B || A->L || A->Lldl) {
        cholmod_free_sparse(&A->S, &A->cc);
        cholmod_free_factor(&A->L, &A->cc);
        cholmod_free_factor(&A->Lldl, &A->cc);
        cholmod_free_dense(&A->B, &A->cc);
        cholmod_free_dense(&A->X, &A->cc);
        cholmod_free_dense(&A->Y, &A->cc);
        cholmod_free_dense(&A->E, &A->cc);
        cholmod_finish(&A->cc);
    }
    free(A->row);
    free(A->col);
    free(A->val);
    free(A->eblk);
    free(A->eoff);
    free(A->diag);
    free(A->pinned);
    free(A->src);
    if (A->numeric) umfpack_di_free_numeric(&A->numeric);
    if (A->symbolic) umfpack_di_free_symbolic(&A->symbolic);
    free(A->Up);
    free(A->Ui);
    free(A->Ux);
    free(A->usrc);
    free(A);
}

void avi_sync_matrix_set_mass(avi_sync_matrix *A, const avi_model *m)
{
    memset(A->val, 0, A->nblk * sizeof *A->val);
    for (size_t i = 0; i < A->nv; i++) {
        double d = A->pinned[i] ? 1.0 : avi_sync_mass(m, i);
        double *B = A->val[A->diag[i]];
        B[0] = B[4] = B[8] = d;
    }
}

void avi_sync_matrix_add_elem(avi_sync_matrix *A, const avi_model *m, size_t e, double s, const double *He)
{
    avi_elem el = avi_elem_get(m, e);
    int n3 = 3 * el.n;
    const uint32_t *blk = A->eblk + A->eoff[e];
    for (int a = 0; a < el.n; a++) {
        uint32_t i = el.v[a];
        if (A->pinned[i]) continue;
        for (int b = 0; b < el.n; b++) {
            uint32_t j = el.v[b];
            if (A->pinned[j] || i > j) continue;
            double *B = A->val[blk[a * el.n + b]];
            const double *h = He + (size_t)(3 * a) * (size_t)n3 + 3 * b;
            for (int al = 0; al < 3; al++)
                for (int be = 0; be < 3; be++) B[3 * al + be] += s * h[al * n3 + be];
        }
    }
}

void avi_sync_matrix_add_pair(avi_sync_matrix *A, uint32_t i, uint32_t j, double s, const double P[3][3])
{
    uint32_t ends[2] = {i, j};
    for (int k = 0; k < (i == j ? 1 : 2); k++) {
        if (A->pinned[ends[k]]) continue;
        double *B = A->val[A->diag[ends[k]]];
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) B[3 * a + b] += s * P[a][b];
    }
    if (i == j || A->pinned[i] || A->pinned[j]) return;
    uint32_t r = i < j ? i : j, c = i < j ? j : i;
    size_t lo = 0, hi = A->nblk;
    while (lo < hi) { /* blocks sorted by (col, row) */
        size_t mid = (lo + hi) / 2;
        if (A->col[mid] < c || (A->col[mid] == c && A->row[mid] < r)) lo = mid + 1;
        else hi = mid;
    }
    if (lo >= A->nblk || A->row[lo] != r || A->col[lo] != c) return;
    double *B = A->val[lo];
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) B[3 * a + b] -= s * P[a][b]; /* P symmetric */
}

void avi_sync_matrix_apply(const avi_sync_matrix *A, const double (*x)[3], double (*y)[3])
{
    memset(y, 0, A->nv * sizeof *y);
    for (size_t k = 0; k < A->nblk; k++) {
        uint32_t r = A->row[k], c = A->col[k];
        const double *B = A->val[k];
        for (int al = 0; al < 3; al++) y[r][al] += B[3 * al] * x[c][0] + B[3 * al + 1] * x[c][1] + B[3 * al + 2] * x[c][2];
        if (r != c)
            for (int be = 0; be < 3; be++) y[c][be] += B[be] * x[r][0] + B[3 + be] * x[r][1] + B[6 + be] * x[r][2];
    }
}

int avi_sync_matrix_factor(avi_sync_matrix *A, int ldl)
{
    size_t nnz = (size_t)((int *)A->S->p)[A->S->ncol];
    double *Sx = A->S->x;
    for (size_t k = 0; k < nnz; k++) Sx[k] = A->val[A->src[k] / 9][A->src[k] % 9];
    cholmod_factor **L = ldl ? &A->Lldl : &A->L;
    if (!*L) {
        A->cc.supernodal = ldl ? CHOLMOD_SIMPLICIAL : CHOLMOD_AUTO;
        A->cc.final_ll = 0;
        *L = cholmod_analyze(A->S, &A->cc);
        A->cc.supernodal = CHOLMOD_AUTO;
        if (!*L) return -1;
    }
    A->cc.status = CHOLMOD_OK;
    cholmod_factorize(A->S, *L, &A->cc);
    A->factored_ldl = ldl;
    A->factored_lu = 0;
    if (A->cc.status == CHOLMOD_NOT_POSDEF) return ldl ? -1 : 1;
    return A->cc.status < CHOLMOD_OK ? -1 : 0;
}

/* The full matrix in compressed columns, dof order: entry (3r + al, 3c + be)
 * of block k is val[k][3 al + be], its mirror (3c + be, 3r + al) the same
 * value. UMFPACK is told nothing of the symmetry. */
static int lu_pattern(avi_sync_matrix *A)
{
    size_t n = 3 * A->nv, nnz = 0;
    for (size_t k = 0; k < A->nblk; k++) nnz += A->row[k] == A->col[k] ? 9 : 18;
    size_t *cnt = calloc(n + 1, sizeof *cnt);
    A->Up = malloc((n + 1) * sizeof *A->Up);
    A->Ui = malloc((nnz ? nnz : 1) * sizeof *A->Ui);
    A->Ux = malloc((nnz ? nnz : 1) * sizeof *A->Ux);
    A->usrc = malloc((nnz ? nnz : 1) * sizeof *A->usrc);
    if (!cnt || !A->Up || !A->Ui || !A->Ux || !A->usrc || nnz > (size_t)INT32_MAX) {
        free(cnt);
        return -1;
    }
    for (size_t k = 0; k < A->nblk; k++) {
        for (int be = 0; be < 3; be++) cnt[3 * A->col[k] + (size_t)be] += 3;
        if (A->row[k] != A->col[k])
            for (int al = 0; al < 3; al++) cnt[3 * A->row[k] + (size_t)al] += 3;
    }
    size_t pos = 0;
    for (size_t j = 0; j < n; j++) {
        size_t c = cnt[j];
        A->Up[j] = (int)pos;
        cnt[j] = pos;
        pos += c;
    }
    A->Up[n] = (int)pos;
    /* Blocks sorted by (col, row): rows come out unsorted across mirrored
     * blocks, which UMFPACK accepts only sorted, so sort each column below. */
    for (size_t k = 0; k < A->nblk; k++) {
        size_t r = A->row[k], c = A->col[k];
        for (int al = 0; al < 3; al++)
            for (int be = 0; be < 3; be++) {
                size_t q = cnt[3 * c + (size_t)be]++;
                A->Ui[q] = (int)(3 * r + (size_t)al);
                A->usrc[q] = 9 * k + (size_t)(3 * al + be);
                if (r != c) {
                    q = cnt[3 * r + (size_t)al]++;
                    A->Ui[q] = (int)(3 * c + (size_t)be);
                    A->usrc[q] = 9 * k + (size_t)(3 * al + be);
                }
            }
    }
    free(cnt);
    for (size_t j = 0; j < n; j++) /* insertion sort: columns are short */
        for (int q = A->Up[j] + 1; q < A->Up[j + 1]; q++) {
            int i = A->Ui[q];
            size_t sidx = A->usrc[q];
            int p = q - 1;
            while (p >= A->Up[j] && A->Ui[p] > i) {
                A->Ui[p + 1] = A->Ui[p];
                A->usrc[p + 1] = A->usrc[p];
                p--;
            }
            A->Ui[p + 1] = i;
            A->usrc[p + 1] = sidx;
        }
    return 0;
}

int avi_sync_matrix_factor_lu(avi_sync_matrix *A)
{
    int n = (int)(3 * A->nv);
    if (!A->Up && lu_pattern(A)) return -1;
    size_t nnz = (size_t)A->Up[n];
    for (size_t k = 0; k < nnz; k++) A->Ux[k] = A->val[A->usrc[k] / 9][A->usrc[k] % 9];
    if (!A->symbolic && umfpack_di_symbolic(n, n, A->Up, A->Ui, A->Ux, &A->symbolic, NULL, NULL) != UMFPACK_OK)
        return -1;
    if (A->numeric) umfpack_di_free_numeric(&A->numeric);
    int st = umfpack_di_numeric(A->Up, A->Ui, A->Ux, A->symbolic, &A->numeric, NULL, NULL);
    A->factored_lu = 1;
    if (st == UMFPACK_WARNING_singular_matrix) return 1;
    return st == UMFPACK_OK ? 0 : -1;
}

int avi_sync_matrix_solve(avi_sync_matrix *A, const double (*b)[3], double (*x)[3])
{
    size_t n = 3 * A->nv;
    if (A->factored_lu) {
        if (umfpack_di_solve(UMFPACK_A, A->Up, A->Ui, A->Ux, &x[0][0], &b[0][0], A->numeric, NULL, NULL) !=
            UMFPACK_OK)
            return -1;
        for (size_t i = 0; i < A->nv; i++)
            if (A->pinned[i]) x[i][0] = x[i][1] = x[i][2] = 0.0;
        return 0;
    }
    memcpy(A->B->x, b, n * sizeof(double));
    cholmod_factor *L = A->factored_ldl ? A->Lldl : A->L;
    if (!cholmod_solve2(CHOLMOD_A, L, A->B, NULL, &A->X, NULL, &A->Y, &A->E, &A->cc)) return -1;
    memcpy(x, A->X->x, n * sizeof(double));
    for (size_t i = 0; i < A->nv; i++)
        if (A->pinned[i]) x[i][0] = x[i][1] = x[i][2] = 0.0;
    return 0;
}

static double dot3n(const double (*a)[3], const double (*b)[3], size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++) s += a[i][0] * b[i][0] + a[i][1] * b[i][1] + a[i][2] * b[i][2];
    return s;
}

int avi_sync_matrix_pcg(const avi_sync_matrix *A, const double (*b)[3], double (*x)[3], double rtol, int maxit,
                        double (*work)[3])
{
    size_t n = A->nv;
    double (*r)[3] = work, (*z)[3] = work + n, (*p)[3] = work + 2 * n, (*q)[3] = work + 3 * n, (*dinv)[3] = work + 4 * n;
    for (size_t i = 0; i < n; i++) {
        const double *B = A->val[A->diag[i]];
        for (int c = 0; c < 3; c++) {
            double d = B[4 * c];
            dinv[i][c] = d > 0.0 ? 1.0 / d : 1.0;
        }
    }
    memset(x, 0, n * sizeof *x);
    memcpy(r, b, n * sizeof *r);
    double bb = sqrt(dot3n(b, b, n));
    if (bb == 0.0) return 0;
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < 3; c++) z[i][c] = dinv[i][c] * r[i][c];
    memcpy(p, z, n * sizeof *p);
    double rz = dot3n((const double (*)[3])r, (const double (*)[3])z, n);
    int it;
    for (it = 0; it < maxit; it++) {
        avi_sync_matrix_apply(A, (const double (*)[3])p, q);
        double pq = dot3n((const double (*)[3])p, (const double (*)[3])q, n);
        if (!(pq > 0.0)) {
            /* Negative curvature: keep the iterate, or the preconditioned
             * right-hand side when there is none yet. */
            if (it == 0) memcpy(x, z, n * sizeof *x);
            break;
        }
        double al = rz / pq;
        for (size_t i = 0; i < n; i++)
            for (int c = 0; c < 3; c++) {
                x[i][c] += al * p[i][c];
                r[i][c] -= al * q[i][c];
            }
        if (sqrt(dot3n((const double (*)[3])r, (const double (*)[3])r, n)) <= rtol * bb) {
            it++;
            break;
        }
        for (size_t i = 0; i < n; i++)
            for (int c = 0; c < 3; c++) z[i][c] = dinv[i][c] * r[i][c];
        double rz1 = dot3n((const double (*)[3])r, (const double (*)[3])z, n);
        double be = rz1 / rz;
        rz = rz1;
        for (size_t i = 0; i < n; i++)
            for (int c = 0; c < 3; c++) p[i][c] = z[i][c] + be * p[i][c];
    }
    for (size_t i = 0; i < n; i++)
        if (A->pinned[i]) x[i][0] = x[i][1] = x[i][2] = 0.0;
    return it;
}

/* H = V max(Lambda, 0) V^T from the Jacobi eigen-decomposition. */
void avi_psd_project(double *H, int n)
{
    double V[AVI_HESS_MAX], a[AVI_HESS_MAX];
    memcpy(a, H, (size_t)(n * n) * sizeof *a);
    avi_jacobi_eigen(a, V, n);
    double lam[3 * AVI_STENCIL_MAX];
    int neg = 0;
    for (int i = 0; i < n; i++) {
        lam[i] = a[i * n + i];
        if (lam[i] < 0.0) {
            lam[i] = 0.0;
            neg = 1;
        }
    }
    if (!neg) return;
    for (int i = 0; i < n; i++)
        for (int j = i; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += V[i * n + k] * lam[k] * V[j * n + k];
            H[i * n + j] = H[j * n + i] = s;
        }
}
