/*
 * place_int.h - private to libcarve-core: the layout of struct carve_placer
 * (include/carve/place.h), shared by the placer's files (place.c the object,
 * place_feas.c static feasibility, place_pod.c one pod, place_state.c the
 * free state, place_gang.c gangs and topology, place_mig.c Dynamic MIG,
 * place_check.c the invariant check, place_cache.c the decision cache),
 * policy.c (the built-in policies), policy_<name>.c files and frag.c.
 *
 * State.  Per node: cpu, memory and pods *used* (free = allocatable - used;
 * an allocatable of 0 means "unknown" and does not constrain), the number of
 * its GPUs with anything taken, and its GPU pods by clustering class.  Per
 * GPU, by sharing mode (only that mode's fields are ever non-zero):
 *   exclusive  taken                (bool)
 *   mig        mig_taken            (bit i: instance i of p->mig[g], the
 *                                    placer's own copy of the GPU's layout)
 *   timeslice  rtaken + bits at p->rbits[info.rbits ..] (bit r: replica r)
 *   fraction   milli_used (0..1000; 1000 also when a whole request took it)
 *              and mem_used (MiB, only when the GPU's memory is known)
 *
 * Invariants (carve_placer_check() verifies every one):
 *   - 0 <= used <= allocatable for cpu, memory and pods (used >= 0 alone
 *     when allocatable is 0);
 *   - mig_taken has no bit at or above p->mig[g].n, and that layout is
 *     legal (instances never overlap); ginfo.mig_slices matches it;
 *   - Dynamic MIG: p->rpart[g] is -1, or the index of the one log entry for
 *     g, whose `to` equals p->mig[g] and `from` the cluster's layout; a GPU
 *     with an entry is busy (an idle one was reverted at release), and a GPU
 *     without one has the cluster's layout;
 *   - rtaken == popcount(replica bits) <= info.rcap, no bit >= rcap;
 *   - milli_used <= 1000; mem_used <= memory_mib (0 when memory unknown);
 *   - gpus_busy == number of the node's GPUs with anything taken;
 *   - sum(klass) == gpu_pods <= pods_used.
 *
 * Ownership: the placer borrows the cluster; everything else (state, the
 * scratch arrays used by placement, the mix) is allocated once at create
 * (set_mix: at that call) and freed by destroy.  Placement itself allocates
 * nothing (the decision cache, node classes and the fgd per-node parts are
 * allocated at create or set_mix too).  Nothing here reads a clock; the
 * only randomness is the seeded xoshiro256** stream p->rng (carve_rng_seed
 * of the placer's seed, include/carve/rng.h); policies draw from it with
 * carve_rng_below(&p->rng, n) (n > 0) and carve_rng_double(&p->rng).
 */
#ifndef CARVE_PLACE_INT_H
#define CARVE_PLACE_INT_H

#include <string.h>

#include "carve/place.h"
#include "carve/rng.h"
#include "mig_int.h"

/* GPU-pod classes for gpuclustering: 0 = shares a GPU (fraction, MIG,
 * replica), k = k whole GPUs. */
#define CARVE__NCLASS (CARVE_POD_MAX_GPUS + 1)

/* Most replicas of one time-sliced GPU the placer hands out (carve_dev
 * numbers replicas with an int16_t). */
#define CARVE__MAX_REPLICAS INT16_MAX

struct carve__node_state {
	int64_t cpu_used, mem_used, pods_used;
	uint32_t gpus_busy;               /* GPUs with anything taken */
	uint32_t gpu_pods;                /* pods holding devices here */
	uint32_t klass[CARVE__NCLASS];    /* gpu_pods by class */
};

struct carve__gpu_state {
	bool taken;          /* exclusive */
	uint8_t mig_taken;   /* mig */
	uint16_t rtaken;     /* timeslice */
	uint16_t milli_used; /* fraction */
	uint32_t mem_used;   /* fraction */
};

#define CARVE__GI_SHARE 3u      /* enum carve_sharing (0..3) */
#define CARVE__GI_FAILGT1 4u    /* timeslice: fail_gt_one */
#define CARVE__GI_MIGMODEL 8u   /* mig: mig_model known */

/* Static facts about a GPU, computed at create. */
struct carve__gpu_info {
	int32_t model;       /* index into p->model_key, -1: no/unknown name */
	uint16_t rcap;       /* timeslice: usable replicas */
	uint8_t mig_slices;  /* mig: memory slices p->mig[g]'s instances cover
			      * (updated on repartition) */
	uint8_t mode;        /* the cluster GPU's sharing (CARVE__GI_SHARE bits),
			      * | CARVE__GI_FAILGT1 | CARVE__GI_MIGMODEL: kept
			      * here, beside the rest, so scans stay in cache */
	uint32_t rbits;      /* timeslice: first word of its bits in p->rbits */
};

/* A candidate placement of one pod on one node (not yet applied). */
struct carve__cand {
	uint32_t node;
	int ndevs;
	struct carve_dev devs[CARVE_POD_MAX_GPUS];
	uint32_t mem_mib;    /* fraction memory taken on devs[0] */
	double aux;          /* policy scratch: a chooser may leave a value
			      * here for its score function */
	/* Dynamic MIG: GPUs to repartition before devs are taken, each to
	 * rlayout[k] (devs on them index the new layout). */
	int nrepart;
	uint32_t repart[CARVE_POD_MAX_GPUS];
	struct carve_mig_layout rlayout[CARVE_POD_MAX_GPUS];
};

struct carve_placer;

/*
 * A policy.  score() rates a feasible candidate, higher is better; equal
 * scores go to the node with the lowest p->rank.  choose_gpus() (optional,
 * NULL = carve__choose_default) fills c->devs (and c->mem_mib) for req on
 * node c->node and returns 0, or CARVE_ENOFIT when the node cannot hold it.
 * Both may read any state and use the RNG; neither may change the state.
 */
struct carve__policy {
	const char *name;
	/* The score and the choice of node n read only n's state, static
	 * facts, the request and the mix: no RNG, no other node.  Such a
	 * policy's decisions may come from the decision cache (place_cache.c). */
	bool cacheable;
	double (*score)(struct carve_placer *p, const struct carve_pod_req *req,
			const struct carve__cand *c);
	int (*choose_gpus)(struct carve_placer *p, const struct carve_pod_req *req,
			   struct carve__cand *c);
};

extern const struct carve__policy carve__policies[];
extern const int carve__npolicies;

/* Target workload for fragmentation-aware policies (carve_placer_set_mix):
 * task shapes (cpu, memory, gpu kind, count, mig_profile, milli, mem_mib,
 * models; selectors, affinity and tolerations are not kept), their
 * probabilities, and per type which of the cluster's GPU models it may use
 * (model_ok[t * p->nmodels + m]; all true for a type without models). */
struct carve__mix {
	size_t n;
	struct carve_pod_req *types;
	double *prob;
	bool *model_ok;
	char *strings;       /* one block holding every copied string */
	/* Per node, the parts of carve__fview_frag_parts() for its current
	 * state: row r = node * (n + 1); psmall[r + t], pfit[r + t], pacc[r + t]
	 * per type, psmall[r + n] the node's free milli U, pbase[node] F_n;
	 * valid while pok[node] (cleared when the node's state changes).  A
	 * node has at most UINT16_MAX GPUs (cluster.c), so its free milli fits
	 * 32 bits and a GPU count 16. */
	int32_t *psmall;
	uint16_t *pfit;
	bool *pacc;
	double *pbase;
	bool *pok;
	const char **names;  /* one block holding every models[] array */
};

/* Topology scratch. */
struct carve__tent {
	const char *val;
	uint32_t node;
};

struct carve__dom {
	const char *val;
	uint32_t first, n;   /* nodes p->dnodes[first .. first + n) */
	int64_t free_gpu, free_cpu;
};

/* Decision cache (place_cache.c): slots of recent request shapes, a
 * tournament tree of CARVE__FAN-way levels over the nodes, and the log of
 * nodes whose state changed. */
/* Slots: as many as CARVE__SLOT_BYTES of scores and trees hold, within
 * [CARVE__SLOTS_MIN, CARVE__SLOTS_MAX] (1,213 openb nodes: 100; 10,000
 * nodes: 12). */
#define CARVE__SLOT_BYTES (1u << 20)
#define CARVE__SLOTS_MIN 8
#define CARVE__SLOTS_MAX 256
#define CARVE__KEY_MAX 512
#define CARVE__CHG_CAP 4096u
#define CARVE__FAN 8u
#define CARVE__MAX_LVL 16

struct carve__slot {
	uint64_t seq;        /* change log position this slot reflects */
	uint64_t used;       /* last use (p->stamp), for LRU */
	uint64_t epoch;      /* p->cache_epoch when built */
	bool valid;
	uint16_t keylen;
	unsigned char key[CARVE__KEY_MAX]; /* the request, serialised */
	double *score;       /* per leaf: the scan's score; NaN: not feasible */
	uint32_t *win;       /* per level >= 1 (at p->lvl_off[l]): the leaf that
			      * wins each group of CARVE__FAN entries below */
	/* Leaves: every node (map NULL, nleaf = nnodes; a cache slot), or a
	 * gang-local tree over the candidates map[0 .. nleaf) (a topology
	 * domain; the slot is borrowed and left invalid). */
	const uint32_t *map;
	uint32_t nleaf;
};

struct carve_placer {
	const struct carve_cluster *c;
	/* The cluster's node and GPU arrays (carve_cluster_node(c, 0) and
	 * carve_cluster_gpu(c, 0): stable, as the cluster gains no nodes while
	 * the placer lives), read through carve__node() and carve__gpu(). */
	const struct carve_node *cn;
	const struct carve_gpu *cg;
	const struct carve__policy *pol;
	size_t nnodes, ngpus;
	struct carve__node_state *nodes;
	struct carve__gpu_state *gpus;
	struct carve__gpu_info *ginfo;
	uint64_t *rbits;
	size_t nrbits;
	uint32_t *rank;          /* tie-break: position in a seeded permutation */
	struct carve_rng rng;    /* the placer's one random stream (rng.h) */
	int64_t max_cpu;         /* largest allocatable cpu of a node (0: none known) */
	int64_t max_gpu_milli;   /* largest GPU count of a node x 1000 */
	uint32_t max_node_gpus;
	/* Distinct GPU models, by normalised canonical name. */
	size_t nmodels;
	char (*model_key)[CARVE__GPU_NAME_MAX];
	bool *model_ok;          /* per distinct model, for the request being placed */
	bool any_model;          /* the request names no model */
	/* Node classes: nodes with the same labels, taints and GPUs (mode,
	 * MIG model, failRequestsGreaterThanOne, model), in order, so every
	 * static feasibility test gives them the same answer.  cls[node];
	 * per class its first node (crep), and the answer for the request of
	 * generation cgen[k] (cfit[k]); fitgen moves on with each new request. */
	uint32_t *cls, *crep, *cgen;
	bool *cfit;
	uint32_t nclass, fitgen;
	/* Placement scratch (sized at create). */
	uint32_t *all;           /* 0 .. nnodes-1 */
	uint8_t *fit;            /* static feasibility of a node for the current group */
	struct carve__tent *tsort;
	struct carve__dom *doms;
	uint32_t *dnodes;
	uint32_t *gorder;        /* max_node_gpus entries: a GPU order during one
				  * choice, or frag.c's node view (carve__fview) */
	struct carve__mix mix;
	/* MIG layouts (per GPU; a copy of the cluster's, changed only by
	 * Dynamic MIG) and the repartition log: at most one entry per GPU, so
	 * its room (nmig = number of MIG GPUs) is allocated at create. */
	struct carve_mig_layout *mig;
	bool mig_dynamic;
	int32_t *rpart;          /* per GPU: index into reparts, or -1 */
	struct carve_repartition *reparts;
	size_t nreparts, nmig;
	/* MIG profiles the pending workloads want (carve_placer_set_mig_wants),
	 * most wanted first; a Dynamic MIG repartition fills the rest of a
	 * layout with them.  One carve_malloc'd block; NULL when none. */
	char **wants;
	size_t nwants;
	/* Decision cache (place_cache.c). */
	struct carve__slot *slots;
	size_t nslots;
	uint32_t nlvl, lvl_n[CARVE__MAX_LVL], lvl_off[CARVE__MAX_LVL];
	uint32_t *chg;           /* ring of CARVE__CHG_CAP changed nodes */
	uint64_t chg_seq;        /* changes logged so far */
	uint64_t stamp;
	uint64_t cache_epoch;    /* bumped when something every score reads changes */
	unsigned char keybuf[CARVE__KEY_MAX];
};

/* ---- the decision cache (place_cache.c) ---- */

/* Allocates the slots (placer create); 0 or CARVE_ENOMEM. */
int carve__cache_init(struct carve_placer *p);
void carve__cache_free(struct carve_placer *p);
/* Node's state changed (account()). */
void carve__cache_touch(struct carve_placer *p, uint32_t node);
/* Every slot is stale (mix, MIG wants, Dynamic MIG switched). */
void carve__cache_invalidate(struct carve_placer *p);
/* The slot for req (found or taken over), or NULL when the policy or the
 * request cannot be cached.  Needs p->any_model / p->model_ok set for req. */
struct carve__slot *carve__cache_get(struct carve_placer *p, const struct carve_pod_req *req);
/* Brings the slot up to date; the node a full scan would choose, or
 * UINT32_MAX when none is feasible. */
uint32_t carve__cache_best(struct carve_placer *p, struct carve__slot *s,
			   const struct carve_pod_req *req);
/* A gang-local tree (topology domains): a slot (the least recently used)
 * borrowed and scored over cands[0 .. ncands) for req; NULL when the policy
 * is not cacheable.  _best: the leaf (index into cands) a scan of cands
 * would choose, or UINT32_MAX; _changed: leaf x's node changed (the pod
 * just placed there), re-scored.  Only valid while nothing but this
 * group's own placements changes the state. */
struct carve__slot *carve__cache_local(struct carve_placer *p, const struct carve_pod_req *req,
				       const uint32_t *cands, size_t ncands);
uint32_t carve__cache_local_best(struct carve_placer *p, const struct carve__slot *s);
void carve__cache_local_changed(struct carve_placer *p, struct carve__slot *s,
				const struct carve_pod_req *req, uint32_t x);
/* The score a scan gives req on node (place_pod.c): NaN when the node
 * cannot take it (statically, room, or GPUs). */
double carve__node_eval(struct carve_placer *p, const struct carve_pod_req *greq, uint32_t node);
/* Sets the models req allows (p->any_model, p->model_ok) as the ones
 * carve__gpu_usable() and carve__node_eval() check, and starts a new
 * generation of node-class answers (place_feas.c). */
void carve__req_models(struct carve_placer *p, const struct carve_pod_req *req);

/* ---- helpers for policies (place_state.c, place_pod.c, place.c; the
 * smallest inline here) ---- */

/* carve_cluster_node(p->c, id) and carve_cluster_gpu(p->c, id) for ids in
 * range, without the call. */
static inline const struct carve_node *carve__node(const struct carve_placer *p, uint32_t id)
{
	return &p->cn[id];
}

static inline const struct carve_gpu *carve__gpu(const struct carve_placer *p, uint32_t id)
{
	return &p->cg[id];
}

/* The sharing mode of GPU g (from ginfo: no trip to the cluster's array). */
static inline enum carve_sharing carve__share(const struct carve_placer *p, uint32_t g)
{
	return (enum carve_sharing)(p->ginfo[g].mode & CARVE__GI_SHARE);
}

/* GPU g may serve req: its sharing mode fits req->gpu and its model is one
 * the request being placed allows (p->any_model / p->model_ok, set per
 * group before its pods are placed).  Inline: every GPU choice calls it
 * per GPU. */
static inline bool carve__gpu_usable(const struct carve_placer *p, uint32_t g,
				     const struct carve_pod_req *req)
{
	unsigned mode = p->ginfo[g].mode;
	enum carve_sharing sh = (enum carve_sharing)(mode & CARVE__GI_SHARE);
	int m = p->ginfo[g].model;

	switch (req->gpu) {
	case CARVE_GREQ_WHOLE:
		if (sh != CARVE_SHARE_EXCLUSIVE && sh != CARVE_SHARE_FRACTION)
			return false;
		break;
	case CARVE_GREQ_MIG:
		if (sh != CARVE_SHARE_MIG || !(mode & CARVE__GI_MIGMODEL))
			return false;
		break;
	case CARVE_GREQ_REPLICA:
		/* failRequestsGreaterThanOne: the device plugin refuses a pod
		 * asking for more than one replica. */
		if (sh != CARVE_SHARE_TIMESLICE || ((mode & CARVE__GI_FAILGT1) && req->count > 1))
			return false;
		break;
	case CARVE_GREQ_FRACTION:
		if (sh != CARVE_SHARE_FRACTION)
			return false;
		break;
	case CARVE_GREQ_GPU:
		if (sh == CARVE_SHARE_MIG)
			return false;
		break;
	default:
		return false;
	}
	return p->any_model || (m >= 0 && p->model_ok[m]);
}

/* Free milli-GPU of one GPU in state s (0..1000): exclusive 0/1000;
 * fraction 1000 - milli_used; timeslice 1000 * free replicas / rcap; MIG
 * 1000 * memory slices of free instances / slices of the layout.  A MIG GPU
 * with an empty layout has capacity 0. */
int carve__gpu_free_milli_in(const struct carve_placer *p, uint32_t g,
			     const struct carve__gpu_state *s);
/* Capacity in milli of one GPU: 1000, or 0 for MIG with an empty layout. */
int carve__gpu_cap_milli(const struct carve_placer *p, uint32_t g);
/* Free milli of g after candidate c is applied (state unchanged). */
int carve__gpu_free_milli_after(const struct carve_placer *p, uint32_t g,
				const struct carve__cand *c);
/* Sums over a node's GPUs: free milli now, after c, and capacity. */
int64_t carve__node_gpu_free(const struct carve_placer *p, uint32_t node);
int64_t carve__node_gpu_free_after(const struct carve_placer *p, const struct carve__cand *c);
int64_t carve__node_gpu_cap(const struct carve_placer *p, uint32_t node);
/* GPUs of the node with free milli == 1000. */
int carve__node_fully_free_gpus(const struct carve_placer *p, uint32_t node);
/* Allocatable cpu of a node (0: unknown) and its free cpu (INT64_MAX when
 * unknown). */
int64_t carve__node_cpu_cap(const struct carve_placer *p, uint32_t node);
/* Class of a request for gpuclustering: -1 no GPU, 0 shared, k whole GPUs. */
int carve__req_class(const struct carve_pod_req *req);

/* Fractional GPU g has room for FRACTION req (milli, and memory when both
 * sides know it); taking it adds the device to c. */
bool carve__fraction_fits(const struct carve_placer *p, uint32_t g, const struct carve_pod_req *req);
void carve__take_fraction(const struct carve_placer *p, uint32_t g, const struct carve_pod_req *req,
			  struct carve__cand *c);

/* The default GPU choice (best fit); see docs/internals/PLACEMENT.md. */
int carve__choose_default(struct carve_placer *p, const struct carve_pod_req *req,
			  struct carve__cand *c);

/* ---- shared between the placer's files (small ones inline) ---- */

/* GPU state s holds anything (of any sharing mode). */
static inline bool carve__gpu_busy(const struct carve__gpu_state *s)
{
	return s->taken || s->mig_taken || s->rtaken || s->milli_used || s->mem_used;
}

/* Memory slices the instances of l cover. */
static inline uint8_t carve__layout_slices(const struct carve_mig_model *m,
					   const struct carve_mig_layout *l)
{
	unsigned i, s = 0;

	for (i = 0; i < l->n; i++)
		s += m->profiles[l->inst[i].profile].mem_slices;
	return (uint8_t)s;
}

/* Appends a device to candidate c (room is the caller's). */
static inline void carve__add_dev(struct carve__cand *c, uint32_t g, int mig, int replica,
				  int milli)
{
	struct carve_dev *d = &c->devs[c->ndevs++];

	memset(d, 0, sizeof(*d)); /* padding too: placements compare bytewise */
	d->gpu = g;
	d->mig = (int16_t)mig;
	d->replica = (int16_t)replica;
	d->milli = (int16_t)milli;
}

/* Candidate c has a device on GPU g. */
static inline bool carve__cand_has_gpu(const struct carve__cand *c, uint32_t g)
{
	int i;

	for (i = 0; i < c->ndevs; i++)
		if (c->devs[i].gpu == g)
			return true;
	return false;
}

/* Replica r of time-sliced GPU g is taken. */
static inline bool carve__rbit(const struct carve_placer *p, uint32_t g, unsigned r)
{
	return (p->rbits[p->ginfo[g].rbits + r / 64] >> (r % 64)) & 1u;
}

static inline int carve__popcount64(uint64_t x)
{
	int n = 0;

	for (; x; x &= x - 1)
		n++;
	return n;
}

/* place.c: which distinct cluster models the names allow, into
 * ok[p->nmodels]. */
void carve__models_allowed(const struct carve_placer *p, size_t nnames,
			   const char *const *names, bool *ok);

/* place_feas.c: node classes at create (cls, crep, nclass; cgen and cfit
 * sized): 0 or CARVE_ENOMEM.  Static feasibility of req on a node (labels,
 * affinity, taints, a usable GPU): everything placements do not change. */
int carve__scan_classes(struct carve_placer *p);
bool carve__node_static_ok(const struct carve_placer *p, uint32_t node,
			   const struct carve_pod_req *req);

/* carve__node_static_ok() for the request of the current generation
 * (carve__req_models), answered once per node class.  Inline: a scan asks
 * it per node. */
static inline bool carve__static_fit(struct carve_placer *p, uint32_t node,
				     const struct carve_pod_req *req)
{
	uint32_t k = p->cls[node];

	if (p->cgen[k] != p->fitgen) {
		p->cgen[k] = p->fitgen;
		p->cfit[k] = carve__node_static_ok(p, p->crep[k], req);
	}
	return p->cfit[k];
}

/* place_feas.c: p->fit[] of the candidates for req (carve__req_models first). */
void carve__prepare_group(struct carve_placer *p, const struct carve_pod_req *req,
			  const uint32_t *cands, size_t ncands);

/* place_pod.c: one pod of greq on the best of cands (p->fit set by
 * carve__prepare_group), or on the node the decision cache slot names
 * (cands are all nodes), or the root of a gang-local tree over cands
 * (slot->map == cands); applied into out.  0 or CARVE_ENOFIT (nothing
 * changed). */
int carve__place_pod(struct carve_placer *p, const struct carve_pod_req *greq,
		     const uint32_t *cands, size_t ncands, struct carve__slot *slot,
		     struct carve_pod_place *out);

/* place_state.c: takes what candidate c plans for req (Dynamic MIG
 * repartitions first), recorded in out. */
void carve__apply(struct carve_placer *p, const struct carve_pod_req *req,
		  const struct carve__cand *c, struct carve_pod_place *out);

/* place_mig.c: the rest of a MIG request from idle GPUs of node n
 * repartitioned, planned in c (nothing changes until carve__apply); GPU g
 * (idle) takes layout l, logged; GPU g went idle again: back to its layout
 * before, its log entry dropped. */
void carve__choose_mig_dynamic(struct carve_placer *p, const struct carve_node *n,
			       const struct carve_pod_req *req, struct carve__cand *c);
void carve__mig_repartition(struct carve_placer *p, uint32_t g, const struct carve_mig_layout *l);
void carve__mig_unrepartition(struct carve_placer *p, uint32_t g);

/* ---- policy scores shared between policy files ---- */

double carve__bestfit_score(struct carve_placer *p, const struct carve_pod_req *req,
			    const struct carve__cand *c);
/* FGD (src/core/policy_fgd.c): the chooser computes the node's score (the
 * quantised fragmentation decrease of the GPU it picks) into c->aux, the
 * score returns it.  With no mix set both behave as bestfit. */
double carve__fgd_score(struct carve_placer *p, const struct carve_pod_req *req,
			const struct carve__cand *c);
int carve__fgd_choose(struct carve_placer *p, const struct carve_pod_req *req,
		      struct carve__cand *c);
/* floor(100 * sigmoid(delta / 1000)), delta in GPU milli (fgd.md section 4). */
int carve__fgd_quantise(double delta);

/* ---- fragmentation (src/core/frag.c, fgd.md sections 2-3) ---- */

/* A view of one node for fragmentation: free cpu (INT64_MAX when not
 * constrained) and per GPU k of the node a word v[k]: free milli
 * (CARVE__FV_FREE bits) | CARVE__FV_WHOLE when a WHOLE request may use it |
 * CARVE__FV_FRACTION when a FRACTION request may.  v is p->gorder: valid
 * until the next placement call or view load.  A caller may change words
 * and cpu_free to describe a hypothetical state (bits above the three
 * masks are free for its own marks). */
#define CARVE__FV_FREE 0xffffu
#define CARVE__FV_WHOLE 0x10000u
#define CARVE__FV_FRACTION 0x20000u

struct carve__fview {
	uint32_t node, first, n;
	int64_t cpu_free;
	uint32_t *v;
};

void carve__fview_load(const struct carve_placer *p, uint32_t node, struct carve__fview *fv);
/* F_n of the view for the mix: sum over types of p_m frag(n, m), GPU milli. */
double carve__fview_frag(const struct carve_placer *p, const struct carve__fview *fv);
/* F_n of a view of node fv->node in its current state (unchanged words),
 * from the node's cached parts (p->mix.psmall, pfit, pacc), computed first
 * when stale; carve__fview_frag_after() then scores a changed view in
 * O(types).  Bit-identical to carve__fview_frag(). */
double carve__fview_frag_parts(const struct carve_placer *p, const struct carve__fview *fv);
/* F_n of the view (parts valid: carve__fview_frag_parts() called) with GPU ks[i]'s
 * free milli set to nfree[i] (distinct ks; modes and models unchanged) and
 * free cpu cpu_free: bit-identical to carve__fview_frag() of that view. */
double carve__fview_frag_after(const struct carve_placer *p, const struct carve__fview *fv,
			       const uint32_t *ks, const uint32_t *nfree, int nchg, int64_t cpu_free);
/* frag(n, m) of the view for mix type t alone (unweighted). */
double carve__fview_frag_type(const struct carve_placer *p, const struct carve__fview *fv, size_t t);
#endif
