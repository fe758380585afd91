/*
 * The library's tuning defaults: every value chosen by measurement, with its reason in one
 * line and, where it was timed on a GPU, the section of bench/results/history.md that holds
 * the figures. None of them changes the bytes of a codestream; they set how the work is cut
 * up and scheduled. Changing one for an experiment means rebuilding (bench/ab.sh builds and
 * compares trees); the few run-time switches that remain are test hooks (hooks.h). The first
 * section names the hardware limits the defaults work within: facts, not tuned.
 */
#ifndef J2KI_TUNING_H
#define J2KI_TUNING_H

/* ---- limits (facts of the hardware, not tuned) ---- */

/* Shared memory, static and dynamic together, that a CUDA thread block gets without opting
 * in: 48 KiB on every architecture the library builds for (CUDA C++ Programming Guide,
 * technical specifications per compute capability); more needs
 * CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, which j2ki_cuda_kernels_ready sets. */
#define J2KI_CUDA_SMEM_DEFAULT (48 * 1024)

/* ---- CUDA backend: host side (cuda/: cuda_env.cu, cuda_upload.cu, stage.c) ---- */

/* Hardware work queues recommended (CUDA_DEVICE_MAX_CONNECTIONS, set by the application; the
 * backend logs the advice, cuda_env.cu): one per frame slot, at least this many, since with
 * fewer the slots' kernels queue behind each other (#hardware-queues). */
#define J2KI_TUNE_CUDA_QUEUES_MIN 8
/* ... and at most this many (the driver's limit). */
#define J2KI_TUNE_CUDA_QUEUES_MAX 32

/* Helper threads that copy a pageable host frame into the pinned staging area beside the
 * submitting thread (at most one fewer than the cores): 7 gave what 15 gave on a 16-core host
 * (#staging-copiers). */
#define J2KI_TUNE_STAGE_COPIERS 7
/* Frames below this many staging bytes are copied by the submitting thread alone: waking
 * the helpers takes a sizeable part of a small copy (stage.h). */
#define J2KI_TUNE_STAGE_PAR_BYTES ((size_t)4 << 20)
/* The staging copy is uploaded in parts of about this size, each as soon as it is in place,
 * so the upload overlaps the copy (#staging-in-parts) ... */
#define J2KI_TUNE_STAGE_PART_BYTES ((size_t)2 << 20)
/* ... and in at most this many (#staging-in-parts). */
#define J2KI_TUNE_STAGE_MAX_PARTS 8
/* Chunks of rows per staging job, claimed from a counter, so that no copier waits for a fixed
 * share of the slowest one (about 830 KB each for 4K DCI; #staging-in-parts). */
#define J2KI_TUNE_STAGE_CHUNKS 64

/* ---- CUDA tier-1 (t1_cuda.cu) ---- */

/* The serial kernels' workers: one per code-block up to this many; fewer were slower on a
 * 4K frame (#64x64-code-blocks), for about 7 KB of scratch per worker. */
#define J2KI_TUNE_T1_MAX_WORKERS 32768u
/* The column-parallel coder's launch schedule with the early stop: 2 = the modelling and MQ
 * coding of a chunk in separate launches up to the last decision, fused after; the steadiest
 * and fastest of the three (#column-parallel-tier-1). */
#define J2KI_TUNE_T1P_SPLIT 2

/* ---- CUDA tier-2 and rate control's sizing (t2_cuda.cu, rc_kern.cu) ---- */

/* Precincts of at least this many code-blocks have their packet headers coded by a thread
 * block (a team of warps, t2_cuda.h) instead of one warp: a precinct without a partition
 * holds every code-block of its resolution, and one warp coding thousands of them at every
 * probe held a 4K frame's rate control. 32 to 256 gave the same at 32x32, 64 and 32 the
 * shortest rate control at 64x64; 64 leaves the profiles' precincts (at most 48 code-blocks)
 * to warps (#precinct-teams). */
#define J2KI_TUNE_T2_TEAM_MIN_CBLKS 64

/* ---- rate control (rc_ref.c, rc_cuda.cu) ---- */

/* Thresholds sized per guided step of a byte-budget search: one; sizing up to 32 at once
 * saved a step but each cost more (#rate-control-probes-per-step). */
#define J2KI_TUNE_RC_PROBES 1
/* Code-blocks per item of the reference rate control's hull, apply and histogram jobs on the
 * worker pool: a few microseconds each, so claiming one costs little. */
#define J2KI_TUNE_RC_POOL_CBLKS 128

/* ---- reference backend (backend_ref.c) ---- */

/* Rows per item of the load / component transform job and of the horizontal DWT pass: tens
 * of microseconds for a 4K row, and a hundred items for a 2K frame's component. */
#define J2KI_TUNE_REF_ROWS 16

#endif /* J2KI_TUNING_H */
