/*
 * jobs_write.c - a job list written back in carve's trace format (CSV or
 * YAML, docs/trace-format.md), so that carve_jobs_load_* reads the same
 * jobs.  Times are written as whole seconds, quantities in their canonical
 * Kubernetes text (carve_qty_format, bytes with binary suffixes), demand
 * with up to 15 significant digits.  Output depends on the list alone, so a
 * generator that builds the same list writes the same bytes.
 */
#include <stdio.h>
#include <string.h>

#include "carve/resource.h"
#include "carve/jobs.h"
#include "carve/quantity.h"

#define MIB_MILLI (1024LL * 1024 * 1000)

/* ---- CSV ---- */

static const char csv_header[] =
	"name,arrival,duration,namespace,queue,priority,count,min_count,cpu,memory,gpu,"
	"gpu_resource,gpu_fraction,gpu_memory,gpu_models,node_selector,demand,checkpoint";

/* Text that a plain (unquoted) CSV field can hold. */
static bool csv_safe(const char *s)
{
	return !s || !strpbrk(s, ",\n\r\"");
}

static const struct carve_req *find_req(const struct carve_job_podset *ps, const char *name)
{
	size_t i;

	for (i = 0; i < ps->nreqs; i++)
		if (!strcmp(ps->reqs[i].name, name))
			return &ps->reqs[i];
	return NULL;
}

/* The podSet's one GPU-ish request (anything but cpu and memory), or NULL;
 * false when there are several. */
static bool gpu_req(const struct carve_job_podset *ps, const struct carve_req **out)
{
	size_t i;

	*out = NULL;
	for (i = 0; i < ps->nreqs; i++) {
		if (carve_res_kind(ps->reqs[i].name, NULL) == CARVE_RK_CPU ||
		    carve_res_kind(ps->reqs[i].name, NULL) == CARVE_RK_MEMORY)
			continue;
		if (*out)
			return false;
		*out = &ps->reqs[i];
	}
	return true;
}

static int csv_check(const struct carve_job *j, struct carve_error *err)
{
	const struct carve_job_podset *ps = &j->podsets[0];
	const struct carve_req *g;
	size_t k;

	if (j->npodsets != 1)
		return carve_errorf(err, CARVE_EINVAL, "job %s: %zu podSets; the CSV trace holds "
				    "one per job (write YAML)", j->name, j->npodsets);
	if (!gpu_req(ps, &g))
		return carve_errorf(err, CARVE_EINVAL, "job %s: more than one resource besides cpu "
				    "and memory; the CSV trace holds one (write YAML)", j->name);
	if (!csv_safe(j->name) || !csv_safe(j->ns) || !csv_safe(j->queue) ||
	    (g && !csv_safe(g->name)))
		return carve_errorf(err, CARVE_EINVAL, "job %s: a comma, quote or newline in a "
				    "name (write YAML)", j->name);
	for (k = 0; k < ps->nmodels; k++)
		if (!csv_safe(ps->models[k]) || strchr(ps->models[k], '|'))
			return carve_errorf(err, CARVE_EINVAL, "job %s: GPU model '%s' cannot be "
					    "written in CSV", j->name, ps->models[k]);
	for (k = 0; k < ps->nselector; k++)
		if (!csv_safe(ps->selector[k].key) || !csv_safe(ps->selector[k].value) ||
		    strpbrk(ps->selector[k].key, ";=") || strchr(ps->selector[k].value, ';'))
			return carve_errorf(err, CARVE_EINVAL, "job %s: nodeSelector %s cannot be "
					    "written in CSV", j->name, ps->selector[k].key);
	return 0;
}

static void put_qty(FILE *out, const struct carve_req *r, bool bytes)
{
	char buf[48];

	if (!r)
		return;
	if (bytes)
		carve_qty_format_bytes(r->milli, buf, sizeof(buf));
	else
		carve_qty_format(r->milli, buf, sizeof(buf));
	fputs(buf, out);
}

static void csv_job(FILE *out, const struct carve_job *j, bool classes)
{
	const struct carve_job_podset *ps = &j->podsets[0];
	const struct carve_req *g;
	char buf[48];
	size_t k;

	gpu_req(ps, &g);
	fprintf(out, "%s,%lld,%lld,%s,%s,%d,%d,%d,", j->name, (long long)j->arrival,
		(long long)j->duration, j->ns ? j->ns : "", j->queue ? j->queue : "",
		(int)j->priority, (int)ps->count, (int)ps->min_count);
	put_qty(out, find_req(ps, CARVE_RES_NAME_CPU), false);
	fputc(',', out);
	put_qty(out, find_req(ps, CARVE_RES_NAME_MEMORY), true);
	fputc(',', out);
	put_qty(out, g, false);
	fprintf(out, ",%s,", g ? g->name : "");
	if (ps->gpu_milli) {
		carve_qty_format(ps->gpu_milli, buf, sizeof(buf));
		fputs(buf, out);
	}
	fputc(',', out);
	if (ps->gpu_mem_mib) {
		carve_qty_format_bytes((int64_t)ps->gpu_mem_mib * MIB_MILLI, buf, sizeof(buf));
		fputs(buf, out);
	}
	fputc(',', out);
	for (k = 0; k < ps->nmodels; k++)
		fprintf(out, "%s%s", k ? "|" : "", ps->models[k]);
	fputc(',', out);
	for (k = 0; k < ps->nselector; k++)
		fprintf(out, "%s%s=%s", k ? ";" : "", ps->selector[k].key, ps->selector[k].value);
	fprintf(out, ",%.15g,%s", j->demand, j->checkpoint ? "true" : "false");
	if (classes)
		fprintf(out, ",%s", j->job_class ? j->job_class : "");
	fputc('\n', out);
}

int carve_jobs_write_csv(const struct carve_jobs *js, FILE *out, struct carve_error *err)
{
	size_t i;
	bool classes;
	int rc;

	if (!js || !out)
		return carve_errorf(err, CARVE_EINVAL, "no job list or no output");
	for (i = 0; i < js->n; i++)
		if ((rc = csv_check(&js->jobs[i], err)))
			return rc;
	for (i = 0; i < js->n && !js->jobs[i].job_class; i++)
		;
	classes = i < js->n; /* the class column only when some job has one */
	fprintf(out, "%s%s\n", csv_header, classes ? ",class" : "");
	for (i = 0; i < js->n; i++)
		csv_job(out, &js->jobs[i], classes);
	if (fflush(out) || ferror(out))
		return carve_errorf(err, CARVE_EIO, "write failed");
	return 0;
}

/* ---- YAML ---- */

/* A double-quoted YAML string. */
static void yq(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(out, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(out, "\\x%02x", (unsigned char)*s);
		else
			fputc(*s, out);
	}
	fputc('"', out);
}

static void yaml_podset(FILE *out, const struct carve_job_podset *ps)
{
	char buf[48];
	size_t k;

	fputs("  - name: ", out);
	yq(out, ps->name);
	fprintf(out, "\n    count: %d\n    minCount: %d\n", (int)ps->count, (int)ps->min_count);
	if (ps->nreqs) {
		fputs("    requests: {", out);
		for (k = 0; k < ps->nreqs; k++) {
			bool bytes = carve_res_kind(ps->reqs[k].name, NULL) == CARVE_RK_MEMORY ||
				     !strcmp(ps->reqs[k].name, "ephemeral-storage");

			fputs(k ? ", " : "", out);
			yq(out, ps->reqs[k].name);
			fputs(": \"", out);
			put_qty(out, &ps->reqs[k], bytes);
			fputc('"', out);
		}
		fputs("}\n", out);
	}
	if (ps->gpu_milli) {
		carve_qty_format(ps->gpu_milli, buf, sizeof(buf));
		fprintf(out, "    gpuFraction: \"%s\"\n", buf);
	}
	if (ps->gpu_mem_mib) {
		carve_qty_format_bytes((int64_t)ps->gpu_mem_mib * MIB_MILLI, buf, sizeof(buf));
		fprintf(out, "    gpuMemory: \"%s\"\n", buf);
	}
	if (ps->nmodels) {
		fputs("    gpuModels: [", out);
		for (k = 0; k < ps->nmodels; k++) {
			fputs(k ? ", " : "", out);
			yq(out, ps->models[k]);
		}
		fputs("]\n", out);
	}
	if (ps->nselector) {
		fputs("    nodeSelector: {", out);
		for (k = 0; k < ps->nselector; k++) {
			fputs(k ? ", " : "", out);
			yq(out, ps->selector[k].key);
			fputs(": ", out);
			yq(out, ps->selector[k].value);
		}
		fputs("}\n", out);
	}
}

int carve_jobs_write_yaml(const struct carve_jobs *js, FILE *out, struct carve_error *err)
{
	size_t i, k;

	if (!js || !out)
		return carve_errorf(err, CARVE_EINVAL, "no job list or no output");
	/* an empty list is written as one, so it loads back */
	fputs(js->n ? "apiVersion: carve.dev/v1alpha1\nkind: Trace\njobs:\n"
		    : "apiVersion: carve.dev/v1alpha1\nkind: Trace\njobs: []\n", out);
	for (i = 0; i < js->n; i++) {
		const struct carve_job *j = &js->jobs[i];

		fputs("- name: ", out);
		yq(out, j->name);
		fprintf(out, "\n  arrival: %lld\n  duration: %lld\n", (long long)j->arrival,
			(long long)j->duration);
		if (j->ns) {
			fputs("  namespace: ", out);
			yq(out, j->ns);
			fputc('\n', out);
		}
		if (j->queue) {
			fputs("  queue: ", out);
			yq(out, j->queue);
			fputc('\n', out);
		}
		if (j->job_class) {
			fputs("  class: ", out);
			yq(out, j->job_class);
			fputc('\n', out);
		}
		fprintf(out, "  priority: %d\n  demand: %.15g\n  checkpoint: %s\n  podSets:\n",
			(int)j->priority, j->demand, j->checkpoint ? "true" : "false");
		for (k = 0; k < j->npodsets; k++)
			yaml_podset(out, &j->podsets[k]);
	}
	if (fflush(out) || ferror(out))
		return carve_errorf(err, CARVE_EIO, "write failed");
	return 0;
}
