/*
 * Marker segments, byte by byte for known parameter sets (DCI 2K / 4K style, reversible with
 * SOP/EPH, mixed depths needing QCC), the small segments (SOT, SOP, PLT entries, TLM across
 * segment boundaries) and the JP2 boxes. Expected values are written from Annex A / Annex I
 * tables, not from the writer.
 */
#include "test.h"
#include "core/markers.h"
#include "ref/t2_ref.h"

static void default_cp(J2kiCodingParams *cp)
{
    memset(cp, 0, sizeof(*cp));
    cp->img.nb_comps = 3;
    cp->img.width = 2048;
    cp->img.height = 1080;
    for (int c = 0; c < J2KC_MAX_COMPS; c++) {
        cp->img.depth[c] = 12;
        cp->img.dx[c] = cp->img.dy[c] = 1;
    }
    cp->rsiz = 3;
    cp->nb_layers = 1;
    cp->nb_levels = 5;
    cp->log2_cblk_w = cp->log2_cblk_h = 5;
    cp->reversible = 0;
    cp->mct = 1;
    cp->guard_bits = 1;
    cp->order = J2KI_CPRL;
    cp->tp_split = J2KI_TP_COMP;
    cp->tlm = 1;
    cp->user_precincts = 1;
    for (int r = 0; r < J2KI_MAX_RES; r++)
        cp->prec_log2_w[r] = cp->prec_log2_h[r] = r ? 8 : 7;
}

static uint32_t rd16(const uint8_t *p) { return (uint32_t)p[0] << 8 | p[1]; }
static uint32_t rd32(const uint8_t *p) { return rd16(p) << 16 | rd16(p + 2); }

/* finds marker m in the main header; returns its position or -1 */
static long find_marker(const uint8_t *b, size_t n, uint32_t m)
{
    size_t pos = 2;                        /* after SOC */
    while (pos + 4 <= n) {
        uint32_t code = rd16(b + pos);
        if (code == m) return (long)pos;
        if (code < 0xFF30) return -1;
        pos += 2 + rd16(b + pos + 2);
    }
    return -1;
}

static uint8_t buf[1 << 20];

static void test_dci(void)
{
    J2kiCodingParams cp;
    J2kiPlan *pl = NULL;
    J2kiBytes b;
    size_t tlm;
    long p;
    int ret;

    default_cp(&cp);
    strcpy(cp.comment, "j2kcuda");
    ret = j2ki_plan_create(&pl, &cp, NULL);
    CHECK(ret == 0, "plan %d", ret);
    if (ret) return;
    j2ki_bytes_init(&b, buf, sizeof(buf));
    j2ki_main_header(&b, pl, &tlm);
    CHECK(!b.overflow && (int64_t)b.pos == j2ki_main_header_size(pl), "size %zu", b.pos);
    CHECK(rd16(buf) == 0xFF4F, "SOC");
    /* SIZ */
    p = find_marker(buf, b.pos, 0xFF51);
    CHECK(p == 2, "SIZ right after SOC");
    if (p > 0) {
        const uint8_t *s = buf + p + 2;
        CHECK(rd16(s) == 38 + 9, "Lsiz %u", rd16(s));
        CHECK(rd16(s + 2) == 3, "Rsiz");
        CHECK(rd32(s + 4) == 2048 && rd32(s + 8) == 1080, "Xsiz Ysiz");
        CHECK(rd32(s + 12) == 0 && rd32(s + 16) == 0, "XOsiz YOsiz");
        CHECK(rd32(s + 20) == 2048 && rd32(s + 24) == 1080, "XTsiz YTsiz = image");
        CHECK(rd32(s + 28) == 0 && rd32(s + 32) == 0, "XTOsiz YTOsiz");
        CHECK(rd16(s + 36) == 3, "Csiz");
        for (int c = 0; c < 3; c++)
            CHECK(s[38 + 3 * c] == 0x0B && s[39 + 3 * c] == 1 && s[40 + 3 * c] == 1, "Ssiz XRsiz YRsiz %d", c);
    }
    /* COD: precincts given, CPRL, 1 layer, MCT, 5 levels, 32x32, style 0, 9/7, 0x77 0x88 x5 */
    p = find_marker(buf, b.pos, 0xFF52);
    CHECK(p > 0, "COD");
    if (p > 0) {
        static const uint8_t want[] = { 0xFF, 0x52, 0x00, 18, 0x01, 0x04, 0x00, 0x01, 0x01, 5, 3, 3, 0, 0,
                                        0x77, 0x88, 0x88, 0x88, 0x88, 0x88 };
        CHECK(!memcmp(buf + p, want, sizeof(want)), "COD bytes");
    }
    /* QCD: guard 1, scalar expounded -> Sqcd 0x22, 16 bands x 2 bytes */
    p = find_marker(buf, b.pos, 0xFF5C);
    CHECK(p > 0, "QCD");
    if (p > 0) {
        const uint8_t *s = buf + p + 2;
        CHECK(rd16(s) == 3 + 2 * 16, "Lqcd %u", rd16(s));
        CHECK(s[2] == 0x22, "Sqcd %02x", s[2]);
        for (int i = 0; i < 16; i++) {
            const J2kiBand *band = &pl->bands[i];
            uint32_t v = rd16(s + 3 + 2 * i);
            CHECK(band->comp == 0 && (int)(v >> 11) == band->expn && (int)(v & 0x7FF) == band->mant, "band %d", i);
        }
        /* the LL step of 12-bit 9/7 sits near 2^-? : epsilon within 5 bits, mantissa 11 bits */
        CHECK((rd16(s + 3) >> 11) < 32, "epsilon");
    }
    /* QCC exactly for the components whose step sizes differ from component 0's (with the ICT
     * the quantiser may weight components differently) */
    {
        int want = 0, got = 0;
        long q = find_marker(buf, b.pos, 0xFF5D);
        for (int c = 1; c < 3; c++) {
            int differ = 0;
            for (int i = 0; i < 16; i++) {
                const J2kiBand *a = &pl->bands[i], *d = &pl->bands[pl->tiles[0].comps[c].res[0].first_band + i];
                differ |= a->expn != d->expn || a->mant != d->mant;
            }
            want += differ;
        }
        while (q > 0 && rd16(buf + q) == 0xFF5D) {
            got++;
            q += 2 + rd16(buf + q + 2);
        }
        CHECK(want == got, "QCC count %d, steps differ in %d components", got, want);
    }
    CHECK(find_marker(buf, b.pos, 0xFF5F) < 0, "no POC");
    /* TLM: 3 tile-parts, Stlm 0x60 */
    p = find_marker(buf, b.pos, 0xFF55);
    CHECK(p > 0 && (size_t)p == tlm, "TLM at %ld / %zu", p, tlm);
    if (p > 0) {
        CHECK(rd16(buf + p + 2) == 4 + 18 && buf[p + 4] == 0 && buf[p + 5] == 0x60, "TLM header");
        CHECK(j2ki_tlm_entry_offset(tlm, 0) == (size_t)p + 6 && j2ki_tlm_entry_offset(tlm, 2) == (size_t)p + 18, "TLM entries");
    }
    /* COM: Rcom 1 */
    p = find_marker(buf, b.pos, 0xFF64);
    CHECK(p > 0 && rd16(buf + p + 2) == 4 + 7 && rd16(buf + p + 4) == 1 && !memcmp(buf + p + 6, "j2kcuda", 7), "COM");
    j2ki_plan_free(&pl);

    /* DCI 4K POC: (0,0,1,6,3,CPRL) (6,0,1,7,3,CPRL) */
    default_cp(&cp);
    cp.rsiz = 4;
    cp.img.width = 4096; cp.img.height = 2160; cp.nb_levels = 6;
    cp.nb_poc = 2;
    cp.poc[0] = (J2kiPoc){ 0, 0, 1, 6, 3, J2KI_CPRL };
    cp.poc[1] = (J2kiPoc){ 6, 0, 1, 7, 3, J2KI_CPRL };
    ret = j2ki_plan_create(&pl, &cp, NULL);
    CHECK(ret == 0, "plan 4k %d", ret);
    if (ret) return;
    j2ki_bytes_init(&b, buf, sizeof(buf));
    j2ki_main_header(&b, pl, &tlm);
    p = find_marker(buf, b.pos, 0xFF5F);
    CHECK(p > 0, "POC");
    if (p > 0) {
        static const uint8_t want[] = { 0xFF, 0x5F, 0, 16, 0, 0, 0, 1, 6, 3, 4, 6, 0, 0, 1, 7, 3, 4 };
        CHECK(!memcmp(buf + p, want, sizeof(want)), "POC bytes");
    }
    p = find_marker(buf, b.pos, 0xFF55);
    CHECK(p > 0 && rd16(buf + p + 2) == 4 + 36, "TLM for 6 tile-parts");
    p = find_marker(buf, b.pos, 0xFF52);
    CHECK(p > 0 && rd16(buf + p + 2) == 12 + 7 && buf[p + 9] == 6, "COD 4K");
    j2ki_plan_free(&pl);
    printf("ok markers DCI\n");
}

static void test_reversible(void)
{
    J2kiCodingParams cp;
    J2kiPlan *pl = NULL;
    J2kiBytes b;
    size_t tlm;
    long p;
    int ret;

    default_cp(&cp);
    cp.rsiz = 0;
    cp.img.nb_comps = 2;
    cp.img.width = 100; cp.img.height = 50; cp.img.x0 = 7; cp.img.y0 = 3;
    cp.img.depth[0] = 8; cp.img.depth[1] = 10; cp.img.is_signed[1] = 1;
    cp.img.dx[1] = 2;
    cp.tile_w = 64; cp.tile_h = 32; cp.tile_x0 = 5; cp.tile_y0 = 1;
    cp.reversible = 1; cp.mct = 0; cp.guard_bits = 2; cp.nb_levels = 3;
    cp.user_precincts = 0; cp.sop = 1; cp.eph = 1; cp.tlm = 0;
    cp.order = J2KI_LRCP; cp.nb_layers = 300 > J2KI_MAX_LAYERS ? J2KI_MAX_LAYERS : 300;
    cp.log2_cblk_w = 6; cp.log2_cblk_h = 4;
    cp.cblk_style = J2KI_CBLK_TERMALL | J2KI_CBLK_VCAUSAL;
    cp.tp_split = J2KI_TP_NONE;
    ret = j2ki_plan_create(&pl, &cp, NULL);
    CHECK(ret == 0, "plan %d", ret);
    if (ret) return;
    j2ki_bytes_init(&b, buf, sizeof(buf));
    j2ki_main_header(&b, pl, &tlm);
    CHECK(tlm == 0 && find_marker(buf, b.pos, 0xFF55) < 0, "no TLM");
    CHECK(find_marker(buf, b.pos, 0xFF64) < 0, "no COM");
    p = find_marker(buf, b.pos, 0xFF51);
    if (p > 0) {
        const uint8_t *s = buf + p + 2;
        CHECK(rd32(s + 4) == 107 && rd32(s + 8) == 53 && rd32(s + 12) == 7 && rd32(s + 16) == 3, "grid");
        CHECK(rd32(s + 20) == 64 && rd32(s + 24) == 32 && rd32(s + 28) == 5 && rd32(s + 32) == 1, "tiles");
        CHECK(s[38] == 7 && s[39] == 1 && s[41] == (0x80 | 9) && s[42] == 2 && s[43] == 1, "Ssiz signed / XRsiz");
    }
    p = find_marker(buf, b.pos, 0xFF52);
    if (p > 0) {
        static const uint8_t want[] = { 0xFF, 0x52, 0, 12, 0x06, 0x00, 0, 64, 0, 3, 4, 2, 0x0C, 1 };
        CHECK(!memcmp(buf + p, want, sizeof(want)), "COD reversible bytes");
    }
    p = find_marker(buf, b.pos, 0xFF5C);
    CHECK(p > 0 && rd16(buf + p + 2) == 3 + 10 && buf[p + 4] == 0x40, "QCD reversible");
    if (p > 0)
        for (int i = 0; i < 10; i++)
            CHECK(buf[p + 5 + i] == (uint8_t)(pl->bands[i].expn << 3) && (buf[p + 5 + i] & 7) == 0, "epsilon %d", i);
    /* component 1 is 10-bit: its exponents differ -> QCC with Cqcc = 1 */
    p = find_marker(buf, b.pos, 0xFF5D);
    CHECK(p > 0 && rd16(buf + p + 2) == 4 + 10 && buf[p + 4] == 1 && buf[p + 5] == 0x40, "QCC");
    if (p > 0) {
        uint32_t first = pl->tiles[0].comps[1].res[0].first_band;
        CHECK(buf[p + 6] == (uint8_t)(pl->bands[first].expn << 3) && pl->bands[first].comp == 1, "QCC epsilon");
    }
    j2ki_plan_free(&pl);
    printf("ok markers reversible\n");
}

static void test_small(void)
{
    J2kiBytes b;

    j2ki_bytes_init(&b, buf, sizeof(buf));
    j2ki_mk_sot(&b, 3, 0x01020304u, 1, 6);
    {
        static const uint8_t want[] = { 0xFF, 0x90, 0x00, 0x0A, 0x00, 0x03, 0x01, 0x02, 0x03, 0x04, 0x01, 0x06 };
        CHECK(b.pos == 12 && !memcmp(buf, want, 12), "SOT");
    }
    j2ki_bytes_init(&b, buf, sizeof(buf));
    j2ki_mk_sop(&b, 65537);
    j2ki_mk_eph(&b);
    j2ki_mk_sod(&b);
    j2ki_mk_eoc(&b);
    {
        static const uint8_t want[] = { 0xFF, 0x91, 0, 4, 0, 1, 0xFF, 0x92, 0xFF, 0x93, 0xFF, 0xD9 };
        CHECK(b.pos == 12 && !memcmp(buf, want, 12), "SOP EPH SOD EOC");
    }
    /* Iplt: 7 bits a byte, most significant group first, bit 7 = more follows */
    {
        static const struct { uint64_t v; int n; uint8_t b[4]; } t[] = {
            { 0, 1, { 0x00 } }, { 127, 1, { 0x7F } }, { 128, 2, { 0x81, 0x00 } },
            { 300, 2, { 0x82, 0x2C } }, { 16384, 3, { 0x81, 0x80, 0x00 } },
        };
        for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
            j2ki_bytes_init(&b, buf, sizeof(buf));
            j2ki_put_plt_entry(&b, t[i].v);
            CHECK((int)b.pos == t[i].n && j2ki_plt_entry_bytes(t[i].v) == t[i].n && !memcmp(buf, t[i].b, (size_t)t[i].n),
                  "Iplt %llu", (unsigned long long)t[i].v);
        }
    }
    /* TLM over two segments: 255 entries fill the first (Ltlm = 4 + 6 * 255 = 1534) */
    {
        size_t start, off;
        j2ki_bytes_init(&b, buf, sizeof(buf));
        j2ki_put8(&b, 0xAA);
        start = j2ki_mk_tlm(&b, 257);
        CHECK(start == 1 && b.pos == 1 + 6 + 6 * 255 + 6 + 12, "TLM size %zu", b.pos);
        CHECK(rd16(buf + 1) == 0xFF55 && rd16(buf + 3) == 1534 && buf[5] == 0 && buf[6] == 0x60, "TLM seg 0");
        off = 1 + 6 + 6 * 255;
        CHECK(rd16(buf + off) == 0xFF55 && rd16(buf + off + 2) == 16 && buf[off + 4] == 1 && buf[off + 5] == 0x60, "TLM seg 1");
        CHECK(j2ki_tlm_entry_offset(start, 255) == off + 6 && j2ki_tlm_entry_offset(start, 254) == off - 6, "entry offsets");
    }
    printf("ok markers small\n");
}

static void test_jp2(void)
{
    J2kiCodingParams cp;
    J2kiPlan *pl = NULL;
    static const uint8_t cs[5] = { 0xFF, 0x4F, 1, 2, 3 };
    int64_t n;

    for (int k = 0; k < 4; k++) {
        default_cp(&cp);
        cp.img.width = 640; cp.img.height = 480;
        cp.img.nb_comps = k == 1 ? 1 : 3;
        cp.color = k == 2 ? J2KI_COLOR_SYCC : J2KI_COLOR_AUTO;
        if (k == 3) cp.img.depth[2] = 8;
        if (j2ki_plan_create(&pl, &cp, NULL) < 0) { CHECK(0, "plan"); return; }
        n = j2ki_jp2_write(pl, cs, sizeof(cs), buf, sizeof(buf));
        CHECK(n == (int64_t)(j2ki_jp2_overhead(pl) + sizeof(cs)), "overhead %lld", (long long)n);
        CHECK(rd32(buf) == 12 && !memcmp(buf + 4, "jP  ", 4) && rd32(buf + 8) == 0x0D0A870Au, "signature");
        CHECK(rd32(buf + 12) == 20 && !memcmp(buf + 16, "ftypjp2 ", 8) && rd32(buf + 24) == 0 && !memcmp(buf + 28, "jp2 ", 4), "ftyp");
        CHECK(!memcmp(buf + 36, "jp2h", 4) && rd32(buf + 40) == 22 && !memcmp(buf + 44, "ihdr", 4), "jp2h/ihdr");
        CHECK(rd32(buf + 48) == 480 && rd32(buf + 52) == 640 && rd16(buf + 56) == (uint32_t)cp.img.nb_comps, "ihdr size");
        CHECK(buf[58] == (k == 3 ? 0xFF : 11) && buf[59] == 7 && buf[60] == 0 && buf[61] == 0, "ihdr BPC C");
        {
            size_t q = 62;
            if (k == 3) {
                CHECK(rd32(buf + q) == 11 && !memcmp(buf + q + 4, "bpcc", 4) && buf[q + 8] == 11 && buf[q + 10] == 7, "bpcc");
                q += 11;
            }
            CHECK(rd32(buf + q) == 15 && !memcmp(buf + q + 4, "colr", 4) && buf[q + 8] == 1, "colr");
            CHECK(rd32(buf + q + 11) == (k == 1 ? 17u : k == 2 ? 18u : 16u), "EnumCS %u", rd32(buf + q + 11));
            CHECK(rd32(buf + 32) == q + 15 - 32, "jp2h length");
            q += 15;
            CHECK(rd32(buf + q) == 8 + sizeof(cs) && !memcmp(buf + q + 4, "jp2c", 4) && !memcmp(buf + q + 8, cs, sizeof(cs)), "jp2c");
        }
        CHECK(j2ki_jp2_write(pl, cs, sizeof(cs), buf, (size_t)n - 1) == J2KC_ERR_BUFSIZE, "jp2 bufsize");
        j2ki_plan_free(&pl);
    }
    printf("ok jp2 boxes\n");
}

int main(void)
{
    test_seed("test_markers", 1);
    test_dci();
    test_reversible();
    test_small();
    test_jp2();
    return test_done("test_markers");
}
