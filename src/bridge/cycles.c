/*
 * cycles.c - cycles of parent links (Cohorts' spec.parentName, Volcano and
 * KAI queues' parents), found once by the build, which cuts one link per
 * cycle so the engine gets a tree; carve validate reports them through the
 * same build (check_as_admitted).  One walk, one message.
 *
 * Invariant: each node has at most one parent, so cycles are disjoint and
 * each is reported exactly once, at the node whose parent link closes it
 * when the walk starts from the lowest index on it.
 */
#include <stdio.h>
#include <string.h>

#include "bridge_int.h"

bool br_find_cycles(size_t n, int (*parent)(const void *ctx, size_t i), const void *ctx,
		    void (*found)(void *fctx, const size_t *path, size_t len), void *fctx)
{
	unsigned char *state = carve_calloc(n ? n : 1, 1); /* 0 new, 1 on path, 2 done */
	size_t *path = carve_calloc(n ? n : 1, sizeof(*path));
	size_t i;

	if (!state || !path) {
		carve_free(state);
		carve_free(path);
		return false;
	}
	for (i = 0; i < n; i++) {
		size_t len = 0, cur = i, start;

		while (state[cur] == 0) {
			int up;

			state[cur] = 1;
			path[len++] = cur;
			up = parent(ctx, cur);
			if (up < 0 || (size_t)up >= n)
				break;
			cur = (size_t)up;
			if (state[cur] == 1) {
				for (start = 0; path[start] != cur; start++)
					;
				found(fctx, path + start, len - start);
				break;
			}
		}
		while (len > 0)
			state[path[--len]] = 2;
	}
	carve_free(state);
	carve_free(path);
	return true;
}

const char *br_cycle_text(const size_t *path, size_t len,
			  const char *(*name)(const void *ctx, size_t i), const void *ctx,
			  char *buf, size_t size)
{
	size_t k, off = 0;

	buf[0] = '\0';
	for (k = 0; k <= len && off < size; k++)
		off += (size_t)snprintf(buf + off, size - off, "%s%s", k ? " -> " : "",
					name(ctx, path[k % len]));
	return buf;
}
