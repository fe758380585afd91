/*
 * The library's messages: where an object's log lines go (J2kiLog, set from the parameters'
 * callback) and the error strings. A file of its own so that every stage can log without
 * depending on the encoder front end (encoder.c).
 */
#ifndef J2KI_LOG_H
#define J2KI_LOG_H

#include "j2kcuda.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Where log messages of one object go. */
typedef struct J2kiLog {
    J2kcLogFn fn;
    void *opaque;
    int max_level;
} J2kiLog;

void j2ki_log(const J2kiLog *log, int level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#ifdef __cplusplus
}
#endif

#endif
