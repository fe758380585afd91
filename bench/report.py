#!/usr/bin/env python3
"""Markdown report of bench/run.sh: one table per frame, the stage tables, then the targets.

Usage: report.py results.tsv cases.tsv [classes.tsv]   (standard library only)
results.tsv rows: case encoder mode fps latency_ms bytes psnr notes ('-' = none)
classes.tsv rows: bench/classes.sh
"""
import re
import sys


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def fmt(v, digits=1):
    return "-" if v is None else f"{v:.{digits}f}"


# the targets for the content classes (issue 26, point 2)
RECODE_MAX = 1 / 20        # frames coded twice, at most, over the classes at a budget
RECODE_COST_MAX = 0.10     # or: throughput lost against coding each frame once (qstep_try=0)
PSNR_LOSS_MAX = 0.02       # dB below the full-rate steps with every pass coded


def classes_table(path):
    """The content classes' table and their targets (classes.tsv of bench/classes.sh)."""
    try:
        rows = [l.rstrip("\n").split("\t") for l in open(path) if l.strip()]
    except OSError:
        return []
    if not rows:
        return []
    out = ["## Content classes\n",
           "Each class a sequence of distinct frames (bench/classes.py); 'coded twice': frames of the "
           "sequence that qstep_try coded again (J2kcStats.nb_recoded), each frame coded once alone; "
           "'vs full-rate': mean PSNR against qstep_rate=0 t1_stop=0; 'once fps': qstep_try=0.\n",
           "| class | budget | code-blocks | backend | fps | once fps | latency ms (slowest) | PSNR dB mean (min) "
           "| vs full-rate dB | mean bytes | coded twice | verdict |",
           "|---|---|---|---|---:|---:|---:|---:|---:|---:|---|---|"]
    tot = {}
    for r in rows:
        r += ["-"] * (18 - len(r))
        cls, budget, cb, be, fps, lat, latmax, pm, pmin, by, rec, nfr, lrec, lfr, pfull, fps1, recl, note = r[:18]
        why = []
        rec_n, nfr_n = num(rec), num(nfr)
        if rec_n is None or not nfr_n:
            why.append(note if note.startswith("missed") else "missed: not measured")
        else:
            t = tot.setdefault(budget, [0, 0])
            t[0] += rec_n
            t[1] += nfr_n
            if rec_n / nfr_n > RECODE_MAX:
                f, f1 = num(fps), num(fps1)
                if f and f1:
                    cost = 1 - f / f1
                    if cost > RECODE_COST_MAX:
                        why.append(f"missed: {rec}/{nfr} coded twice, {cost * 100:.1f} % of throughput")
                else:
                    why.append(f"missed: {rec}/{nfr} coded twice (its cost needs the GPU run)")
        dp = None
        if num(pm) is not None and num(pfull) is not None:
            dp = num(pm) - num(pfull) if abs(num(pm)) != float("inf") else 0.0
            if dp < -PSNR_LOSS_MAX:
                why.append(f"missed: {-dp:.3f} dB below the full-rate steps")
        verdict = "; ".join(why) if why else "MET"
        twice = f"{rec}/{nfr}" + (f" (frames {recl})" if recl not in ("-", "") else "")
        if num(lrec) is not None and num(lfr):
            twice += f"; throughput run {lrec}/{lfr}"
        out.append(f"| {cls} | {budget} | {cb}x{cb} | {be} | {fmt(num(fps))} | {fmt(num(fps1))} | {lat} ({latmax}) | "
                   f"{pm} ({pmin}) | {fmt(dp, 3)} | {by} | {twice} | {verdict} |")
    out.append("")
    for budget, (rec, nfr) in tot.items():
        share = rec / nfr if nfr else 0
        ok = share <= RECODE_MAX
        out.append(f"- {budget}: {int(rec)} of {int(nfr)} frames coded twice over the classes "
                   f"({share * 100:.1f} %; target at most {RECODE_MAX * 100:.0f} %, or at most "
                   f"{RECODE_COST_MAX * 100:.0f} % of throughput where it happens): "
                   f"{'MET' if ok else 'missed by share (see the per-class cost above)'}")
    out.append("")
    return out


# issue 26's targets (points 1, 3 and 4), on one GPU, host to host
DCI4K_FPS = 800            # 4K DCI frames a second ...
DCI4K_FPS_DEPTH = 16       # ... with this many frames in flight
DCI2K_FPS = 1500           # 2K DCI frames a second (8 or 16 in flight)
DCI4K_LATENCY_MS = 5.0     # a 4K DCI frame alone, submit to codestream
CBLK64_FPS_MIN = 0.75      # 64x64 code-blocks: at least this share of 32x32's frame rate ...
CBLK64_LATENCY_MAX = 1.33  # ... and at most this multiple of its lone-frame latency
CREATE_MS_MAX = 300.0      # encoder creation at 4K with 8 frames in flight
FIRST_MS_MAX = 500.0       # the first packet after creation
NVJ_RATIO_MIN = 2.0        # frame rate against nvJPEG2000's best at equal PSNR

# issue 29's targets (point 5), HTJ2K on one GPU, host to host (8 or 16 in flight, the better)
HT_IMF4K_FPS = 1200        # 4K 4:2:2 10-bit lossless HT
HT_DCI4K_FPS = 1000        # 4K 12-bit 4:4:4 HT at the exact budget ...
HT_DCI4K_BYTES = 1302083   # ... of 250 Mb/s at 24 fps
HT_BYTES_SLACK = 0.005     # exact budget: never over it, within 0.5 % under it
HT_LATENCY_MS = 3.0        # a 4K HT frame alone, submit to codestream
HT_CASES = ("ht-imf4k", "ht-dci4k")

# per case of the stage tables: (lone-frame latency budget ms, frame-rate target, the only
# frames-in-flight column the frame-rate target applies to, or None for every column)
STAGE_LIMITS = {
    "dci4k": (DCI4K_LATENCY_MS, DCI4K_FPS, DCI4K_FPS_DEPTH),
    "dci2k": (None, DCI2K_FPS, None),
    "ht-imf4k": (HT_LATENCY_MS, HT_IMF4K_FPS, None),
    "ht-dci4k": (HT_LATENCY_MS, HT_DCI4K_FPS, None),
}

# results.tsv rows that are not an encoder's: the PCIe floor and the byte comparisons
PSEUDO = ("pcie-h2d", "cmp")
STAGES = ("up", "mct+dwt", "t1", "rc", "t2", "down")
OUTSIDE = "outside the device stages"


def stage_times(notes, label):
    """{stage: ms} of a row's 'stages ms: up 1.29 ... total 7.70' (or 'under load ms: ...')."""
    m = re.search(re.escape(label) + r": ([^;|]*)", notes or "")
    if not m:
        return {}
    w = m.group(1).split()
    return {k: v for k, v in ((w[i], num(w[i + 1])) for i in range(0, len(w) - 1, 2)) if v is not None}


def note_value(notes, key):
    """The number after 'key=' or 'key ' in a row's notes (async_depth=16, pinned_ms=0.97)."""
    m = re.search(r"(?:^|[ ;])" + re.escape(key) + r"[= ]([0-9.]+)", notes or "")
    return num(m.group(1)) if m else None


def median_list(notes, key):
    """Median of 'key a / b / c' in a row's notes (the start-up times of every run)."""
    m = re.search(re.escape(key) + r" ([0-9.]+(?: / [0-9.]+)*)", notes or "")
    if not m:
        return None, ""
    v = sorted(float(x) for x in m.group(1).split(" / "))
    return v[(len(v) - 1) // 2], m.group(1)


def depth_of(row):
    return int(note_value(row[7], "async_depth") or 8)


def slot_parts(row):
    """A throughput row's time per frame in its slot: (slot ms, {part: ms}). With D frames kept
    in flight, a frame spends D x 1000 / fps ms between submit and receive (Little's law); the
    device stages are the throughput run's means, the rest is outside them."""
    f = num(row[3])
    if not f:
        return None, {}
    slot = depth_of(row) * 1000.0 / f
    ld = stage_times(row[7], "under load ms")
    parts = {k: ld[k] for k in STAGES if k in ld}
    if "total" in ld:
        parts[OUTSIDE] = slot - ld["total"]
    return slot, parts


def lone_parts(row):
    """A lone frame's serial path: (wall ms, {part: ms}), the host's share = wall - device total."""
    lat = num(row[4])
    if lat is None:
        return None, {}
    st = stage_times(row[7], "stages ms")
    parts = {k: st[k] for k in STAGES if k in st}
    if "total" in st:
        parts[OUTSIDE] = lat - st["total"]
    return lat, parts


def largest(parts):
    return max(parts.items(), key=lambda kv: kv[1]) if parts else (None, None)


def hold_throughput(row, target_fps):
    d = depth_of(row)
    slot, parts = slot_parts(row)
    budget = d * 1000.0 / target_fps
    name, ms = largest(parts)
    over = f"{slot - budget:.2f} ms over the {budget:.2f} ms a frame may spend in its slot ({d} x 1000/{target_fps:g})"
    if name is None:
        return f"{over}; no stage times"
    return f"held by {name}: {ms:.2f} of the {slot:.2f} ms in its slot; {over}"


def hold_latency(row, budget):
    lat, parts = lone_parts(row)
    name, ms = largest(parts)
    over = f"{lat - budget:.2f} ms over the {budget:.2f} ms budget"
    if name is None:
        return f"{over}; no stage times"
    return f"held by {name}: {ms:.2f} of the {lat:.2f} ms; {over}"


def hold_growth(parts64, parts32, excess, budget, what):
    """The part that grew the most from 32x32 to 64x64 code-blocks holds a relative target."""
    grow = {k: parts64[k] - parts32[k] for k in parts64 if k in parts32}
    name, ms = largest(grow)
    over = f"{excess:.2f} ms over the {budget:.2f} ms {what}"
    if name is None:
        return f"{over}; no stage times"
    return f"held by {name}: +{ms:.2f} ms against 32x32; {over}"


def stage_table(out, case, get):
    """Each millisecond of a lone frame and of a frame under load against the PCIe floor."""
    lone = get(case, "j2kcuda-cuda", "normal")
    d8 = get(case, "j2kcuda-cuda", "normal")
    d16 = get(case, "j2kcuda-cuda", "depth16")
    pc = get(case, "pcie-h2d", "floor")
    out.append(f"## Stage table: {case}\n")
    if not lone or num(lone[3]) is None:
        out.append("n/a: no CUDA rows for this case (the stage table needs the GPU run).\n")
        return
    floor = num(pc[4]) if pc else None
    if floor:
        out.append(f"PCIe floor, measured in this run (bench/pcie_floor.c): {pc[5]} B (the frame as 16-bit "
                   f"samples) host to device in {floor:.3f} ms pinned ({fmt(note_value(pc[7], 'pinned_gbs'), 2)} GB/s), "
                   f"{fmt(note_value(pc[7], 'pageable_ms'), 3)} ms pageable ({fmt(note_value(pc[7], 'pageable_gbs'), 2)} GB/s). "
                   "'÷ floor' is a time over the pinned copy.\n")
    else:
        out.append(f"PCIe floor: not measured ({pc[7] if pc else 'pcie_floor did not run'}).\n")
    cols = [("lone frame", lone_parts(lone), 1)]
    for r in (d8, d16):
        if r and num(r[3]):
            cols.append((f"{depth_of(r)} in flight", slot_parts(r), depth_of(r)))
    head = "| stage | " + " | ".join(f"{n} ms" + ("" if dd == 1 else f" | per frame (÷ {dd})") + " | ÷ floor"
                                     for n, _, dd in cols) + " |"
    out.append(head)
    out.append("|---|" + "".join("---:|" * (2 if dd == 1 else 3) for _, _, dd in cols))

    def cells(ms, dd):
        if ms is None:
            return ["-"] * (2 if dd == 1 else 3)
        per = ms / dd
        c = [f"{ms:.2f}"] + ([] if dd == 1 else [f"{per:.3f}"])
        return c + [f"{per / floor:.2f}x" if floor else "-"]

    for k in STAGES + ("device total", OUTSIDE, "wall"):
        row = []
        for n, (wall, parts), dd in cols:
            if k == "wall":
                v = wall
            elif k == "device total":
                v = (wall - parts[OUTSIDE]) if OUTSIDE in parts else None
            else:
                v = parts.get(k)
            row += cells(v, dd)
        name = {"wall": "wall (lone: latency; D in flight: D x 1000 / fps)"}.get(k, k)
        out.append(f"| {name} | " + " | ".join(row) + " |")
    budget = []
    lat_max, f, only_depth = STAGE_LIMITS.get(case, (None, None, None))
    for n, _, dd in cols:
        if dd == 1:
            budget += [fmt(lat_max, 2), "-"]
        else:
            if f and (only_depth is None or dd == only_depth):
                budget += [f"{dd * 1000.0 / f:.2f}", f"{1000.0 / f:.3f}", f"{1000.0 / f / floor:.2f}x" if floor else "-"]
            else:
                budget += ["-", "-", "-"]
    out.append("| target's allowance | " + " | ".join(budget) + " |")
    out.append("")


def targets(out, order, by_case, get):
    def fps(case, enc, mode):
        r = get(case, enc, mode)
        return num(r[3]) if r else None

    def verdict(ok):
        return "n/a" if ok is None else ("MET" if ok else "NOT MET")

    tabled = [c for c in ("dci4k", "dci2k") + HT_CASES if c in order]
    for c in tabled:
        stage_table(out, c, get)
    if tabled:
        out.append("Throughput: with D frames kept in flight a frame spends D x 1000 / fps ms in its slot "
                   f"(Little's law), and a target of F fps allows D x 1000 / F (4K: {DCI4K_FPS_DEPTH} x 1000/"
                   f"{DCI4K_FPS} = {DCI4K_FPS_DEPTH * 1000 / DCI4K_FPS:.0f} ms, {1000 / DCI4K_FPS:.2f} ms a frame; "
                   f"HT 4K lossless: {1000 / HT_IMF4K_FPS:.3f} ms a frame, HT 4K at 1.3 MB: "
                   f"{1000 / HT_DCI4K_FPS:.2f} ms a frame); "
                   "the part with the largest share of the slot time holds a missed target, by the slot time "
                   "minus the allowance.  ")
        out.append("Latency: the lone frame's wall time against its budget; the largest part of its serial path "
                   f"(a device stage, or '{OUTSIDE}' = wall - device total: host staging, submit, receive) holds "
                   "it. Code-blocks: the part that grew most from 32x32 to 64x64 holds it.\n")

    out.append("## Targets\n")
    out.append("| target | measured | verdict |")
    out.append("|---|---|---|")
    # point 4: 4K DCI >= 800 fps with 16 in flight
    r16 = get("dci4k", "j2kcuda-cuda", "depth16")
    f16 = num(r16[3]) if r16 else None
    v = verdict(None if f16 is None else f16 >= DCI4K_FPS)
    if v == "NOT MET":
        v += ": " + hold_throughput(r16, DCI4K_FPS)
    out.append(f"| 4K DCI 250 Mb/s >= {DCI4K_FPS} fps with {DCI4K_FPS_DEPTH} in flight (host to host) | {fmt(f16)} fps "
               f"(8 in flight: {fmt(fps('dci4k', 'j2kcuda-cuda', 'normal'))}; pinned input, 8: "
               f"{fmt(fps('dci4k', 'j2kcuda-cuda', 'pinned'))}) | {v} |")
    # 2K DCI >= 1500 fps, 8 or 16 in flight (the better one)
    cand = [r for r in (get("dci2k", "j2kcuda-cuda", "normal"), get("dci2k", "j2kcuda-cuda", "depth16"))
            if r and num(r[3]) is not None]
    best = max(cand, key=lambda r: num(r[3])) if cand else None
    v = verdict(None if best is None else num(best[3]) >= DCI2K_FPS)
    if v == "MET":
        v = f"MET with {depth_of(best)} in flight"
    elif v == "NOT MET":
        v += ": " + hold_throughput(best, DCI2K_FPS)
    out.append(f"| 2K DCI 250 Mb/s >= {DCI2K_FPS} fps | "
               + ("; ".join(f"{fmt(num(r[3]))} fps with {depth_of(r)} in flight" for r in cand) or "-")
               + f" | {v} |")
    # 4K lone-frame latency
    r4 = get("dci4k", "j2kcuda-cuda", "normal")
    lat = num(r4[4]) if r4 else None
    v = verdict(None if lat is None else lat <= DCI4K_LATENCY_MS)
    if v == "NOT MET":
        v += ": " + hold_latency(r4, DCI4K_LATENCY_MS)
    rp = get("dci4k", "j2kcuda-cuda", "pinned")
    out.append(f"| 4K DCI lone-frame latency <= {DCI4K_LATENCY_MS:g} ms | {fmt(lat, 2)} ms (median; pinned input: "
               f"{rp[4] if rp else '-'}) | {v} |")
    # point 1: 64x64 against 32x32 code-blocks, same frame, budget and settings
    r32 = get("dci4k", "j2kcuda-cuda", "noprofile")
    r64 = get("dci4k", "j2kcuda-cuda", "cblk64")
    cmps = [get("dci4k", "cmp", m) for m in ("noprofile", "cblk64")]
    if any(x and x[7] != "identical" for x in cmps):
        bytes_note, bytes_ok = "; codestreams DIFFER from the reference backend's", False
    elif all(cmps):
        bytes_note, bytes_ok = "; codestreams identical to the reference backend's (32x32 and 64x64)", True
    else:
        bytes_note, bytes_ok = "; codestreams not compared with the reference backend", True
    ok = r32 and r64 and num(r32[3]) and num(r64[3])
    if ok:
        ratio = num(r64[3]) / num(r32[3])
        v = verdict(ratio >= CBLK64_FPS_MIN and bytes_ok)
        if ratio < CBLK64_FPS_MIN:
            s64, p64 = slot_parts(r64)
            s32, p32 = slot_parts(r32)
            budget = depth_of(r64) * 1000.0 / (CBLK64_FPS_MIN * num(r32[3]))
            v += ": " + hold_growth(p64, p32, s64 - budget, budget, f"slot allowance ({depth_of(r64)} x 1000 / "
                                    f"({CBLK64_FPS_MIN:g} x {num(r32[3]):.1f} fps))")
        elif not bytes_ok:
            v += ": bytes differ"
        out.append(f"| dci4k 64x64 code-blocks >= {CBLK64_FPS_MIN * 100:.0f} % of the 32x32 frame rate "
                   f"({depth_of(r64)} in flight) | {ratio * 100:.1f} % ({fmt(num(r64[3]))} vs {fmt(num(r32[3]))} fps)"
                   f"{bytes_note} | {v} |")
        l64, q64 = lone_parts(r64)
        l32, q32 = lone_parts(r32)
        lr = l64 / l32 if l64 and l32 else None
        v = verdict(None if lr is None else lr <= CBLK64_LATENCY_MAX and bytes_ok)
        if lr is not None and lr > CBLK64_LATENCY_MAX:
            v += ": " + hold_growth(q64, q32, l64 - CBLK64_LATENCY_MAX * l32, CBLK64_LATENCY_MAX * l32,
                                    f"budget ({CBLK64_LATENCY_MAX:g} x {l32:.2f} ms)")
        elif lr is not None and not bytes_ok:
            v += ": bytes differ"
        out.append(f"| dci4k 64x64 code-blocks lone-frame latency <= {CBLK64_LATENCY_MAX:g}x 32x32's | {fmt(lr, 2)}x "
                   f"({fmt(l64, 2)} vs {fmt(l32, 2)} ms){bytes_note} | {v} |")
    else:
        out.append(f"| dci4k 64x64 code-blocks >= {CBLK64_FPS_MIN * 100:.0f} % of the 32x32 frame rate and lone "
                   f"latency <= {CBLK64_LATENCY_MAX:g}x | - (CUDA rows 'noprofile' and 'cblk64' missing) | n/a |")
    # point 3: start-up at 4K with 8 in flight; ffmpeg's single frame
    r4 = get("dci4k", "j2kcuda-cuda", "normal")
    for key, lim, what in (("create", CREATE_MS_MAX, "encoder creation"),
                           ("first", FIRST_MS_MAX, "first packet after creation")):
        med, runs = median_list(r4[7], key) if r4 else (None, "")
        v = verdict(None if med is None else med < lim)
        if v == "NOT MET":
            v += f": {what} {med - lim:.1f} ms over the {lim:g} ms"
        out.append(f"| 4K DCI, {depth_of(r4) if r4 else 8} in flight: {what} < {lim:g} ms | "
                   + (f"{med:.1f} ms (median of runs: {runs})" if med is not None else "-") + f" | {v} |")
    rf = get("dci4k", "ffmpeg", "1 frame")
    if rf is None:
        out.append("| ffmpeg, a single 4K DCI frame: wall time | - (no dci4k case) | n/a |")
    elif num(rf[4]) is None:
        out.append(f"| ffmpeg, a single 4K DCI frame: wall time | - ({rf[7]}) | {rf[7].split(':')[0].split()[0]} |")
    else:
        out.append(f"| ffmpeg, a single 4K DCI frame: wall time | {rf[4]} ms ({rf[7]}) | report |")
    # nvJPEG2000 at equal PSNR
    for c in order:
        fc = fps(c, "j2kcuda-cuda", "normal")
        nvr = [r for r in by_case.get(c, []) if r[1] == "nvjpeg2k" and num(r[3])]
        if not nvr:
            continue
        best = max(num(r[3]) for r in nvr)
        rr = fc / best if fc else None
        ours_p = get(c, "j2kcuda-cuda", "normal")
        out.append(f"| {c}: >= {NVJ_RATIO_MIN:g}x nvJPEG2000 at equal PSNR | {fmt(rr, 2)}x ({fmt(fc)} vs {fmt(best)} fps; "
                   f"PSNR {ours_p[6] if ours_p else '-'} vs {nvr[0][6]} dB; bytes {ours_p[5] if ours_p else '-'} vs {nvr[0][5]}) | "
                   f"{verdict(None if rr is None else rr >= NVJ_RATIO_MIN)} |")
    ht_targets(out, order, by_case, get)
    for c in order:
        for be in ("cuda", "ref"):
            n = get(c, f"j2kcuda-{be}", "noprofile") or get(c, f"j2kcuda-{be}", "normal")
            b = get(c, f"j2kcuda-{be}", "bypass")
            if not n or not b or num(n[3]) is None or num(b[3]) is None:
                continue
            sp = num(b[3]) / num(n[3])
            size = (num(b[5]) / num(n[5]) - 1) * 100 if num(b[5]) and num(n[5]) else None
            pb, pn = num(b[6]), num(n[6])
            dp = pb - pn if pb is not None and pn is not None and abs(pb) != float("inf") and abs(pn) != float("inf") else None
            out.append(f"| {c} ({be}): BYPASS speed-up and cost | {sp:.2f}x faster; size {fmt(size, 2)} %; "
                       f"PSNR {fmt(dp, 3)} dB (vs mode '{n[2]}') | report |")



def ht_targets(out, order, by_case, get):
    """Issue 29's speed targets on the HT cases, and the HT peers at about the same bytes."""
    def verdict(ok):
        return "n/a" if ok is None else ("MET" if ok else "NOT MET")

    def best_of(case):
        cand = [r for r in (get(case, "j2kcuda-cuda", "normal"), get(case, "j2kcuda-cuda", "depth16"))
                if r and num(r[3]) is not None]
        return cand, (max(cand, key=lambda r: num(r[3])) if cand else None)

    def inexact(case):
        """Lossless rows whose codestream does not decode to the source exactly."""
        return [f"{r[1]} {r[2]} (PSNR {r[6]})" for r in by_case.get(case, [])
                if r[1] not in PSEUDO and num(r[5]) is not None and r[6] != "inf"]

    for case, fps_min, what in (("ht-imf4k", HT_IMF4K_FPS, "4K 4:2:2 10-bit lossless HT"),
                                ("ht-dci4k", HT_DCI4K_FPS, "4K 12-bit 4:4:4 HT at an exact 1.3 MB")):
        if case not in order:
            continue
        cand, best = best_of(case)
        ok = None if best is None else num(best[3]) >= fps_min
        extra = ""
        if best is not None and case == "ht-imf4k" and best[6] != "inf":
            ok, extra = False, f"; not lossless (PSNR {best[6]})"
        if best is not None and case == "ht-dci4k":
            b = num(best[5])
            if b is None or b > HT_DCI4K_BYTES or b < HT_DCI4K_BYTES * (1 - HT_BYTES_SLACK):
                ok, extra = False, f"; {best[5]} B against the budget of {HT_DCI4K_BYTES} B"
        v = verdict(ok)
        if v == "MET":
            v = f"MET with {depth_of(best)} in flight"
        elif v == "NOT MET" and num(best[3]) < fps_min:
            v += ": " + hold_throughput(best, fps_min)
        ref = get(case, "j2kcuda-ref", "normal")
        out.append(f"| {what} >= {fps_min:,} fps | "
                   + ("; ".join(f"{fmt(num(r[3]))} fps with {depth_of(r)} in flight, {r[5]} B, PSNR {r[6]}"
                                for r in cand) or
                      f"- (no CUDA rows; reference backend: {ref[3] + ' fps, ' + ref[5] + ' B, PSNR ' + ref[6] if ref else '-'})")
                   + f"{extra} | {v} |")
    for case in HT_CASES:
        if case not in order:
            continue
        r = get(case, "j2kcuda-cuda", "normal")
        lat = num(r[4]) if r else None
        v = verdict(None if lat is None else lat <= HT_LATENCY_MS)
        if v == "NOT MET":
            v += ": " + hold_latency(r, HT_LATENCY_MS)
        out.append(f"| {case}: lone-frame latency <= {HT_LATENCY_MS:g} ms | {fmt(lat, 2)} ms (median) | {v} |")
    if "ht-imf4k" in order:
        bad = inexact("ht-imf4k")
        n = sum(1 for r in by_case.get("ht-imf4k", []) if r[1] not in PSEUDO and num(r[5]) is not None)
        out.append(f"| ht-imf4k: every lossless codestream decodes to the source exactly | "
                   + ("; ".join(bad) if bad else f"{n} rows, PSNR inf") + f" | {verdict(None if not n else not bad)} |")
    # the HT peers at about our bytes: frame rate against ours, and the PSNR of both
    for case in HT_CASES:
        if case not in order:
            continue
        _, best = best_of(case)
        ours_r, ours_name = (best, "CUDA") if best else (get(case, "j2kcuda-ref", "normal"), "ref")
        if not ours_r or num(ours_r[3]) is None:
            continue
        for enc, label in (("nvjpeg2k-ht", "nvJPEG2000 HT"), ("ojph", "OpenJPH")):
            rs = [r for r in by_case.get(case, []) if r[1] == enc and num(r[3])]
            if not rs:
                continue
            top = max(rs, key=lambda r: num(r[3]))
            out.append(f"| {case}: j2kcuda ({ours_name}) against {label} ({top[2]}) at about the same bytes | "
                       f"{num(ours_r[3]) / num(top[3]):.2f}x ({fmt(num(ours_r[3]))} vs {fmt(num(top[3]))} fps); "
                       f"bytes {ours_r[5]} vs {top[5]}; PSNR {ours_r[6]} vs {top[6]} dB | report |")


def main():
    rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
    cases = []
    try:
        cases = [l.rstrip("\n").split("\t") for l in open(sys.argv[2]) if l.strip()]
    except OSError:
        pass
    label = {c[0]: c[1] for c in cases}
    order = [c[0] for c in cases] or sorted({r[0] for r in rows})
    by_case = {c: [r for r in rows if r[0] == c] for c in order}

    def get(case, enc, mode):
        for r in by_case.get(case, []):
            if r[1] == enc and r[2] == mode:
                return r
        return None

    out = []
    for c in order:
        rs = [r for r in by_case[c] if r[1] not in PSEUDO]
        if not rs:
            continue
        cuda = get(c, "j2kcuda-cuda", "normal")
        ref = get(c, "j2kcuda-ref", "normal")
        base = num(cuda[3]) if cuda else None
        base_name = "CUDA"
        if base is None and ref:
            base, base_name = num(ref[3]), "ref"
        out.append(f"## {c}: {label.get(c, '')}\n")
        out.append(f"| encoder | mode | fps | latency ms | bytes | PSNR dB | j2kcuda-{base_name} speed ÷ this | notes |")
        out.append("|---|---|---:|---:|---:|---:|---:|---|")
        for r in rs:
            f = num(r[3])
            ratio = (f"{base / f:.1f}x" if base / f >= 0.1 else f"{base / f:.3f}x") if base and f else "-"
            out.append(f"| {r[1]} | {r[2]} | {fmt(f, 2)} | {r[4]} | {r[5]} | {r[6]} | {ratio} | {r[7]} |")
        out.append("")

    targets(out, order, by_case, get)
    if len(sys.argv) > 3:
        out.append("")
        out += classes_table(sys.argv[3])
    print("\n".join(out))


if __name__ == "__main__":
    main()
