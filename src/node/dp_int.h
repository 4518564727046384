/*
 * dp_int.h - what dp.c (plugins, registration, ListAndWatch) and
 * dp_alloc.c (Allocate, GetPreferredAllocation) share: the device plugin's
 * state, private to those two files (prefix dp_).
 *
 * Locks: `life` orders changes to the set of plugins (nd_dp_update, the
 * registration thread, nd_dp_stop) and is held across gRPC calls to the
 * kubelet; `mu` guards the data the handlers read (view, lists, bindings,
 * allocated) and is never held across a gRPC call or a server stop.
 * Order: life before mu.
 */
#ifndef CARVE_NODE_DP_INT_H
#define CARVE_NODE_DP_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "dp.h"

/* The kinds of resource carve serves. */
enum dp_kind { DP_GPU, DP_SHARED, DP_MIG };

/* The parts of a snapshot the plugin needs, copied (fixed-size strings). */
struct dp_mig {
	char uuid[96];
	char profile[32];      /* "1g.10gb+me" */
	unsigned start;
};

struct dp_gpu {
	unsigned index;
	char uuid[96];
	int numa;              /* -1 unknown */
	bool healthy;
	bool mig;              /* MIG mode on: served per MIG device */
	size_t nmig;
	struct dp_mig *migs;
};

struct dp_view {
	size_t ngpus;
	struct dp_gpu *gpus;
};

/* One served resource: its own socket and gRPC server. */
struct dp_plugin {
	struct nd_dp *dp;
	enum dp_kind kind;
	char profile[32];      /* DP_MIG: the MIG profile */
	char resource[128];    /* "carve.dev/mig-1g.10gb.me" */
	char endpoint[160];    /* "carve-mig-1g.10gb.me.sock" */
	char sock[4096];       /* <dir>/<endpoint> */
	struct dpg_server *srv;
	uint64_t gen;          /* of list; under mu */
	uint8_t *list;         /* packed ListAndWatchResponse; under mu */
	size_t nlist;
	bool registered;       /* with the kubelet instance in reg_ino/reg_ctime */
	unsigned fails;        /* registrations failed in a row */
	ino_t reg_ino;
	struct timespec reg_ctime;
	ino_t sock_ino;        /* our socket file, to notice its removal */
	bool seen;             /* scratch for nd_dp_update */
};

struct nd_dp_uid {
	char uid[128];
};

struct nd_dp {
	char *dir, *domain;
	int shares;
	bool cdi;
	void (*on_refuse)(void *arg, const char *ns, const char *name, const char *reason);
	void *arg;
	char kubelet_sock[4096];

	pthread_mutex_t life, mu;
	pthread_cond_t cv;     /* with mu: wakes the registration thread */
	bool stopping;
	pthread_t reg;

	size_t npl;
	struct dp_plugin **pl;

	struct dp_view view;   /* under mu */
	size_t nb;
	struct nd_binding *b;  /* deep copies; under mu */
	size_t nalloc, capalloc;
	struct nd_dp_uid *alloc; /* pods already given devices; under mu */
};

/* "<UUID>::<n>": the GPU UUID part into gpu (size bytes) and n.  Returns
 * true when id has that form. */
bool dp_shared_id(const char *id, char *gpu, size_t size, unsigned *n);

/* Handlers of the plugin's unary methods (dp_alloc.c).  Each returns 0
 * with the packed answer in *out (malloc()ed), or a gRPC status code with
 * the reason in msg; each takes dp->mu itself. */
int dp_allocate(struct dp_plugin *p, const uint8_t *in, size_t n, uint8_t **out, size_t *outn,
		char *msg, size_t msgsz);
int dp_preferred(struct dp_plugin *p, const uint8_t *in, size_t n, uint8_t **out, size_t *outn,
		 char *msg, size_t msgsz);

/* Logs one line on stderr: "carve node: device plugin: " + message. */
void dp_logf(const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 1, 2)))
#endif
	;

#endif
