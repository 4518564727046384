/*
 * labels.c - GPU Feature Discovery's node labels from a snapshot
 * (agent_int.h).  Names and values follow NVIDIA/k8s-device-plugin's
 * labelers (internal/lm: nvml.go for versions, mig.capable and
 * mps.capable; resource.go for gpu.product/count/replicas/memory/family/
 * compute.*; mig-strategy.go for the single and mixed MIG strategies);
 * docs/node.md has the table.  Values are made valid label values
 * (characters outside [A-Za-z0-9._-] dropped, at most 63 bytes).
 *
 * Where the snapshot has no value (NVML did not say) the label is left
 * out, as GFD does for a zero memory or compute capability.  Labels GFD
 * reads from NVML fields carve's snapshot does not carry (gpu.mode, the
 * MIG engine counts) are not written; docs/node.md says so.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "agent_int.h"

#define MIB (1024 * 1024)

/* A label value: spaces become '-', other bytes outside [A-Za-z0-9._-]
 * are dropped, at most 63 bytes kept (out holds 64). */
static void label_value(const char *in, char *out)
{
	size_t n = 0;

	for (; *in && n < 63; in++) {
		char c = *in;

		if (c == ' ')
			c = '-';
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '_' || c == '.')
			out[n++] = c;
	}
	/* a label value ends with an alphanumeric */
	while (n && (out[n - 1] == '-' || out[n - 1] == '_' || out[n - 1] == '.'))
		n--;
	out[n] = 0;
}

/* GFD's family from the compute capability (resource.go getArchFamily,
 * extended with Blackwell for 10.x and 12.x). */
static const char *arch_family(int major, int minor)
{
	switch (major) {
	case 1: return "tesla";
	case 2: return "fermi";
	case 3: return "kepler";
	case 5: return "maxwell";
	case 6: return "pascal";
	case 7: return minor < 5 ? "volta" : "turing";
	case 8: return "ampere";
	case 9: return "hopper";
	case 10:
	case 12: return "blackwell";
	}
	return "undefined";
}

/* "<model>[-<part>...]" with spaces as '-' into out[64]. */
static void product(char *out, const char *model, const char *a, const char *b)
{
	char raw[256];

	snprintf(raw, sizeof(raw), "%s%s%s%s%s", model, a ? "-" : "", a ? a : "", b ? "-" : "",
		 b ? b : "");
	label_value(raw, out);
}

/* The compute slices of a MIG profile name ("3g.40gb" -> 3), 0 unknown. */
static unsigned profile_slices(const char *p)
{
	const char *g = strchr(p, 'g');
	unsigned v = 0;

	if (!g)
		return 0;
	/* "1c.3g.40gb": the GPU-instance part is the digits before 'g' */
	while (g > p && g[-1] >= '0' && g[-1] <= '9')
		g--;
	while (*g >= '0' && *g <= '9')
		v = v * 10 + (unsigned)(*g++ - '0');
	return v;
}

/* nvidia.com/gpu.{product,count,replicas,memory,family,compute.*} of
 * the full GPUs of model g->name (resource.go NewGPUResourceLabeler). */
static int full_gpu_labels(const struct nd_snapshot *s, const struct nd_gpu *g, bool sharing,
			   int replicas, struct nd_kvs *out)
{
	char prod[64];
	unsigned count = 0;
	size_t i;
	int rc = 0;

	for (i = 0; i < s->ngpus; i++)
		if (!strcmp(s->gpus[i].name, g->name))
			count++;
	product(prod, g->name, sharing && replicas > 1 ? "SHARED" : NULL, NULL);
	rc |= nd_kvs_addf(out, "nvidia.com/gpu.product", "%s", prod);
	rc |= nd_kvs_addf(out, "nvidia.com/gpu.count", "%u", count);
	rc |= nd_kvs_addf(out, "nvidia.com/gpu.replicas", "%d",
			  !sharing ? 0 : replicas > 1 ? replicas : 1);
	if (g->mem_total > 0)
		rc |= nd_kvs_addf(out, "nvidia.com/gpu.memory", "%lld",
				  (long long)(g->mem_total / MIB));
	if (g->cc_major > 0) {
		rc |= nd_kvs_addf(out, "nvidia.com/gpu.family", "%s",
				  arch_family(g->cc_major, g->cc_minor));
		rc |= nd_kvs_addf(out, "nvidia.com/gpu.compute.major", "%d", g->cc_major);
		rc |= nd_kvs_addf(out, "nvidia.com/gpu.compute.minor", "%d", g->cc_minor);
	}
	return rc ? CARVE_ENOMEM : 0;
}

/* Sets key to value in out, replacing an earlier value (GFD merges
 * labelers in order, later ones win). */
static int set(struct nd_kvs *out, const char *key, const char *fmt, long long v, const char *sv)
{
	size_t i;
	char buf[128];

	if (sv)
		snprintf(buf, sizeof(buf), "%s", sv);
	else
		snprintf(buf, sizeof(buf), fmt, v);
	for (i = 0; i < out->n; i++)
		if (!strcmp(out->v[i].key, key)) {
			char *d = strdup(buf);

			if (!d)
				return CARVE_ENOMEM;
			free(out->v[i].value);
			out->v[i].value = d;
			return 0;
		}
	return nd_kvs_addf(out, key, "%s", buf);
}

/* The labels of one MIG profile under resource prefix `res`
 * ("nvidia.com/gpu" or "nvidia.com/mig-<profile>"): resource.go
 * NewMIGResourceLabeler plus the device's attributes. */
static int mig_labels(const char *res, const char *model, const struct nd_mig *m, unsigned count,
		      struct nd_kvs *out)
{
	char key[128], prod[64];
	unsigned sl = profile_slices(m->profile);
	int rc = 0;

	product(prod, model, "MIG", m->profile);
#define K(suffix) (snprintf(key, sizeof(key), "%s.%s", res, suffix), key)
	rc |= set(out, K("product"), NULL, 0, prod);
	rc |= set(out, K("count"), "%lld", count, NULL);
	rc |= set(out, K("replicas"), "%lld", 1, NULL);
	if (m->mem_total > 0)
		rc |= set(out, K("memory"), "%lld", m->mem_total / MIB, NULL);
	if (m->sm_count)
		rc |= set(out, K("multiprocessors"), "%lld", m->sm_count, NULL);
	if (sl) {
		rc |= set(out, K("slices.gi"), "%lld", sl, NULL);
		rc |= set(out, K("slices.ci"), "%lld", sl, NULL);
	}
#undef K
	return rc ? CARVE_ENOMEM : 0;
}

/* mig-strategy.go newMigStrategySingleLabeler: one MIG profile across
 * every GPU, else the MIG-INVALID labels. */
static int single_labels(const struct nd_snapshot *s, struct nd_kvs *out)
{
	const struct nd_gpu *first = NULL;
	const struct nd_mig *m0 = NULL;
	const char *why = NULL;
	unsigned count = 0;
	size_t i, j;
	char prod[64];

	for (i = 0; i < s->ngpus; i++) {
		const struct nd_gpu *g = &s->gpus[i];

		if (g->mig_current != 1)
			continue;
		if (!first)
			first = g;
		if (!g->nmig)
			why = "empty";
		for (j = 0; j < g->nmig; j++) {
			if (!m0)
				m0 = &g->mig[j];
			else if (strcmp(m0->profile, g->mig[j].profile))
				why = "profiles";
			count++;
		}
	}
	if (!first)
		return 0;
	for (i = 0; i < s->ngpus; i++)
		if (s->gpus[i].mig_current != 1)
			why = "mixed";
	if (why || !m0) {
		int rc = 0;

		product(prod, first->name, "MIG", "INVALID");
		rc |= set(out, "nvidia.com/gpu.product", NULL, 0, prod);
		rc |= set(out, "nvidia.com/gpu.count", "%lld", 0, NULL);
		rc |= set(out, "nvidia.com/gpu.replicas", "%lld", 0, NULL);
		rc |= set(out, "nvidia.com/gpu.memory", "%lld", 0, NULL);
		return rc ? CARVE_ENOMEM : 0;
	}
	return mig_labels("nvidia.com/gpu", first->name, m0, count, out);
}

/* mig-strategy.go newMigStrategyMixedLabeler: one set per profile. */
static int mixed_labels(const struct nd_snapshot *s, struct nd_kvs *out)
{
	size_t i, j, k, l;
	int rc;

	for (i = 0; i < s->ngpus; i++)
		for (j = 0; j < s->gpus[i].nmig; j++) {
			const struct nd_mig *m = &s->gpus[i].mig[j];
			unsigned count = 0;
			bool seen = false;
			char res[96];

			/* the first device of each profile names it */
			for (k = 0; k <= i && !seen; k++)
				for (l = 0; l < s->gpus[k].nmig; l++) {
					if (k == i && l == j)
						break;
					if (!strcmp(s->gpus[k].mig[l].profile, m->profile)) {
						seen = true;
						break;
					}
				}
			if (seen)
				continue;
			for (k = 0; k < s->ngpus; k++)
				for (l = 0; l < s->gpus[k].nmig; l++)
					count += !strcmp(s->gpus[k].mig[l].profile, m->profile);
			snprintf(res, sizeof(res), "nvidia.com/mig-%s", m->profile);
			rc = mig_labels(res, s->gpus[i].name, m, count, out);
			if (rc)
				return rc;
		}
	return 0;
}

/* nvml.go newVersionLabeler. */
static int version_labels(const struct nd_snapshot *s, struct nd_kvs *out,
			  struct carve_error *err)
{
	char maj[16], min[16], rev[16] = "";
	int rc = 0, n = 0;
	const char *v = s->driver_version;

	if (!v)
		return 0;
	if (sscanf(v, "%15[0-9].%15[0-9]%n", maj, min, &n) != 2)
		goto bad;
	if (v[n] == '.') {
		int m = 0;

		if (sscanf(v + n + 1, "%15[0-9a-zA-Z]%n", rev, &m) != 1)
			goto bad;
		n += 1 + m;
	}
	if (v[n])
		goto bad;
	rc |= nd_kvs_addf(out, "nvidia.com/cuda.driver.major", "%s", maj);
	rc |= nd_kvs_addf(out, "nvidia.com/cuda.driver.minor", "%s", min);
	rc |= nd_kvs_addf(out, "nvidia.com/cuda.driver.rev", "%s", rev);
	rc |= nd_kvs_addf(out, "nvidia.com/cuda.driver-version.major", "%s", maj);
	rc |= nd_kvs_addf(out, "nvidia.com/cuda.driver-version.minor", "%s", min);
	rc |= nd_kvs_addf(out, "nvidia.com/cuda.driver-version.revision", "%s", rev);
	rc |= nd_kvs_addf(out, "nvidia.com/cuda.driver-version.full", "%s", v);
	if (s->cuda_major >= 0 && s->cuda_minor >= 0) {
		rc |= nd_kvs_addf(out, "nvidia.com/cuda.runtime.major", "%d", s->cuda_major);
		rc |= nd_kvs_addf(out, "nvidia.com/cuda.runtime.minor", "%d", s->cuda_minor);
		rc |= nd_kvs_addf(out, "nvidia.com/cuda.runtime-version.major", "%d", s->cuda_major);
		rc |= nd_kvs_addf(out, "nvidia.com/cuda.runtime-version.minor", "%d", s->cuda_minor);
		rc |= nd_kvs_addf(out, "nvidia.com/cuda.runtime-version.full", "%d.%d", s->cuda_major,
				  s->cuda_minor);
	}
	return rc ? CARVE_ENOMEM : 0;
bad:
	return carve_errorf(err, CARVE_EINVAL,
			    "driver version '%s' does not match the format X.Y[.Z]", v);
}

int nd_labels(const struct nd_snapshot *s, const struct nd_label_opts *o, struct nd_kvs *out,
	      struct carve_error *err)
{
	const char *strategy = o->mig_strategy ? o->mig_strategy : "none";
	const struct nd_gpu *full = NULL, *migon = NULL;
	bool capable = false;
	char mach[64];
	size_t i;
	int rc;

	if (strcmp(strategy, "none") && strcmp(strategy, "single") && strcmp(strategy, "mixed"))
		return carve_errorf(err, CARVE_EINVAL,
				    "MIG strategy '%s': expected none, single or mixed", strategy);
	if (!s->ngpus)
		return 0;
	if (o->machine) {
		label_value(o->machine, mach);
		if ((rc = nd_kvs_addf(out, "nvidia.com/gpu.machine", "%s", mach)))
			return rc;
	}
	if ((rc = version_labels(s, out, err)))
		return rc;
	for (i = 0; i < s->ngpus; i++) {
		const struct nd_gpu *g = &s->gpus[i];

		capable |= g->mig_current >= 0;
		if (g->mig_current == 1) {
			if (!migon)
				migon = g;
		} else if (!full) {
			full = g;
		}
	}
	rc = nd_kvs_addf(out, "nvidia.com/mig.capable", "%s", capable ? "true" : "false");
	rc |= nd_kvs_addf(out, "nvidia.com/mps.capable", "false");
	rc |= nd_kvs_addf(out, "nvidia.com/gpu.sharing-strategy", "%s",
			  o->replicas > 1 ? "time-slicing" : "none");
	if (o->timestamp)
		rc |= nd_kvs_addf(out, "nvidia.com/gfd.timestamp", "%lld", (long long)o->timestamp);
	if (rc)
		return CARVE_ENOMEM;
	/* full GPUs win over MIG-enabled ones of the same model */
	rc = full ? full_gpu_labels(s, full, true, o->replicas, out)
		  : full_gpu_labels(s, migon, false, 0, out);
	if (rc)
		return rc;
	if (strcmp(strategy, "none")) {
		if ((rc = nd_kvs_addf(out, "nvidia.com/mig.strategy", "%s", strategy)))
			return rc;
		rc = !strcmp(strategy, "single") ? single_labels(s, out) : mixed_labels(s, out);
		if (rc)
			return rc;
	}
	nd_kvs_sort(out);
	return 0;
}

char *nd_labels_features(const struct nd_kvs *l)
{
	size_t i, len = 1;
	char *s, *p;

	for (i = 0; i < l->n; i++)
		len += strlen(l->v[i].key) + strlen(l->v[i].value) + 2;
	if (!(s = malloc(len)))
		return NULL;
	p = s;
	*p = 0;
	for (i = 0; i < l->n; i++)
		p += sprintf(p, "%s=%s\n", l->v[i].key, l->v[i].value);
	return s;
}

char *nd_labels_patch(const struct nd_kvs *l, const struct nd_kvs *old)
{
	json_t *labels = json_object(), *root = NULL;
	char *s = NULL;
	size_t i;
	int bad = !labels;

	for (i = 0; !bad && i < l->n; i++)
		bad |= json_object_set_new(labels, l->v[i].key, json_string(l->v[i].value));
	for (i = 0; !bad && old && i < old->n; i++)
		if (!nd_kvs_get(l, old->v[i].key))
			bad |= json_object_set_new(labels, old->v[i].key, json_null());
	if (!bad)
		root = json_pack("{s:{s:O}}", "metadata", "labels", labels);
	if (root)
		s = json_dumps(root, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(root);
	json_decref(labels);
	return s;
}
