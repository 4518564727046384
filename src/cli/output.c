/*
 * output.c - where the `carve` command writes: files named on the command
 * line (report -o, simulate --report, trace generate -o) and standard output.
 *
 * Invariants: a regular file is replaced whole or not at all.  The page is
 * written to a temporary file beside it (mkstemp), flushed, fsync'ed and
 * closed with every step checked, then renamed over the target; on failure
 * only that temporary file is removed.  A symlink is followed (the file it
 * names is replaced, the link stays); a target that is not a regular file
 * (a device, a FIFO) is written directly and never removed.  carve never
 * removes a file it did not create.  Every failed write is reported once,
 * as "carve CMD: cannot write output: REASON" (standard output) or "carve
 * CMD: cannot write PATH: REASON", and means exit 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "carve/carve.h"
#include "carve/diag.h"
#include "cli.h"

bool cli_parse_long(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	if (!*s || *s == ' ' || *s == '+')
		return false;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

int cli_bad_flag(const char *cmd, const char *flag, const char *val, const char *want)
{
	cli_errorf(cmd, "%s '%s': %s", flag, val, want);
	fprintf(stderr, "Run 'carve %s --help' for the flags.\n", cmd);
	return CARVE_EXIT_USAGE;
}

void cli_errorf(const char *cmd, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "carve %s: ", cmd);
	carve_fputs_esc(buf, stderr);
	fputc('\n', stderr);
}

/* Set once a failed write to standard output was reported. */
static bool stdout_reported;

/* errno after a failed flush; else, when the stream only kept its error
 * flag (an earlier write failed and stdio dropped what it held), werr, the
 * errno the caller saw then, or EIO when it saw none. */
static int stream_errno(FILE *f, int flush_rc, int werr)
{
	if (flush_rc && errno)
		return errno;
	if (!ferror(f))
		return 0;
	return werr ? werr : EIO;
}

static void report_stdout(const char *cmd, int e)
{
	if (stdout_reported)
		return;
	stdout_reported = true;
	fprintf(stderr, "carve %s: cannot write output: %s\n", cmd, strerror(e));
}

bool cli_stdout_ok(const char *cmd)
{
	return cli_stdout_ok_err(cmd, 0);
}

bool cli_stdout_ok_err(const char *cmd, int werr)
{
	int e;

	errno = 0;
	e = stream_errno(stdout, fflush(stdout), werr);
	if (!e)
		return true;
	report_stdout(cmd, e);
	return false;
}

int cli_stdout_close(const char *cmd, int rc)
{
	int e;

	errno = 0;
	e = stream_errno(stdout, fflush(stdout), 0);
	if (fclose(stdout) && !e)
		e = errno ? errno : EIO;
	if (!e)
		return rc;
	report_stdout(cmd, e);
	return CARVE_EXIT_FAIL;
}

/* The directory part of path ("." when it has none); NULL on no memory. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *d;

	if (!slash)
		return carve_strdup(".");
	if (slash == path)
		return carve_strdup("/");
	d = carve_malloc((size_t)(slash - path) + 1);
	if (d) {
		memcpy(d, path, (size_t)(slash - path));
		d[slash - path] = '\0';
	}
	return d;
}

/* Opens a temporary file (".carve-XXXXXX") in o->target's folder with
 * mode; 0 or an errno. */
static int open_temp(struct cli_out *o, mode_t mode)
{
	char *dir = dir_of(o->target);
	size_t len;
	int fd;

	if (!dir)
		return ENOMEM;
	/* Not named after the target: a name near NAME_MAX still gets one. */
	len = strlen(dir) + sizeof("/.carve-XXXXXX");
	o->tmp = carve_malloc(len);
	if (!o->tmp) {
		carve_free(dir);
		return ENOMEM;
	}
	snprintf(o->tmp, len, "%s/.carve-XXXXXX", dir);
	carve_free(dir);
	fd = mkstemp(o->tmp);
	if (fd < 0 || fchmod(fd, mode) || !(o->f = fdopen(fd, "w"))) {
		int e = errno;

		if (fd >= 0) {
			close(fd);
			unlink(o->tmp);
		}
		carve_free(o->tmp);
		o->tmp = NULL;
		return e;
	}
	return 0;
}

/* The mode a new file gets from open(2): 0666 less the umask. */
static mode_t new_file_mode(void)
{
	mode_t mask = umask(0);

	umask(mask);
	return 0666 & ~mask;
}

int cli_out_open(struct cli_out *o, const char *path, const char *cmd)
{
	struct stat st, lst;
	int e;

	memset(o, 0, sizeof(*o));
	o->cmd = cmd;
	o->path = path;
	if (!path || !strcmp(path, "-")) {
		o->f = stdout;
		return 0;
	}
	if (stat(path, &st)) {
		if (errno != ENOENT) {
			e = errno;
			goto fail;
		}
		if (!lstat(path, &lst))
			goto direct; /* a dangling symlink: create what it names */
		o->target = strdup(path);
		e = o->target ? open_temp(o, new_file_mode()) : ENOMEM;
	} else if (!S_ISREG(st.st_mode)) {
		goto direct; /* a device, a FIFO: written as it is, never replaced */
	} else {
		o->target = lstat(path, &lst) || !S_ISLNK(lst.st_mode) ? strdup(path)
								       : realpath(path, NULL);
		e = o->target ? open_temp(o, st.st_mode & 07777) : errno ? errno : ENOMEM;
		/* A folder we may not write in, holding a file we may: write the file. */
		if (e == EACCES || e == EPERM || e == EROFS) {
			free(o->target);
			o->target = NULL;
			goto direct;
		}
	}
	if (!e)
		return 0;
	free(o->target);
	o->target = NULL;
	goto fail;
direct:
	o->f = fopen(path, "w");
	if (o->f)
		return 0;
	e = errno;
fail:
	fprintf(stderr, "carve %s: cannot write %s: %s\n", cmd, path, strerror(e));
	return -1;
}

/* Frees what open allocated; o is closed. */
static void out_free(struct cli_out *o)
{
	carve_free(o->tmp);
	free(o->target); /* from strdup or realpath */
	o->tmp = NULL;
	o->target = NULL;
	o->f = NULL;
}

int cli_out_commit(struct cli_out *o, int werr)
{
	int e;

	if (o->f == stdout)
		return cli_stdout_ok_err(o->cmd, werr) ? 0 : -1;
	errno = 0;
	e = stream_errno(o->f, fflush(o->f), werr);
	if (!e && o->tmp && fsync(fileno(o->f)))
		e = errno;
	if (fclose(o->f) && !e)
		e = errno ? errno : EIO;
	if (!e && o->tmp && rename(o->tmp, o->target))
		e = errno;
	if (e && o->tmp)
		unlink(o->tmp);
	if (e)
		fprintf(stderr, "carve %s: cannot write %s: %s\n", o->cmd, o->path, strerror(e));
	out_free(o);
	return e ? -1 : 0;
}

void cli_out_abort(struct cli_out *o)
{
	if (!o->f || o->f == stdout) {
		o->f = NULL;
		return;
	}
	fclose(o->f);
	if (o->tmp)
		unlink(o->tmp);
	out_free(o);
}
