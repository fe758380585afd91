/*
 * csparse: an independent JPEG 2000 Part-1 codestream header parser (ISO/IEC 15444-1 Annex A)
 * for the profile checker. It reads every marker segment of the main header and of every
 * tile-part header, follows Psot from tile-part to tile-part and checks the generic syntax
 * rules (marker order, segment lengths, Psot/TLM consistency, EOC). It never calls the
 * library: the checker judges our encoder's output as an outsider would.
 */
#ifndef CSPARSE_H
#define CSPARSE_H

#include <stddef.h>
#include <stdint.h>

#define CS_MAX_COMPS   256   /* components kept in detail (Csiz may be larger: counted only) */
#define CS_MAX_RES     33
#define CS_MAX_POC     64
#define CS_MAX_MARKERS 64    /* distinct marker codes remembered per header */

/* Marker codes (Table A.2). */
enum {
    CS_SOC = 0xFF4F, CS_CAP = 0xFF50, CS_SIZ = 0xFF51, CS_COD = 0xFF52, CS_COC = 0xFF53,
    CS_TLM = 0xFF55, CS_PRF = 0xFF56, CS_PLM = 0xFF57, CS_PLT = 0xFF58, CS_CPF = 0xFF59,
    CS_QCD = 0xFF5C, CS_QCC = 0xFF5D, CS_RGN = 0xFF5E, CS_POC = 0xFF5F, CS_PPM = 0xFF60,
    CS_PPT = 0xFF61, CS_CRG = 0xFF63, CS_COM = 0xFF64, CS_SOT = 0xFF90, CS_SOP = 0xFF91,
    CS_EPH = 0xFF92, CS_SOD = 0xFF93, CS_EOC = 0xFFD9,
};

/** Coding style of one component (COD SPcod or COC SPcoc, Tables A.13, A.15, A.20). */
typedef struct CsCodStyle {
    int present;
    int user_precincts;          /* Scod/Scoc bit 0 */
    int nb_levels;               /* decomposition levels */
    int xcb, ycb;                /* code-block exponents (xcb = value + 2) */
    int cblk_style;              /* Table A.19 bits */
    int transform;               /* 0: 9/7 irreversible, 1: 5/3 reversible */
    uint8_t prec[CS_MAX_RES];    /* PPy << 4 | PPx per resolution (0xFF.. when no partition) */
} CsCodStyle;

/** Quantisation of one component (QCD/QCC, Tables A.27-A.30). */
typedef struct CsQuant {
    int present;
    int guard_bits;              /* Sqcd >> 5 */
    int style;                   /* Sqcd & 0x1F: 0 none, 1 derived, 2 expounded */
    int nb_steps;                /* entries in the segment */
    int len_ok;                  /* length consistent with style (nb_levels checked later) */
    int max_expn;                /* largest exponent epsilon_b listed (M_b = guard + expn - 1) */
} CsQuant;

typedef struct CsPoc {
    int rs, cs, lye, re, ce, order;
} CsPoc;

/** Everything a tile-part header said (A.4.2). */
typedef struct CsTilePart {
    size_t   offset;             /* of the SOT marker */
    uint32_t psot;               /* as written (0 = to EOC) */
    uint64_t length;             /* actual length, SOT to end of its data */
    int      isot, tpsot, tnsot;
    size_t   header_len;         /* SOT..SOD inclusive */
    int      nb_markers;
    uint16_t markers[CS_MAX_MARKERS]; /* marker codes found in the tile-part header, in order */
    int      nb_poc;
    int      nb_plt;             /* PLT segments */
    uint64_t plt_sum;            /* sum of the packet lengths they list */
    int      nb_sop;             /* SOP markers found in the tile-part body (when Scod says SOP) */
} CsTilePart;

typedef struct CsTlmEntry {
    int      ztlm;               /* index of the TLM segment */
    int      ttlm;               /* -1 when ST = 0 */
    uint32_t ptlm;
} CsTlmEntry;

typedef struct CsStream {
    const uint8_t *buf;          /* the codestream (inside the JP2 box when jp2) */
    size_t size;                 /* codestream length in bytes (SOC..EOC) */
    int    jp2;                  /* found inside a JP2 file's jp2c box */

    /* SIZ (A.5.1) */
    int      have_siz;
    uint16_t rsiz;
    uint32_t xsiz, ysiz, xosiz, yosiz, xtsiz, ytsiz, xtosiz, ytosiz;
    int      csiz;
    uint8_t  ssiz[CS_MAX_COMPS], xrsiz[CS_MAX_COMPS], yrsiz[CS_MAX_COMPS];
    uint32_t nb_tiles_x, nb_tiles_y;

    /* CAP (15444-1 Amd / 15444-15) */
    int      have_cap;
    uint32_t pcap;
    int      have_ccap15;        /* Pcap bit 15 (Part 15, HTJ2K) and its Ccap15 read */
    uint16_t ccap15;

    /* COD (A.6.1) */
    int have_cod;
    int scod, order, nb_layers, mct;
    CsCodStyle cod;
    CsCodStyle coc[CS_MAX_COMPS];   /* main-header COC overrides */
    CsQuant qcd;
    CsQuant qcc[CS_MAX_COMPS];

    int    nb_poc;
    CsPoc  poc[CS_MAX_POC];

    int    nb_tlm_seg;
    int    tlm_st[256], tlm_sp[256];  /* per Ztlm */
    int    nb_tlm;
    CsTlmEntry *tlm;

    int    nb_plm, nb_ppm, nb_com, nb_rgn, nb_crg;
    char   com_text[256];            /* first Latin-1 COM */

    int      nb_main_markers;
    uint16_t main_markers[CS_MAX_MARKERS];
    size_t   main_header_len;        /* SOC to first SOT */

    int    nb_tp;
    CsTilePart *tp;
    int    nb_tp_poc, nb_tp_cod, nb_tp_coc, nb_tp_qcd, nb_tp_qcc, nb_tp_rgn, nb_tp_ppt, nb_tp_plt;

    int    have_eoc;
    int    nb_errors;                /* generic syntax violations reported */
} CsStream;

/** Receives one violation: rule is a short identifier, msg the full text. */
typedef void (*CsReportFn)(void *opaque, const char *rule, const char *msg);

/**
 * Parses a codestream (or a JP2 file holding one) of size bytes. Generic Part-1 violations
 * go to report(); returns 0 when parsing could reach the end, -1 when the structure was
 * too broken to continue (a violation was reported). cs_free() releases cs in both cases.
 */
int cs_parse(CsStream *cs, const uint8_t *buf, size_t size, CsReportFn report, void *opaque);
void cs_free(CsStream *cs);

/** Coding style / quantisation that applies to component c in the main header. */
const CsCodStyle *cs_cod_for(const CsStream *cs, int c);
const CsQuant *cs_quant_for(const CsStream *cs, int c);

/** Name of a marker code ("SIZ") or "0xFFxx". buf must hold 8 bytes. */
const char *cs_marker_name(uint16_t code, char *buf);

/** Whether the marker list of a header contains code. */
int cs_has_marker(const uint16_t *list, int n, uint16_t code);

#endif /* CSPARSE_H */
