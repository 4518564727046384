/*
 * test_node_agent.c - the agent's pure parts (agent_pods.c, agent_mig.c):
 * bindings read from pods' JSON (this node's, carve's, running), every
 * bad carve.dev/devices annotation refused with its Event reason and a
 * note naming the entry; owners for the exporter; the MIG steps of a
 * carve.dev/mig-layout annotation (same, apply, busy because of a process
 * or a pod, invalid for each reason) and carve.dev/mig-current.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_int.h"
#include "carve/manifest.h"
#include "../node/snapshots.h"

static json_t *pod(const char *node, const char *devices, const char *phase)
{
	json_t *p = json_pack("{s:{s:s, s:s, s:s, s:s, s:{s:s}, s:{}}, s:{s:[{s:s}]}, s:{}}",
			      "metadata", "name", "train-0", "namespace", "team-a", "uid", "u-1",
			      "creationTimestamp", "2026-12-04T10:00:00Z", "labels",
			      "kueue.x-k8s.io/queue-name", "research", "annotations", "spec",
			      "containers", "name", "main", "status");

	if (node)
		json_object_set_new(json_object_get(p, "spec"), "nodeName", json_string(node));
	if (devices)
		json_object_set_new(json_object_get(json_object_get(p, "metadata"), "annotations"),
				    "carve.dev/devices", json_string(devices));
	if (phase)
		json_object_set_new(json_object_get(p, "status"), "phase", json_string(phase));
	return p;
}

static int bind1(struct nd_snapshot *s, const char *node, const char *dev, const char *phase,
		 struct nd_binding *b, struct nd_refusal *r)
{
	json_t *p = pod(node, dev, phase);
	int rc = nd_pod_binding(p, "node-a", s, b, r);

	json_decref(p);
	return rc;
}

static void refused(struct nd_snapshot *s, const char *dev, const char *reason, const char *msg)
{
	struct nd_binding b;
	struct nd_refusal r = {"", ""};
	int rc = bind1(s, "node-a", dev, NULL, &b, &r);

	if (rc != CARVE_EINVAL || strcmp(r.reason, reason) || !strstr(r.note, msg))
		fail_msg("'%s': %d %s '%s'; expected %s containing '%s'", dev, rc, r.reason, r.note,
			 reason, msg);
}

static void test_bindings(void **st)
{
	struct nd_snapshot s;
	struct nd_binding b;
	struct nd_refusal r;
	struct nd_owner ow[4];
	json_t *p;

	(void)st;
	snap_a100_mixed(&s);
	assert_int_equal(bind1(&s, "node-a", "gpu=0,mig=3g.40gb@0;gpu=1,mig=1g.10gb@6", "Running",
			       &b, &r), 1);
	assert_int_equal(b.ndev, 2);
	assert_true(b.created_ns == 1796378400LL * 1000000000LL);
	/* not ours: another node, no annotation, finished, unbound */
	assert_int_equal(bind1(&s, "node-b", "gpu=0,mig=3g.40gb@0", NULL, &b, &r), 0);
	assert_int_equal(bind1(&s, "node-a", NULL, NULL, &b, &r), 0);
	assert_int_equal(bind1(&s, "node-a", "gpu=0,mig=3g.40gb@0", "Succeeded", &b, &r), 0);
	assert_int_equal(bind1(&s, NULL, "gpu=0,mig=3g.40gb@0", NULL, &b, &r), 0);
	/* owners carry queue, team (the namespace here), container */
	p = pod("node-a", "gpu=0,mig=3g.40gb@0", NULL);
	assert_int_equal(nd_pod_binding(p, "node-a", &s, &b, &r), 1);
	assert_string_equal(b.ns, "team-a");
	assert_string_equal(b.name, "train-0");
	assert_string_equal(b.uid, "u-1");
	assert_int_equal(nd_pod_owners(p, &b, &s, ow, 4), 1);
	assert_int_equal(ow[0].gi_id, 2);
	assert_string_equal(ow[0].queue, "research");
	assert_string_equal(ow[0].team, "team-a");
	assert_string_equal(ow[0].container, "main");
	assert_string_equal(ow[0].uid, "u-1");
	json_decref(p);
	snap_free(&s);
}

static void test_refusals(void **st)
{
	struct nd_snapshot s;

	(void)st;
	snap_a100_mixed(&s);
	refused(&s, "gpu=0,mig=3g.40gb", "CarveDevicesInvalid", "'gpu=0,mig=3g.40gb'");
	refused(&s, "gpu=x", "CarveDevicesInvalid", "carve.dev/devices 'gpu=x'");
	refused(&s, "gpu=5,mig=1g.10gb@0", "CarveDeviceUnknown", "entry 1: GPU 5: no such GPU");
	refused(&s, "gpu=0,mig=3g.40gb@0;gpu=1,mig=2g.20gb@0", "CarveDeviceUnknown",
		"entry 2: GPU 1: no MIG device 2g.20gb@0");
	refused(&s, "gpu=0", "CarveDeviceUnknown", "MIG is enabled on it");
	refused(&s, "gpu=0,uuid=GPU-bad,mig=3g.40gb@0", "CarveDeviceUnknown",
		"UUID GPU-bad is not this node's");
	snap_free(&s);
	snap_h100x8(&s);
	refused(&s, "gpu=0,mig=1g.10gb@0", "CarveDeviceUnknown", "MIG is not enabled on it");
	snap_free(&s);
}

static void test_mig_plan(void **st)
{
	struct nd_snapshot s;
	struct nd_mig_plan pl;
	struct carve_error err = {0, ""};
	struct nd_binding b = {"team-a", "infer-1", "u-2", 1, {{0}}, 0};
	char cur[512];
	int len;

	(void)st;
	snap_a100_mixed(&s);
	len = nd_miglayout_current(&s, cur, sizeof(cur));
	assert_int_equal(len, (int)strlen(cur));
	assert_string_equal(cur, "0=3g.40gb@0,2g.20gb@4,1g.10gb@6;"
				 "1=1g.10gb@0,1g.10gb@1,1g.10gb@2,1g.10gb@3,1g.10gb@4,"
				 "1g.10gb@5,1g.10gb@6");
	/* GPU 0 as it is; GPU 1 to two 3g.40gb, nothing runs there */
	assert_int_equal(nd_mig_plan("0=3g.40gb@0,2g.20gb@4,1g.10gb@6;"
				     "1=3g.40gb@0,3g.40gb@4", &s, NULL, 0, &pl, &err), 0);
	assert_int_equal(pl.n, 2);
	if (pl.step[0].action != ND_MIG_SAME)
		fail_msg("step 0: %d %s", pl.step[0].action, pl.step[0].why);
	assert_int_equal(pl.step[1].action, ND_MIG_APPLY);
	assert_int_equal(pl.step[1].want.gpu, 1);
	assert_int_equal(pl.step[1].want.n, 2);
	assert_int_equal(pl.step[1].want.v[1].start, 4);
	/* GPU 0's 3g.40gb runs process 777 */
	assert_int_equal(nd_mig_plan("0=4g.40gb@0,2g.20gb@4,1g.10gb@6", &s, NULL, 0, &pl, &err), 0);
	assert_int_equal(pl.step[0].action, ND_MIG_BUSY);
	assert_non_null(strstr(pl.step[0].why, "3g.40gb@0 runs process 777"));
	/* keeping the 3g.40gb but not the 2g.20gb, which a pod holds */
	b.dev[0].gpu = 0;
	strcpy(b.dev[0].mig_profile, "2g.20gb");
	b.dev[0].mig_start = 4;
	assert_int_equal(nd_mig_plan("0=3g.40gb@0,1g.10gb@4,1g.10gb@5", &s, &b, 1, &pl, &err), 0);
	assert_int_equal(pl.step[0].action, ND_MIG_BUSY);
	assert_non_null(strstr(pl.step[0].why, "serves pod team-a/infer-1"));
	/* invalid: illegal start, unknown profile, no such GPU */
	assert_int_equal(nd_mig_plan("1=3g.40gb@2;0=9g.90gb@0;7=", &s, NULL, 0, &pl, &err), 0);
	assert_int_equal(pl.step[0].action, ND_MIG_INVALID);
	assert_non_null(strstr(pl.step[0].why, "GPU 1: 3g.40gb cannot start at memory slice 2"));
	assert_int_equal(pl.step[1].action, ND_MIG_INVALID);
	assert_non_null(strstr(pl.step[1].why, "no MIG profile 9g.90gb"));
	assert_int_equal(pl.step[2].action, ND_MIG_INVALID);
	assert_non_null(strstr(pl.step[2].why, "GPU 7: the node has no such GPU"));
	/* malformed */
	assert_int_equal(nd_mig_plan("0=3g.40gb", &s, NULL, 0, &pl, &err), CARVE_EPARSE);
	assert_true(err.text[0]);
	snap_free(&s);
	/* MIG off */
	snap_h100x8(&s);
	assert_int_equal(nd_mig_plan("0=1g.10gb@0", &s, NULL, 0, &pl, &err), 0);
	assert_int_equal(pl.step[0].action, ND_MIG_INVALID);
	assert_non_null(strstr(pl.step[0].why, "MIG mode is not enabled"));
	assert_int_equal(nd_miglayout_current(&s, cur, sizeof(cur)), 0);
	snap_free(&s);
}

static const char migparted[] =
	"version: v1\n"
	"mig-configs:\n"
	"  all-3g:\n"
	"  - devices: all\n"
	"    mig-enabled: true\n"
	"    mig-devices:\n"
	"      3g.40gb: 2\n"
	"  mixed:\n"
	"  - devices: [1]\n"
	"    mig-enabled: true\n"
	"    mig-devices:\n"
	"      1g.10gb: 3\n"
	"      4g.40gb: 1\n"
	"  too-many:\n"
	"  - devices: all\n"
	"    mig-enabled: true\n"
	"    mig-devices:\n"
	"      3g.40gb: 3\n"
	"  off:\n"
	"  - devices: all\n"
	"    mig-enabled: false\n";

static void test_migparted(void **st)
{
	struct carve_manifests *m = carve_manifests_create();
	struct carve_error err = {0, ""};
	struct nd_snapshot s;
	char text[512];
	int rc;

	(void)st;
	assert_int_equal(carve_manifests_load_yaml(m, "mig.yaml", migparted, strlen(migparted)), 0);
	snap_a100_mixed(&s);
	rc = nd_migparted_layout(carve_mf_find_migconfig(m, "all-3g"), &s, text, sizeof(text), &err);
	assert_int_equal(rc, (int)strlen(text));
	assert_string_equal(text, "0=3g.40gb@0,3g.40gb@4;1=3g.40gb@0,3g.40gb@4");
	rc = nd_migparted_layout(carve_mf_find_migconfig(m, "mixed"), &s, text, sizeof(text), &err);
	assert_true(rc > 0);
	assert_string_equal(text, "1=4g.40gb@0,1g.10gb@4,1g.10gb@5,1g.10gb@6");
	rc = nd_migparted_layout(carve_mf_find_migconfig(m, "too-many"), &s, text, sizeof(text), &err);
	assert_int_equal(rc, CARVE_EINVAL);
	assert_non_null(strstr(err.text, "mig-configs too-many entry 1, GPU 0"));
	rc = nd_migparted_layout(carve_mf_find_migconfig(m, "off"), &s, text, sizeof(text), &err);
	assert_int_equal(rc, CARVE_EINVAL);
	assert_non_null(strstr(err.text, "carve never changes MIG mode"));
	snap_free(&s);
	carve_manifests_destroy(m);
}

static void test_cgroup_uid(void **st)
{
	char uid[37];

	(void)st;
	assert_true(nd_cgroup_pod_uid("0::/kubepods/burstable/pod6f1c2d3e-aaaa-4bbb-8ccc-0123456789ab/"
				      "cri-containerd-1.scope\n", uid));
	assert_string_equal(uid, "6f1c2d3e-aaaa-4bbb-8ccc-0123456789ab");
	assert_true(nd_cgroup_pod_uid("0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-"
				      "pod6f1c2d3e_aaaa_4bbb_8ccc_0123456789ab.slice/x.scope\n", uid));
	assert_string_equal(uid, "6f1c2d3e-aaaa-4bbb-8ccc-0123456789ab");
	assert_false(nd_cgroup_pod_uid("0::/user.slice/user-1000.slice/session-2.scope\n", uid));
	assert_false(nd_cgroup_pod_uid("0::/kubepods/pod6f1c2d3e-aaaa-4bbb-8ccc-0123456789/x\n", uid));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bindings),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_mig_plan),
		cmocka_unit_test(test_migparted),
		cmocka_unit_test(test_cgroup_uid),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
