/*
 * decode.h - turning YAML nodes into manifest structs, with a field path
 * and a position in every message.
 *
 * A struct ld is the context of one document: the manifest set (whose arena
 * receives every string and array), the diagnostics, the object's kind and
 * name for messages, and the current field path ("spec.resourceGroups[0]").
 * Every ld_* helper reports its own errors and returns false on a bad
 * value, leaving *out untouched, so a loader just skips what failed.
 * Messages read: "<Kind> <name>: <path>: <problem>".
 */
#ifndef CARVE_DECODE_H
#define CARVE_DECODE_H

#include "carve/arena.h"
#include "carve/manifest.h"
#include "ytree.h"

#define LD_PATH_MAX 256

struct ld {
	struct carve_manifests *m;
	struct carve_arena *a;
	struct carve_diags *d;
	const char *kind;     /* for messages: "ClusterQueue" */
	const char *name;     /* object name once known, else NULL */
	const char *api_version;
	const char *file;
	const char *buf;      /* the whole file text (for embedded YAML), may be NULL */
	size_t buflen;
	/* Where the last line lookup in buf ended (load_nvidia.c): lookups go
	 * forward in a file, so each continues from here (NULL: from the start). */
	const char *line_p;
	uint32_t line_n;
	char path[LD_PATH_MAX];
	size_t pathlen;
};

/* A field of a mapping: name and the function that decodes its value into
 * obj.  A NULL fn accepts and ignores the field (known but unused by carve).
 * LD_REQUIRED fields missing from the mapping are reported. */
struct ld_field {
	const char *name;
	void (*fn)(struct ld *ld, const struct ynode *val, void *obj);
	unsigned flags;
};
#define LD_REQUIRED 1u

/* Path handling: push returns the old length to hand back to pop. */
size_t ld_push(struct ld *ld, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;
void ld_pop(struct ld *ld, size_t old);

/* Reports at pos: "<Kind> <name>: <path>: <message>". */
void ld_error(struct ld *ld, struct carve_pos pos, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 3, 4)))
#endif
	;
void ld_warn(struct ld *ld, struct carve_pos pos, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 3, 4)))
#endif
	;

/*
 * Walks mapping `map` (reporting anything else), calling each field's fn
 * with the path extended by ".<name>".  Unknown keys are errors with a
 * "did you mean" suggestion drawn from `fields`; missing LD_REQUIRED
 * fields are errors at the mapping.  fields ends with a {NULL} entry.
 * Returns false when map is not a mapping.
 */
bool ld_fields(struct ld *ld, const struct ynode *map, const struct ld_field *fields, void *obj);

/* Calls fn for each item of a list (path extended by "[i]").  A null value
 * is an empty list.  Returns false when val is not a list. */
bool ld_list(struct ld *ld, const struct ynode *val,
	     void (*fn)(struct ld *ld, const struct ynode *item, size_t i, void *obj), void *obj);

/* Scalars.  Each reports "expected ..." on a wrong shape.  ld_str treats a
 * plain null (~, null, empty) as unset: it returns false and reports nothing. */
bool ld_str(struct ld *ld, const struct ynode *v, const char **out);
bool ld_int(struct ld *ld, const struct ynode *v, int64_t min, int64_t max, int64_t *out);
bool ld_i32(struct ld *ld, const struct ynode *v, int32_t min, int32_t max, int32_t *out);
bool ld_bool(struct ld *ld, const struct ynode *v, bool *out);
/* Kubernetes quantity into milli-units; "malformed quantity '...': why". */
bool ld_qty(struct ld *ld, const struct ynode *v, int64_t *milli);
/* A non-negative quantity (quota, capacity): also rejects negatives. */
bool ld_qty_nonneg(struct ld *ld, const struct ynode *v, int64_t *milli);
/* One of names[] (NULL-terminated); *out = index.  Unknown values get a
 * "did you mean" and the list of accepted values. */
bool ld_enum(struct ld *ld, const struct ynode *v, const char *const *names, int *out);
/* RFC 3339 timestamp ("2026-01-01T00:00:00Z", offsets allowed) to epoch seconds. */
bool ld_time(struct ld *ld, const struct ynode *v, int64_t *out);

/* Collections. */
bool ld_kvmap(struct ld *ld, const struct ynode *v, struct carve_kvlist *out);
bool ld_resmap(struct ld *ld, const struct ynode *v, struct carve_reslist *out);
/* ld_resmap for capacities and quotas: negative quantities are errors too. */
bool ld_resmap_nonneg(struct ld *ld, const struct ynode *v, struct carve_reslist *out);
bool ld_strlist(struct ld *ld, const struct ynode *v, const char ***out, size_t *n,
		struct carve_pos **pos);
bool ld_taints(struct ld *ld, const struct ynode *v, struct carve_taint **out, size_t *n);
bool ld_tolerations(struct ld *ld, const struct ynode *v, struct carve_toleration **out, size_t *n);

/* metadata: name (required, a DNS-1123 subdomain), namespace (when
 * namespaced, a DNS-1123 label), labels,
 * annotations, creationTimestamp; other Kubernetes metadata fields are
 * accepted and ignored.  Once the name is known, ld->name is set (errors in
 * the other metadata fields already name the object).  A bad name or
 * namespace is reported at its field and meta->name left NULL, so the
 * loader skips the object. */
void ld_metadata(struct ld *ld, const struct ynode *doc, struct carve_meta *meta, bool namespaced);
/* The same for a Pod or Job, which may have only metadata.generateName (the
 * API server then makes the name): meta->name becomes "<generateName>*"
 * and meta->generated is set. */
void ld_metadata_gen(struct ld *ld, const struct ynode *doc, struct carve_meta *meta,
		     bool namespaced);

/*
 * Kubernetes names (rules and sources in decode.c).  ld_dns_problem: NULL
 * when s is a valid name under rule, else why it is not, written in buf
 * ("'Bad_Name' is not a valid name: ...").  ld_dns_check reports that at
 * pos; ld_dns_name reads a string field and checks it.  Each returns false
 * (reported) on a bad name.
 */
enum ld_name_rule { LD_DNS_SUBDOMAIN, LD_DNS_LABEL };
const char *ld_dns_problem(const char *s, enum ld_name_rule rule, char *buf, size_t n);
bool ld_dns_check(struct ld *ld, struct carve_pos pos, const char *s, enum ld_name_rule rule);
bool ld_dns_name(struct ld *ld, const struct ynode *v, enum ld_name_rule rule, const char **out);

/* Most podSets in one Workload or trace job: Kueue's Workload CRD has
 * maxItems 8 on spec.podSets (kueue apis/kueue/v1beta1/workload_types.go). */
#define LD_MAX_PODSETS 8

/* Grows an arena array by one zeroed element; NULL (reported) on failure. */
void *ld_append(struct ld *ld, void **arr, size_t *n, size_t *cap, size_t size);
#define LD_APPEND(ld, arr, n, cap) \
	((__typeof__(*(arr)) *)ld_append((ld), (void **)&(arr), &(n), &(cap), sizeof(*(arr))))

/* Arena string copy (reports ENOMEM). */
const char *ld_strdup(struct ld *ld, const char *s);

/* Levenshtein-based suggestion: the closest of names[] to s, or NULL when
 * nothing is close (distance <= max(2, strlen(s) / 3), case-insensitive). */
const char *ld_suggest(const char *s, const char *const *names, size_t n);

/* Positions. */
static inline struct carve_pos ld_pos(const struct ynode *v)
{
	return v->pos;
}

#endif
