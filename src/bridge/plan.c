/*
 * plan.c - the scheduler's decision step (plan.h): the cluster's objects
 * in a manifest set -> binds, pending pods, victims, releases and queue
 * status, through the one bridge `carve admit` uses.
 *
 * One build: classify the pods (waiting pods of this scheduler, pods it
 * bound itself with a carve.dev/devices annotation, pods bound by anyone
 * else), group them into gangs (sorted by namespace, group and name, so
 * the watch order never matters), build the engine with
 * carve_admission_build_opts (queues, flavors, nodes, placer; no
 * workloads of its own), then add, in this order: fully bound gangs
 * (their exact devices retaken), pods bound by others (pinned to their
 * node, any devices of their kind), half-bound gangs (completed around
 * their bound pods), waiting gangs; run engine cycles at opts->now
 * without evicting (a victim's pods must be deleted before its devices
 * are given out: the preemptor waits for a later plan), and read the
 * decisions back.
 *
 * Invariants: pure (no I/O, no clock); every string and array of the
 * plan is owned by it (struct box: an arena for strings, the arrays
 * carve_realloc'd); a device named by a bound pod is never handed out
 * again in the same plan (the placer holds it first).  Problems with
 * objects go to the diagnostics at the object; the object is left out.
 */
#include "plan_int.h"

/* ---- which pods, which gangs ---- */

static bool mine(const struct ctx *c, const struct carve_mf_pod *p)
{
	return p->spec.scheduler_name && !strcmp(p->spec.scheduler_name, c->sched);
}

/* The group pod p names, and its kind; NULL for none. */
static const char *pod_group(const struct carve_mf_pod *p, enum gkind *gk)
{
	const char *g;

	if ((g = kv(&p->meta.labels, KQ_GROUP)) && *g) {
		*gk = GK_KUEUE;
		return g;
	}
	if ((g = kv(&p->meta.annotations, VC_GROUP)) && *g) {
		*gk = GK_VOLCANO;
		return g;
	}
	if ((g = kv(&p->meta.annotations, KAI_GROUP)) && *g) {
		*gk = GK_KAI;
		return g;
	}
	if ((g = kv(&p->meta.labels, CO_GROUP)) && *g) {
		*gk = GK_COSCHED;
		return g;
	}
	*gk = GK_NONE;
	return NULL;
}

static int ppod_cmp(const void *x, const void *y)
{
	const struct ppod *a = x, *b = y;
	int r = nullcmp(a->p->meta.ns, b->p->meta.ns);

	if (!r)
		r = strcmp(a->gname, b->gname);
	if (!r)
		r = (int)a->gk - (int)b->gk;
	if (!r)
		r = strcmp(a->p->meta.name, b->p->meta.name);
	return r;
}

/* Whether a and b are pods of one group (same namespace, kind and name). */
static int ppod_cmp_group(const struct ppod *a, const struct ppod *b)
{
	int r = nullcmp(a->p->meta.ns, b->p->meta.ns);

	if (!r)
		r = strcmp(a->gname, b->gname);
	if (!r)
		r = (int)a->gk - (int)b->gk;
	return r;
}

static int pg_cmp(const void *x, const void *y)
{
	const struct carve_mf_podgroup *a = *(const struct carve_mf_podgroup *const *)x;
	const struct carve_mf_podgroup *b = *(const struct carve_mf_podgroup *const *)y;
	int r = nullcmp(a->meta.ns, b->meta.ns);

	return r ? r : strcmp(a->meta.name, b->meta.name);
}

/* The PodGroups sorted by namespace and name (c->pgs), for find_pg. */
static void sort_pgs(struct ctx *c)
{
	size_t i;

	c->pgs = scratch(c, c->m->npodgroups, sizeof(*c->pgs));
	if (!c->pgs)
		return;
	for (i = 0; i < c->m->npodgroups; i++)
		c->pgs[i] = &c->m->podgroups[i];
	if (c->m->npodgroups)
		qsort(c->pgs, c->m->npodgroups, sizeof(*c->pgs), pg_cmp);
}

/* The PodGroup of a Volcano, KAI or coscheduling group, or NULL: a binary
 * search of c->pgs, then the PodGroups of that namespace and name in
 * order (a Volcano and a KAI one may share it). */
static const struct carve_mf_podgroup *find_pg(const struct ctx *c, const struct gang *g)
{
	struct carve_mf_podgroup key;
	const struct carve_mf_podgroup *kp = &key;
	size_t lo = 0, hi = c->m->npodgroups, i;

	memset(&key, 0, sizeof(key));
	key.meta.ns = g->ns;
	key.meta.name = g->name;
	while (lo < hi) { /* the first not below key */
		size_t mid = lo + (hi - lo) / 2;

		if (pg_cmp(&c->pgs[mid], &kp) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i < c->m->npodgroups && !pg_cmp(&c->pgs[i], &kp); i++) {
		bool vc = br_is_volcano_pg(c->pgs[i]);

		if ((g->gk == GK_VOLCANO && vc) || (g->gk == GK_KAI && !vc) || g->gk == GK_COSCHED)
			return c->pgs[i];
	}
	return NULL;
}

/* Whether two pods ask for the same resources (one podSet of a gang). */
static bool same_requests(const struct carve_mf_pod *a, const struct carve_mf_pod *b)
{
	size_t i, j;

	if (a->spec.requests.n != b->spec.requests.n)
		return false;
	for (i = 0; i < a->spec.requests.n; i++) {
		for (j = 0; j < b->spec.requests.n; j++)
			if (!strcmp(a->spec.requests.v[i].name, b->spec.requests.v[j].name) &&
			    a->spec.requests.v[i].milli == b->spec.requests.v[j].milli)
				break;
		if (j == b->spec.requests.n)
			return false;
	}
	return nullcmp(kv(&a->meta.annotations, "gpu-fraction"),
		       kv(&b->meta.annotations, "gpu-fraction")) == 0 &&
	       nullcmp(kv(&a->meta.annotations, "gpu-memory"),
		       kv(&b->meta.annotations, "gpu-memory")) == 0;
}

/* A workload's key: "ns/name" for a single pod (the pod's own name), and
 * for a group "ns/<kind>:name" (a ':' no object name holds), so a pod and
 * a group of one name, or groups of two kinds, are never one workload. */
static const char *gang_key(struct ctx *c, const struct gang *g)
{
	static const char *const kinds[] = {
		[GK_KUEUE] = "pod-group", [GK_VOLCANO] = "volcano", [GK_KAI] = "kai",
		[GK_COSCHED] = "coscheduling",
	};

	if (g->gk == GK_NONE)
		return sfmt(c, "%s/%s", g->ns, g->name);
	return sfmt(c, "%s/%s:%s", g->ns, kinds[g->gk], g->name);
}

/* The number of pods group g declares (Kueue's total-count annotation,
 * a PodGroup's minMember); 0 when unknown. */
static int32_t declared_size(const struct ctx *c, const struct gang *g)
{
	const struct carve_kv *t;
	char *end = NULL;
	long x;

	if (g->gk == GK_KUEUE) {
		t = kv_at(&c->pods[g->first].p->meta.annotations, KQ_TOTAL);
		x = t && t->value && *t->value ? strtol(t->value, &end, 10) : 0;
		return end && !*end && x > 0 && x <= INT32_MAX ? (int32_t)x : 0;
	}
	if (g->gk != GK_NONE && g->pg && g->pg->min_member > 0)
		return g->pg->min_member;
	return 0;
}

/*
 * A gang with bound pods is completed up to its declared size, never
 * past it: waiting pods beyond it (after the bound ones and the first
 * waiting ones by name) move to the end of its range and become a gang
 * entry of their own that stays pending with a message (g->n shrinks;
 * the entry takes c->g's next slot, which the pods it holds pay for).
 */
static void split_extra(struct ctx *c, struct gang *g)
{
	int32_t decl = declared_size(c, g);
	size_t nb = 0, keep, seen = 0, i, w, nx;
	struct ppod *tmp;
	struct gang *x;

	for (i = g->first; i < g->first + g->n; i++)
		nb += c->pods[i].bound;
	if (!nb || decl <= 0 || g->n <= (size_t)decl)
		return;
	keep = nb < (size_t)decl ? (size_t)decl - nb : 0;
	tmp = scratch(c, g->n, sizeof(*tmp));
	if (!tmp)
		return;
	nx = 0;
	w = 0;
	for (i = g->first; i < g->first + g->n; i++) {
		if (c->pods[i].bound || seen++ < keep)
			c->pods[g->first + w++] = c->pods[i];
		else
			tmp[nx++] = c->pods[i];
	}
	memcpy(&c->pods[g->first + w], tmp, nx * sizeof(*tmp));
	g->n = w;
	x = g + 1; /* filled after g: make_gangs continues past both */
	memset(x, 0, sizeof(*x));
	x->first = g->first + w;
	x->n = nx;
	x->ns = g->ns;
	x->name = g->name;
	x->gk = g->gk;
	x->key = g->key;
	x->wl = -1;
	x->nwait = nx;
	x->why = sfmt(c, "gang %s declares %d pods and %zu of them are bound or being "
		      "bound; this pod is one too many and is not scheduled", g->key,
		      (int)decl, nb + keep);
	x->extra = true;
}

/* Sorts the pods into gangs and says of each what it needs. */
static void make_gangs(struct ctx *c)
{
	size_t i, j;

	if (c->npods)
		qsort(c->pods, c->npods, sizeof(*c->pods), ppod_cmp);
	c->g = scratch(c, c->npods, sizeof(*c->g));
	sort_pgs(c);
	if (!c->g || !c->pgs)
		return;
	for (i = 0; i < c->npods; i = j) {
		struct gang *g = &c->g[c->ng++];
		const struct carve_mf_pod *p0 = c->pods[i].p;
		const struct ppod *rep[MAX_PS];
		int32_t need;
		size_t k;

		for (j = i + 1; j < c->npods && c->pods[i].gk != GK_NONE &&
				!ppod_cmp_group(&c->pods[i], &c->pods[j]); j++)
			;
		g->first = i;
		g->n = j - i;
		g->ns = p0->meta.ns ? p0->meta.ns : "default";
		g->name = c->pods[i].gname;
		g->gk = c->pods[i].gk;
		g->key = gang_key(c, g);
		g->wl = -1;
		if (g->gk == GK_VOLCANO || g->gk == GK_KAI || g->gk == GK_COSCHED)
			g->pg = find_pg(c, g);
		split_extra(c, g);
		for (k = i; k < i + g->n; k++) {
			struct ppod *q = &c->pods[k];
			int r;

			if (q->bound)
				g->nbound++;
			else
				g->nwait++;
			for (r = 0; r < g->nps && !same_requests(rep[r]->p, q->p); r++)
				;
			if (r == g->nps) {
				if (g->nps == MAX_PS) {
					g->why = sfmt(c, "pod group %s asks for more than %d "
						      "different pod requests", g->key, MAX_PS);
					carve_diag_error(c->d, br_meta_pos(&q->p->meta), "Pod %s: "
							 "group %s has more than %d different pod "
							 "requests; not scheduled", pod_key(c, q->p),
							 g->key, MAX_PS);
					break;
				}
				rep[g->nps++] = q;
			}
			q->ps = r;
			q->idx = (size_t)g->count[r]++;
		}
		need = 1;
		if (g->gk == GK_KUEUE) {
			const struct carve_kv *t = kv_at(&p0->meta.annotations, KQ_TOTAL);
			char *end = NULL;
			long x = t && t->value ? strtol(t->value, &end, 10) : 0;

			if (!t || !t->value || !*t->value || *end || x < 1 || x > INT32_MAX) {
				if (!g->why) {
					g->why = sfmt(c, "annotation %s is %s (a whole number of "
						      "pods is needed)", KQ_TOTAL, t ? "not a whole "
						      "number" : "missing");
					carve_diag_warn(c->d, t ? t->pos : br_meta_pos(&p0->meta),
							"Pod %s: %s", pod_key(c, p0), g->why);
				}
			} else {
				need = (int32_t)x;
			}
		} else if (g->gk == GK_VOLCANO || g->gk == GK_KAI) {
			if (!g->pg)
				g->why = g->why ? g->why : sfmt(c, "waiting for its PodGroup %s/%s",
								g->ns, g->name);
			else
				need = g->pg->min_member > 0 ? g->pg->min_member : 1;
		} else if (g->gk == GK_COSCHED) {
			need = g->pg && g->pg->min_member > 0 ? g->pg->min_member : (int32_t)g->n;
		}
		/* A gang is considered once the pods it needs exist; one with
		 * bound pods already ran (or was cut off) and is kept. */
		if (!g->why && !g->nbound && g->n < (size_t)need)
			g->why = sfmt(c, "waiting for all %d pods of gang %s to exist "
				      "(a gang is considered once they do)", (int)need, g->key);
		if (c->ng < c->npods && c->g[c->ng].extra)
			c->ng++; /* split_extra's entry, already complete */
	}
}

/* ---- a gang as the bridge's job ---- */

/* Value of a (Workload)PriorityClass, preferring the kind asked for. */
static bool class_value(const struct carve_manifests *m, const char *name, const char *kind,
			int32_t *out)
{
	bool found = false;
	size_t i;

	for (i = 0; i < m->nwpcs; i++) {
		const struct carve_mf_priorityclass *pc = &m->wpcs[i];

		if (strcmp(pc->meta.name, name))
			continue;
		if (!found || !nullcmp(pc->meta.kind, kind))
			*out = pc->value;
		found = true;
	}
	return found;
}

/* A gang's priority: Kueue's priority-class label (a
 * WorkloadPriorityClass), else the pod's PriorityClass, else its
 * PodGroup's; 0 without one (or when the class is not known yet). */
static int32_t gang_priority(const struct ctx *c, const struct gang *g)
{
	const struct carve_mf_pod *p = c->pods[g->first].p;
	const char *k = kv(&p->meta.labels, KQ_PRIO);
	int32_t v = 0;

	if (k && class_value(c->m, k, "WorkloadPriorityClass", &v))
		return v;
	if (p->spec.priority_class && class_value(c->m, p->spec.priority_class, "PriorityClass", &v))
		return v;
	if (g->pg && g->pg->priority_class &&
	    class_value(c->m, g->pg->priority_class, "PriorityClass", &v))
		return v;
	return 0;
}

/* KAI's fraction annotations of pod p into ps; false (reported) when
 * malformed. */
static bool pod_share(struct ctx *c, const struct carve_mf_pod *p, struct carve_job_podset *ps)
{
	const struct carve_kv *f = kv_at(&p->meta.annotations, "gpu-fraction");
	const struct carve_kv *mem = kv_at(&p->meta.annotations, "gpu-memory");
	char *end;

	if (f && f->value) {
		double x = strtod(f->value, &end);
		long milli = x > 0 && x < 1 ? (long)(x * 1000.0 + 0.5) : 0;

		if (end == f->value || *end || milli < 1 || milli > 999) {
			carve_diag_error(c->d, f->pos, "Pod %s: annotation gpu-fraction '%s' is not "
					 "a number above 0 and below 1; not scheduled",
					 pod_key(c, p), f->value);
			return false;
		}
		ps->gpu_milli = (int32_t)milli;
	}
	if (mem && mem->value) {
		unsigned long long x = strtoull(mem->value, &end, 10);

		if (end == mem->value || *end || *mem->value == '-' || x < 1 || x > UINT32_MAX) {
			carve_diag_error(c->d, mem->pos, "Pod %s: annotation gpu-memory '%s' is not "
					 "a whole number of MiB; not scheduled", pod_key(c, p),
					 mem->value);
			return false;
		}
		ps->gpu_mem_mib = (uint32_t)x;
	}
	return true;
}

/* Pod p's requests and node constraints as one job podSet (scratch). */
static bool pod_podset(struct ctx *c, const struct carve_mf_pod *p, struct carve_job_podset *ps)
{
	const struct carve_podspec *sp = &p->spec;
	struct carve_req *reqs = scratch(c, sp->requests.n, sizeof(*reqs));
	struct carve_label *sel = scratch(c, sp->node_selector.n, sizeof(*sel));
	struct carve_match_term *terms = scratch(c, sp->nterms, sizeof(*terms));
	struct carve_toleration_spec *tols = scratch(c, sp->ntolerations, sizeof(*tols));
	size_t i, k;

	if (!reqs || !sel || !terms || !tols)
		return false;
	for (i = 0; i < sp->requests.n; i++) {
		reqs[i].name = sp->requests.v[i].name;
		reqs[i].milli = sp->requests.v[i].milli;
	}
	ps->nreqs = sp->requests.n;
	ps->reqs = reqs;
	for (i = 0; i < sp->node_selector.n; i++) {
		sel[i].key = sp->node_selector.v[i].key;
		sel[i].value = sp->node_selector.v[i].value;
	}
	ps->nselector = sp->node_selector.n;
	ps->selector = sel;
	for (i = 0; i < sp->nterms; i++) {
		struct carve_match_expr *e = scratch(c, sp->terms[i].n, sizeof(*e));

		if (!e)
			return false;
		for (k = 0; k < sp->terms[i].n; k++) {
			e[k].key = sp->terms[i].v[k].key;
			e[k].op = sp->terms[i].v[k].op;
			e[k].nvalues = sp->terms[i].v[k].nvalues;
			e[k].values = sp->terms[i].v[k].values;
		}
		terms[i].n = sp->terms[i].n;
		terms[i].exprs = e;
	}
	ps->nterms = sp->nterms;
	ps->terms = terms;
	for (i = 0; i < sp->ntolerations; i++) {
		tols[i].key = sp->tolerations[i].key;
		tols[i].op = sp->tolerations[i].op;
		tols[i].value = sp->tolerations[i].value;
		tols[i].effect = sp->tolerations[i].effect;
	}
	ps->ntolerations = sp->ntolerations;
	ps->tolerations = tols;
	return true;
}

/* Diagnostics the conversion left in tmp, into c->d at pos, prefixed. */
static void pass_diags(struct ctx *c, struct carve_diags *tmp, struct carve_pos pos,
		       const char *what)
{
	size_t i;

	for (i = 0; i < tmp->n; i++)
		carve_diag(c->d, tmp->v[i].sev, pos, "%s: %s", what, tmp->v[i].msg);
}

/*
 * Gang g as the bridge's job, converted by carve_admission_job() (the
 * same checks `carve admit` makes of a Workload's podSets) into g->spec.
 * False when it cannot be queued: g->why says why, reported in c->d.
 */
static bool gang_spec(struct ctx *c, struct gang *g)
{
	const struct carve_mf_pod *p0 = c->pods[g->first].p;
	struct carve_job_podset *ps = scratch(c, (size_t)g->nps, sizeof(*ps));
	struct carve_pos pos = br_meta_pos(&p0->meta);
	const char *what = g->gk == GK_NONE ? sfmt(c, "Pod %s", g->key)
					    : sfmt(c, "Pod group %s", g->key);
	struct carve_error err = {0};
	struct carve_diags tmp;
	struct carve_job j;
	bool have_created = false;
	size_t i;
	int r, rc;

	if (!ps || !what)
		return false;
	memset(&j, 0, sizeof(j));
	j.name = g->name;
	j.ns = g->ns;
	j.pos = pos;
	if (c->none) {
		j.cluster_queue = PLACE_ONLY;
	} else if ((g->gk == GK_VOLCANO || g->gk == GK_KAI) && g->pg && g->pg->queue) {
		j.cluster_queue = g->pg->queue;
	} else if (g->gk == GK_KAI && kv(&p0->meta.labels, KAI_QUEUE)) {
		j.cluster_queue = kv(&p0->meta.labels, KAI_QUEUE);
	} else {
		j.queue = kv(&p0->meta.labels, KQ_QUEUE);
		if (!j.queue || !*j.queue) {
			g->why = sfmt(c, "no %s label: carve admits pods through a LocalQueue "
				      "(or, with --queues none, places them without quota)",
				      KQ_QUEUE);
			return false;
		}
		g->lq = carve_mf_find_lq(c->m, g->ns, j.queue);
	}
	j.priority = gang_priority(c, g);
	for (i = g->first; i < g->first + g->n; i++) {
		const struct carve_mf_pod *p = c->pods[i].p;

		if (p->meta.has_created && (!have_created || p->meta.created < j.created)) {
			j.created = p->meta.created;
			have_created = true;
		}
	}
	j.has_created = have_created;
	j.created_unknown = !have_created;
	for (r = 0; r < g->nps; r++) {
		const struct carve_mf_pod *rep = NULL;

		for (i = g->first; i < g->first + g->n && !rep; i++)
			if (c->pods[i].ps == r)
				rep = c->pods[i].p;
		ps[r].name = g->nps == 1 ? "main" : sfmt(c, "role%d", r);
		ps[r].count = g->count[r];
		ps[r].min_count = g->count[r];
		if (!ps[r].name || !pod_podset(c, rep, &ps[r]))
			return false;
		if (!pod_share(c, rep, &ps[r])) {
			g->why = sfmt(c, "%s: a malformed gpu-fraction or gpu-memory annotation",
				      what);
			return false;
		}
	}
	j.npodsets = (size_t)g->nps;
	j.podsets = ps;
	carve_diags_init(&tmp);
	rc = carve_admission_job(c->ad, &j, &g->spec, &tmp, &err);
	pass_diags(c, &tmp, pos, what);
	carve_diags_cleanup(&tmp);
	if (rc == CARVE_ENOMEM) {
		c->nomem = true;
		return false;
	}
	if (rc < 0) {
		g->why = sfmt(c, "%s", err.text[0] ? err.text : carve_strerror(rc));
		return false;
	}
	g->spec.key = g->key;
	return true;
}

/* ---- bound pods: the devices they hold ---- */

/* Gang g, some of whose pods this scheduler bound, cannot be held as an
 * admitted workload (its flavors are gone, its annotations name no
 * flavor or a node carve lacks ...): running pods are never deleted for
 * that.  Its bound pods hold their exact devices outside the engine,
 * charging no quota (reported); its waiting pods stay pending with why. */
static void hold_plain(struct ctx *c, struct gang *g, const char *why)
{
	g->plain = true;
	g->why = why ? why : "its bound pods cannot be held as an admitted workload";
	carve_diag_warn(c->d, br_meta_pos(&c->pods[g->first].p->meta), "%s %s: %s; its running "
			"pods keep their devices but charge no quota%s",
			g->gk == GK_NONE ? "Pod" : "Pod group", g->key, g->why,
			g->nwait ? ", and its waiting pods stay pending" : "");
}

/* Gang g's bound pods are to be deleted, for this reason. */
static void release(struct ctx *c, struct gang *g, const char *why)
{
	(void)c;
	g->release = true;
	g->release_msg = why ? why : "released";
}

static int64_t req_of(const struct carve_mf_pod *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->spec.requests.n; i++)
		if (!strcmp(p->spec.requests.v[i].name, name))
			return p->spec.requests.v[i].milli;
	return 0;
}

/*
 * The placement bound pod p holds, from spec.nodeName and its
 * carve.dev/devices annotation, in the placer's ids.  Returns 0, or 1
 * when the annotation cannot be taken as written (reported at the pod:
 * an unknown node, a GPU index the node lacks, a MIG instance its layout
 * lacks ...).
 */
static int devices_place(struct ctx *c, const struct carve_mf_pod *p, struct carve_pod_place *pl)
{
	const char *v = kv(&p->meta.annotations, CARVE_DEVICES_ANNOTATION);
	struct carve_pos pos = br_meta_pos(&p->meta);
	struct carve_devref refs[CARVE_DEVREF_MAX];
	struct carve_error err = {0};
	const struct carve_node *node;
	int id = carve_cluster_find_node(c->cl, p->node_name), n = 0, i;

	memset(pl, 0, sizeof(*pl));
	if (id < 0) {
		carve_diag_warn(c->d, pos, "Pod %s: spec.nodeName names node %s, which carve does "
				"not know; its devices are not held", pod_key(c, p), p->node_name);
		return 1;
	}
	node = carve_cluster_node(c->cl, (uint32_t)id);
	pl->node = (uint32_t)id;
	pl->cpu_milli = req_of(p, CARVE_RES_NAME_CPU);
	pl->memory_milli = req_of(p, CARVE_RES_NAME_MEMORY);
	if (v && *v) {
		n = carve_devices_parse(v, refs, CARVE_DEVREF_MAX, &err);
		if (n < 0) {
			carve_diag_warn(c->d, pos, "Pod %s: annotation %s: %s", pod_key(c, p),
					CARVE_DEVICES_ANNOTATION,
					err.text[0] ? err.text : carve_strerror(n));
			return 1;
		}
	}
	for (i = 0; i < n; i++) {
		const struct carve_devref *r = &refs[i];
		struct carve_dev *dv = &pl->devs[i];
		const struct carve_gpu *gpu;
		uint32_t gid;

		if (r->gpu < 0 || (uint32_t)r->gpu >= node->ngpus) {
			carve_diag_warn(c->d, pos, "Pod %s: annotation %s names GPU %d, but node %s "
					"has %u GPU(s)", pod_key(c, p), CARVE_DEVICES_ANNOTATION,
					r->gpu, node->name, (unsigned)node->ngpus);
			return 1;
		}
		gid = node->gpu_first + (uint32_t)r->gpu;
		gpu = carve_cluster_gpu(c->cl, gid);
		dv->gpu = gid;
		dv->mig = -1;
		dv->replica = -1;
		if (r->mig_profile[0]) {
			const struct carve_mig_layout *l = carve_placer_mig_layout(c->ad->placer, gid);
			int k;

			for (k = 0; l && k < l->n; k++)
				if (l->inst[k].start == r->mig_start &&
				    !strcmp(gpu->mig_model->profiles[l->inst[k].profile].name,
					    r->mig_profile))
					break;
			if (!l || k == l->n) {
				carve_diag_warn(c->d, pos, "Pod %s: annotation %s names MIG instance "
						"%s@%d on GPU %d of node %s, which its layout does "
						"not have", pod_key(c, p), CARVE_DEVICES_ANNOTATION,
						r->mig_profile, r->mig_start, r->gpu, node->name);
				return 1;
			}
			dv->mig = (int16_t)k;
		} else if (r->replica >= 0) {
			if (gpu->sharing != CARVE_SHARE_TIMESLICE ||
			    (uint32_t)r->replica >= gpu->replicas) {
				carve_diag_warn(c->d, pos, "Pod %s: annotation %s names replica %d of "
						"GPU %d of node %s, which has no such replica",
						pod_key(c, p), CARVE_DEVICES_ANNOTATION, r->replica,
						r->gpu, node->name);
				return 1;
			}
			dv->replica = (int16_t)r->replica;
		} else if (r->milli > 0) {
			if (gpu->sharing != CARVE_SHARE_FRACTION) {
				carve_diag_warn(c->d, pos, "Pod %s: annotation %s names a fraction of "
						"GPU %d of node %s, which is not shared by fractions",
						pod_key(c, p), CARVE_DEVICES_ANNOTATION, r->gpu,
						node->name);
				return 1;
			}
			dv->milli = (int16_t)r->milli;
			pl->mem_mib = r->mem_mib;
		} else if (gpu->sharing == CARVE_SHARE_FRACTION) {
			dv->milli = 1000; /* a whole GPU taken from the fraction pool */
		} else if (gpu->sharing != CARVE_SHARE_EXCLUSIVE) {
			carve_diag_warn(c->d, pos, "Pod %s: annotation %s names GPU %d of node %s "
					"whole, but it is shared (%s)", pod_key(c, p),
					CARVE_DEVICES_ANNOTATION, r->gpu, node->name,
					carve_sharing_name(gpu->sharing));
			return 1;
		}
	}
	pl->ndevs = n;
	return 0;
}

/* The carve.dev/flavors annotation "res=flavor,..." into the gang's map
 * (first pod wins); false when malformed. */
static bool parse_flavors(struct ctx *c, const char *v, struct carve_label *map, size_t *n,
			  size_t max)
{
	char *s = carve_arena_strdup(&c->a, v), *save = NULL, *tok;

	if (!s) {
		c->nomem = true;
		return false;
	}
	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		size_t k;

		if (!eq || eq == tok || !eq[1])
			return false;
		*eq = '\0';
		for (k = 0; k < *n && strcmp(map[k].key, tok); k++)
			;
		if (k < *n)
			continue;
		if (*n == max)
			return false;
		map[*n].key = tok;
		map[(*n)++].value = eq + 1;
	}
	return true;
}

/*
 * Adds gang g, some of whose pods this scheduler bound, as an admitted
 * workload holding exactly their devices (the waiting ones placed around
 * them by the engine).  A bound pod whose annotations cannot be taken is
 * held as another scheduler's pod would be, and the gang is released.
 */
static void prep_bound(struct ctx *c, struct gang *g)
{
	struct carve_wl_spec *sp = &g->spec, s = g->spec;
	struct carve_ps_admission *adm = scratch(c, s.npodsets, sizeof(*adm));
	struct carve_pod_place *pl;
	struct carve_label map[CARVE_RES_MAX];
	size_t nmap = 0, total = 0, off[MAX_PS], i, k;
	bool bad = false;

	for (k = 0; k < s.npodsets; k++) {
		off[k] = total;
		total += (size_t)s.podsets[k].count;
	}
	pl = scratch(c, total, sizeof(*pl));
	if (!adm || !pl)
		return;
	g->pl = pl;
	memcpy(g->off, off, sizeof(off));
	for (i = 0; i < total; i++)
		pl[i].node = CARVE_PLACE_NONE;
	for (i = g->first; i < g->first + g->n; i++) {
		const struct ppod *q = &c->pods[i];
		const char *fl = kv(&q->p->meta.annotations, CARVE_FLAVORS_ANNOTATION);

		if (!q->bound)
			continue;
		if (devices_place(c, q->p, &pl[off[q->ps] + q->idx])) {
			pl[off[q->ps] + q->idx].node = CARVE_PLACE_NONE;
			bad = true;
		}
		else if (!c->none && fl && !bad && !parse_flavors(c, fl, map, &nmap, CARVE_RES_MAX)) {
			carve_diag_warn(c->d, br_meta_pos(&q->p->meta), "Pod %s: annotation %s '%s' "
					"is not a list of resource=flavor", pod_key(c, q->p),
					CARVE_FLAVORS_ANNOTATION, fl);
			bad = true;
		}
	}
	for (k = 0; k < s.npodsets && !bad && !c->nomem; k++) {
		const struct carve_podset_spec *ps = &s.podsets[k];
		struct carve_label *f = scratch(c, ps->nreqs, sizeof(*f));

		if (!f)
			return;
		for (i = 0; i < ps->nreqs; i++) {
			size_t t;

			f[i].key = ps->reqs[i].name;
			f[i].value = c->none ? PLACE_ONLY : NULL;
			for (t = 0; !c->none && t < nmap; t++)
				if (!strcmp(map[t].key, ps->reqs[i].name))
					f[i].value = map[t].value;
			if (!f[i].value) {
				carve_diag_warn(c->d, br_meta_pos(&c->pods[g->first].p->meta),
						"%s %s: its bound pods' annotation %s names no flavor "
						"for %s", g->gk == GK_NONE ? "Pod" : "Pod group",
						g->key, CARVE_FLAVORS_ANNOTATION, ps->reqs[i].name);
				bad = true;
				break;
			}
		}
		adm[k].podset = ps->name;
		adm[k].count = ps->count;
		adm[k].n = ps->nreqs;
		adm[k].flavors = f;
	}
	if (c->nomem)
		return;
	if (bad) {
		hold_plain(c, g, sfmt(c, "the carve annotations of the bound pods of gang %s "
				      "cannot be taken as written", g->key));
		return;
	}
	sp->admitted = true;
	sp->nadmission = s.npodsets;
	sp->admission = adm;
	sp->nplaces = total;
	sp->places = pl;
}

/* Adds gang g, prepared by prep_bound(), to the engine. */
static void add_bound(struct ctx *c, struct gang *g)
{
	struct carve_error err = {0};
	const struct carve_wl_status *st;
	int id;

	if (g->release || !g->spec.admitted)
		return;
	id = carve_adm_add_workload(c->ad->adm, &g->spec, &err);
	if (id == CARVE_ENOMEM) {
		c->nomem = true;
		return;
	}
	if (id < 0) {
		carve_diag_warn(c->d, br_meta_pos(&c->pods[g->first].p->meta), "%s %s: %s",
				g->gk == GK_NONE ? "Pod" : "Pod group", g->key,
				err.text[0] ? err.text : carve_strerror(id));
		hold_plain(c, g, sfmt(c, "gang %s cannot be held as admitted: %s", g->key,
				      err.text[0] ? err.text : carve_strerror(id)));
		return;
	}
	g->wl = id;
	st = carve_adm_status(c->ad->adm, (uint32_t)id);
	if (st && st->npodsets && !st->podsets[0].npods)
		release(c, g, sfmt(c, "gang %s cannot be completed around its bound pods: %s",
				   g->key, st->message ? st->message : "no placement"));
}

/* Pod p, bound by another scheduler (or whose carve annotations cannot be
 * taken), holds cpu, memory and devices of its kinds on its node. */
static void hold_foreign(struct ctx *c, const struct carve_mf_pod *p)
{
	int id = carve_cluster_find_node(c->cl, p->node_name);
	const struct carve_node *node;
	struct carve_job_podset jp;
	struct carve_podset_spec ps;
	struct carve_toleration_spec all = {NULL, "Exists", NULL, NULL};
	struct carve_label host;
	struct carve_pod_req req;
	struct carve_pod_group grp;
	struct carve_pod_place pl;
	struct carve_error err = {0};
	int rc;

	if (id < 0)
		return; /* a node carve does not model (reported by the inventory) */
	node = carve_cluster_node(c->cl, (uint32_t)id);
	host.key = HOSTNAME;
	host.value = carve_node_label(node, HOSTNAME);
	if (!host.value) {
		carve_diag_warn(c->d, br_meta_pos(&p->meta), "Pod %s, bound to node %s by another "
				"scheduler, is not counted: the node has no %s label to pin it by",
				pod_key(c, p), p->node_name, HOSTNAME);
		return;
	}
	memset(&jp, 0, sizeof(jp));
	if (!pod_podset(c, p, &jp))
		return;
	memset(&ps, 0, sizeof(ps));
	ps.name = "main";
	ps.count = 1;
	ps.min_count = 1;
	ps.nreqs = jp.nreqs;
	ps.reqs = jp.reqs;
	ps.nselector = 1;
	ps.selector = &host;
	ps.ntolerations = 1; /* it is there already: every taint tolerated */
	ps.tolerations = &all;
	rc = carve_pod_req_of(&ps, &req, &err);
	if (!rc) {
		grp.req = &req;
		grp.count = 1;
		rc = carve_placer_place(c->ad->placer, &grp, 1, NULL, &pl);
	}
	if (rc == CARVE_ENOMEM)
		c->nomem = true;
	else if (rc < 0)
		carve_diag_warn(c->d, br_meta_pos(&p->meta), "Pod %s, bound to node %s by another "
				"scheduler, does not fit carve's view of that node (%s); it is not "
				"counted", pod_key(c, p), p->node_name,
				rc == CARVE_ENOFIT ? "no room left" : err.text);
}

/* A waiting gang into the engine, pending. */
static void add_pending(struct ctx *c, struct gang *g)
{
	struct carve_error err = {0};
	int id = carve_adm_add_workload(c->ad->adm, &g->spec, &err);

	if (id == CARVE_ENOMEM) {
		c->nomem = true;
	} else if (id < 0) {
		g->why = sfmt(c, "%s", err.text[0] ? err.text : carve_strerror(id));
		carve_diag_warn(c->d, br_meta_pos(&c->pods[g->first].p->meta), "%s %s: %s",
				g->gk == GK_NONE ? "Pod" : "Pod group", g->key, g->why);
	} else {
		g->wl = id;
	}
}

/* Bound pod p holds exactly the devices its annotation names, read
 * into pl (or, when pl is NULL, read here); when the annotation cannot be
 * taken (reported), cpu, memory and devices of its kinds on its node, as
 * another scheduler's pod would. */
static void hold_exact(struct ctx *c, const struct carve_mf_pod *p,
		       const struct carve_pod_place *pl)
{
	struct carve_pod_place own_pl;

	if (!pl) {
		if (devices_place(c, p, &own_pl))
			own_pl.node = CARVE_PLACE_NONE;
		pl = &own_pl;
	}
	if (pl->node != CARVE_PLACE_NONE) {
		if (!carve_placer_retake(c->ad->placer, pl, 1))
			return;
		carve_diag_warn(c->d, br_meta_pos(&p->meta), "Pod %s: the devices its annotation "
				"%s names on node %s are held by other pods too; held as another "
				"scheduler's pod would be", pod_key(c, p), CARVE_DEVICES_ANNOTATION,
				p->node_name);
	}
	hold_foreign(c, p);
}

/* The bound pods of gang g (released, held outside the engine, or not
 * a workload at all) still run: each holds its exact devices. */
static void hold_bound_pods(struct ctx *c, struct gang *g)
{
	size_t i;

	for (i = g->first; i < g->first + g->n && !c->nomem; i++) {
		const struct ppod *q = &c->pods[i];

		if (q->bound)
			hold_exact(c, q->p, g->pl ? &g->pl[g->off[q->ps] + q->idx] : NULL);
	}
}

/* ---- the engine ---- */

/* Every resource the pods of this plan ask for (--queues none's quota). */
static const char *const *all_resources(struct ctx *c, size_t *n)
{
	const char **v = scratch(c, CARVE_RES_MAX, sizeof(*v));
	size_t i, k, r;

	*n = 0;
	for (i = 0; v && i < c->npods; i++) {
		const struct carve_reslist *rl = &c->pods[i].p->spec.requests;

		for (k = 0; k < rl->n; k++) {
			for (r = 0; r < *n && strcmp(v[r], rl->v[k].name); r++)
				;
			if (r == *n && *n < CARVE_RES_MAX)
				v[(*n)++] = rl->v[k].name;
		}
	}
	return v;
}

/* Runs cycles at opts->now without evicting marked workloads (their pods
 * are deleted by the driver; the preemptor is admitted in a later plan,
 * once their devices are free) until quiet: a cycle that decides nothing
 * and sets no BestEffortFIFO head aside (the next would be the same; a
 * head set aside lets the next workload of its queue be tried in this
 * plan, so one fitting pod behind inadmissible ones is still bound).
 * opts->max_cycles caps it when positive; with 0 the cap is only a
 * safety net of the workloads pending + a few cycles, reached only when
 * admissions keep requeueing set-aside heads (c->capped then). */
static int run_cycles(struct ctx *c, size_t npending)
{
	size_t cap = npending + 8;
	int max = c->o->max_cycles > 0 ? c->o->max_cycles
				       : (cap > INT32_MAX ? INT32_MAX : (int)cap), n = 0;

	while (n < max) {
		int rc = carve_adm_cycle(c->ad->adm, c->o->now);

		if (rc < 0) {
			c->nomem = true;
			return n;
		}
		n++;
		if (!rc && !carve_adm_last_set_aside(c->ad->adm))
			return n;
	}
	c->capped = true;
	return n;
}

/* ---- the build ---- */

/* Which pods the plan looks at: waiting pods of this scheduler and pods
 * it bound (c->pods), pods bound by anyone else (c->foreign). */
static void classify(struct ctx *c)
{
	size_t i;

	c->pods = scratch(c, c->m->npods, sizeof(*c->pods));
	c->foreign = scratch(c, c->m->npods, sizeof(*c->foreign));
	c->holders = scratch(c, c->m->npods, sizeof(*c->holders));
	for (i = 0; c->pods && c->foreign && c->holders && i < c->m->npods; i++) {
		const struct carve_mf_pod *p = &c->m->pods[i];
		struct ppod *q;

		if (phase_is(p, "Succeeded") || phase_is(p, "Failed"))
			continue; /* holds nothing any more */
		if (p->node_name && *p->node_name) {
			if (!mine(c, p) || !kv(&p->meta.annotations, CARVE_DEVICES_ANNOTATION)) {
				c->foreign[c->nforeign++] = p;
				continue;
			}
			if (p->deleting) { /* going away; its replacement is a new pod */
				c->holders[c->nholders++] = p;
				continue;
			}
		} else if (!mine(c, p) || p->ngates || p->deleting ||
			   (p->phase && !phase_is(p, "Pending"))) {
			continue;
		}
		q = &c->pods[c->npods++];
		q->p = p;
		q->bound = p->node_name && *p->node_name;
		q->gname = pod_group(p, &q->gk);
		if (!q->gname)
			q->gname = p->meta.name;
		if (!q->bound)
			c->nwaiting++;
	}
}

/* The placements of g's bound pods that prep_bound() read, taken
 * (take) or given back; false when taking fails (nothing taken then). */
static bool reserve(struct ctx *c, struct gang *g, bool take)
{
	size_t i;

	for (i = g->first; i < g->first + g->n; i++) {
		const struct ppod *q = &c->pods[i];
		const struct carve_pod_place *pl = &g->pl[g->off[q->ps] + q->idx];

		if (!q->bound)
			continue;
		if (!take) {
			carve_placer_release(c->ad->placer, pl, 1);
		} else if (carve_placer_retake(c->ad->placer, pl, 1)) {
			size_t k;

			for (k = g->first; k < i; k++)
				if (c->pods[k].bound)
					carve_placer_release(c->ad->placer,
							     &g->pl[g->off[c->pods[k].ps] +
								    c->pods[k].idx], 1);
			return false;
		}
	}
	return true;
}

static void decide(struct ctx *c)
{
	size_t i, npending = 0;

	/* 1. gangs holding exact devices (the bound pods of half-bound ones
	 * reserved), carve-bound pods being deleted, 2. others' pods, 3.
	 * half-bound gangs completed around their bound pods, 4. waiting
	 * gangs. */
	for (i = 0; i < c->ng && !c->nomem; i++) {
		struct gang *g = &c->g[i];

		if (!g->nbound)
			continue;
		if (g->why) { /* not a workload: its pods still hold their devices */
			hold_bound_pods(c, g);
			continue;
		}
		prep_bound(c, g);
		if (c->nomem)
			continue;
		if (g->plain) {
			hold_bound_pods(c, g);
			continue;
		}
		if (!g->nwait)
			add_bound(c, g);
		else if (reserve(c, g, true))
			g->reserved = true;
		else
			release(c, g, sfmt(c, "the devices the bound pods of gang %s name are "
					   "taken by other pods; it is released and queued again",
					   g->key));
		if (g->release || g->plain)
			hold_bound_pods(c, g);
	}
	for (i = 0; i < c->nholders && !c->nomem; i++)
		hold_exact(c, c->holders[i], NULL);
	for (i = 0; i < c->nforeign && !c->nomem; i++)
		hold_foreign(c, c->foreign[i]);
	for (i = 0; i < c->ng && !c->nomem; i++) {
		struct gang *g = &c->g[i];

		if (!g->reserved)
			continue;
		reserve(c, g, false);
		add_bound(c, g);
		if (g->release || g->plain)
			hold_bound_pods(c, g);
	}
	for (i = 0; i < c->ng && !c->nomem; i++) {
		struct gang *g = &c->g[i];

		if (!g->nbound && !g->why) {
			add_pending(c, g);
			npending += g->wl >= 0;
		}
	}
	if (!c->nomem)
		c->out->p.cycles = run_cycles(c, npending);
}

int carve_plan_build(struct carve_manifests *m, const struct carve_plan_opts *o,
		     struct carve_diags *d, struct carve_plan **out, struct carve_error *err)
{
	static const struct carve_plan_opts defaults;
	struct carve_admission_opts ao;
	struct ctx c;
	size_t i;

	*out = NULL;
	memset(&c, 0, sizeof(c));
	c.m = m;
	c.o = o ? o : &defaults;
	c.d = d ? d : &m->diags;
	c.sched = c.o->scheduler_name ? c.o->scheduler_name : "carve";
	c.none = c.o->queues == CARVE_QUEUES_NONE;
	carve_arena_init(&c.a);
	c.out = carve_calloc(1, sizeof(*c.out));
	if (!c.out) {
		carve_arena_cleanup(&c.a);
		return carve_errorf(err, CARVE_ENOMEM, "out of memory");
	}
	carve_arena_init(&c.out->a);
	classify(&c);
	if (!c.nomem)
		make_gangs(&c);
	memset(&ao, 0, sizeof(ao));
	ao.policy = c.o->policy;
	ao.seed = c.o->seed;
	ao.has_seed = true;
	ao.no_workloads = true;
	ao.mig_dynamic = c.o->mig_dynamic;
	ao.diags = c.d;
	if (c.none) {
		ao.place_only = PLACE_ONLY;
		ao.place_only_res = all_resources(&c, &ao.nplace_only_res);
	}
	if (!c.nomem) {
		c.ad = carve_admission_build_opts(m, &ao);
		if (!c.ad)
			c.nomem = true;
	}
	if (!c.nomem) {
		const char *why = !c.ad->finalized ? "the queues cannot be built (see the "
						     "scheduler's diagnostics)"
				  : !c.ad->placer ? "no schedulable node is known" : NULL;

		c.cl = c.ad->inv ? c.ad->inv->cluster : NULL;
		for (i = 0; i < c.ng && !c.nomem; i++) {
			struct gang *g = &c.g[i];

			if (why && !g->why)
				g->why = why;
			if (!g->why && !gang_spec(&c, g) && !g->why && !c.nomem)
				g->why = "not admissible";
		}
		if (!why)
			decide(&c);
	}
	if (!c.nomem)
		br_plan_read_back(&c);
	if (!c.nomem && c.ad && c.ad->finalized)
		br_plan_queue_status(&c);
	if (!c.nomem && c.ad)
		br_plan_podgroup_status(&c);
	c.out->p.pods_seen = c.nwaiting;
	c.out->p.workloads = c.ad ? carve_adm_workload_count(c.ad->adm) : 0;
	carve_admission_destroy(c.ad);
	carve_arena_cleanup(&c.a);
	if (c.nomem) {
		carve_plan_free(&c.out->p);
		return carve_errorf(err, CARVE_ENOMEM, "out of memory");
	}
	*out = &c.out->p;
	return 0;
}

