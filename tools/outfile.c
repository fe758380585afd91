/*
 * Output file writing for the command-line tools (see outfile.h).
 *
 * The target is examined with lstat() first:
 *  - missing: a new regular file, written atomically (temporary file + rename);
 *  - a regular file: replaced atomically, keeping its permission bits;
 *  - a symbolic link: followed (realpath) and the target treated as above, so the link stays
 *    and a regular target is replaced atomically in its own directory;
 *  - a character device, FIFO or block device: opened for writing as it is (no O_CREAT, no
 *    O_TRUNC, no rename): /dev/null stays /dev/null and a FIFO's reader gets the bytes;
 *  - a directory, socket or dangling link: refused with a message.
 */
/* realpath() is an XSI function */
#define _XOPEN_SOURCE 700

#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Suffix of the temporary file next to the output: path + ".tmpXXXXXX" (mkstemp). */
#define TMP_SUFFIX ".tmpXXXXXX"

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static int fail(int e, char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -e;
}

static int write_all(int fd, const uint8_t *data, size_t size)
{
    size_t off = 0;
    while (off < size) {
        ssize_t w = write(fd, data + off, size - off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        off += (size_t)w;
    }
    return 0;
}

/* The mode open(O_CREAT, 0666) would give a new file: 0666 minus the process umask. */
static mode_t new_file_mode(void)
{
    mode_t mask = umask(0);
    umask(mask);
    return 0666 & ~mask;
}

/* Temporary file beside path, chmod'ed to mode, written, renamed over path. */
static int write_replace(const char *path, mode_t mode, const uint8_t *data, size_t size, char *err,
                         size_t errlen)
{
    size_t n = strlen(path);
    char *tmp = malloc(n + sizeof(TMP_SUFFIX));
    if (!tmp)
        return fail(ENOMEM, err, errlen, "%s: out of memory", path);
    memcpy(tmp, path, n);
    memcpy(tmp + n, TMP_SUFFIX, sizeof(TMP_SUFFIX));
    int fd = mkstemp(tmp);   /* mode 0600 */
    if (fd < 0) {
        int e = errno;
        free(tmp);
        return fail(e, err, errlen, "%s: cannot create a temporary file beside it: %s", path, strerror(e));
    }
    int e = fchmod(fd, mode) ? errno : 0;
    if (!e)
        e = write_all(fd, data, size);
    if (close(fd) && !e)
        e = errno;
    if (!e && rename(tmp, path))
        e = errno;
    if (e) {
        unlink(tmp);
        free(tmp);
        return fail(e, err, errlen, "%s: %s", path, strerror(e));
    }
    free(tmp);
    return 0;
}

/* A device or FIFO: written where it is. */
static int write_in_place(const char *path, const uint8_t *data, size_t size, char *err, size_t errlen)
{
    int fd = open(path, O_WRONLY);
    if (fd < 0)
        return fail(errno, err, errlen, "%s: %s", path, strerror(errno));
    int e = write_all(fd, data, size);
    if (close(fd) && !e)
        e = errno;
    return e ? fail(e, err, errlen, "%s: %s", path, strerror(e)) : 0;
}

static int write_to(const char *path, const struct stat *st, const uint8_t *data, size_t size, char *err,
                    size_t errlen)
{
    if (S_ISREG(st->st_mode))
        return write_replace(path, st->st_mode & 07777, data, size, err, errlen);
    if (S_ISCHR(st->st_mode) || S_ISFIFO(st->st_mode) || S_ISBLK(st->st_mode))
        return write_in_place(path, data, size, err, errlen);
    if (S_ISDIR(st->st_mode))
        return fail(EISDIR, err, errlen, "%s: is a directory", path);
    return fail(EINVAL, err, errlen, "%s: not a regular file, device or FIFO", path);
}

int out_write(const char *path, const uint8_t *data, size_t size, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(path, &st)) {
        if (errno != ENOENT)
            return fail(errno, err, errlen, "%s: %s", path, strerror(errno));
        return write_replace(path, new_file_mode(), data, size, err, errlen);
    }
    if (!S_ISLNK(st.st_mode))
        return write_to(path, &st, data, size, err, errlen);
    /* a link: what it names decides, and a regular target is replaced in its own directory */
    char *target = realpath(path, NULL);
    if (!target)
        return fail(errno, err, errlen, "%s: cannot follow the symbolic link: %s", path, strerror(errno));
    int ret;
    if (stat(target, &st))
        ret = fail(errno, err, errlen, "%s: %s", target, strerror(errno));
    else
        ret = write_to(target, &st, data, size, err, errlen);
    free(target);
    return ret;
}
