/*
 * snapjson.c - a node snapshot as JSON (jansson), the form `carve node
 * discover`-like tools and scripts/gpu-check.sh read.  Unknown values
 * (-1, UINT_MAX, "") are written as null, never as a made-up number.
 * Field names and units: docs/internals/NVML.md.
 */
#include <limits.h>
#include <stdlib.h>

#include <jansson.h>

#include "node_int.h"

static json_t *int_or_null(int64_t v)
{
	return v < 0 ? json_null() : json_integer(v);
}

static json_t *uint_or_null(unsigned v)
{
	return v == UINT_MAX ? json_null() : json_integer(v);
}

static json_t *str_or_null(const char *s)
{
	return s && *s ? json_string(s) : json_null();
}

static json_t *mig_json(const struct nd_mig *m)
{
	return json_pack("{s:o, s:o, s:I, s:I, s:o, s:o, s:o, s:I, s:o, s:o}",
			 "uuid", str_or_null(m->uuid), "profile", str_or_null(m->profile),
			 "gi_id", (json_int_t)m->gi_id, "ci_id", (json_int_t)m->ci_id,
			 "gi_profile_id", uint_or_null(m->gi_profile_id),
			 "start", uint_or_null(m->start), "size", uint_or_null(m->size),
			 "sm_count", (json_int_t)m->sm_count,
			 "memory_total", int_or_null(m->mem_total),
			 "memory_used", int_or_null(m->mem_used));
}

static json_t *proc_json(const struct nd_proc *p)
{
	return json_pack("{s:I, s:o, s:o, s:o}", "pid", (json_int_t)p->pid,
			 "memory_used", int_or_null(p->mem_used), "gi_id", int_or_null(p->gi_id),
			 "ci_id", int_or_null(p->ci_id));
}

static json_t *gpu_json(const struct nd_gpu *g)
{
	json_t *o, *migs = json_array(), *procs = json_array();
	size_t i;

	for (i = 0; migs && i < g->nmig; i++)
		json_array_append_new(migs, mig_json(&g->mig[i]));
	for (i = 0; procs && i < g->nproc; i++)
		json_array_append_new(procs, proc_json(&g->proc[i]));
	o = json_pack("{s:I, s:o, s:o, s:o, s:o, s:I, s:I, s:I, s:o, s:o, s:o, s:o}",
		      "index", (json_int_t)g->index,
		      "minor", g->minor == UINT_MAX ? json_null() : json_integer(g->minor),
		      "uuid", str_or_null(g->uuid), "name", str_or_null(g->name),
		      "pci_bus_id", str_or_null(g->pci_bus_id),
		      "memory_total", (json_int_t)g->mem_total,
		      "memory_used", (json_int_t)g->mem_used,
		      "memory_free", (json_int_t)g->mem_free,
		      "cc_major", int_or_null(g->cc_major), "cc_minor", int_or_null(g->cc_minor),
		      "architecture", g->arch ? json_integer(g->arch) : json_null(),
		      "numa_node", int_or_null(g->numa_node));
	if (!o) {
		json_decref(migs);
		json_decref(procs);
		return NULL;
	}
	json_object_set_new(o, "mig_current", int_or_null(g->mig_current));
	json_object_set_new(o, "mig_pending", int_or_null(g->mig_pending));
	json_object_set_new(o, "util_gpu", int_or_null(g->util_gpu));
	json_object_set_new(o, "util_memory", int_or_null(g->util_mem));
	json_object_set_new(o, "power_mw", int_or_null(g->power_mw));
	json_object_set_new(o, "energy_mj", int_or_null(g->energy_mj));
	json_object_set_new(o, "temperature", int_or_null(g->temp_c));
	json_object_set_new(o, "sm_clock", int_or_null(g->sm_clock));
	json_object_set_new(o, "mem_clock", int_or_null(g->mem_clock));
	json_object_set_new(o, "xid_count", json_integer((json_int_t)g->xid_count));
	json_object_set_new(o, "last_xid", json_integer(g->last_xid));
	json_object_set_new(o, "healthy", json_boolean(g->healthy));
	json_object_set_new(o, "mig", migs);
	json_object_set_new(o, "processes", procs);
	return o;
}

char *nd_snapshot_json(const struct nd_snapshot *s, bool pretty)
{
	json_t *root, *gpus = json_array();
	char *out;
	size_t i;

	for (i = 0; gpus && i < s->ngpus; i++)
		json_array_append_new(gpus, gpu_json(&s->gpus[i]));
	root = json_pack("{s:o, s:o, s:o, s:o}", "driver_version", str_or_null(s->driver_version),
			 "cuda_major", int_or_null(s->cuda_major),
			 "cuda_minor", int_or_null(s->cuda_minor), "gpus", gpus);
	if (!root)
		return NULL;
	out = json_dumps(root, pretty ? JSON_INDENT(2) : JSON_COMPACT);
	json_decref(root);
	return out;
}
