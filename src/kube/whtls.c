/*
 * whtls.c - the webhook's serving certificate (whserver.h): a PEM chain
 * and its key read into GnuTLS pcerts and a privkey, served by a
 * certificate callback, read again when the files change.
 *
 * Invariants: the pair the callback hands out is an immutable `struct
 * pair` published through one atomic pointer; a reload builds a whole new
 * pair, checks that the key matches the leaf certificate, and only then
 * publishes it.  GnuTLS uses the pcerts and key during a handshake without
 * taking a reference, so a replaced pair is not freed at once: it goes on
 * a retired list freed once it is older than RETIRE_NS (far beyond any
 * handshake), or by wh_tls_destroy().
 * Ownership: struct wh_tls owns every pair it loaded.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include "kube_int.h"
#include "whserver.h"

#define MAX_CHAIN 16
#define RETIRE_NS ((int64_t)120 * 1000000000)

struct pair {
	gnutls_pcert_st pcert[MAX_CHAIN];
	unsigned npcert;
	gnutls_privkey_t key;
	int64_t retired_ns;        /* when it was replaced, 0 while served */
	struct pair *next;         /* the retired list */
};

struct fstamp {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
};

struct wh_tls {
	char *cert_path, *key_path;
	struct fstamp cert_st, key_st;
	_Atomic(struct pair *) cur;
	struct pair *retired;
	uint64_t generation;
};

/* The pair the callback serves: one server per process. */
static _Atomic(struct wh_tls *) bound;

static void pair_free(struct pair *p)
{
	unsigned i;

	if (!p)
		return;
	for (i = 0; i < p->npcert; i++)
		gnutls_pcert_deinit(&p->pcert[i]);
	if (p->key)
		gnutls_privkey_deinit(p->key);
	carve_free(p);
}

/* Reads a whole file into d (gnutls_free'd by the caller).  Returns 0 or
 * CARVE_EIO with err naming the file. */
static int read_datum(const char *path, gnutls_datum_t *d, struct carve_error *err)
{
	int rc = gnutls_load_file(path, d);

	if (rc < 0)
		return carve_errorf(err, CARVE_EIO, "%s: cannot read: %s", path, gnutls_strerror(rc));
	return 0;
}

/* DER of a public key, for comparing two keys.  Returns 0 or a GnuTLS error. */
static int pub_der(gnutls_pubkey_t pk, gnutls_datum_t *out)
{
	return gnutls_pubkey_export2(pk, GNUTLS_X509_FMT_DER, out);
}

/* Whether key is the private half of leaf's public key. */
static bool key_matches(gnutls_privkey_t key, gnutls_pubkey_t leaf)
{
	gnutls_pubkey_t pk;
	gnutls_datum_t a = {NULL, 0}, b = {NULL, 0};
	bool same = false;

	if (gnutls_pubkey_init(&pk) < 0)
		return false;
	if (gnutls_pubkey_import_privkey(pk, key, 0, 0) >= 0 && pub_der(pk, &a) >= 0 &&
	    pub_der(leaf, &b) >= 0)
		same = a.size == b.size && !memcmp(a.data, b.data, a.size);
	gnutls_free(a.data);
	gnutls_free(b.data);
	gnutls_pubkey_deinit(pk);
	return same;
}

/* Loads a new pair from the files.  Returns it, or NULL with err set. */
static struct pair *pair_load(const char *cert_path, const char *key_path, struct carve_error *err)
{
	gnutls_datum_t cd = {NULL, 0}, kd = {NULL, 0};
	struct pair *p;
	int rc;

	if (!(p = carve_calloc(1, sizeof(*p)))) {
		carve_errorf(err, CARVE_ENOMEM, "out of memory");
		return NULL;
	}
	if (read_datum(cert_path, &cd, err) || read_datum(key_path, &kd, err))
		goto fail;
	p->npcert = MAX_CHAIN;
	rc = gnutls_pcert_list_import_x509_raw(p->pcert, &p->npcert, &cd, GNUTLS_X509_FMT_PEM, 0);
	if (rc < 0 || p->npcert == 0) {
		p->npcert = 0;
		carve_errorf(err, CARVE_EPARSE, "%s: not a PEM certificate chain (at most %d): %s",
			     cert_path, MAX_CHAIN, rc < 0 ? gnutls_strerror(rc) : "no certificate");
		goto fail;
	}
	if ((rc = gnutls_privkey_init(&p->key)) < 0) {
		p->key = NULL;
		carve_errorf(err, CARVE_ENOMEM, "out of memory");
		goto fail;
	}
	rc = gnutls_privkey_import_x509_raw(p->key, &kd, GNUTLS_X509_FMT_PEM, NULL, 0);
	if (rc < 0) {
		carve_errorf(err, CARVE_EPARSE, "%s: not a PEM private key: %s", key_path,
			     gnutls_strerror(rc));
		goto fail;
	}
	if (!key_matches(p->key, p->pcert[0].pubkey)) {
		carve_errorf(err, CARVE_EPARSE, "%s: the key does not belong to the first certificate of %s",
			     key_path, cert_path);
		goto fail;
	}
	gnutls_free(cd.data);
	gnutls_free(kd.data);
	return p;
fail:
	gnutls_free(cd.data);
	gnutls_free(kd.data);
	pair_free(p);
	return NULL;
}

static void stamp(const char *path, struct fstamp *s)
{
	struct stat st;

	memset(s, 0, sizeof(*s));
	if (stat(path, &st))
		return;
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	s->size = st.st_size;
	s->mtime = st.st_mtim;
}

static bool stamp_eq(const struct fstamp *a, const struct fstamp *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec;
}

struct wh_tls *wh_tls_create(const char *cert, const char *key, struct carve_error *err)
{
	struct wh_tls *t = carve_calloc(1, sizeof(*t));

	if (!t || !(t->cert_path = carve_strdup(cert)) || !(t->key_path = carve_strdup(key))) {
		carve_errorf(err, CARVE_ENOMEM, "out of memory");
		wh_tls_destroy(t);
		return NULL;
	}
	atomic_init(&t->cur, NULL);
	if (wh_tls_reload(t, true, err) < 0) {
		wh_tls_destroy(t);
		return NULL;
	}
	return t;
}

/* Frees retired pairs old enough that no handshake can still use them. */
static void reap(struct wh_tls *t, int64_t now)
{
	struct pair **pp = &t->retired, *p;

	while ((p = *pp)) {
		if (now - p->retired_ns > RETIRE_NS) {
			*pp = p->next;
			pair_free(p);
		} else {
			pp = &p->next;
		}
	}
}

int wh_tls_reload(struct wh_tls *t, bool force, struct carve_error *err)
{
	struct fstamp cs, ks;
	struct pair *p, *old;
	int64_t now = kube_mono_ns();

	reap(t, now);
	stamp(t->cert_path, &cs);
	stamp(t->key_path, &ks);
	if (!force && stamp_eq(&cs, &t->cert_st) && stamp_eq(&ks, &t->key_st))
		return 0;
	/* stamped even when the pair does not load: a bad pair is reported
	 * once, and tried again when either file changes again */
	t->cert_st = cs;
	t->key_st = ks;
	if (!(p = pair_load(t->cert_path, t->key_path, err)))
		return err ? err->code : CARVE_EPARSE;
	old = atomic_exchange(&t->cur, p);
	if (old) {
		old->retired_ns = now;
		old->next = t->retired;
		t->retired = old;
	}
	t->generation++;
	return 1;
}

static int retrieve(gnutls_session_t session, const gnutls_datum_t *req_ca_dn, int nreqs,
		    const gnutls_pk_algorithm_t *algos, int nalgos, gnutls_pcert_st **pcert,
		    unsigned int *npcert, gnutls_privkey_t *key)
{
	struct wh_tls *t = atomic_load(&bound);
	struct pair *p = t ? atomic_load(&t->cur) : NULL;

	(void)session;
	(void)req_ca_dn;
	(void)nreqs;
	(void)algos;
	(void)nalgos;
	if (!p)
		return -1;
	*pcert = p->pcert;
	*npcert = p->npcert;
	*key = p->key;
	return 0;
}

gnutls_certificate_retrieve_function2 *wh_tls_callback(void)
{
	return retrieve;
}

void wh_tls_bind(struct wh_tls *t)
{
	atomic_store(&bound, t);
}

uint64_t wh_tls_generation(const struct wh_tls *t)
{
	return t->generation;
}

void wh_tls_destroy(struct wh_tls *t)
{
	struct pair *p;

	if (!t)
		return;
	if (atomic_load(&bound) == t)
		atomic_store(&bound, NULL);
	pair_free(atomic_load(&t->cur));
	while ((p = t->retired)) {
		t->retired = p->next;
		pair_free(p);
	}
	carve_free(t->cert_path);
	carve_free(t->key_path);
	carve_free(t);
}
