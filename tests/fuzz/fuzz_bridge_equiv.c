/*
 * fuzz_bridge_equiv.c - the bridge is the one path from objects to the
 * engine (tests/unit/test_bridge.c, same_decisions): the same YAML through
 * `carve admit` (Workloads added at build time, one cycle) and through the
 * simulator's first cycle (admitted Workloads as its starting state, the
 * pending ones trace jobs arriving at 0) must decide the same.  Inputs one
 * side refuses (load errors; the simulator also needs nodes, a
 * ClusterQueue and jobs that fit) are not compared.  Property checked: the
 * two result JSONs are equal.
 */
#include <jansson.h>
#include <string.h>

#include "fuzz.h"

#include "carve/admission.h"
#include "carve/jobs.h"
#include "carve/manifest.h"
#include "carve/sim.h"

/* A new set with the input loaded, or NULL when loading reported errors. */
static struct carve_manifests *load(const uint8_t *data, size_t size)
{
	struct carve_manifests *m = carve_manifests_create();

	if (m && (carve_manifests_load_yaml(m, "fuzz.yaml", (const char *)data, size) ||
		  m->diags.nerrors)) {
		carve_manifests_destroy(m);
		m = NULL;
	}
	return m;
}

static json_t *admit_once(const uint8_t *data, size_t size)
{
	struct carve_manifests *m = load(data, size);
	struct carve_admission *ad = m ? carve_admission_build(m) : NULL;
	json_t *j = NULL;

	if (ad && !m->diags.nerrors && carve_adm_cycle(ad->adm, ad->now) >= 0)
		j = carve_admission_result_json(ad);
	carve_admission_destroy(ad);
	carve_manifests_destroy(m);
	return j;
}

static json_t *simulate_once(const uint8_t *data, size_t size)
{
	struct carve_manifests *m = load(data, size);
	struct carve_jobs *js = carve_jobs_create();
	struct carve_sim_opts o;
	struct carve_error err = {0};
	struct carve_sim *s = NULL;
	json_t *j = NULL;

	memset(&o, 0, sizeof(o));
	o.workloads = true;
	o.cycles = 1;
	if (m && js)
		s = carve_sim_create(m, js, &o, &err);
	if (s && carve_sim_run_events(s, 0, SIZE_MAX, NULL, &err) >= 0)
		j = carve_admission_result_json(carve_sim_admission(s));
	carve_sim_destroy(s);
	carve_jobs_destroy(js);
	carve_manifests_destroy(m);
	return j;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *a = admit_once(data, size), *b = a ? simulate_once(data, size) : NULL;

	if (a && b && !json_equal(a, b)) {
		char *x = json_dumps(a, JSON_INDENT(1) | JSON_SORT_KEYS);
		char *y = json_dumps(b, JSON_INDENT(1) | JSON_SORT_KEYS);

		fprintf(stderr, "--- admit\n%s\n--- simulate\n%s\n", x ? x : "", y ? y : "");
		fuzz_fail("carve admit and the simulator's first cycle decide differently");
	}
	json_decref(a);
	json_decref(b);
	return 0;
}
