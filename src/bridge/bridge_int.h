/*
 * bridge_int.h - the bridge's private build context, shared by admission.c
 * (the build and its life cycle), queues.c (flavors, cohorts, ClusterQueues,
 * Volcano and KAI queues), workloads.c (every source of workloads -> engine
 * workloads) and result.c (decisions -> `carve admit` output).
 *
 * Ownership: struct bld lives for one build (or one job conversion); every
 * spec array handed to the engine comes from its scratch arena b->a, which
 * the engine copies from and which dies with the build.  Cross-file names
 * start with br_.  Every refusal is reported once in m->diags at the
 * object's position and the object is skipped.
 */
#ifndef CARVE_BRIDGE_INT_H
#define CARVE_BRIDGE_INT_H

#include "carve/arena.h"
#include "carve/admission.h"
#include "carve/inventory.h"
#include "carve/place.h"
#include "carve/quantity.h"
#include "carve/resource.h"

/* ---- build context ---- */

/* One resource of a Volcano or KAI queue, in milli-units. */
struct xres {
	const char *name;
	int64_t nominal;        /* deserved, KAI quota; 0 when absent */
	int64_t cap;            /* capability, KAI limit (a cap on usage); when has_cap */
	int64_t guar;           /* guarantee (never lent); when has_guar */
	bool has_cap, has_guar;
};

/* A Volcano or KAI queue in Kueue's terms. */
struct xq {
	const struct carve_meta *meta;
	const char *parent;           /* as written; NULL: none */
	struct carve_pos parent_pos;
	int up;                       /* its parent queue in the family; -1: the root */
	bool is_root;                 /* Volcano's queue "root": the root cohort itself */
	bool is_parent;               /* other queues name it: a Cohort, runs nothing */
	bool skip;                    /* reported; the engine never sees it */
	bool added;                   /* the engine accepted it */
	bool res_full;                /* more than CARVE_RES_MAX resources */
	size_t nres;
	struct xres *res;             /* CARVE_RES_MAX entries */
	int64_t weight_milli;
	bool not_reclaimable;
	enum carve_stop_policy stop;
};

/* Volcano's queues or KAI's: one flavor, one root cohort, one name space. */
struct family {
	const char *what;             /* "Volcano Queue", "KAI Queue" (messages) */
	const char *flavor;           /* implicit ResourceFlavor */
	const char *root;             /* cohort of the top-level queues */
	const char *root_queue;       /* queue name that means the root; NULL: none */
	size_t n;
	struct xq *q;
	bool flavor_ok;
};

struct bld {
	struct carve_manifests *m;
	struct carve_admission *ad;
	struct carve_arena a;   /* scratch: specs, keys; freed when the build ends */
	bool *flavor_ok;        /* per m->flavors[i]: the engine accepted it */
	struct family vc, kai;  /* Volcano's and KAI's queues, translated */
	const struct carve_admission_opts *opts;
	struct carve_diags *diags; /* where problems go: &m->diags, or a job's own list */
	bool nomem;
};


/* admission.c: small helpers every part of the build uses. */
void *br_scratch(struct bld *b, size_t n, size_t size);
struct carve_pos br_meta_pos(const struct carve_meta *meta);
const char *br_obj_name(struct bld *b, const struct carve_meta *meta);
void br_refused(struct bld *b, const struct carve_meta *meta, struct carve_pos pos, int rc,
		const struct carve_error *err);
/* printf into the scratch arena; NULL (and b->nomem) when out of memory. */
const char *br_fmt(struct bld *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const struct carve_label *br_conv_kv(struct bld *b, const struct carve_kvlist *l);
const struct carve_toleration_spec *br_conv_tols(struct bld *b, size_t n,
						 const struct carve_toleration *t);

/* cycles.c */
/*
 * Calls found(fctx, path, len) once for every cycle of the parent graph of
 * n nodes (parent(ctx, i): i's parent, or -1), with the cycle's members in
 * walk order: path[len - 1]'s parent link closes it (its parent is
 * path[0]).  False on allocation failure (nothing reported).
 */
bool br_find_cycles(size_t n, int (*parent)(const void *ctx, size_t i), const void *ctx,
		    void (*found)(void *fctx, const size_t *path, size_t len), void *fctx);
/* The cycle as "a -> b -> a" in buf (size bytes; cut when longer); buf. */
const char *br_cycle_text(const size_t *path, size_t len,
			  const char *(*name)(const void *ctx, size_t i), const void *ctx,
			  char *buf, size_t size);
/* The one message for a cycle of parent links (at the closing link). */
#define BR_CYCLE_MSG "%s %s: parent chain forms a cycle: %s"

/* queues.c */
void br_add_flavors(struct bld *b);
void br_add_cohorts(struct bld *b);
void br_add_cqs(struct bld *b);
void br_add_xqueues(struct bld *b);
bool br_flavor_known(struct bld *b, const char *name);
int br_fam_find(const struct family *f, const char *name);
bool br_is_volcano_pg(const struct carve_mf_podgroup *pg);

/* A topology level a podSet names (Kueue TAS), where, and under what name
 * (messages): [0] required, [1] preferred. */
struct br_topo {
	const char *level;            /* node label key; NULL: none */
	const char *what;             /* "annotation kueue.x-k8s.io/..." or a field name */
	struct carve_pos pos;
};

/*
 * One podSet as its source states it, before the bridge's checks: every
 * source (a Workload's podSet, a PodGroup, a trace job) is first turned
 * into this, and br_podset_spec() alone turns it into the engine's podSet.
 * Pointers are borrowed; positions with line 0 fall back to pos.
 */
struct br_podset {
	const char *name;
	struct carve_pos pos;                 /* of the podSet (or its object) */
	int32_t count, min_count;             /* min_count 0: count */
	size_t nreqs;
	const struct carve_req *reqs;         /* per pod */
	const struct carve_pos *req_pos;      /* per request; NULL: pos */
	size_t nselector;
	const struct carve_label *selector;
	size_t nterms;
	const struct carve_match_term *terms; /* required node affinity (OR) */
	size_t ntolerations;
	const struct carve_toleration_spec *tolerations;
	int32_t gpu_milli;                    /* fraction of one GPU, 1..999; 0 none */
	uint32_t gpu_mem_mib;                 /* GPU memory of a fraction; 0 none */
	struct carve_pos share_pos, mem_pos;
	const char *mem_what;                 /* how the memory was asked (messages) */
	size_t nmodels;                       /* allowed GPU models; 0 any */
	const char *const *models;
	struct br_topo topo[2];
};

/* inventory_carve.c: nodes of inv serving carve's own device names (0
 * for NULL), for the device-name family filter. */
size_t br_inv_carve_nodes(const struct carve_inventory *inv);

/* workloads.c */
/*
 * The engine's podSet *v for src in ClusterQueue cq (NULL: unknown):
 * checks every MIG profile exists, a fraction's GPU memory exists on some
 * GPU and each topology level belongs to the queue's flavors; adds the MIG
 * slice charges the queue asks for; turns GPU models into node affinity.
 * Arrays come from b's scratch arena.  False when the workload must not be
 * queued (each problem reported once at its position, prefixed by what,
 * e.g. "Workload ns/name" or "job name").
 */
bool br_podset_spec(struct bld *b, const char *what, const char *cq, const struct br_podset *src,
		    struct carve_podset_spec *v);
void br_add_workload(struct bld *b, const struct carve_mf_workload *w);
void br_add_podgroup(struct bld *b, const struct carve_mf_podgroup *pg);
/* Jobs, JobSets and Pods queued by Kueue (label kueue.x-k8s.io/queue-name),
 * KAI pods (label kai.scheduler/queue) and Volcano Jobs, as workloads
 * through br_podset_spec(); each kept in ad's job arena and mapped like a
 * Workload.  Objects no queue names are skipped without a word. */
void br_add_jobs(struct bld *b);

#endif
