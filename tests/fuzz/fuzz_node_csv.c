/*
 * fuzz_node_csv.c - the openb node CSV (sn,cpu_milli,memory_mib,gpu,model),
 * as `carve validate nodes.csv --explain` reads it: carve_manifests_load_csv,
 * then the inventory of fractional-GPU nodes, the checks, the explanation
 * and the diagnostics printed.
 */
#include "fuzz.h"

#include "carve/inventory.h"
#include "carve/manifest.h"
#include "carve/validate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct carve_manifests *m = carve_manifests_create();
	struct carve_inventory *inv;

	if (!m)
		return 0;
	carve_manifests_load_csv(m, "fuzz.csv", (const char *)data, size);
	inv = carve_inventory_build(m);
	carve_validate(m, inv);
	if (inv)
		carve_inventory_explain(inv, m, fuzz_sink());
	carve_inventory_destroy(inv);
	carve_diags_sort(&m->diags);
	carve_diags_print(&m->diags, fuzz_sink());
	carve_manifests_destroy(m);
	return 0;
}
