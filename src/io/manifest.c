/*
 * manifest.c - the manifest set: files and directories in, kinds
 * dispatched to their loaders (loaders.h), lookups by name.
 *
 * Invariants: every string in the set lives in priv->arena (a document's
 * scalar texts are allocated there, so loaders may keep them; its tree is
 * freed once the document is loaded, so loaders keep no node); file names are
 * interned once and outlive every position that names them.  A document
 * whose kind or apiVersion is wrong is reported and skipped whole; the
 * documents around it still load.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "carve/jobs.h"
#include "loaders.h"
#include "manifest_int.h"
#include "readfile.h"
#include "walk.h"

#define MAX_FILE_BYTES (256u * 1024u * 1024u)

struct carve_manifests *carve_manifests_create(void)
{
	struct carve_manifests *m = carve_calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->priv = carve_calloc(1, sizeof(*m->priv));
	if (!m->priv) {
		carve_free(m);
		return NULL;
	}
	carve_arena_init(&m->priv->arena);
	carve_diags_init(&m->diags);
	m->diags.max = CARVE_DIAGS_MAX;
	return m;
}

void carve_manifests_destroy(struct carve_manifests *m)
{
	if (!m)
		return;
	carve_diags_cleanup(&m->diags);
	carve_arena_cleanup(&m->priv->arena);
	carve_free(m->priv);
	carve_free(m);
}

/* ---- kind table ---- */

static const char *const v_core[] = {"v1", NULL};
static const char *const v_batch[] = {"batch/v1", NULL};
static const char *const v_sched[] = {"scheduling.k8s.io/v1", NULL};
static const char *const v_kueue[] = {"kueue.x-k8s.io/v1beta1", "kueue.x-k8s.io/v1beta2", NULL};
static const char *const v_kueue_topo[] = {"kueue.x-k8s.io/v1alpha1", "kueue.x-k8s.io/v1beta1",
					   "kueue.x-k8s.io/v1beta2", NULL};
static const char *const v_volcano[] = {"scheduling.volcano.sh/v1beta1", NULL};
static const char *const v_kai_q[] = {"scheduling.run.ai/v2", NULL};
static const char *const v_kai_pg[] = {"scheduling.run.ai/v2alpha2", NULL};
static const char *const v_kai_topo[] = {"kai.scheduler/v1alpha1", NULL};
static const char *const v_carve[] = {"carve.dev/v1alpha1", NULL};
static const char *const v_kueue_cfg[] = {"config.kueue.x-k8s.io/v1beta1",
					  "config.kueue.x-k8s.io/v1beta2", NULL};
static const char *const v_cosched[] = {"scheduling.x-k8s.io/v1alpha1", NULL};
static const char *const v_jobset[] = {"jobset.x-k8s.io/v1alpha2", NULL};
static const char *const v_vcbatch[] = {"batch.volcano.sh/v1alpha1", NULL};

struct kind_entry {
	const char *kind;
	const char *const *versions;
	void (*load)(struct ld *ld, const struct ynode *doc);
};

/* Several kinds share a name across API groups (Queue, PodGroup, Topology):
 * the apiVersion picks the entry. */
static const struct kind_entry kinds[] = {
	{"Node", v_core, load_node},
	{"Pod", v_core, load_pod},
	{"ConfigMap", v_core, load_configmap},
	{"Job", v_batch, load_job},
	{"Job", v_vcbatch, load_vcjob},
	{"JobSet", v_jobset, load_jobset},
	{"PriorityClass", v_sched, load_wpc},
	{"NodePool", v_carve, load_nodepool},
	{"ResourceFlavor", v_kueue, load_flavor},
	{"ClusterQueue", v_kueue, load_cq},
	{"Cohort", v_kueue, load_cohort},
	{"LocalQueue", v_kueue, load_lq},
	{"WorkloadPriorityClass", v_kueue, load_wpc},
	{"Workload", v_kueue, load_workload},
	{"Topology", v_kueue_topo, load_topology},
	{"Topology", v_kai_topo, load_topology},
	{"Queue", v_volcano, load_vcqueue},
	{"PodGroup", v_volcano, load_podgroup},
	{"Queue", v_kai_q, load_kaiqueue},
	{"PodGroup", v_kai_pg, load_kaipodgroup},
	{"PodGroup", v_cosched, load_cospodgroup},
	{"Configuration", v_kueue_cfg, load_kueue_config},
	/* carve's own queue CRDs: Kueue v1beta2's spec schema under carve's
	 * group (deploy/), read as kueue.x-k8s.io/v1beta2 (load_kueue.c). */
	{"ResourceFlavor", v_carve, load_flavor},
	{"ClusterQueue", v_carve, load_cq},
	{"Cohort", v_carve, load_cohort},
	{"LocalQueue", v_carve, load_lq},
	{"WorkloadPriorityClass", v_carve, load_wpc},
	{NULL, NULL, NULL},
};

/*
 * Kinds of the groups above that carve knows of but does not read: skipped
 * with one warning, never taken for a typo of a kind it reads.  (A kind of
 * any other API group is skipped with the same warning; this list only
 * keeps the typo check of the groups carve reads from firing on them.)
 */
static const char *const foreign_kinds[] = {
	/* core v1 */
	"Namespace", "Service", "Secret", "ServiceAccount", "PersistentVolume",
	"PersistentVolumeClaim", "Endpoints", "Event", "LimitRange", "ResourceQuota",
	"ReplicationController", "PodTemplate", "Binding", "ComponentStatus",
	/* batch, scheduling.k8s.io (Kubernetes 1.35 Workload API, alpha) */
	"CronJob", "Workload", "PodGroup",
	/* kueue.x-k8s.io */
	"AdmissionCheck", "ProvisioningRequestConfig", "MultiKueueConfig",
	"MultiKueueCluster",
	/* scheduling.volcano.sh, scheduling.run.ai, kai.scheduler */
	"HyperNode", "SchedulingShard", "BindRequest", "Config",
	NULL,
};

static bool in_list(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(s, *list))
			return true;
	return false;
}

/* The API group of an apiVersion ("kueue.x-k8s.io/v1beta2" -> "kueue.x-k8s.io",
 * "v1" -> ""), into buf. */
static const char *group_of(const char *api, char *buf, size_t size)
{
	const char *slash = strrchr(api, '/');
	size_t n = slash ? (size_t)(slash - api) : 0;

	if (n >= size)
		n = size - 1;
	memcpy(buf, api, n);
	buf[n] = '\0';
	return buf;
}

/* Whether group g is one some kind of the table is read from. */
static bool group_read(const char *g)
{
	char buf[128];
	size_t i, j;

	for (i = 0; kinds[i].kind; i++)
		for (j = 0; kinds[i].versions[j]; j++)
			if (!strcmp(group_of(kinds[i].versions[j], buf, sizeof(buf)), g))
				return true;
	return false;
}

/* Edit distance of two short strings (capped inputs), for group typos. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	size_t row[129];

	if (la > 128 || lb > 128)
		return (size_t)-1;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb];
}

static void load_root(struct ld *ld, const struct ynode *root, int depth);
static void load_typed(struct ld *ld, const struct ynode *doc, const char *kind, const char *api,
		       struct carve_pos kpos, struct carve_pos apos);

/*
 * kind: List (as `kubectl get -o yaml` writes it) or a typed list such as
 * PodList (as the API server returns one): every item is read as a
 * document of its own, at its own position.  Items of a typed list may
 * leave out kind and apiVersion (the server strips them); they are then
 * the list's kind without "List" and the list's apiVersion.
 */
static void load_list(struct ld *ld, const struct ynode *doc, const char *kind, const char *api,
		      int depth)
{
	const struct ynode *items = ytree_get(doc, "items");
	size_t n = strlen(kind), i;
	const char *item_kind = n > 4 ? carve_arena_strndup(ld->a, kind, n - 4) : NULL;

	if (items && ytree_is_null(items))
		return;
	if (!items || items->kind != YN_SEQ) {
		carve_diag_error(ld->d, items ? items->pos : doc->pos,
				 "%s: 'items' must be a list of objects", kind);
		return;
	}
	for (i = 0; i < items->n; i++) {
		const struct ynode *it = items->items[i];

		if (it->kind == YN_MAP && item_kind && !ytree_get(it, "kind")) {
			const struct ynode *v = ytree_get(it, "apiVersion");

			ld->name = NULL;
			ld->kind = item_kind;
			ld->path[0] = '\0';
			ld->pathlen = 0;
			ld->m->ndocs++;
			load_typed(ld, it, item_kind, v && v->kind == YN_SCALAR ? v->str : api,
				   it->pos, v ? v->pos : doc->pos);
			continue;
		}
		load_root(ld, it, depth + 1);
	}
}

/*
 * Dispatches a document of kind `kind` and apiVersion `api` (positions of
 * both for messages): to its loader when carve reads it; an error when the
 * group is read but not the version, or the kind looks like a typo of one
 * carve reads (in a group it reads, or a near miss of such a group);
 * otherwise one warning naming it, and the document is skipped.
 */
static void load_typed(struct ld *ld, const struct ynode *doc, const char *kind, const char *api,
		       struct carve_pos kpos, struct carve_pos apos)
{
	const char *names[32];
	size_t n = 0, i, j;
	char grp[128], kg[128];
	const char *s;
	bool same_group = false;

	group_of(api, grp, sizeof(grp));
	for (i = 0; kinds[i].kind; i++) {
		if (strcmp(kinds[i].kind, kind))
			continue;
		if (in_list(api, kinds[i].versions)) {
			ld->kind = kinds[i].kind;
			ld->api_version = api;
			kinds[i].load(ld, doc);
			return;
		}
		for (j = 0; kinds[i].versions[j]; j++)
			if (!strcmp(group_of(kinds[i].versions[j], kg, sizeof(kg)), grp))
				same_group = true;
	}
	if (same_group) {
		char list[256];
		size_t len = 0;

		list[0] = '\0';
		for (i = 0; kinds[i].kind; i++)
			if (!strcmp(kinds[i].kind, kind))
				for (j = 0; kinds[i].versions[j] && len < sizeof(list); j++)
					len += (size_t)snprintf(list + len, sizeof(list) - len,
								"%s%s", len ? ", " : "",
								kinds[i].versions[j]);
		carve_diag_error(ld->d, apos, "%s: unsupported apiVersion '%s' (carve reads: %s)",
				 kind, api, list);
		return;
	}
	/* The kind carve reads, in a group one letter or two off its own. */
	for (i = 0; kinds[i].kind; i++) {
		if (strcmp(kinds[i].kind, kind))
			continue;
		for (j = 0; kinds[i].versions[j]; j++) {
			size_t d = edit_distance(grp, group_of(kinds[i].versions[j], kg, sizeof(kg)));

			if (*grp && d > 0 && d <= 2) {
				carve_diag_error(ld->d, apos, "%s: unknown API group in apiVersion "
						 "'%s' (did you mean '%s'?)", kind, api,
						 kinds[i].versions[j]);
				return;
			}
		}
	}
	/* A typo (or wrong case) of a kind carve reads from this group. */
	if (group_read(grp) && !in_list(kind, foreign_kinds)) {
		for (i = 0; kinds[i].kind && n < 32; i++)
			for (j = 0; kinds[i].versions[j]; j++)
				if (!strcmp(group_of(kinds[i].versions[j], kg, sizeof(kg)), grp)) {
					names[n++] = kinds[i].kind;
					break;
				}
		s = ld_suggest(kind, names, n);
		if (s) {
			carve_diag_error(ld->d, kpos, "unknown kind '%s' (did you mean '%s'?)",
					 kind, s);
			return;
		}
	}
	carve_diag_warn(ld->d, kpos, "kind %s (%s) is not read by carve; document skipped", kind,
			api);
}

static void load_kind(struct ld *ld, const struct ynode *doc, const struct ynode *kind,
		      const struct ynode *apiv, int depth)
{
	size_t n;

	if (kind->kind != YN_SCALAR || !*kind->str) {
		carve_diag_error(ld->d, kind->pos, "'kind' must be a non-empty string");
		return;
	}
	if (!apiv || apiv->kind != YN_SCALAR || !*apiv->str) {
		carve_diag_error(ld->d, apiv ? apiv->pos : doc->pos,
				 "%s: missing or empty 'apiVersion'", kind->str);
		return;
	}
	n = strlen(kind->str);
	if (n >= 4 && !strcmp(kind->str + n - 4, "List") &&
	    (n == 4 || ytree_get(doc, "items"))) {
		if (depth > 0) {
			carve_diag_error(ld->d, kind->pos, "%s inside a list is not read", kind->str);
			return;
		}
		ld->m->ndocs--; /* the list is not a document; its items are */
		load_list(ld, doc, kind->str, apiv->str, depth);
		return;
	}
	load_typed(ld, doc, kind->str, apiv->str, kind->pos, apiv->pos);
}

static const char *base_name(struct ld *ld, const char *file)
{
	const char *b = strrchr(file, '/');
	const char *dot;

	b = b ? b + 1 : file;
	dot = strrchr(b, '.');
	return carve_arena_strndup(ld->a, b, dot && dot != b ? (size_t)(dot - b) : strlen(b));
}

/* One document (or list item) root: by kind, else by its shape (NVIDIA's
 * configs carry no kind). */
static void load_root(struct ld *ld, const struct ynode *root, int depth)
{
	const struct ynode *kind;

	ld->name = NULL;
	ld->kind = "document";
	ld->path[0] = '\0';
	ld->pathlen = 0;
	if (!root || ytree_is_null(root))
		return;
	ld->m->ndocs++;
	if (root->kind != YN_MAP) {
		carve_diag_error(ld->d, root->pos, "expected a mapping at the top of the %s, got %s",
				 depth ? "list item" : "document", ytree_kind_name(root));
		return;
	}
	kind = ytree_get(root, "kind");
	if (kind) {
		load_kind(ld, root, kind, ytree_get(root, "apiVersion"), depth);
		return;
	}
	if (ytree_get(root, "mig-configs")) {
		ld->kind = "mig-parted config";
		load_migparted(ld, root);
		return;
	}
	if (ytree_get(root, "version") &&
	    (ytree_get(root, "sharing") || ytree_get(root, "flags") ||
	     ytree_get(root, "resources"))) {
		ld->kind = "device-plugin config";
		load_dpconfig(ld, root, base_name(ld, ld->file));
		return;
	}
	carve_diag_error(ld->d, root->pos,
			 "document has no 'kind' and is neither a device-plugin config "
			 "(version, sharing) nor a mig-parted config (version, mig-configs)");
}

static int load_one(void *ctx, const struct ydoc *doc)
{
	load_root(ctx, doc->root, 0);
	return 0;
}

void carve__manifests_load_root(struct carve_manifests *m, const char *file,
				const struct ynode *root)
{
	struct ld ld;

	memset(&ld, 0, sizeof(ld));
	ld.m = m;
	ld.a = &m->priv->arena;
	ld.d = &m->diags;
	ld.file = file;
	load_root(&ld, root, 0);
}

int carve_manifests_load_yaml(struct carve_manifests *m, const char *name,
			      const char *buf, size_t len)
{
	struct ld ld;
	int rc;
	const char *file = carve_arena_strdup(&m->priv->arena, name);

	if (!file)
		return CARVE_ENOMEM;
	memset(&ld, 0, sizeof(ld));
	ld.m = m;
	ld.a = &m->priv->arena;
	ld.d = &m->diags;
	ld.file = file;
	ld.buf = buf; /* the caller's, read only while documents load */
	ld.buflen = len;
	/* Each document is decoded as soon as it is parsed and its tree freed
	 * then: the set keeps the scalar texts and what the loaders built, not
	 * the trees (docs/limits.md).  On a syntax error, the documents before
	 * it are loaded already. */
	rc = ytree_parse_each(ld.a, file, buf, len, ld.d, load_one, &ld);
	return rc == CARVE_ENOMEM ? rc : 0;
}

static int load_file(struct carve_manifests *m, const char *path)
{
	char *buf;
	size_t len;
	int rc = carve__read_file(&m->diags, path, MAX_FILE_BYTES, &buf, &len);

	if (rc)
		return rc;
	if (carve__has_ext(path, ".csv"))
		rc = carve_manifests_load_csv(m, path, buf, len);
	else
		rc = carve_manifests_load_yaml(m, path, buf, len);
	carve_free(buf);
	return rc;
}

/* Directories entered during one load_path, by (device, inode), so a
 * symlink to ".", ".." or another directory already read is not followed
 * again. */
struct visited {
	size_t n, cap;
	struct {
		dev_t dev;
		ino_t ino;
	} *v;
};

/* Records st's directory; false when it was already there (or no memory,
 * reported by the caller as ENOMEM through *oom). */
static bool visit(struct visited *vs, const struct stat *st, bool *oom)
{
	size_t i;

	for (i = 0; i < vs->n; i++)
		if (vs->v[i].dev == st->st_dev && vs->v[i].ino == st->st_ino)
			return false;
	if (vs->n == vs->cap) {
		size_t c = vs->cap ? vs->cap * 2 : 16;
		void *nv = carve_realloc(vs->v, c * sizeof(*vs->v));

		if (!nv) {
			*oom = true;
			return false;
		}
		vs->v = nv;
		vs->cap = c;
	}
	vs->v[vs->n].dev = st->st_dev;
	vs->v[vs->n++].ino = st->st_ino;
	return true;
}

/* The set's own copy of s (positions keep file names for the set's life). */
static struct carve_pos file_pos(struct carve_manifests *m, const char *s)
{
	return (struct carve_pos){carve_arena_strdup(&m->priv->arena, s), 0, 0};
}

static int load_dir(struct carve_manifests *m, const char *path, int depth,
		    struct visited *vs)
{
	char **names;
	size_t n, i;
	int rc;

	if (depth > 16)
		return 0;
	rc = carve__walk_dir(&m->diags, path, NULL, &names, &n);
	if (rc)
		return rc;
	for (i = 0; i < n && rc != CARVE_ENOMEM; i++) {
		struct stat st;
		bool oom = false;

		if (stat(names[i], &st))
			continue;
		if (S_ISDIR(st.st_mode)) {
			if (visit(vs, &st, &oom))
				rc = load_dir(m, names[i], depth + 1, vs);
			else if (oom)
				rc = CARVE_ENOMEM;
			else
				carve_diag_warn(&m->diags, file_pos(m, names[i]),
						"skipping directory already read via another path");
		} else if (carve_jobs_is_trace_name(names[i])) {
			/* Workload traces (carve trace check, docs/trace-format.md)
			 * sit beside a scenario's manifests but are not manifests. */
			continue;
		} else if (carve__has_ext(names[i], ".yaml") || carve__has_ext(names[i], ".yml") ||
			   carve__has_ext(names[i], ".csv")) {
			/* a regular file: the walker left out FIFOs and devices */
			rc = load_file(m, names[i]);
		}
	}
	carve__walk_free(names, n);
	return rc;
}

int carve_manifests_load_path(struct carve_manifests *m, const char *path)
{
	struct visited vs = {0, 0, NULL};
	struct stat st;
	bool oom = false;
	int rc;

	if (stat(path, &st)) {
		carve_diag_error(&m->diags, (struct carve_pos){0}, "cannot open %s: %s", path,
				 strerror(errno));
		return CARVE_EIO;
	}
	if (!S_ISDIR(st.st_mode))
		return load_file(m, path);
	if (!visit(&vs, &st, &oom))
		return CARVE_ENOMEM;
	rc = load_dir(m, path, 0, &vs);
	carve_free(vs.v);
	return rc;
}

/* ---- lookups ---- */

#define FIND_BY_NAME(arr, n, name)                          \
	do {                                                \
		size_t i_;                                  \
		for (i_ = 0; i_ < (n); i_++)                \
			if (!strcmp((arr)[i_].meta.name, (name))) \
				return &(arr)[i_];          \
		return NULL;                                \
	} while (0)

const struct carve_mf_flavor *carve_mf_find_flavor(const struct carve_manifests *m, const char *name)
{
	FIND_BY_NAME(m->flavors, m->nflavors, name);
}

const struct carve_mf_topology *carve_mf_find_topology(const struct carve_manifests *m,
							const char *name)
{
	FIND_BY_NAME(m->topologies, m->ntopologies, name);
}

const struct carve_mf_cq *carve_mf_find_cq(const struct carve_manifests *m, const char *name)
{
	FIND_BY_NAME(m->cqs, m->ncqs, name);
}

const struct carve_mf_cohort *carve_mf_find_cohort(const struct carve_manifests *m, const char *name)
{
	FIND_BY_NAME(m->cohorts, m->ncohorts, name);
}

const struct carve_mf_localqueue *carve_mf_find_lq(const struct carve_manifests *m,
						   const char *ns, const char *name)
{
	size_t i;

	for (i = 0; i < m->nlqs; i++)
		if (!strcmp(m->lqs[i].meta.name, name) && !strcmp(m->lqs[i].meta.ns, ns))
			return &m->lqs[i];
	return NULL;
}

const struct carve_mf_dpconfig *carve_mf_find_dpconfig(const struct carve_manifests *m, const char *name)
{
	size_t i;

	for (i = 0; i < m->ndpconfigs; i++)
		if (!strcmp(m->dpconfigs[i].name, name))
			return &m->dpconfigs[i];
	return NULL;
}

const struct carve_mf_migconfig *carve_mf_find_migconfig(const struct carve_manifests *m, const char *name)
{
	size_t i;

	for (i = 0; i < m->nmigconfigs; i++)
		if (!strcmp(m->migconfigs[i].name, name))
			return &m->migconfigs[i];
	return NULL;
}
