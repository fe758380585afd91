/*
 * j2kcuda: JPEG 2000 Part-1 encoder with a plain-C reference backend and a CUDA backend
 * that writes byte-identical codestreams.
 *
 * This is the library's only public header. It is C99 and needs no CUDA header: device
 * pointers, CUDA contexts and streams travel as plain pointers.
 *
 * Life of an encoder:
 *   J2kcParams *p = j2kc_params_alloc();
 *   j2kc_params_set(p, "profile", "dci2k"); j2kc_params_set(p, "fps", "24"); ...
 *   J2kcImageDesc img = { .nb_comps = 3, .width = 2048, .height = 1080, ... };
 *   j2kc_encoder_create(&enc, &img, p);          // validates, plans, allocates once
 *   loop: j2kc_encoder_submit(enc, &frame);      // J2KC_ERR_AGAIN when every slot is busy
 *         j2kc_encoder_receive(enc, &pkt, 1);     // oldest frame's codestream, in order
 *   j2kc_encoder_free(&enc); j2kc_params_free(&p);
 */
#ifndef J2KCUDA_H
#define J2KCUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define J2KC_VERSION_MAJOR 0
#define J2KC_VERSION_MINOR 1
#define J2KC_VERSION_MICRO 0

/** Error codes: every function that can fail returns 0 or one of these (< 0). */
enum J2kcError {
    J2KC_OK              =   0,
    J2KC_ERR_INVAL       =  -1, /**< invalid argument or parameter value */
    J2KC_ERR_NOMEM       =  -2, /**< host memory allocation failed */
    J2KC_ERR_UNSUPPORTED =  -3, /**< valid JPEG 2000 but not supported by this encoder */
    J2KC_ERR_CUDA        =  -4, /**< a CUDA call failed (the log says which) */
    J2KC_ERR_BUFSIZE     =  -5, /**< byte budget smaller than the headers, or buffer too small */
    J2KC_ERR_AGAIN       =  -6, /**< submit: all slots busy, receive a packet first; receive: nothing ready */
    J2KC_ERR_EOF         =  -7, /**< receive: no frame in flight */
    J2KC_ERR_NOTBUILT    =  -8, /**< backend not compiled into this library */
    J2KC_ERR_PROFILE     =  -9, /**< image or parameters violate the selected profile */
    J2KC_ERR_NODEV       = -10, /**< no usable GPU (or the requested index does not exist) */
    J2KC_ERR_DEVMEM      = -11, /**< GPU out of memory */
    J2KC_ERR_BROKEN      = -12, /**< encoder unusable after an earlier device error */
    J2KC_ERR_INTERNAL    = -13, /**< internal consistency check failed (a bug: please report) */
};

/** Returns a static, human-readable text for an error code. */
const char *j2kc_strerror(int err);

/** Library version as "MAJOR.MINOR.MICRO". */
const char *j2kc_version(void);

/** Log levels passed to the log callback (same order as FFmpeg's). */
enum J2kcLogLevel {
    J2KC_LOG_ERROR   = 16,
    J2KC_LOG_WARNING = 24,
    J2KC_LOG_INFO    = 32,
    J2KC_LOG_VERBOSE = 40,
    J2KC_LOG_DEBUG   = 48,
};

/** Log callback: msg is a complete line without the trailing newline. */
typedef void (*J2kcLogFn)(void *opaque, int level, const char *msg);

/* ------------------------------------------------------------------------------------- */
/* Parameters                                                                             */
/* ------------------------------------------------------------------------------------- */

typedef struct J2kcParams J2kcParams;

/** Allocates a parameter set holding the defaults (9/7, 5 levels, 64x64 blocks, LRCP...). */
J2kcParams *j2kc_params_alloc(void);
/** Frees *p and sets it to NULL; accepts NULL. */
void j2kc_params_free(J2kcParams **p);

/**
 * Sets one parameter by key; values are text. Returns J2KC_ERR_INVAL (and logs through the
 * parameter set's log callback) for an unknown key or a malformed value. Conflicts between
 * keys (and with the profile) are reported by j2kc_encoder_create(), which sees them all.
 *
 * Keys (see j2kc_params_help() for the full list with defaults):
 *   profile     none|dci2k|dci4k|imf2k|imf4k|imf8k|imf2k_r|imf4k_r|imf8k_r|broadcast|broadcast_multi|broadcast_multi_r
 *               |imf_ht|imf_ht_r: IMF App 2E's HTJ2K profiles APP2.HT.IRV (9/7) and APP2.HT.REV (5/3,
 *               lossless without a rate target), SMPTE ST 2067-21:2023 Annex I: HT block coder
 *               (code-block style 0x40 only), Rsiz 0x4000, one tile, one layer, RPCL, precincts
 *               128/256, code-blocks 32..128 wide and 32..64 high [64x64], 1 to 5/6/7 levels up
 *               to 2K/4K/8K, TLM and one tile-part per resolution; no fps or levels needed
 *   fps         frame rate (rational "24", "24000/1001") for profile rules and "bitrate"
 *   bytes       exact byte budget per frame (never exceeded, markers included; with format=jp2
 *               the budget is the file's, JP2 boxes included; likewise bitrate and layer_bytes)
 *   bitrate     Mbit/s; with fps gives "bytes"
 *   comp_bytes  byte budget per component (tile-parts of one component, headers included)
 *   quality     target PSNR in dB (rate control stops when reached); "slope" sets a raw threshold
 *   lossless    1: reversible 5/3 + RCT, all passes kept (the default of the reversible
 *               profiles when no rate or quality target is given)
 *   transform   97|53
 *   mct         auto|0|1
 *   levels      0..32 decomposition levels
 *   cblk        WxH code-block size (powers of two, 4..1024, W*H <= 4096)
 *   prec        WxH[,WxH...] precinct sizes, lowest resolution first; last repeats
 *   order       lrcp|rlcp|rpcl|pcrl|cprl
 *   poc         "RS,CS,LYE,RE,CE,ORDER/..." explicit progression order changes
 *   tiles       WxH[+X0+Y0] tile size and tile grid origin
 *   tile_parts  none|R|C (split each tile's packets into tile-parts at resolution/component changes)
 *   layers      number of quality layers; layer_bytes "b1,b2,..." cumulative budgets
 *   bypass      0|1|N (selective arithmetic-coding bypass; N = significant bit-planes before raw; 4 is Part 1)
 *   reset termall vcausal pterm segmark   0|1 code-block style switches
 *   guard_bits  0..7
 *   sop eph tlm plt   0|1
 *   mainlevel sublevel   IMF/broadcast levels (0 = computed from the image and rate)
 *   format      j2k|jp2 ; color  auto|srgb|gray|sycc (JP2 colour box)
 *   comment     text of a COM marker (default: none)
 *   backend     auto|ref|cuda ; async_depth frames in flight (per device)
 *   gpu         device index, "any", "all" or a list "0,1": frames spread over the devices
 *               (the least busy first), packets still in submission order, the same bytes;
 *               j2kc_encoder_device_frames counts each device's frames
 *               (the CUDA backend runs fastest with CUDA_DEVICE_MAX_CONNECTIONS=max(8, async_depth)
 *               in the environment before the process's first CUDA call; the library never sets it)
 *   threads     CPU threads of the reference backend: 0 = one per CPU the process may run on
 *               (default), 1..256
 *   ht          0|1: the HT block coder (ISO/IEC 15444-15, HTJ2K); with no profile or imf_ht*
 *               (which imply it); DCI, Part 1 IMF and broadcast profiles refuse it
 *   ht_refine   0|1 with ht=1: SigProp and MagRef after each cleanup (1, default), or the
 *               cleanup pass alone (0: one pass per code-block, for decoders that read no
 *               refinement pass, such as nvJPEG2000's; lower PSNR at equal bytes)
 *   t1_stop qstep_rate   0|1 ; qstep_try 0..5   speed under a byte budget: tier-1 stops early
 *               (off by default), the 9/7 steps skip the bit-planes the budget cannot reach and
 *               a first coding tries coarser steps (both on); the help text says when each applies
 */
int j2kc_params_set(J2kcParams *p, const char *key, const char *value);

/** Sets the log callback used by this parameter set and every encoder created from it. */
void j2kc_params_set_log(J2kcParams *p, J2kcLogFn fn, void *opaque, int max_level);

/**
 * Makes the CUDA backend use the caller's CUDA driver context (a CUcontext) and enqueue the
 * frame uploads after the work already queued on cu_stream (a CUstream, may be NULL).
 * Without this call the backend uses the primary context of the device chosen by "gpu".
 * With "gpu" a list or "all", the listed device that holds the context codes in it (frames
 * in that context are read in place there), and the other devices use their primary contexts.
 */
void j2kc_params_set_cuda(J2kcParams *p, void *cu_ctx, void *cu_stream);

/** A static text listing every key, its values and its default. */
const char *j2kc_params_help(void);

/* ------------------------------------------------------------------------------------- */
/* Images and frames                                                                      */
/* ------------------------------------------------------------------------------------- */

#define J2KC_MAX_COMPS 4

/** The image geometry, fixed for the life of an encoder. */
typedef struct J2kcImageDesc {
    int      nb_comps;                 /**< 1..4 */
    uint32_t width, height;            /**< image size on the reference grid (Xsiz-XOsiz, Ysiz-YOsiz) */
    uint32_t x0, y0;                   /**< image offset on the reference grid (XOsiz, YOsiz) */
    int      depth[J2KC_MAX_COMPS];    /**< bits per sample, 1..16, unsigned or signed (profiles restrict it) */
    int      is_signed[J2KC_MAX_COMPS]; /**< 0: unsigned, 1: signed samples; other values are refused */
    int      dx[J2KC_MAX_COMPS];       /**< horizontal subsampling (XRsiz), 1..255 */
    int      dy[J2KC_MAX_COMPS];       /**< vertical subsampling (YRsiz), 1..255 */
} J2kcImageDesc;

/** Where frame planes live. */
enum J2kcMemType {
    J2KC_MEM_HOST = 0, /**< ordinary host memory (pinned or not) */
    J2KC_MEM_CUDA = 1, /**< CUDA device memory (CUDA backend only): in the encoder's context, or
                            in the context J2kcFrame.cu_ctx names */
};

/**
 * One frame. Samples are native-endian uint8_t when depth <= 8, else uint16_t (int8_t/int16_t
 * when signed). Component c has ceil((x0+width)/dx)-ceil(x0/dx) columns and likewise rows.
 * CUDA backend, host frames: the planes may be reused once submit returns. Page-locked memory
 * (cudaHostAlloc, cudaHostRegister) is uploaded straight from the caller's planes; pageable
 * memory is first copied into the encoder's page-locked staging area. Both hold for planar
 * frames (step 0 or 1) and for components interleaved in one plane (packed RGB / XYZ, one
 * step and stride for all): those are uploaded as they are and split on the GPU.
 * CUDA backend, device frames (J2KC_MEM_CUDA): the planes must stay untouched until the
 * frame's packet is received. A device coding in the frame's context reads them in place; one
 * coding in another context (an encoder over several devices spreading its frames, or a
 * frame of another context given to a one-device encoder) first copies them device to device
 * (cuMemcpy3DPeerAsync) into its own memory; rows that go upwards (a negative stride) cannot be
 * copied so and are refused. Several-device encoders pick, among the devices with the fewest
 * frames in flight, the one that holds the frame, so frames stay where they are unless
 * spreading them evens the load.
 */
typedef struct J2kcFrame {
    const void *data[J2KC_MAX_COMPS]; /**< first sample of each component plane */
    ptrdiff_t   stride[J2KC_MAX_COMPS]; /**< bytes from one row to the next */
    int         step[J2KC_MAX_COMPS];   /**< samples from one column to the next (0 or 1: planar; 3: packed rgb) */
    int         shift[J2KC_MAX_COMPS];  /**< right shift applied to each sample (MSB-aligned containers) */
    int         mem;                    /**< J2kcMemType */
    void       *cu_stream;              /**< J2KC_MEM_CUDA: CUstream the data was produced on (waited on), or
                                             NULL: the context's legacy default stream (waited on) */
    uint64_t    tag;                    /**< returned unchanged with this frame's packet */
    void       *cu_ctx;                 /**< J2KC_MEM_CUDA: the CUcontext the planes belong to (cu_stream
                                             is of it), or NULL: the caller's (j2kc_params_set_cuda) */
    unsigned    flags;                  /**< J2KC_FRAME_* bits, 0 for none */
} J2kcFrame;

/** J2kcFrame.flags: the caller leaves the host planes unchanged until this frame's packet is
 *  received (or the encoder is reset or freed), so submit need not wait for their upload. The
 *  CUDA backend then returns from submit of a page-locked frame as soon as its upload is
 *  queued; one thread submitting to an encoder over several GPUs keeps their uploads in flight
 *  together instead of one after the other. Other frames and the reference backend ignore it. */
#define J2KC_FRAME_HELD 1u

/** One finished codestream. data stays valid until the next submit, receive, reset or free on
 *  that encoder (its slot's buffer is then reused): copy it out before submitting more. */
typedef struct J2kcPacket {
    const uint8_t *data;
    size_t         size;
    uint64_t       tag;
} J2kcPacket;

/* ------------------------------------------------------------------------------------- */
/* Encoder                                                                                */
/* ------------------------------------------------------------------------------------- */

typedef struct J2kcEncoder J2kcEncoder;

/**
 * Validates the parameters against the image and the profile, plans the geometry and
 * allocates everything the encoder will use. On failure *out is NULL and the log names the
 * reason (and, for profiles, the rule).
 */
int j2kc_encoder_create(J2kcEncoder **out, const J2kcImageDesc *img, const J2kcParams *p);

/** Waits for frames in flight, frees everything and sets *enc to NULL; accepts NULL. */
void j2kc_encoder_free(J2kcEncoder **enc);

/**
 * Submits a frame. The reference backend encodes it before returning; the CUDA backend
 * copies it (or its device planes) on the slot's stream and returns. Host planes may be
 * reused as soon as submit returns, unless the frame is flagged J2KC_FRAME_HELD. Returns
 * J2KC_ERR_AGAIN when async_depth frames are already in flight (receive one first).
 */
int j2kc_encoder_submit(J2kcEncoder *enc, const J2kcFrame *frame);

/**
 * Returns the codestream of the oldest frame in flight. With block = 0 returns
 * J2KC_ERR_AGAIN when it is not finished yet; J2KC_ERR_EOF when nothing is in flight.
 */
int j2kc_encoder_receive(J2kcEncoder *enc, J2kcPacket *pkt, int block);

/** Number of frames submitted and not yet received. */
int j2kc_encoder_in_flight(const J2kcEncoder *enc);

/** Drops every frame in flight (their packets are never returned); the encoder stays usable. */
int j2kc_encoder_reset(J2kcEncoder *enc);

/** "ref" or "cuda": the backend the encoder actually uses. */
const char *j2kc_encoder_backend(const J2kcEncoder *enc);

/** Upper bound of one codestream's size in bytes for this encoder. */
size_t j2kc_encoder_max_size(const J2kcEncoder *enc);

/** Optional per-stage timing of the last received frame, in milliseconds (0 when unknown).
 *  CUDA backend: ms_upload of a pageable host frame includes its staging copy, which runs
 *  beside the upload. */
typedef struct J2kcStats {
    double ms_upload, ms_mct_dwt, ms_t1, ms_rc, ms_t2, ms_download, ms_total;
    size_t device_bytes_per_slot;   /**< CUDA backend: device memory of one frame slot */
    int    nb_recoded;              /**< 1 when the frame was coded again with qstep_rate's steps
                                         after not filling its budget with qstep_try's (the
                                         stage times are then the sums of both codings) */
} J2kcStats;
int j2kc_encoder_stats(const J2kcEncoder *enc, J2kcStats *st);

/**
 * Frames each device of the encoder has coded so far (codestreams handed back): fills up to
 * max entries of devices[] (the CUDA device index; -1: the one CUDA picked, or none for the
 * reference backend) and frames[], returns the number of devices (1 unless "gpu" was a list or
 * "all" and several devices were found), or J2KC_ERR_INVAL.
 */
int j2kc_encoder_device_frames(const J2kcEncoder *enc, int *devices, uint64_t *frames, int max);

/**
 * Lists CUDA devices through the log callback of p (one line each). Returns the number of
 * devices, 0 when there is none, J2KC_ERR_NOTBUILT without the CUDA backend.
 */
int j2kc_cuda_devices(const J2kcParams *p);

#ifdef __cplusplus
}
#endif

#endif /* J2KCUDA_H */
