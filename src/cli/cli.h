/*
 * cli.h - the `carve` command: one function per subcommand, dispatched by
 * the table in main.c, and what the files of one subcommand share (names
 * start with the subcommand: simulate_).  Exit codes: 0 success, 1 failure
 * (errors found), 2 usage error.
 */
#ifndef CARVE_CLI_H
#define CARVE_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "carve/sim.h"

#define CARVE_EXIT_OK 0
#define CARVE_EXIT_FAIL 1
#define CARVE_EXIT_USAGE 2

int cmd_validate(int argc, char **argv);
int cmd_admit(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_scheduler(int argc, char **argv);
int cmd_webhook(int argc, char **argv);
int cmd_node(int argc, char **argv);

/* ---- input.c: manifest paths ---- */

/* How diagnostics name standard input. */
#define CLI_STDIN_NAME "<stdin>"

struct carve_manifests;

/* carve_manifests_load_path, except that "-" reads standard input as one
 * YAML stream named CLI_STDIN_NAME.  Same returns. */
int cli_manifests_load(struct carve_manifests *m, const char *path);

/* ---- output.c: files named on the command line, and standard output ---- */

/* Prints "carve CMD: MESSAGE" on stderr, the message escaped as diagnostics
 * are (carve_fputs_esc): for messages that carry names from the input. */
void cli_errorf(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;

/* Whether s is a whole decimal number in lo..hi and nothing else (no sign
 * '+', no blanks); its value in *out when it is. */
bool cli_parse_long(const char *s, long lo, long hi, long *out);

/* A flag's bad value: prints "carve CMD: FLAG 'VAL': WANT" and the hint to
 * run `carve CMD --help`.  Returns CARVE_EXIT_USAGE. */
int cli_bad_flag(const char *cmd, const char *flag, const char *val, const char *want);

/* One output: standard output, or a file replaced whole on success (a
 * temporary file beside it, renamed into place), or a device or FIFO
 * written directly. */
struct cli_out {
	FILE *f;          /* where to write */
	const char *cmd;  /* "report", "simulate", ...: for messages */
	const char *path; /* as given (borrowed) */
	char *target;     /* the regular file tmp replaces (a symlink resolved) */
	char *tmp;        /* the temporary file; NULL when writing directly */
};

/* Opens path for writing (NULL or "-": standard output).  Returns 0, or -1
 * after saying why on stderr ("carve CMD: cannot write PATH: REASON"). */
int cli_out_open(struct cli_out *o, const char *path, const char *cmd);

/* Finishes o: flushes, fsyncs and closes the temporary file, checking
 * each step, and renames it over the target; a direct file is flushed and
 * closed; standard output is flushed (not closed).  werr: the errno seen
 * when the writer reported a failed write (0 if none), to name the reason
 * when stdio no longer knows it.  Returns 0, or -1 after saying why, with
 * the temporary file removed and the target untouched. */
int cli_out_commit(struct cli_out *o, int werr);

/* Gives o up after a failure: closes it and removes the temporary file
 * (never the target).  Standard output is left open. */
void cli_out_abort(struct cli_out *o);

/* Flushes standard output; false after reporting "carve CMD: cannot write
 * output: REASON" (once per process) when a write to it failed. */
bool cli_stdout_ok(const char *cmd);
/* The same, with werr as for cli_out_commit. */
bool cli_stdout_ok_err(const char *cmd, int werr);

/* main.c, after the subcommand: flushes and closes standard output;
 * returns rc, or CARVE_EXIT_FAIL (reported as above) when that fails or an
 * earlier write to it did. */
int cli_stdout_close(const char *cmd, int rc);

/* ---- carve simulate: cmd_simulate.c (options, dispatch) and its modes ---- */

/* The fill experiment's buckets: arrived workload FIRST, FIRST + STEP, ...,
 * LAST % of GPU capacity (the usage text names them too). */
#define SIMULATE_PCT_FIRST 50
#define SIMULATE_PCT_LAST 130
#define SIMULATE_PCT_STEP 5

/* What --mode replay was asked: parsed by cmd_simulate, run by simulate_replay. */
struct simulate_replay_opts {
	struct carve_sim_opts sim;
	int64_t until;            /* -1: none */
	bool carve;               /* run carve (false with --baseline) */
	enum carve_sim_sched baselines[CARVE_SIM_NSCHED]; /* --compare/--baseline, in order */
	size_t nbaselines;
	bool table;
	const char *report;       /* --report FILE: the HTML report; NULL none */
	const uint64_t *seeds;    /* --seeds: replay generated traces, one per seed */
	size_t nseeds;            /* 0: the trace given (--trace or DIR) */
	const char *scenario;     /* carve_tracegen scenario for --seeds ("seed") */
	int days;                 /* days of each generated trace (7) */
};

/* cmd_simulate.c: seconds on the monotonic clock, for progress lines only. */
double simulate_now_s(void);

/* cmd_simulate_fill.c: loads the openb nodes and tasks, runs every (policy,
 * seed) and prints the result (table or JSON); the exit code. */
int simulate_fill(const char *nodes, const char *trace, const char **pols, size_t npol,
		  const uint64_t *seeds, size_t nseeds, bool table);

/* cmd_simulate_replay.c: manifests from paths (a directory holding traces
 * is the trace when trace is NULL), the trace, one or both schedulers, the
 * output and --report; the exit code. */
int simulate_replay(char *const *paths, size_t npaths, const char *trace,
		    const struct simulate_replay_opts *ro);

#endif
