/* avi: observation and output off the engine's thread.
 *
 * At each output time the engine's thread only copies the state into a
 * snapshot (a memcpy of the vertex records, the contact terms, the counts)
 * and goes on; a worker thread computes energies and momenta from the copy
 * and writes and flushes the file. Items are handled one at a time in the
 * order they were pushed, so what is written, and in which order, does not
 * depend on thread timing: a run's file is bitwise the same as with
 * synchronous output.
 *
 * When the handler fails (a write error, a blow-up), the stream keeps that
 * status, drops every later item, and every later push returns the status,
 * so the file ends with the item that failed whichever way the threads ran. */
#ifndef AVI_OUTPUT_STREAM_H
#define AVI_OUTPUT_STREAM_H

#include "avi/engine.h"
#include "base/error.h"

#include <stddef.h>

typedef struct avi_output_stream avi_output_stream;

/* Handles one item on the worker thread: `kind` is the value given to
 * avi_output_stream_push; `queued` counts the items already waiting behind
 * it (a handler may then leave its flush to the last of them: those items
 * are lost with the process either way). Returns 0, or a status that stops
 * the stream. */
typedef int (*avi_output_fn)(void *user, int kind, avi_snapshot *snapshot, int queued);

/* Bytes the in-flight snapshots of a stream may hold together when
 * avi_output_stream_create picks the count: at most 8 snapshots and at most
 * this many bytes, but always one (a model whose snapshot is larger gets one,
 * and the engine's thread then waits for the worker at each output time).
 * A fixed size rather than a count keeps large models' output memory small
 * against the model itself (a 100k-tet bar, 18 785 vertices: one snapshot of
 * 1.7 MB, against 8 before; the built-in scenes keep 8). */
#define AVI_OUTPUT_STREAM_BUDGET ((size_t)2 << 20)

/* Bytes one snapshot of the model holds (the vertex records and the
 * worker's scratch positions, 88 bytes a vertex, plus its header). */
size_t avi_output_stream_snapshot_bytes(const avi_model *model);

/* Starts a stream over a model. `slots` snapshots are in flight at most;
 * 0 picks min(8, AVI_OUTPUT_STREAM_BUDGET / snapshot bytes), at least 1.
 * With `threaded` 0 every push runs the handler at once, on the caller's
 * thread (the reference behaviour, for comparison). NULL when out of memory
 * or no thread can be started. */
avi_output_stream *avi_output_stream_create(const avi_model *model, int slots, int threaded, avi_output_fn fn,
                                            void *user);

/* The number of snapshots the stream may hold in flight. */
int avi_output_stream_slots(const avi_output_stream *stream);

/* Item kinds are 0..AVI_STREAM_KIND; a kind with AVI_STREAM_PLAIN added
 * takes its snapshot without the synchronization (avi_snapshot_set_synchronized),
 * and the handler gets the kind with the flag. */
#define AVI_STREAM_KIND 0xff
#define AVI_STREAM_PLAIN 0x100

/* Snapshots the engine at t and queues it; blocks only while every slot is
 * in use. Returns 0, or the status of an earlier failed item. */
int avi_output_stream_push(avi_output_stream *stream, const avi_engine *engine, double t, int kind);

/* Observes snapshots on `threads` threads (the worker's included; 1: the
 * worker alone), the same bits for any count: several waiting snapshots side
 * by side, one on each thread; a single one on all of them (its passes on
 * the pool, core/incidence.h). `observed`: the item kinds (a bit 1 << kind
 * each) whose handler calls avi_snapshot_observe, to be observed ahead.
 * Before the first push, or while drained. AVI_OK, or a status with err
 * filled (a bad count: AVI_ERR_INPUT; out of memory or threads:
 * AVI_ERR_RUN), the stream unchanged. */
int avi_output_stream_set_threads(avi_output_stream *stream, int threads, unsigned observed, avi_error *err);

/* The threads the rows' observation needs beside an engine on `threads`:
 * all of them where its work per row (an energy per elastic potential,
 * three gradients on every `every`-th row) is more than the clocks' events
 * between two rows (`row_interval` apart) shared over those threads, else
 * 1: the worker alone then keeps up with the engine, and the pool's scratch
 * (about 160 B a tet, bench/README.md "Memory of avi run") is not held. */
int avi_output_stream_threads_for(const avi_model *model, int threads, double row_interval, long long every);

/* Waits until every queued item is handled; returns the stream's status.
 * While the stream is drained and nothing is pushed, the worker calls no
 * library function, so the caller may use the writer (flush, checkpoint). */
int avi_output_stream_drain(avi_output_stream *stream);

/* Drains, then gives the snapshots' memory back (new ones are filled on
 * the next push): the end-of-run checkpoint then does not add its buffers
 * to the ring's (bench/README.md, "Memory of `avi run`"). 0, the first
 * failure, or AVI_ERR_RUN when out of memory. */
int avi_output_stream_trim(avi_output_stream *stream);

/* Drains, stops the worker and frees the stream; returns the status. */
int avi_output_stream_destroy(avi_output_stream *stream);

#endif
