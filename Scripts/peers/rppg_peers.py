"""Runs published rPPG methods (the peers) on the photo benchmark's clips and prints them side by side with ours.

Reads CLIPS_DIR/clips.json, written by `Benchmarks vitals --clips-dir CLIPS_DIR` (Scripts/bench-vitals --peers):
each clip's file exactly as our engine saw it (raw: lossless FFV1 .mkv; HEVC: the encoded stream in .mp4), its
true mean pulse and breathing rate and our engine's run values. For every clip it runs

  * VitalLens 0.6.2 (`pip install vitallens`), methods POS and CHROM: local, no API key;
  * open-rppg 0.1.1 (`pip install open-rppg`), models FacePhys.rlap and TSCAN.rlap, with the weights and the
    full-range BlazeFace detector its wheel ships (`face_mode = "Far"`: the default short-range detector finds no
    face in a whole 504×896 frame when the face is 50–100 px wide),

each on the whole clip through the package's public API (`VitalLens(method)(path)`, `rppg.Model(name)
.process_video(path)`), writes CLIPS_DIR/peers.json and prints, per condition and face width, clips within 3 bpm
and the clip-error MAE of ours and of each peer, and ours as a ratio to the best peer. Everything runs offline:
no VitalLens API model, no downloads. A peer that cannot be imported is reported as missing, never estimated.

Usage: python rppg_peers.py CLIPS_DIR [--peers pos,chrom,facephys,tscan]
"""

import argparse
import json
import logging
import math
import os
import sys
import time


def _vitallens(method):
    """A peer running VitalLens' local `method` ("pos" or "chrom") on a clip: (pulse, breathing or None)."""
    from vitallens import VitalLens

    client = VitalLens(method=method, export_to_json=False)

    def run(path):
        results = client(path)
        if not results:
            return None, None, "no face found"
        vitals = results[0].get("vitals", {})
        pulse = vitals.get("heart_rate", {}).get("value")
        breathing = vitals.get("respiratory_rate", {}).get("value")
        return pulse, breathing, (None if pulse is not None else "no heart-rate value in the result")

    return run


def _open_rppg(model_name):
    """A peer running open-rppg's `model_name` on a clip: (pulse, breathing or None)."""
    import numpy as np
    import rppg

    if model_name not in rppg.supported_models:
        raise ImportError(f"open-rppg has no model {model_name}")

    # Its own handler repeats every warning (e.g. "non-key frames" on every HEVC clip) through the root logger too.
    logging.getLogger("open-rppg").setLevel(logging.ERROR)

    def run(path):
        # A fresh model per clip: the recurrent models carry state from one video to the next.
        model = rppg.Model(model_name)
        # The full-range BlazeFace: the default short-range one ("Near") finds no face in a whole 504×896 frame
        # with a 50–100 px face; the full-range one finds them all.
        model.face_mode = "Far"
        result = model.process_video(path)
        missed = model.statistic.get("null", 0)
        if not result or result.get("hr") is None:
            raw, _ = model.bvp(raw=True)
            bad = int(np.count_nonzero(~np.isfinite(np.asarray(raw, dtype=float)))) if len(raw) else 0
            return None, None, (f"no estimate: no face on {missed} of {model.statistic.get('frames', 0)} frames, "
                                f"{bad} of {len(raw)} pulse-wave samples not finite")
        # heartpy's breathing rate from the beat intervals (Hz), given only when the signal quality is > 0.5.
        breathing = (result.get("hrv") or {}).get("breathingrate")
        return float(result["hr"]), (float(breathing) * 60 if breathing is not None else None), None

    return run


PEERS = {
    "pos": ("VitalLens POS", lambda: _vitallens("pos")),
    "chrom": ("VitalLens CHROM", lambda: _vitallens("chrom")),
    "facephys": ("open-rppg FacePhys", lambda: _open_rppg("FacePhys.rlap")),
    "tscan": ("open-rppg TSCAN", lambda: _open_rppg("TSCAN.rlap")),
}


def _finite(v):
    """v as a float when it is a finite number, else None."""
    try:
        v = float(v)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _summary(clips, key):
    """(clips within 3 bpm, clips with an estimate, clip-error MAE over those) of the estimates under `key`."""
    errors = [abs(c[key] - c["truePulse"]) for c in clips if c.get(key) is not None]
    within = sum(1 for e in errors if e <= 3)
    return within, len(errors), (sum(errors) / len(errors) if errors else None)


def _conditions(clips):
    """The clips' conditions, each once, in the order the clips came."""
    return list(dict.fromkeys(c["condition"] for c in clips))


def _fmt_mae(v):
    return f"{v:6.2f}" if v is not None else "    --"


def print_table(clips, peers):
    """Prints per condition and face width ours and every peer, and ours as a ratio to the best peer."""
    names = [PEERS[p][0] for p in peers]
    print()
    print("side by side: within = clips whose whole-clip pulse is within 3 bpm of the truth (of all clips);")
    print("MAE = clip-error MAE in bpm over the clips with an estimate (est); best peer = most clips within 3 bpm, then")
    print("lowest MAE; ratios are ours / best peer (within: higher is better, MAE: lower is better)")
    header = f"{'condition':<20} {'width':>5} | {'ours':>19} | " + " | ".join(f"{n:>19}" for n in names)
    print(header + " | best peer          within  MAE ratio")
    print(f"{'':<20} {'':>5} | {'within est    MAE':>19} | " + " | ".join(f"{'within est    MAE':>19}" for _ in names) + " |")
    for condition in _conditions(clips):
        rows = [c for c in clips if c["condition"] == condition]
        widths = sorted({c["faceWidth"] for c in rows})
        for width in widths + [None]:
            group = [c for c in rows if (c["faceWidth"] == width if width is not None else c["faceWidth"] >= 75)]
            if not group:
                continue
            n = len(group)
            ours = _summary(group, "ourPulse")
            cells = [f"{ours[0]:>3}/{n:<2} {ours[1]:>3} {_fmt_mae(ours[2])}"]
            best = None
            for p, name in zip(peers, names):
                s = _summary(group, p)
                cells.append(f"{s[0]:>3}/{n:<2} {s[1]:>3} {_fmt_mae(s[2])}")
                rank = (s[0], -(s[2] if s[2] is not None else 1e9))
                if s[1] and (best is None or rank > best[0]):
                    best = (rank, name, s)
            if best is None:
                ratio = "no peer estimate"
            else:
                _, name, s = best
                within_ratio = f"{ours[0]}/{s[0]}" if s[0] else f"{ours[0]}/0"
                mae_ratio = f"{ours[2] / s[2]:.2f}" if ours[2] is not None and s[2] else "--"
                ratio = f"{name:<18} {within_ratio:>6} {mae_ratio:>9}"
            label = f"{width:>5}" if width is not None else "  ≥75"
            print(f"{condition:<20} {label} | " + " | ".join(f"{c:>19}" for c in cells) + " | " + ratio)


def print_breathing(clips, peers):
    """Prints per condition the breathing clip-error MAE (per minute) of ours and of the peers that give one."""
    givers = [p for p in peers if any(c.get(p + "_breathing") is not None for c in clips)]
    print()
    silent = [PEERS[p][0] for p in peers if p not in givers]
    print("breathing, clip-error MAE (/min) over the clips with an estimate (est/clips)"
          + (f"; no breathing estimate from {', '.join(silent)}" if silent else ""))
    for condition in _conditions(clips):
        rows = [c for c in clips if c["condition"] == condition]
        cells = []
        for key, name in [("ourBreathing", "ours")] + [(p + "_breathing", PEERS[p][0]) for p in givers]:
            errors = [abs(c[key] - c["trueBreathing"]) for c in rows if c.get(key) is not None]
            mae = sum(errors) / len(errors) if errors else None
            cells.append(f"{name} {_fmt_mae(mae).strip()} ({len(errors)}/{len(rows)})")
        print(f"{condition:<20} " + ", ".join(cells))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("clips_dir")
    parser.add_argument("--peers", default=",".join(PEERS), help="comma-separated: " + ",".join(PEERS))
    args = parser.parse_args()
    manifest = os.path.join(args.clips_dir, "clips.json")
    try:
        with open(manifest) as f:
            clips = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"rppg_peers: cannot read {manifest}: {e}")
    if not isinstance(clips, list) or not clips:
        sys.exit(f"rppg_peers: {manifest} lists no clips")

    wanted = [p.strip() for p in args.peers.split(",") if p.strip()]
    unknown = [p for p in wanted if p not in PEERS]
    if unknown:
        sys.exit(f"rppg_peers: unknown peer(s) {','.join(unknown)}; choose from {','.join(PEERS)}")
    runners = {}
    for p in wanted:
        try:
            runners[p] = PEERS[p][1]()
        except Exception as e:  # an import or model-loading failure: say so, never invent numbers
            print(f"rppg_peers: PEER MISSING: {PEERS[p][0]} cannot be loaded ({type(e).__name__}: {e}); "
                  "it is left out of the table", file=sys.stderr)
    peers = [p for p in wanted if p in runners]

    for clip in clips:
        path = os.path.join(args.clips_dir, clip["file"])
        ours = _finite(clip.get("ourPulse"))
        line = [f"{clip['condition']} {clip['file']}: truth {clip['truePulse']:.1f} ours " + (f"{ours:.1f}" if ours is not None else "--")]
        for p in peers:
            if not os.path.exists(path):
                pulse, breathing, note = None, None, "clip file missing"
            else:
                start = time.monotonic()
                try:
                    pulse, breathing, note = runners[p](path)
                except Exception as e:  # one clip failing must not stop the others
                    pulse, breathing, note = None, None, f"{type(e).__name__}: {e}"
                clip[p + "_seconds"] = round(time.monotonic() - start, 1)
            clip[p] = _finite(pulse)
            clip[p + "_breathing"] = _finite(breathing)
            if note:
                clip[p + "_note"] = note
            if clip[p] is None:
                line.append(f"{p} -- ({note})")
            else:
                line.append(f"{p} {clip[p]:.1f}" + (f" breathing {clip[p + '_breathing']:.1f}" if clip[p + "_breathing"] is not None else ""))
        print("  " + ", ".join(line), flush=True)

    out = os.path.join(args.clips_dir, "peers.json")
    try:
        with open(out, "w") as f:
            json.dump(clips, f, indent=1)
    except OSError as e:
        print(f"rppg_peers: cannot write {out}: {e}", file=sys.stderr)
    if not peers:
        print("rppg_peers: NO PEER could be loaded: the table shows our figures only", file=sys.stderr)
    print_table(clips, peers)
    print_breathing(clips, peers)


if __name__ == "__main__":
    main()
