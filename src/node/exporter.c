/*
 * exporter.c - dcgm-exporter's metrics from a snapshot (agent_int.h), in
 * the Prometheus text exposition format 0.0.4, so dashboards written for
 * dcgm-exporter (Grafana 12239) read carve's node agent unchanged.
 *
 * Names, types and HELP texts are those of dcgm-exporter's default
 * counters (NVIDIA/dcgm-exporter etc/default-counters.csv); the labels
 * those it puts on every series: gpu, UUID, pci_bus_id, device
 * ("nvidia<minor>"), modelName, Hostname, DCGM_FI_DRIVER_VERSION; on a MIG
 * device's series also GPU_I_PROFILE and GPU_I_ID; and, on the series of a
 * device a pod holds, pod, namespace and container (its Kubernetes
 * mapping).  Whole-GPU fields are per GPU; frame-buffer use is also per
 * MIG device.  A value NVML did not give (-1 in the snapshot) leaves its
 * series out.  Then carve_* families for what only carve knows: each
 * device's pod with its queue and team, and memory cap and use per
 * tenant of a shared GPU.
 *
 * One pass, one growing buffer; nothing is kept between calls.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_int.h"

#define MIB (1024 * 1024)

struct buf {
	char *p;
	size_t n, cap;
	bool oom;
};

static void grow(struct buf *b, size_t need)
{
	size_t cap;
	char *p;

	if (b->oom || b->n + need + 1 <= b->cap)
		return;
	cap = b->cap ? b->cap : 8192;
	while (cap < b->n + need + 1)
		cap *= 2;
	if (!(p = carve_realloc(b->p, cap))) {
		b->oom = true;
		return;
	}
	b->p = p;
	b->cap = cap;
}

static void put(struct buf *b, const char *s, size_t len)
{
	grow(b, len);
	if (b->oom)
		return;
	memcpy(b->p + b->n, s, len);
	b->n += len;
	b->p[b->n] = 0;
}

static void puts_(struct buf *b, const char *s)
{
	put(b, s, strlen(s));
}

__attribute__((format(printf, 2, 3)))
static void putf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (len < 0)
		return;
	grow(b, (size_t)len);
	if (b->oom)
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->n, (size_t)len + 1, fmt, ap);
	va_end(ap);
	b->n += (size_t)len;
}

/* name="value" with the value escaped as the text format asks (\\, \",
 * \n), preceded by a comma unless first. */
static void label(struct buf *b, bool first, const char *name, const char *v)
{
	if (!first)
		put(b, ",", 1);
	puts_(b, name);
	put(b, "=\"", 2);
	for (v = v ? v : ""; *v; v++) {
		if (*v == '\\')
			put(b, "\\\\", 2);
		else if (*v == '"')
			put(b, "\\\"", 2);
		else if (*v == '\n')
			put(b, "\\n", 2);
		else
			put(b, v, 1);
	}
	put(b, "\"", 1);
}

/* The owner of GPU gpu (gi_id -1) or of its MIG device gi_id, or NULL. */
static const struct nd_owner *owner_of(const struct nd_export_opts *o, unsigned gpu, int gi_id)
{
	size_t i;

	for (i = 0; i < o->nowners; i++)
		if (o->owners[i].gpu == gpu && o->owners[i].gi_id == gi_id)
			return &o->owners[i];
	return NULL;
}

/* The labels of one series, in dcgm-exporter's order, without braces. */
static void dcgm_labels(struct buf *b, const struct nd_snapshot *s, const struct nd_export_opts *o,
			const struct nd_gpu *g, const struct nd_mig *m)
{
	const struct nd_owner *ow = owner_of(o, g->index, m ? (int)m->gi_id : -1);
	char num[24];

	snprintf(num, sizeof(num), "%u", g->index);
	label(b, true, "gpu", num);
	label(b, false, "UUID", g->uuid);
	label(b, false, "pci_bus_id", g->pci_bus_id);
	snprintf(num, sizeof(num), "nvidia%u", g->minor);
	label(b, false, "device", num);
	label(b, false, "modelName", g->name);
	if (m) {
		label(b, false, "GPU_I_PROFILE", m->profile);
		snprintf(num, sizeof(num), "%u", m->gi_id);
		label(b, false, "GPU_I_ID", num);
	}
	label(b, false, "Hostname", o->hostname);
	label(b, false, "DCGM_FI_DRIVER_VERSION", s->driver_version);
	if (ow) {
		label(b, false, "container", ow->container);
		label(b, false, "namespace", ow->ns);
		label(b, false, "pod", ow->pod);
	}
}

enum field {
	F_SM_CLOCK, F_MEM_CLOCK, F_MEMORY_TEMP, F_GPU_TEMP, F_POWER, F_ENERGY,
	F_GPU_UTIL, F_MEM_COPY_UTIL, F_XID, F_FB_FREE, F_FB_USED, F_N
};

static const struct {
	const char *name, *type, *help;
} fields[F_N] = {
	{"DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz)."},
	{"DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz)."},
	{"DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C)."},
	{"DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C)."},
	{"DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."},
	{"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter",
	 "Total energy consumption since boot (in mJ)."},
	{"DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."},
	{"DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %)."},
	{"DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered."},
	{"DCGM_FI_DEV_FB_FREE", "gauge", "Frame buffer memory free (in MB)."},
	{"DCGM_FI_DEV_FB_USED", "gauge", "Frame buffer memory used (in MB)."},
};

/* The GPU-level value of field f, false when NVML did not give it. */
static bool gpu_value(const struct nd_gpu *g, enum field f, double *v)
{
	long long x;

	switch (f) {
	case F_SM_CLOCK: x = g->sm_clock; break;
	case F_MEM_CLOCK: x = g->mem_clock; break;
	case F_MEMORY_TEMP: x = g->mem_temp_c; break;
	case F_GPU_TEMP: x = g->temp_c; break;
	case F_POWER:
		if (g->power_mw < 0)
			return false;
		*v = (double)g->power_mw / 1000.0;
		return true;
	case F_ENERGY: x = g->energy_mj; break;
	case F_GPU_UTIL: x = g->util_gpu; break;
	case F_MEM_COPY_UTIL: x = g->util_mem; break;
	case F_XID: x = g->last_xid; break;
	case F_FB_FREE: x = g->mem_free < 0 ? -1 : g->mem_free / MIB; break;
	case F_FB_USED: x = g->mem_used < 0 ? -1 : g->mem_used / MIB; break;
	default: return false;
	}
	if (x < 0)
		return false;
	*v = (double)x;
	return true;
}

/* Ends a series' labels and writes its value. */
static void sample(struct buf *b, double v)
{
	putf(b, "} %.15g\n", v);
}

static void dcgm_family(struct buf *b, const struct nd_snapshot *s,
			const struct nd_export_opts *o, enum field f)
{
	size_t i, j;
	double v;

	putf(b, "# HELP %s %s\n# TYPE %s %s\n", fields[f].name, fields[f].help, fields[f].name,
	     fields[f].type);
	for (i = 0; i < s->ngpus; i++) {
		const struct nd_gpu *g = &s->gpus[i];

		if (gpu_value(g, f, &v)) {
			puts_(b, fields[f].name);
			put(b, "{", 1);
			dcgm_labels(b, s, o, g, NULL);
			sample(b, v);
		}
		if (f != F_FB_FREE && f != F_FB_USED)
			continue;
		for (j = 0; j < g->nmig; j++) {
			const struct nd_mig *m = &g->mig[j];

			if (m->mem_total < 0 || m->mem_used < 0)
				continue;
			v = (double)((f == F_FB_USED ? m->mem_used : m->mem_total - m->mem_used) / MIB);
			puts_(b, fields[f].name);
			put(b, "{", 1);
			dcgm_labels(b, s, o, g, m);
			sample(b, v);
		}
	}
}

/* The UUID of owner ow's device (the MIG device's when it has one). */
static const char *owner_uuid(const struct nd_snapshot *s, const struct nd_owner *ow)
{
	size_t i, j;

	for (i = 0; i < s->ngpus; i++) {
		const struct nd_gpu *g = &s->gpus[i];

		if (g->index != ow->gpu)
			continue;
		if (ow->gi_id < 0)
			return g->uuid;
		for (j = 0; j < g->nmig; j++)
			if ((int)g->mig[j].gi_id == ow->gi_id)
				return g->mig[j].uuid;
	}
	return NULL;
}

static void carve_owner_labels(struct buf *b, const struct nd_snapshot *s,
			       const struct nd_owner *ow)
{
	char num[24];

	snprintf(num, sizeof(num), "%u", ow->gpu);
	label(b, true, "gpu", num);
	label(b, false, "UUID", owner_uuid(s, ow));
	if (ow->gi_id >= 0) {
		snprintf(num, sizeof(num), "%d", ow->gi_id);
		label(b, false, "GPU_I_ID", num);
	}
	label(b, false, "namespace", ow->ns);
	label(b, false, "pod", ow->pod);
	label(b, false, "queue", ow->queue);
	label(b, false, "team", ow->team);
}

/* The memory the processes of ow use on its GPU, -1 when none is known. */
static int64_t owner_mem_used(const struct nd_snapshot *s, const struct nd_owner *ow)
{
	int64_t sum = -1;
	size_t i, j, k;

	for (i = 0; i < s->ngpus; i++) {
		const struct nd_gpu *g = &s->gpus[i];

		if (g->index != ow->gpu)
			continue;
		for (j = 0; j < g->nproc; j++)
			for (k = 0; k < ow->npids; k++)
				if (g->proc[j].pid == ow->pids[k] && g->proc[j].mem_used >= 0)
					sum = (sum < 0 ? 0 : sum) + g->proc[j].mem_used;
	}
	return sum;
}

static void carve_families(struct buf *b, const struct nd_snapshot *s,
			   const struct nd_export_opts *o)
{
	size_t i;

	puts_(b, "# HELP carve_device_pod The pod carve bound to a device, with its queue and "
		 "team (1 per device held).\n# TYPE carve_device_pod gauge\n");
	for (i = 0; i < o->nowners; i++) {
		puts_(b, "carve_device_pod{");
		carve_owner_labels(b, s, &o->owners[i]);
		sample(b, 1);
	}
	puts_(b, "# HELP carve_tenant_memory_limit_bytes The GPU memory a pod sharing a GPU may "
		 "use (its fraction's cap).\n# TYPE carve_tenant_memory_limit_bytes gauge\n");
	for (i = 0; i < o->nowners; i++) {
		if (o->owners[i].mem_mib <= 0)
			continue;
		puts_(b, "carve_tenant_memory_limit_bytes{");
		carve_owner_labels(b, s, &o->owners[i]);
		sample(b, (double)o->owners[i].mem_mib * MIB);
	}
	puts_(b, "# HELP carve_tenant_memory_used_bytes The GPU memory the processes of a pod "
		 "sharing a GPU use.\n# TYPE carve_tenant_memory_used_bytes gauge\n");
	for (i = 0; i < o->nowners; i++) {
		int64_t used;

		if (o->owners[i].mem_mib <= 0 || (used = owner_mem_used(s, &o->owners[i])) < 0)
			continue;
		puts_(b, "carve_tenant_memory_used_bytes{");
		carve_owner_labels(b, s, &o->owners[i]);
		sample(b, (double)used);
	}
}

char *nd_export(const struct nd_snapshot *s, const struct nd_export_opts *o, size_t *len)
{
	struct buf b = {0};
	int f;

	grow(&b, 16384);
	for (f = 0; f < F_N; f++)
		dcgm_family(&b, s, o, (enum field)f);
	carve_families(&b, s, o);
	if (b.oom || !b.p) {
		carve_free(b.p);
		return NULL;
	}
	if (len)
		*len = b.n;
	return b.p;
}
