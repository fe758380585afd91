#!/bin/bash
# bench/ncu-frame.sh J2KBENCH FRAME "key=value ..." [KERNEL_REGEX]: Nsight Compute over one
# frame encoded alone (async_depth=1, no warm-up), every kernel (or those matching the regex)
# with its duration and warp instructions; prints them in launch order and summed by kernel
# name. ncu serialises the kernels, so the durations are of each kernel alone.
# Needs ncu (Nsight Compute, part of the CUDA toolkit) on the PATH.
set -u
JB=${1:?usage: bench/ncu-frame.sh J2KBENCH FRAME "params" [REGEX]}
FRAME=$2
PARAMS=$3
RX=${4:-.}
p=()
for kv in $PARAMS async_depth=1 backend=cuda; do p+=(-p "$kv"); done
csv=$(mktemp)
ncu --csv --print-units base --kernel-name "regex:$RX" --metrics gpu__time_duration.sum,smsp__inst_executed.sum \
    "$JB" -i "$FRAME" "${p[@]}" -w 0 -l 1 -n 0 > "$csv" 2> "$csv.err" ||
    { tail -n 5 "$csv.err"; tail -n 5 "$csv"; rm -f "$csv" "$csv.err"; exit 1; }
python3 - "$csv" <<'EOF'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
hdr = rows[0]; rows = rows[1:]
ki = hdr.index('Kernel Name'); mi = hdr.index('Metric Name'); vi = hdr.index('Metric Value'); ii = hdr.index('ID')
kern = collections.OrderedDict()
for r in rows:
    k = kern.setdefault(r[ii], {'name': r[ki].split('(')[0]})
    v = float(r[vi].replace(',', ''))
    if r[mi] == 'gpu__time_duration.sum':
        k['ms'] = v / 1e6   # ns
    else:
        k['inst'] = v
tot = collections.OrderedDict()
for i, k in kern.items():
    t = tot.setdefault(k['name'], [0, 0.0, 0.0])
    t[0] += 1; t[1] += k.get('ms', 0); t[2] += k.get('inst', 0)
print('launch order (ms, million warp instructions):')
print('  ' + '; '.join('%s %.3f/%.1f' % (k['name'][:24], k.get('ms', 0), k.get('inst', 0) / 1e6) for k in kern.values()))
print('| kernel | launches | ms | million warp instructions |')
print('|---|---:|---:|---:|')
for n, t in sorted(tot.items(), key=lambda x: -x[1][1]):
    print('| %s | %d | %.3f | %.1f |' % (n, t[0], t[1], t[2] / 1e6))
print('| all | %d | %.3f | %.1f |' % (sum(t[0] for t in tot.values()), sum(t[1] for t in tot.values()),
                                       sum(t[2] for t in tot.values()) / 1e6))
EOF
rm -f "$csv" "$csv.err"
