/*
 * mig_profiles.c - the static, read-only MIG geometry table: for every
 * MIG-capable model, each GPU-instance profile with its NVML id, SM slices,
 * memory slices (placement size), maximum count and legal start slices.
 *
 * Invariants (checked by tests/unit/test_mig.c): starts ascend, every
 * placement lies inside the model's memory slices and is aligned to its own
 * size (start % mem_slices == 0), and media is set exactly for "+me" names.
 * Sources and the uncertain (⚠) facts are listed in docs/internals/MIG.md.
 */
#include <stddef.h>
#include <stdint.h>

#include "mig_int.h"

#define PROF(n, id, g, ms, max, me, mib, at)                              \
	{                                                                 \
		.name = (n), .nvml_id = (id), .compute = (g),             \
		.mem_slices = (ms), .max_count = (max), .media = (me),    \
		at, .memory_mib = (mib)                                   \
	}

/*
 * Placement sets, as `nvidia-smi mig -lgipp` prints them ({starts}:size).
 * The 8-slice set is the same on A100-40GB, A100-80GB, H100 and H100 NVL.
 */
#define AT_8_SIZE1 .nstarts = 7, .starts = {0, 1, 2, 3, 4, 5, 6} /* not 7 */
#define AT_8_1G_SIZE2 .nstarts = 4, .starts = {0, 2, 4, 6}
#define AT_8_2G .nstarts = 3, .starts = {0, 2, 4}
#define AT_8_3G .nstarts = 2, .starts = {0, 4}
#define AT_8_4G .nstarts = 1, .starts = {0}
#define AT_8_7G .nstarts = 1, .starts = {0}

#define AT_4_SIZE1 .nstarts = 4, .starts = {0, 1, 2, 3}
#define AT_4_2G .nstarts = 2, .starts = {0, 2}
#define AT_4_4G .nstarts = 1, .starts = {0}

#define UNKNOWN_ID CARVE__MIG_NVML_ID_UNKNOWN

/*
 * A30-24GB: 4 memory slices, 4 SM slices, at most 4 instances.
 * ⚠ The NVML id of 2g.12gb+me (R525+) is not confirmed; only the go-nvml
 * mock lists the profile.  Instance memory is not known: 0.
 */
static const struct carve_mig_profile a30_24gb[] = {
	PROF("1g.6gb", 14, 1, 1, 4, false, 0, AT_4_SIZE1),
	PROF("1g.6gb+me", 21, 1, 1, 1, true, 0, AT_4_SIZE1), /* R470+ */
	PROF("2g.12gb", 5, 2, 2, 2, false, 0, AT_4_2G),
	PROF("2g.12gb+me", UNKNOWN_ID, 2, 2, 1, true, 0, AT_4_2G),
	PROF("4g.24gb", 0, 4, 4, 1, false, 0, AT_4_4G),
};

/*
 * A100-40GB (MIG User Guide table 6).  MiB from the go-nvml A100 mock;
 * "+me" profiles are given their base profile's memory.
 * ⚠ 1g.10gb: the guide's table says 1/8 of memory, but its placement size
 * in `-lgipp` is 2 ({0,2,4,6}:2), so it occupies 2 memory slices here.
 * Its MiB is not in the mock: 0.
 */
static const struct carve_mig_profile a100_40gb[] = {
	PROF("1g.5gb", 19, 1, 1, 7, false, 4864, AT_8_SIZE1),
	PROF("1g.5gb+me", 20, 1, 1, 1, true, 4864, AT_8_SIZE1),
	PROF("1g.10gb", 15, 1, 2, 4, false, 0, AT_8_1G_SIZE2),
	PROF("2g.10gb", 14, 2, 2, 3, false, 9856, AT_8_2G),
	PROF("3g.20gb", 9, 3, 4, 2, false, 19968, AT_8_3G),
	PROF("4g.20gb", 5, 4, 4, 1, false, 19968, AT_8_4G),
	PROF("7g.40gb", 0, 7, 8, 1, false, 40192, AT_8_7G),
};

/*
 * A100-80GB: same ids, placements and maxima as A100-40GB.  HAMi calls the
 * full profile "7g.79gb"; NVIDIA says "7g.80gb".  1g.20gb MiB unknown: 0.
 */
static const struct carve_mig_profile a100_80gb[] = {
	PROF("1g.10gb", 19, 1, 1, 7, false, 9856, AT_8_SIZE1),
	PROF("1g.10gb+me", 20, 1, 1, 1, true, 9856, AT_8_SIZE1),
	PROF("1g.20gb", 15, 1, 2, 4, false, 0, AT_8_1G_SIZE2),
	PROF("2g.20gb", 14, 2, 2, 3, false, 19968, AT_8_2G),
	PROF("3g.40gb", 9, 3, 4, 2, false, 40192, AT_8_3G),
	PROF("4g.40gb", 5, 4, 4, 1, false, 40192, AT_8_4G),
	PROF("7g.80gb", 0, 7, 8, 1, false, 80384, AT_8_7G),
};

/* H100-80GB (SXM5 and PCIe; guide table 7).  Instance MiB unknown: 0. */
static const struct carve_mig_profile h100_80gb[] = {
	PROF("1g.10gb", 19, 1, 1, 7, false, 0, AT_8_SIZE1),
	PROF("1g.10gb+me", 20, 1, 1, 1, true, 0, AT_8_SIZE1),
	PROF("1g.20gb", 15, 1, 2, 4, false, 0, AT_8_1G_SIZE2),
	PROF("2g.20gb", 14, 2, 2, 3, false, 0, AT_8_2G),
	PROF("3g.40gb", 9, 3, 4, 2, false, 0, AT_8_3G),
	PROF("4g.40gb", 5, 4, 4, 1, false, 0, AT_8_4G),
	PROF("7g.80gb", 0, 7, 8, 1, false, 0, AT_8_7G),
};

/*
 * H100-94GB (H100 NVL): profile names from mig-parted; geometry, ids and
 * maxima as H100-80GB (several H100 NVL `-lgipp` outputs agree).
 * Instance MiB unknown: 0.
 */
static const struct carve_mig_profile h100_94gb[] = {
	PROF("1g.12gb", 19, 1, 1, 7, false, 0, AT_8_SIZE1),
	PROF("1g.12gb+me", 20, 1, 1, 1, true, 0, AT_8_SIZE1),
	PROF("1g.24gb", 15, 1, 2, 4, false, 0, AT_8_1G_SIZE2),
	PROF("2g.24gb", 14, 2, 2, 3, false, 0, AT_8_2G),
	PROF("3g.47gb", 9, 3, 4, 2, false, 0, AT_8_3G),
	PROF("4g.47gb", 5, 4, 4, 1, false, 0, AT_8_4G),
	PROF("7g.94gb", 0, 7, 8, 1, false, 0, AT_8_7G),
};

/*
 * H200-141GB (SXM and NVL; guide table 8).
 * ⚠ Placements are inferred from the GH100 fractions and the H100 `-lgipp`
 * output; no H200 `-lgipp` dump was found.  (go-nvml's H200 mock uses
 * simplified sizes and must not be trusted for geometry.)
 * ⚠ MiB come from that mock and are nominal GB x 1024, not measured: the
 * 7g.141gb value (144384) exceeds the 143771 MiB the whole GPU reports.
 */
static const struct carve_mig_profile h200_141gb[] = {
	PROF("1g.18gb", 19, 1, 1, 7, false, 18432, AT_8_SIZE1),
	PROF("1g.18gb+me", 20, 1, 1, 1, true, 18432, AT_8_SIZE1),
	PROF("1g.35gb", 15, 1, 2, 4, false, 35840, AT_8_1G_SIZE2),
	PROF("2g.35gb", 14, 2, 2, 3, false, 35840, AT_8_2G),
	PROF("3g.71gb", 9, 3, 4, 2, false, 72704, AT_8_3G),
	PROF("4g.71gb", 5, 4, 4, 1, false, 72704, AT_8_4G),
	PROF("7g.141gb", 0, 7, 8, 1, false, 144384, AT_8_7G),
};

#define MODEL(n, ms, cs, maxi, profs)                                      \
	{                                                                  \
		.name = (n), .mem_slices = (ms), .compute_slices = (cs),   \
		.max_instances = (maxi),                                   \
		.nprofiles = sizeof(profs) / sizeof((profs)[0]),           \
		.profiles = (profs)                                        \
	}

/*
 * B200 (guide table 9) is left out: its profile names and maxima are known,
 * but its NVML ids and placements were not confirmed.
 */
const struct carve_mig_model carve__mig_models[CARVE__MIG_NMODELS] = {
	[CARVE__MIG_A30_24GB] = MODEL("A30-24GB", 4, 4, 4, a30_24gb),
	[CARVE__MIG_A100_40GB] = MODEL("A100-40GB", 8, 7, 7, a100_40gb),
	[CARVE__MIG_A100_80GB] = MODEL("A100-80GB", 8, 7, 7, a100_80gb),
	[CARVE__MIG_H100_80GB] = MODEL("H100-80GB", 8, 7, 7, h100_80gb),
	[CARVE__MIG_H100_94GB] = MODEL("H100-94GB", 8, 7, 7, h100_94gb),
	[CARVE__MIG_H200_141GB] = MODEL("H200-141GB", 8, 7, 7, h200_141gb),
};

/*
 * PCI ids (device << 16 | vendor 0x10DE) of the cards of each model, as
 * mig-parted's device-filter writes them.  Source: the device-filter lists
 * and their comments in NVIDIA/mig-parted deployments/systemd/
 * config-default.yaml (docs/internals/MIG.md lists them per card).  The
 * A800/H800 variants share their model's geometry and are listed with it.
 */
static const uint32_t pci_a30_24gb[] = {0x20B710DE};
static const uint32_t pci_a100_40gb[] = {0x20B010DE, 0x20B110DE, 0x20F110DE, 0x20F610DE};
static const uint32_t pci_a100_80gb[] = {0x20B210DE, 0x20B510DE, 0x20F310DE, 0x20F510DE};
static const uint32_t pci_h100_80gb[] = {0x233010DE, 0x233110DE, 0x232210DE, 0x232410DE};
static const uint32_t pci_h100_94gb[] = {0x232110DE, 0x233A10DE};
static const uint32_t pci_h200_141gb[] = {0x233510DE, 0x233B10DE};

#define PCI(v) {sizeof(v) / sizeof((v)[0]), (v)}

static const struct {
	size_t n;
	const uint32_t *ids;
} pci_ids[CARVE__MIG_NMODELS] = {
	[CARVE__MIG_A30_24GB] = PCI(pci_a30_24gb),
	[CARVE__MIG_A100_40GB] = PCI(pci_a100_40gb),
	[CARVE__MIG_A100_80GB] = PCI(pci_a100_80gb),
	[CARVE__MIG_H100_80GB] = PCI(pci_h100_80gb),
	[CARVE__MIG_H100_94GB] = PCI(pci_h100_94gb),
	[CARVE__MIG_H200_141GB] = PCI(pci_h200_141gb),
};

/* "0x20B210DE" (any case, "0x" optional; 8 hex digits: device id, then
 * vendor id) to its value; false when malformed. */
static bool parse_pci(const char *s, uint32_t *out)
{
	uint32_t v = 0;
	int n = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (; *s; s++, n++) {
		int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			return false;
		if (n == 8)
			return false;
		v = v << 4 | (uint32_t)d;
	}
	*out = v;
	return n == 8;
}

int carve_mig_model_pci_match(const struct carve_mig_model *m, const char *id)
{
	uint32_t v;
	size_t i;
	ptrdiff_t k = m - carve__mig_models;

	if (!id || !parse_pci(id, &v))
		return -1;
	if (k < 0 || k >= CARVE__MIG_NMODELS)
		return 0;
	for (i = 0; i < pci_ids[k].n; i++)
		if (pci_ids[k].ids[i] == v)
			return 1;
	return 0;
}
