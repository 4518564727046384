/*
 * kconfig.c - connection settings for the API client (kube.h): a
 * kubeconfig file (clusters, users and contexts by name, current-context,
 * certificate and key as files or base64 data, token or tokenFile,
 * insecure-skip-tls-verify, the context's namespace) or the pod's
 * service account in-cluster, in the order client-go's loading rules use
 * (explicit file, $KUBECONFIG, in-cluster, ~/.kube/config).
 *
 * Invariants: on success every string in the result is owned by it and
 * relative paths are resolved against the kubeconfig's directory; on
 * failure the result holds nothing and err names the file, line and
 * field.  Only the first existing file of a $KUBECONFIG list is read (no
 * merge).  exec and auth-provider users are refused: carve runs no
 * credential plugins.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "carve/arena.h"
#include "carve/kube.h"
#include "readfile.h"
#include "ytree.h"

#define KC_MAX_BYTES (16u * 1024 * 1024)
#define SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

/* A copy of the first n bytes of s (carve_free), or NULL. */
static char *dupn(const char *s, size_t n)
{
	char *p = carve_malloc(n + 1);

	if (p) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

/* The state of one load: the file's name for messages, its directory for
 * relative paths. */
struct kc {
	const char *file;
	char *dir; /* with trailing '/' */
	struct carve_error *err;
};

static int kc_fail(struct kc *kc, const struct ynode *at, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int kc_fail(struct kc *kc, const struct ynode *at, int code, const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (at)
		return carve_errorf(kc->err, code, "%s:%u: %s", kc->file, (unsigned)at->pos.line, msg);
	return carve_errorf(kc->err, code, "%s: %s", kc->file, msg);
}

/* A scalar field of a mapping as text, NULL when absent or null. */
static const char *str_field(const struct ynode *m, const char *key)
{
	const struct ynode *v = ytree_get(m, key);

	if (!v || v->kind != YN_SCALAR || ytree_is_null(v))
		return NULL;
	return v->str;
}

/* The key node of key in m (its line is the field's), or NULL. */
static const struct ynode *key_of(const struct ynode *m, const char *key)
{
	size_t i;

	for (i = 0; m && m->kind == YN_MAP && i < m->n; i++)
		if (strcmp(m->pairs[i].key->str, key) == 0)
			return m->pairs[i].key;
	return NULL;
}

/* The item named `name` of the list `key` ("clusters", "users",
 * "contexts") and its body (`body`: "cluster", "user", "context"). */
static int find_named(struct kc *kc, const struct ynode *root, const char *key,
		      const char *body, const char *name, const struct ynode *ref,
		      const char *what, const struct ynode **out)
{
	const struct ynode *list = ytree_get(root, key);
	size_t i;

	if (list && list->kind != YN_SEQ && !ytree_is_null(list))
		return kc_fail(kc, list, CARVE_EPARSE, "%s: expected a list, got %s", key,
			       ytree_kind_name(list));
	for (i = 0; list && list->kind == YN_SEQ && i < list->n; i++) {
		const struct ynode *it = list->items[i];
		const char *n = str_field(it, "name");

		if (!n || strcmp(n, name) != 0)
			continue;
		*out = ytree_get(it, body);
		if (!*out || (*out)->kind != YN_MAP)
			return kc_fail(kc, it, CARVE_EPARSE, "%s[%s].%s: missing or not a mapping",
				       key, name, body);
		return 0;
	}
	return kc_fail(kc, ref, CARVE_EPARSE, "%s \"%s\" not found in %s", what, name, key);
}

/* path resolved against the kubeconfig's directory, checked readable. */
static int kc_path(struct kc *kc, const struct ynode *m, const char *key, const char *where,
		   char **out)
{
	const struct ynode *v = key_of(m, key);
	const char *p = str_field(m, key);
	size_t n;

	if (!p || !*p)
		return 0;
	if (p[0] == '/') {
		*out = carve_strdup(p);
	} else {
		n = strlen(kc->dir) + strlen(p) + 1;
		*out = carve_malloc(n);
		if (*out)
			snprintf(*out, n, "%s%s", kc->dir, p);
	}
	if (!*out)
		return carve_errorf(kc->err, CARVE_ENOMEM, "out of memory");
	if (access(*out, R_OK) != 0)
		return kc_fail(kc, v, CARVE_EIO, "%s.%s: cannot read %s: %s", where, key, *out,
			       strerror(errno));
	return 0;
}

static int b64_val(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/* Standard base64 (RFC 4648 section 4, padding optional, whitespace
 * skipped) into a new NUL-terminated buffer; NULL on bad input (*bad set)
 * or allocation failure. */
static char *b64_decode(const char *s, bool *bad)
{
	size_t n = strlen(s), o = 0, pad = 0;
	unsigned acc = 0;
	int bits = 0;
	char *out = carve_malloc(n / 4 * 3 + 4);

	*bad = false;
	if (!out)
		return NULL;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		int v;

		if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
			continue;
		if (c == '=') {
			pad++;
			continue;
		}
		v = b64_val(c);
		if (v < 0 || pad) {
			*bad = true;
			break;
		}
		acc = (acc << 6) | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (char)((acc >> bits) & 0xff);
			if (out[o - 1] == '\0')
				*bad = true; /* PEM text never holds a NUL */
		}
	}
	if (pad > 2 || bits >= 6)
		*bad = true;
	if (*bad) {
		carve_free(out);
		return NULL;
	}
	out[o] = '\0';
	return out;
}

static int kc_data(struct kc *kc, const struct ynode *m, const char *key, const char *where,
		   char **out)
{
	const char *s = str_field(m, key);
	bool bad;

	if (!s || !*s)
		return 0;
	*out = b64_decode(s, &bad);
	if (bad)
		return kc_fail(kc, key_of(m, key), CARVE_EPARSE, "%s.%s: bad base64", where, key);
	if (!*out)
		return carve_errorf(kc->err, CARVE_ENOMEM, "out of memory");
	return 0;
}

static int kc_bool(struct kc *kc, const struct ynode *m, const char *key, const char *where,
		   bool *out)
{
	const struct ynode *v = ytree_get(m, key);

	if (!v || ytree_is_null(v))
		return 0;
	if (v->kind == YN_SCALAR && strcmp(v->str, "true") == 0)
		*out = true;
	else if (v->kind == YN_SCALAR && strcmp(v->str, "false") == 0)
		*out = false;
	else
		return kc_fail(kc, key_of(m, key), CARVE_EPARSE, "%s.%s: expected true or false",
			       where, key);
	return 0;
}

static int dup_into(struct kc *kc, const char *s, char **out)
{
	if (!s || !*s)
		return 0;
	*out = carve_strdup(s);
	return *out ? 0 : carve_errorf(kc->err, CARVE_ENOMEM, "out of memory");
}

static int from_tree(struct kc *kc, const struct ynode *root, const char *context,
		     struct carve_kube_config *c)
{
	const struct ynode *ctx, *cl, *us = NULL, *ref, *v;
	const char *ctx_name = context, *cl_name, *us_name, *ns;
	char where[160];
	size_t n;
	int rc;

	if (!root || root->kind != YN_MAP)
		return kc_fail(kc, root, CARVE_EPARSE, "expected a mapping (a kubeconfig), got %s",
			       root ? ytree_kind_name(root) : "an empty document");
	ref = ytree_get(root, "current-context");
	if (!ctx_name) {
		ctx_name = str_field(root, "current-context");
		if (!ctx_name || !*ctx_name)
			return kc_fail(kc, ref ? ref : root, CARVE_EPARSE,
				       "current-context: not set (and no context given)");
	} else {
		ref = NULL;
	}
	rc = find_named(kc, root, "contexts", "context", ctx_name, ref, "context", &ctx);
	if (rc)
		return rc;
	snprintf(where, sizeof(where), "contexts[%s].context", ctx_name);
	cl_name = str_field(ctx, "cluster");
	if (!cl_name || !*cl_name)
		return kc_fail(kc, ctx, CARVE_EPARSE, "%s.cluster: missing", where);
	rc = find_named(kc, root, "clusters", "cluster", cl_name, ytree_get(ctx, "cluster"),
			"cluster", &cl);
	if (rc)
		return rc;
	us_name = str_field(ctx, "user");
	if (!us_name || !*us_name)
		return kc_fail(kc, ctx, CARVE_EPARSE, "%s.user: missing", where);
	rc = find_named(kc, root, "users", "user", us_name, ytree_get(ctx, "user"), "user", &us);
	if (rc)
		return rc;

	snprintf(where, sizeof(where), "clusters[%s].cluster", cl_name);
	v = str_field(cl, "server") ? ytree_get(cl, "server") : NULL;
	if (!v || !*v->str)
		return kc_fail(kc, cl, CARVE_EPARSE, "%s.server: missing", where);
	if (strncmp(v->str, "https://", 8) != 0 && strncmp(v->str, "http://", 7) != 0)
		return kc_fail(kc, v, CARVE_EPARSE, "%s.server: \"%s\" is not an http(s) URL",
			       where, v->str);
	if ((rc = dup_into(kc, v->str, &c->server)))
		return rc;
	n = strlen(c->server);
	while (n > 0 && c->server[n - 1] == '/')
		c->server[--n] = '\0';
	if ((rc = kc_path(kc, cl, "certificate-authority", where, &c->ca_file)) ||
	    (rc = kc_data(kc, cl, "certificate-authority-data", where, &c->ca_data)) ||
	    (rc = kc_bool(kc, cl, "insecure-skip-tls-verify", where, &c->insecure)))
		return rc;
	/* client-go refuses the pair: "specifying a root certificates file
	 * with the insecure flag is not allowed" (transport config). */
	if (c->insecure && (c->ca_file || c->ca_data))
		return kc_fail(kc, cl, CARVE_EPARSE,
			       "%s: insecure-skip-tls-verify together with a certificate "
			       "authority is not allowed", where);

	snprintf(where, sizeof(where), "users[%s].user", us_name);
	if ((v = ytree_get(us, "exec")) && !ytree_is_null(v))
		return kc_fail(kc, key_of(us, "exec"), CARVE_EPARSE,
			       "%s.exec: credential plugins are not supported (use a token, "
			       "tokenFile or client certificate)", where);
	if ((v = ytree_get(us, "auth-provider")) && !ytree_is_null(v))
		return kc_fail(kc, key_of(us, "auth-provider"), CARVE_EPARSE,
			       "%s.auth-provider: auth providers are not supported (use a "
			       "token, tokenFile or client certificate)", where);
	if ((v = ytree_get(us, "username")) && !ytree_is_null(v))
		return kc_fail(kc, key_of(us, "username"), CARVE_EPARSE,
			       "%s.username: basic authentication is not supported", where);
	if ((rc = kc_path(kc, us, "client-certificate", where, &c->cert_file)) ||
	    (rc = kc_data(kc, us, "client-certificate-data", where, &c->cert_data)) ||
	    (rc = kc_path(kc, us, "client-key", where, &c->key_file)) ||
	    (rc = kc_data(kc, us, "client-key-data", where, &c->key_data)) ||
	    (rc = dup_into(kc, str_field(us, "token"), &c->token)) ||
	    (rc = kc_path(kc, us, "tokenFile", where, &c->token_file)))
		return rc;
	if ((c->cert_file || c->cert_data) != (c->key_file || c->key_data))
		return kc_fail(kc, us, CARVE_EPARSE,
			       "%s: a client certificate needs its key and a key its certificate",
			       where);

	ns = str_field(ctx, "namespace");
	if ((rc = dup_into(kc, ns && *ns ? ns : "default", &c->ns)))
		return rc;
	n = strlen(kc->file) + strlen(ctx_name) + 16;
	c->source = carve_malloc(n);
	if (!c->source)
		return carve_errorf(kc->err, CARVE_ENOMEM, "out of memory");
	snprintf(c->source, n, "%s (context %s)", kc->file, ctx_name);
	return 0;
}

static int load_file(const char *path, const char *context, struct carve_kube_config *c,
		     struct carve_error *err)
{
	struct kc kc = { .file = path, .err = err };
	struct carve_diags d;
	struct carve_arena a;
	struct ydocs docs = { 0 };
	const char *slash = strrchr(path, '/');
	char *buf = NULL;
	size_t len = 0;
	int rc;

	carve_diags_init(&d);
	carve_arena_init(&a);
	kc.dir = slash ? dupn(path, (size_t)(slash - path) + 1) : carve_strdup("");
	if (!kc.dir) {
		rc = carve_errorf(err, CARVE_ENOMEM, "out of memory");
		goto out;
	}
	rc = carve__read_file(&d, path, KC_MAX_BYTES, &buf, &len);
	if (rc == 0)
		rc = ytree_parse(&a, path, buf, len, 0, 0, &d, &docs);
	if (rc == 0 && d.nerrors)
		rc = CARVE_EPARSE;
	if (rc) {
		if (rc == CARVE_ENOMEM)
			carve_errorf(err, rc, "out of memory");
		else if (d.n && d.v[0].pos.line)
			carve_errorf(err, rc, "%s:%u: %s", path, (unsigned)d.v[0].pos.line, d.v[0].msg);
		else
			carve_errorf(err, rc, "%s: %s", path, d.n ? d.v[0].msg : carve_strerror(rc));
		goto out;
	}
	if (docs.n != 1)
		rc = kc_fail(&kc, NULL, CARVE_EPARSE, "expected one YAML document, found %zu", docs.n);
	else
		rc = from_tree(&kc, docs.v[0].root, context, c);
out:
	carve_free(kc.dir);
	carve_free(buf);
	carve_arena_cleanup(&a);
	carve_diags_cleanup(&d);
	return rc;
}

/* A file of dir, as a new string. */
static char *join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = carve_malloc(n);

	if (p)
		snprintf(p, n, "%s/%s", dir, name);
	return p;
}

static int in_cluster(const char *host, struct carve_kube_config *c, struct carve_error *err)
{
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	const char *dir = getenv("CARVE_SA_DIR");
	char *nsfile = NULL, *buf = NULL;
	struct carve_diags d;
	size_t n, len = 0;
	int rc = 0;

	if (!dir || !*dir)
		dir = SA_DIR;
	if (!port || !*port)
		return carve_errorf(err, CARVE_EPARSE,
				    "in-cluster: KUBERNETES_SERVICE_HOST is set but "
				    "KUBERNETES_SERVICE_PORT is not");
	n = strlen(host) + strlen(port) + 16;
	c->server = carve_malloc(n);
	c->token_file = join(dir, "token");
	c->ca_file = join(dir, "ca.crt");
	nsfile = join(dir, "namespace");
	c->source = carve_strdup("in-cluster");
	if (!c->server || !c->token_file || !c->ca_file || !nsfile || !c->source) {
		carve_free(nsfile);
		return carve_errorf(err, CARVE_ENOMEM, "out of memory");
	}
	/* An IPv6 address goes in brackets (client-go's net.JoinHostPort). */
	snprintf(c->server, n, strchr(host, ':') ? "https://[%s]:%s" : "https://%s:%s", host, port);
	if (access(c->token_file, R_OK) != 0)
		rc = carve_errorf(err, CARVE_EIO, "in-cluster: cannot read the service-account "
				  "token %s: %s", c->token_file, strerror(errno));
	else if (access(c->ca_file, R_OK) != 0)
		rc = carve_errorf(err, CARVE_EIO, "in-cluster: cannot read the cluster CA %s: %s",
				  c->ca_file, strerror(errno));
	if (rc) {
		carve_free(nsfile);
		return rc;
	}
	carve_diags_init(&d);
	if (access(nsfile, F_OK) == 0 && carve__read_file(&d, nsfile, 4096, &buf, &len) == 0) {
		while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' ' ||
				   buf[len - 1] == '\r' || buf[len - 1] == '\t'))
			buf[--len] = '\0';
	}
	carve_diags_cleanup(&d);
	carve_free(nsfile);
	c->ns = carve_strdup(buf && *buf ? buf : "default");
	carve_free(buf);
	return c->ns ? 0 : carve_errorf(err, CARVE_ENOMEM, "out of memory");
}

int carve_kube_config_load(const char *kubeconfig, const char *context,
			   struct carve_kube_config *out, struct carve_error *err)
{
	const char *env = getenv("KUBECONFIG"), *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *home = getenv("HOME");
	char *path = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	if (kubeconfig) {
		rc = load_file(kubeconfig, context, out, err);
	} else if (env && *env) {
		/* The first existing file of the list. */
		const char *p = env;

		while (*p && !path) {
			size_t n = strcspn(p, ":");

			if (n) {
				path = dupn(p, n);
				if (!path) {
					rc = carve_errorf(err, CARVE_ENOMEM, "out of memory");
					goto done;
				}
				if (access(path, F_OK) != 0) {
					carve_free(path);
					path = NULL;
				}
			}
			p += n;
			if (*p == ':')
				p++;
		}
		if (!path) {
			rc = carve_errorf(err, CARVE_ENOTFOUND,
					  "$KUBECONFIG: none of its files exists (%s)", env);
			goto done;
		}
		rc = load_file(path, context, out, err);
	} else if (host && *host) {
		rc = in_cluster(host, out, err);
	} else if (home && *home) {
		path = join(home, ".kube/config");
		if (!path) {
			rc = carve_errorf(err, CARVE_ENOMEM, "out of memory");
			goto done;
		}
		if (access(path, F_OK) != 0)
			rc = carve_errorf(err, CARVE_ENOTFOUND,
					  "no Kubernetes configuration: no --kubeconfig, no "
					  "$KUBECONFIG, not in a cluster, no %s", path);
		else
			rc = load_file(path, context, out, err);
	} else {
		rc = carve_errorf(err, CARVE_ENOTFOUND,
				  "no Kubernetes configuration: no --kubeconfig, no $KUBECONFIG, "
				  "not in a cluster, no $HOME");
	}
done:
	carve_free(path);
	if (rc == 0) {
		out->qps = 50;
		out->burst = 100;
	} else {
		carve_kube_config_free(out);
	}
	return rc;
}

void carve_kube_config_free(struct carve_kube_config *c)
{
	if (!c)
		return;
	carve_free(c->server);
	carve_free(c->ca_file);
	carve_free(c->ca_data);
	carve_free(c->cert_file);
	carve_free(c->cert_data);
	carve_free(c->key_file);
	carve_free(c->key_data);
	carve_free(c->token);
	carve_free(c->token_file);
	carve_free(c->ns);
	carve_free(c->source);
	carve_free(c->user_agent);
	memset(c, 0, sizeof(*c));
}
