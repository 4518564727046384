/*
 * test_migparted.c - NVIDIA's default mig-parted config
 * (tests/data/migparted/config-default.yaml, the published file) applied to
 * every GPU model carve knows: each (config, model) cell gives exactly the
 * layout of the entry whose device-filter selects that model's cards, or a
 * clear error when no entry does or the entry's profiles are not the
 * model's; and a Node's advertised MIG count agrees with its config.
 */
#include "testutil.h"

#include "carve/inventory.h"
#include "carve/mig.h"

/*
 * The PCI ids of each model's cards, written from the comments beside the
 * device-filter lists of the published config (the oracle of this test;
 * src/core/mig_profiles.c keeps its own table).
 */
static const struct {
	const char *model;
	const char *ids[5];
} pci[] = {
	{"A30-24GB", {"0x20B710DE"}},
	{"A100-40GB", {"0x20B010DE", "0x20B110DE", "0x20F110DE", "0x20F610DE"}},
	{"A100-80GB", {"0x20B210DE", "0x20B510DE", "0x20F310DE", "0x20F510DE"}},
	{"H100-80GB", {"0x233010DE", "0x233110DE", "0x232210DE", "0x232410DE"}},
	{"H100-94GB", {"0x232110DE", "0x233A10DE"}},
	{"H200-141GB", {"0x233510DE", "0x233B10DE"}},
};

static bool entry_selects(const struct carve_mf_migdevice *e, const char *model)
{
	size_t i, f, k;

	if (!e->nfilters)
		return true;
	for (i = 0; i < sizeof(pci) / sizeof(pci[0]); i++) {
		if (strcmp(pci[i].model, model))
			continue;
		for (f = 0; f < e->nfilters; f++)
			for (k = 0; k < 5 && pci[i].ids[k]; k++)
				if (!strcasecmp(e->device_filter[f], pci[i].ids[k]))
					return true;
	}
	return false;
}

struct cell {
	struct carve_manifests *m;
	struct carve_inventory *inv;
	const struct carve_gpu *gpu;
};

/* The default config and one NodePool of one `model` GPU using `config`. */
static void run_cell(const char *model, const char *config, struct cell *c)
{
	char path[4096], yaml[512];

	c->m = carve_manifests_create();
	assert_non_null(c->m);
	assert_int_equal(carve_manifests_load_path(c->m, tu_source_path(path, sizeof(path),
					"tests/data/migparted/config-default.yaml")), 0);
	snprintf(yaml, sizeof(yaml),
		 "apiVersion: carve.dev/v1alpha1\nkind: NodePool\nmetadata: {name: p}\n"
		 "spec:\n  count: 1\n  gpu: {model: %s, count: 1}\n"
		 "  sharing: {mode: mig, mig: {config: %s}}\n", model, config);
	assert_int_equal(carve_manifests_load_yaml(c->m, "pool.yaml", yaml, strlen(yaml)), 0);
	c->inv = carve_inventory_build(c->m);
	assert_non_null(c->inv);
	assert_int_equal(carve_cluster_gpu_count(c->inv->cluster), 1);
	c->gpu = carve_cluster_gpu(c->inv->cluster, 0);
}

static void free_cell(struct cell *c)
{
	carve_inventory_destroy(c->inv);
	carve_manifests_destroy(c->m);
}

static bool has_diag(const struct carve_manifests *m, const char *text)
{
	size_t i;

	for (i = 0; i < m->diags.n; i++)
		if (strstr(m->diags.v[i].msg, text))
			return true;
	return false;
}

/* Instances of `profile` in the GPU's layout. */
static int instances(const struct carve_gpu *g, const char *profile)
{
	int n = 0, k;

	if (!g->mig_model)
		return 0;
	k = carve_mig_profile_find(g->mig_model, profile);
	for (size_t i = 0; k >= 0 && i < g->mig.n; i++)
		n += g->mig.inst[i].profile == k;
	return n;
}

static void whole_matrix(void **state)
{
	char path[4096];
	struct carve_manifests *cfg = carve_manifests_create();
	size_t c, e, p, ncells = 0, nlayouts = 0, nrefused = 0;
	int k;

	(void)state;
	assert_int_equal(carve_manifests_load_path(cfg, tu_source_path(path, sizeof(path),
					"tests/data/migparted/config-default.yaml")), 0);
	tu_assert_clean(cfg);
	assert_int_equal(cfg->nmigconfigs, 64);
	for (c = 0; c < cfg->nmigconfigs; c++)
		for (k = 0; k < carve_mig_model_count(); k++) {
			const struct carve_mig_model *mm = carve_mig_model_at(k);
			const struct carve_mf_migconfig *mc = &cfg->migconfigs[c];
			const struct carve_mf_migdevice *hit = NULL;
			bool legal = true;
			struct cell cell;

			for (e = 0; e < mc->n; e++)
				if (entry_selects(&mc->v[e], mm->name)) {
					assert_null(hit); /* the published filters are disjoint */
					hit = &mc->v[e];
				}
			run_cell(mm->name, mc->name, &cell);
			ncells++;
			if (!hit) {
				if (!has_diag(cell.m, "has no entry for"))
					tu_dump(cell.m);
				assert_true(has_diag(cell.m, "has no entry for"));
				assert_int_not_equal(cell.gpu->sharing, CARVE_SHARE_MIG);
				nrefused++;
				free_cell(&cell);
				continue;
			}
			for (p = 0; p < hit->ncounts; p++) {
				int q = carve_mig_profile_find(mm, hit->counts[p].profile);

				if (q < 0 || hit->counts[p].count > mm->profiles[q].max_count)
					legal = false;
			}
			if (!hit->mig_enabled) {
				tu_assert_clean(cell.m);
				assert_int_not_equal(cell.gpu->sharing, CARVE_SHARE_MIG);
			} else if (legal) {
				if (cell.m->diags.n)
					tu_dump(cell.m);
				assert_int_equal(cell.m->diags.nerrors, 0);
				assert_int_equal(cell.gpu->sharing, CARVE_SHARE_MIG);
				for (p = 0; p < hit->ncounts; p++)
					assert_int_equal(instances(cell.gpu, hit->counts[p].profile),
							 hit->counts[p].count);
				nlayouts++;
			} else {
				assert_true(cell.m->diags.nerrors > 0);
				assert_int_not_equal(cell.gpu->sharing, CARVE_SHARE_MIG);
				nrefused++;
			}
			free_cell(&cell);
		}
	assert_int_equal(ncells, 64 * 6);
	/* per model: its own single-profile configs, all-balanced, all-enabled */
	assert_true(nlayouts >= 6 * 3);
	assert_true(nrefused > 0);
	carve_manifests_destroy(cfg);
}

/* The cells that once went wrong, with the numbers spelled out. */
static void headline_cells(void **state)
{
	static const struct {
		const char *model, *config, *profile;
		int count;
	} want[] = {
		{"A100-40GB", "all-1g.10gb", "1g.10gb", 4},
		{"A100-80GB", "all-1g.10gb", "1g.10gb", 7},
		{"H100-80GB", "all-1g.10gb", "1g.10gb", 7},
		{"H200-141GB", "all-1g.35gb", "1g.35gb", 4},
		{"H200-141GB", "all-balanced", "1g.18gb", 2},
		{"H200-141GB", "all-balanced", "3g.71gb", 1},
		{"H100-94GB", "all-1g.24gb", "1g.24gb", 4},
		{"H100-94GB", "all-balanced", "2g.24gb", 1},
		{"A100-40GB", "all-balanced", "1g.5gb", 2},
		{"A100-80GB", "all-balanced", "3g.40gb", 1},
		{"A30-24GB", "all-balanced", "2g.12gb", 1},
		{"A30-24GB", "all-enabled", "1g.6gb", 0},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct cell c;

		run_cell(want[i].model, want[i].config, &c);
		tu_assert_clean(c.m);
		assert_int_equal(c.gpu->sharing, CARVE_SHARE_MIG);
		assert_int_equal(instances(c.gpu, want[i].profile), want[i].count);
		free_cell(&c);
	}
}

/* A Node whose allocatable MIG count matches its config draws no warning,
 * and the inventory keeps 8 x 7 instances. */
static void node_count_agrees(void **state)
{
	static const char node[] =
		"apiVersion: v1\nkind: Node\nmetadata:\n  name: a100\n  labels:\n"
		"    nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB\n"
		"    nvidia.com/gpu.count: \"8\"\n"
		"    nvidia.com/mig.config: all-1g.10gb\n"
		"status:\n  allocatable: {nvidia.com/mig-1g.10gb: \"56\"}\n";
	struct carve_manifests *m = carve_manifests_create();
	struct carve_inventory *inv;
	char path[4096];
	size_t g;
	int n = 0;

	(void)state;
	assert_int_equal(carve_manifests_load_path(m, tu_source_path(path, sizeof(path),
					"tests/data/migparted/config-default.yaml")), 0);
	assert_int_equal(carve_manifests_load_yaml(m, "node.yaml", node, strlen(node)), 0);
	inv = carve_inventory_build(m);
	assert_non_null(inv);
	tu_assert_clean(m);
	for (g = 0; g < carve_cluster_gpu_count(inv->cluster); g++)
		n += instances(carve_cluster_gpu(inv->cluster, (uint32_t)g), "1g.10gb");
	assert_int_equal(n, 56);
	carve_inventory_destroy(inv);
	carve_manifests_destroy(m);
}

/* A device-filter that is not a PCI id is an error at its entry. */
static void bad_filter(void **state)
{
	static const char yaml[] =
		"version: v1\nmig-configs:\n  x:\n"
		"    - device-filter: [\"A100\"]\n      devices: all\n      mig-enabled: true\n"
		"      mig-devices: {\"1g.10gb\": 7}\n"
		"---\napiVersion: carve.dev/v1alpha1\nkind: NodePool\nmetadata: {name: p}\n"
		"spec:\n  count: 1\n  gpu: {model: A100-80GB, count: 1}\n"
		"  sharing: {mode: mig, mig: {config: x}}\n";
	struct carve_manifests *m = tu_load(yaml);
	struct carve_inventory *inv = carve_inventory_build(m);

	(void)state;
	assert_non_null(inv);
	assert_true(has_diag(m, "device-filter 'A100' is not a PCI id"));
	assert_true(has_diag(m, "has no entry for A100-80GB"));
	carve_inventory_destroy(inv);
	carve_manifests_destroy(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(whole_matrix),
		cmocka_unit_test(headline_cells),
		cmocka_unit_test(node_count_agrees),
		cmocka_unit_test(bad_filter),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
