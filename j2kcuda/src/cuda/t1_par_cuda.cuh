/*
 * The J2KI_T1_CUDA_PAR kernels of t1_cuda.cu (included there, after t1_tables_load and
 * align256, which they use): column-parallel context modelling (t1_par.h), then MQ coding.
 * In a header of their own so that tests/t1p_emu.cc can run this very source on the host
 * (warps as threads) and compare it with the serial coder.
 */
#ifndef J2KI_T1_PAR_CUDA_CUH
#define J2KI_T1_PAR_CUDA_CUH

#include "core/tuning.h"

/*
 * ---- J2KI_T1_CUDA_PAR: column-parallel context modelling (t1_par.h), then MQ coding ----
 *
 * Tier-1 in chunks of bit-planes (T1P_PLANES planes per chunk, every code-block of the frame
 * at once; the host launches t1p_chunk_kernel T1P_CHUNKS + 1 times without knowing the frame's
 * bit-planes, a warp or thread whose block has none left in the chunk leaves at once), launch
 * c running the MQ coding of chunk c - 1 beside the context modelling of chunk c:
 *   t1p_model_warp<NC>: one warp per code-block (lane x codes column x, and x + 32 when
 *     NC = 2; a block wider than 64 in groups of 64 columns, one after the other inside each
 *     stripe), stripe by stripe, pass by pass, the phases of t1_par.h: the pass's symbols
 *     (cx << 1 | d, raw bits as J2KI_T1P_CX_RAW << 1 | bit) go to the block's symbol buffer,
 *     the per-pass counts to its count array, the distortion (an integer warp sum, so
 *     exactly the serial sum) to passes[].dist;
 *     With BYPASS the warp also packs each raw pass's bits into bytes, bit-stuffing included
 *     (t1p_pack_raw, the parallel bit-stuffing of ebcot-fast-mode-sample-parallel.md), and
 *     leaves the bytes in place of the pass's symbols;
 *   t1p_mq_thread: one thread per code-block (sorted order, so a warp holds blocks of similar
 *     work) feeds the chunk's symbol lists to the MQ coder through j2ki_t1p_code_run (one
 *     loop over the chunk's symbols where the style allows, else j2ki_t1p_code_pass per pass
 *     as the host driver j2ki_t1p_code does) and appends the packed raw passes' bytes
 *     (j2ki_t1p_code_packed), writing the data bytes, passes[].rate / term / slope and, after
 *     the last pass or an error, J2kiCblkRes. With the raw passes packed in the modelling
 *     warp and the two parts in one launch, this is the paper's one-kernel strategy, the only
 *     one kept: the chunks already overlap one chunk's MQ coding with the next one's
 *     modelling, so the two- and three-kernel strategies only added launches and were slower
 *     at every occupancy measured (bench/results/history.md#bypass-strategies).
 * What persists between chunks, per code-block (a slot of T1pLayout in the scratch): the
 * stripe-column words, the MQ coder with its contexts and marks (J2kiT1State) and the segment
 * bookkeeping (J2kiT1Seg); per block also numbps (from t1_prep_kernel) and a status word.
 *
 * Why chunks: the symbols of a whole block are bounded by numbps (n + 2 c) + n (n samples,
 * c full stripe columns; proof at t1p_syms_cap), and numbps is only bounded by the band's
 * nb_mag_bits, which the scratch size does not know: 31 planes of 32 x 32 blocks would be
 * 48 KB per block, 1.3 GB for a 4K DCI frame. A chunk of 4 planes needs 7 KB per block,
 * twice over for the double buffering (t1p_layout: about 17 KB per slot with the words and
 * the coder, about 450 MB for 4K DCI's 26,292 blocks; the device memory of a 4K DCI frame
 * slot went from 598 to 779 MB), at the price of 9 launches per frame, most of them nearly
 * empty.
 *
 * Code-blocks above 32 x 32 (64 x 64 is the library's default, and what most encoders and
 * archives use). The context modelling scales: a warp codes 64 columns as two per lane, a
 * wider block in groups of 64 columns, a taller one stripe after stripe, so a sample costs
 * about what it costs in a 32 x 32 block (narrow blocks, under 32 wide, leave lanes idle: a
 * 4 x 1024 block uses 4 of 32). The MQ coding does not scale: without TERMALL a block is one
 * arithmetic codeword, coded by one thread decision after decision (each decision's A, C and
 * context state depend on the previous one's). Counted on the host by test_t1_par
 * (mq_chains: the 1024 x 1024 green crop of the corpus picture, 3-level 5/3, reversible
 * indices, chunks of 4 planes, warps of 32 blocks in key order, one loop per chunk):
 *                                  32 x 32       64 x 64
 *     blocks (MQ threads)            1,008           252
 *     symbols                    8,063,200     8,212,145    (+ 2 %)
 *     warp iterations              287,061       297,078    (+ 3 %)
 *     longest block                 10,459        41,241    (x 3.9)
 *     longest warp                  11,646        45,151    (x 3.9)
 *     symbols per block, chunks 0 / 1 / 2: 3,397 / 4,205 / 397 against 11,738 / 17,750 /
 *     3,100 (the longest block's: 4,758 / 4,928 / 4,335 against 18,392 / 19,504 / 17,593)
 * The same MQ work, in 4 times fewer chains, each 4 times longer. Where the SMs hold enough
 * MQ warps (many frames in flight) the warp iterations set the
 * time, nearly the same for both sizes; a frame alone waits for its longest warp: a 4K frame
 * of 64 x 64 blocks has about 200 MQ warps, fewer than an H100 has warp schedulers (528), so
 * each runs as a lone dependent chain, 3.9 times as long as with 32 x 32 blocks.
 * What keeps the bytes, and what it can give a frame alone:
 *   - the MQ coding of chunk c - 1 beside the modelling of chunk c (done), or finer chunks:
 *     they hide the modelling, the chain stays;
 *   - the largest blocks first (the key sort, done): the longest chain starts at once, it
 *     does not get shorter;
 *   - a shorter step per decision (done, j2ki_t1p_code_run and j2ki_mqc_encode_e): the next
 *     decision's context state and table entry are loaded before this one's state is stored
 *     (its symbol a decision earlier still), the entries of the two states the context may
 *     move to are loaded as soon as its entry is known and the new entry selected (forwarded
 *     when the next decision uses the same context), A's exchange test and renormalisation
 *     shift are computed beside the subtraction for both outcomes, and the table is
 *     addressed from a register. What is left on the chain is one table load and a few
 *     selects and integer operations per decision, and the byte path, which some lane of a
 *     warp takes at nearly every decision. It shortens the chains of 32 x 32 blocks as much,
 *     so the ratio stays;
 *   - splitting the coder: the context states, A and the renormalisation shifts depend only
 *     on the decisions and on A, so one thread could run them and C's additions (a sum of
 *     the Qe added, each shifted by the later renormalisations), carries and BYTEOUTs could
 *     follow in parallel (bytes and bit-stuffing as t1p_pack_raw packs raw bits). A lone MQ
 *     warp issues each instruction when its predecessor's result is ready, so what sets its
 *     chain is the instructions per decision, and the byte path, which some lane runs at
 *     nearly every decision, is about a third of them (the loop's SASS); the serial part
 *     keeps the rest, so some tens of percent, not the factor 3 that 1.33 times the 32 x 32
 *     latency would need (bench/results/history.md#mq-decision-chain). Measured: a decision
 *     thread handing its decisions to a byte thread through shared memory made 64 x 64 frames
 *     slower, the hand-over costing more than the byte path it moved
 *     (bench/results/history.md#mq-byte-thread);
 *   - only the code-block style shortens the chain itself (TERMALL: a codeword per pass),
 *     and that is the user's choice, not the encoder's.
 * So one MQ chain per code-block bounds a frame alone with 64 x 64 blocks at about 4 times the
 * 32 x 32 chain; what is left to measure is how much of a frame's tier-1 time that chain is.
 *
 * Warp discipline: every lane of the model kernel's warp takes part in every shuffle and
 * ballot (lanes whose columns lie beyond w carry zero words, masks and counts); the only
 * early exits are whole-warp (a block index or a block state the 32 lanes read alike). Each
 * lane reads and writes only the words of its own columns (the neighbours' chi bits and new
 * significance masks come by shuffles), the __syncwarp() calls mark the phase boundaries.
 *
 * Tested on the host by test_t1_par (code_chunked models this driver: chunks, symbol bound,
 * j2ki_t1p_code_pass) and by `make check-t1p-emu`, which runs these very functions, warps as
 * threads, in t1p_chunk_kernel's launch order, against the serial coder; on the GPU by
 * check_cuda and compute-sanitizer. The measurements behind this design, and the variants
 * tried and left out, are in bench/results/history.md#column-parallel-tier-1.
 */
#define T1P_PLANES 4
/* chunk c holds bit-planes [j2ki_t1s_plane0(c), j2ki_t1s_plane0(c + 1)) (t1_stop.h: the first
 * J2KI_T1S_FIRST planes, then T1P_PLANES each) */
#define T1P_CHUNKS (1 + (J2KI_T1_MAX_PLANES - J2KI_T1S_FIRST + T1P_PLANES - 1) / T1P_PLANES)
#define T1P_ALL 0xFFFFFFFFu
/* sigma of the stripe's own rows 1..4 in a stripe-column word (what an MRP could code) */
#define T1P_SIGMA_OWN (J2KI_T1_SIGMA(1, 1) | J2KI_T1_SIGMA(2, 1) | J2KI_T1_SIGMA(3, 1) | J2KI_T1_SIGMA(4, 1))
#ifndef T1P_QUIET_HOOK
#define T1P_QUIET_HOOK(type, lane) ((void)0)   /* tests/t1p_emu.cc counts the quiet stripes */
#endif
#define T1P_ERR_MODEL 1u      /* status: a chunk's symbols did not fit (never, by the bound) */
#define T1P_ERR_DONE  2u      /* status: the block failed and its result is written */
#define T1P_CTX_STEP 22       /* halfwords between the MQ threads' context states in shared memory */
#define T1P_CNT_WORDS (3 * T1P_PLANES)   /* a chunk's per-pass count words (T1pLayout) */
static_assert(J2KI_T1P_COL_SYMS < 16 && J2KI_T1P_COL_SYMS <= 12,
              "phase 3 scans 4-bit counts; J2kiT1pCol queues 12 symbols");

/*
 * Symbols of one chunk of a w x h block, at most: T1P_PLANES (n + 2 c) + n. In one bit-plane
 * every sample gets at most one symbol other than a sign: insignificant, it is coded by the
 * SPP or by the cleanup (not both: the cleanup skips what the SPP coded) and not by the MRP
 * (which codes what was significant before the plane); significant, by the MRP alone. A
 * run-length column of the cleanup (a full stripe column) spends 1 symbol on 4 rows without
 * a 1, or RL + 2 uniform symbols on rows 0..r (r + 1 >= 1 samples), at most 2 more than one
 * per sample. A sign follows each sample that becomes significant, once per block. Raw
 * (BYPASS) passes emit the same bits without contexts. n = max_w max_h and c = (max_h / 4)
 * max_w bound every block of the frame.
 */
static uint32_t t1p_syms_cap(int max_w, int max_h)
{
    uint32_t n = (uint32_t)max_w * (uint32_t)max_h, c = (uint32_t)(max_h / 4) * (uint32_t)max_w;
    return T1P_PLANES * (n + 2 * c) + n;
}

/* What persists of the MQ side between chunks. */
typedef struct T1pBlock {
    J2kiT1State  st;          /* mqc, ctx, marks (flags, mag, geometry unused) */
    J2kiT1Seg cd;
} T1pBlock;

/* Per code-block slot (byte offsets, each 16-aligned): words (ns x ws u32, column x of
 * stripe k at k * ws + x, ws = max_w), T1pBlock, per-pass counts of a chunk and its
 * symbols, both twice: chunk c uses copy c & 1, so that the context modelling of chunk c runs
 * while the MQ coding of chunk c - 1 reads the other copy (t1p_chunk_kernel); then the raw-bit
 * buffer of BYPASS passes (t1p_pack_raw; in global memory rather than shared: 1 KB more
 * shared memory per thread block cost 6 % of the frame rate with 8 frames in flight). */
typedef struct T1pLayout {
    size_t   words, block, cnt, cnt_step, syms, syms_step, bits, slot;
    uint32_t syms_cap, ws, ns;
    uint32_t nc;              /* columns per lane and group (t1p_model_warp<NC>): 1, or 2 above 32 */
    uint32_t gr;              /* blocks wider than 64: in groups of 64 columns (t1p_model_warp<2, true>) */
    uint32_t bitw;            /* words of the raw-bit buffer at offset bits (t1p_pack_raw) */
} T1pLayout;

static size_t align16(size_t n) { return (n + 15) & ~(size_t)15; }

static T1pLayout t1p_layout(int max_w, int max_h)
{
    T1pLayout l;
    l.nc = max_w > 32 ? 2 : 1;
    l.gr = max_w > 64;
    l.ws = (uint32_t)(max_w > 0 ? max_w : 1);
    l.ns = (uint32_t)(max_h + 3) >> 2;
    /* a raw pass has at most 2 bits per sample (a zero-coding bit and a sign), plus up to 7
     * waiting bits, plus the guard word */
    l.bitw = (2u * (uint32_t)max_w * (uint32_t)max_h + 7u + 31u) / 32u + 1u;
    l.syms_cap = t1p_syms_cap(max_w, max_h);
    l.words = 0;
    l.block = align16((size_t)l.ns * l.ws * 4);
    l.cnt = l.block + align16(sizeof(T1pBlock));
    l.cnt_step = align16(T1P_CNT_WORDS * sizeof(uint32_t));
    l.syms = l.cnt + 2 * l.cnt_step;
    l.syms_step = align16(l.syms_cap);
    l.bits = l.syms + 2 * l.syms_step;
    l.slot = l.bits + align16((size_t)l.bitw * 4);
    return l;
}

/* Dynamic shared memory of t1p_chunk_kernel: a thread block either models (4 warps, each its
 * block's words) or MQ-codes (128 threads, each its 19 context states T1P_CTX_STEP halfwords
 * apart), so the two share one area. (As two static arrays every thread block held both: 3.7
 * KB more per thread block, more than the shared-memory carveout of 8 resident blocks leaves
 * beside the L1 cache.) */
static size_t t1p_smem(const T1pLayout *l)
{
    const size_t words = (size_t)4 * l->ns * l->ws * 4, ctx = (size_t)128 * T1P_CTX_STEP * 2;
    return words > ctx ? words : ctx;
}

/* Static shared memory of t1p_chunk_kernel: the coder's tables (t1_tables_load; t1_cuda.cu
 * asserts that they fit). */
#define T1P_SMEM_TABLES 2304
#define T1P_SMEM_STATIC T1P_SMEM_TABLES

/* The variant applies: blocks at most J2KI_T1P_MAX_W wide, words of 4 warps and the static
 * shared memory within the 48 KB a launch gets without opting in. The words of a warp are
 * ceil(max_h / 4) x max_w, at most 4 KB for every legal code-block (w h <= 4096, Part 1
 * A.6.1), 16 KB for the thread block: every legal shape, 1024 x 4 to 4 x 1024, passes. */
static int t1p_usable(int max_w, int max_h)
{
    T1pLayout l = t1p_layout(max_w, max_h);
    return max_w <= J2KI_T1P_MAX_W && t1p_smem(&l) + T1P_SMEM_STATIC <= J2KI_CUDA_SMEM_DEFAULT;
}

/* Scratch of the variant beyond the keys, indices and sort storage: numbps and status per
 * block, then the slots. */
static size_t t1p_scratch(uint32_t nb_cblks, int max_w, int max_h)
{
    size_t n = nb_cblks ? nb_cblks : 1;
    if (!t1p_usable(max_w, max_h))
        return 0;
    return 2 * align256(n * 4) + n * t1p_layout(max_w, max_h).slot;
}

#ifndef J2KI_CUDA_HOST   /* the device code: nvcc's and the emulators' (t1_kern.cuh) */
/* A block the variant codes: numbps as the other kernels accept it (else they report). */
__device__ __forceinline__ int t1p_valid(const J2kiCblkDev &cb, int numbps)
{
    return numbps > 0 && numbps <= cb.nb_mag_bits && numbps <= J2KI_T1_MAX_PLANES &&
           3 * numbps - 2 <= cb.max_passes;
}

/* Values of the columns left (x - 1) and right (x + 1) of each of the lane's NC columns
 * (x = x0 + lane + 32 c, the lane's columns in the column group at x0; column x0 + 32's left
 * is lane 31's first column); lb: the value of column x0 - 1 (for lane 0's first column), rb:
 * of column x0 + 32 NC (lane 31's last), 0 beyond the block: every lane must call it, with
 * v = 0 for columns >= w. */
template <int NC>
__device__ __forceinline__ void t1p_nbrs(const uint32_t (&v)[NC], uint32_t (&l)[NC], uint32_t (&r)[NC],
                                         uint32_t lane, uint32_t lb, uint32_t rb)
{
    uint32_t up0 = __shfl_up_sync(T1P_ALL, v[0], 1), dn0 = __shfl_down_sync(T1P_ALL, v[0], 1);
    if constexpr (NC == 1) {
        l[0] = lane ? up0 : lb;
        r[0] = lane < 31 ? dn0 : rb;
    } else {
        uint32_t up1 = __shfl_up_sync(T1P_ALL, v[NC - 1], 1), dn1 = __shfl_down_sync(T1P_ALL, v[NC - 1], 1);
        uint32_t last0 = __shfl_sync(T1P_ALL, v[0], 31), first1 = __shfl_sync(T1P_ALL, v[NC - 1], 0);
        l[0] = lane ? up0 : lb;
        r[0] = lane < 31 ? dn0 : first1;
        l[NC - 1] = lane ? up1 : last0;
        r[NC - 1] = lane < 31 ? dn1 : rb;
    }
}

/* Only the left values of t1p_nbrs (one shuffle per column instead of two). */
template <int NC>
__device__ __forceinline__ void t1p_left(const uint32_t (&v)[NC], uint32_t (&l)[NC], uint32_t lane, uint32_t lb)
{
    const uint32_t up0 = __shfl_up_sync(T1P_ALL, v[0], 1);
    if constexpr (NC == 1) {
        l[0] = lane ? up0 : lb;
    } else {
        const uint32_t up1 = __shfl_up_sync(T1P_ALL, v[NC - 1], 1), last0 = __shfl_sync(T1P_ALL, v[0], 31);
        l[0] = lane ? up0 : lb;
        l[NC - 1] = lane ? up1 : last0;
    }
}

/*
 * BYPASS: the raw bits of a pass packed by the warp, with the bit-stuffing of the raw packer
 * (mqc.h, D.6: after a 0xFF byte the next byte holds 7 bits under a 0 MSB), in parallel as in
 * ebcot-fast-mode-sample-parallel.md (Algorithm 2), so that the MQ thread only appends bytes
 * (j2ki_t1p_code_packed). syms: the pass's n symbols (bit 0 of each is the raw bit); c, ct, b:
 * the packer's state before them (J2kiMqc: bits waiting in c, ct bits still free in that byte,
 * b the last completed byte), after them on return; bits: the block's buffer (T1pLayout.bitw
 * words, in its slot). Writes the completed bytes at out (out <= syms: all symbols are read
 * first, so over them is fine) and returns their count.
 *   1. The p waiting bits and the n new ones become a bit string, MSB first, 32 bits per
 *      ballot.
 *   2. Bytes, 32 at a time, lane j the j-th: assuming 8 bits for every byte but the first
 *      (whose capacity the state gives), a scan of the capacities gives each byte's bit
 *      offset and so its value; a byte after a 0xFF holds 7 bits, so lanes whose left
 *      neighbour came out 0xFF take 7 and all lanes evaluate again, until no capacity changed
 *      (a ballot; lane j is right after round j + 1, typically after the first: raw bits are
 *      close to random, so one byte in 256 is 0xFF).
 *   3. The bits past the last complete byte are the new waiting bits.
 * Not inlined: inside t1p_chunk_kernel it raised the model side's spills (sm_90: 8 -> 36
 * bytes stored) for every pass; as a call it costs only the raw passes.
 */
static __device__ __noinline__ uint32_t t1p_pack_raw(const uint8_t *syms, uint8_t *out, uint32_t n, uint32_t &c,
                                                 uint32_t &ct, uint32_t &b, uint32_t *bits, uint32_t lane)
{
    const uint32_t cap0 = b == 0xFF ? 7 : 8, p = cap0 - ct, T = p + n, nw = (T + 31) >> 5;
    for (uint32_t m = 0; m < nw; m++) {
        const uint32_t g = 32 * m + lane;
        uint32_t bit = 0;
        if (g < p)
            bit = (c >> (p - 1 - g)) & 1;
        else if (g < T)
            bit = syms[g - p] & 1;
        const uint32_t v = __brev(__ballot_sync(T1P_ALL, bit));
        if (lane == 0)
            bits[m] = v;
    }
    if (lane == 0)
        bits[nw] = 0;                                   /* the guard word of rd */
    __syncwarp();
    /* k bits (1..8) at bit offset o, o + k <= T */
    auto rd = [bits](uint32_t o, uint32_t k) -> uint32_t {
        const uint64_t x = ((uint64_t)bits[o >> 5] << 32 | bits[(o >> 5) + 1]) << (o & 31);
        return (uint32_t)(x >> (64 - k));
    };
    uint32_t off = 0, K = 0, capf = cap0;
    for (;;) {
        uint32_t cap = lane ? 8 : capf, o, val, done, changed;
        do {
            uint32_t incl = cap;
            for (uint32_t d = 1; d < 32; d <<= 1) {
                const uint32_t t = __shfl_up_sync(T1P_ALL, incl, d);
                if (lane >= d)
                    incl += t;
            }
            o = off + incl - cap;
            done = o + cap <= T;
            val = done ? rd(o, cap) : 0;
            const uint32_t ff = __shfl_up_sync(T1P_ALL, done && val == 0xFF ? 1u : 0u, 1);
            const uint32_t nc = lane ? (ff ? 7u : 8u) : capf;
            changed = nc != cap;
            cap = nc;
        } while (__any_sync(T1P_ALL, changed));
        if (done)
            out[K + lane] = (uint8_t)val;
        const uint32_t cnt = (uint32_t)__popc(__ballot_sync(T1P_ALL, done));   /* done lanes: a prefix */
        if (cnt) {
            b = __shfl_sync(T1P_ALL, val, cnt - 1);
            off = __shfl_sync(T1P_ALL, o + cap, cnt - 1);
            capf = b == 0xFF ? 7 : 8;
            K += cnt;
        }
        if (cnt < 32)
            break;
    }
    const uint32_t r = T - off;                         /* < capf */
    c = r ? rd(off, r) : 0;
    ct = capf - r;
    return K;
}

/*
 * Context modelling of chunk `chunk` of every code-block (see above). order: blocks in
 * decreasing work; nbps: numbps per block (t1_prep_kernel); stat: status per block. Words
 * in shared memory for the chunk (built from the coefficients in chunk 0, else loaded from
 * the slot; stored back when planes remain), column x of stripe k at k ws + x (ws = max_w).
 *
 * Column groups: the warp's lanes hold 32 NC columns at a time; a wider block (128 x 32,
 * 256 x 16, 512 x 8, 1024 x 4) is coded group by group inside each stripe, the groups in
 * column order, which is the serial order (D.3, Figure D.2: column by column inside a stripe).
 * What crosses the boundary at column x0 (a group's first column) is what crosses between
 * two lanes inside a group:
 *   - lin, the new-significance mask of column x0 - 1, final when the group before it ended:
 *     the left mask L of column x0 (phase 1 starts from it; t1p_left passes it to lane 0);
 *   - the chi bits of columns x0 - 1 and x0 + 32 NC (sign contexts), read from the words:
 *     chi never changes, so the earlier group's update of column x0 - 1 does not matter;
 *   - the symbol base (the running total of the scan, phase 3);
 *   - phase 5: the new sigma bits of column x0 in the word of column x0 - 1 (its east
 *     neighbour; rows 1..4, row 5 of the stripe above, row 0 of the stripe below), which
 *     lane 0 adds once its group has the masks (the group before could not know them).
 * A quiet SPP or cleanup group (the shortcuts below) also needs lin = 0: a sample that
 * became significant in column x0 - 1 is a significant neighbour of column x0 too.
 * A block at most 32 NC wide is one group with lin = 0: exactly the code before groups (GR
 * false, the kernels of blocks up to 64 wide, compile to that).
 */
template <int NC, bool GR>
__device__ __forceinline__ void t1p_model_warp(uint32_t j, uint32_t lane, uint32_t *words,
                                               const int32_t *samples, const J2kiCblkDev *cblks,
                                               const uint32_t *order, uint32_t nb_cblks, int cblk_style,
                                               int bypass_start, J2kiPass *passes, const uint32_t *nbps,
                                               uint32_t *stat, uint8_t *slots, const T1pLayout &lay, int chunk,
                                               const uint32_t *lim)
{
    if (j >= nb_cblks)                                  /* whole warp */
        return;
    const uint32_t i = order[j];
    const J2kiCblkDev cb = cblks[i];
    const int numbps = (int)nbps[i], k0 = j2ki_t1s_plane0(chunk), k1 = j2ki_imin(j2ki_t1s_plane0(chunk + 1), numbps);
    /* whole warp: the same loads; a block the early stop ended (lim) is not modelled further */
    if (!t1p_valid(cb, numbps) || k0 >= k1 || stat[i] || (lim && lim[i]))
        return;
    const int w = cb.w, h = cb.h, ns = (h + 3) >> 2, ws = (int)lay.ws, nb_passes = 3 * numbps - 2;
    /* columns of a group, and groups: GR only where max_w > 64 (T1pLayout.gr), else one
     * group, and the compiler drops the boundary code (the registers it holds cost the
     * kernels of the smaller blocks spills) */
    const int gw = 32 * NC, ng = GR ? (w + gw - 1) / gw : 1;
    const int32_t *coefs = samples + cb.buf;
    uint8_t *slot = slots + (size_t)i * lay.slot;
    uint32_t *gwords = (uint32_t *)(slot + lay.words);
    uint32_t *cnt = (uint32_t *)(slot + lay.cnt + (chunk & 1) * lay.cnt_step);
    uint8_t *syms = slot + lay.syms + (chunk & 1) * lay.syms_step;
    /* coefficients of row 4k + r, column x at coefs[4k stride + r stride + x], in 32-bit
     * offsets (the band buffer of one code-block is far below 4 GB) */
    const uint32_t cst = cb.stride;

    /* words of the lane's columns (x = lane + 32 m): chi bits (signs of rows 4k - 1 .. 4k + 4,
     * as t1_load_cols) in chunk 0, else as the previous chunk left them; nothing beyond w
     * (ws may be narrower than the warp) */
    for (int m = 0; m < NC * ng; m++) {
        const int xx = (int)lane + 32 * m;
        if (xx >= w)
            break;
        for (int k = 0; k < ns; k++) {
            uint32_t wd = 0;
            if (chunk == 0) {
                /* rows 4k - 1 + jj, jj = 0..5, that exist: the six loads issued together */
                const int j0 = k ? 0 : 1, j1 = j2ki_imin(5, h - 4 * k);
#pragma unroll
                for (int jj = 0; jj < 6; jj++)
                    if (jj >= j0 && jj <= j1)
                        wd |= ((uint32_t)coefs[(uint32_t)(4 * k + jj - 1) * cst + (uint32_t)xx] >> 31) << jj;
                wd <<= 18;
            } else {
                wd = gwords[k * ws + xx];
            }
            words[k * ws + xx] = wd;
        }
    }
    __syncwarp();

    const int i0 = k0 ? 3 * k0 - 2 : 0, i1 = j2ki_imin(3 * k1 - 2, nb_passes);
    const uint8_t *zc = J2KI_T1_ZC + 512 * j2ki_t1_zc_class(cb.orient);
    uint32_t pos = 0;   /* bytes of the chunk's symbol lists (and packed raw passes) so far */
    uint32_t rc = 0, rct = 8, rb = 0;   /* BYPASS: the raw packer's state (t1p_pack_raw) */
    for (int pi = i0; pi < i1; pi++) {
        const int kp = (pi + 2) / 3, type = (pi + 2) % 3;
        const int s = numbps - 1 - kp + cb.frac_bits, g = j2ki_t1_dist_shift(s);
        const J2kiT1pPass p = j2ki_t1p_pass_init(zc, NULL, NULL, 0, w, h,
                                                 (cblk_style & J2KI_CBLK_VCAUSAL) ? J2KI_T1_VC_WORD : 0xFFFFFFFFu,
                                                 s, g, j2ki_t1_pass_raw(pi, cblk_style, bypass_start));
        uint32_t base = 0, bad = 0;
        int64_t sum = 0;
        for (int k = 0; k < ns; k++) {
            const int nr = j2ki_imin(4, h - 4 * k);
            uint32_t lin = 0;                             /* the group's left mask (whole warp) */
            for (int gi = 0, x0 = 0; gi < ng; gi++, x0 += gw) {
                int x[NC], act[NC];
                uint32_t *wcol[NC];                         /* the lane's columns of the words */
                for (int c = 0; c < NC; c++) {
                    x[c] = x0 + (int)lane + 32 * c;
                    act[c] = x[c] < w;
                    wcol[c] = words + x[c];
                }
                /* quiet SPP / MRP groups: with no significant sample in any column's 3 x 6 window
                 * (SPP; and none new in column x0 - 1) or in the stripe itself (MRP), the pass
                 * codes nothing there and changes no word (an SPP codes only samples with a
                 * significant neighbour, and the first of them in a group has one that was
                 * significant before the pass or became so in column x0 - 1), so the warp skips
                 * the group before loading any magnitude (whole warp: one ballot) */
                if (type != 2 && !lin) {
                    const uint32_t qm = type == 0 ? J2KI_T1_SIGMA_ALL : T1P_SIGMA_OWN;
                    uint32_t busy = 0;
                    for (int c = 0; c < NC; c++)
                        busy |= act[c] ? wcol[c][k * ws] & qm : 0u;
                    if (!__any_sync(T1P_ALL, busy)) {
                        T1P_QUIET_HOOK(type, lane);
                        continue;                           /* lin stays 0 */
                    }
                }
                uint32_t word[NC], bits[NC], mg[NC][4], sig[NC], left[NC], cl[NC], cr[NC];
                /* phase 0: the column's word and magnitudes (coalesced along x) */
                for (int c = 0; c < NC; c++) {
                    /* the stripe's column as one 64-bit pointer, the rows at 32-bit offsets from it */
                    const int32_t *sp = coefs + ((uint32_t)k * 4u * cst + (uint32_t)x[c]);
                    word[c] = act[c] ? wcol[c][k * ws] : 0;
                    bits[c] = 0;
#pragma unroll
                    for (int r = 0; r < 4; r++) {
                        int32_t v = act[c] && r < nr ? __ldg(sp + (uint32_t)r * cst) : 0;
                        mg[c][r] = v < 0 ? 0u - (uint32_t)v : (uint32_t)v;
                        bits[c] |= ((mg[c][r] >> s) & 1) << r;
                    }
                }
                /* quiet cleanup groups: a full stripe whose words hold no significant sample and
                 * no SPP-coded row, whose magnitudes have no bit at s and whose column x0 - 1 got
                 * no new significant sample codes one run-length 0 per column (j2ki_t1p_cup_col)
                 * and changes no word (pi is already clear): the symbols are written directly
                 * (whole warp: ballots) */
                if (type == 2 && nr == 4 && !lin) {
                    uint32_t busy = 0;
                    for (int c = 0; c < NC; c++)
                        busy |= act[c] && ((word[c] & (J2KI_T1_SIGMA_ALL | J2KI_T1_PI_ALL)) || bits[c]);
                    if (!__any_sync(T1P_ALL, busy)) {
                        const uint32_t below = (1u << lane) - 1u;
                        uint32_t tot = 0;
                        for (int c = 0; c < NC; c++) {
                            const uint32_t m = __ballot_sync(T1P_ALL, act[c]);
                            const uint32_t off = pos + base + tot + (uint32_t)__popc(m & below);
                            if (act[c]) {
                                if (off < lay.syms_cap)
                                    syms[off] = J2KI_T1P_SYM(J2KI_T1_CTX_RL, 0);
                                else
                                    bad = 1;
                            }
                            tot += (uint32_t)__popc(m);
                        }
                        base += tot;
                        T1P_QUIET_HOOK(type, lane);
                        __syncwarp();
                        continue;                           /* lin stays 0 */
                    }
                }
                if (type != 1) {                      /* the MRP reads no neighbour */
                    /* only their chi bits are read: columns x0 - 1 and x0 + 32 NC from the words */
                    const uint32_t wl = gi > 0 ? words[k * ws + x0 - 1] : 0u;
                    const uint32_t wr = gi + 1 < ng ? words[k * ws + x0 + gw] : 0u;
                    t1p_nbrs<NC>(word, cl, cr, lane, wl, wr);
                } else {
                    for (int c = 0; c < NC; c++)
                        cl[c] = cr[c] = 0;
                }
                /* phase 1: new-significance masks (t1_par.h): cleanup from the word; SPP by rounds
                 * until no lane's assumed left mask changed (the ballot); MRP none. Lane 0's first
                 * column starts from lin, which is final. */
                for (int c = 0; c < NC; c++) {
                    left[c] = c == 0 && lane == 0 ? lin : 0u;
                    sig[c] = type == 2 && act[c] ? j2ki_t1p_cup_sig(&p, word[c], bits[c]) : 0;
                }
                if (type == 0) {
                    uint32_t changed, nb[NC], pr[NC];
                    for (int c = 0; c < NC; c++) {   /* what the rounds do not change */
                        nb[c] = j2ki_t1p_spp_nb(&p, word[c]);
                        pr[c] = act[c] ? bits[c] & j2ki_t1p_ins(word[c]) : 0;
                    }
                    do {
                        uint32_t nl[NC];
                        for (int c = 0; c < NC; c++)
                            sig[c] = j2ki_t1p_spp_fill(nb[c], pr[c], left[c]);
                        t1p_left<NC>(sig, nl, lane, lin);
                        changed = 0;
                        for (int c = 0; c < NC; c++) {
                            changed |= nl[c] != left[c];
                            left[c] = nl[c];
                        }
                    } while (__ballot_sync(T1P_ALL, changed));
                } else if (type == 2) {
                    t1p_left<NC>(sig, left, lane, lin);
                }
                __syncwarp();
                /* phase 2: each lane codes its columns with the final left masks */
                J2kiT1pCol o[NC];
                uint32_t n[NC], osig[NC], incl[NC];
                for (int c = 0; c < NC; c++) {
                    j2ki_t1p_col_clear(&o[c]);
                    if (act[c]) {
                        if (type == 0)
                            j2ki_t1p_spp_col(&p, &o[c], word[c], left[c], cl[c], cr[c], mg[c], bits[c], nr);
                        else if (type == 1)
                            j2ki_t1p_mrp_col(&p, &o[c], word[c], mg[c], nr);
                        else
                            j2ki_t1p_cup_col(&p, &o[c], word[c], left[c], cl[c], cr[c], mg[c], nr);
                    }
                    n[c] = (uint32_t)o[c].n;
                    osig[c] = o[c].sig;
                }
                /* phase 3: inclusive prefix sum of the counts in column order (lane's first
                 * columns, then its second ones), and the group's total: a count is at most
                 * J2KI_T1P_COL_SYMS < 16, so by its 4 bits, a ballot each, counted below the lane */
                uint32_t tot = 0;
                const uint32_t below = (1u << lane) - 1u;
                for (int c = 0; c < NC; c++) {
                    uint32_t ex = 0, all = 0;
                    for (int b = 0; b < 4; b++) {
                        const uint32_t m = __ballot_sync(T1P_ALL, (n[c] >> b) & 1);
                        ex += (uint32_t)__popc(m & below) << b;
                        all += (uint32_t)__popc(m) << b;
                    }
                    incl[c] = tot + ex + n[c];
                    tot += all;
                }
                /* phase 4: emit at base + exclusive offset; distortion terms (integers) */
                for (int c = 0; c < NC; c++) {
                    uint32_t off = pos + base + incl[c] - n[c];
                    if (off + n[c] <= lay.syms_cap) {
                        /* a predicated store per possible symbol, at a constant offset from
                         * dst (a loop over a lane's own count diverges, and picking symbol q
                         * out of the queue at a run-time position costs a dozen instructions) */
                        uint32_t wq[3];
                        uint8_t *dst = syms + off;
                        j2ki_t1p_col_words(&o[c], wq);
#pragma unroll
                        for (int q = 0; q < J2KI_T1P_COL_SYMS; q++)
                            if ((uint32_t)q < n[c])
                                dst[q] = (uint8_t)(wq[q >> 2] >> (8 * (q & 3)));
                    } else {
                        bad = 1;
                    }
                    sum += o[c].sum;
                }
                base += tot;
                /* phase 5: the words of the lane's columns (t1_par.h, j2ki_t1p_update): sigma of
                 * rows 1..4 from the masks of x - 1, x, x + 1, pi / mu, pi cleared by the cleanup,
                 * row 5 of the stripe above, row 0 of the stripe below */
                if (type == 1) {                      /* the MRP only sets mu bits */
                    for (int c = 0; c < NC; c++)
                        if (act[c])
                            wcol[c][k * ws] = word[c] | o[c].set;
                    __syncwarp();
                    continue;                         /* lin stays 0 */
                }
                /* the masks spread once (row r to bit 3r) and then shuffled: the new sigma bits
                 * of rows r and columns x - 1, x, x + 1 are bits 3r, 3r + 1, 3r + 2 of `all`
                 * (column x0 - 1's from lin; column x0 + 32 NC's are added by the next group) */
                uint32_t os[NC], nw[NC], ne[NC];
                for (int c = 0; c < NC; c++)
                    os[c] = j2ki_t1p_spread(osig[c]);
                t1p_nbrs<NC>(os, nw, ne, lane, j2ki_t1p_spread(lin), 0u);
                for (int c = 0; c < NC; c++) {
                    if (!act[c])
                        continue;
                    uint32_t *cp = wcol[c] + k * ws;
                    const uint32_t all = nw[c] | os[c] << 1 | ne[c] << 2;
                    uint32_t wd = word[c] | all << 3 | o[c].set;
                    if (type == 2)
                        wd &= ~J2KI_T1_PI_ALL;
                    *cp = wd;
                    if (k > 0 && (all & 7u))
                        cp[-ws] |= (all & 7u) << 15;          /* row 5 of the stripe above */
                    if (k + 1 < ns && (all >> 9 & 7u))
                        cp[ws] |= (all >> 9) & 7u;            /* row 0 of the stripe below */
                }
                if (gi > 0 && lane == 0 && os[0]) {
                    /* column x0's new sigma bits as the east neighbour of column x0 - 1 */
                    uint32_t *cp = words + k * ws + x0 - 1;
                    const uint32_t e = os[0] << 2;
                    *cp |= e << 3;
                    if (k > 0 && (e & 7u))
                        cp[-ws] |= (e & 7u) << 15;
                    if (k + 1 < ns && (e >> 9 & 7u))
                        cp[ws] |= (e >> 9) & 7u;
                }
                if (gi + 1 < ng)                            /* whole warp */
                    lin = __shfl_sync(T1P_ALL, osig[NC - 1], 31);  /* column x0 + 32 NC - 1's mask */
                __syncwarp();
            }
        }
        /* the pass's distortion: warp sum of the lanes' integer sums, scaled as j2ki_t1p_pass */
        for (int d = 16; d > 0; d >>= 1)
            sum += __shfl_xor_sync(T1P_ALL, (long long)sum, d);
        if (lane == 0) {
            int64_t dd = type == 1 ? ((int64_t)1 << (s - g)) * sum : j2ki_t1_sig_scale(s, g) * sum;
            passes[cb.pass_off + pi].dist = ldexp((double)dd, 2 * g - 2 * cb.frac_bits - 2);
        }
        if (__any_sync(T1P_ALL, bad)) {
            if (lane == 0)
                atomicOr(&stat[i], T1P_ERR_MODEL);      /* the MQ side may set ERR_DONE meanwhile */
            return;                                     /* whole warp */
        }
        /* a raw pass goes to the MQ thread packed: its bytes in place of its symbols, their count
         * and the packer's state in its count word. A raw segment is one pass (TERMALL) or an
         * SPP and the MRP of the same bit-plane, so it never spans two chunks; it starts afresh
         * after a pass coded by the MQ coder or one that terminated (j2ki_mqc_raw_init). */
        uint32_t used = base, cv = base;
        if (p.raw) {
            if (pi == 0 || !j2ki_t1_pass_raw(pi - 1, cblk_style, bypass_start) ||
                j2ki_t1_pass_term(pi - 1, nb_passes, cblk_style, bypass_start)) {
                rc = 0;
                rct = 8;
                rb = 0;
            }
            __syncwarp();                               /* the pass's symbols, all lanes' */
            used = t1p_pack_raw(syms + pos, syms + pos, base, rc, rct, rb, (uint32_t *)(slot + lay.bits), lane);
            cv = J2KI_T1P_PACKED(used, rc, rct, rb);
        }
        if (lane == 0)
            cnt[pi - i0] = cv;
        pos += used;
    }
    __syncwarp();
    if (k1 < numbps) {                                  /* planes remain: keep the words */
        for (int m = 0; m < NC * ng; m++) {
            const int xx = (int)lane + 32 * m;
            if (xx >= w)
                break;
            for (int k = 0; k < ns; k++)
                gwords[k * ws + xx] = words[k * ws + xx];
        }
    }
}

#endif /* !J2KI_CUDA_HOST */

/*
 * The frame's buffers a launch codes, passed by value as a __grid_constant__ parameter (no
 * copy per thread). Launch position j (a model warp's or an MQ thread's) codes sorted block j.
 */
typedef struct T1pFrameDev {
    const int32_t  *samples;
    const uint32_t *order;    /* the frame's sorted block indices (t1_prep_kernel + sort) */
    uint8_t        *data;
    J2kiPass       *passes;
    J2kiCblkRes    *res;
    uint32_t       *flag;
    const uint32_t *nbps;
    uint32_t       *stat;
    uint8_t        *slots;
    const uint32_t *lim;      /* the early stop's limits, or NULL */
} T1pFrameDev;

#ifndef J2KI_CUDA_HOST
/*
 * MQ coding of chunk `chunk` of every code-block, one thread each (sorted order): the symbol
 * lists of the chunk's passes through j2ki_t1p_code_pass, the state in the block's slot.
 * Chunk 0 also reports the blocks with nothing to code or a numbps the others reject, exactly
 * as t1_lanes_kernel does; the last pass, or an error, writes the result.
 */
__device__ __forceinline__ void t1p_mq_thread(uint32_t j, uint16_t *ctx, const J2kiCblkDev *cblks,
                                              const uint32_t *order,
                                              uint32_t nb_cblks, int cblk_style, int bypass_start,
                                              uint8_t *data, J2kiPass *passes, J2kiCblkRes *res,
                                              uint32_t *flag, const uint32_t *nbps, uint32_t *stat,
                                              uint8_t *slots, const T1pLayout &lay, int chunk,
                                              const uint32_t *lim)
{
    if (j >= nb_cblks)
        return;
    const uint32_t i = order[j];
    const J2kiCblkDev cb = cblks[i];
    const int numbps = (int)nbps[i], k0 = j2ki_t1s_plane0(chunk), nb_passes = 3 * numbps - 2;
    uint8_t *slot = slots + (size_t)i * lay.slot;
    T1pBlock *b = (T1pBlock *)(void *)(slot + lay.block);
    J2kiCblkRes r;
    r.numbps = numbps;
    r.nb_passes = 0;
    r.err = 0;
    r.len = 0;
    if (chunk == 0 && !t1p_valid(cb, numbps)) {
        if (numbps > cb.nb_mag_bits || numbps > J2KI_T1_MAX_PLANES)
            r.err = J2KC_ERR_INTERNAL;
        else if (numbps > 0)
            r.err = J2KC_ERR_BUFSIZE;                   /* 3 numbps - 2 > max_passes */
        if (r.err)
            atomicOr(flag, 1u);
        res[i] = r;
        return;
    }
    if (!t1p_valid(cb, numbps) || k0 >= numbps || (stat[i] & T1P_ERR_DONE))
        return;
    if (lim && lim[i] && !(stat[i] & T1P_ERR_MODEL)) {
        /* The early stop (t1_stop.h) ended the block after chunk - 1, whose MQ coding ran in
         * an earlier launch: this chunk's symbols (if the fused schedule modelled them) are dropped, and the block ends as if its
         * last pass were that chunk's last, a cleanup pass (MQ-coded): the open segment is
         * terminated from the coder state stored after it (bytes before B are final there),
         * exactly as j2ki_t1_code_lim terminates the pass lim - 1 it ends on. Its est keeps
         * the value the decisions used. Later launches skip the block. */
        const int last = (int)lim[i] - 1;
        if (last != j2ki_t1s_chunk_end(chunk) - 1)
            return;
        J2kiMqc mqc = b->st.mqc;
        J2kiT1Seg cd = b->cd;
        J2kiPass *ps = passes + cb.pass_off;
        if (cd.open) {
            const uint32_t est = ps[last].est;
            r.err = j2ki_t1_seg_close(&cd, &mqc, ctx, b->st.marks, last, 0, 1, cblk_style, data + cb.data_off, ps);
            ps[last].est = est;
        }
        if (!r.err) {
            r.nb_passes = last + 1;
            r.len = (uint32_t)cd.seg_start;
        }
    } else if (stat[i] & T1P_ERR_MODEL) {
        r.err = J2KC_ERR_INTERNAL;
    } else {
        const int i0 = k0 ? 3 * k0 - 2 : 0;
        const int i1 = j2ki_imin(3 * j2ki_imin(j2ki_t1s_plane0(chunk + 1), numbps) - 2, nb_passes);
        const uint32_t *cnt = (const uint32_t *)(slot + lay.cnt + (chunk & 1) * lay.cnt_step);
        const uint8_t *syms = slot + lay.syms + (chunk & 1) * lay.syms_step;
        /* The coder and the context states of the chunk in registers and shared memory (ctx,
         * the thread's 19 states), not in the slot: coded in place in global memory, every symbol's
         * context load waited on the previous symbol's store to the same line (the first
         * device profile: 4 to 5 ms per chunk, 17 cycles per instruction). Stored back once
         * per chunk; the marks, written once per pass, stay in the slot. */
        /* the first chunk starts from nothing the slot holds (the coder opens its first
         * segment, j2ki_mqc_init), so it reads none of it: uninitialised memory stays unread */
        J2kiMqc mqc = {};
        J2kiT1Seg cd = {};
        J2kiT1pMq q;
        if (chunk == 0) {
            j2ki_t1p_coder_init(ctx, &cd);
        } else {
            mqc = b->st.mqc;
            cd = b->cd;
            for (int c = 0; c < 19; c++)
                ctx[c] = b->st.ctx[c];
        }
        q.mqc = &mqc;
        q.ctx = ctx;
        q.marks = b->st.marks;
        /* flat: the chunk's passes in one loop over their symbols where the style allows
         * (j2ki_t1p_code_run: a warp then runs as long as its block with the most symbols in
         * the chunk, not the sum of the per-pass maxima); raw passes arrive packed by the
         * model side */
        r.err = j2ki_t1p_code_run(q, &cd, i0, i1, nb_passes, cblk_style, bypass_start, syms, cnt,
                                  data + cb.data_off, cb.data_cap, passes + cb.pass_off);
        b->st.mqc = mqc;
        b->cd = cd;
        for (int c = 0; c < 19; c++)
            b->st.ctx[c] = ctx[c];
        if (!r.err && i1 < nb_passes)
            return;                                     /* more chunks follow */
        if (!r.err) {
            r.nb_passes = nb_passes;
            r.len = (uint32_t)b->cd.seg_start;
        }
    }
    if (r.err) {
        atomicOr(&stat[i], T1P_ERR_DONE);               /* the model side may set ERR_MODEL meanwhile */
        atomicOr(flag, 1u);
    }
    res[i] = r;
}

/*
 * Launch c of T1P_CHUNKS + 1: the MQ coding of chunk c - 1 (c >= 1; the first qblocks thread
 * blocks, a thread per code-block, so that these long serial chains start first) beside the
 * context modelling of chunk c (c < T1P_CHUNKS; the next mblocks thread blocks, a warp per
 * code-block). They share no data: the MQ side reads copy (c - 1) & 1 of the counts and
 * symbols, the model side writes copy c & 1, and each block's status word takes only
 * atomicOr. The model side of chunk c needs the words of chunk c - 1 and the MQ side of chunk
 * c - 1 its symbols: both written by launch c - 1, earlier in the stream. Measured on an H100
 * (4K DCI): the MQ kernel alone fills 6 to 9 % of the SMs' warp slots, so running it beside
 * the next chunk's modelling hides most of it.
 */
/* Whether a thread of launch c may have work: the MQ thread of sorted block j (chunk c - 1: the
 * first chunk always, for its result), or a lane of the model warp of block j (chunk c). Its
 * tests are the first ones t1p_mq_thread and t1p_model_warp make; a thread block of the launch
 * leaves when none of its threads may (tests/t1p_emu.cc skips thread blocks by the same test). */
__device__ __forceinline__ int t1p_may_work(int mq, int c, uint32_t j, uint32_t nb_cblks, const uint32_t *order,
                                            const uint32_t *nbps)
{
    const int chunk = mq ? c - 1 : c;
    return (mq && chunk == 0) || (j < nb_cblks && (int)nbps[order[j]] > j2ki_t1s_plane0(chunk));
}

/* Resident thread blocks per SM that the kernel's registers must allow (the __launch_bounds__
 * of its entries, t1_kern.cu):
 * 8 (64 registers) for blocks up to 32 wide; with two columns per lane (NC = 2) the model
 * warp spilled to local memory under 64 registers (ptxas, sm_90: 92 bytes of spill stores and
 * 156 of loads for t1p_chunk_kernel<2>, and its chunk-0 launch bound by L2 traffic), so 6
 * there (80 registers, no spills for <2, false>; bench/results/history.md#mq-decision-chain). */
#define T1P_MIN_BLOCKS_NC1 8
#define T1P_MIN_BLOCKS_NC2 6

template <int NC, bool GR = false>
__device__ __forceinline__ void
t1p_chunk_kernel(const T1pFrameDev &F, const J2kiCblkDev *cblks, uint32_t nb_cblks, int cblk_style,
                 int bypass_start, T1pLayout lay, int c, uint32_t qblocks)
{
    /* t1p_smem: the model warps' words, or the MQ threads' context states, 22 halfwords (11
     * words, odd) apart, so that 32 threads reading the same context hit 32 banks */
    extern __shared__ __align__(16) uint8_t t1p_smem_words[];
    /* A thread block none of whose code-blocks has a bit-plane in its chunk (after the first
     * chunks, nearly all of them: launch c has a thread block per 4 or 128 blocks of the frames)
     * leaves before it loads the tables; its threads would leave at their first test. (The
     * position is computed again below rather than kept live across the tables' load: fewer
     * spills.) */
    {
        const int mq = blockIdx.x < qblocks;
        const uint32_t j = mq ? blockIdx.x * 128 + threadIdx.x : (blockIdx.x - qblocks) * 4 + (threadIdx.x >> 5);
        if (!__syncthreads_or(t1p_may_work(mq, c, j, nb_cblks, F.order, F.nbps)))
            return;
    }
    t1_tables_load(true);
    if (blockIdx.x < qblocks) {
        const uint32_t j = blockIdx.x * 128 + threadIdx.x;
        t1p_mq_thread(j, (uint16_t *)t1p_smem_words + threadIdx.x * T1P_CTX_STEP, cblks, F.order, nb_cblks,
                      cblk_style, bypass_start, F.data, F.passes, F.res, F.flag, F.nbps, F.stat, F.slots, lay,
                      c - 1, F.lim);
    } else {
        const uint32_t w = threadIdx.x >> 5, j = (blockIdx.x - qblocks) * 4 + w;
        t1p_model_warp<NC, GR>(j, threadIdx.x & 31, (uint32_t *)t1p_smem_words + w * lay.ns * lay.ws, F.samples, cblks,
                           F.order, nb_cblks, cblk_style, bypass_start, F.passes, F.nbps, F.stat, F.slots, lay, c,
                           F.lim);
    }
}
#endif /* !J2KI_CUDA_HOST */

#endif /* J2KI_T1_PAR_CUDA_CUH */
