/*
 * place_state.c - the placer's free state: views of it (free milli per GPU
 * and per node, now or after a candidate; capacities; the public
 * carve_placer_free_* views) and account(), the one function that changes
 * it: carve__apply() takes what a candidate planned, release gives a
 * placement back, retake takes released placements again.
 *
 * Invariants (place_int.h lists them; place_check.c verifies them): release
 * is the exact inverse of apply on integers and bits, so a failed gang,
 * released in reverse, leaves the state bit-identical; every change goes
 * through account(), which tells the decision cache and the fgd per-node
 * parts that the node changed, and reverts a Dynamic MIG repartition when
 * a release leaves its GPU idle.  Allocates nothing.
 */
#include <string.h>

#include "place_int.h"

/* ---- GPU and node views --------------------------------------------------------- */

int carve__gpu_cap_milli(const struct carve_placer *p, uint32_t g)
{
	return carve__share(p, g) == CARVE_SHARE_MIG && !p->ginfo[g].mig_slices ? 0 : 1000;
}

/* Free milli of MIG GPU g in state s were its layout l covering slices. */
static int mig_free_milli(const struct carve_placer *p, uint32_t g,
			  const struct carve__gpu_state *s, const struct carve_mig_layout *l,
			  unsigned slices)
{
	const struct carve_mig_model *m = carve__gpu(p, g)->mig_model;
	unsigned i, fs = 0;

	if (!slices)
		return 0;
	for (i = 0; i < l->n; i++)
		if (!(s->mig_taken & (1u << i)))
			fs += m->profiles[l->inst[i].profile].mem_slices;
	return (int)(1000u * fs / slices);
}

int carve__gpu_free_milli_in(const struct carve_placer *p, uint32_t g,
			     const struct carve__gpu_state *s)
{
	const struct carve__gpu_info *gi = &p->ginfo[g];

	switch (carve__share(p, g)) {
	case CARVE_SHARE_EXCLUSIVE:
		return s->taken ? 0 : 1000;
	case CARVE_SHARE_FRACTION:
		return 1000 - s->milli_used;
	case CARVE_SHARE_TIMESLICE:
		return gi->rcap ? (int)(1000L * (gi->rcap - s->rtaken) / gi->rcap) : 0;
	case CARVE_SHARE_MIG:
		return mig_free_milli(p, g, s, &p->mig[g], gi->mig_slices);
	}
	return 0;
}

/* s with the devices of c that sit on g applied. */
static void gpu_apply_devs(const struct carve_placer *p, uint32_t g, struct carve__gpu_state *s,
			   const struct carve__cand *c)
{
	int i;

	for (i = 0; i < c->ndevs; i++) {
		const struct carve_dev *d = &c->devs[i];

		if (d->gpu != g)
			continue;
		switch (carve__share(p, g)) {
		case CARVE_SHARE_EXCLUSIVE:
			s->taken = true;
			break;
		case CARVE_SHARE_MIG:
			s->mig_taken |= (uint8_t)(1u << d->mig);
			break;
		case CARVE_SHARE_TIMESLICE:
			s->rtaken++;
			break;
		case CARVE_SHARE_FRACTION:
			s->milli_used = (uint16_t)(s->milli_used + d->milli);
			if (i == 0)
				s->mem_used += c->mem_mib;
			break;
		}
	}
}

int carve__gpu_free_milli_after(const struct carve_placer *p, uint32_t g,
				const struct carve__cand *c)
{
	struct carve__gpu_state s = p->gpus[g];
	int k;

	gpu_apply_devs(p, g, &s, c);
	for (k = 0; k < c->nrepart; k++)
		if (c->repart[k] == g) {
			const struct carve_mig_model *m = carve__gpu(p, g)->mig_model;

			return mig_free_milli(p, g, &s, &c->rlayout[k],
					      carve__layout_slices(m, &c->rlayout[k]));
		}
	return carve__gpu_free_milli_in(p, g, &s);
}

int64_t carve__node_gpu_free(const struct carve_placer *p, uint32_t node)
{
	const struct carve_node *n = carve__node(p, node);
	int64_t sum = 0;
	uint32_t g;

	for (g = n->gpu_first; g < n->gpu_first + n->ngpus; g++)
		sum += carve__gpu_free_milli_in(p, g, &p->gpus[g]);
	return sum;
}

int64_t carve__node_gpu_free_after(const struct carve_placer *p, const struct carve__cand *c)
{
	const struct carve_node *n = carve__node(p, c->node);
	int64_t sum = 0;
	uint32_t g;

	for (g = n->gpu_first; g < n->gpu_first + n->ngpus; g++)
		sum += carve__cand_has_gpu(c, g) ? carve__gpu_free_milli_after(p, g, c)
					  : carve__gpu_free_milli_in(p, g, &p->gpus[g]);
	return sum;
}

int64_t carve__node_gpu_cap(const struct carve_placer *p, uint32_t node)
{
	const struct carve_node *n = carve__node(p, node);
	int64_t sum = 0;
	uint32_t g;

	for (g = n->gpu_first; g < n->gpu_first + n->ngpus; g++)
		sum += carve__gpu_cap_milli(p, g);
	return sum;
}

int carve__node_fully_free_gpus(const struct carve_placer *p, uint32_t node)
{
	const struct carve_node *n = carve__node(p, node);
	uint32_t g;
	int k = 0;

	for (g = n->gpu_first; g < n->gpu_first + n->ngpus; g++)
		k += carve__gpu_free_milli_in(p, g, &p->gpus[g]) == 1000;
	return k;
}

int64_t carve__node_cpu_cap(const struct carve_placer *p, uint32_t node)
{
	const struct carve_node *n = carve__node(p, node);

	return n->cpu_milli > 0 ? n->cpu_milli : 0;
}

/* ---- apply / release / retake --------------------------------------------------- */

/* Class of a placement, from its devices: whole GPUs (exclusive, or a
 * fractional GPU taken at 1000 milli) give their count, anything else 0. */
static int place_class(const struct carve_placer *p, const struct carve_pod_place *pl)
{
	int i;

	for (i = 0; i < pl->ndevs; i++) {
		enum carve_sharing sh = carve__share(p, pl->devs[i].gpu);

		if (sh == CARVE_SHARE_EXCLUSIVE)
			continue;
		if (sh == CARVE_SHARE_FRACTION && pl->devs[i].milli == 1000)
			continue;
		return 0;
	}
	return pl->ndevs;
}

static void set_rbit(struct carve_placer *p, uint32_t g, unsigned r, bool on)
{
	uint64_t *w = &p->rbits[p->ginfo[g].rbits + r / 64];

	if (on)
		*w |= 1ULL << (r % 64);
	else
		*w &= ~(1ULL << (r % 64));
}

/* Takes (sign 1) or gives back (sign -1) what pl holds. */
static void account(struct carve_placer *p, const struct carve_pod_place *pl, int sign)
{
	struct carve__node_state *ns = &p->nodes[pl->node];
	int i, cls;

	carve__cache_touch(p, pl->node);
	if (p->mix.pok)
		p->mix.pok[pl->node] = false;
	ns->cpu_used += sign * pl->cpu_milli;
	ns->mem_used += sign * pl->memory_milli;
	ns->pods_used += sign;
	for (i = 0; i < pl->ndevs; i++) {
		const struct carve_dev *d = &pl->devs[i];
		struct carve__gpu_state *s = &p->gpus[d->gpu];
		bool was = carve__gpu_busy(s);

		switch (carve__share(p, d->gpu)) {
		case CARVE_SHARE_EXCLUSIVE:
			s->taken = sign > 0;
			break;
		case CARVE_SHARE_MIG:
			if (sign > 0)
				s->mig_taken |= (uint8_t)(1u << d->mig);
			else
				s->mig_taken &= (uint8_t)~(1u << d->mig);
			break;
		case CARVE_SHARE_TIMESLICE:
			set_rbit(p, d->gpu, (unsigned)d->replica, sign > 0);
			s->rtaken = (uint16_t)(s->rtaken + sign);
			break;
		case CARVE_SHARE_FRACTION:
			s->milli_used = (uint16_t)(s->milli_used + sign * d->milli);
			if (i == 0)
				s->mem_used = (uint32_t)((int64_t)s->mem_used + sign * (int64_t)pl->mem_mib);
			break;
		}
		if (was != carve__gpu_busy(s))
			ns->gpus_busy = (uint32_t)(ns->gpus_busy + (was ? -1 : 1));
	}
	if (pl->ndevs > 0) {
		cls = place_class(p, pl);
		ns->gpu_pods = (uint32_t)(ns->gpu_pods + sign);
		ns->klass[cls] = (uint32_t)(ns->klass[cls] + sign);
	}
	for (i = 0; sign < 0 && i < pl->ndevs; i++) {
		uint32_t g = pl->devs[i].gpu;

		if (p->rpart[g] >= 0 && !carve__gpu_busy(&p->gpus[g]))
			carve__mig_unrepartition(p, g);
	}
}

void carve__apply(struct carve_placer *p, const struct carve_pod_req *req,
		  const struct carve__cand *c, struct carve_pod_place *out)
{
	int k;

	for (k = 0; k < c->nrepart; k++)
		carve__mig_repartition(p, c->repart[k], &c->rlayout[k]);
	memset(out, 0, sizeof(*out));
	out->node = c->node;
	out->ndevs = c->ndevs;
	memcpy(out->devs, c->devs, (size_t)c->ndevs * sizeof(c->devs[0]));
	out->mem_mib = c->mem_mib;
	out->cpu_milli = req->cpu_milli;
	out->memory_milli = req->memory_milli;
	account(p, out, 1);
}

static bool place_sane(const struct carve_placer *p, const struct carve_pod_place *pl)
{
	int i;

	if (pl->node >= p->nnodes || pl->ndevs < 0 || pl->ndevs > CARVE_POD_MAX_GPUS)
		return false;
	for (i = 0; i < pl->ndevs; i++)
		if (pl->devs[i].gpu >= p->ngpus)
			return false;
	return true;
}

void carve_placer_release(struct carve_placer *p, const struct carve_pod_place *pl, size_t n)
{
	size_t i;

	if (!p || !pl)
		return;
	for (i = n; i-- > 0;)
		if (place_sane(p, &pl[i]))
			account(p, &pl[i], -1);
}

/* True when what d names on GPU g is free now. */
static bool dev_free(const struct carve_placer *p, const struct carve_dev *d, uint32_t mem_mib)
{
	const struct carve_gpu *v = carve__gpu(p, d->gpu);
	const struct carve__gpu_state *s = &p->gpus[d->gpu];

	switch (v->sharing) {
	case CARVE_SHARE_EXCLUSIVE:
		return !s->taken;
	case CARVE_SHARE_MIG:
		return d->mig >= 0 && d->mig < p->mig[d->gpu].n && !(s->mig_taken & (1u << d->mig));
	case CARVE_SHARE_TIMESLICE:
		return d->replica >= 0 && (unsigned)d->replica < p->ginfo[d->gpu].rcap &&
		       !carve__rbit(p, d->gpu, (unsigned)d->replica);
	case CARVE_SHARE_FRACTION:
		return d->milli >= 0 && s->milli_used + d->milli <= 1000 &&
		       (!v->memory_mib || (uint64_t)s->mem_used + mem_mib <= v->memory_mib);
	}
	return false;
}

int carve_placer_retake(struct carve_placer *p, const struct carve_pod_place *pl, size_t n)
{
	size_t i;
	int k;

	if (!p || (n && !pl))
		return CARVE_EINVAL;
	for (i = 0; i < n; i++) {
		bool ok = place_sane(p, &pl[i]);

		for (k = 0; ok && k < pl[i].ndevs; k++)
			ok = dev_free(p, &pl[i].devs[k], k == 0 ? pl[i].mem_mib : 0);
		if (!ok) {
			carve_placer_release(p, pl, i);
			return CARVE_EINVAL;
		}
		account(p, &pl[i], 1);
	}
	return 0;
}

/* ---- public views --------------------------------------------------------------- */

int64_t carve_placer_free_cpu(const struct carve_placer *p, uint32_t node)
{
	int64_t cap;

	if (!p || node >= p->nnodes)
		return 0;
	cap = carve__node_cpu_cap(p, node);
	return cap ? cap - p->nodes[node].cpu_used : INT64_MAX;
}

int carve_placer_gpu_free_milli(const struct carve_placer *p, uint32_t gpu)
{
	if (!p || gpu >= p->ngpus)
		return 0;
	return carve__gpu_free_milli_in(p, gpu, &p->gpus[gpu]);
}

int64_t carve_placer_node_gpu_free_milli(const struct carve_placer *p, uint32_t node)
{
	if (!p || node >= p->nnodes)
		return 0;
	return carve__node_gpu_free(p, node);
}

int carve_placer_gpu_free_units(const struct carve_placer *p, uint32_t gpu)
{
	const struct carve__gpu_state *s;
	const struct carve_gpu *v;

	if (!p || gpu >= p->ngpus)
		return 0;
	s = &p->gpus[gpu];
	v = carve__gpu(p, gpu);
	switch (v->sharing) {
	case CARVE_SHARE_EXCLUSIVE:
		return !s->taken;
	case CARVE_SHARE_MIG:
		return p->mig[gpu].n - carve__popcount64(s->mig_taken);
	case CARVE_SHARE_TIMESLICE:
		return p->ginfo[gpu].rcap - s->rtaken;
	case CARVE_SHARE_FRACTION:
		return !carve__gpu_busy(s);
	}
	return 0;
}
