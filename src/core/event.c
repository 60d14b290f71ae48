#include "core/event.h"

#include <string.h>

#define LESS(a, b) avi_event_less(&(a), &(b))

static void insertion_sort(avi_event *a, size_t from, size_t n)
{
    for (size_t i = from; i < n; i++) {
        avi_event x = a[i];
        size_t j = i;
        while (j > 0 && LESS(x, a[j - 1])) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = x;
    }
}

static void sift_down(avi_event *a, size_t n, size_t i)
{
    avi_event x = a[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && LESS(a[c], a[c + 1])) c++;
        if (!LESS(x, a[c])) break;
        a[i] = a[c];
        i = c;
    }
    a[i] = x;
}

/* Heapsort: the O(n log n) bound when quicksort degenerates. */
static void fallback_sort(avi_event *a, size_t n)
{
    for (size_t i = n / 2; i-- > 0;) sift_down(a, n, i);
    for (size_t m = n; m-- > 1;) {
        avi_event x = a[0];
        a[0] = a[m];
        a[m] = x;
        sift_down(a, m, 0);
    }
}

static inline void swap_events(avi_event *a, avi_event *b)
{
    avi_event x = *a;
    *a = *b;
    *b = x;
}

/* Quicksort with median-of-three pivots and a heapsort fallback
 * (Musser 1997), insertion sort below 16. */
static void intro_sort(avi_event *a, size_t n, int depth)
{
    while (n > 16) {
        if (depth-- == 0) {
            fallback_sort(a, n);
            return;
        }
        size_t mid = n / 2;
        if (LESS(a[mid], a[0])) swap_events(&a[mid], &a[0]);
        if (LESS(a[n - 1], a[mid])) {
            swap_events(&a[n - 1], &a[mid]);
            if (LESS(a[mid], a[0])) swap_events(&a[mid], &a[0]);
        }
        avi_event p = a[mid];
        /* Hoare partition; a[0] <= p <= a[n-1] make j land in [0, n-2]. */
        size_t i = 0, j = n - 1;
        for (;;) {
            while (LESS(a[i], p)) i++;
            while (LESS(p, a[j])) j--;
            if (i >= j) break;
            swap_events(&a[i], &a[j]);
            i++;
            j--;
        }
        size_t left = j + 1;
        if (left < n - left) {
            intro_sort(a, left, depth);
            a += left;
            n -= left;
        } else {
            intro_sort(a + left, n - left, depth);
            n = left;
        }
    }
    insertion_sort(a, 1, n);
}

/* Merges the ascending runs a[runs[0], runs[1]), ... pairwise through tmp
 * until one is left. */
static void merge_runs(avi_event *a, size_t n, avi_event *tmp, size_t *runs, size_t nr)
{
    avi_event *src = a, *dst = tmp;
    while (nr > 1) {
        size_t out = 0;
        for (size_t r = 0; r < nr; r += 2) {
            size_t lo = runs[r], mid = runs[r + 1], hi = r + 2 <= nr ? runs[r + 2] : mid;
            size_t i = lo, j = mid, k = lo;
            if (r + 1 < nr) {
                while (i < mid && j < hi) dst[k++] = LESS(src[j], src[i]) ? src[j++] : src[i++];
            }
            while (i < mid) dst[k++] = src[i++];
            while (j < hi) dst[k++] = src[j++];
            runs[out++] = lo;
        }
        runs[out] = n;
        nr = out;
        avi_event *x = src;
        src = dst;
        dst = x;
    }
    if (src != a) memcpy(a, src, n * sizeof *a);
}

#define MAX_RUNS 16

/* Buckets usually arrive sorted or nearly so (entries are appended in the
 * order they were popped), so one pass finds the first disorder. Equal
 * times from clocks of a few distinct steps arrive as a few runs in id
 * order; with tmp (room for n) those are merged. */
void avi_event_sort(avi_event *a, size_t n, avi_event *tmp)
{
    size_t i = 1;
    while (i < n && !LESS(a[i], a[i - 1])) i++;
    if (i >= n) return;
    if (n <= 32) {
        insertion_sort(a, i, n);
        return;
    }
    if (tmp) {
        size_t runs[MAX_RUNS + 1], nr = 1;
        runs[0] = 0;
        for (size_t k = i; k < n && nr <= MAX_RUNS; k++)
            if (LESS(a[k], a[k - 1])) {
                if (nr < MAX_RUNS) runs[nr] = k;
                nr++;
            }
        if (nr <= MAX_RUNS) {
            runs[nr] = n;
            merge_runs(a, n, tmp, runs, nr);
            return;
        }
    }
    int depth = 0;
    for (size_t m = n; m > 1; m >>= 1) depth += 2;
    intro_sort(a, n, depth);
}

