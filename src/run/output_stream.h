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

typedef struct avi_output_stream avi_output_stream;

/* Handles one item on the worker thread: `kind` is the value given to
 * avi_output_stream_push; `queued` counts the items already waiting behind
 * it (a handler may then leave its flush to the last of them: those items
 * are lost with the process either way). Returns 0, or a status that stops
 * the stream. */
typedef int (*avi_output_fn)(void *user, int kind, avi_snapshot *snapshot, int queued);

/* Starts a stream over a model. `slots` snapshots are in flight at most
 * (each nv * 64 bytes); 0 picks min(8, 256 MiB / snapshot size), at least 1.
 * With `threaded` 0 every push runs the handler at once, on the caller's
 * thread (the reference behaviour, for comparison). NULL when out of memory
 * or no thread can be started. */
avi_output_stream *avi_output_stream_create(const avi_model *model, int slots, int threaded, avi_output_fn fn,
                                            void *user);

/* Snapshots the engine at t and queues it; blocks only while every slot is
 * in use. Returns 0, or the status of an earlier failed item. */
int avi_output_stream_push(avi_output_stream *stream, const avi_engine *engine, double t, int kind);

/* Waits until every queued item is handled; returns the stream's status.
 * While the stream is drained and nothing is pushed, the worker calls no
 * library function, so the caller may use the writer (flush, checkpoint). */
int avi_output_stream_drain(avi_output_stream *stream);

/* Drains, stops the worker and frees the stream; returns the status. */
int avi_output_stream_destroy(avi_output_stream *stream);

#endif
