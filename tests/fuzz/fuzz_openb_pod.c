/*
 * fuzz_openb_pod.c - the openb pod CSV (carve/trace.h), then its tasks as
 * trace jobs (carve_jobs_from_openb) written out as a YAML trace.
 * Properties checked: every task kept holds what trace.h promises
 * (0 <= num_gpu <= CARVE_TASK_MAX_GPUS; gpu_milli 1..1000 with GPUs, 0
 * without; models a set of distinct names, when the input is text:
 * fuzz_is_text), and every job made from them what jobs.h promises.
 */
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"

#include "carve/jobs.h"
#include "carve/trace.h"

static void check_task(const struct carve_task *t, bool text)
{
	size_t i, k;

	if (!t->name)
		fuzz_fail("task without a name at line %u", (unsigned)t->pos.line);
	if (t->num_gpu < 0 || t->num_gpu > CARVE_TASK_MAX_GPUS)
		fuzz_fail("task %s: num_gpu %d", t->name, t->num_gpu);
	if (t->num_gpu ? t->gpu_milli < 1 || t->gpu_milli > 1000 : t->gpu_milli != 0)
		fuzz_fail("task %s: gpu_milli %d with num_gpu %d", t->name, t->gpu_milli,
			  t->num_gpu);
	if (t->cpu_milli < 0 || t->memory_mib < 0)
		fuzz_fail("task %s: negative cpu or memory", t->name);
	for (i = 0; text && i < t->nmodels; i++)
		for (k = 0; k < i; k++)
			if (!strcmp(t->models[i], t->models[k]))
				fuzz_fail("task %s: model %s twice", t->name, t->models[i]);
}

static void check_job(const struct carve_job *j)
{
	if (!j->name || !*j->name || j->arrival < 0 || j->duration <= 0 || j->npodsets != 1 ||
	    j->podsets[0].count != 1)
		fuzz_fail("job %s from an openb task breaks jobs.h's invariants",
			  j->name ? j->name : "(null)");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct carve_trace *t = carve_trace_create();
	struct carve_jobs *js = carve_jobs_create();
	struct carve_diags d;
	struct carve_error err = {0};
	size_t i, skipped = 0;

	carve_diags_init(&d);
	if (!t || !js)
		goto out;
	if (carve_trace_load_openb_buf(t, "fuzz.csv", (const char *)data, size, &d))
		goto out;
	for (i = 0; i < t->n; i++)
		check_task(&t->tasks[i], fuzz_is_text(data, size));
	if (carve_jobs_from_openb(js, t, &d, &skipped))
		goto out;
	for (i = 0; i < js->n; i++)
		check_job(&js->jobs[i]);
	carve_jobs_write_yaml(js, fuzz_sink(), &err);
	carve_diags_sort(&d);
	carve_diags_print(&d, fuzz_sink());
out:
	carve_diags_cleanup(&d);
	carve_jobs_destroy(js);
	carve_trace_destroy(t);
	return 0;
}
