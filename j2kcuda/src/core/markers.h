/*
 * Marker segments of the codestream (ISO/IEC 15444-1 Annex A), one writer per segment.
 * Every writer appends to a J2kiBytes, which may be in counting mode (buf == NULL): sizes
 * are always obtained by running the writer itself, so they cannot drift apart.
 */
#ifndef J2KI_MARKERS_H
#define J2KI_MARKERS_H

#include "core/j2ki.h"
#include "core/plan.h"
#include "hd/bitio.h"

/* marker codes (Table A.2) */
#define J2KI_MS_SOC 0xFF4F
#define J2KI_MS_SIZ 0xFF51
#define J2KI_MS_CAP 0xFF50
#define J2KI_MS_COD 0xFF52
#define J2KI_MS_TLM 0xFF55
#define J2KI_MS_PLT 0xFF58
#define J2KI_MS_QCD 0xFF5C
#define J2KI_MS_QCC 0xFF5D
#define J2KI_MS_POC 0xFF5F
#define J2KI_MS_COM 0xFF64
#define J2KI_MS_SOT 0xFF90
#define J2KI_MS_SOP 0xFF91
#define J2KI_MS_EPH 0xFF92
#define J2KI_MS_SOD 0xFF93
#define J2KI_MS_EOC 0xFFD9

/* TLM with ST = 2, SP = 1 (16-bit Ttlm, 32-bit Ptlm): 6 bytes per tile-part. A segment could
 * hold (65535 - 4) / 6 = 10921 entries, but FFmpeg's decoder (up to at least 5.1) keeps the
 * entry count of a segment in 8 bits and rejects longer ones: at most 255 entries a segment,
 * more segments (Ztlm 0, 1, ...) as needed. */
#define J2KI_TLM_ENTRY_BYTES 6
#define J2KI_TLM_MAX_ENTRIES 255

/** SOC (A.4.1): FF4F. */
void j2ki_mk_soc(J2kiBytes *b);

/**
 * SIZ (A.5.1): FF51, Lsiz(16) = 38 + 3 Csiz, Rsiz(16), Xsiz(32), Ysiz(32), XOsiz(32), YOsiz(32),
 * XTsiz(32), YTsiz(32), XTOsiz(32), YTOsiz(32), Csiz(16), then per component
 * Ssiz(8) = (depth - 1) | 0x80 when signed, XRsiz(8), YRsiz(8).
 */
void j2ki_mk_siz(J2kiBytes *b, const J2kiPlan *pl);

/**
 * COD (A.6.1): FF52, Lcod(16) = 12 (+ NL + 1 with user precincts), Scod(8) (bit 0 precincts
 * given, bit 1 SOP, bit 2 EPH), SGcod: order(8), layers(16), MCT(8); SPcod: NL(8),
 * xcb - 2 (8), ycb - 2 (8), code-block style(8), transform(8) (0 = 9/7, 1 = 5/3), then with
 * user precincts one byte per resolution r = 0..NL: PPx | PPy << 4.
 */
/** CAP (T.814 A.3): Pcap with bit 15 (Part 15) and its Ccap15, j2ki_ht_ccap15. */
void j2ki_mk_cap(J2kiBytes *b, const J2kiPlan *pl);
/** Ccap15 (T.814 Table A.3) for what j2kcuda writes: HTONLY, SINGLEHT, RGNFREE, HOMOGENEOUS,
 *  HTREV or HTIRV by the wavelet, and MAGB from the largest M_b of the plan's bands (A.6). */
uint32_t j2ki_ht_ccap15(const J2kiPlan *pl);
void j2ki_mk_cod(J2kiBytes *b, const J2kiCodingParams *cp);

/**
 * QCD (A.6.4): FF5C, Lqcd(16), Sqcd(8) = guard bits << 5 | style, then per band (LL, then HL,
 * LH, HH from the lowest resolution up): style 0 (reversible, no quantisation)
 * epsilon << 3 (8 bits); style 2 (scalar expounded) epsilon << 11 | mu (16 bits).
 * Written from component 0 (of tile 0: every tile has the same bands).
 */
void j2ki_mk_qcd(J2kiBytes *b, const J2kiPlan *pl);

/** 1 when component c's step sizes differ from component 0's (it then needs a QCC). */
int  j2ki_qcc_needed(const J2kiPlan *pl, int c);

/** QCC (A.6.5): FF5D, Lqcc(16), Cqcc(8, or 16 when Csiz >= 257), Sqcc, SPqcc as in QCD. */
void j2ki_mk_qcc(J2kiBytes *b, const J2kiPlan *pl, int c);

/**
 * POC (A.6.6): FF5F, Lpoc(16) = 2 + (7 or 9) * entries, per entry RSpoc(8), CSpoc(8|16),
 * LYEpoc(16), REpoc(8), CEpoc(8|16), Ppoc(8); component fields are 16-bit when Csiz >= 257.
 */
void j2ki_mk_poc(J2kiBytes *b, const J2kiCodingParams *cp);

/** COM (A.9.2): FF64, Lcom(16) = 4 + n, Rcom(16) = 1 (Latin-1 text), then the n bytes. */
void j2ki_mk_com(J2kiBytes *b, const char *text);

/**
 * TLM (A.7.1): FF55, Ltlm(16) = 4 + 6 n, Ztlm(8), Stlm(8) = 0x60 (ST = 2: 16-bit Ttlm,
 * SP = 1: 32-bit Ptlm), then per tile-part Ttlm(16), Ptlm(32). Writes the segments for
 * nb_entries tile-parts (as many as needed) with zero entries; j2ki_tlm_entry_offset gives where
 * entry k is to be patched. Returns where the first segment starts.
 */
size_t j2ki_mk_tlm(J2kiBytes *b, uint32_t nb_entries);
size_t j2ki_tlm_entry_offset(size_t tlm_start, uint32_t k);

/** SOT (A.4.2): FF90, Lsot(16) = 10, Isot(16), Psot(32), TPsot(8), TNsot(8). */
void j2ki_mk_sot(J2kiBytes *b, uint32_t isot, uint32_t psot, int tpsot, int tnsot);

/** SOD (A.4.3): FF93.  EOC (A.4.4): FFD9. */
void j2ki_mk_sod(J2kiBytes *b);
void j2ki_mk_eoc(J2kiBytes *b);

/** SOP (A.8.1): FF91, Lsop(16) = 4, Nsop(16).  EPH (A.8.2): FF92. */
void j2ki_mk_sop(J2kiBytes *b, uint32_t nsop);
void j2ki_mk_eph(J2kiBytes *b);

/** Bytes of one Iplt entry (A.7.3): 7 bits per byte, bit 7 set on all but the last. */
int  j2ki_plt_entry_bytes(uint64_t len);
/** Writes one Iplt entry. */
void j2ki_put_plt_entry(J2kiBytes *b, uint64_t len);

/**
 * The whole main header: SOC, SIZ, COD, QCD, QCC where needed, POC, COM, TLM (with zero
 * entries). *tlm_start receives where the TLM segments start (0 without TLM).
 */
void j2ki_main_header(J2kiBytes *b, const J2kiPlan *pl, size_t *tlm_start);

/* ---- the JP2 file format around a codestream (ISO/IEC 15444-1 Annex I; jp2.c) ---- */

/** Wraps a codestream in a JP2 file (signature, ftyp, jp2h with ihdr and colr, jp2c). */
int64_t j2ki_jp2_write(const J2kiPlan *plan, const uint8_t *cs, size_t cs_len, uint8_t *out, size_t cap);
/** Bytes of the JP2 boxes around a codestream of cs_len bytes (everything but the codestream). */
size_t  j2ki_jp2_boxes_size(const J2kcImageDesc *img, uint64_t cs_len);
/** The same below 4 GiB of codestream (the jp2c box without XLBox). */
size_t  j2ki_jp2_overhead(const J2kiPlan *plan);

#endif /* J2KI_MARKERS_H */
