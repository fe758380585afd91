# Shared shell helpers of the test scripts (sourced, not run).
# Result lines follow one protocol that tests/run-all.sh counts:
#   "ok NAME [details]", "FAIL NAME: reason", "skip NAME: reason".

TESTS_DIR=$(cd "$(dirname "$0")" && pwd)
REPO_DIR=$(cd "$TESTS_DIR/.." && pwd)

t_ok()   { echo "ok $1${2:+ ($2)}"; }
t_fail() { echo "FAIL $1: $2"; T_FAILED=$((${T_FAILED:-0} + 1)); }
t_skip() { echo "skip $1: $2"; }

# Absolute path of the build directory given as $1 (default build).
t_build_dir() {
    local b=${1:-build}
    case "$b" in /*) ;; *) b="$REPO_DIR/$b" ;; esac
    echo "$b"
}

# Builds the test helpers (gen, cmp, mutate) into $BUILD/testtools when missing or stale.
t_build_helpers() {
    local out="$1/testtools" cc=${CC:-cc} src
    mkdir -p "$out" || return 1
    for src in gen cmp mutate; do
        [ -f "$REPO_DIR/tests/gen/$src.c" ] || continue
        if [ ! -x "$out/$src" ] || [ "$REPO_DIR/tests/gen/$src.c" -nt "$out/$src" ] ||
           [ "$REPO_DIR/tools/imageio.c" -nt "$out/$src" ]; then
            $cc -std=c99 -D_POSIX_C_SOURCE=200809L -O2 -Wall -I"$REPO_DIR/tools" \
                -I"$REPO_DIR/j2kcuda/include" -o "$out/$src" "$REPO_DIR/tests/gen/$src.c" \
                "$REPO_DIR/tools/imageio.c" -lm || return 1
        fi
    done
}

# Whether an exit status means a crash (signal, or a sanitizer's abort).
t_crashed() { [ "$1" -ge 128 ]; }

t_have() { command -v "$1" >/dev/null 2>&1; }

# Path of the shared corpus relative to the repository (absent on other machines);
# J2KC_CORPUS overrides it (J2KC_CORPUS=/nonexistent tests the fallbacks).
t_corpus() { echo "${J2KC_CORPUS:-$REPO_DIR/../shared/corpus}"; }
