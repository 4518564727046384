/*
 * fuzz_review.c - the webhook's review (src/kube/webhook.h: wh_review) on
 * any request body, at /validate and /mutate, under a policy with every
 * mutation on and a context of queue objects.  An input that is a JSON
 * object but no AdmissionReview is also reviewed as the request.object of
 * a CREATE, so the fuzzer reaches the rules without spelling the envelope.
 * Properties checked: the status is 200 or 400 (never a crash, never out
 * of memory here), the body is JSON; a 200 is an AdmissionReview whose
 * response echoes the uid and says allowed; a 400 is a Status; a patch is
 * base64 of a JSON array of operations, and only on an allowed answer.
 */
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "fuzz.h"
#include "webhook.h"

static const char ctx_json[] =
	"[{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ResourceFlavor\","
	"\"metadata\":{\"name\":\"a100\"}},"
	"{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Cohort\",\"metadata\":{\"name\":\"lab\"},"
	"\"spec\":{\"parentName\":\"dept\"}},"
	"{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\",\"metadata\":{\"name\":\"cq\"},"
	"\"spec\":{\"cohortName\":\"lab\",\"resourceGroups\":[{\"coveredResources\":[\"nvidia.com/gpu\"],"
	"\"flavors\":[{\"name\":\"a100\",\"resources\":[{\"name\":\"nvidia.com/gpu\",\"nominalQuota\":8}]}]}]}},"
	"{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"LocalQueue\","
	"\"metadata\":{\"name\":\"default\",\"namespace\":\"team-a\"},\"spec\":{\"clusterQueue\":\"cq\"}}]";

static const char policy_yaml[] =
	"apiVersion: carve.dev/v1alpha1\nkind: WebhookPolicy\nspec:\n"
	"  mutate: {gang: true, gpuLimits: true, defaultQueue: default}\n";

static struct wh_ctx *ctx;
static struct wh_policy *pol;

static void setup(void)
{
	char path[] = "/tmp/carve-fuzz-policy-XXXXXX";
	struct carve_diags d;
	json_t *list = json_loads(ctx_json, 0, NULL);
	json_t *objs[8];
	size_t i;
	int fd = mkstemp(path);

	if (!list || fd < 0 || write(fd, policy_yaml, sizeof(policy_yaml) - 1) < 0)
		abort();
	close(fd);
	carve_diags_init(&d);
	if (wh_policy_load(path, &pol, &d))
		abort();
	unlink(path);
	for (i = 0; i < json_array_size(list) && i < 8; i++)
		objs[i] = json_array_get(list, i);
	ctx = wh_ctx_build(objs, i, &d);
	if (!ctx)
		abort();
	carve_diags_cleanup(&d);
	json_decref(list);
}

static int b64_val(char c)
{
	const char *t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const char *p = c ? strchr(t, c) : NULL;

	return p ? (int)(p - t) : -1;
}

static void check_patch(const char *s)
{
	size_t n = strlen(s), o = 0, i;
	char *buf = malloc(n + 1);
	unsigned v = 0;
	int bits = 0;
	json_t *ops;

	if (!buf || n % 4)
		fuzz_fail("patch is not base64 of a whole length: %zu", n);
	for (i = 0; i < n && s[i] != '='; i++) {
		int x = b64_val(s[i]);

		if (x < 0)
			fuzz_fail("patch has a byte outside base64");
		v = v << 6 | (unsigned)x;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			buf[o++] = (char)(v >> bits & 0xff);
		}
	}
	ops = json_loadb(buf, o, 0, NULL);
	if (!json_is_array(ops) || !json_array_size(ops))
		fuzz_fail("patch is not a JSON array of operations");
	for (i = 0; i < json_array_size(ops); i++) {
		const char *path = json_string_value(json_object_get(json_array_get(ops, i), "path"));

		if (!path || path[0] != '/')
			fuzz_fail("patch operation %zu has no JSON Pointer path", i);
	}
	json_decref(ops);
	free(buf);
}

static void review(const char *body, size_t len, bool mutate)
{
	struct wh_outcome o;
	char *out = NULL;
	size_t outlen = 0;
	json_t *j, *rq, *resp;
	json_error_t e;
	int code = wh_review(pol, ctx, mutate, body, len, &out, &outlen, &o);

	if (code != 200 && code != 400)
		fuzz_fail("wh_review returned %d", code);
	j = json_loadb(out, outlen, 0, &e);
	if (!j)
		fuzz_fail("answer is not JSON: %s", e.text);
	if (code == 400) {
		if (strcmp(json_string_value(json_object_get(j, "kind")) ?
			   json_string_value(json_object_get(j, "kind")) : "", "Status") || o.allowed)
			fuzz_fail("a 400 is not a Status");
	} else {
		rq = json_loadb(body, len, 0, NULL);
		resp = json_object_get(j, "response");
		if (!json_is_boolean(json_object_get(resp, "allowed")) ||
		    json_is_true(json_object_get(resp, "allowed")) != o.allowed)
			fuzz_fail("response.allowed is missing or differs from the outcome");
		if (!json_equal(json_object_get(resp, "uid"),
				json_object_get(json_object_get(rq, "request"), "uid")))
			fuzz_fail("the uid is not echoed");
		if (json_object_get(resp, "patch")) {
			if (!o.allowed)
				fuzz_fail("a denied answer carries a patch");
			check_patch(json_string_value(json_object_get(resp, "patch")));
		}
		json_decref(rq);
	}
	json_decref(j);
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *obj;

	if (!ctx)
		setup();
	review((const char *)data, size, false);
	review((const char *)data, size, true);
	obj = json_loadb((const char *)data, size, 0, NULL);
	if (json_is_object(obj) && !json_object_get(obj, "request")) {
		json_t *rev = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:O}}", "apiVersion",
					"admission.k8s.io/v1", "kind", "AdmissionReview", "request",
					"uid", "u", "operation", "CREATE", "namespace", "team-a",
					"object", obj);
		char *body = rev ? json_dumps(rev, JSON_COMPACT) : NULL;

		if (body) {
			review(body, strlen(body), false);
			review(body, strlen(body), true);
		}
		free(body);
		json_decref(rev);
	}
	json_decref(obj);
	return 0;
}
