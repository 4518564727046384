/*
 * plan_int.h - the private build context of the scheduler's decision step
 * (plan.h), shared by plan.c (pods -> gangs -> the engine) and plan_out.c
 * (the engine's decisions -> the plan, queue and PodGroup status).
 *
 * Ownership: struct ctx lives for one carve_plan_build(); its scratch arena
 * (c->a) holds every spec and string handed to the engine and dies with
 * it; what the plan keeps is copied into the plan's own arena (struct
 * box).  Cross-file names start with br_plan_.
 */
#ifndef CARVE_PLAN_INT_H
#define CARVE_PLAN_INT_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "carve/devices.h"
#include "carve/jobs.h"
#include "carve/miglayout.h"
#include "carve/plan.h"

#include "bridge_int.h"

/*
 * Label and annotation names (facts, with their sources):
 * - kueue.x-k8s.io/queue-name (label), kueue.x-k8s.io/priority-class
 *   (label), kueue.x-k8s.io/pod-group-name (label) and
 *   kueue.x-k8s.io/pod-group-total-count (annotation): Kueue site docs,
 *   tasks/run/plain_pods and concepts/workload_priority_class.
 * - scheduling.k8s.io/group-name (annotation): a pod of a Volcano
 *   PodGroup (volcano-sh/apis, pkg/apis/scheduling/v1beta1/labels.go).
 * - pod-group-name (annotation) and kai.scheduler/queue (label): KAI
 *   (KAI-Scheduler docs: quickstart, pod-grouper).
 * - scheduling.x-k8s.io/pod-group (label): the coscheduling plugin of
 *   kubernetes-sigs/scheduler-plugins (PodGroup, minMember).
 * - gpu-fraction, gpu-memory (annotations): KAI's fractional GPUs, as
 *   the bridge reads them (docs/admission.md).
 */
#define KQ_QUEUE "kueue.x-k8s.io/queue-name"
#define KQ_PRIO "kueue.x-k8s.io/priority-class"
#define KQ_GROUP "kueue.x-k8s.io/pod-group-name"
#define KQ_TOTAL "kueue.x-k8s.io/pod-group-total-count"
#define VC_GROUP "scheduling.k8s.io/group-name"
#define KAI_GROUP "pod-group-name"
#define KAI_QUEUE "kai.scheduler/queue"
#define CO_GROUP "scheduling.x-k8s.io/pod-group"
#define HOSTNAME "kubernetes.io/hostname"

/* The flavor and ClusterQueue of --queues none (admission.h place_only). */
#define PLACE_ONLY "carve-place-only"
/* Kueue's Workload CRD: at most 8 podSets (spec.podSets maxItems). */
#define MAX_PS 8

enum gkind { GK_NONE = 0, GK_KUEUE, GK_VOLCANO, GK_KAI, GK_COSCHED };

/* A pod the plan decides for, or that holds capacity. */
struct ppod {
	const struct carve_mf_pod *p;
	const char *gname;            /* its group's name; the pod's own without one */
	enum gkind gk;
	bool bound;                   /* bound by this scheduler (devices annotation) */
	int ps;                       /* podSet in its gang */
	size_t idx;                   /* index among its podSet's pods */
};

struct gang {
	const char *key;              /* workload key "ns/name" */
	const char *ns, *name;
	enum gkind gk;
	size_t first, n;              /* c->pods[first .. first+n-1] */
	size_t nbound, nwait;
	const struct carve_mf_podgroup *pg;
	const struct carve_mf_localqueue *lq;
	int nps;
	int32_t count[MAX_PS];
	const char *why;              /* not queued: why (pending message) */
	struct carve_wl_spec spec;
	int wl;                       /* engine id; -1: not added */
	bool release;                 /* bound pods to release */
	const char *release_msg;
	struct carve_pod_place *pl;   /* bound gangs: places, podSet by podSet */
	size_t off[MAX_PS];           /* first place of each podSet */
	bool reserved;                /* its bound pods' devices held by reserve() */
	bool extra;                   /* pods past a half-bound gang's declared size */
	bool plain;                   /* bound pods held exactly, outside the engine */
};

struct box {
	struct carve_plan p;          /* first: carve_plan_free() casts back */
	struct carve_arena a;         /* every string of the plan */
	size_t cap_binds, cap_gangs, cap_pending, cap_victims, cap_nominate, cap_releases;
	size_t cap_pgs, cap_layouts;
};

struct ctx {
	struct carve_manifests *m;
	const struct carve_plan_opts *o;
	struct carve_diags *d;
	const char *sched;
	bool none;                    /* --queues none */
	struct carve_admission *ad;
	const struct carve_cluster *cl;
	struct carve_arena a;         /* scratch of this build */
	struct box *out;
	struct ppod *pods;
	size_t npods, nwaiting;
	struct gang *g;
	size_t ng;
	const struct carve_mf_pod **foreign;
	size_t nforeign;
	const struct carve_mf_pod **holders; /* carve-bound pods being deleted */
	size_t nholders;
	const struct carve_mf_podgroup **pgs; /* PodGroups by namespace, name */
	size_t *gang_of_wl;           /* engine id -> gang index (SIZE_MAX: none) */
	size_t nwl;
	bool capped;                  /* run_cycles stopped at its cap, not quiet */
	bool nomem;
};

/* ---- small helpers ---- */

static inline const char *kv(const struct carve_kvlist *l, const char *key)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->v[i].key && !strcmp(l->v[i].key, key))
			return l->v[i].value ? l->v[i].value : "";
	return NULL;
}

static inline const struct carve_kv *kv_at(const struct carve_kvlist *l, const char *key)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->v[i].key && !strcmp(l->v[i].key, key))
			return &l->v[i];
	return NULL;
}

static inline int nullcmp(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

static inline void *scratch(struct ctx *c, size_t n, size_t size)
{
	void *p = carve_arena_alloc(&c->a, (n ? n : 1) * size);

	if (!p)
		c->nomem = true;
	else
		memset(p, 0, (n ? n : 1) * size);
	return p;
}

static inline const char *sfmt(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline const char *sfmt(struct ctx *c, const char *fmt, ...)
{
	char buf[1024];
	const char *s;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	s = carve_arena_strdup(&c->a, buf);
	if (!s)
		c->nomem = true;
	return s;
}

/* A copy of s owned by the plan ("" for NULL). */
static inline char *own(struct ctx *c, const char *s)
{
	char *r = carve_arena_strdup(&c->out->a, s ? s : "");

	if (!r)
		c->nomem = true;
	return r;
}

/* Room for one more element of a plan array. */
static inline void *grow(struct ctx *c, void **arr, size_t n, size_t *cap, size_t size)
{
	if (n == *cap) {
		size_t ncap = *cap ? 2 * *cap : 8;
		void *v = carve_realloc(*arr, ncap * size);

		if (!v) {
			c->nomem = true;
			return NULL;
		}
		*arr = v;
		*cap = ncap;
	}
	memset((char *)*arr + n * size, 0, size);
	return (char *)*arr + n * size;
}

static inline void set_pod(struct ctx *c, struct carve_plan_pod *d, const struct carve_mf_pod *p)
{
	d->ns = own(c, p->meta.ns);
	d->name = own(c, p->meta.name);
	d->uid = own(c, p->uid);
}

static inline bool phase_is(const struct carve_mf_pod *p, const char *ph)
{
	return p->phase && !strcmp(p->phase, ph);
}

static inline const char *pod_key(struct ctx *c, const struct carve_mf_pod *p)
{
	return sfmt(c, "%s/%s", p->meta.ns ? p->meta.ns : "default", p->meta.name);
}

/* plan_out.c: the decisions read back into c->out, and queue and
 * PodGroup status. */
void br_plan_read_back(struct ctx *c);
void br_plan_queue_status(struct ctx *c);
void br_plan_podgroup_status(struct ctx *c);

#endif
