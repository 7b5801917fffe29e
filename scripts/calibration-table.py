#!/usr/bin/env python3
"""The cost model against device measurements: reads a measurements file (data/calibration/trn1.toml,
the input of `nki-agent calibrate`), profiles every [[point]] with `nki-agent profile --json` on the
file's target, and prints a markdown table of measured and predicted latencies with each point's
error (predicted / measured - 1), then the median |error|, the worst point and the Spearman rank
correlation between predicted and measured. With --check it exits 1 unless the median |error| is at
most 15%, every point is within ±35% and the rank correlation is at least 0.9, the
streaming plateaus (stream_relu, stream_add) are within ±15% and sin is at least 3x relu;
without it, 1 only when a point fails to profile.

Python 3 standard library only. It never changes the measurements, the target or the kernels; a
point that fails to profile is reported (and fails --check), never dropped.

Usage: scripts/calibration-table.py [MEASUREMENTS.toml] [--binary build/nki-agent] [--check]
"""
import argparse
import json
import os
import statistics
import concurrent.futures
import subprocess
import sys

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = None

MEDIAN_LIMIT = 0.15
ROW_LIMIT = 0.35
SPEARMAN_LIMIT = 0.9
PLATEAU_LIMIT = 0.15
SIN_RATIO = 3.0


def parse_value(text):
    """A TOML value of the forms a measurements file uses: a string, a number, an array of strings."""
    text = text.strip()
    if text.startswith("["):
        inner = text[1:text.rindex("]")].strip()
        return [parse_value(v) for v in split_array(inner)] if inner else []
    if text.startswith('"'):
        return json.loads(text[:text.index('"', 1) + 1])
    return float(text) if any(c in text for c in ".eE") else int(text)


def split_array(inner):
    """The items of a one-line array of strings and numbers."""
    items, cur, quoted = [], "", False
    for c in inner:
        if c == '"':
            quoted = not quoted
        if c == "," and not quoted:
            items.append(cur)
            cur = ""
        else:
            cur += c
    if cur.strip():
        items.append(cur)
    return items


def strip_comment(line):
    quoted = False
    for i, c in enumerate(line):
        if c == '"':
            quoted = not quoted
        elif c == "#" and not quoted:
            return line[:i]
    return line


def load_measurements(path):
    """The file as {'measurements': {...}, 'point': [{...}, ...]}."""
    if tomllib is not None:
        with open(path, "rb") as f:
            return tomllib.load(f)
    data, table = {"measurements": {}, "point": []}, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = strip_comment(line).strip()
            if not line:
                continue
            if line == "[measurements]":
                table = data["measurements"]
            elif line == "[[point]]":
                table = {}
                data["point"].append(table)
            elif "=" in line and table is not None:
                key, value = line.split("=", 1)
                table[key.strip()] = parse_value(value)
    return data


def average_ranks(values):
    """1-based ranks, ties sharing the average of the ranks they span."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def spearman(xs, ys):
    """The Pearson correlation of the average ranks; nan when either side is constant."""
    rx, ry = average_ranks(xs), average_ranks(ys)
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    return sxy / (sxx * syy) ** 0.5 if sxx > 0 and syy > 0 else float("nan")


def profile_point(binary, base, target, point, hardware=None):
    """The predicted latency of one point in µs, or (None, why)."""
    cmd = [binary, "profile", os.path.normpath(os.path.join(base, point["kernel"])), "--entry", point["entry"],
           "--target", target, "--json"]
    if hardware:
        cmd += ["--hardware", hardware]
    for s in point.get("shapes", []):
        cmd += ["--shapes", s]
    for a in point.get("args", []):
        cmd += ["--arg", a]
    try:
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, str(e)
    try:
        out = json.loads(run.stdout)
    except json.JSONDecodeError:
        lines = (run.stderr or run.stdout).strip().splitlines()
        return None, lines[-1] if lines else f"exit {run.returncode}"
    if run.returncode != 0 or not out.get("ok", False) or "summary" not in out:
        diags = out.get("diagnostics") or [{}]
        return None, f"{diags[0].get('code', 'error')}: {diags[0].get('message', f'exit {run.returncode}')}"
    return out["summary"]["total_time_ns"] / 1000.0, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("measurements", nargs="?", default="data/calibration/trn1.toml")
    ap.add_argument("--binary", default="build/nki-agent", help="the nki-agent to profile with")
    ap.add_argument("--target", help="profile on this target instead of the file's")
    ap.add_argument("--hardware", help="a hardware description file instead of the target's own")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 unless median |error| <= 15%%, every point within ±35%% and Spearman >= 0.9")
    o = ap.parse_args()

    data = load_measurements(o.measurements)
    target = o.target or data.get("measurements", {}).get("target", "trn1")
    base = os.path.dirname(os.path.abspath(o.measurements))
    points = data.get("point", [])
    if not points:
        print(f"{o.measurements}: no [[point]]", file=sys.stderr)
        return 2

    print(f"Cost model on {target} against {o.measurements} ({len(points)} points)\n")
    print("| name | measured µs | predicted µs | error |")
    print("|---|---:|---:|---:|")
    measured, predicted, errors, failed = [], [], [], []
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda p: profile_point(o.binary, base, target, p, o.hardware), points))
    for p, (pred, why) in zip(points, results):
        meas = float(p["measured_us"])
        if pred is None:
            failed.append(p["name"])
            print(f"| {p['name']} | {meas:.1f} | failed: {why} | - |")
            continue
        err = pred / meas - 1
        measured.append(meas)
        predicted.append(pred)
        errors.append((p["name"], err))
        print(f"| {p['name']} | {meas:.1f} | {pred:.1f} | {err * 100:+.1f}% |")

    ok = not failed
    print()
    if errors:
        median = statistics.median(abs(e) for _, e in errors)
        worst = max(errors, key=lambda ne: abs(ne[1]))
        rho = spearman(measured, predicted)
        print(f"- median |error|: {median * 100:.1f}% (limit {MEDIAN_LIMIT * 100:.0f}%)")
        print(f"- worst point: {worst[0]} {worst[1] * 100:+.1f}% (limit ±{ROW_LIMIT * 100:.0f}%)")
        print(f"- Spearman rank correlation: {rho:.3f} (limit {SPEARMAN_LIMIT})")
        ok = ok and median <= MEDIAN_LIMIT and abs(worst[1]) <= ROW_LIMIT and rho >= SPEARMAN_LIMIT
        # The streaming plateaus within ±15% of their measurements, and sin at least 3x the unary one.
        by_name = {p["name"]: (float(p["measured_us"]), pred) for p, (pred, _) in zip(points, results) if pred}
        for name in ("stream_relu", "stream_add"):
            if name in by_name:
                meas, pred = by_name[name]
                plateau_ok = abs(pred / meas - 1) <= PLATEAU_LIMIT
                print(f"- {name} plateau: {pred:.1f} µs against {meas:.1f} µs "
                      f"({'within' if plateau_ok else 'outside'} ±{PLATEAU_LIMIT * 100:.0f}%)")
                ok = ok and plateau_ok
        if "stream_sin" in by_name and "stream_relu" in by_name:
            ratio = by_name["stream_sin"][1] / by_name["stream_relu"][1]
            print(f"- sin / relu: {ratio:.2f}x (at least {SIN_RATIO}x)")
            ok = ok and ratio >= SIN_RATIO
    if failed:
        print(f"- failed to profile: {', '.join(failed)}")
    if o.check:
        print(f"\ncheck: {'pass' if ok else 'FAIL'}")
        return 0 if ok else 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
