/*
 * test_node_metrics.c - exporter.c's text parsed by a Prometheus text
 * format (0.0.4) parser written here: every line is a HELP, a TYPE or a
 * sample; every sample's family has HELP and TYPE before it and its name
 * matches [a-zA-Z_:][a-zA-Z0-9_:]*; label names are valid, values quoted
 * with only \\, \" and \n escapes, no label twice; the value parses as a
 * float.  Then the series themselves: the dcgm-exporter names and labels
 * (gpu, UUID, pci_bus_id, device, modelName, Hostname, GPU_I_PROFILE,
 * GPU_I_ID, pod, namespace, container) with the snapshot's values, and
 * carve's own families.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_int.h"
#include "../node/snapshots.h"

#define MAXL 16

struct sample {
	char name[128];
	int nl;
	char lname[MAXL][64], lval[MAXL][256];
	double v;
};

static bool name_ok(const char *s, size_t n, bool colon)
{
	size_t i;

	if (!n || isdigit((unsigned char)s[0]))
		return false;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' && !(colon && s[i] == ':'))
			return false;
	return true;
}

/* Parses one sample line; false (with why) when it is not valid. */
static bool parse_sample(const char *line, struct sample *out, const char **why)
{
	const char *p = line, *q;
	char *end;
	int i;

	memset(out, 0, sizeof(*out));
	for (q = p; *q && *q != '{' && *q != ' '; q++)
		;
	if (!name_ok(p, (size_t)(q - p), true) || (size_t)(q - p) >= sizeof(out->name))
		return *why = "bad metric name", false;
	memcpy(out->name, p, (size_t)(q - p));
	p = q;
	if (*p == '{') {
		p++;
		while (*p != '}') {
			size_t n = 0;

			for (q = p; *q && *q != '='; q++)
				;
			if (!name_ok(p, (size_t)(q - p), false) || out->nl == MAXL)
				return *why = "bad label name", false;
			memcpy(out->lname[out->nl], p, (size_t)(q - p));
			for (i = 0; i < out->nl; i++)
				if (!strcmp(out->lname[i], out->lname[out->nl]))
					return *why = "label twice", false;
			if (q[1] != '"')
				return *why = "label value not quoted", false;
			for (p = q + 2; *p != '"'; p++) {
				char c = *p;

				if (!c || c == '\n')
					return *why = "unterminated label value", false;
				if (c == '\\') {
					p++;
					if (*p == 'n')
						c = '\n';
					else if (*p == '\\' || *p == '"')
						c = *p;
					else
						return *why = "bad escape", false;
				}
				if (n < 255)
					out->lval[out->nl][n++] = c;
			}
			out->nl++;
			p++;
			if (*p == ',')
				p++;
			else if (*p != '}')
				return *why = "expected , or }", false;
		}
		p++;
	}
	if (*p != ' ')
		return *why = "expected a space before the value", false;
	out->v = strtod(p + 1, &end);
	if (end == p + 1 || *end)
		return *why = "bad value", false;
	return true;
}

static const char *lab(const struct sample *s, const char *name)
{
	int i;

	for (i = 0; i < s->nl; i++)
		if (!strcmp(s->lname[i], name))
			return s->lval[i];
	return NULL;
}

/* Parses the whole text into samples (returned count); fails the test on
 * any invalid line or on a sample of an undeclared family. */
static int parse_all(const char *text, struct sample *out, int max)
{
	char typed[64][128];
	int ntyped = 0, n = 0, lineno = 0, i;
	const char *p = text;

	assert_true(strlen(text) > 0 && text[strlen(text) - 1] == '\n');
	while (*p) {
		const char *nl = strchr(p, '\n');
		char line[2048], fam[128], type[32];
		const char *why = "";

		assert_non_null(nl);
		assert_true((size_t)(nl - p) < sizeof(line));
		memcpy(line, p, (size_t)(nl - p));
		line[nl - p] = 0;
		p = nl + 1;
		lineno++;
		if (!strncmp(line, "# HELP ", 7)) {
			if (sscanf(line + 7, "%127s", fam) != 1 || !name_ok(fam, strlen(fam), true))
				fail_msg("line %d: bad HELP: %s", lineno, line);
			continue;
		}
		if (!strncmp(line, "# TYPE ", 7)) {
			if (sscanf(line + 7, "%127s %31s", fam, type) != 2 ||
			    (strcmp(type, "gauge") && strcmp(type, "counter")))
				fail_msg("line %d: bad TYPE: %s", lineno, line);
			for (i = 0; i < ntyped; i++)
				if (!strcmp(typed[i], fam))
					fail_msg("line %d: TYPE twice for %s", lineno, fam);
			assert_true(ntyped < 64);
			strcpy(typed[ntyped++], fam);
			continue;
		}
		assert_true(n < max);
		if (!parse_sample(line, &out[n], &why))
			fail_msg("line %d: %s: %s", lineno, why, line);
		for (i = 0; i < ntyped; i++)
			if (!strcmp(typed[i], out[n].name))
				break;
		if (i == ntyped || i != ntyped - 1)
			fail_msg("line %d: sample outside its family: %s", lineno, line);
		n++;
	}
	return n;
}

static const struct sample *find(const struct sample *s, int n, const char *name,
				 const char *gpu, const char *gi)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(s[i].name, name) && !strcmp(lab(&s[i], "gpu"), gpu) &&
		    ((!gi && !lab(&s[i], "GPU_I_ID")) ||
		     (gi && lab(&s[i], "GPU_I_ID") && !strcmp(lab(&s[i], "GPU_I_ID"), gi))))
			return &s[i];
	return NULL;
}

static struct sample samples[4096];

static void test_h100(void **st)
{
	struct nd_snapshot s;
	struct nd_export_opts o = {"node-a", NULL, 0};
	const struct sample *x;
	size_t len;
	char *text;
	int n, i;

	(void)st;
	snap_h100x8(&s);
	text = nd_export(&s, &o, &len);
	assert_non_null(text);
	assert_int_equal(len, strlen(text));
	n = parse_all(text, samples, 4096);
	/* 11 DCGM families x 8 GPUs, no carve series without pods */
	assert_int_equal(n, 11 * 8);
	x = find(samples, n, "DCGM_FI_DEV_GPU_TEMP", "3", NULL);
	assert_non_null(x);
	assert_true(x->v == 43);
	assert_string_equal(lab(x, "UUID"), s.gpus[3].uuid);
	assert_string_equal(lab(x, "device"), "nvidia3");
	assert_string_equal(lab(x, "modelName"), "NVIDIA H100 80GB HBM3");
	assert_string_equal(lab(x, "Hostname"), "node-a");
	assert_string_equal(lab(x, "pci_bus_id"), "00000000:48:00.0");
	assert_string_equal(lab(x, "DCGM_FI_DRIVER_VERSION"), "550.54.15");
	assert_null(lab(x, "pod"));
	x = find(samples, n, "DCGM_FI_DEV_POWER_USAGE", "2", NULL);
	assert_true(x->v == 253.0);
	x = find(samples, n, "DCGM_FI_DEV_FB_USED", "1", NULL);
	assert_true(x->v == 2048);
	x = find(samples, n, "DCGM_FI_DEV_FB_FREE", "1", NULL);
	assert_true(x->v == 81559 - 2048);
	x = find(samples, n, "DCGM_FI_DEV_XID_ERRORS", "0", NULL);
	assert_true(x->v == 0);
	for (i = 0; i < n; i++)
		assert_int_equal(strncmp(samples[i].name, "DCGM_FI_DEV_", 12), 0);
	carve_free(text);
	snap_free(&s);
}

static void test_mig_pods(void **st)
{
	struct nd_snapshot s;
	unsigned pids[] = {777};
	struct nd_owner ow[] = {
		{0, 2, "team-a", "train-0", "main", "research", "vision", 0, NULL, 0, NULL},
		{1, -1, "team-b", "infer-\"x\"", "", "prod", "serving", 20480, pids, 1, "u-2"},
	};
	struct nd_export_opts o = {"node-b", ow, 2};
	const struct sample *x;
	char *text;
	int n;

	(void)st;
	snap_a100_mixed(&s);
	snap_proc(&s.gpus[1], 777, 3000, -1);
	s.gpus[1].last_xid = 79;
	s.gpus[0].temp_c = -1; /* not given: no series */
	text = nd_export(&s, &o, NULL);
	n = parse_all(text, samples, 4096);
	assert_null(find(samples, n, "DCGM_FI_DEV_GPU_TEMP", "0", NULL));
	x = find(samples, n, "DCGM_FI_DEV_FB_USED", "0", "2");
	assert_non_null(x);
	assert_string_equal(lab(x, "GPU_I_PROFILE"), "3g.40gb");
	assert_string_equal(lab(x, "pod"), "train-0");
	assert_string_equal(lab(x, "namespace"), "team-a");
	assert_string_equal(lab(x, "container"), "main");
	assert_true(x->v == 13);
	x = find(samples, n, "DCGM_FI_DEV_FB_FREE", "1", "13");
	assert_non_null(x);
	assert_true(x->v == 9856 - 13);
	assert_null(lab(x, "pod"));
	x = find(samples, n, "DCGM_FI_DEV_XID_ERRORS", "1", NULL);
	assert_true(x->v == 79);
	assert_string_equal(lab(x, "pod"), "infer-\"x\"");
	x = find(samples, n, "carve_device_pod", "0", "2");
	assert_non_null(x);
	assert_string_equal(lab(x, "queue"), "research");
	assert_string_equal(lab(x, "team"), "vision");
	assert_string_equal(lab(x, "UUID"), s.gpus[0].mig[0].uuid);
	x = find(samples, n, "carve_tenant_memory_limit_bytes", "1", NULL);
	assert_true(x->v == 20480.0 * 1024 * 1024);
	x = find(samples, n, "carve_tenant_memory_used_bytes", "1", NULL);
	assert_true(x->v == 3000.0 * 1024 * 1024);
	assert_null(find(samples, n, "carve_tenant_memory_used_bytes", "0", "2"));
	carve_free(text);
	snap_free(&s);
}

static void test_parser_catches(void **st)
{
	struct sample x;
	const char *why;

	(void)st;
	/* the parser itself must refuse what Prometheus would */
	assert_false(parse_sample("1abc 3", &x, &why));
	assert_false(parse_sample("a{b=\"c} 3", &x, &why));
	assert_false(parse_sample("a{b=\"c\",b=\"d\"} 3", &x, &why));
	assert_false(parse_sample("a{b=\"\\q\"} 3", &x, &why));
	assert_false(parse_sample("a{b=\"c\"} x", &x, &why));
	assert_true(parse_sample("a_b:c{d=\"e\\\"\"} 1.5e3", &x, &why));
	assert_string_equal(x.lval[0], "e\"");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_h100),
		cmocka_unit_test(test_mig_pods),
		cmocka_unit_test(test_parser_catches),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
