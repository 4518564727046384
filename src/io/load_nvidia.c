/*
 * load_nvidia.c - NVIDIA k8s-device-plugin configs (api/config/v1), mig-parted
 * configs (api/spec/v1) and the v1 ConfigMaps that carry either as text.
 *
 * Embedded YAML is parsed again with ytree_parse, offset so that every
 * position points at the real character of the outer file (exact for
 * literal block scalars `|`, the form the GPU operator documents).  In a
 * quoted or plain value, escapes and folding move text around, so every
 * problem inside it is reported at the value's own start.
 */
#include <ctype.h>
#include <limits.h>
#include <string.h>

#include "loaders.h"

/* ---- device-plugin config ---- */

static const char *const mig_strategies[] = {"none", "single", "mixed", NULL};
static const char *const alloc_policies[] = {"distributed", "packed", NULL};

/* Type checks for fields carve reads but does not keep. */
static void f_any_bool(struct ld *ld, const struct ynode *v, void *o)
{
	bool b;

	if (!ytree_is_null(v))
		ld_bool(ld, v, &b);
}

static void f_any_str(struct ld *ld, const struct ynode *v, void *o)
{
	const char *s;

	ld_str(ld, v, &s);
}

/* deviceListStrategy: one string or a list of strings. */
static void f_str_or_list(struct ld *ld, const struct ynode *v, void *o)
{
	const char **l;
	size_t n;

	if (v->kind == YN_SEQ)
		ld_strlist(ld, v, &l, &n, NULL);
	else
		f_any_str(ld, v, o);
}

static void f_alloc_policy(struct ld *ld, const struct ynode *v, void *o)
{
	int e;

	ld_enum(ld, v, alloc_policies, &e);
}

struct dp_ctx {
	struct carve_mf_dpconfig c;
	size_t cap_ts;
	bool bad;
};

static void f_dp_version(struct ld *ld, const struct ynode *v, void *o)
{
	struct dp_ctx *c = o;
	const char *s;

	if (!ld_str(ld, v, &s)) {
		c->bad = true;
	} else if (strcmp(s, "v1")) {
		ld_error(ld, v->pos, "unsupported version '%s' (expected v1); config skipped", s);
		c->bad = true;
	}
}

static void f_mig_strategy(struct ld *ld, const struct ynode *v, void *o)
{
	struct dp_ctx *c = o;
	int e;

	if (ld_enum(ld, v, mig_strategies, &e))
		c->c.mig_strategy = mig_strategies[e];
}

static const struct ld_field plugin_fields[] = {
	{"passDeviceSpecs", f_any_bool, 0},
	{"deviceListStrategy", f_str_or_list, 0},
	{"deviceIDStrategy", f_any_str, 0},
	{"cdiAnnotationPrefix", f_any_str, 0},
	{"nvidiaCTKPath", f_any_str, 0},
	{"nvidiaCDIHookPath", f_any_str, 0},
	{"containerDriverRoot", f_any_str, 0},
	{"kubeletSocket", f_any_str, 0},
	{"cdiFeatureFlags", NULL, 0},
	{"sharedDevicesAllocationPolicy", f_alloc_policy, 0},
	{NULL, NULL, 0},
};

static const struct ld_field gfd_fields[] = {
	{"oneshot", f_any_bool, 0},
	{"noTimestamp", f_any_bool, 0},
	{"sleepInterval", f_any_str, 0},
	{"outputFile", f_any_str, 0},
	{"machineTypeFile", f_any_str, 0},
	{NULL, NULL, 0},
};

static void f_plugin(struct ld *ld, const struct ynode *v, void *o)
{
	if (!ytree_is_null(v))
		ld_fields(ld, v, plugin_fields, o);
}

static void f_gfd(struct ld *ld, const struct ynode *v, void *o)
{
	if (!ytree_is_null(v))
		ld_fields(ld, v, gfd_fields, o);
}

static const struct ld_field flags_fields[] = {
	{"migStrategy", f_mig_strategy, 0},
	{"failOnInitError", f_any_bool, 0},
	{"restartOnDeviceUnhealthy", f_any_bool, 0},
	{"mpsRoot", f_any_str, 0},
	{"nvidiaDriverRoot", f_any_str, 0},
	{"nvidiaDevRoot", f_any_str, 0},
	{"gdrcopyEnabled", f_any_bool, 0},
	{"gdsEnabled", f_any_bool, 0},
	{"mofedEnabled", f_any_bool, 0},
	{"useNodeFeatureAPI", f_any_bool, 0},
	{"deviceDiscoveryStrategy", f_any_str, 0},
	{"plugin", f_plugin, 0},
	{"gfd", f_gfd, 0},
	{NULL, NULL, 0},
};

static void f_flags(struct ld *ld, const struct ynode *v, void *o)
{
	if (!ytree_is_null(v))
		ld_fields(ld, v, flags_fields, o);
}

/* resources.gpus / resources.mig: [{pattern, name}] */
static const struct ld_field resource_fields[] = {
	{"pattern", f_any_str, LD_REQUIRED},
	{"name", f_any_str, LD_REQUIRED},
	{NULL, NULL, 0},
};

static void one_resource(struct ld *ld, const struct ynode *item, size_t i, void *o)
{
	ld_fields(ld, item, resource_fields, o);
}

static void f_res_list(struct ld *ld, const struct ynode *v, void *o)
{
	ld_list(ld, v, one_resource, o);
}

static const struct ld_field resources_fields[] = {
	{"gpus", f_res_list, 0},
	{"mig", f_res_list, 0},
	{NULL, NULL, 0},
};

static void f_resources(struct ld *ld, const struct ynode *v, void *o)
{
	if (!ytree_is_null(v))
		ld_fields(ld, v, resources_fields, o);
}

/* sharing.timeSlicing and sharing.mps share one shape. */
struct replicated {
	bool rename_by_default, fail_requests_gt_one;
	struct carve_mf_tsresource *v;
	size_t n, cap;
	bool any;
};

static void f_rr_rename_default(struct ld *ld, const struct ynode *v, void *o)
{
	ld_bool(ld, v, &((struct replicated *)o)->rename_by_default);
}

static void f_rr_fail(struct ld *ld, const struct ynode *v, void *o)
{
	ld_bool(ld, v, &((struct replicated *)o)->fail_requests_gt_one);
}

static void f_tsr_name(struct ld *ld, const struct ynode *v, void *o)
{
	struct carve_mf_tsresource *t = o;

	if (ld_str(ld, v, &t->name) && !*t->name) {
		ld_error(ld, v->pos, "name must not be empty");
		t->name = NULL;
	}
}

static void f_tsr_rename(struct ld *ld, const struct ynode *v, void *o)
{
	ld_str(ld, v, &((struct carve_mf_tsresource *)o)->rename);
}

static void f_tsr_replicas(struct ld *ld, const struct ynode *v, void *o)
{
	struct carve_mf_tsresource *t = o;
	int64_t x;

	if (!ld_int(ld, v, INT64_MIN, INT_MAX, &x))
		return;
	if (x < 1) {
		ld_error(ld, v->pos, "replicas must be at least 1");
		return;
	}
	if (x > CARVE_TIMESLICE_MAX_REPLICAS) {
		ld_error(ld, v->pos, "replicas must be at most %d", CARVE_TIMESLICE_MAX_REPLICAS);
		return;
	}
	t->replicas = (int)x;
	t->replicas_pos = v->pos;
}

/* devices: all | <count > 0> | [<index> | "<index>" | "<gpu>:<mig>" | "GPU-..." | "MIG-..."] */
static void f_tsr_devices(struct ld *ld, const struct ynode *v, void *o)
{
	int64_t x;
	size_t i;

	if (v->kind == YN_SCALAR) {
		if (!strcmp(v->str, "all"))
			return;
		if (isdigit((unsigned char)v->str[0]) || v->str[0] == '-') {
			if (ld_int(ld, v, INT64_MIN, INT_MAX, &x) && x < 1)
				ld_error(ld, v->pos, "a device count must be at least 1");
			return;
		}
		ld_error(ld, v->pos,
			 "expected all, a device count or a list of devices, got '%s'", v->str);
		return;
	}
	if (v->kind != YN_SEQ) {
		ld_error(ld, v->pos, "expected all, a device count or a list of devices, got %s",
			 ytree_kind_name(v));
		return;
	}
	for (i = 0; i < v->n; i++) {
		const struct ynode *d = v->items[i];

		if (d->kind != YN_SCALAR || !*d->str) {
			size_t old = ld_push(ld, "[%zu]", i);

			ld_error(ld, d->pos, "expected a GPU index, MIG index or UUID, got %s",
				 ytree_kind_name(d));
			ld_pop(ld, old);
		}
	}
}

static const struct ld_field tsr_fields[] = {
	{"name", f_tsr_name, LD_REQUIRED},
	{"rename", f_tsr_rename, 0},
	{"replicas", f_tsr_replicas, LD_REQUIRED},
	{"devices", f_tsr_devices, 0},
	{NULL, NULL, 0},
};

static void one_tsr(struct ld *ld, const struct ynode *item, size_t i, void *o)
{
	struct replicated *r = o;
	struct carve_mf_tsresource t, *e;

	memset(&t, 0, sizeof(t));
	t.pos = item->pos;
	if (!ld_fields(ld, item, tsr_fields, &t) || !t.name || t.replicas < 1)
		return;
	e = LD_APPEND(ld, r->v, r->n, r->cap);
	if (e)
		*e = t;
}

static void f_rr_resources(struct ld *ld, const struct ynode *v, void *o)
{
	struct replicated *r = o;

	if (ld_list(ld, v, one_tsr, o) && !ytree_is_null(v) && v->n)
		r->any = true;
}

static const struct ld_field rr_fields[] = {
	{"renameByDefault", f_rr_rename_default, 0},
	{"failRequestsGreaterThanOne", f_rr_fail, 0},
	{"resources", f_rr_resources, 0},
	{"strategy", NULL, 0}, /* older releases; only "" was ever accepted */
	{NULL, NULL, 0},
};

struct sharing_ctx {
	struct replicated ts, mps;
	const struct ynode *mps_key;
};

static void f_timeslicing(struct ld *ld, const struct ynode *v, void *o)
{
	if (!ytree_is_null(v))
		ld_fields(ld, v, rr_fields, &((struct sharing_ctx *)o)->ts);
}

static void f_mps(struct ld *ld, const struct ynode *v, void *o)
{
	if (!ytree_is_null(v))
		ld_fields(ld, v, rr_fields, &((struct sharing_ctx *)o)->mps);
}

static const struct ld_field sharing_fields[] = {
	{"timeSlicing", f_timeslicing, 0},
	{"mps", f_mps, 0},
	{NULL, NULL, 0},
};

static void f_sharing(struct ld *ld, const struct ynode *v, void *o)
{
	struct dp_ctx *c = o;
	struct sharing_ctx s;
	size_t i;

	if (ytree_is_null(v))
		return;
	memset(&s, 0, sizeof(s));
	if (!ld_fields(ld, v, sharing_fields, &s))
		return;
	if (s.ts.any && s.mps.any)
		for (i = 0; i < v->n; i++)
			if (!strcmp(v->pairs[i].key->str, "mps"))
				ld_warn(ld, v->pairs[i].key->pos,
					"timeSlicing and mps are mutually exclusive; the device plugin uses mps");
	if (s.mps.any) {
		/*
		 * MPS (NVIDIA k8s-device-plugin README, "CUDA MPS"): each GPU is
		 * advertised as `replicas` shares, each limited to 1/replicas of
		 * its memory and compute, and a container may ask for one share
		 * only.  carve models the shares as replicas, as for
		 * time-slicing, with requests above one refused; MIG devices
		 * cannot be shared with MPS.
		 */
		size_t k = 0;

		for (i = 0; i < s.mps.n; i++) {
			if (!strncmp(s.mps.v[i].name, "nvidia.com/mig-", 15)) {
				ld_error(ld, s.mps.v[i].pos, "mps: %s: MIG devices cannot be "
					 "shared with MPS (the device plugin refuses it)",
					 s.mps.v[i].name);
				continue;
			}
			s.mps.v[k++] = s.mps.v[i];
		}
		c->c.mps = true;
		c->c.rename_by_default = s.mps.rename_by_default;
		c->c.fail_requests_gt_one = true;
		c->c.ts = s.mps.v;
		c->c.nts = k;
		return;
	}
	c->c.rename_by_default = s.ts.rename_by_default;
	c->c.fail_requests_gt_one = s.ts.fail_requests_gt_one;
	c->c.ts = s.ts.v;
	c->c.nts = s.ts.n;
}

static const struct ld_field imex_fields[] = {
	{"channelIDs", NULL, 0},
	{"required", f_any_bool, 0},
	{NULL, NULL, 0},
};

static void f_imex(struct ld *ld, const struct ynode *v, void *o)
{
	if (!ytree_is_null(v))
		ld_fields(ld, v, imex_fields, o);
}

static const struct ld_field dp_fields[] = {
	{"version", f_dp_version, LD_REQUIRED},
	{"flags", f_flags, 0},
	{"resources", f_resources, 0},
	{"sharing", f_sharing, 0},
	{"imex", f_imex, 0},
	{NULL, NULL, 0},
};

void load_dpconfig(struct ld *ld, const struct ynode *doc, const char *name)
{
	const char *saved = ld->name;
	struct dp_ctx c;
	struct carve_mf_dpconfig *e;

	memset(&c, 0, sizeof(c));
	c.c.name = name;
	c.c.pos = doc->pos;
	ld->name = name;
	if (!ld_fields(ld, doc, dp_fields, &c) || !ytree_get(doc, "version"))
		c.bad = true;
	ld->name = saved;
	if (c.bad || !name)
		return;
	e = LD_APPEND(ld, ld->m->dpconfigs, ld->m->ndpconfigs, ld->m->cap_dpconfigs);
	if (e)
		*e = c.c;
}

/* ---- mig-parted config ---- */

struct mig_ctx {
	struct carve_mf_migdevice d;
	size_t cap_counts;
	bool has_mig_devices;
};

static void f_md_filter(struct ld *ld, const struct ynode *v, void *o)
{
	struct mig_ctx *c = o;

	if (v->kind == YN_SEQ) {
		ld_strlist(ld, v, &c->d.device_filter, &c->d.nfilters, NULL);
		return;
	}
	if (ytree_is_null(v))
		return;
	c->d.device_filter = carve_arena_alloc(ld->a, sizeof(*c->d.device_filter));
	if (!c->d.device_filter) {
		carve_diag_error(ld->d, v->pos, "out of memory");
		return;
	}
	if (ld_str(ld, v, &c->d.device_filter[0]))
		c->d.nfilters = 1;
}

static void f_md_devices(struct ld *ld, const struct ynode *v, void *o)
{
	struct mig_ctx *c = o;
	size_t i;

	if (v->kind == YN_SCALAR && !strcmp(v->str, "all")) {
		c->d.all_devices = true;
		return;
	}
	if (v->kind != YN_SEQ) {
		if (v->kind == YN_SCALAR && !ytree_is_null(v))
			ld_error(ld, v->pos, "expected all or a list of GPU indices, got '%s'", v->str);
		else
			ld_error(ld, v->pos, "expected all or a list of GPU indices, got %s",
				 ytree_kind_name(v));
		return;
	}
	c->d.devices = carve_arena_alloc(ld->a, (v->n ? v->n : 1) * sizeof(*c->d.devices));
	if (!c->d.devices) {
		carve_diag_error(ld->d, v->pos, "out of memory");
		return;
	}
	for (i = 0; i < v->n; i++) {
		size_t old = ld_push(ld, "[%zu]", i);
		int64_t x;

		if (ld_int(ld, v->items[i], 0, INT_MAX, &x))
			c->d.devices[c->d.ndevices++] = (int)x;
		ld_pop(ld, old);
	}
}

static void f_md_enabled(struct ld *ld, const struct ynode *v, void *o)
{
	ld_bool(ld, v, &((struct mig_ctx *)o)->d.mig_enabled);
}

static void f_md_migdevices(struct ld *ld, const struct ynode *v, void *o)
{
	struct mig_ctx *c = o;
	size_t i;

	c->has_mig_devices = true;
	if (ytree_is_null(v))
		return;
	if (v->kind != YN_MAP) {
		ld_error(ld, v->pos, "expected a mapping of MIG profiles to counts, got %s",
			 ytree_kind_name(v));
		return;
	}
	for (i = 0; i < v->n; i++) {
		const struct ypair *p = &v->pairs[i];
		size_t old = ld_push(ld, "[%s]", p->key->str);
		struct carve_migcount *e;
		int64_t x;

		if (!*p->key->str) {
			ld_error(ld, p->key->pos, "empty MIG profile name");
		} else if (ld_int(ld, p->val, INT64_MIN, INT_MAX, &x)) {
			if (x < 0) {
				ld_error(ld, p->val->pos, "count must not be negative, got %lld",
					 (long long)x);
			} else {
				e = LD_APPEND(ld, c->d.counts, c->d.ncounts, c->cap_counts);
				if (e) {
					e->profile = p->key->str;
					e->count = (int)x;
					e->pos = p->key->pos;
				}
			}
		}
		ld_pop(ld, old);
	}
}

static const struct ld_field migdevice_fields[] = {
	{"device-filter", f_md_filter, 0},
	{"devices", f_md_devices, LD_REQUIRED},
	{"mig-enabled", f_md_enabled, LD_REQUIRED},
	{"mig-devices", f_md_migdevices, 0},
	{NULL, NULL, 0},
};

struct migconf_ctx {
	struct carve_mf_migconfig c;
	size_t cap;
};

static void one_migdevice(struct ld *ld, const struct ynode *item, size_t i, void *o)
{
	struct migconf_ctx *mc = o;
	struct mig_ctx c;
	struct carve_mf_migdevice *e;
	size_t k;

	memset(&c, 0, sizeof(c));
	c.d.pos = item->pos;
	if (!ld_fields(ld, item, migdevice_fields, &c))
		return;
	if (c.d.mig_enabled && !c.has_mig_devices)
		ld_error(ld, item->pos,
			 "missing required field 'mig-devices' (required when mig-enabled is true)");
	else if (!c.d.mig_enabled && ytree_get(item, "mig-enabled") && c.d.ncounts)
		for (k = 0; k < item->n; k++)
			if (!strcmp(item->pairs[k].key->str, "mig-devices"))
				ld_error(ld, item->pairs[k].key->pos,
					 "mig-devices must be empty when mig-enabled is false");
	e = LD_APPEND(ld, mc->c.v, mc->c.n, mc->cap);
	if (e)
		*e = c.d;
}

/* mig-configs: {name: [entry, ...]}; a config with any error is dropped. */
static void migparted_configs(struct ld *ld, const struct ynode *v)
{
	size_t i;

	if (v->kind != YN_MAP || !v->n) {
		ld_error(ld, v->pos, "expected a mapping of config names to lists, got %s",
			 v->kind == YN_MAP ? "an empty mapping" : ytree_kind_name(v));
		return;
	}
	for (i = 0; i < v->n; i++) {
		const struct ypair *p = &v->pairs[i];
		size_t old = ld_push(ld, ".%s", p->key->str);
		size_t errs = ld->d->nerrors;
		struct migconf_ctx mc;
		struct carve_mf_migconfig *e;

		memset(&mc, 0, sizeof(mc));
		mc.c.name = p->key->str;
		mc.c.pos = p->key->pos;
		if (ytree_is_null(p->val) || (p->val->kind == YN_SEQ && !p->val->n))
			ld_error(ld, p->val->kind == YN_SEQ ? p->val->pos : p->key->pos,
				 "a config needs at least one entry");
		else
			ld_list(ld, p->val, one_migdevice, &mc);
		ld_pop(ld, old);
		if (ld->d->nerrors != errs || !*mc.c.name)
			continue;
		e = LD_APPEND(ld, ld->m->migconfigs, ld->m->nmigconfigs, ld->m->cap_migconfigs);
		if (e)
			*e = mc.c;
	}
}

static void f_mp_version(struct ld *ld, const struct ynode *v, void *o)
{
	bool *bad = o;
	const char *s;

	if (!ld_str(ld, v, &s)) {
		*bad = true;
	} else if (strcmp(s, "v1")) {
		ld_error(ld, v->pos, "unsupported version '%s' (expected v1); config skipped", s);
		*bad = true;
	}
}

static const struct ld_field migparted_fields[] = {
	{"version", f_mp_version, LD_REQUIRED},
	{"mig-configs", NULL, LD_REQUIRED},
	{NULL, NULL, 0},
};

void load_migparted(struct ld *ld, const struct ynode *doc)
{
	const struct ynode *cfgs = ytree_get(doc, "mig-configs");
	bool bad = false;
	size_t old;

	if (!ld_fields(ld, doc, migparted_fields, &bad) || bad || !ytree_get(doc, "version"))
		return;
	if (!cfgs || ytree_is_null(cfgs))
		return; /* reported as missing */
	old = ld_push(ld, ".mig-configs");
	migparted_configs(ld, cfgs);
	ld_pop(ld, old);
}

/* ---- ConfigMap ---- */

/*
 * Start of 1-based line `line` in ld->buf, or NULL.  A lookup continues
 * from the last one when it is at or before the line asked for (keys and
 * documents come in file order), so a file is scanned about once however
 * many embedded values it holds.
 */
static const char *line_start(struct ld *ld, uint32_t line)
{
	const char *p = ld->buf, *end = ld->buf + ld->buflen;
	uint32_t l = 1;

	if (ld->line_p && ld->line_n <= line) {
		p = ld->line_p;
		l = ld->line_n;
	} else if (ld->buflen >= 3 && !memcmp(ld->buf, "\xEF\xBB\xBF", 3)) {
		p += 3; /* libyaml does not count a BOM as a column */
	}
	while (l < line) {
		p = memchr(p, '\n', (size_t)(end - p));
		if (!p)
			return NULL;
		p++;
		l++;
	}
	ld->line_p = p;
	ld->line_n = l;
	return p;
}

/* The character at pos (columns count characters, as libyaml does). */
static const char *char_at(struct ld *ld, struct carve_pos pos)
{
	const char *p, *end;
	uint32_t col = 1;

	if (!ld->buf || !pos.line)
		return NULL;
	p = line_start(ld, pos.line);
	if (!p)
		return NULL;
	end = ld->buf + ld->buflen;
	while (col < pos.col && p < end && *p != '\n') {
		p++;
		while (p < end && ((unsigned char)*p & 0xC0) == 0x80)
			p++;
		col++;
	}
	return p < end ? p : NULL;
}

/*
 * Offsets that map positions in the text of data value p->val back to the
 * outer file.  A block scalar's content starts on the line after its
 * header, indented by the explicit indicator or, without one, as deep as
 * its first non-blank line.  Returns false for other styles, whose text
 * does not map back line by line.
 */
static bool embed_offsets(struct ld *ld, const struct ypair *p, uint32_t *line_off,
			  uint32_t *col_off)
{
	const struct ynode *v = p->val;
	const char *s = char_at(ld, v->pos), *end = ld->buf + ld->buflen;
	int explicit = 0;
	uint32_t indent;

	*line_off = v->pos.line - 1;
	*col_off = v->pos.col - 1;
	if (!s || (*s != '|' && *s != '>'))
		return false;
	for (s++; s < end && (*s == '+' || *s == '-' || (*s >= '1' && *s <= '9')); s++)
		if (*s != '+' && *s != '-')
			explicit = *s - '0';
	*line_off = v->pos.line;
	if (explicit) {
		*col_off = p->key->pos.col - 1 + (uint32_t)explicit;
		return true;
	}
	s = memchr(s, '\n', (size_t)(end - s));
	while (s && s < end) {
		s++;
		for (indent = 0; s < end && *s == ' '; s++)
			indent++;
		if (s < end && *s != '\n' && *s != '\r') {
			*col_off = indent;
			return true;
		}
		s = s < end ? memchr(s, '\n', (size_t)(end - s)) : NULL;
	}
	return true;
}

/* Marks the file of positions still to be moved by pin_pos. */
static const char unpinned[] = "(embedded)";

/* Moves every node under n (parsed with file `unpinned`) to pos; a node
 * reached twice through an alias is already moved. */
static void pin_pos(struct ynode *n, struct carve_pos pos)
{
	size_t i;

	if (n->pos.file != unpinned)
		return;
	n->pos = pos;
	for (i = 0; n->kind == YN_MAP && i < n->n; i++) {
		pin_pos(n->pairs[i].key, pos);
		pin_pos(n->pairs[i].val, pos);
	}
	for (i = 0; n->kind == YN_SEQ && i < n->n; i++)
		pin_pos(n->items[i], pos);
}

enum embed_kind { EMBED_NONE, EMBED_DP, EMBED_MIG };

static enum embed_kind embed_kind(const struct ynode *root)
{
	if (!root || root->kind != YN_MAP)
		return EMBED_NONE;
	if (ytree_get(root, "mig-configs"))
		return EMBED_MIG;
	if (ytree_get(root, "version") &&
	    (ytree_get(root, "sharing") || ytree_get(root, "flags") ||
	     ytree_get(root, "resources")))
		return EMBED_DP;
	return EMBED_NONE;
}

/* A value that failed to parse but was meant as a config. */
static bool looks_like_config(const char *s)
{
	return strstr(s, "mig-configs:") ||
	       (!strncmp(s, "version:", 8) || strstr(s, "\nversion:"));
}

static void cm_entry(struct ld *ld, const struct ypair *p)
{
	const char *saved_kind = ld->kind, *saved_name = ld->name;
	struct carve_diags tmp;
	struct ydocs docs;
	uint32_t line_off, col_off;
	size_t i, nconfigs = 0;
	bool exact;
	int rc;

	if (p->val->kind != YN_SCALAR) {
		ld_error(ld, p->val->pos, "data key '%s': expected a string, got %s", p->key->str,
			 ytree_kind_name(p->val));
		return;
	}
	exact = embed_offsets(ld, p, &line_off, &col_off);
	carve_diags_init(&tmp);
	rc = ytree_parse(ld->a, exact ? ld->file : unpinned, p->val->str, strlen(p->val->str),
			 exact ? line_off : 0, exact ? col_off : 0, &tmp, &docs);
	if (rc == CARVE_ENOMEM) {
		carve_diag_error(ld->d, p->val->pos, "out of memory");
		carve_diags_cleanup(&tmp);
		return;
	}
	for (i = 0; i < docs.n; i++)
		nconfigs += embed_kind(docs.v[i].root) != EMBED_NONE;
	if (!nconfigs && !(rc == CARVE_EPARSE && looks_like_config(p->val->str))) {
		ld_warn(ld, p->key->pos,
			"data key '%s' is neither a device-plugin nor a mig-parted config; skipped",
			p->key->str);
		carve_diags_cleanup(&tmp);
		return;
	}
	for (i = 0; !exact && i < docs.n; i++) {
		docs.v[i].pos = p->val->pos;
		if (docs.v[i].root)
			pin_pos(docs.v[i].root, p->val->pos);
	}
	for (i = 0; i < tmp.n; i++)
		carve_diag(ld->d, tmp.v[i].sev, exact ? tmp.v[i].pos : p->val->pos, "%s",
			   tmp.v[i].msg);
	carve_diags_cleanup(&tmp);
	for (i = 0; i < docs.n; i++) {
		const struct ynode *root = docs.v[i].root;

		if (!root || ytree_is_null(root))
			continue;
		switch (embed_kind(root)) {
		case EMBED_DP:
			ld->kind = "device-plugin config";
			ld->name = NULL;
			load_dpconfig(ld, root, p->key->str);
			break;
		case EMBED_MIG:
			ld->kind = "mig-parted config";
			ld->name = p->key->str;
			load_migparted(ld, root);
			break;
		default:
			ld_warn(ld, root->pos,
				"data key '%s': this document is neither a device-plugin nor a mig-parted config; skipped",
				p->key->str);
			break;
		}
		ld->kind = saved_kind;
		ld->name = saved_name;
	}
}

static const struct ld_field cm_fields[] = {
	{"apiVersion", NULL, 0},
	{"kind", NULL, 0},
	{"metadata", NULL, 0},
	{"data", NULL, 0},
	{"binaryData", NULL, 0},
	{"immutable", f_any_bool, 0},
	{NULL, NULL, 0},
};

void load_configmap(struct ld *ld, const struct ynode *doc)
{
	struct carve_meta meta;
	const struct ynode *data;
	char path[LD_PATH_MAX];
	size_t pathlen, i;

	memset(&meta, 0, sizeof(meta));
	ld_metadata(ld, doc, &meta, true);
	ld_fields(ld, doc, cm_fields, NULL);
	if (!meta.name || !*meta.name)
		return;
	data = ytree_get(doc, "data");
	if (!data || ytree_is_null(data))
		return;
	if (data->kind != YN_MAP) {
		size_t old = ld_push(ld, "data");

		ld_error(ld, data->pos, "expected a mapping, got %s", ytree_kind_name(data));
		ld_pop(ld, old);
		return;
	}
	memcpy(path, ld->path, sizeof(path));
	pathlen = ld->pathlen;
	for (i = 0; i < data->n; i++) {
		ld->path[0] = '\0';
		ld->pathlen = 0;
		cm_entry(ld, &data->pairs[i]);
	}
	memcpy(ld->path, path, sizeof(path));
	ld->pathlen = pathlen;
}
