/*
 * dpgrpc.c - the device plugin's gRPC transport (dpgrpc.h) over the gRPC
 * C core: registered methods whose requests arrive as raw byte buffers,
 * one completion queue and one thread per server, unary client calls on
 * a pluck queue.
 *
 * Server invariants: exactly one request per registered method is posted
 * at any time while the server runs (re-posted when a call arrives); a
 * call object is freed when every batch it started has completed (a
 * unary call: its one answer batch; a stream: its close notice and its
 * write in flight, if any).  Only the server thread touches call objects.
 * Ownership: answers handed over by the handlers are freed here.
 */
/* libc first: grpc's port_platform.h defines _GNU_SOURCE half-way */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/support/time.h>

#include "dpgrpc.h"

enum tag_kind { TAG_NEW, TAG_DONE, TAG_WRITE, TAG_CLOSED, TAG_SHUTDOWN };

struct call;

struct tag {
	enum tag_kind kind;
	struct call *c;
};

struct call {
	struct dpg_server *s;
	int m;
	grpc_call *call;
	grpc_call_details details;
	grpc_metadata_array md;
	grpc_byte_buffer *payload;
	gpr_timespec deadline;
	struct tag t_new, t_done, t_write, t_closed;
	int cancelled;
	grpc_slice status_msg;
	bool has_status_msg;
	/* streams */
	uint64_t gen;
	bool writing, closed, close_seen;
	grpc_byte_buffer *out;
	struct call *next;     /* in s->streams */
};

struct dpg_server {
	grpc_server *server;
	grpc_completion_queue *cq;
	const struct dpg_method *m;
	int nm;
	void **rm;             /* registered method handles */
	struct dpg_handlers h;
	char *path;
	pthread_t thread;
	bool shutting;         /* server thread only */
	struct tag t_shutdown;
	struct call *streams;
};

static gpr_timespec after_ms(int ms)
{
	return gpr_time_add(gpr_now(GPR_CLOCK_REALTIME),
			    gpr_time_from_millis(ms, GPR_TIMESPAN));
}

/* The bytes of b as one malloc()ed buffer (NULL and 0 for an empty one).
 * Returns 0 or CARVE_ENOMEM. */
static int read_all(grpc_byte_buffer *b, uint8_t **out, size_t *n)
{
	grpc_byte_buffer_reader r;
	grpc_slice sl;
	size_t len;

	*out = NULL;
	*n = 0;
	if (!b)
		return 0;
	if (!grpc_byte_buffer_reader_init(&r, b))
		return CARVE_ENOMEM;
	sl = grpc_byte_buffer_reader_readall(&r);
	grpc_byte_buffer_reader_destroy(&r);
	len = GRPC_SLICE_LENGTH(sl);
	if (len) {
		*out = malloc(len);
		if (!*out) {
			grpc_slice_unref(sl);
			return CARVE_ENOMEM;
		}
		memcpy(*out, GRPC_SLICE_START_PTR(sl), len);
	}
	*n = len;
	grpc_slice_unref(sl);
	return 0;
}

/* A byte buffer over p[0..n) that takes ownership of p (malloc()ed). */
static grpc_byte_buffer *take_buffer(uint8_t *p, size_t n)
{
	grpc_slice sl;
	grpc_byte_buffer *b;

	if (!p || !n) {
		free(p);
		sl = grpc_empty_slice();
	} else {
		sl = grpc_slice_new(p, n, free);
	}
	b = grpc_raw_byte_buffer_create(&sl, 1);
	grpc_slice_unref(sl);
	return b;
}

/* ---- server ---- */

static void call_free(struct call *c)
{
	if (c->call)
		grpc_call_unref(c->call);
	grpc_metadata_array_destroy(&c->md);
	grpc_call_details_destroy(&c->details);
	if (c->payload)
		grpc_byte_buffer_destroy(c->payload);
	if (c->out)
		grpc_byte_buffer_destroy(c->out);
	if (c->has_status_msg)
		grpc_slice_unref(c->status_msg);
	free(c);
}

/* Posts the request for the next call of method m.  Returns 0 or -1. */
static int post_request(struct dpg_server *s, int m)
{
	struct call *c = calloc(1, sizeof(*c));

	if (!c)
		return -1;
	c->s = s;
	c->m = m;
	c->t_new = (struct tag){TAG_NEW, c};
	c->t_done = (struct tag){TAG_DONE, c};
	c->t_write = (struct tag){TAG_WRITE, c};
	c->t_closed = (struct tag){TAG_CLOSED, c};
	grpc_metadata_array_init(&c->md);
	grpc_call_details_init(&c->details);
	if (grpc_server_request_registered_call(s->server, s->rm[m], &c->call, &c->deadline,
						&c->md, &c->payload, s->cq, s->cq,
						&c->t_new) != GRPC_CALL_OK) {
		call_free(c);
		return -1;
	}
	return 0;
}

/* Answers a unary call: the handler's message or its error status. */
static void serve_unary(struct call *c)
{
	struct dpg_server *s = c->s;
	uint8_t *in = NULL, *out = NULL;
	size_t n = 0, outn = 0;
	char msg[256] = "";
	int status;
	grpc_op ops[4];
	int nops = 0;

	if (read_all(c->payload, &in, &n) < 0) {
		status = DPG_INTERNAL;
		snprintf(msg, sizeof(msg), "out of memory reading the request");
	} else {
		status = s->h.unary(s->h.arg, c->m, in, n, &out, &outn, msg, sizeof(msg));
	}
	free(in);
	memset(ops, 0, sizeof(ops));
	ops[nops].op = GRPC_OP_SEND_INITIAL_METADATA;
	nops++;
	if (status == 0) {
		c->out = take_buffer(out, outn);
		ops[nops].op = GRPC_OP_SEND_MESSAGE;
		ops[nops].data.send_message.send_message = c->out;
		nops++;
	} else {
		free(out);
	}
	ops[nops].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
	ops[nops].data.send_status_from_server.status = (grpc_status_code)status;
	if (status) {
		c->status_msg = grpc_slice_from_copied_string(msg);
		c->has_status_msg = true;
		ops[nops].data.send_status_from_server.status_details = &c->status_msg;
	}
	nops++;
	ops[nops].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
	ops[nops].data.recv_close_on_server.cancelled = &c->cancelled;
	nops++;
	if (grpc_call_start_batch(c->call, ops, (size_t)nops, &c->t_done, NULL) != GRPC_CALL_OK)
		call_free(c);
}

/* Sends the stream's next message when there is one and no write is in
 * flight. */
static void stream_push(struct call *c)
{
	struct dpg_server *s = c->s;
	uint8_t *out = NULL;
	size_t outn = 0;
	grpc_op op;

	if (c->writing || c->closed || s->shutting)
		return;
	if (s->h.stream_next(s->h.arg, c->m, &c->gen, &out, &outn) != 1)
		return;
	if (c->out)
		grpc_byte_buffer_destroy(c->out);
	c->out = take_buffer(out, outn);
	memset(&op, 0, sizeof(op));
	op.op = GRPC_OP_SEND_MESSAGE;
	op.data.send_message.send_message = c->out;
	if (grpc_call_start_batch(c->call, &op, 1, &c->t_write, NULL) == GRPC_CALL_OK)
		c->writing = true;
}

static void stream_unlink(struct call *c)
{
	struct call **p;

	for (p = &c->s->streams; *p; p = &(*p)->next) {
		if (*p == c) {
			*p = c->next;
			return;
		}
	}
}

/* Starts a server-streaming call: headers and the close notice, then the
 * first message. */
static void serve_stream(struct call *c)
{
	grpc_op ops[2];

	memset(ops, 0, sizeof(ops));
	ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
	ops[1].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
	ops[1].data.recv_close_on_server.cancelled = &c->cancelled;
	if (grpc_call_start_batch(c->call, ops, 2, &c->t_closed, NULL) != GRPC_CALL_OK) {
		call_free(c);
		return;
	}
	c->next = c->s->streams;
	c->s->streams = c;
	stream_push(c);
}

static void on_event(struct dpg_server *s, struct tag *t, int ok)
{
	struct call *c = t->c;

	switch (t->kind) {
	case TAG_NEW:
		if (!ok) {
			call_free(c);
			return;
		}
		if (!s->shutting)
			post_request(s, c->m);
		if (s->m[c->m].stream)
			serve_stream(c);
		else
			serve_unary(c);
		return;
	case TAG_DONE:
		call_free(c);
		return;
	case TAG_WRITE:
		c->writing = false;
		if (!ok)
			c->closed = true;
		if (c->closed) {
			/* freed here when the close notice came first, else
			 * when it comes */
			if (c->close_seen) {
				stream_unlink(c);
				call_free(c);
			}
			return;
		}
		stream_push(c);
		return;
	case TAG_CLOSED:
		c->closed = true;
		c->close_seen = true;
		if (!c->writing) {
			stream_unlink(c);
			call_free(c);
		}
		return;
	case TAG_SHUTDOWN:
		grpc_completion_queue_shutdown(s->cq);
		return;
	}
}

static void *server_main(void *arg)
{
	struct dpg_server *s = arg;

	for (;;) {
		grpc_event ev = grpc_completion_queue_next(s->cq, after_ms(100), NULL);
		struct call *c, *next;

		if (ev.type == GRPC_QUEUE_SHUTDOWN)
			break;
		if (ev.type == GRPC_OP_COMPLETE) {
			struct tag *t = ev.tag;

			if (t->kind == TAG_SHUTDOWN)
				s->shutting = true;
			on_event(s, t, ev.success);
		}
		for (c = s->streams; c; c = next) {
			next = c->next;
			stream_push(c);
		}
	}
	return NULL;
}

int dpg_server_start(const char *sock_path, const struct dpg_method *m, int nm,
		     const struct dpg_handlers *h, struct dpg_server **out,
		     struct carve_error *err)
{
	struct dpg_server *s;
	grpc_server_credentials *cred;
	char *addr;
	int i, bound;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return carve_errorf(err, CARVE_ENOMEM, "device plugin %s: out of memory", sock_path);
	s->rm = calloc((size_t)nm, sizeof(*s->rm));
	s->path = strdup(sock_path);
	addr = malloc(strlen(sock_path) + 6);
	if (!s->rm || !s->path || !addr) {
		free(addr);
		free(s->rm);
		free(s->path);
		free(s);
		return carve_errorf(err, CARVE_ENOMEM, "device plugin %s: out of memory", sock_path);
	}
	sprintf(addr, "unix:%s", sock_path);
	s->m = m;
	s->nm = nm;
	s->h = *h;
	s->t_shutdown = (struct tag){TAG_SHUTDOWN, NULL};
	grpc_init();
	unlink(sock_path);
	s->cq = grpc_completion_queue_create_for_next(NULL);
	s->server = grpc_server_create(NULL, NULL);
	grpc_server_register_completion_queue(s->server, s->cq, NULL);
	for (i = 0; i < nm; i++)
		s->rm[i] = grpc_server_register_method(s->server, m[i].path, NULL,
						       GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER, 0);
	cred = grpc_insecure_server_credentials_create();
	bound = grpc_server_add_http2_port(s->server, addr, cred);
	grpc_server_credentials_release(cred);
	free(addr);
	if (!bound) {
		grpc_server_destroy(s->server);
		grpc_completion_queue_shutdown(s->cq);
		while (grpc_completion_queue_next(s->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL)
			       .type != GRPC_QUEUE_SHUTDOWN)
			;
		grpc_completion_queue_destroy(s->cq);
		grpc_shutdown();
		carve_errorf(err, CARVE_EIO, "device plugin: cannot listen on unix socket %s", s->path);
		free(s->rm);
		free(s->path);
		free(s);
		return CARVE_EIO;
	}
	grpc_server_start(s->server);
	for (i = 0; i < nm; i++)
		post_request(s, i);
	if (pthread_create(&s->thread, NULL, server_main, s)) {
		s->thread = 0;
		dpg_server_stop(s);
		return carve_errorf(err, CARVE_ENOMEM, "device plugin %s: cannot start a thread",
				    sock_path);
	}
	*out = s;
	return 0;
}

void dpg_server_stop(struct dpg_server *s)
{
	if (!s)
		return;
	grpc_server_shutdown_and_notify(s->server, s->cq, &s->t_shutdown);
	grpc_server_cancel_all_calls(s->server);
	if (s->thread) {
		pthread_join(s->thread, NULL);
	} else {
		grpc_event ev;

		do {
			ev = grpc_completion_queue_next(s->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
			if (ev.type == GRPC_OP_COMPLETE) {
				s->shutting = true;
				on_event(s, ev.tag, ev.success);
			}
		} while (ev.type != GRPC_QUEUE_SHUTDOWN);
	}
	grpc_server_destroy(s->server);
	grpc_completion_queue_destroy(s->cq);
	unlink(s->path);
	free(s->rm);
	free(s->path);
	free(s);
	grpc_shutdown();
}

/* ---- client ---- */

struct dpg_client {
	grpc_channel *ch;
	grpc_completion_queue *cq;
	pthread_mutex_t mu;
};

int dpg_client_open(const char *sock_path, struct dpg_client **out, struct carve_error *err)
{
	struct dpg_client *c = calloc(1, sizeof(*c));
	grpc_channel_credentials *cred;
	char *addr = malloc(strlen(sock_path) + 6);

	*out = NULL;
	if (!c || !addr) {
		free(c);
		free(addr);
		return carve_errorf(err, CARVE_ENOMEM, "gRPC client %s: out of memory", sock_path);
	}
	sprintf(addr, "unix:%s", sock_path);
	grpc_init();
	cred = grpc_insecure_credentials_create();
	c->ch = grpc_channel_create(addr, cred, NULL);
	grpc_channel_credentials_release(cred);
	free(addr);
	c->cq = grpc_completion_queue_create_for_pluck(NULL);
	pthread_mutex_init(&c->mu, NULL);
	*out = c;
	return 0;
}

int dpg_client_call(struct dpg_client *c, const char *path, const uint8_t *in, size_t n,
		    int timeout_ms, uint8_t **out, size_t *outn, struct carve_error *err)
{
	grpc_metadata_array init_md, trail_md;
	grpc_byte_buffer *req, *resp = NULL;
	grpc_status_code status = GRPC_STATUS_UNKNOWN;
	grpc_slice details = grpc_empty_slice(), method;
	grpc_call *call;
	grpc_op ops[6];
	grpc_event ev;
	gpr_timespec deadline = after_ms(timeout_ms);
	uint8_t *copy = NULL;
	int tag, rc = 0;

	*out = NULL;
	*outn = 0;
	if (n) {
		copy = malloc(n);
		if (!copy)
			return carve_errorf(err, CARVE_ENOMEM, "gRPC %s: out of memory", path);
		memcpy(copy, in, n);
	}
	req = take_buffer(copy, n);
	pthread_mutex_lock(&c->mu);
	method = grpc_slice_from_copied_string(path);
	call = grpc_channel_create_call(c->ch, NULL, GRPC_PROPAGATE_DEFAULTS, c->cq, method,
					NULL, deadline, NULL);
	grpc_slice_unref(method);
	grpc_metadata_array_init(&init_md);
	grpc_metadata_array_init(&trail_md);
	memset(ops, 0, sizeof(ops));
	ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
	ops[1].op = GRPC_OP_SEND_MESSAGE;
	ops[1].data.send_message.send_message = req;
	ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
	ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
	ops[3].data.recv_initial_metadata.recv_initial_metadata = &init_md;
	ops[4].op = GRPC_OP_RECV_MESSAGE;
	ops[4].data.recv_message.recv_message = &resp;
	ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
	ops[5].data.recv_status_on_client.trailing_metadata = &trail_md;
	ops[5].data.recv_status_on_client.status = &status;
	ops[5].data.recv_status_on_client.status_details = &details;
	if (grpc_call_start_batch(call, ops, 6, &tag, NULL) != GRPC_CALL_OK) {
		rc = carve_errorf(err, CARVE_EIO, "gRPC %s: cannot start the call", path);
	} else {
		ev = grpc_completion_queue_pluck(c->cq, &tag, gpr_inf_future(GPR_CLOCK_REALTIME),
						 NULL);
		if (ev.type != GRPC_OP_COMPLETE || !ev.success) {
			rc = carve_errorf(err, CARVE_EIO, "gRPC %s: the call failed", path);
		} else if (status != GRPC_STATUS_OK) {
			rc = carve_errorf(err, CARVE_EIO, "gRPC %s: status %d: %.*s", path,
					  (int)status, (int)GRPC_SLICE_LENGTH(details),
					  (const char *)GRPC_SLICE_START_PTR(details));
		} else if (read_all(resp, out, outn) < 0) {
			rc = carve_errorf(err, CARVE_ENOMEM, "gRPC %s: out of memory", path);
		}
	}
	grpc_call_unref(call);
	pthread_mutex_unlock(&c->mu);
	grpc_byte_buffer_destroy(req);
	if (resp)
		grpc_byte_buffer_destroy(resp);
	grpc_slice_unref(details);
	grpc_metadata_array_destroy(&init_md);
	grpc_metadata_array_destroy(&trail_md);
	return rc;
}

void dpg_client_close(struct dpg_client *c)
{
	if (!c)
		return;
	grpc_channel_destroy(c->ch);
	/* every call was plucked: nothing is pending on the queue */
	grpc_completion_queue_shutdown(c->cq);
	grpc_completion_queue_destroy(c->cq);
	pthread_mutex_destroy(&c->mu);
	free(c);
	grpc_shutdown();
}
