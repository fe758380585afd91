#!/bin/bash
# The clang build of the kernels (./configure --cuda-compiler=clang; doc/ffmpeg.md), checked
# without a GPU: every device-only file (j2kcuda/src/cuda, *_kern.cu) compiled to PTX by the
# Makefile's own rule (make kernel-images), then
#   clang-cuda/entries       every kernel of cuda/kernels.def is an entry of the PTX
#   clang-cuda/self-contained no call left to resolve (.extern .func: a libdevice or host
#                            function), the PTX ISA and target the Makefile names
#   clang-cuda/no-sdk        the headers clang read: none of NVIDIA's SDK but CCCL's (clang -H)
#   clang-cuda/fp-contract   no fused multiply-add in the DWT (-ffp-contract=off, as nvcc's
#                            --fmad=false: the 9/7 DWT is bit-exact with the reference)
#   clang-cuda/fp-contract-ht  nor in the HT coder's doubles (its plane choice is ref's)
#   clang-cuda/embed         tools/embed-fatbin.sh: each PTX image is NUL-terminated text of its
#                            file's length, as cuLibraryLoadData reads it
#   clang-cuda/ldexp         compat/cuda's ldexp (device code) against the C library's
#   clang-cuda/ptxas         NVIDIA's ptxas (only to check; skipped without it) accepts the PTX
#                            for sm_90
# Needs clang 19 or newer and CCCL 3's headers; skips with the reason otherwise. The PTX is for
# sm_75, the default build's oldest architecture.
#   tests/clang-cuda.sh [BUILD_DIR]   (environment: CLANG_CUDA, CCCL_PATH override the search)
. "$(dirname "$0")/gen/common.sh"
BUILD=$(t_build_dir "$1")
W="$BUILD/clang-cuda"
cd "$REPO_DIR" || exit 1
cfg() { [ -f config.mak ] && sed -n "s/^$1=//p" config.mak; }
PTX_ARCH=75
PTX_ISA=$(sed -n 's/^CLANG_PTX_ISA *:= *//p' Makefile)

clang=${CLANG_CUDA:-$(cfg CLANG_CUDA)}
if [ -z "$clang" ]; then
    for c in clang++-22 clang++-21 clang++-20 clang++-19 clang++; do
        if t_have "$c" && [ "$("$c" -dumpversion 2>/dev/null | cut -d. -f1)" -ge 19 ] 2>/dev/null; then
            clang=$(command -v "$c"); break
        fi
    done
fi
if [ -z "$clang" ]; then
    t_skip clang-cuda "no clang 19 or newer (apt-get install clang-19)"; exit 0
fi
cuda_home=$(cfg CUDA_HOME)
cccl=${CCCL_PATH:-$(cfg CCCL_PATH)}
if [ -z "$cccl" ]; then
    for c in ${cuda_home:+"$cuda_home/include/cccl"} /usr/local/cuda/include/cccl; do
        [ -f "$c/cub/block/block_scan.cuh" ] && { cccl=$c; break; }
    done
fi
if [ -z "$cccl" ] || [ ! -f "$cccl/cub/block/block_scan.cuh" ]; then
    t_skip clang-cuda "no CCCL headers (cub/, cuda/std/: CCCL_PATH, or a CUDA toolkit's include/cccl)"
    exit 0
fi
echo "clang-cuda: $clang ($("$clang" -dumpversion)), CCCL $cccl, PTX for sm_$PTX_ARCH"

rm -rf "$W"
mkdir -p "$W"
mk=(make -s B="$W" HAVE_CUDA=1 CUDA_CC=clang CLANG_CUDA="$clang" CCCL_PATH="$cccl" PTX_ARCH=$PTX_ARCH)
if ! "${mk[@]}" kernel-images > "$W/build.log" 2>&1; then
    t_fail clang-cuda/build "make kernel-images failed (log: $W/build.log)"
    grep -m 10 'error' "$W/build.log" | sed 's/^/    /'
    exit 1
fi
kern=$(ls j2kcuda/src/cuda/*_kern.cu)
ptx=$(for k in $kern; do echo "$W/obj/${k%.cu}.ptx"; done)
t_ok clang-cuda/build "$(echo "$kern" | wc -l) files, $(cat $ptx | wc -c) bytes of PTX"

missing=
for e in $(sed -n 's/^J2KI_KERNEL([A-Za-z0-9_]*, *\([A-Za-z0-9_]*\),.*/\1/p' j2kcuda/src/cuda/kernels.def); do
    # shellcheck disable=SC2086
    grep -q "^\.visible \.entry $e(" $ptx || missing="$missing $e"
done
n=$(grep -c '^J2KI_KERNEL(' j2kcuda/src/cuda/kernels.def)
if [ -n "$missing" ]; then t_fail clang-cuda/entries "not in the PTX:$missing"
else t_ok clang-cuda/entries "all $n kernels of kernels.def"; fi

want_ver=".version ${PTX_ISA%?}.${PTX_ISA#?}"
bad=
for p in $ptx; do
    ext=$(grep '^\.extern \.func' "$p" | head -3)
    [ -n "$ext" ] && bad="$bad $(basename "$p"): $ext;"
    grep -qx "$want_ver" "$p" || bad="$bad $(basename "$p"): not $want_ver;"
    grep -qx ".target sm_$PTX_ARCH" "$p" || bad="$bad $(basename "$p"): not .target sm_$PTX_ARCH;"
done
if [ -n "$bad" ]; then t_fail clang-cuda/self-contained "$bad"
else t_ok clang-cuda/self-contained "no .extern .func; $want_ver, sm_$PTX_ARCH"; fi

# the headers each file reads (clang -H, the Makefile's flags; the pre-included header named
# by a file that includes it and the kernel file, since -H leaves -include's tree out), but
# for the repository's, CCCL's, the compiler's own and the C/C++ library's
flags=$("${mk[@]}" -p -n kernel-images 2>/dev/null | sed -n 's/^CLANG_CUDA_FLAGS := //p' | head -1)
flags=${flags/-include j2ki_clang_cuda.h/}
resdir=$("$clang" -print-resource-dir)
sdk=
for k in $kern; do
    printf '#include "j2ki_clang_cuda.h"\n#include "%s"\n' "$REPO_DIR/$k" > "$W/hdr.cu"
    # shellcheck disable=SC2086
    hdrs=$("$clang" $flags -Wno-unused-command-line-argument -fsyntax-only -H "$W/hdr.cu" 2>&1 >/dev/null | sed -n 's/^\.\+ //p')
    other=$(echo "$hdrs" | grep -v -e "^$REPO_DIR/" -e '^j2kcuda/' -e "^$cccl/" -e "^$resdir/" \
                                   -e '^/usr/include/' -e '^/usr/lib/gcc/' | sort -u)
    [ -n "$other" ] && sdk="$sdk $(basename "$k"): $(echo $other);"
    echo "$hdrs" | grep -q "compat/cuda/j2ki_clang_cuda.h" || sdk="$sdk $(basename "$k"): compat header not read;"
done
if [ -n "$sdk" ]; then t_fail clang-cuda/no-sdk "headers outside the repository, CCCL and the compilers':$sdk"
else t_ok clang-cuda/no-sdk "only the repository's, CCCL's, clang's and the C/C++ library's headers"; fi

dwt=$W/obj/j2kcuda/src/cuda/dwt_kern.ptx
nf=$(grep -c 'fma\.' "$dwt" 2>/dev/null)
nm=$(grep -c 'mul\.\(rn\.\)\?f32' "$dwt" 2>/dev/null)
if [ ! -s "$dwt" ]; then t_fail clang-cuda/fp-contract "no dwt_kern.ptx to check"
elif [ "$nf" -ne 0 ]; then t_fail clang-cuda/fp-contract "$nf fma instructions in dwt_kern.ptx"
elif [ "$nm" -eq 0 ]; then t_fail clang-cuda/fp-contract "no f32 multiply in dwt_kern.ptx (the 9/7 lifting?)"
else t_ok clang-cuda/fp-contract "dwt_kern.ptx: $nm f32 multiplies, no fma"; fi
# the HT plane chooser's distortions and slopes (doubles) must not be contracted either: its
# choices equal the reference's only with the same roundings (hd/ht_plane.h)
ht=$W/obj/j2kcuda/src/cuda/ht_kern.ptx
nf=$(grep -c 'fma\.' "$ht" 2>/dev/null)
nm=$(grep -c 'mul\.\(rn\.\)\?f64' "$ht" 2>/dev/null)
if [ ! -s "$ht" ]; then t_fail clang-cuda/fp-contract-ht "no ht_kern.ptx to check"
elif [ "$nf" -ne 0 ]; then t_fail clang-cuda/fp-contract-ht "$nf fma instructions in ht_kern.ptx"
elif [ "$nm" -eq 0 ]; then t_fail clang-cuda/fp-contract-ht "no f64 multiply in ht_kern.ptx (the distortions?)"
else t_ok clang-cuda/fp-contract-ht "ht_kern.ptx: $nm f64 multiplies, no fma"; fi

# the images as the library embeds them: each one's C string is exactly its file
# shellcheck disable=SC2086
if sh tools/embed-fatbin.sh "$W/images.S" $ptx && cc -c -o "$W/images.o" "$W/images.S" &&
   printf '%s\n' '#include <stdio.h>' '#include <string.h>' \
       'extern const void *const j2ki_cuda_images[];' \
       'int main(void) { for (int i = 0; j2ki_cuda_images[i]; i++)' \
       '    printf("%zu\n", strlen((const char *)j2ki_cuda_images[i])); return 0; }' > "$W/images.c" &&
   cc -std=c99 -o "$W/images" "$W/images.c" "$W/images.o"; then
    got=$("$W/images" | tr '\n' ' ')
    want=$(for p in $ptx; do printf '%s ' "$(wc -c < "$p")"; done)
    if [ "$got" = "$want" ]; then t_ok clang-cuda/embed "$(echo "$ptx" | wc -l) NUL-terminated PTX images"
    else t_fail clang-cuda/embed "image string lengths $got, files $want"; fi
else
    t_fail clang-cuda/embed "tools/embed-fatbin.sh output does not assemble or link"
fi

# compat/cuda's ldexp, on random doubles (every class: zeros, subnormals, infinities) and
# exponents that overflow and underflow, against the C library's, bit for bit
seed=${J2KC_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
cat > "$W/ldexp.cu" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    unsigned long long st = strtoull(argv[1], NULL, 10) * 2654435761ull + 1, n = 0, bad = 0;
    for (int i = 0; i < 1000000; i++) {
        st ^= st << 13; st ^= st >> 7; st ^= st << 17;
        double x = __builtin_bit_cast(double, st);
        int e = (int)((st >> 20) % 4400) - 2200;
        if (x != x)
            continue;
        double a = j2ki_ldexp(x, e), b = ldexp(x, e);
        n++;
        if (__builtin_bit_cast(unsigned long long, a) != __builtin_bit_cast(unsigned long long, b)
            && bad++ < 3)
            printf("ldexp(%a, %d): %a, C library %a\n", x, e, a, b);
    }
    printf("%llu of %llu differ\n", bad, n);
    return bad != 0;
}
EOF
if "$clang" -x cuda --cuda-host-only -nocudainc -nocudalib --cuda-path=/nonexistent \
       -Wno-unknown-cuda-version -DJ2KI_CLANG_CUDA_VERSION=12000 -Ij2kcuda/compat/cuda \
       -include j2ki_clang_cuda.h -O2 -ffp-contract=off -c -o "$W/ldexp.o" "$W/ldexp.cu" &&
   "$clang" -o "$W/ldexp" "$W/ldexp.o" -lm; then
    if out=$("$W/ldexp" "$seed"); then t_ok clang-cuda/ldexp "seed $seed: $out"
    else t_fail clang-cuda/ldexp "seed $seed: $out"; fi
else
    t_fail clang-cuda/ldexp "the host check does not build"
fi

ptxas=
for c in ${cuda_home:+"$cuda_home/bin/ptxas"} ptxas /usr/local/cuda/bin/ptxas; do
    t_have "$c" && { ptxas=$c; break; }
done
if [ -z "$ptxas" ]; then
    t_skip clang-cuda/ptxas "no ptxas (NVIDIA's SDK tool, only used to check the PTX)"
else
    bad=
    for p in $ptx; do
        "$ptxas" -arch=sm_90 -o "$W/$(basename "$p" .ptx).cubin" "$p" > "$W/ptxas.log" 2>&1 ||
            bad="$bad $(basename "$p"): $(head -c 200 "$W/ptxas.log");"
    done
    if [ -n "$bad" ]; then t_fail clang-cuda/ptxas "$bad"
    else t_ok clang-cuda/ptxas "$("$ptxas" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p') accepts all for sm_90"; fi
fi
[ "${T_FAILED:-0}" -eq 0 ]
