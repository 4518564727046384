/*
 * nvml_dump.c - carve-nvml-dump: loads NVML as the node agent does
 * (nd_nvml_open), takes one snapshot and prints it as JSON
 * (nd_snapshot_json), or the carve.dev/mig-current text with
 * --mig-current.  Read-only: it never changes MIG mode or layouts.  Used
 * by scripts/gpu-check.sh on machines with a real driver.
 *   carve-nvml-dump [--lib PATH] [--mig-current] [--events MS]
 * Exit 0, or 1 with the error on stderr (no driver, a failed call).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node_int.h"

static int usage(void)
{
	fprintf(stderr, "usage: carve-nvml-dump [--lib PATH] [--mig-current] [--events MS]\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *lib = NULL;
	struct carve_error err = {0, ""};
	struct nd_snapshot s;
	struct nd_nvml *n;
	bool current = false;
	int i, events = -1, rc;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--lib") && i + 1 < argc)
			lib = argv[++i];
		else if (!strcmp(argv[i], "--events") && i + 1 < argc)
			events = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--mig-current"))
			current = true;
		else
			return usage();
	}
	if (nd_nvml_open(lib, &n, &err)) {
		fprintf(stderr, "carve-nvml-dump: %s\n", err.text);
		return 1;
	}
	if (events >= 0 && nd_nvml_poll_events(n, events, &err) < 0)
		fprintf(stderr, "carve-nvml-dump: events: %s\n", err.text);
	rc = nd_nvml_snapshot(n, &s, &err);
	if (rc) {
		fprintf(stderr, "carve-nvml-dump: %s\n", err.text);
		nd_nvml_close(n);
		return 1;
	}
	if (current) {
		char buf[4096];

		rc = nd_miglayout_current(&s, buf, sizeof(buf));
		if (rc >= 0)
			printf("%s\n", buf);
	} else {
		char *js = nd_snapshot_json(&s, true);

		rc = js ? 0 : CARVE_ENOMEM;
		if (js)
			printf("%s\n", js);
		free(js);
	}
	nd_snapshot_free(&s);
	nd_nvml_close(n);
	if (rc < 0)
		fprintf(stderr, "carve-nvml-dump: %s\n", carve_strerror(rc));
	return rc < 0;
}
