/*
 * JP2 file format wrapper (ISO/IEC 15444-1 Annex I): signature box, file type box, JP2 header
 * box (image header and colour specification), contiguous codestream box.
 * Box layout (I.4): LBox(32) TBox(32) [XLBox(64) when LBox = 1] contents.
 */
#include "core/markers.h"
#include "hd/bitio.h"

#define BOX_JP   0x6A502020u   /* 'jP  ' */
#define BOX_FTYP 0x66747970u   /* 'ftyp' */
#define BOX_JP2H 0x6A703268u   /* 'jp2h' */
#define BOX_IHDR 0x69686472u   /* 'ihdr' */
#define BOX_BPCC 0x62706363u   /* 'bpcc' */
#define BOX_COLR 0x636F6C72u   /* 'colr' */
#define BOX_JP2C 0x6A703263u   /* 'jp2c' */
#define BRAND_JP2 0x6A703220u  /* 'jp2 ' */

/* EnumCS (Table I.10) */
#define ENUMCS_SRGB 16
#define ENUMCS_GREY 17
#define ENUMCS_SYCC 18

static int same_depth(const J2kcImageDesc *img)
{
    for (int c = 1; c < img->nb_comps; c++)
        if (img->depth[c] != img->depth[0] || img->is_signed[c] != img->is_signed[0])
            return 0;
    return 1;
}

static uint32_t enum_cs(const J2kiCodingParams *cp)
{
    switch (cp->color) {
    case J2KI_COLOR_SRGB: return ENUMCS_SRGB;
    case J2KI_COLOR_GRAY: return ENUMCS_GREY;
    case J2KI_COLOR_SYCC: return ENUMCS_SYCC;
    default:              return cp->img.nb_comps >= 3 ? ENUMCS_SRGB : ENUMCS_GREY;
    }
}

static uint32_t jp2h_len(const J2kcImageDesc *img)
{
    /* jp2h header 8, ihdr 22, bpcc 8 + Csiz when depths differ, colr 15 (enumerated) */
    return 8 + 22 + (same_depth(img) ? 0 : 8 + (uint32_t)img->nb_comps) + 15;
}

size_t j2ki_jp2_boxes_size(const J2kcImageDesc *img, uint64_t cs_len)
{
    /* signature 12, ftyp 20, jp2h, jp2c header 8, or 16 with the XLBox of a codestream whose
     * box would not fit LBox's 32 bits (I.4) */
    return 12 + 20 + jp2h_len(img) + (cs_len + 8 <= UINT32_MAX ? 8 : 16);
}

size_t j2ki_jp2_overhead(const J2kiPlan *plan)
{
    return j2ki_jp2_boxes_size(&plan->cp->img, 0);
}

int64_t j2ki_jp2_write(const J2kiPlan *plan, const uint8_t *cs, size_t cs_len, uint8_t *out, size_t cap)
{
    const J2kcImageDesc *img = &plan->cp->img;
    J2kiBytes b;

    j2ki_bytes_init(&b, out, cap);
    /* I.5.1 signature: 12, 'jP  ', 0x0D0A870A */
    j2ki_put32(&b, 12);
    j2ki_put32(&b, BOX_JP);
    j2ki_put32(&b, 0x0D0A870Au);
    /* I.5.2 file type: BR 'jp2 ', MinV 0, one CL 'jp2 ' */
    j2ki_put32(&b, 20);
    j2ki_put32(&b, BOX_FTYP);
    j2ki_put32(&b, BRAND_JP2);
    j2ki_put32(&b, 0);
    j2ki_put32(&b, BRAND_JP2);
    /* I.5.3 JP2 header */
    j2ki_put32(&b, jp2h_len(img));
    j2ki_put32(&b, BOX_JP2H);
    /* ihdr: HEIGHT(32) WIDTH(32) NC(16) BPC(8) C(8) = 7 UnkC(8) = 0 IPR(8) = 0 */
    j2ki_put32(&b, 22);
    j2ki_put32(&b, BOX_IHDR);
    j2ki_put32(&b, img->height);
    j2ki_put32(&b, img->width);
    j2ki_put16(&b, (uint32_t)img->nb_comps);
    j2ki_put8(&b, same_depth(img) ? (uint32_t)(img->depth[0] - 1) | (img->is_signed[0] ? 0x80u : 0u) : 0xFF);
    j2ki_put8(&b, 7);
    j2ki_put8(&b, 0);
    j2ki_put8(&b, 0);
    if (!same_depth(img)) {
        /* bpcc: one BPC byte per component */
        j2ki_put32(&b, 8 + (uint32_t)img->nb_comps);
        j2ki_put32(&b, BOX_BPCC);
        for (int c = 0; c < img->nb_comps; c++)
            j2ki_put8(&b, (uint32_t)(img->depth[c] - 1) | (img->is_signed[c] ? 0x80u : 0u));
    }
    /* colr: METH(8) = 1 enumerated, PREC(8) = 0, APPROX(8) = 0, EnumCS(32) */
    j2ki_put32(&b, 15);
    j2ki_put32(&b, BOX_COLR);
    j2ki_put8(&b, 1);
    j2ki_put8(&b, 0);
    j2ki_put8(&b, 0);
    j2ki_put32(&b, enum_cs(plan->cp));
    /* I.5.4 contiguous codestream */
    if ((uint64_t)cs_len + 8 <= UINT32_MAX) {
        j2ki_put32(&b, 8 + (uint32_t)cs_len);
        j2ki_put32(&b, BOX_JP2C);
    } else {
        j2ki_put32(&b, 1);
        j2ki_put32(&b, BOX_JP2C);
        j2ki_put32(&b, (uint32_t)(((uint64_t)cs_len + 16) >> 32));
        j2ki_put32(&b, (uint32_t)((uint64_t)cs_len + 16));
    }
    j2ki_put_bytes(&b, cs, cs_len);
    if (b.overflow)
        return J2KC_ERR_BUFSIZE;
    return (int64_t)b.pos;
}
