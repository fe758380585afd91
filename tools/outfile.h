/*
 * Writing the command-line tools' output file: a regular file (or a symbolic link to one) is
 * replaced atomically, so a reader never sees half a codestream and a failed run leaves the old
 * file as it was; anything else the user names (a character device such as /dev/null, a FIFO, a
 * symbolic link to one of them) is written in place, never replaced by a regular file.
 */
#ifndef OUTFILE_H
#define OUTFILE_H

#include <stddef.h>
#include <stdint.h>

/**
 * Writes size bytes of data to path. Returns 0, or a negative errno value with a message in
 * err (errlen bytes) naming the path and the reason.
 *
 * A new regular file gets mode 0666 minus the umask, as open(O_CREAT) would give it; an
 * existing regular file keeps its permission bits (as when it is rewritten in place). The
 * temporary file lives beside the final one (same directory, so rename() is atomic) and is
 * removed on any failure.
 */
int out_write(const char *path, const uint8_t *data, size_t size, char *err, size_t errlen);

#endif /* OUTFILE_H */
