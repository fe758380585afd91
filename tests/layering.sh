#!/bin/bash
# The library's layers (doc/architecture.md), checked on the include lines of j2kcuda/src:
#   core/  API, parameters, plan, log, markers, codestream finish: may include hd/; reaches
#          the stages only through core/backend.h (which names ref/'s rate control and tier-2)
#   hd/    host/device maths: includes only hd/ and the data model (core/j2ki.h, core/plan.h)
#   ref/   reference stages: never cuda/
#   cuda/  CUDA backend and kernels: anything below it
# and, inside cuda/ (issue 31): every kernel is an extern "C" __global__ entry in a device-only
# file (*_kern.cu: no runtime or CUB call, none of the host modules' headers), listed once in
# cuda/kernels.def and launched through the launch module only (no <<< >>> in the library); the
# host files make no CUDA runtime call (the driver table of cu_driver.h only);
# plus: every include names its folder; no include cycle (tsort on the include graph); only
# public j2kc_* functions are defined in core/encoder.c, so no file needs it to log; the library
# never changes the process environment (no setenv/putenv/unsetenv); launches are typed
# (j2ki_launch: a wrong parameter struct does not compile).
#   tests/layering.sh [BUILD_DIR]   (BUILD_DIR unused: the check reads the sources only)
. "$(dirname "$0")/gen/common.sh"
SRC="$REPO_DIR/j2kcuda/src"
cd "$SRC" || { t_fail layering "no j2kcuda/src"; exit 1; }

# includes FILE: the quoted include names of FILE, one per line
includes() { sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$1"; }

files=$(ls core/* hd/* ref/* cuda/* 2>/dev/null)
[ -n "$files" ] || { t_fail layering "no sources under core/ hd/ ref/ cuda/"; exit 1; }
stray=$(ls ./*.c ./*.h ./*.cu ./*.cuh 2>/dev/null)
if [ -n "$stray" ]; then t_fail layering/folders "sources outside the layer folders: $stray"
else t_ok layering/folders "$(echo "$files" | wc -l) files in core/ hd/ ref/ cuda/"; fi

# rule NAME GLOB ALLOWED_REGEX: every include of the files in GLOB matches ALLOWED_REGEX
rule() {
    local name=$1 glob=$2 allowed=$3 f inc bad=
    for f in $glob; do
        for inc in $(includes "$f"); do
            echo "$inc" | grep -Eq "$allowed" || bad="$bad $f->$inc"
        done
    done
    if [ -n "$bad" ]; then t_fail "layering/$name" "$bad"; else t_ok "layering/$name"; fi
}
rule folder-named "core/* hd/* ref/* cuda/*" \
    '^(j2kcuda\.h|(core|hd|ref|cuda)/[A-Za-z0-9_]+\.(h|cuh)|cuda/kernels\.def)$'
rule hd "hd/*" '^(hd/|core/j2ki\.h$|core/plan\.h$)'
rule ref "ref/*" '^(j2kcuda\.h|core/|hd/|ref/)'
rule core "$(ls core/* | grep -v '^core/backend\.h$')" '^(j2kcuda\.h|core/|hd/)'
rule core-backend core/backend.h '^(j2kcuda\.h|core/|hd/|ref/)'

# the kernels (issue 31): entries only in the device-only *_kern.cu, each listed in kernels.def
kern=$(ls cuda/*_kern.cu 2>/dev/null)
hostcu=$(ls cuda/*.cu | grep -v '_kern\.cu$')
bad=$(grep -lE '__global__|<<<' $hostcu; grep -l '<<<' $kern)
if [ -n "$bad" ]; then t_fail layering/kernels-apart "a kernel or <<< >>> outside the *_kern.cu entries: $bad"
else t_ok layering/kernels-apart "$(echo "$kern" | wc -w) kernel files"; fi
bad=$(grep -nE '\bcuda[A-Z][A-Za-z]*[[:space:]]*\(|cub::Device|J2KI_CUDA\(' $kern;
      for f in $kern; do includes "$f" | grep -E 'cuda/(backend_cuda|cuda_util|cuda_launch)\.h' | sed "s|^|$f->|"; done)
if [ -n "$bad" ]; then t_fail layering/kernels-device-only "$(echo "$bad" | tr '\n' ' ')"
else t_ok layering/kernels-device-only; fi
# the host files talk to the GPU through the driver table only (cu_driver.h): no CUDA runtime
# call or header, no <<< >>>, so that they build as plain C++ and link no CUDA library
bad=$(grep -nE '\bcuda[A-Z][A-Za-z]*[[:space:]]*\(|#[[:space:]]*include[[:space:]]*<cuda_runtime' $hostcu cuda/*.h |
      grep -vE '^[^:]+:[0-9]+:[[:space:]]*(\*|/\*|//)')
if [ -n "$bad" ]; then t_fail layering/host-no-runtime "$(echo "$bad" | head -n 5 | tr '\n' ' ')"
else t_ok layering/host-no-runtime "$(echo "$hostcu" | wc -w) host files"; fi
listed=$(sed -n 's/^J2KI_KERNEL([^,]*,[[:space:]]*\([A-Za-z0-9_]*\),.*/\1/p' cuda/kernels.def | sort)
defined=$(cat $kern | tr '\n' ' ' |
          grep -oE 'extern "C" __global__ void( __launch_bounds__\([^)]*\))?[[:space:]]+[A-Za-z0-9_]+\(' |
          sed 's/($//; s/.*[[:space:]]//' | sort)
if [ -n "$listed" ] && [ "$listed" = "$defined" ]; then t_ok layering/kernels-listed "$(echo "$listed" | wc -l) entries"
else t_fail layering/kernels-listed "kernels.def and the *_kern.cu entries differ:\
 $(diff <(echo "$listed") <(echo "$defined") | grep '^[<>]' | tr '\n' ' ')"; fi

# typed launches (cuda_launch.h): the call sites launch through j2ki_launch, whose kernel id
# carries its kernels.def parameter struct, never through the untyped j2ki_cuda_launch; and
# a launch with another kernel's struct, or a choice between kernels of different structs,
# does not compile while the right one does (g++ -fsyntax-only on the CUDA headers)
bad=$(grep -nE '\bj2ki_cuda_launch[[:space:]]*\(' $(ls cuda/*.cu cuda/*.cuh cuda/*.h | grep -v '^cuda/cuda_launch\.') |
      grep -vE '^[^:]+:[0-9]+:[[:space:]]*(\*|/\*|//)')
if [ -n "$bad" ]; then t_fail layering/launch-typed "untyped launches: $(echo "$bad" | head -n 5 | tr '\n' ' ')"
else t_ok layering/launch-typed "no j2ki_cuda_launch outside the launch module"; fi
CUINC=${CUDA_HOME:-/usr/local/cuda}/include
if [ ! -f "$CUINC/cuda.h" ] || ! command -v "${CXX:-g++}" > /dev/null; then
    t_skip layering/launch-types "no C++ compiler or no CUDA headers ($CUINC/cuda.h)"
else
    # tc ARG: compiles a launch of J2KI_K_QUANT (a J2kiQuantParams kernel) with ARG
    tc() {
        printf '%s\n' '#include "cuda/cuda_launch.h"' '#include "cuda/quant_kern.h"' '#include "cuda/dwt_kern.h"' \
            'CUresult f(CUstream st, int c);' \
            'CUresult f(CUstream st, int c) { J2kiQuantParams q = {}; J2kiDwtParams d = {}; (void)q; (void)d;' \
            "    return $1; }" |
            "${CXX:-g++}" -std=c++17 -fsyntax-only -I. -I../include -I"$CUINC" -x c++ - 2>/dev/null
    }
    Q='j2ki_kernel<J2KI_K_QUANT>'
    if ! tc "j2ki_launch($Q, 1, 1, 0, st, q)"; then
        t_fail layering/launch-types "a launch with the kernel's own struct does not compile"
    elif ! tc "j2ki_launch(c ? $Q : j2ki_kernel<J2KI_K_QUANT_HIST>, 1, 1, 0, st, q)"; then
        t_fail layering/launch-types "a choice between kernels of one struct does not compile"
    elif tc "j2ki_launch($Q, 1, 1, 0, st, d)"; then
        t_fail layering/launch-types "a launch with another kernel's struct compiles"
    elif tc "j2ki_launch(c ? $Q : j2ki_kernel<J2KI_K_DWT53_VER>, 1, 1, 0, st, q)"; then
        t_fail layering/launch-types "a choice between kernels of different structs compiles"
    elif tc "j2ki_launch($Q, 1, 1, 0, st, &q)"; then
        t_fail layering/launch-types "a launch with a pointer to the struct compiles"
    else
        t_ok layering/launch-types "the right struct compiles; another's, a mixed choice or a pointer does not"
    fi
fi

# no include cycle: every edge "includer included" to tsort, which reports a loop
edges=$(for f in $files; do for inc in $(includes "$f"); do
            [ -f "$inc" ] && echo "$f $inc"; done; done)
if loop=$(echo "$edges" | tsort 2>&1 >/dev/null) && [ -z "$loop" ]; then
    t_ok layering/acyclic "$(echo "$edges" | wc -l) include edges"
else
    t_fail layering/acyclic "$(echo "$loop" | tr '\n' ' ')"
fi

# encoder.c defines the public API only: the rest of the library links without it
defs=$(grep -E '^(static )?[A-Za-z_][A-Za-z0-9_ *]*\bj2ki_[a-z0-9_]+\(' core/encoder.c | grep -v '^static' | tr '\n' ' ')
if [ -n "$defs" ]; then t_fail layering/encoder-api "core/encoder.c defines internal functions: $defs"
elif ! grep -q '^void j2ki_log(' core/log.c; then t_fail layering/log "j2ki_log is not defined in core/log.c"
else t_ok layering/log "j2ki_log in core/log.c; core/encoder.c defines only j2kc_* functions"; fi

# the library reads the environment, never writes it (applications set CUDA_DEVICE_MAX_CONNECTIONS)
env=$(grep -nE '\b(setenv|putenv|unsetenv)[[:space:]]*\(' $files)
if [ -n "$env" ]; then t_fail layering/no-setenv "$env"; else t_ok layering/no-setenv; fi
exit $((${T_FAILED:-0} ? 1 : 0))
