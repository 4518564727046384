/*
 * kube_int.h - what the API client's files share inside src/kube: a
 * request with its own retry policy (the elector's renew deadline), a
 * streamed GET for watches, the monotonic clock and interruptible sleeps.
 */
#ifndef CARVE_KUBE_INT_H
#define CARVE_KUBE_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "carve/kube.h"

/* CLOCK_MONOTONIC in ns. */
int64_t kube_mono_ns(void);
/* CLOCK_REALTIME in ns. */
int64_t kube_real_ns(void);
/* A uniform random number in [0, n) (n > 0), thread-safe. */
uint64_t kube_rand(uint64_t n);

/*
 * carve_kube_request with the retry policy r instead of the client's.
 * stop (NULL: none) ends an attempt in flight within about a second and
 * cuts the sleep between attempts short; a request ended so returns
 * CARVE_EIO ("stopped").
 */
int kube_request_r(struct carve_kube *k, const struct carve_kube_retry *r, const char *method,
		   const char *path, const char *content_type, json_t *body, json_t **out,
		   const atomic_bool *stop, struct carve_error *err);

/* The caps on one response body (default 256 MiB) and on one line of a
 * stream (default 64 MiB); 0 restores a default.  For tests. */
void kube_set_limits(struct carve_kube *k, size_t body_max, size_t line_max);

/*
 * A GET of path whose body is handed to line(ctx, text, len) one line at
 * a time as it arrives (the newline not included; a line may have come in
 * several pieces).  line returns non-zero to end the transfer.  The
 * transfer also ends within about a second once *stop is set.  No retry;
 * rate limited like every request.  Returns the HTTP status (the body of
 * a non-2xx answer is still handed to line), or CARVE_EIO when no answer
 * came or the transfer broke (err says why; a transfer ended by line or
 * stop is not an error; a line cut short by stop is not handed on),
 * CARVE_ERANGE when a line grew past the line cap ("response too
 * large"), CARVE_ENOMEM.
 */
int kube_stream(struct carve_kube *k, const char *path, int timeout_s,
		int (*line)(void *ctx, const char *text, size_t len), void *ctx,
		const atomic_bool *stop, struct carve_error *err);

/* Sleeps up to ms on cv (locked by mu), returning early once *stop is set
 * or cv is signalled; mu is taken and released here. */
void kube_nap(pthread_mutex_t *mu, pthread_cond_t *cv, const atomic_bool *stop, int64_t ms);

#endif
