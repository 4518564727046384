/*
 * test_kube_config.c - connection settings (kconfig.c): kubeconfigs with
 * data and file forms, tokens, insecure, contexts by name, $KUBECONFIG
 * lists, in-cluster through $CARVE_SA_DIR, and bad files refused with
 * the file, line and field named.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "carve/kube.h"

static char dir[64];

static void put_file(const char *name, const char *text)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static const char *path_of(const char *name)
{
	static char p[4][256];
	static int i;

	i = (i + 1) % 4;
	snprintf(p[i], sizeof(p[i]), "%s/%s", dir, name);
	return p[i];
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/carve-kc-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	unsetenv("KUBECONFIG");
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
	unsetenv("CARVE_SA_DIR");
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* "-----BEGIN CERTIFICATE-----\nAB\n-----END CERTIFICATE-----\n" */
#define CA_PEM "-----BEGIN CERTIFICATE-----\nAB\n-----END CERTIFICATE-----\n"
#define CA_B64 "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkFCCi0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K"

static const char two_contexts[] =
	"apiVersion: v1\n"
	"kind: Config\n"
	"current-context: dev\n"
	"clusters:\n"
	"- name: c1\n"
	"  cluster:\n"
	"    server: https://10.0.0.1:6443/\n"
	"    certificate-authority-data: " CA_B64 "\n"
	"- name: c2\n"
	"  cluster:\n"
	"    server: http://127.0.0.1:8080\n"
	"    insecure-skip-tls-verify: true\n"
	"users:\n"
	"- name: u1\n"
	"  user:\n"
	"    client-certificate-data: " CA_B64 "\n"
	"    client-key-data: " CA_B64 "\n"
	"- name: u2\n"
	"  user:\n"
	"    token: s3cret\n"
	"- name: u3\n"
	"  user:\n"
	"    client-certificate: certs/client.crt\n"
	"    client-key: /CERTDIR/certs/client.key\n"
	"    tokenFile: tok\n"
	"contexts:\n"
	"- name: dev\n"
	"  context: {cluster: c1, user: u1, namespace: team-a}\n"
	"- name: ops\n"
	"  context: {cluster: c2, user: u2}\n"
	"- name: files\n"
	"  context: {cluster: c1, user: u3}\n";

static void write_two_contexts(void)
{
	char text[sizeof(two_contexts) + 256], *at;

	snprintf(text, sizeof(text), "%s", two_contexts);
	at = strstr(text, "/CERTDIR");
	assert_non_null(at);
	/* the absolute path form: the test directory */
	{
		char rest[2048];

		snprintf(rest, sizeof(rest), "%s", at + strlen("/CERTDIR"));
		snprintf(at, sizeof(text) - (size_t)(at - text), "%s%s", dir, rest);
	}
	put_file("config", text);
}

static void test_data_forms_and_current_context(void **state)
{
	struct carve_kube_config c;
	struct carve_error err = { 0 };

	(void)state;
	write_two_contexts();
	assert_int_equal(carve_kube_config_load(path_of("config"), NULL, &c, &err), 0);
	assert_string_equal(c.server, "https://10.0.0.1:6443");
	assert_string_equal(c.ca_data, CA_PEM);
	assert_null(c.ca_file);
	assert_string_equal(c.cert_data, CA_PEM);
	assert_string_equal(c.key_data, CA_PEM);
	assert_null(c.token);
	assert_false(c.insecure);
	assert_string_equal(c.ns, "team-a");
	assert_non_null(strstr(c.source, "(context dev)"));
	assert_true(c.qps == 50);
	assert_int_equal(c.burst, 100);
	carve_kube_config_free(&c);
}

static void test_named_context_token_insecure(void **state)
{
	struct carve_kube_config c;
	struct carve_error err = { 0 };

	(void)state;
	write_two_contexts();
	assert_int_equal(carve_kube_config_load(path_of("config"), "ops", &c, &err), 0);
	assert_string_equal(c.server, "http://127.0.0.1:8080");
	assert_true(c.insecure);
	assert_string_equal(c.token, "s3cret");
	assert_null(c.cert_data);
	assert_string_equal(c.ns, "default");
	carve_kube_config_free(&c);
}

static void test_file_forms_relative_paths(void **state)
{
	struct carve_kube_config c;
	struct carve_error err = { 0 };
	char p[256];

	(void)state;
	write_two_contexts();
	snprintf(p, sizeof(p), "mkdir -p '%s/certs'", dir);
	assert_int_equal(system(p), 0);
	put_file("certs/client.crt", CA_PEM);
	put_file("certs/client.key", CA_PEM);
	put_file("tok", "abc\n");
	assert_int_equal(carve_kube_config_load(path_of("config"), "files", &c, &err), 0);
	assert_string_equal(c.cert_file, path_of("certs/client.crt"));
	assert_string_equal(c.key_file, path_of("certs/client.key"));
	assert_string_equal(c.token_file, path_of("tok"));
	carve_kube_config_free(&c);

	/* A file that is not there is named with the field. */
	snprintf(p, sizeof(p), "%s/certs/client.key", dir);
	unlink(p);
	assert_int_equal(carve_kube_config_load(path_of("config"), "files", &c, &err), CARVE_EIO);
	if (!strstr(err.text, ":24: users[u3].user.client-key: cannot read "))
		fail_msg("got %s", err.text);
	assert_null(c.server);
}

static void test_kubeconfig_env_list(void **state)
{
	struct carve_kube_config c;
	struct carve_error err = { 0 };
	char list[600];

	(void)state;
	write_two_contexts();
	snprintf(list, sizeof(list), "%s:%s", path_of("missing"), path_of("config"));
	setenv("KUBECONFIG", list, 1);
	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1); /* $KUBECONFIG wins */
	assert_int_equal(carve_kube_config_load(NULL, "ops", &c, &err), 0);
	assert_string_equal(c.token, "s3cret");
	assert_non_null(strstr(c.source, "/config (context ops)"));
	carve_kube_config_free(&c);

	setenv("KUBECONFIG", path_of("missing"), 1);
	assert_int_equal(carve_kube_config_load(NULL, NULL, &c, &err), CARVE_ENOTFOUND);
	assert_non_null(strstr(err.text, "$KUBECONFIG: none of its files exists"));
	unsetenv("KUBECONFIG");
	unsetenv("KUBERNETES_SERVICE_HOST");
}

static void test_in_cluster(void **state)
{
	struct carve_kube_config c;
	struct carve_error err = { 0 };
	char p[256];

	(void)state;
	snprintf(p, sizeof(p), "mkdir -p '%s/sa'", dir);
	assert_int_equal(system(p), 0);
	put_file("sa/token", "tkn");
	put_file("sa/ca.crt", CA_PEM);
	put_file("sa/namespace", "carve-system\n");
	setenv("CARVE_SA_DIR", path_of("sa"), 1);
	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	assert_int_equal(carve_kube_config_load(NULL, NULL, &c, &err), 0);
	assert_string_equal(c.server, "https://10.96.0.1:443");
	assert_string_equal(c.token_file, path_of("sa/token"));
	assert_string_equal(c.ca_file, path_of("sa/ca.crt"));
	assert_string_equal(c.ns, "carve-system");
	assert_string_equal(c.source, "in-cluster");
	carve_kube_config_free(&c);

	setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
	assert_int_equal(carve_kube_config_load(NULL, NULL, &c, &err), 0);
	assert_string_equal(c.server, "https://[fd00::1]:443");
	carve_kube_config_free(&c);

	unsetenv("KUBERNETES_SERVICE_PORT");
	assert_int_equal(carve_kube_config_load(NULL, NULL, &c, &err), CARVE_EPARSE);
	assert_string_equal(err.text, "in-cluster: KUBERNETES_SERVICE_HOST is set but "
				      "KUBERNETES_SERVICE_PORT is not");
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	snprintf(p, sizeof(p), "%s/sa/token", dir);
	unlink(p);
	assert_int_equal(carve_kube_config_load(NULL, NULL, &c, &err), CARVE_EIO);
	assert_non_null(strstr(err.text, "in-cluster: cannot read the service-account token "));
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
	unsetenv("CARVE_SA_DIR");
}

static void test_no_config_anywhere(void **state)
{
	struct carve_kube_config c;
	struct carve_error err = { 0 };
	const char *home = getenv("HOME");
	char *saved = home ? strdup(home) : NULL;

	(void)state;
	setenv("HOME", dir, 1);
	assert_int_equal(carve_kube_config_load(NULL, NULL, &c, &err), CARVE_ENOTFOUND);
	assert_non_null(strstr(err.text, "no Kubernetes configuration"));
	if (saved)
		setenv("HOME", saved, 1);
	free(saved);
}

/* Loads text as "bad" and expects code and exactly msg (the file's path
 * replaced by "F"). */
static void expect_bad(const char *text, const char *context, int code, const char *msg)
{
	struct carve_kube_config c;
	struct carve_error err = { 0 };
	const char *p = path_of("bad");
	size_t n = strlen(p);

	put_file("bad", text);
	assert_int_equal(carve_kube_config_load(p, context, &c, &err), code);
	assert_int_equal(strncmp(err.text, p, n), 0);
	if (msg && strcmp(err.text + n, msg) != 0)
		fail_msg("got \"F%s\", want \"F%s\"", err.text + n, msg);
	assert_null(c.server);
}

#define HEAD \
	"clusters:\n"                              \
	"- name: c\n"                              \
	"  cluster: {server: https://x:6443}\n"    \
	"users:\n"                                 \
	"- name: u\n"                              \
	"  user: {token: t}\n"

static void test_bad_files(void **state)
{
	(void)state;
	expect_bad(HEAD "contexts:\n- name: k\n  context: {cluster: c, user: u}\n"
		   "current-context: other\n",
		   NULL, CARVE_EPARSE, ":10: context \"other\" not found in contexts");
	expect_bad(HEAD "contexts:\n- name: k\n  context: {cluster: c, user: u}\n", "nope",
		   CARVE_EPARSE, ": context \"nope\" not found in contexts");
	expect_bad(HEAD "contexts:\n- name: k\n  context: {cluster: c, user: u}\n", NULL,
		   CARVE_EPARSE, ":1: current-context: not set (and no context given)");
	expect_bad(HEAD "contexts:\n- name: k\n  context: {cluster: gone, user: u}\n", "k",
		   CARVE_EPARSE, ":9: cluster \"gone\" not found in clusters");
	expect_bad(HEAD "contexts:\n- name: k\n  context: {cluster: c, user: nobody}\n", "k",
		   CARVE_EPARSE, ":9: user \"nobody\" not found in users");
	expect_bad(HEAD "contexts:\n- name: k\n  context: {user: u}\n", "k",
		   CARVE_EPARSE, ":9: contexts[k].context.cluster: missing");
	expect_bad(HEAD "contexts:\n- name: k\n  context: {cluster: c}\n", "k",
		   CARVE_EPARSE, ":9: contexts[k].context.user: missing");
	expect_bad("clusters:\n- name: c\n  cluster: {insecure-skip-tls-verify: true}\n"
		   "users:\n- name: u\n  user: {}\n"
		   "contexts:\n- name: k\n  context: {cluster: c, user: u}\n", "k",
		   CARVE_EPARSE, ":3: clusters[c].cluster.server: missing");
	expect_bad("clusters:\n- name: c\n  cluster:\n    server: https://x\n"
		   "    certificate-authority-data: 'not base64!'\n"
		   "users:\n- name: u\n  user: {}\n"
		   "contexts:\n- name: k\n  context: {cluster: c, user: u}\n", "k",
		   CARVE_EPARSE, ":5: clusters[c].cluster.certificate-authority-data: bad base64");
	expect_bad("clusters:\n- name: c\n  cluster: {server: ftp://x}\n"
		   "users:\n- name: u\n  user: {}\n"
		   "contexts:\n- name: k\n  context: {cluster: c, user: u}\n", "k",
		   CARVE_EPARSE, ":3: clusters[c].cluster.server: \"ftp://x\" is not an http(s) URL");
	/* client-go refuses a CA with insecure-skip-tls-verify. */
	expect_bad("clusters:\n- name: c\n  cluster:\n    server: https://x\n"
		   "    certificate-authority-data: " CA_B64 "\n    insecure-skip-tls-verify: true\n"
		   "users:\n- name: u\n  user: {}\n"
		   "contexts:\n- name: k\n  context: {cluster: c, user: u}\n", "k",
		   CARVE_EPARSE, ":4: clusters[c].cluster: insecure-skip-tls-verify together with a "
		   "certificate authority is not allowed");
	expect_bad("clusters:\n- name: c\n  cluster: {server: https://x, insecure-skip-tls-verify: maybe}\n"
		   "users:\n- name: u\n  user: {}\n"
		   "contexts:\n- name: k\n  context: {cluster: c, user: u}\n", "k",
		   CARVE_EPARSE, ":3: clusters[c].cluster.insecure-skip-tls-verify: expected true or false");
	expect_bad("clusters:\n- name: c\n  cluster: {server: https://x}\n"
		   "users:\n- name: eks\n  user:\n    exec:\n"
		   "      apiVersion: client.authentication.k8s.io/v1\n      command: aws\n"
		   "contexts:\n- name: k\n  context: {cluster: c, user: eks}\n", "k",
		   CARVE_EPARSE, ":7: users[eks].user.exec: credential plugins are not supported "
				 "(use a token, tokenFile or client certificate)");
	expect_bad("clusters:\n- name: c\n  cluster: {server: https://x}\n"
		   "users:\n- name: g\n  user:\n    auth-provider: {name: gcp}\n"
		   "contexts:\n- name: k\n  context: {cluster: c, user: g}\n", "k",
		   CARVE_EPARSE, ":7: users[g].user.auth-provider: auth providers are not supported "
				 "(use a token, tokenFile or client certificate)");
	expect_bad("clusters:\n- name: c\n  cluster: {server: https://x}\n"
		   "users:\n- name: u\n  user: {client-certificate-data: " CA_B64 "}\n"
		   "contexts:\n- name: k\n  context: {cluster: c, user: u}\n", "k",
		   CARVE_EPARSE, ":6: users[u].user: a client certificate needs its key and a key "
				 "its certificate");
	expect_bad("contexts:\n- name: k\n  context: {cluster: c, user: u}\nclusters: {c: 1}\n", "k",
		   CARVE_EPARSE, ":4: clusters: expected a list, got a mapping");
	expect_bad("- 1\n", "k", CARVE_EPARSE, ":1: expected a mapping (a kubeconfig), got a list");
	expect_bad("clusters: [\n", "k", CARVE_EPARSE, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_data_forms_and_current_context),
		cmocka_unit_test(test_named_context_token_insecure),
		cmocka_unit_test(test_file_forms_relative_paths),
		cmocka_unit_test(test_kubeconfig_env_list),
		cmocka_unit_test(test_in_cluster),
		cmocka_unit_test(test_no_config_anywhere),
		cmocka_unit_test(test_bad_files),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
