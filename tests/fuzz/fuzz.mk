# Fuzzing (included by the top-level Makefile; see doc/reliability.md).
#   make fuzz [FUZZ_SECONDS=N] [FUZZ_TARGETS="check image"]
#       builds the libFuzzer targets with clang, ASan and UBSan in $(B)-fuzz and runs each for
#       N seconds on a copy of its seed corpus (tests/fuzz/corpus/TARGET); a crash is kept in
#       $(B)-fuzz/fuzz/TARGET-artifacts/ (add it to tests/fuzz/regress/TARGET/ as a test).
#   make fuzz-build    only builds them
#   make fuzz-replay   gcc build of the same targets with a plain main (tests/fuzz/replay.c),
#                      for replaying inputs where clang's libFuzzer is missing
FUZZ_B       ?= $(B)-fuzz
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
# -O2 rather than -O1: the sanitizers' checks are the same, the coding loops run faster
FUZZ_OPT     ?= -O2
FUZZ_TARGETS ?= check image params encode
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_CFLAGS  := -std=c99 -D_POSIX_C_SOURCE=200809L $(FUZZ_OPT) -g -Wall -Wextra -Ij2kcuda/include -Ij2kcuda/src -Itools

# objects each target links besides its own source
FUZZ_OBJ_check  := obj/tools/profcheck.o obj/tools/csparse.o
FUZZ_OBJ_image  := obj/tools/imageio.o
FUZZ_OBJ_params := lib/libj2kcuda.a
FUZZ_OBJ_encode := obj/tools/profcheck.o obj/tools/csparse.o lib/libj2kcuda.a
# libopenjp2 linked statically where Debian's .a is there: the binaries then run on a machine
# without OpenJPEG (a bigger machine for long campaigns: tests/fuzz/campaign.sh)
FUZZ_OPJ_A   := $(wildcard $(shell pkg-config --variable=libdir libopenjp2 2>/dev/null)/libopenjp2.a)
# OpenJPEG is the judge, not under test, and is built without coverage instrumentation or
# ASan (Debian's library). Its allocations (hundreds per decode) would still go through ASan's
# allocator, which records a stack and quarantines each block: in the static copy linked here,
# OpenJPEG's malloc family is renamed to j2kf_judge_* (tests/fuzz/judge_alloc.c), which calls
# the C library's own allocator. Only OpenJPEG's objects are renamed; ours keep ASan's.
# (The gcc replay build, without ASan, links the library as it is.)
FUZZ_OPJ_SYMS := malloc calloc realloc free posix_memalign
FUZZ_OPJ_CFLAGS := $(shell pkg-config --cflags libopenjp2 2>/dev/null)
FUZZ_LIBS_encode := $(FUZZ_OPJ_CFLAGS) \
    $(if $(FUZZ_OPJ_A),$(FUZZ_B)/fuzz/libopenjp2-judge.a $(FUZZ_B)/fuzz/judge_alloc.o -ldl,-lopenjp2)
FUZZ_REPLAY_LIBS_encode := $(FUZZ_OPJ_CFLAGS) $(if $(FUZZ_OPJ_A),$(FUZZ_OPJ_A),-lopenjp2)

# The library and tool objects, instrumented for coverage (fuzzer-no-link) and sanitized. The
# parsers keep the comparison tracing that lets libFuzzer guess marker codes and header
# fields; the library's coding loops (tier-1, rate control) lose it: traced, they spent most
# of an encode's time in the tracing callbacks.
# The objects are rebuilt when FUZZ_OPT changes (the object rules do not see flags).
fuzz-objs: config.mak
	@mkdir -p $(FUZZ_B); echo '$(FUZZ_OPT)' | cmp -s - $(FUZZ_B)/opt.stamp || \
	    { rm -rf $(FUZZ_B)/obj $(FUZZ_B)/lib; echo '$(FUZZ_OPT)' > $(FUZZ_B)/opt.stamp; }
	$(MAKE) B=$(FUZZ_B) CC=$(FUZZ_CC) HAVE_CUDA=0 SANITIZE=1 OPT="$(FUZZ_OPT)" \
	    EXTRA_CFLAGS="-fsanitize=fuzzer-no-link -fno-sanitize-coverage=trace-cmp" \
	    $(FUZZ_B)/lib/libj2kcuda.a
	$(MAKE) B=$(FUZZ_B) CC=$(FUZZ_CC) HAVE_CUDA=0 SANITIZE=1 OPT="$(FUZZ_OPT)" \
	    EXTRA_CFLAGS=-fsanitize=fuzzer-no-link \
	    $(FUZZ_B)/obj/tools/profcheck.o $(FUZZ_B)/obj/tools/csparse.o $(FUZZ_B)/obj/tools/imageio.o

$(FUZZ_B)/fuzz/libopenjp2-judge.a: $(FUZZ_OPJ_A)
	@mkdir -p $(dir $@)
	objcopy $(foreach f,$(FUZZ_OPJ_SYMS),--redefine-sym $(f)=j2kf_judge_$(f)) $< $@

$(FUZZ_B)/fuzz/judge_alloc.o: tests/fuzz/judge_alloc.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=c99 -O2 -Wall -Wextra -c $< -o $@

fuzz-build: fuzz-objs $(if $(FUZZ_OPJ_A),$(FUZZ_B)/fuzz/libopenjp2-judge.a $(FUZZ_B)/fuzz/judge_alloc.o)
	@mkdir -p $(FUZZ_B)/fuzz
	@for t in $(FUZZ_TARGETS); do \
	    case $$t in check) o="$(FUZZ_OBJ_check)";; image) o="$(FUZZ_OBJ_image)";; \
	    params) o="$(FUZZ_OBJ_params)";; encode) o="$(FUZZ_OBJ_encode)";; *) echo "unknown fuzz target $$t"; exit 1;; esac; \
	    objs=; for x in $$o; do objs="$$objs $(FUZZ_B)/$$x"; done; \
	    libs=; [ $$t = encode ] && libs="$(FUZZ_LIBS_encode)"; \
	    echo "  FUZZ $(FUZZ_B)/fuzz/fuzz_$$t"; \
	    $(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(FUZZ_SAN) -o $(FUZZ_B)/fuzz/fuzz_$$t \
	        tests/fuzz/fuzz_$$t.c $$objs $$libs -lm -lpthread || exit 1; \
	done

fuzz: fuzz-build
	@for t in $(FUZZ_TARGETS); do \
	    tests/fuzz/campaign.sh $(FUZZ_B)/fuzz/fuzz_$$t $(FUZZ_SECONDS) 1 || exit 1; \
	done

# gcc, the ordinary sanitizer flags, no libFuzzer: replay_TARGET FILE|DIR...
fuzz-replay: config.mak
	$(MAKE) B=$(B) $(B)/lib/libj2kcuda.a $(B)/obj/tools/profcheck.o $(B)/obj/tools/csparse.o \
	    $(B)/obj/tools/imageio.o
	@mkdir -p $(B)/fuzz
	@for t in $(FUZZ_TARGETS); do \
	    case $$t in check) o="$(FUZZ_OBJ_check)";; image) o="$(FUZZ_OBJ_image)";; \
	    params) o="$(FUZZ_OBJ_params)";; encode) o="$(FUZZ_OBJ_encode)";; esac; \
	    objs=; for x in $$o; do objs="$$objs $(B)/$$x"; done; \
	    libs=; [ $$t = encode ] && libs="$(FUZZ_REPLAY_LIBS_encode)"; \
	    $(CC) $(CFLAGS_J) -Itools $(LDFLAGS_J) -o $(B)/fuzz/replay_$$t tests/fuzz/fuzz_$$t.c \
	        tests/fuzz/replay.c $$objs $$libs $(LIBS_J) || exit 1; \
	done

.PHONY: fuzz fuzz-build fuzz-objs fuzz-replay
