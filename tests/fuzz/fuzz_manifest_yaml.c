/*
 * fuzz_manifest_yaml.c - YAML manifests, and everything built from them.
 *
 * The bytes are one YAML file (carve_manifests_load_yaml).  Then what
 * `carve validate --explain` does (the inventory, the cross-object checks,
 * the explanation, the sorted diagnostics printed), and, when loading
 * reported no error, what `carve admit` does: the admission build, cycles
 * until nothing changes, the result JSON and the table.  Property checked:
 * the engine's own invariants hold after the cycles (carve_adm_check).
 */
#include <jansson.h>

#include "fuzz.h"

#include "carve/admission.h"
#include "carve/inventory.h"
#include "carve/manifest.h"
#include "carve/validate.h"

/* Cycles at most, as a bound on the work per input (carve admit: 1000). */
#define MAX_CYCLES 16

static void admit(struct carve_manifests *m)
{
	struct carve_admission *ad = carve_admission_build(m);
	struct carve_error err = {0};
	json_t *j;

	if (!ad)
		return;
	if (carve_adm_run(ad->adm, ad->now, MAX_CYCLES) >= 0 &&
	    carve_adm_check(ad->adm, &err) == CARVE_EINVAL)
		fuzz_fail("carve_adm_check after the cycles: %s", err.text);
	j = carve_admission_result_json(ad);
	json_decref(j);
	carve_admission_print_table(ad, fuzz_sink());
	carve_admission_destroy(ad);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct carve_manifests *m = carve_manifests_create();
	struct carve_inventory *inv;
	size_t load_errors;

	if (!m)
		return 0;
	carve_manifests_load_yaml(m, "fuzz.yaml", (const char *)data, size);
	load_errors = m->diags.nerrors;
	inv = carve_inventory_build(m);
	carve_validate(m, inv);
	if (inv)
		carve_inventory_explain(inv, m, fuzz_sink());
	carve_inventory_destroy(inv);
	carve_diags_sort(&m->diags);
	carve_diags_print(&m->diags, fuzz_sink());
	if (!load_errors)
		admit(m);
	carve_manifests_destroy(m);
	return 0;
}
