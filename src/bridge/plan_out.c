/*
 * plan_out.c - the engine's decisions read back into the plan (plan.h):
 * binds with their carve.dev/devices and carve.dev/flavors annotations,
 * pending pods with the engine's message, victims and nominations,
 * releases of half-bound gangs; ClusterQueue, LocalQueue and PodGroup
 * status; and the plan's release.
 *
 * Invariants: every string the plan holds is copied into its arena
 * (own()); a gang is bound only when every pod of it has a placement.
 */
#include "plan_int.h"

/* ---- the plan out ---- */

/* The devices annotation of one placement. */
static const char *devices_text(struct ctx *c, const struct carve_pod_place *pl)
{
	struct carve_devref refs[CARVE_DEVREF_MAX];
	char buf[CARVE_DEVREF_MAX * 160];
	int i, n = pl->ndevs < CARVE_DEVREF_MAX ? pl->ndevs : CARVE_DEVREF_MAX, rc;

	for (i = 0; i < n; i++) {
		const struct carve_dev *dv = &pl->devs[i];
		const struct carve_gpu *gpu = carve_cluster_gpu(c->cl, dv->gpu);
		struct carve_devref *r = &refs[i];

		memset(r, 0, sizeof(*r));
		r->gpu = gpu->index;
		r->mig_start = -1;
		r->replica = -1;
		if (gpu->uuid && strlen(gpu->uuid) < sizeof(r->uuid))
			strcpy(r->uuid, gpu->uuid);
		if (dv->mig >= 0) {
			const struct carve_mig_layout *l = carve_placer_mig_layout(c->ad->placer,
										   dv->gpu);

			if (l && dv->mig < l->n) {
				snprintf(r->mig_profile, sizeof(r->mig_profile), "%s",
					 gpu->mig_model->profiles[l->inst[dv->mig].profile].name);
				r->mig_start = l->inst[dv->mig].start;
			}
		} else if (dv->replica >= 0) {
			r->replica = dv->replica;
		} else if (dv->milli > 0 && dv->milli < 1000) {
			r->milli = dv->milli;
			r->mem_mib = pl->mem_mib;
		}
	}
	if (!n)
		return "";
	rc = carve_devices_format(refs, n, buf, sizeof(buf));
	if (rc < 0)
		return NULL;
	return sfmt(c, "%s", buf);
}

static int label_cmp(const void *x, const void *y)
{
	return strcmp(((const struct carve_label *)x)->key, ((const struct carve_label *)y)->key);
}

/* The flavors annotation of an admitted workload: "res=flavor,..." over
 * every podSet, sorted by resource ("" with --queues none). */
static const char *flavors_text(struct ctx *c, const struct carve_wl_status *st)
{
	struct carve_label v[CARVE_RES_MAX];
	char buf[4096];
	size_t n = 0, k, i, t, len = 0;

	if (c->none)
		return "";
	for (k = 0; k < st->npodsets; k++)
		for (i = 0; i < st->podsets[k].n; i++) {
			for (t = 0; t < n && strcmp(v[t].key, st->podsets[k].resources[i]); t++)
				;
			if (t == n && n < CARVE_RES_MAX) {
				v[n].key = st->podsets[k].resources[i];
				v[n++].value = st->podsets[k].flavors[i];
			}
		}
	qsort(v, n, sizeof(*v), label_cmp);
	buf[0] = '\0';
	for (t = 0; t < n && len < sizeof(buf); t++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s=%s", t ? "," : "",
					v[t].key, v[t].value);
	return sfmt(c, "%s", buf);
}

static void add_bind(struct ctx *c, const struct gang *g, const struct ppod *q,
		     const struct carve_node *node, const char *dev, const char *flavors)
{
	struct carve_plan *p = &c->out->p;
	struct carve_plan_bind *b;

	b = grow(c, (void **)&p->binds, p->nbinds, &c->out->cap_binds, sizeof(*b));
	if (!b)
		return;
	set_pod(c, &b->pod, q->p);
	b->node = own(c, node->name);
	b->devices = own(c, dev);
	b->flavors = own(c, flavors);
	b->workload = own(c, g->key);
	b->gang = p->ngangs - 1;
	p->nbinds++;
}

static void add_pending_pod(struct ctx *c, const struct gang *g, const struct carve_mf_pod *pod,
			    const char *reason, const char *msg)
{
	struct carve_plan *p = &c->out->p;
	struct carve_plan_pending *e = grow(c, (void **)&p->pending, p->npending,
					    &c->out->cap_pending, sizeof(*e));

	if (!e)
		return;
	set_pod(c, &e->pod, pod);
	e->workload = own(c, g->key);
	e->reason = own(c, reason);
	e->message = own(c, msg && *msg ? msg : "not admitted yet");
	p->npending++;
}

/* ---- Dynamic MIG: gangs standing on a new layout wait for it ---- */

/* The repartition of cluster GPU gpu in this plan, or NULL. */
static const struct carve_repartition *repartition_of(struct ctx *c, uint32_t gpu)
{
	const struct carve_repartition *log;
	size_t n = carve_placer_repartitions(c->ad->placer, &log), i;

	for (i = 0; i < n; i++)
		if (log[i].gpu == gpu)
			return &log[i];
	return NULL;
}

static const struct carve_mf_node *mf_node(struct ctx *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->m->nnodes; i++)
		if (!strcmp(c->m->nodes[i].meta.name, name))
			return &c->m->nodes[i];
	return NULL;
}

/*
 * True when entry e of a node's old carve.dev/mig-layout still names a GPU
 * of node that is MIG-capable and a layout legal for its model; an entry
 * that does not (a GPU index the node lacks, a profile its model has not)
 * would make the node agent refuse the whole annotation, so it is dropped
 * when the annotation is written anew.
 */
static bool layout_entry_legal(struct ctx *c, const struct carve_node *node,
			       const struct carve_gpu_mig *e)
{
	const struct carve_gpu *gp;
	struct carve_mig_layout l;
	struct carve_error err = {0, ""};
	int i, pi;

	if (e->gpu < 0 || (uint32_t)e->gpu >= node->ngpus)
		return false;
	gp = carve_cluster_gpu(c->cl, node->gpu_first + (uint32_t)e->gpu);
	if (!gp->mig_model || e->n > CARVE_MIG_MAX_INST)
		return false;
	memset(&l, 0, sizeof(l));
	for (i = 0; i < e->n; i++) {
		if ((pi = carve_mig_profile_find(gp->mig_model, e->v[i].profile)) < 0 ||
		    e->v[i].start < 0 || e->v[i].start > 255)
			return false;
		l.inst[i].profile = (uint8_t)pi;
		l.inst[i].start = (uint8_t)e->v[i].start;
	}
	l.n = (uint8_t)e->n;
	return carve_mig_layout_check(gp->mig_model, &l, &err) == 0;
}

/* Adds (or merges into the node's entry) the layout of GPU gpu. */
static void want_layout(struct ctx *c, const struct gang *g, uint32_t gpu,
			const struct carve_mig_layout *to)
{
	struct carve_plan *p = &c->out->p;
	const struct carve_gpu *gp = carve_cluster_gpu(c->cl, gpu);
	const struct carve_node *node = carve_cluster_node(c->cl, gp->node);
	struct carve_gpu_mig l[CARVE_MIGLAYOUT_MAX_GPUS], one;
	struct carve_plan_layout *e = NULL;
	struct carve_error err = {0, ""};
	const char *old = NULL;
	char buf[CARVE_MIGLAYOUT_MAX_GPUS * 8 * 40], one_text[8 * 40];
	int n = 0, k, i;
	size_t j;

	for (j = 0; j < p->nlayouts; j++)
		if (!strcmp(p->layouts[j].node, node->name))
			e = &p->layouts[j];
	if (e) {
		old = e->layout;
	} else {
		const struct carve_mf_node *mn = mf_node(c, node->name);

		for (j = 0; mn && j < mn->meta.annotations.n && !old; j++)
			if (!strcmp(mn->meta.annotations.v[j].key, CARVE_MIG_LAYOUT_ANNOTATION))
				old = mn->meta.annotations.v[j].value;
	}
	if (old && (n = carve_miglayout_parse(old, l, CARVE_MIGLAYOUT_MAX_GPUS, &err)) < 0) {
		carve_diag_warn(c->d, (struct carve_pos){0}, "Node %s: annotation %s: %s; "
				"it is written anew", node->name, CARVE_MIG_LAYOUT_ANNOTATION,
				err.text);
		n = 0;
	}
	for (i = k = 0; i < n; i++)
		if (!e && !layout_entry_legal(c, node, &l[i]))
			carve_diag_warn(c->d, (struct carve_pos){0}, "Node %s: annotation %s: "
					"GPU %d's entry is not a legal layout of that GPU; it is "
					"dropped", node->name, CARVE_MIG_LAYOUT_ANNOTATION, l[i].gpu);
		else
			l[k++] = l[i];
	n = k;
	memset(&one, 0, sizeof(one));
	one.gpu = (int)gp->index;
	for (i = 0; i < to->n && i < CARVE_MIG_MAX_INST; i++) {
		snprintf(one.v[i].profile, sizeof(one.v[i].profile), "%s",
			 gp->mig_model->profiles[to->inst[i].profile].name);
		one.v[i].start = to->inst[i].start;
	}
	one.n = i;
	for (k = 0; k < n && l[k].gpu != one.gpu; k++)
		;
	if (k == n && n < CARVE_MIGLAYOUT_MAX_GPUS)
		n++;
	l[k] = one;
	if (carve_miglayout_format(l, n, buf, sizeof(buf)) < 0 ||
	    carve_miglayout_format(&one, 1, one_text, sizeof(one_text)) < 0)
		return;
	if (!e) {
		e = grow(c, (void **)&p->layouts, p->nlayouts, &c->out->cap_layouts, sizeof(*e));
		if (!e)
			return;
		e->node = own(c, node->name);
		e->message = own(c, "");
		p->nlayouts++;
	}
	e->layout = own(c, buf);
	e->message = own(c, sfmt(c, "%s%sGPU %s for %s", e->message, *e->message ? "; " : "",
				 one_text, g->key));
}

/*
 * True when some placement of gang g stands on a GPU this plan
 * repartitions: the layouts are added to the plan and the gang's waiting
 * pods are left pending with a message saying what they wait for.
 */
static bool waits_for_layout(struct ctx *c, const struct gang *g, const struct carve_wl_status *st)
{
	const char *msg = NULL;
	uint32_t done[64];
	size_t i, k, ndone = 0;
	int d;

	if (!c->o->mig_dynamic || !c->ad->placer)
		return false;
	for (i = g->first; i < g->first + g->n; i++) {
		const struct ppod *q = &c->pods[i];
		const struct carve_pod_place *pl;

		if (q->bound || (size_t)q->ps >= st->npodsets || q->idx >= st->podsets[q->ps].npods)
			continue;
		pl = &st->podsets[q->ps].pods[q->idx];
		for (d = 0; d < pl->ndevs; d++) {
			const struct carve_repartition *r = repartition_of(c, pl->devs[d].gpu);
			const struct carve_gpu *gp;

			if (!r)
				continue;
			for (k = 0; k < ndone && done[k] != r->gpu; k++)
				;
			if (k < ndone)
				continue;
			if (ndone < sizeof(done) / sizeof(done[0]))
				done[ndone++] = r->gpu;
			gp = carve_cluster_gpu(c->cl, r->gpu);
			want_layout(c, g, r->gpu, &r->to);
			if (!msg)
				msg = sfmt(c, "waiting for node %s to apply a new MIG layout on GPU "
					   "%u (%s); bound once %s shows it",
					   carve_cluster_node(c->cl, gp->node)->name, gp->index,
					   CARVE_MIG_LAYOUT_ANNOTATION, CARVE_MIG_CURRENT_ANNOTATION);
		}
	}
	if (!msg)
		return false;
	for (k = g->first; k < g->first + g->n; k++)
		if (!c->pods[k].bound)
			add_pending_pod(c, g, c->pods[k].p, "Unschedulable", msg);
	return true;
}

/* Binds for the waiting pods of an admitted gang (all of a new one, the
 * rest of a half-bound one), under one gang entry: all or none.  A pod
 * whose devices cannot be written (reported) leaves the whole gang
 * pending, so binds never hold part of a gang. */
static void bind_gang(struct ctx *c, const struct gang *g, const struct carve_wl_status *st)
{
	struct carve_plan *p = &c->out->p;
	struct carve_plan_gang *e;
	const char *flavors = flavors_text(c, st), **dev;
	const struct carve_node **node;
	size_t i;

	if (!flavors)
		return;
	for (i = 0; i < st->npodsets; i++)
		if (st->podsets[i].npods != (size_t)st->podsets[i].count)
			return; /* not placed: never bind without devices */
	dev = scratch(c, g->n, sizeof(*dev));
	node = scratch(c, g->n, sizeof(*node));
	if (!dev || !node)
		return;
	for (i = g->first; i < g->first + g->n; i++) {
		const struct ppod *q = &c->pods[i];
		const struct carve_pod_place *pl;

		if (q->bound || (size_t)q->ps >= st->npodsets || q->idx >= st->podsets[q->ps].npods)
			continue;
		pl = &st->podsets[q->ps].pods[q->idx];
		node[i - g->first] = carve_cluster_node(c->cl, pl->node);
		dev[i - g->first] = devices_text(c, pl);
		if (c->nomem)
			return;
		if (!dev[i - g->first] || !node[i - g->first]) {
			const char *why = sfmt(c, "the devices chosen for pod %s of gang %s cannot "
					       "be written as %s; the gang is not bound",
					       pod_key(c, q->p), g->key, CARVE_DEVICES_ANNOTATION);
			size_t k;

			carve_diag_error(c->d, br_meta_pos(&q->p->meta), "Pod %s: %s",
					 pod_key(c, q->p), why);
			for (k = g->first; k < g->first + g->n; k++)
				if (!c->pods[k].bound)
					add_pending_pod(c, g, c->pods[k].p, "SchedulerError", why);
			return;
		}
	}
	e = grow(c, (void **)&p->gangs, p->ngangs, &c->out->cap_gangs, sizeof(*e));
	if (!e)
		return;
	e->workload = own(c, g->key);
	e->cq = own(c, st->cq);
	e->first = p->nbinds;
	p->ngangs++;
	for (i = g->first; i < g->first + g->n && !c->nomem; i++)
		if (dev[i - g->first])
			add_bind(c, g, &c->pods[i], node[i - g->first], dev[i - g->first], flavors);
	e = &p->gangs[p->ngangs - 1];
	e->n = p->nbinds - e->first;
}

static void add_release(struct ctx *c, const struct gang *g)
{
	struct carve_plan *p = &c->out->p;
	size_t i;

	for (i = g->first; i < g->first + g->n && !c->nomem; i++) {
		const struct ppod *q = &c->pods[i];
		struct carve_plan_release *r;

		if (!q->bound)
			continue;
		r = grow(c, (void **)&p->releases, p->nreleases, &c->out->cap_releases, sizeof(*r));
		if (!r)
			return;
		set_pod(c, &r->pod, q->p);
		r->workload = own(c, g->key);
		r->message = own(c, g->release_msg);
		p->nreleases++;
	}
	for (i = g->first; i < g->first + g->n && !c->nomem; i++)
		if (!c->pods[i].bound)
			add_pending_pod(c, g, c->pods[i].p, "Unschedulable", g->release_msg);
}

/* Victims: every bound pod of each marked workload. */
static void add_victims(struct ctx *c, const struct gang *g, const struct carve_wl_status *st)
{
	struct carve_plan *p = &c->out->p;
	const struct carve_wl_status *by = carve_adm_status(c->ad->adm, st->preemptor);
	const char *reason = carve_preempt_reason_name(st->preempt_reason);
	const char *msg = sfmt(c, "Preempted to accommodate a workload (%s) due to %s",
			       by ? by->key : "?", reason);
	size_t i;

	for (i = g->first; i < g->first + g->n && !c->nomem; i++) {
		const struct ppod *q = &c->pods[i];
		struct carve_plan_victim *v;

		if (!q->bound)
			continue;
		v = grow(c, (void **)&p->victims, p->nvictims, &c->out->cap_victims, sizeof(*v));
		if (!v)
			return;
		set_pod(c, &v->pod, q->p);
		v->workload = own(c, g->key);
		v->preemptor = own(c, by ? by->key : "");
		v->reason = own(c, reason);
		v->message = own(c, msg);
		p->nvictims++;
	}
}

/*
 * status.nominatedNodeName for the waiting pods of a gang waiting for its
 * victims: the node every victim pod runs on, when they all run on one
 * (where the freed devices are); none otherwise.
 */
static void add_nominate(struct ctx *c, const struct gang *g)
{
	struct carve_plan *p = &c->out->p;
	const char *node = NULL;
	size_t k, i;

	for (k = 0; k < c->ng; k++) {
		const struct gang *v = &c->g[k];
		const struct carve_wl_status *st = v->wl >= 0 ? carve_adm_status(c->ad->adm,
									   (uint32_t)v->wl) : NULL;

		if (!st || !st->marked || (int)st->preemptor != g->wl)
			continue;
		for (i = v->first; i < v->first + v->n; i++) {
			const struct carve_mf_pod *vp = c->pods[i].p;

			if (!c->pods[i].bound)
				continue;
			if (node && strcmp(node, vp->node_name))
				return; /* several nodes */
			node = vp->node_name;
		}
	}
	if (!node)
		return;
	for (i = g->first; i < g->first + g->n && !c->nomem; i++) {
		struct carve_plan_nominate *e;

		if (c->pods[i].bound)
			continue;
		e = grow(c, (void **)&p->nominate, p->nnominate, &c->out->cap_nominate, sizeof(*e));
		if (!e)
			return;
		set_pod(c, &e->pod, c->pods[i].p);
		e->node = own(c, node);
		p->nnominate++;
	}
}

/* ---- queue and PodGroup status ---- */

static const struct carve_mf_quota *quota_of(const struct carve_mf_flavorquotas *fq,
					     const char *res)
{
	size_t i;

	for (i = 0; i < fq->n; i++)
		if (!strcmp(fq->v[i].resource, res))
			return &fq->v[i];
	return NULL;
}

void br_plan_queue_status(struct ctx *c)
{
	struct carve_plan *p = &c->out->p;
	size_t i, k, f, r;

	if (c->none)
		return;
	p->cqs = carve_calloc(c->m->ncqs + 1, sizeof(*p->cqs));
	p->lqs = carve_calloc(c->m->nlqs + 1, sizeof(*p->lqs));
	if (!p->cqs || !p->lqs) {
		c->nomem = true;
		return;
	}
	for (i = 0; i < c->m->ncqs && !c->nomem; i++) {
		const struct carve_mf_cq *q = &c->m->cqs[i];
		struct carve_plan_cq *e = &p->cqs[p->ncqs++];
		size_t n = 0;

		e->name = own(c, q->meta.name);
		e->cohort = own(c, q->cohort);
		for (k = 0; k < q->ngroups; k++)
			for (f = 0; f < q->groups[k].nflavors; f++)
				n += q->groups[k].ncovered;
		e->usage = carve_calloc(n + 1, sizeof(*e->usage));
		if (!e->usage) {
			c->nomem = true;
			return;
		}
		for (k = 0; k < q->ngroups; k++)
			for (f = 0; f < q->groups[k].nflavors; f++) {
				const struct carve_mf_flavorquotas *fq = &q->groups[k].flavors[f];

				for (r = 0; r < q->groups[k].ncovered; r++) {
					const char *res = q->groups[k].covered[r];
					const struct carve_mf_quota *qt = quota_of(fq, res);
					struct carve_plan_usage *u = &e->usage[e->nusage++];
					int64_t used = carve_adm_cq_usage(c->ad->adm, q->meta.name,
									  fq->flavor, res);

					u->flavor = own(c, fq->flavor);
					u->resource = own(c, res);
					u->total = used > 0 ? used : 0;
					u->nominal = qt ? qt->nominal : 0;
					u->borrowed = u->total > u->nominal ? u->total - u->nominal : 0;
				}
			}
	}
	for (i = 0; i < c->m->nlqs && !c->nomem; i++) {
		const struct carve_mf_localqueue *q = &c->m->lqs[i];
		struct carve_plan_lq *e = &p->lqs[p->nlqs++];

		e->ns = own(c, q->meta.ns);
		e->name = own(c, q->meta.name);
		e->cq = own(c, q->cluster_queue);
	}
	for (i = 0; i < c->ng; i++) {
		const struct gang *g = &c->g[i];
		const struct carve_wl_status *st = g->wl >= 0 ? carve_adm_status(c->ad->adm,
									   (uint32_t)g->wl) : NULL;
		bool adm = st && st->state == CARVE_WL_ADMITTED;

		if (!st)
			continue;
		for (k = 0; k < p->ncqs; k++)
			if (!strcmp(p->cqs[k].name, st->cq)) {
				p->cqs[k].admitted += adm;
				p->cqs[k].pending += !adm;
			}
		if (g->lq) {
			k = (size_t)(g->lq - c->m->lqs);
			if (k < p->nlqs) {
				p->lqs[k].admitted += adm;
				p->lqs[k].pending += !adm;
			}
		}
	}
}

/* status.phase of the Volcano and KAI PodGroups of this scheduler's gangs. */
void br_plan_podgroup_status(struct ctx *c)
{
	struct carve_plan *p = &c->out->p;
	size_t i;

	for (i = 0; i < c->ng && !c->nomem; i++) {
		const struct gang *g = &c->g[i];
		const struct carve_wl_status *st = g->wl >= 0 ? carve_adm_status(c->ad->adm,
									   (uint32_t)g->wl) : NULL;
		struct carve_plan_podgroup *e;
		const char *phase, *msg = "";

		if (!g->pg || (g->gk != GK_VOLCANO && g->gk != GK_KAI))
			continue;
		if (st && st->state == CARVE_WL_ADMITTED && !g->release && !st->marked) {
			phase = g->nwait ? "Inqueue" : "Running";
		} else {
			phase = "Pending";
			msg = g->release ? g->release_msg : g->why ? g->why
				: st && st->message ? st->message : "not admitted yet";
		}
		e = grow(c, (void **)&p->podgroups, p->npodgroups, &c->out->cap_pgs, sizeof(*e));
		if (!e)
			return;
		e->api_version = own(c, g->pg->meta.api_version);
		e->ns = own(c, g->pg->meta.ns);
		e->name = own(c, g->pg->meta.name);
		e->phase = own(c, phase);
		e->message = own(c, msg);
		p->npodgroups++;
	}
}

void br_plan_read_back(struct ctx *c)
{
	size_t i, k;

	for (i = 0; i < c->ng && !c->nomem; i++) {
		struct gang *g = &c->g[i];
		const struct carve_wl_status *st = g->wl >= 0 ? carve_adm_status(c->ad->adm,
									   (uint32_t)g->wl) : NULL;

		const char *msg;

		if (g->release) {
			add_release(c, g);
			continue;
		}
		if (!st) {
			for (k = g->first; k < g->first + g->n; k++)
				if (!c->pods[k].bound)
					add_pending_pod(c, g, c->pods[k].p, "Unschedulable", g->why);
			continue;
		}
		if (st->state == CARVE_WL_ADMITTED) {
			if (st->marked)
				add_victims(c, g, st);
			else if (g->nwait && !waits_for_layout(c, g, st))
				bind_gang(c, g, st);
			continue;
		}
		msg = st->message;
		if (c->capped && msg && !strcmp(msg, "waiting behind the head of its queue"))
			msg = sfmt(c, "%s (not reached in this scheduling pass: the pass stopped "
				   "at its cycle limit; tried again in the next)", msg);
		for (k = g->first; k < g->first + g->n; k++)
			if (!c->pods[k].bound)
				add_pending_pod(c, g, c->pods[k].p, "Unschedulable", msg);
		if (st->pending_reason == CARVE_PEND_PREEMPTION_ISSUED)
			add_nominate(c, g);
	}
}

void carve_plan_free(struct carve_plan *p)
{
	struct box *b = (struct box *)p;
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->ncqs; i++)
		carve_free(p->cqs[i].usage);
	carve_free(p->binds);
	carve_free(p->gangs);
	carve_free(p->pending);
	carve_free(p->victims);
	carve_free(p->nominate);
	carve_free(p->releases);
	carve_free(p->layouts);
	carve_free(p->cqs);
	carve_free(p->lqs);
	carve_free(p->podgroups);
	carve_arena_cleanup(&b->a);
	carve_free(b);
}
