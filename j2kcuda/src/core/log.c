/*
 * The library's messages (log.h): a log line to the object's callback, and the text of each
 * error code of the public API.
 */
#include <stdarg.h>
#include <stdio.h>

#include "core/log.h"

void j2ki_log(const J2kiLog *log, int level, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    if (!log || !log->fn || level > log->max_level)
        return;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    log->fn(log->opaque, level, buf);
}

const char *j2kc_strerror(int err)
{
    switch (err) {
    case J2KC_OK:              return "success";
    case J2KC_ERR_INVAL:       return "invalid argument";
    case J2KC_ERR_NOMEM:       return "out of host memory";
    case J2KC_ERR_UNSUPPORTED: return "not supported";
    case J2KC_ERR_CUDA:        return "CUDA error";
    case J2KC_ERR_BUFSIZE:     return "byte budget or buffer too small";
    case J2KC_ERR_AGAIN:       return "try again";
    case J2KC_ERR_EOF:         return "no frame in flight";
    case J2KC_ERR_NOTBUILT:    return "backend not built into this library";
    case J2KC_ERR_PROFILE:     return "profile violation";
    case J2KC_ERR_NODEV:       return "no usable CUDA device";
    case J2KC_ERR_DEVMEM:      return "out of GPU memory";
    case J2KC_ERR_BROKEN:      return "encoder unusable after an earlier error";
    case J2KC_ERR_INTERNAL:    return "internal error";
    default:                   return "unknown error";
    }
}
