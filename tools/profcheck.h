/*
 * profcheck: the profile rules of j2kc-check, applied to a codestream in memory: DCI (ISO
 * 15444-1 Amd1 + SMPTE 429-2 / RDD 52), IMF (Amd8 / ST 2067-21), broadcast (Amd3), HTJ2K
 * (15444-15 through Rsiz bit 14 and CAP) and, through csparse, the generic Part-1 syntax.
 * The rules are those of doc profiles.md; no file or command-line handling here, so the
 * checker and the fuzz target (tests/fuzz/fuzz_check.c) run the same code.
 */
#ifndef PROFCHECK_H
#define PROFCHECK_H

#include <stddef.h>
#include <stdint.h>

/** One checking run: where violations go and the frame-rate dependent limits. */
typedef struct Checker {
    const char *file;              /* name printed before each violation */
    int nb_viol;                   /* violations so far (added to by pc_check) */
    int quiet;                     /* 1: count violations, print nothing */
    int verbose;                   /* 1: also print a summary and notes */
    int fps_num, fps_den;          /* 0/0: not given */
} Checker;

/** Profile id of a --profile NAME ("none", "dci2k", ... "broadcast_multi_r"), or -1. */
int pc_profile_id(const char *name);

/**
 * Checks one codestream (or JP2 file) of size bytes against the rules of the profile its Rsiz
 * declares, or of forced (a pc_profile_id() value; 0: the declared one). Prints one line per
 * violation unless k->quiet. Returns 1 when this call found a violation, else 0.
 */
int pc_check(Checker *k, const uint8_t *buf, size_t size, int forced);

#endif /* PROFCHECK_H */
