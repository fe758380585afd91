# j2kcuda top-level Makefile. Run ./configure first (make does it with defaults if needed).
#   make            library (static + shared + pkg-config), j2kc, j2kc-check
#   make check      installs test dependencies (as root, from Debian), builds, runs every GPU-less test
#   make check-long the long runs: 10,000 frames through ffmpeg, 1,000 create/free cycles, memory flat
#   make check-cuda reference vs CUDA, per stage and end to end (needs a GPU)
#   make check-t1p-emu  the J2KI_T1_CUDA_PAR tier-1 kernels emulated on the host (CUDA headers)
#   make check-dwt-emu  the CUDA DWT kernels emulated on the host against the reference
#   make check-t2-emu   the CUDA tier-2 emulated on the host against the reference writer
#   make check-rc-emu   the CUDA rate control emulated on the host against rc_ref.c
#   make check-ht-emu   the CUDA HT block coder emulated on the host against ht_plane.c / ht_ref.c
#   make bench      side-by-side speed benchmark (see bench/README.md)
#   make ffmpeg     FFmpeg 7.1 with -c:v jpeg2000_cuda in build/ffmpeg (see tools/ffmpeg-build.sh)
#   make demo       the main job: a real clip through ffmpeg -c:v jpeg2000_cuda into DCI MXF
#   make fuzz       libFuzzer targets (clang, ASan+UBSan), each run FUZZ_SECONDS (tests/fuzz/fuzz.mk)
-include config.mak

B        ?= build
CC       ?= cc
OPT      ?= -O2
WARN     := -Wall -Wextra -Wno-unused-parameter -Wshadow -Wstrict-prototypes
CFLAGS_J := -std=c99 -D_POSIX_C_SOURCE=200809L $(OPT) -g -fPIC -ffp-contract=off $(WARN) \
            -Ij2kcuda/include -Ij2kcuda/src $(EXTRA_CFLAGS)
# float-cast-overflow (a double out of an integer type's range converted to it, C11 6.3.1.4)
# is named on its own: GCC's -fsanitize=undefined leaves it out.
ifeq ($(SANITIZE),1)
SAN_FLAGS := -fsanitize=address,undefined,float-cast-overflow
CFLAGS_J += $(SAN_FLAGS) -fno-omit-frame-pointer -fno-sanitize-recover=undefined,float-cast-overflow
LDFLAGS_J += $(SAN_FLAGS)
endif
LIBS_J   := -lm -lpthread

# the library's sources by layer (doc/architecture.md): core/ (API, parameters, plan, log,
# codestream finish), hd/ (host/device maths), ref/ (reference stages), cuda/ (CUDA backend);
# every include names its folder from j2kcuda/src ("hd/mqc.h"), one -Ij2kcuda/src
LIB_DIRS := core hd ref cuda
LIB_C    := $(sort $(foreach d,$(LIB_DIRS),$(wildcard j2kcuda/src/$(d)/*.c)))
# cuda/: the host files (*.cu but *_kern.cu) are plain C++, compiled by the host compiler
# against the CUDA headers; the device-only files (*_kern.cu) go to the embedded fatbins only
LIB_CU   := $(sort $(filter-out %_kern.cu,$(foreach d,$(LIB_DIRS),$(wildcard j2kcuda/src/$(d)/*.cu))))
LIB_H    := $(foreach d,$(LIB_DIRS),$(wildcard j2kcuda/src/$(d)/*.h) $(wildcard j2kcuda/src/$(d)/*.cuh))
ifeq ($(HAVE_CUDA),1)
CFLAGS_J += -DJ2KC_HAVE_CUDA=1
# The CUDA backend's host code (issue 31): C++ for the host compiler, talking to the GPU through
# the driver loaded at run time (cuda/cu_driver.h); the SDK's headers at build time only, no
# CUDA library at link time (neither libcudart nor libcuda). J2KI_CUDA_HOST: the kernel headers
# they share with the device-only files leave out their device code (cuda/t1_kern.cuh).
CXXFLAGS_CU := -std=c++17 $(OPT) -g -fPIC -ffp-contract=off -Wall -Wno-unused-parameter -Wno-unused-function $(SAN_FLAGS) \
            -Ij2kcuda/include -Ij2kcuda/src -I$(CUDA_HOME)/include -DJ2KC_HAVE_CUDA=1 -DJ2KI_CUDA_HOST=1
# the device-only files, for nvcc -fatbin
NVFLAGS  := -O3 -std=c++17 --fmad=false -lineinfo -Ij2kcuda/include -Ij2kcuda/src -DJ2KC_HAVE_CUDA=1 \
            $(NVCC_GENCODE)
# ... or for clang -S (./configure --cuda-compiler=clang; doc/ffmpeg.md): PTX for PTX_ARCH, the
# oldest configured architecture, from the device-only files alone: -nocudainc -nocudalib (no
# header or library of NVIDIA's SDK; --cuda-path names none so that no installed toolkit sets
# the PTX ISA either), the CUDA language and intrinsics from j2kcuda/compat/cuda (pre-included
# j2ki_clang_cuda.h; its stand-ins for cuda.h, cuda_runtime_api.h and cooperative_groups.h),
# CUB's block primitives from CCCL_PATH (without its optional uses of the SDK's headers: the
# half-precision types and NVTX ranges, none of which the kernels use).
# CLANG_PTX_ISA is the PTX ISA version emitted, CLANG_CUDA_VERSION the CUDA release that
# introduced it (CCCL reads it as CUDA_VERSION): 8.0 / 12.0, the oldest CCCL 3 accepts (the
# PTX itself loads on a driver of CUDA 12.0 or newer; cu_driver.h asks for the CUDA version of
# the cuda.h the host files were built with). -fcuda-allow-variadic-functions: CCCL's type
# traits declare C variadic functions for overload resolution, which clang 19 refuses in device
# code without it. Floating point as nvcc's build: no contraction into FMA (-ffp-contract=off,
# nvcc's --fmad=false), IEEE division and no fast math (clang's defaults); the 9/7 DWT stays
# bit-exact with the reference.
CLANG_PTX_ISA      := 80
CLANG_CUDA_VERSION := 12000
CLANG_CUDA_FLAGS := -x cuda --cuda-device-only -S -O3 -std=c++17 -ffp-contract=off \
            --cuda-gpu-arch=sm_$(PTX_ARCH) -nocudainc -nocudalib --cuda-path=/nonexistent \
            -Wno-unknown-cuda-version -Xclang -target-feature -Xclang +ptx$(CLANG_PTX_ISA) \
            -Xclang -fcuda-allow-variadic-functions \
            -DJ2KI_CLANG_CUDA_VERSION=$(CLANG_CUDA_VERSION) \
            -DCCCL_DISABLE_FP16_SUPPORT -DCCCL_DISABLE_BF16_SUPPORT -DCCCL_DISABLE_NVTX \
            -Ij2kcuda/compat/cuda -include j2ki_clang_cuda.h -isystem $(CCCL_PATH) \
            -Ij2kcuda/include -Ij2kcuda/src -DJ2KC_HAVE_CUDA=1
LIB_OBJ  := $(LIB_C:%.c=$(B)/obj/%.o) $(LIB_CU:%.cu=$(B)/obj/%.o)
LIBS_J   += -ldl -lrt -lstdc++
# The device code (cuda/cu_code.h): each device-only file (cuda/*_kern.cu) compiled into an
# image, by nvcc a fatbin (NVCC_GENCODE: SASS for every configured architecture, PTX for the
# newest) or by clang PTX text (CUDA_CC=clang), the images embedded in the library by one
# generated assembler file (tools/embed-fatbin.sh),
# loaded through the driver at run time (cuLibraryLoadData) and launched by entry name
# (cuda/cuda_launch.h).
comma    := ,
KERN_CU  := $(sort $(wildcard j2kcuda/src/cuda/*_kern.cu))
ifeq ($(CUDA_CC),clang)
KERN_IMG := $(KERN_CU:%.cu=$(B)/obj/%.ptx)
CODE_ARCHS := compute_$(PTX_ARCH)
else
KERN_IMG := $(KERN_CU:%.cu=$(B)/obj/%.fatbin)
CODE_ARCHS := $(patsubst code=%,%,$(filter code=%,$(subst $(comma), ,$(NVCC_GENCODE))))
endif
LIB_OBJ  += $(B)/obj/cuda_code.o
PC_LIBS_PRIVATE := -ldl -lrt -lpthread -lstdc++ -lm
# tests that reach the driver table (tests/unit/test_lifecycle.c: GPU memory) need its headers
CFLAGS_TEST := -I$(CUDA_HOME)/include
else
LIB_OBJ  := $(LIB_C:%.c=$(B)/obj/%.o)
PC_LIBS_PRIVATE := -lm -lpthread
endif

TOOL_COMMON := $(sort $(filter-out tools/j2kc.c tools/j2kc_check.c tools/profcheck.c,$(wildcard tools/*.c)))
TOOL_COMMON_OBJ := $(TOOL_COMMON:%.c=$(B)/obj/%.o)
TESTS_C  := $(sort $(wildcard tests/unit/test_*.c))
TESTS_BIN := $(TESTS_C:tests/unit/%.c=$(B)/tests/%)

all: $(B)/lib/libj2kcuda.a $(B)/lib/libj2kcuda.so $(B)/lib/pkgconfig/j2kcuda.pc \
     $(B)/bin/j2kc $(B)/bin/j2kc-check

config.mak:
	./configure

$(B)/obj/%.o: %.c config.mak $(LIB_H) j2kcuda/include/j2kcuda.h $(wildcard tools/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_J) -Itools -c $< -o $@

$(B)/obj/%.o: %.cu config.mak $(LIB_H) j2kcuda/include/j2kcuda.h
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS_CU) -x c++ -c $< -o $@

$(B)/obj/%.fatbin: %.cu config.mak $(LIB_H) $(wildcard j2kcuda/src/cuda/*.cuh)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVFLAGS) -fatbin -o $@ $<

$(B)/obj/%.ptx: %.cu config.mak $(LIB_H) $(wildcard j2kcuda/src/cuda/*.cuh) $(wildcard j2kcuda/compat/cuda/*.h)
	@mkdir -p $(dir $@)
	$(CLANG_CUDA) $(CLANG_CUDA_FLAGS) -o $@ $<

# the kernels' images alone (tests/clang-cuda.sh)
kernel-images: $(KERN_IMG)

$(B)/obj/cuda_code.S: $(KERN_IMG) tools/embed-fatbin.sh
	@mkdir -p $(dir $@)
	sh tools/embed-fatbin.sh $@ $(KERN_IMG)

$(B)/obj/cuda_code.o: $(B)/obj/cuda_code.S
	$(CC) -c -o $@ $<

# the code built, named in cu_code.cu's messages
$(B)/obj/j2kcuda/src/cuda/cu_code.o: CXXFLAGS_CU += -DJ2KI_CODE_ARCHS='"$(CODE_ARCHS)"'

$(B)/lib/libj2kcuda.a: $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(B)/lib/libj2kcuda.so: $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libj2kcuda.so.0 -Wl,--no-undefined -o $@ $^ $(LDFLAGS_J) $(LIBS_J)
	ln -sf libj2kcuda.so $(B)/lib/libj2kcuda.so.0

$(B)/lib/pkgconfig/j2kcuda.pc: config.mak Makefile
	@mkdir -p $(dir $@)
	printf 'prefix=%s\nlibdir=%s\nincludedir=%s\n\nName: j2kcuda\nDescription: JPEG 2000 encoder for NVIDIA GPUs\nVersion: 0.1.0\nLibs: -L$${libdir} -lj2kcuda\nLibs.private: %s\nCflags: -I$${includedir}\n' \
	  "$(abspath $(B))" "$(abspath $(B))/lib" "$(abspath j2kcuda/include)" "$(PC_LIBS_PRIVATE)" > $@

$(B)/bin/j2kc: $(B)/obj/tools/j2kc.o $(TOOL_COMMON_OBJ) $(B)/lib/libj2kcuda.a
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(LDFLAGS_J) $(LIBS_J)

$(B)/bin/j2kc-check: $(B)/obj/tools/j2kc_check.o $(B)/obj/tools/profcheck.o $(TOOL_COMMON_OBJ)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(LDFLAGS_J) -lm

$(B)/tests/%: tests/unit/%.c $(B)/lib/libj2kcuda.a tests/unit/test.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_J) $(CFLAGS_TEST) -Itests/unit -o $@ $< $(B)/lib/libj2kcuda.a $(LDFLAGS_J) $(LIBS_J)

unit-tests: $(TESTS_BIN)

# ---- tests ---------------------------------------------------------------------------
check-deps:
	@tests/install-deps.sh

# The sanitizer build (AddressSanitizer + UndefinedBehaviorSanitizer, reference backend) sits
# beside the main one; run-all.sh runs its unit tests and the bad-input tests too.
SAN_B := $(B)-san

check: check-deps all unit-tests
	tools/ffmpeg-build.sh $(B)
	$(MAKE) B=$(SAN_B) SANITIZE=1 HAVE_CUDA=0 $(SAN_B)/bin/j2kc $(SAN_B)/bin/j2kc-check unit-tests
	tests/run-all.sh $(B) $(SAN_B)

# the long runs (tests/longrun.sh): 10,000 frames through ffmpeg, 1,000 create/free cycles
check-long: all unit-tests
	tools/ffmpeg-build.sh $(B)
	J2KC_TEST_LONG=1 tests/longrun.sh $(B)

check-cuda: all
	tests/check-cuda.sh $(B)

# the J2KI_T1_CUDA_PAR kernels run on the host, warps as threads (tests/t1p_emu.cc; no GPU)
check-t1p-emu: config.mak
	@mkdir -p $(B)/tests
	$(CXX) -std=c++20 -O1 -pthread -ffp-contract=off -Ij2kcuda/include -Ij2kcuda/src -I$(CUDA_HOME)/include \
	    -o $(B)/tests/t1p_emu tests/t1p_emu.cc -lm
	$(B)/tests/t1p_emu

# the CUDA DWT kernels run on the host, threads as threads (tests/dwt_emu.cc; no GPU)
check-dwt-emu: config.mak
	@mkdir -p $(B)/tests
	$(CC) -std=c99 -O1 -ffp-contract=off -Ij2kcuda/include -Ij2kcuda/src -c j2kcuda/src/ref/dwt_ref.c -o $(B)/tests/dwt_ref_emu.o
	$(CXX) -std=c++20 -O1 -pthread -ffp-contract=off -Ij2kcuda/include -Ij2kcuda/src -I$(CUDA_HOME)/include \
	    -o $(B)/tests/dwt_emu tests/dwt_emu.cc $(B)/tests/dwt_ref_emu.o -lm
	$(B)/tests/dwt_emu

# the CUDA tier-2, rate control and HT coder run on the host against the reference writer,
# rc_ref.c and ht_plane.c / ht_ref.c (tests/t2_emu.cc, tests/rc_emu.cc, tests/ht_emu.cc; no
# GPU), linked with these host sources (j2kcuda/src/...); no contraction on either side, as
# the library's builds (the HT plane chooser's doubles must round alike)
EMU_C = core/plan ref/quant_ref ref/dwt_ref ref/mct_ref ref/t2_ref core/markers hd/tgt ref/rc_ref core/threadpool \
        core/hooks ref/ht_plane ref/ht_ref
emu-objs: config.mak
	@mkdir -p $(B)/tests/emu_obj
	@for f in $(EMU_C); do $(CC) -std=c99 -O1 -ffp-contract=off -Ij2kcuda/include -Ij2kcuda/src -c j2kcuda/src/$$f.c \
	    -o $(B)/tests/emu_obj/$$(basename $$f).o || exit 1; done
check-t2-emu check-rc-emu check-ht-emu: check-%-emu: emu-objs
	$(CXX) -std=c++20 -O1 -pthread -ffp-contract=off -Ij2kcuda/include -Ij2kcuda/src -I$(CUDA_HOME)/include \
	    -o $(B)/tests/$*_emu tests/$*_emu.cc $(patsubst %,$(B)/tests/emu_obj/%.o,$(notdir $(EMU_C))) -lm
	$(B)/tests/$*_emu
	@if [ $* = rc ]; then for n in 32 3; do echo "J2KC_RC_PROBES=$$n:"; \
	    J2KC_RC_PROBES=$$n $(B)/tests/rc_emu || exit 1; done; fi

bench: all
	bench/run.sh $(B)

ffmpeg: all
	tools/ffmpeg-build.sh $(B)

demo:
	tools/demo.sh $(B)

install: all
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/bin
	install -m 644 $(B)/lib/libj2kcuda.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(B)/lib/libj2kcuda.so $(DESTDIR)$(PREFIX)/lib/libj2kcuda.so.0
	ln -sf libj2kcuda.so.0 $(DESTDIR)$(PREFIX)/lib/libj2kcuda.so
	install -m 644 j2kcuda/include/j2kcuda.h $(DESTDIR)$(PREFIX)/include/
	install -m 755 $(B)/bin/j2kc $(B)/bin/j2kc-check $(DESTDIR)$(PREFIX)/bin/
	printf 'prefix=%s\nlibdir=$${prefix}/lib\nincludedir=$${prefix}/include\n\nName: j2kcuda\nDescription: JPEG 2000 encoder for NVIDIA GPUs\nVersion: 0.1.0\nLibs: -L$${libdir} -lj2kcuda\nLibs.private: %s\nCflags: -I$${includedir}\n' \
	  "$(PREFIX)" "$(PC_LIBS_PRIVATE)" > $(DESTDIR)$(PREFIX)/lib/pkgconfig/j2kcuda.pc

include tests/fuzz/fuzz.mk

clean:
	rm -rf $(B)

distclean: clean
	rm -f config.mak

.PHONY: all kernel-images check check-long check-deps check-cuda check-t1p-emu check-dwt-emu check-t2-emu check-rc-emu emu-objs bench ffmpeg demo install clean distclean unit-tests
.SECONDARY:
