/*
 * lease.c - leader election on a coordination.k8s.io/v1 Lease (kube.h),
 * the protocol of client-go's tools/leaderelection/leaderelection.go:
 * every retry period a candidate reads the Lease, creates it when
 * missing, and takes it over only when it is free (no holder) or its
 * record stayed unchanged for a whole leaseDurationSeconds on this
 * process's monotonic clock; the holder renews every retry period and
 * stops leading once no renewal succeeded within the renew deadline;
 * every write is a PUT carrying the resourceVersion read, so a 409 means
 * another candidate wrote first; leaseTransitions grows by one when the
 * holder changes; on stop a leader clears holderIdentity.
 *
 * Invariants: `leading` is true only while this process holds the Lease
 * and its last successful write is younger than the renew deadline;
 * requests are sent once each (no retry) with the renew deadline as
 * timeout, so a slow server cannot stretch a term.
 */
#include <stdio.h>
#include <string.h>

#include "kube_int.h"

struct carve_kube_elector {
	struct carve_kube *k;
	struct carve_kube_queue *q;
	char *ns, *name, *identity, *path, *coll;
	int64_t lease_ns, renew_ns, retry_ns;
	pthread_t th;
	atomic_bool stop;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	/* thread-owned */
	json_t *observed;       /* the Lease's spec last read */
	int64_t observed_at;    /* when it last changed, monotonic */
	json_t *lease;          /* the Lease last read or written (for the rv) */
	bool holding;           /* the record written last names us */
	int64_t renewed_at;     /* monotonic time of our last successful write */
	bool leading;           /* under mu */
};

static void set_leading(struct carve_kube_elector *e, bool v)
{
	bool was;

	pthread_mutex_lock(&e->mu);
	was = e->leading;
	e->leading = v;
	pthread_mutex_unlock(&e->mu);
	if (was != v && e->q)
		carve_kube_queue_wake(e->q);
}

static void set_renewed(struct carve_kube_elector *e, int64_t t)
{
	pthread_mutex_lock(&e->mu);
	e->renewed_at = t;
	pthread_mutex_unlock(&e->mu);
}

bool carve_kube_is_leader(struct carve_kube_elector *e)
{
	bool v;

	pthread_mutex_lock(&e->mu);
	v = e->leading && kube_mono_ns() - e->renewed_at < e->renew_ns;
	pthread_mutex_unlock(&e->mu);
	return v;
}

static int lease_seconds(const struct carve_kube_elector *e)
{
	int64_t s = (e->lease_ns + 999999999) / 1000000000;

	return s < 1 ? 1 : (int)s;
}

/* A new Lease body: our record over `base` (metadata kept, for its rv). */
static json_t *record(struct carve_kube_elector *e, const json_t *base, const char *holder,
		      bool acquire, json_int_t transitions, int seconds)
{
	char now[40];
	json_t *l, *meta, *spec, *old_spec = json_object_get(base, "spec");

	carve_kube_time(kube_real_ns(), now, sizeof(now));
	l = base ? json_deep_copy(base) : json_object();
	if (!l)
		return NULL;
	if (!base) {
		meta = json_pack("{s:s, s:s}", "name", e->name, "namespace", e->ns);
		json_object_set_new(l, "metadata", meta);
	}
	json_object_set_new(l, "apiVersion", json_string("coordination.k8s.io/v1"));
	json_object_set_new(l, "kind", json_string("Lease"));
	spec = json_object();
	if (!spec) {
		json_decref(l);
		return NULL;
	}
	json_object_set_new(spec, "holderIdentity", json_string(holder));
	json_object_set_new(spec, "leaseDurationSeconds", json_integer(seconds));
	if (acquire || !json_object_get(old_spec, "acquireTime"))
		json_object_set_new(spec, "acquireTime", json_string(now));
	else
		json_object_set(spec, "acquireTime", json_object_get(old_spec, "acquireTime"));
	json_object_set_new(spec, "renewTime", json_string(now));
	json_object_set_new(spec, "leaseTransitions", json_integer(transitions));
	json_object_set_new(l, "spec", spec);
	return l;
}

/* A write of ours went through (at t0, seen at now): renewed, and the
 * record now observed is the one the server answered.  Returns true. */
static bool wrote(struct carve_kube_elector *e, int64_t t0, int64_t now)
{
	set_renewed(e, t0);
	json_decref(e->observed);
	e->observed = json_incref(json_object_get(e->lease, "spec"));
	e->observed_at = now;
	return true;
}

/* One write (POST when create, else PUT); on 2xx keeps the answer. */
static int write_lease(struct carve_kube_elector *e, json_t *body, bool create)
{
	struct carve_kube_retry once = { .max_attempts = 1,
					 .timeout_ms = (int)(e->renew_ns / 1000000) };
	struct carve_error err = { 0 };
	json_t *out = NULL;
	int st = kube_request_r(e->k, &once, create ? "POST" : "PUT", create ? e->coll : e->path,
				NULL, body, &out, NULL, &err);

	if (st >= 200 && st < 300 && json_is_object(out)) {
		json_decref(e->lease);
		e->lease = out;
		return st;
	}
	json_decref(out);
	return st;
}

/* client-go's tryAcquireOrRenew: true when we hold the Lease after it. */
static bool try_acquire_or_renew(struct carve_kube_elector *e)
{
	struct carve_kube_retry once = { .max_attempts = 1,
					 .timeout_ms = (int)(e->renew_ns / 1000000) };
	struct carve_error err = { 0 };
	json_t *cur = NULL, *spec, *body;
	const char *holder;
	int64_t now, dur_ns;
	json_int_t trans, secs;
	bool mine;
	int st;

	int64_t t0 = kube_mono_ns();

	st = kube_request_r(e->k, &once, "GET", e->path, NULL, NULL, &cur, &e->stop, &err);
	now = kube_mono_ns();
	if (st == 404) {
		json_decref(cur);
		body = record(e, NULL, e->identity, true, 0, lease_seconds(e));
		if (!body)
			return false;
		st = write_lease(e, body, true);
		json_decref(body);
		return st >= 200 && st < 300 && wrote(e, t0, now);
	}
	if (st != 200 || !json_is_object(cur)) {
		json_decref(cur);
		return false;
	}
	spec = json_object_get(cur, "spec");
	if (!e->observed || !json_equal(e->observed, spec)) {
		json_decref(e->observed);
		e->observed = spec ? json_deep_copy(spec) : json_object();
		e->observed_at = now;
	}
	holder = json_string_value(json_object_get(spec, "holderIdentity"));
	mine = holder && strcmp(holder, e->identity) == 0;
	secs = json_integer_value(json_object_get(spec, "leaseDurationSeconds"));
	dur_ns = secs > 0 ? (int64_t)secs * 1000000000 : e->lease_ns;
	if (!mine && e->holding) {
		/* Someone else holds it now: our term is over. */
		pthread_mutex_lock(&e->mu);
		e->holding = false;
		pthread_mutex_unlock(&e->mu);
	}
	/* Held by another and not yet expired on our clock: wait. */
	if (holder && *holder && !mine && now - e->observed_at < dur_ns) {
		json_decref(cur);
		return false;
	}
	trans = json_integer_value(json_object_get(spec, "leaseTransitions"));
	/* The record names us already (our term, or one we held before a
	 * restart): acquireTime and leaseTransitions stay (client-go). */
	body = record(e, cur, e->identity, !mine, mine ? trans : trans + 1, lease_seconds(e));
	json_decref(cur);
	if (!body)
		return false;
	st = write_lease(e, body, false);
	json_decref(body);
	return st >= 200 && st < 300 && wrote(e, t0, now);
}

/* On stop: a leader clears holderIdentity (client-go's release). */
static void release(struct carve_kube_elector *e)
{
	const json_t *spec = json_object_get(e->lease, "spec");
	json_t *body;

	if (!e->lease || !e->holding)
		return;
	body = record(e, e->lease, "", false,
		      json_integer_value(json_object_get(spec, "leaseTransitions")), 1);
	if (body) {
		write_lease(e, body, false);
		json_decref(body);
	}
}

static void *elect(void *arg)
{
	struct carve_kube_elector *e = arg;

	while (!atomic_load(&e->stop)) {
		bool got = try_acquire_or_renew(e);

		if (got) {
			pthread_mutex_lock(&e->mu);
			e->holding = true;
			pthread_mutex_unlock(&e->mu);
			set_leading(e, true);
		} else if (!e->holding || kube_mono_ns() - e->renewed_at >= e->renew_ns) {
			/* Another holds it, or no renewal within the deadline: stop acting. */
			pthread_mutex_lock(&e->mu);
			e->holding = false;
			pthread_mutex_unlock(&e->mu);
			set_leading(e, false);
		}
		/* client-go jitters the candidate's retry by up to 1.2x. */
		kube_nap(&e->mu, &e->cv, &e->stop,
			 (e->retry_ns + (e->holding ? 0 : (int64_t)kube_rand((uint64_t)e->retry_ns / 5 + 1))) /
				 1000000);
	}
	/* No longer leading before the release goes out: another
	 * candidate may take over as soon as it lands. */
	set_leading(e, false);
	release(e);
	return NULL;
}

static void elector_free(struct carve_kube_elector *e)
{
	carve_free(e->ns);
	carve_free(e->name);
	carve_free(e->identity);
	carve_free(e->path);
	carve_free(e->coll);
	json_decref(e->observed);
	json_decref(e->lease);
	pthread_cond_destroy(&e->cv);
	pthread_mutex_destroy(&e->mu);
	carve_free(e);
}

struct carve_kube_elector *carve_kube_elect_start(struct carve_kube *k,
						  const struct carve_kube_lease_opts *o,
						  struct carve_kube_queue *q, struct carve_error *err)
{
	struct carve_kube_elector *e;
	pthread_condattr_t ca;
	size_t n;

	if (!o || !o->ns || !*o->ns || !o->name || !*o->name || !o->identity || !*o->identity) {
		carve_errorf(err, CARVE_EINVAL, "leader election: the Lease namespace, name and "
			     "this candidate's identity are required");
		return NULL;
	}
	e = carve_calloc(1, sizeof(*e));
	if (!e) {
		carve_errorf(err, CARVE_ENOMEM, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&e->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* kube_nap's clock */
	pthread_cond_init(&e->cv, &ca);
	pthread_condattr_destroy(&ca);
	atomic_init(&e->stop, false);
	e->k = k;
	e->q = q;
	e->lease_ns = (int64_t)(o->lease_ms > 0 ? o->lease_ms : 15000) * 1000000;
	e->renew_ns = (int64_t)(o->renew_ms > 0 ? o->renew_ms : 10000) * 1000000;
	e->retry_ns = (int64_t)(o->retry_ms > 0 ? o->retry_ms : 2000) * 1000000;
	if (e->renew_ns >= e->lease_ns || e->retry_ns >= e->renew_ns) {
		carve_errorf(err, CARVE_EINVAL, "leader election: need retry < renew deadline < lease "
			     "(%d, %d, %d ms)", (int)(e->retry_ns / 1000000),
			     (int)(e->renew_ns / 1000000), (int)(e->lease_ns / 1000000));
		elector_free(e);
		return NULL;
	}
	e->ns = carve_kube_escape(o->ns);
	e->name = carve_strdup(o->name);
	e->identity = carve_strdup(o->identity);
	n = strlen(o->ns) * 3 + strlen(o->name) * 3 + 64;
	e->path = carve_malloc(n);
	e->coll = carve_malloc(n);
	if (!e->ns || !e->name || !e->identity || !e->path || !e->coll) {
		elector_free(e);
		carve_errorf(err, CARVE_ENOMEM, "out of memory");
		return NULL;
	}
	{
		char *en = carve_kube_escape(o->name);

		if (!en) {
			elector_free(e);
			carve_errorf(err, CARVE_ENOMEM, "out of memory");
			return NULL;
		}
		snprintf(e->coll, n, "/apis/coordination.k8s.io/v1/namespaces/%s/leases", e->ns);
		snprintf(e->path, n, "%s/%s", e->coll, en);
		carve_free(en);
	}
	carve_free(e->ns);
	e->ns = carve_strdup(o->ns);
	if (!e->ns) {
		elector_free(e);
		carve_errorf(err, CARVE_ENOMEM, "out of memory");
		return NULL;
	}
	if (pthread_create(&e->th, NULL, elect, e) != 0) {
		elector_free(e);
		carve_errorf(err, CARVE_EIO, "leader election: cannot start its thread");
		return NULL;
	}
	return e;
}

void carve_kube_elect_stop(struct carve_kube_elector *e)
{
	if (!e)
		return;
	pthread_mutex_lock(&e->mu);
	atomic_store(&e->stop, true);
	pthread_cond_broadcast(&e->cv);
	pthread_mutex_unlock(&e->mu);
	pthread_join(e->th, NULL);
	elector_free(e);
}
