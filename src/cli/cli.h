/*
 * cli.h - the `carve` command: one function per subcommand, dispatched by
 * the table in main.c.  Exit codes: 0 success, 1 failure (errors found),
 * 2 usage error.
 */
#ifndef CARVE_CLI_H
#define CARVE_CLI_H

#define CARVE_EXIT_OK 0
#define CARVE_EXIT_FAIL 1
#define CARVE_EXIT_USAGE 2

int cmd_validate(int argc, char **argv);
int cmd_admit(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_trace(int argc, char **argv);

#endif
