/*
 * test_webhook_review.c - the webhook's review logic (src/kube/webhook.h):
 * wh_review, wh_policy_load, wh_ctx_build.
 *
 * Recorded reviews: tests/data/webhook/NAME.json holds an AdmissionReview
 * as the API server sends it (oldObject, dryRun, userInfo, options), the
 * endpoint and the policy file; NAME.expected.json the exact answer (HTTP
 * status and body).  The context is tests/data/webhook/context.json.
 * A patch in an answer is applied to the object with the RFC 6902 applier
 * below and the patched object is reviewed again at /validate: it must be
 * clean.  Every rule the recorded reviews exercise must be denied by one
 * and only warned of by another.  Then bad bodies, bad policy files and
 * concurrent reviews on one context.
 *
 * CARVE_WEBHOOK_REGEN=1 rewrites the .expected.json files (review the diff).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <dirent.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "webhook.h"

static char dir[4096];
static struct wh_policy *pol_default, *pol_file;
static struct wh_ctx *ctx;

static const struct wh_policy *policy_named(const json_t *name)
{
	return json_is_string(name) ? pol_file : pol_default;
}

/* ---- a small RFC 6902 applier (add, replace, remove, test) ---- */

static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '~' && (s[1] == '0' || s[1] == '1')) {
			*o++ = s[1] == '0' ? '~' : '/';
			s++;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

/* Applies op to doc; returns 0 or -1 when the op does not apply. */
static int apply_op(json_t *doc, const json_t *op)
{
	const char *kind = json_string_value(json_object_get(op, "op"));
	const char *path = json_string_value(json_object_get(op, "path"));
	json_t *value = json_object_get(op, "value"), *cur = doc;
	char buf[2048], *tok, *next, *save = NULL;

	if (!kind || !path || path[0] != '/' || strlen(path) >= sizeof(buf))
		return -1;
	strcpy(buf, path + 1);
	tok = strtok_r(buf, "/", &save);
	while (tok) {
		next = strtok_r(NULL, "/", &save);
		unescape(tok);
		if (!next) {
			if (json_is_object(cur)) {
				if (!strcmp(kind, "add") || !strcmp(kind, "replace")) {
					if (!strcmp(kind, "replace") && !json_object_get(cur, tok))
						return -1;
					return json_object_set(cur, tok, value);
				}
				if (!strcmp(kind, "remove"))
					return json_object_del(cur, tok);
				if (!strcmp(kind, "test"))
					return json_equal(json_object_get(cur, tok), value) ? 0 : -1;
				return -1;
			}
			if (json_is_array(cur)) {
				size_t i = !strcmp(tok, "-") ? json_array_size(cur) : strtoul(tok, NULL, 10);

				if (!strcmp(kind, "add"))
					return json_array_insert(cur, i, value);
				if (!strcmp(kind, "replace"))
					return json_array_set(cur, i, value);
				if (!strcmp(kind, "remove"))
					return json_array_remove(cur, i);
			}
			return -1;
		}
		cur = json_is_array(cur) ? json_array_get(cur, strtoul(tok, NULL, 10))
					 : json_object_get(cur, tok);
		if (!cur)
			return -1;
		tok = next;
	}
	return -1;
}

static json_t *b64_json(const char *s)
{
	static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t n = strlen(s), o = 0, i;
	char *out = malloc(n + 1);
	unsigned v = 0;
	int bits = 0;
	json_t *j;

	assert_non_null(out);
	for (i = 0; i < n && s[i] != '='; i++) {
		const char *p = strchr(t, s[i]);

		assert_non_null(p);
		v = v << 6 | (unsigned)(p - t);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (char)(v >> bits & 0xff);
		}
	}
	j = json_loadb(out, o, 0, NULL);
	free(out);
	return j;
}

/* ---- running one recorded review ---- */

/* Reviews rev; returns the status and the parsed body in *body. */
static int run_review(const struct wh_policy *pol, bool mutate, const json_t *rev, json_t **body)
{
	char *in = json_dumps(rev, JSON_COMPACT), *out = NULL;
	size_t outlen = 0;
	struct wh_outcome o;
	int code;

	assert_non_null(in);
	code = wh_review(pol, ctx, mutate, in, strlen(in), &out, &outlen, &o);
	assert_true(code == 200 || code == 400);
	assert_non_null(out);
	*body = json_loadb(out, outlen, 0, NULL);
	assert_non_null(*body);
	if (code == 200)
		assert_int_equal(o.allowed,
				 json_is_true(json_object_get(json_object_get(*body, "response"), "allowed")));
	free(in);
	free(out);
	return code;
}

/* The patched object is reviewed again at /validate: it must be clean. */
static void check_patch(const char *name, const struct wh_policy *pol, const json_t *rev,
			const json_t *resp)
{
	const char *patch = json_string_value(json_object_get(resp, "patch"));
	json_t *ops, *again, *body, *obj;
	size_t i;

	if (!patch)
		return;
	assert_string_equal(json_string_value(json_object_get(resp, "patchType")), "JSONPatch");
	ops = b64_json(patch);
	assert_non_null(ops);
	/* one warning per operation that changes the object, none silent */
	assert_true(json_array_size(json_object_get(resp, "warnings")) >= 1);
	again = json_deep_copy(rev);
	obj = json_object_get(json_object_get(again, "request"), "object");
	for (i = 0; i < json_array_size(ops); i++)
		if (apply_op(obj, json_array_get(ops, i))) {
			fprintf(stderr, "%s: patch op %zu does not apply\n", name, i);
			fail();
		}
	assert_int_equal(run_review(pol, false, again, &body), 200);
	if (!json_is_true(json_object_get(json_object_get(body, "response"), "allowed")) ||
	    json_object_get(json_object_get(body, "response"), "warnings")) {
		char *s = json_dumps(body, 0);

		fprintf(stderr, "%s: patched object is not clean: %s\n", name, s);
		free(s);
		fail();
	}
	/* and mutating it again changes nothing */
	json_decref(body);
	assert_int_equal(run_review(pol, true, again, &body), 200);
	assert_null(json_object_get(json_object_get(body, "response"), "patch"));
	json_decref(body);
	json_decref(again);
	json_decref(ops);
}

struct coverage {
	char denied[64][32], warned[64][32];
	int nd, nw;
};

static void note_rules(char (*set)[32], int *n, const char *text)
{
	const char *p = text;

	while ((p = strstr(p, "[carve rule "))) {
		char id[32];
		int i;

		if (sscanf(p, "[carve rule %31[a-z-]]", id) != 1)
			break;
		for (i = 0; i < *n && strcmp(set[i], id); i++)
			;
		if (i == *n && *n < 64)
			snprintf(set[(*n)++], 32, "%s", id);
		p++;
	}
}

static void run_case(const char *name, struct coverage *cov)
{
	char path[8192];
	json_t *c, *want, *body, *got;
	const json_t *resp;
	bool mutate;
	int code;

	snprintf(path, sizeof(path), "%s/%s.json", dir, name);
	c = json_load_file(path, 0, NULL);
	assert_non_null(c);
	mutate = !strcmp(json_string_value(json_object_get(c, "endpoint")), "mutate");
	code = run_review(policy_named(json_object_get(c, "policy")), mutate,
			  json_object_get(c, "review"), &body);
	got = json_pack("{s:i, s:O}", "code", code, "body", body);
	snprintf(path, sizeof(path), "%s/%s.expected.json", dir, name);
	if (getenv("CARVE_WEBHOOK_REGEN"))
		json_dump_file(got, path, JSON_INDENT(1));
	want = json_load_file(path, 0, NULL);
	if (!want || !json_equal(want, got)) {
		char *s = json_dumps(got, JSON_INDENT(1));

		fprintf(stderr, "%s: answer differs from %s:\n%s\n", name, path, s);
		free(s);
		fail();
	}
	resp = json_object_get(body, "response");
	if (resp) {
		const json_t *w = json_object_get(resp, "warnings");
		size_t i;

		/* the uid is echoed */
		assert_string_equal(json_string_value(json_object_get(resp, "uid")),
				    json_string_value(json_object_get(json_object_get(
					    json_object_get(c, "review"), "request"), "uid")));
		if (!mutate && !json_is_true(json_object_get(resp, "allowed")))
			note_rules(cov->denied, &cov->nd, json_string_value(json_object_get(
					   json_object_get(resp, "status"), "message")));
		for (i = 0; !mutate && json_is_true(json_object_get(resp, "allowed")) &&
			    i < json_array_size(w); i++)
			note_rules(cov->warned, &cov->nw, json_string_value(json_array_get(w, i)));
		if (mutate)
			check_patch(name, policy_named(json_object_get(c, "policy")),
				    json_object_get(c, "review"), resp);
	}
	json_decref(got);
	json_decref(want);
	json_decref(body);
	json_decref(c);
}

static bool in_set(char (*set)[32], int n, const char *id)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(set[i], id))
			return true;
	return false;
}

static void test_recorded(void **state)
{
	static const char *const rules[] = {
		"invalid", "gpu-limits", "flavor-ref", "lending-limit", "cohort-cycle",
		"queue-cycle", "queue-ref", "queue-label", "quota", "duplicate", "gpu-selector", "gang",
		"topology", "mig-timeslice-mix", NULL,
	};
	struct coverage cov = {0};
	struct dirent *e;
	DIR *d = opendir(dir);
	int ncases = 0, i;

	(void)state;
	assert_non_null(d);
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		char name[256];

		if (n < 6 || strcmp(e->d_name + n - 5, ".json") || strstr(e->d_name, ".expected.") ||
		    !strcmp(e->d_name, "context.json") || n - 5 >= sizeof(name))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(n - 5), e->d_name);
		run_case(name, &cov);
		ncases++;
	}
	closedir(d);
	assert_true(ncases >= 40);
	for (i = 0; rules[i]; i++) {
		if (!in_set(cov.denied, cov.nd, rules[i]))
			fprintf(stderr, "rule %s is never denied\n", rules[i]);
		if (!in_set(cov.warned, cov.nw, rules[i]))
			fprintf(stderr, "rule %s is never only warned of\n", rules[i]);
		assert_true(in_set(cov.denied, cov.nd, rules[i]));
		assert_true(in_set(cov.warned, cov.nw, rules[i]));
	}
}

/* ---- bodies that are no AdmissionReview: 400 and a Status ---- */

static void expect_400(const char *body, size_t len, const char *needle)
{
	char *out = NULL;
	size_t outlen;
	struct wh_outcome o;
	json_t *j;

	assert_int_equal(wh_review(NULL, ctx, false, body, len, &out, &outlen, &o), 400);
	assert_false(o.allowed);
	j = json_loadb(out, outlen, 0, NULL);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "kind")), "Status");
	assert_int_equal(json_integer_value(json_object_get(j, "code")), 400);
	if (!strstr(json_string_value(json_object_get(j, "message")), needle)) {
		fprintf(stderr, "message '%s' lacks '%s'\n",
			json_string_value(json_object_get(j, "message")), needle);
		fail();
	}
	json_decref(j);
	free(out);
}

#define HEAD "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\""
#define NOREQ HEAD "}"
#define EMPTYUID HEAD ",\"request\":{\"uid\":\"\"}}"
#define INTUID HEAD ",\"request\":{\"uid\":7}}"

static void test_bad_bodies(void **state)
{
	static const char *const v1 = "{\"apiVersion\":\"admission.k8s.io/v1beta1\","
				      "\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"x\"}}";
	size_t big = 10u << 20, i;
	char *huge = malloc(big);

	(void)state;
	expect_400("", 0, "not JSON");
	expect_400("<html>", 6, "not JSON");
	expect_400("{\"a\":1,\"a\":2}", 13, "not JSON");
	expect_400("[]", 2, "not an admission.k8s.io/v1 AdmissionReview");
	expect_400(v1, strlen(v1), "not an admission.k8s.io/v1 AdmissionReview");
	expect_400(NOREQ, strlen(NOREQ), "no request");
	expect_400(EMPTYUID, strlen(EMPTYUID), "no request.uid");
	expect_400(INTUID, strlen(INTUID), "no request.uid");
	/* 10 MB: an open array that never ends */
	assert_non_null(huge);
	for (i = 0; i < big; i++)
		huge[i] = i % 2 ? ',' : '1';
	huge[0] = '[';
	expect_400(huge, big, "not JSON");
	/* a NUL inside */
	expect_400("{\"a\":\"\0\"}", 9, "not JSON");
	free(huge);
}

/* ---- policy files ---- */

static void expect_policy_error(const char *text, const char *needle)
{
	char path[] = "/tmp/carve-whpolicy-XXXXXX";
	int fd = mkstemp(path);
	struct carve_diags d;
	struct wh_policy *p = (struct wh_policy *)1;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	carve_diags_init(&d);
	assert_int_equal(wh_policy_load(path, &p, &d), CARVE_EPARSE);
	assert_null(p);
	if (carve_diags_find(&d, needle) < 0) {
		carve_diags_print(&d, stderr);
		fail();
	}
	assert_string_equal(d.v[carve_diags_find(&d, needle)].pos.file, path);
	assert_true(d.v[carve_diags_find(&d, needle)].pos.line >= 1);
	carve_diags_cleanup(&d);
	unlink(path);
}

static void test_policy_errors(void **state)
{
	static const char head[] = "apiVersion: carve.dev/v1alpha1\nkind: WebhookPolicy\n";
	char buf[1024];
	struct carve_diags d;
	struct wh_policy *p;

	(void)state;
	snprintf(buf, sizeof(buf), "%sspec:\n  rules:\n    gpu-limit: deny\n", head);
	expect_policy_error(buf, "unknown rule 'gpu-limit'");
	snprintf(buf, sizeof(buf), "%sspec:\n  rules:\n    gang: block\n", head);
	expect_policy_error(buf, "spec.rules.gang: level must be deny, warn or off");
	snprintf(buf, sizeof(buf), "%sspec:\n  namespaces:\n    a:\n      mutate: {gang: yes}\n", head);
	expect_policy_error(buf, "spec.namespaces.a.mutate.gang must be true or false");
	snprintf(buf, sizeof(buf), "%sspec:\n  namespaces:\n    a:\n      mutat: {}\n", head);
	expect_policy_error(buf, "unknown field 'mutat'");
	snprintf(buf, sizeof(buf), "apiVersion: v1\nkind: WebhookPolicy\nspec: {}\n");
	expect_policy_error(buf, "apiVersion must be carve.dev/v1alpha1");
	snprintf(buf, sizeof(buf), "%sspec:\n  rules: [gang]\n", head);
	expect_policy_error(buf, "spec.rules must be a mapping");
	carve_diags_init(&d);
	assert_int_equal(wh_policy_load("/nonexistent/policy.yaml", &p, &d), CARVE_EIO);
	assert_null(p);
	assert_true(d.nerrors > 0);
	carve_diags_cleanup(&d);
}

/* ---- concurrency: many threads, one context, one policy ---- */

struct worker {
	const char *body;
	const char *want;
	size_t wantlen;
	struct wh_ctx *c;
	int bad;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	int i;

	for (i = 0; i < 200; i++) {
		char *out;
		size_t outlen;

		if (wh_review(pol_file, w->c, i & 1 ? false : false, w->body, strlen(w->body), &out,
			      &outlen, NULL) != 200 || outlen != w->wantlen ||
		    memcmp(out, w->want, outlen))
			w->bad++;
		free(out);
	}
	wh_ctx_unref(w->c);
	return NULL;
}

static void test_threads(void **state)
{
	static const char *const names[] = {"validate-duplicate-deny", "validate-gang-deny",
					    "validate-cohort-cycle-warn", "validate-pod-clean"};
	struct worker w[8];
	pthread_t t[8];
	char *bodies[4], *wants[4];
	size_t wl[4];
	int i;

	(void)state;
	for (i = 0; i < 4; i++) {
		char path[8192];
		json_t *c;

		snprintf(path, sizeof(path), "%s/%s.json", dir, names[i]);
		c = json_load_file(path, 0, NULL);
		assert_non_null(c);
		bodies[i] = json_dumps(json_object_get(c, "review"), JSON_COMPACT);
		json_decref(c);
		assert_int_equal(wh_review(pol_file, ctx, false, bodies[i], strlen(bodies[i]),
					   &wants[i], &wl[i], NULL), 200);
	}
	for (i = 0; i < 8; i++) {
		w[i] = (struct worker){bodies[i % 4], wants[i % 4], wl[i % 4], wh_ctx_ref(ctx), 0};
		assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
	}
	for (i = 0; i < 8; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_int_equal(w[i].bad, 0);
	}
	for (i = 0; i < 4; i++) {
		free(bodies[i]);
		free(wants[i]);
	}
}

/* ---- the context ---- */

static void test_ctx(void **state)
{
	json_t *objs[3];
	struct carve_diags d;
	struct wh_ctx *c, *e = wh_ctx_build(NULL, 0, NULL);
	char *out;
	size_t outlen;
	const char *rev = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
			  "\"request\":{\"uid\":\"u\",\"operation\":\"CREATE\",\"object\":"
			  "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"LocalQueue\","
			  "\"metadata\":{\"name\":\"q\",\"namespace\":\"n\"},"
			  "\"spec\":{\"clusterQueue\":\"cq\"}}}}";

	(void)state;
	/* the empty context: the LocalQueue's ClusterQueue is missing */
	assert_non_null(e);
	assert_int_equal(wh_review(NULL, e, false, rev, strlen(rev), &out, &outlen, NULL), 200);
	assert_non_null(strstr(out, "ClusterQueue 'cq' is not defined"));
	free(out);
	wh_ctx_unref(e);
	/* with the ClusterQueue, clean; objects of other kinds and nameless ones are skipped */
	objs[0] = json_pack("{s:s, s:s, s:{s:s}, s:{}}", "apiVersion", "kueue.x-k8s.io/v1beta2",
			    "kind", "ClusterQueue", "metadata", "name", "cq", "spec");
	objs[1] = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "apps/v1", "kind", "Deployment",
			    "metadata", "name", "d");
	objs[2] = json_pack("{s:s, s:s, s:{}}", "apiVersion", "kueue.x-k8s.io/v1beta2", "kind",
			    "Cohort", "metadata");
	carve_diags_init(&d);
	c = wh_ctx_build(objs, 3, &d);
	assert_non_null(c);
	assert_true(carve_diags_find(&d, "metadata.name is missing") >= 0);
	assert_int_equal(wh_review(NULL, c, false, rev, strlen(rev), &out, &outlen, NULL), 200);
	assert_non_null(strstr(out, "\"allowed\":true"));
	free(out);
	wh_ctx_unref(wh_ctx_ref(c));
	wh_ctx_unref(c);
	wh_ctx_unref(NULL);
	carve_diags_cleanup(&d);
	json_decref(objs[0]);
	json_decref(objs[1]);
	json_decref(objs[2]);
}

/* ---- cost: CPU per review, printed (not asserted: machines differ) ---- */

static void test_cost(void **state)
{
	static const char *const names[] = {"validate-pod-clean", "validate-job-clean",
					    "validate-cq-clean", "mutate-job-all"};
	int i, k, n = 2000;

	(void)state;
	for (k = 0; k < 4; k++) {
		char path[8192], *body, *out;
		size_t outlen;
		struct timespec a, b;
		json_t *c;
		bool mutate;

		snprintf(path, sizeof(path), "%s/%s.json", dir, names[k]);
		c = json_load_file(path, 0, NULL);
		assert_non_null(c);
		mutate = !strcmp(json_string_value(json_object_get(c, "endpoint")), "mutate");
		body = json_dumps(json_object_get(c, "review"), JSON_COMPACT);
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
		for (i = 0; i < n; i++) {
			assert_int_equal(wh_review(pol_file, ctx, mutate, body, strlen(body), &out,
						   &outlen, NULL), 200);
			free(out);
		}
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
		printf("# %s: %.1f us CPU per review\n", names[k],
		       ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) /
			       n / 1e3);
		free(body);
		json_decref(c);
	}
}

/* The same with a context of 300 queue objects: the cost grows with it. */
static void test_cost_large_context(void **state)
{
	json_t *objs[300];
	struct wh_ctx *big;
	struct timespec a, b;
	char path[8192], *body, *out;
	size_t outlen;
	json_t *c;
	int i, n = 200;

	(void)state;
	for (i = 0; i < 100; i++) {
		char name[32], lq[32];

		snprintf(name, sizeof(name), "f%d", i);
		objs[i] = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "kueue.x-k8s.io/v1beta2",
				    "kind", "ResourceFlavor", "metadata", "name", name);
		snprintf(lq, sizeof(lq), "cq%d", i);
		objs[100 + i] = json_pack(
			"{s:s, s:s, s:{s:s}, s:{s:s, s:[{s:[s], s:[{s:s, s:[{s:s, s:i}]}]}]}}",
			"apiVersion", "kueue.x-k8s.io/v1beta2", "kind", "ClusterQueue", "metadata",
			"name", lq, "spec", "cohortName", "org", "resourceGroups", "coveredResources",
			"nvidia.com/gpu", "flavors", "name", name, "resources", "name",
			"nvidia.com/gpu", "nominalQuota", 8);
		snprintf(name, sizeof(name), "lq%d", i);
		objs[200 + i] = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s}}", "apiVersion",
					  "kueue.x-k8s.io/v1beta2", "kind", "LocalQueue", "metadata",
					  "name", name, "namespace", "team-a", "spec", "clusterQueue", lq);
	}
	big = wh_ctx_build(objs, 300, NULL);
	assert_non_null(big);
	snprintf(path, sizeof(path), "%s/validate-pod-clean.json", dir);
	c = json_load_file(path, 0, NULL);
	body = json_dumps(json_object_get(c, "review"), JSON_COMPACT);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	for (i = 0; i < n; i++) {
		assert_int_equal(wh_review(NULL, big, false, body, strlen(body), &out, &outlen, NULL),
				 200);
		assert_non_null(strstr(out, "\"allowed\":true"));
		free(out);
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	printf("# validate-pod-clean, 300 queue objects: %.1f us CPU per review\n",
	       ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / n / 1e3);
	free(body);
	json_decref(c);
	wh_ctx_unref(big);
	for (i = 0; i < 300; i++)
		json_decref(objs[i]);
}

static int setup(void **state)
{
	const char *data = getenv("CARVE_TEST_DATA");
	char path[8192];
	struct carve_diags d;
	json_t *list, *items;
	json_t **objs;
	size_t i;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/webhook", data ? data : "tests/data");
	carve_diags_init(&d);
	if (wh_policy_load(NULL, &pol_default, &d))
		return -1;
	snprintf(path, sizeof(path), "%s/policy.yaml", dir);
	if (wh_policy_load(path, &pol_file, &d)) {
		carve_diags_print(&d, stderr);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/context.json", dir);
	list = json_load_file(path, 0, NULL);
	items = json_object_get(list, "items");
	objs = calloc(json_array_size(items) + 1, sizeof(*objs));
	for (i = 0; i < json_array_size(items); i++)
		objs[i] = json_array_get(items, i);
	ctx = wh_ctx_build(objs, json_array_size(items), &d);
	if (d.n)
		carve_diags_print(&d, stderr); /* the context itself loads cleanly */
	free(objs);
	json_decref(list);
	i = d.n;
	carve_diags_cleanup(&d);
	return ctx && !i ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	wh_ctx_unref(ctx);
	wh_policy_free(pol_default);
	wh_policy_free(pol_file);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recorded),
		cmocka_unit_test(test_bad_bodies),
		cmocka_unit_test(test_policy_errors),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_ctx),
		cmocka_unit_test(test_cost),
		cmocka_unit_test(test_cost_large_context),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
