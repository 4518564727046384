/*
 * dpgrpc.h - the device plugin's one transport file: gRPC (the C core)
 * over unix sockets, with messages as raw bytes (protobuf-c packs and
 * unpacks them in dp.c / dp_alloc.c).  Nothing else in carve includes a
 * grpc header.  Prefix dpg_.
 *
 * A server serves a fixed table of methods ("/v1beta1.DevicePlugin/
 * Allocate") on one socket from one thread of its own; unary methods
 * call h->unary, server-streaming methods send what h->stream_next hands
 * out whenever it has a newer message (asked at least every 100 ms).
 * A client makes unary calls on one channel.
 */
#ifndef CARVE_NODE_DPGRPC_H
#define CARVE_NODE_DPGRPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "carve/carve.h"

/* gRPC status codes the handlers answer with (grpc/status.h values). */
#define DPG_INVALID_ARGUMENT 3
#define DPG_FAILED_PRECONDITION 9
#define DPG_UNIMPLEMENTED 12
#define DPG_INTERNAL 13

struct dpg_method {
	const char *path;      /* "/<package>.<Service>/<Method>" */
	bool stream;           /* server streaming */
};

struct dpg_handlers {
	/* Unary method m (index in the table) with request in[0..n).
	 * Returns 0 with the answer in *out (malloc()ed or NULL for an empty
	 * message; the transport frees it), or a gRPC status code > 0 with
	 * a message in msg (msgsz bytes). */
	int (*unary)(void *arg, int m, const uint8_t *in, size_t n, uint8_t **out,
		     size_t *outn, char *msg, size_t msgsz);
	/* Streaming method m: *gen is the generation of the last message the
	 * stream sent (0: none yet).  Returns 1 with a newer message in *out
	 * (malloc()ed, the transport frees it) and *gen updated, or 0 when
	 * there is nothing newer. */
	int (*stream_next)(void *arg, int m, uint64_t *gen, uint8_t **out, size_t *outn);
	void *arg;
};

struct dpg_server;

/*
 * Serves methods m[0..nm) on the unix socket sock_path (an old file
 * there is removed first).  h and m are borrowed until dpg_server_stop.
 * Returns 0, or CARVE_EIO with err naming the socket when it cannot be
 * bound, CARVE_ENOMEM.
 */
int dpg_server_start(const char *sock_path, const struct dpg_method *m, int nm,
		     const struct dpg_handlers *h, struct dpg_server **out,
		     struct carve_error *err);
/* Ends every call, stops the thread, removes the socket, frees.  NULL is
 * a no-op.  Must not be called from a handler. */
void dpg_server_stop(struct dpg_server *s);

struct dpg_client;

/* A channel to the server on sock_path (connected lazily).  Returns 0 or
 * CARVE_ENOMEM / CARVE_EIO. */
int dpg_client_open(const char *sock_path, struct dpg_client **out, struct carve_error *err);
/*
 * One unary call of method path with request in[0..n), waiting at most
 * timeout_ms.  Returns 0 with the answer in *out (malloc()ed, the caller
 * frees; NULL with *outn 0 for an empty message), or CARVE_EIO with err
 * giving the gRPC status and its message (no server, deadline, an error
 * answered).  Calls on one client are serialized.
 */
int dpg_client_call(struct dpg_client *c, const char *path, const uint8_t *in, size_t n,
		    int timeout_ms, uint8_t **out, size_t *outn, struct carve_error *err);
/* NULL is a no-op. */
void dpg_client_close(struct dpg_client *c);

#endif
