/*
 * klvdump: a small independent reader of MXF files (SMPTE ST 336 KLV, ST 377-1 header
 * metadata) for the MXF tests; it checks the file's KLV structure and prints what the tests
 * compare, so that they do not depend on the muxer's own demuxer.
 *
 *   klvdump FILE.mxf               one line per top-level KLV triplet:
 *                                    K <key, 32 hex digits> <value length>
 *                                  and, inside local sets (header metadata), one line per item
 *                                  with its tag resolved through the primer pack:
 *                                    I <item UL, 32 hex digits> <value in hex>
 *                                  and after each partition pack (ST 377-1 7.1) one line per
 *                                  label of its EssenceContainers batch:
 *                                    E <essence container label, 32 hex digits>
 *   klvdump -x PREFIX FILE.mxf     also writes the value of each picture essence element
 *                                  (key 06.0e.2b.34.01.02.01.01.0d.01.03.01.15...) to
 *                                  PREFIX000000.j2c, PREFIX000001.j2c, ... in file order.
 *
 * Exit status 1, with a message on stderr, on a short-form or zero BER length (asdcplib rejects
 * them), a length running past the end of the file, a local item running past its set, or a
 * partition pack whose EssenceContainers batch runs past the pack.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TAGS 1024

static const uint8_t primer_key[16] = { 0x06, 0x0e, 0x2b, 0x34, 0x02, 0x05, 0x01, 0x01,
                                        0x0d, 0x01, 0x02, 0x01, 0x01, 0x05, 0x01, 0x00 };
/* partition packs: 06.0e.2b.34.02.05.01.01.0d.01.02.01.01.<kind>.<status>.00 (ST 377-1 7.1) */
static const uint8_t partition_prefix[13] = { 0x06, 0x0e, 0x2b, 0x34, 0x02, 0x05, 0x01, 0x01,
                                              0x0d, 0x01, 0x02, 0x01, 0x01 };
/* offset of the EssenceContainers batch in a partition pack's value: versions (2 + 2),
 * KAGSize (4), five 8-byte partition offsets and byte counts, IndexSID (4), BodyOffset (8),
 * BodySID (4), OperationalPattern (16) */
#define PARTITION_EC_BATCH 80

/* local sets: 06.0e.2b.34.02.53 (2-byte tags, 2-byte lengths, ST 336 6.3.6) */
static const uint8_t local_set_prefix[6] = { 0x06, 0x0e, 0x2b, 0x34, 0x02, 0x53 };
/* generic container picture items (SMPTE ST 379-2): 06.0e.2b.34.01.02.01.01.0d.01.03.01.15 */
static const uint8_t picture_prefix[13] = { 0x06, 0x0e, 0x2b, 0x34, 0x01, 0x02, 0x01, 0x01,
                                            0x0d, 0x01, 0x03, 0x01, 0x15 };

static struct { unsigned tag; uint8_t ul[16]; } tags[MAX_TAGS];
static int ntags;
static uint8_t *buf;    /* the whole file */

static void hex(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        printf("%02x", p[i]);
}

static int fail(const char *what, long pos)
{
    fprintf(stderr, "klvdump: %s at offset 0x%lx\n", what, pos);
    free(buf);
    return 1;
}

int main(int argc, char **argv)
{
    const char *prefix = NULL, *path;
    FILE *f;
    long size, pos = 0;
    int nframes = 0;

    if (argc == 4 && !strcmp(argv[1], "-x")) {
        prefix = argv[2];
        path = argv[3];
    } else if (argc == 2) {
        path = argv[1];
    } else {
        fprintf(stderr, "usage: klvdump [-x PREFIX] FILE.mxf\n");
        return 2;
    }
    if (!(f = fopen(path, "rb")) || fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 ||
        fseek(f, 0, SEEK_SET)) {
        perror(path);
        return 1;
    }
    if (!(buf = malloc(size ? size : 1)) || fread(buf, 1, size, f) != (size_t)size) {
        perror(path);
        return 1;
    }
    fclose(f);

    while (pos < size) {
        const uint8_t *key = buf + pos;
        uint64_t len = 0;
        long kl, vpos;
        int nber;

        if (size - pos < 17)
            return fail("truncated key", pos);
        if (memcmp(key, "\x06\x0e\x2b\x34", 4))
            return fail("not a SMPTE UL key", pos);
        /* ST 336 allows the short form; asdcplib (and so every DCP/IMF tool built on it)
         * accepts only the long form, with a non-zero count of length bytes. */
        if (!(key[16] & 0x80))
            return fail("short-form BER length", pos + 16);
        nber = key[16] & 0x7f;
        if (nber == 0 || nber > 8)
            return fail("zero or oversized BER length", pos + 16);
        if (size - pos < 17 + nber)
            return fail("truncated BER length", pos + 16);
        for (int i = 0; i < nber; i++)
            len = len << 8 | key[17 + i];
        kl = 17 + nber;
        vpos = pos + kl;
        if (len > (uint64_t)(size - vpos))
            return fail("value runs past the end of the file", pos);

        printf("K ");
        hex(key, 16);
        printf(" %llu\n", (unsigned long long)len);

        if (!memcmp(key, partition_prefix, sizeof(partition_prefix)) && key[13] >= 2 &&
            key[13] <= 4) {
            const uint8_t *p = buf + vpos + PARTITION_EC_BATCH;
            uint32_t n, item;
            if (len < PARTITION_EC_BATCH + 8)
                return fail("short partition pack", pos);
            n = (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
            item = (uint32_t)p[4] << 24 | p[5] << 16 | p[6] << 8 | p[7];
            if (item != 16 || PARTITION_EC_BATCH + 8 + (uint64_t)n * 16 > len)
                return fail("bad EssenceContainers batch in a partition pack", pos);
            for (uint32_t i = 0; i < n; i++) {
                printf("E ");
                hex(p + 8 + 16 * i, 16);
                printf("\n");
            }
        } else if (!memcmp(key, primer_key, 16)) {
            const uint8_t *p = buf + vpos;
            uint32_t n, item;
            if (len < 8)
                return fail("short primer pack", pos);
            n = (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
            item = (uint32_t)p[4] << 24 | p[5] << 16 | p[6] << 8 | p[7];
            if (item != 18 || 8 + (uint64_t)n * 18 > len || n > MAX_TAGS)
                return fail("bad primer pack", pos);
            for (uint32_t i = 0; i < n; i++) {
                tags[i].tag = p[8 + 18 * i] << 8 | p[9 + 18 * i];
                memcpy(tags[i].ul, p + 10 + 18 * i, 16);
            }
            ntags = n;
        } else if (!memcmp(key, local_set_prefix, 6)) {
            const uint8_t *p = buf + vpos, *end = p + len;
            while (p < end) {
                unsigned tag, ilen;
                int t;
                if (end - p < 4)
                    return fail("truncated local item", (long)(p - buf));
                tag = p[0] << 8 | p[1];
                ilen = p[2] << 8 | p[3];
                if ((long)ilen > end - p - 4)
                    return fail("local item runs past its set", (long)(p - buf));
                for (t = 0; t < ntags && tags[t].tag != tag; t++)
                    ;
                printf("I ");
                if (t < ntags)
                    hex(tags[t].ul, 16);
                else
                    printf("tag%04x", tag);
                printf(" ");
                hex(p + 4, ilen);
                printf("\n");
                p += 4 + ilen;
            }
        } else if (prefix && !memcmp(key, picture_prefix, sizeof(picture_prefix))) {
            char name[4096];
            FILE *o;
            snprintf(name, sizeof(name), "%s%06d.j2c", prefix, nframes++);
            if (!(o = fopen(name, "wb")) || fwrite(buf + vpos, 1, len, o) != len || fclose(o)) {
                perror(name);
                free(buf);
                return 1;
            }
        }
        pos = vpos + len;
    }
    free(buf);
    return 0;
}
