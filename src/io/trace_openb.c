/*
 * trace_openb.c - the openb pod list (include/carve/trace.h) into plain
 * task structs.
 *
 * Ownership: every string a task points to, its models array and the file
 * names its positions use live in the trace's arena; the task array itself
 * is one carve_realloc'd block.  Both go with carve_trace_destroy().
 * Columns: the first five (name .. gpu_milli) are required, in that order;
 * the six after them are optional, in any order, each at most once (the
 * multi-GPU lists published with the FGD simulator have only the five).  A
 * column the header lacks reads as an empty value in every row: any GPU
 * model, empty qos and phase, no times.
 *
 * Invariant: a row lands in the trace only when every field parsed; a bad
 * field is reported at its column and the row is skipped, so a kept task
 * always has 0 <= num_gpu <= CARVE_TASK_MAX_GPUS, gpu_milli in 1..1000 when
 * num_gpu > 0 and 0 when num_gpu == 0, and a memory_mib whose milli-byte
 * count fits int64.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "carve/arena.h"
#include "carve/trace.h"
#include "csvsplit.h"
#include "jobs_int.h"
#include "readfile.h"

#define NCOLS 11
#define NREQ 5           /* name .. gpu_milli; the rest are optional */
#define MAXF (NCOLS + 1) /* one more, to see a long row */
#define MAX_FILE_BYTES (1024u << 20)
/* Largest memory_mib whose milli-byte count (MiB * 2^20 * 1000) fits int64. */
#define MAX_MEMORY_MIB (INT64_MAX / (1024LL * 1024 * 1000))

enum col {
	C_NAME, C_CPU, C_MEM, C_NGPU, C_GMILLI, C_SPEC, C_QOS, C_PHASE, C_CTIME, C_DTIME, C_STIME
};

static const char *const columns[NCOLS] = {
	"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec",
	"qos", "pod_phase", "creation_time", "deletion_time", "scheduled_time",
};

#define HEADER "name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec,qos,pod_phase," \
	       "creation_time,deletion_time,scheduled_time]"

struct carve_trace_int {
	struct carve_arena arena;
	size_t cap;
};

/* One file being loaded. */
struct rd {
	struct carve_trace *t;
	struct carve_diags *d;
	const char *file;
	size_t nfields;          /* columns in the header: NREQ..NCOLS */
	enum col colof[NCOLS];   /* the column of each header field */
	bool oom;
};

struct carve_trace *carve_trace_create(void)
{
	struct carve_trace *t = carve_calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->priv = carve_calloc(1, sizeof(*t->priv));
	if (!t->priv) {
		carve_free(t);
		return NULL;
	}
	carve_arena_init(&t->priv->arena);
	return t;
}

void carve_trace_destroy(struct carve_trace *t)
{
	if (!t)
		return;
	if (t->priv)
		carve_arena_cleanup(&t->priv->arena);
	carve_free(t->priv);
	carve_free(t->tasks);
	carve_free(t);
}

int64_t carve_task_gpu_milli(const struct carve_task *task)
{
	return (int64_t)task->num_gpu * task->gpu_milli;
}

static struct carve_pos at(const struct rd *r, uint32_t line, uint32_t col)
{
	return (struct carve_pos){r->file, line, col};
}

static bool field_is(const struct csv_field *f, const char *name)
{
	return f->len == strlen(name) && !memcmp(f->s, name, f->len);
}

/*
 * The header: the NREQ required columns in order, then optional columns in
 * any order, each at most once.  Fills r->nfields and r->colof; false (with
 * the error at the offending column) when the file cannot be read.
 */
static bool check_header(struct rd *r, const char *s, const char *end)
{
	struct csv_field f[MAXF];
	size_t n = csv_split(s, end, f, MAXF), i, k;
	bool seen[NCOLS] = {false};

	for (i = 0; i < NREQ; i++) {
		if (i >= n) {
			carve_diag_error(r->d, at(r, 1, (uint32_t)(end - s) + 1),
					 "header: missing column '%s' (the header must be " HEADER ")",
					 columns[i]);
			return false;
		}
		if (!field_is(&f[i], columns[i])) {
			carve_diag_error(r->d, at(r, 1, f[i].col),
					 "header: unexpected column '%.*s' where '%s' belongs (the "
					 "header must be " HEADER ")",
					 (int)f[i].len, f[i].s, columns[i]);
			return false;
		}
		r->colof[i] = (enum col)i;
	}
	for (i = NREQ; i < n; i++) {
		for (k = NREQ; k < NCOLS && !field_is(&f[i], columns[k]); k++)
			;
		if (i >= NCOLS || k == NCOLS || seen[k]) {
			carve_diag_error(r->d, at(r, 1, f[i].col),
					 "header: %s column '%.*s' (the header must be " HEADER ")",
					 k < NCOLS && seen[k] ? "repeated" : "unexpected",
					 (int)f[i].len, f[i].s);
			return false;
		}
		seen[k] = true;
		r->colof[i] = (enum col)k;
	}
	r->nfields = n;
	return true;
}

/* A non-negative decimal integer no larger than max; reports on failure.
 * An empty field is allowed when empty_ok (then *out = -1). */
static bool field_int(struct rd *r, uint32_t line, const struct csv_field *f, int col, int64_t max,
		      bool empty_ok, int64_t *out)
{
	char buf[32];
	long long x;
	size_t i;

	if (!f->len && empty_ok) {
		*out = -1;
		return true;
	}
	for (i = 0; i < f->len; i++)
		if (f->s[i] < '0' || f->s[i] > '9')
			break;
	if (!f->len || i < f->len) {
		carve_diag_error(r->d, at(r, line, f->col),
				 "%s: expected a non-negative integer, got '%.*s'", columns[col],
				 (int)f->len, f->s);
		return false;
	}
	if (f->len >= sizeof(buf))
		goto range;
	memcpy(buf, f->s, f->len);
	buf[f->len] = '\0';
	errno = 0;
	x = strtoll(buf, NULL, 10);
	if (errno == ERANGE || x > max)
		goto range;
	*out = x;
	return true;
range:
	carve_diag_error(r->d, at(r, line, f->col), "%s: %.*s is too large (at most %lld)",
			 columns[col], (int)f->len, f->s, (long long)max);
	return false;
}

static char *dup(struct rd *r, const char *s, size_t n)
{
	char *c = carve_arena_strndup(&r->t->priv->arena, s, n);

	if (!c)
		r->oom = true;
	return c;
}

/*
 * gpu_spec: names separated by '|', kept once each in first-seen order.
 * An empty name ("A||B", a trailing '|') is an error at its column.
 */
static bool parse_spec(struct rd *r, uint32_t line, const struct csv_field *f,
		       struct carve_task *task)
{
	const char *s = f->s, *end = f->s + f->len, *p;
	const char **v;
	size_t n = 1, k = 0, i;

	task->gpu_spec = dup(r, f->s, f->len);
	if (!task->gpu_spec)
		return false;
	if (!f->len)
		return true;
	for (p = s; p < end; p++)
		n += *p == '|';
	v = carve_arena_alloc(&r->t->priv->arena, n * sizeof(*v));
	if (!v) {
		r->oom = true;
		return false;
	}
	for (p = s;; p++) {
		if (p < end && *p != '|')
			continue;
		if (p == s) {
			carve_diag_error(r->d, at(r, line, f->col + (uint32_t)(s - f->s)),
					 "gpu_spec: empty model name in '%.*s'", (int)f->len, f->s);
			return false;
		}
		for (i = 0; i < k && (strlen(v[i]) != (size_t)(p - s) ||
				      memcmp(v[i], s, (size_t)(p - s)));
		     i++)
			;
		if (i == k && !(v[k++] = dup(r, s, (size_t)(p - s))))
			return false;
		if (p == end)
			break;
		s = p + 1;
	}
	task->nmodels = k;
	task->models = v;
	return true;
}

static void append(struct rd *r, const struct carve_task *task)
{
	struct carve_trace *t = r->t;

	if (t->n == t->priv->cap) {
		size_t cap = t->priv->cap ? t->priv->cap * 2 : 1024;
		struct carve_task *nv = carve_realloc(t->tasks, cap * sizeof(*nv));

		if (!nv) {
			r->oom = true;
			return;
		}
		t->tasks = nv;
		t->priv->cap = cap;
	}
	t->tasks[t->n++] = *task;
}

/* The row's fields by column; a column the header lacks is empty. */
static void by_column(const struct rd *r, const struct csv_field *in, struct csv_field *f)
{
	size_t i;

	for (i = 0; i < NCOLS; i++)
		f[i] = (struct csv_field){"", 0, 1};
	for (i = 0; i < r->nfields; i++)
		f[r->colof[i]] = in[i];
}

static void load_row(struct rd *r, uint32_t line, const char *s, const char *end)
{
	struct csv_field in[MAXF], f[NCOLS];
	size_t n = csv_split(s, end, in, MAXF);
	struct carve_task task;
	int64_t ngpu = 0, gmilli = 0;
	bool ok = true;

	if (n != r->nfields) {
		carve_diag_error(r->d, at(r, line, n < r->nfields ? 1 : in[r->nfields].col),
				 "row has %zu field%s, expected %zu (as the header); row skipped",
				 n, n == 1 ? "" : "s", r->nfields);
		return;
	}
	by_column(r, in, f);
	memset(&task, 0, sizeof(task));
	if (!f[C_NAME].len) {
		carve_diag_error(r->d, at(r, line, 1), "name: empty task name");
		ok = false;
	}
	ok &= field_int(r, line, &f[C_CPU], C_CPU, INT64_MAX / 1000, false, &task.cpu_milli);
	ok &= field_int(r, line, &f[C_MEM], C_MEM, MAX_MEMORY_MIB, false, &task.memory_mib);
	ok &= field_int(r, line, &f[C_NGPU], C_NGPU, CARVE_TASK_MAX_GPUS, false, &ngpu);
	ok &= field_int(r, line, &f[C_GMILLI], C_GMILLI, 1000, false, &gmilli);
	ok &= field_int(r, line, &f[C_CTIME], C_CTIME, INT64_MAX, true, &task.creation_time);
	ok &= field_int(r, line, &f[C_DTIME], C_DTIME, INT64_MAX, true, &task.deletion_time);
	ok &= field_int(r, line, &f[C_STIME], C_STIME, INT64_MAX, true, &task.scheduled_time);
	if (ok && ngpu > 0 && gmilli == 0) {
		carve_diag_error(r->d, at(r, line, f[C_GMILLI].col),
				 "gpu_milli: 0 for a task with %lld GPU%s (expected 1..1000)",
				 (long long)ngpu, ngpu == 1 ? "" : "s");
		ok = false;
	}
	if (ok && ngpu == 0 && gmilli > 0) {
		carve_diag_error(r->d, at(r, line, f[C_GMILLI].col),
				 "gpu_milli: %lld for a task without GPUs (num_gpu 0)",
				 (long long)gmilli);
		ok = false;
	}
	if (!ok || !parse_spec(r, line, &f[C_SPEC], &task))
		return;
	task.num_gpu = (int)ngpu;
	task.gpu_milli = (int)gmilli;
	task.name = dup(r, f[C_NAME].s, f[C_NAME].len);
	task.qos = dup(r, f[C_QOS].s, f[C_QOS].len);
	task.phase = dup(r, f[C_PHASE].s, f[C_PHASE].len);
	task.pos = at(r, line, 1);
	if (task.name && task.qos && task.phase)
		append(r, &task);
}

/* Task indexes ordered by name, then by row. */
static const struct carve_task *sort_tasks;

static int cmp_task(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c = strcmp(sort_tasks[x].name, sort_tasks[y].name);

	return c ? c : (x > y) - (x < y);
}

/*
 * A pod name is one pod: a row whose name an earlier row has (this file's
 * or an earlier file's of the same trace) is an error at the row and is
 * dropped.  Rows from index n0 on are this file's.
 */
static int drop_duplicates(struct carve_trace *t, size_t n0, struct carve_diags *d)
{
	size_t *ix, i, k, first = 0;
	bool *dup;

	if (t->n - n0 == 0)
		return 0;
	ix = carve_malloc(t->n * sizeof(*ix));
	dup = carve_calloc(t->n, sizeof(*dup));
	if (!ix || !dup) {
		carve_free(ix);
		carve_free(dup);
		return CARVE_ENOMEM;
	}
	for (i = 0; i < t->n; i++)
		ix[i] = i;
	sort_tasks = t->tasks;
	qsort(ix, t->n, sizeof(*ix), cmp_task);
	for (i = 0; i < t->n; i++) {
		const struct carve_task *k0 = &t->tasks[ix[first]], *ki = &t->tasks[ix[i]];

		if (i == 0 || strcmp(k0->name, ki->name)) {
			first = i;
			continue;
		}
		if (ix[i] < n0)
			continue;
		dup[ix[i]] = true;
		if (k0->pos.file == ki->pos.file)
			carve_diag_error(d, (struct carve_pos){ki->pos.file, ki->pos.line, 1},
					 "name: pod '%s' is already at line %u; row skipped",
					 ki->name, (unsigned)k0->pos.line);
		else
			carve_diag_error(d, (struct carve_pos){ki->pos.file, ki->pos.line, 1},
					 "name: pod '%s' is already at %s:%u; row skipped",
					 ki->name, k0->pos.file, (unsigned)k0->pos.line);
	}
	for (i = n0, k = n0; i < t->n; i++)
		if (!dup[i])
			t->tasks[k++] = t->tasks[i];
	t->n = k;
	carve_free(ix);
	carve_free(dup);
	return 0;
}

int carve_trace_load_openb_buf(struct carve_trace *t, const char *name, const char *buf,
			       size_t len, struct carve_diags *d)
{
	const char *file;

	if (!t || !d || (len && !buf))
		return CARVE_EINVAL;
	file = carve_arena_strdup(&t->priv->arena, name ? name : "(trace)");
	if (!file)
		return CARVE_ENOMEM;
	return carve__trace_load_openb_kept(t, file, buf, len, d);
}

int carve__trace_load_openb_kept(struct carve_trace *t, const char *file, const char *buf,
				 size_t len, struct carve_diags *d)
{
	const char *p = buf, *end = buf + len;
	struct rd r;
	uint32_t line = 1;
	size_t n0 = t->n;

	memset(&r, 0, sizeof(r));
	r.t = t;
	r.d = d;
	r.file = file;
	if (len >= 3 && !memcmp(p, "\xEF\xBB\xBF", 3))
		p += 3;
	for (; p < end && !r.oom; line++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end;

		const char *why;
		uint32_t col;

		if (e > p && e[-1] == '\r')
			e--;
		if ((why = csv_line_problem(p, e, &col))) {
			carve_diag_error(d, at(&r, line, col), "%s; %s skipped", why,
					 line == 1 ? "file" : "row");
			if (line == 1)
				return 0;
		} else if (line == 1) {
			if (!check_header(&r, p, e))
				return 0;
		} else if (e > p) {
			load_row(&r, line, p, e);
		}
		p = nl ? nl + 1 : end;
	}
	if (!r.oom && drop_duplicates(t, n0, d))
		r.oom = true;
	if (r.oom) {
		carve_diag_error(d, at(&r, line - 1, 1), "out of memory loading the trace");
		return CARVE_ENOMEM;
	}
	if (line == 1)
		carve_diag_error(d, at(&r, 1, 1), "empty file (expected the header " HEADER ")");
	return 0;
}

int carve_trace_load_openb(struct carve_trace *t, const char *path, struct carve_diags *d)
{
	char *buf;
	size_t len;
	int rc;

	if (!t || !path || !d)
		return CARVE_EINVAL;
	rc = carve__read_file(d, path, MAX_FILE_BYTES, &buf, &len);
	if (rc)
		return rc;
	rc = carve_trace_load_openb_buf(t, path, buf, len, d);
	carve_free(buf);
	return rc;
}

bool carve_trace_is_openb(const char *path)
{
	static const char head[] = "name,cpu_milli,memory_mib,num_gpu";
	char buf[sizeof(head) + 3];
	FILE *f = fopen(path, "r");
	size_t n, skip = 0;

	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	if (n >= 3 && !memcmp(buf, "\xEF\xBB\xBF", 3))
		skip = 3;
	return n - skip >= sizeof(head) - 1 && !memcmp(buf + skip, head, sizeof(head) - 1);
}
