/*
 * rng.h - carve's seeded random numbers: splitmix64 and xoshiro256**.
 *
 * The one home of the generators the engine, the simulator and the
 * benchmarks draw from.  Nothing here reads a clock or calls rand(): the
 * same seed gives the same stream on every machine and build, and the
 * streams are part of carve's results (a seeded fill, a generated trace),
 * so changing what a function returns for a given state changes results.
 *
 * Two generators:
 *   - splitmix64 (Vigna's reference constants): a 64-bit state advanced by
 *     the golden-ratio gamma; any value, 0 included, is a valid state.  Used
 *     directly where one word of state is enough, and to seed xoshiro.
 *   - xoshiro256** (Blackman and Vigna): 256 bits of state in struct
 *     carve_rng, seeded by four splitmix64 outputs, so the state is never
 *     all zero.
 *
 * Both are plain values owned by the caller; nothing is allocated, and no
 * function fails.  Not for cryptography.
 */
#ifndef CARVE_RNG_H
#define CARVE_RNG_H

#include <stdint.h>

/* xoshiro256** state; seed it with carve_rng_seed*() before drawing. */
struct carve_rng {
	uint64_t s[4];
};

/* splitmix64: advances *state and returns its next output. */
uint64_t carve_splitmix64(uint64_t *state);

/* Uniform in [0, n) from splitmix64, by rejection (no modulo bias: draws
 * at or above the largest multiple of n are drawn again).  Returns 0 and
 * leaves *state alone when n is 0. */
uint64_t carve_splitmix64_below(uint64_t *state, uint64_t n);

/* Uniform in [0, 1) from splitmix64: the top 53 bits of one draw. */
double carve_splitmix64_double(uint64_t *state);

/* Seeds r with four successive splitmix64 outputs from seed. */
void carve_rng_seed(struct carve_rng *r, uint64_t seed);

/* Seeds r for one of several independent streams of one seed (tracegen's
 * arrival processes): carve_rng_seed(r, seed ^ stream * 0xD1B54A32D192ED03),
 * so stream 0 is carve_rng_seed(r, seed). */
void carve_rng_seed_stream(struct carve_rng *r, uint64_t seed, uint64_t stream);

/* xoshiro256**: the next output; advances r. */
uint64_t carve_rng_next(struct carve_rng *r);

/* Uniform in [0, n), by rejection as carve_splitmix64_below.  Returns 0 and
 * leaves r alone when n is 0. */
uint64_t carve_rng_below(struct carve_rng *r, uint64_t n);

/* Uniform in [0, 1): the top 53 bits of one draw. */
double carve_rng_double(struct carve_rng *r);

#endif
