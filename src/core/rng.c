/*
 * rng.c - splitmix64 and xoshiro256** (include/carve/rng.h).
 *
 * Invariant: every function here maps a state to exactly the outputs the
 * published reference algorithms give, and the mappings to [0, n) and
 * [0, 1) never change: seeded results across carve (fill runs, generated
 * traces, benchmark workloads) are compared byte for byte between builds.
 * No clock, no globals, no allocation.
 */
#include "carve/rng.h"

/* Weyl increment of splitmix64 (2^64 / golden ratio, odd). */
#define GAMMA 0x9e3779b97f4a7c15ULL
/* Odd multiplier that spreads stream numbers over the seed space. */
#define STREAM_MUL 0xd1b54a32d192ed03ULL
/* 2^-53: a 53-bit integer times this is a double in [0, 1), exactly. */
#define TWO_M53 (1.0 / 9007199254740992.0)

uint64_t carve_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += GAMMA);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint64_t carve_splitmix64_below(uint64_t *state, uint64_t n)
{
	uint64_t lim, x;

	if (!n)
		return 0;
	lim = UINT64_MAX - UINT64_MAX % n;
	do
		x = carve_splitmix64(state);
	while (x >= lim);
	return x % n;
}

double carve_splitmix64_double(uint64_t *state)
{
	return (double)(carve_splitmix64(state) >> 11) * TWO_M53;
}

void carve_rng_seed(struct carve_rng *r, uint64_t seed)
{
	int i;

	for (i = 0; i < 4; i++)
		r->s[i] = carve_splitmix64(&seed);
}

void carve_rng_seed_stream(struct carve_rng *r, uint64_t seed, uint64_t stream)
{
	carve_rng_seed(r, seed ^ (stream * STREAM_MUL));
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t carve_rng_next(struct carve_rng *r)
{
	uint64_t *s = r->s;
	uint64_t out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return out;
}

uint64_t carve_rng_below(struct carve_rng *r, uint64_t n)
{
	uint64_t lim, x;

	if (!n)
		return 0;
	lim = UINT64_MAX - UINT64_MAX % n;
	do
		x = carve_rng_next(r);
	while (x >= lim);
	return x % n;
}

double carve_rng_double(struct carve_rng *r)
{
	return (double)(carve_rng_next(r) >> 11) * TWO_M53;
}
