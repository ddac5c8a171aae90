#!/usr/bin/env python3
"""Prints issue 14's ratio table, and every benchmark's figures, from a package-benchmark run.

Usage: Scripts/bench-table.py RESULTS_DIR

RESULTS_DIR holds what `make bench` had the run write there: the run's JMH export (`*.jmh.json`, from
`swift package benchmark --format jmh --path RESULTS_DIR`) and `notes.tsv` (what the benchmarks noted beside
their figures: a hostile input's byte count and outcome; `COURIER_BENCH_NOTES`). Standard library only.

Benchmark names are `<measure> <size> <side>` (`json.decode.model 5000 Courier`, `json.decode.model 5000
JSONDecoder`, `chain.send10 - Courier`): the table pairs Courier's side with its peer's by measure and size. A
ratio is the peer's median time over Courier's (how many times faster Courier is), both from the same run; the
verdicts use medians, and a second table gives the same ratios from each side's fastest sample (p0).
Exits 1 when a row of the table could not be computed (a benchmark missing from the run), 0 otherwise: a missed
target is reported, not an error.
"""

import glob
import json
import os
import sys

TIME = "Time (wall clock)"
MALLOCS = "Malloc (total)"
PEAK = "Peak memory growth (KiB)"
SIZES = ("5000", "10")

# (label, Courier's measure, peer's measure, peer's side, target ratio: every size must meet it; None: reported
# without a target)
RATIO_ROWS = [
    ("protobuf decode → Codable model (`@ProtobufModel`) vs swift-protobuf generated code",
     "protobuf.decode.model", "protobuf.decode", "swift-protobuf", 1.0),
    ("protobuf encode of a Codable model (`@ProtobufModel`) vs swift-protobuf",
     "protobuf.encode.model", "protobuf.encode", "swift-protobuf", 1.0),
    ("protobuf decode → plain Codable model (no macro) vs swift-protobuf",
     "protobuf.decode.codable", "protobuf.decode", "swift-protobuf", None),
    ("protobuf encode of a plain Codable model (no macro) vs swift-protobuf",
     "protobuf.encode.codable", "protobuf.encode", "swift-protobuf", None),
    ("protobuf decode → Value vs swift-protobuf", "protobuf.decode.value", "protobuf.decode", "swift-protobuf", 1.5),
    ("protobuf encode of a Value vs swift-protobuf", "protobuf.encode.value", "protobuf.encode", "swift-protobuf", 1.0),
    ("schema-less ProtobufRawDecoder vs swift-protobuf", "protobuf.decode.raw", "protobuf.decode", "swift-protobuf", 1.0),
    ("JSON decode → model vs JSONDecoder", "json.decode.model", "json.decode.model", "JSONDecoder", 3.0),
    ("JSON decode → Value vs JSONSerialization", "json.decode.value", "json.decode.value", "JSONSerialization", 6.0),
    ("JSON encode of a model vs JSONEncoder", "json.encode.model", "json.encode.model", "JSONEncoder", 3.0),
    ("XML decode → model vs XMLCoder", "xml.decode.model", "xml.decode.model", "XMLCoder", 30.0),
    ("XML encode of a model vs XMLCoder", "xml.encode.model", "xml.encode.model", "XMLCoder", 10.0),
]


def load(folder):
    """{benchmark name: {metric description: JMH metric}} and {benchmark name: target} from the JMH export."""
    results, targets = {}, {}
    files = sorted(glob.glob(os.path.join(folder, "*.jmh.json")))
    if not files:
        sys.exit(f"bench-table: no *.jmh.json in {folder} (did the benchmark run write its export?)")
    for path in files:
        with open(path, encoding="utf-8") as handle:
            for element in json.load(handle):
                # package.benchmark.<Target>.<name, spaces as underscores>
                rest = element["benchmark"].removeprefix("package.benchmark.")
                target, _, key = rest.partition(".")
                name = key.replace("_", " ")
                metrics = {}
                # JMH's exporter reuses one dictionary of secondary metrics for every benchmark, so a metric
                # another benchmark had may linger here: keep only those with one sample per iteration.
                iterations = element["measurementIterations"]
                for description, metric in element["secondaryMetrics"].items():
                    if len(metric.get("rawData", [[]])[0]) == iterations:
                        metrics[description] = metric
                metrics["iterations"] = iterations
                results[name] = metrics
                targets[name] = target
    return results, targets


def load_notes(folder):
    notes = {}
    path = os.path.join(folder, "notes.tsv")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                name, _, note = line.rstrip("\n").partition("\t")
                notes[name] = note
    return notes


def percentile(results, name, metric, p="50.0"):
    """A percentile of a benchmark's metric (time in µs, counts as counts), None when the run lacks it."""
    entry = results.get(name, {}).get(metric)
    if entry is None:
        return None
    # A `.steady` benchmark runs 1,000 operations per sample (its scaling factor): report one operation.
    return entry["scorePercentiles"][p] / (1000 if ".steady " in name else 1)


def ratio(results, ours, peer, peer_side, size, p="50.0"):
    """The peer's time over Courier's for one row and size at percentile `p`, None when either is missing."""
    ours_time = percentile(results, f"{ours} {size} Courier", TIME, p)
    peer_time = percentile(results, f"{peer} {size} {peer_side}", TIME, p)
    return peer_time / ours_time if ours_time and peer_time else None


def fmt_ratio(value):
    return "—" if value is None else f"{value:.2f}×"


def fmt_target(target):
    return "—" if target is None else f"≥ {target:g}×"


def fmt_count(value):
    return "—" if value is None else f"{value:,.0f}"


def floor_line(results, label, floor, peer, ours):
    """A note line on a floor (benchmark names with `{}` for the size): how far below the peer it is, and how close
    Courier comes to it; none when no size has all three."""
    cells = []
    for size in SIZES:
        floor_time = percentile(results, floor.format(size), TIME)
        peer_time = percentile(results, peer.format(size), TIME)
        ours_time = percentile(results, ours.format(size), TIME)
        if floor_time and peer_time and ours_time:
            cells.append(f"{size} users: floor {peer_time / floor_time:.2f}× swift-protobuf, "
                         f"Courier at {floor_time / ours_time:.2f}× the floor's speed")
    return [f"{label}: " + "; ".join(cells)] if cells else []


def table(results):
    """The ratio table's lines, and whether every row could be computed."""
    complete = True
    floor_notes = []
    lines = [
        "| measure | 5,000 users | 10 users | target | met/missed | mallocs/op ours vs peer (5,000 · 10) |",
        "|---|---:|---:|---:|:---:|---:|",
    ]
    for label, ours, peer, peer_side, target in RATIO_ROWS:
        ratios, mallocs = [], []
        for size in SIZES:
            ratios.append(ratio(results, ours, peer, peer_side, size))
            ours_mallocs = percentile(results, f"{ours} {size} Courier", MALLOCS)
            peer_mallocs = percentile(results, f"{peer} {size} {peer_side}", MALLOCS)
            mallocs.append(f"{fmt_count(ours_mallocs)} vs {fmt_count(peer_mallocs)}")
        if None in ratios:
            complete = False
            verdict = "not run"
        elif target is None:
            verdict = "reported"
        else:
            verdict = "met" if all(r >= target for r in ratios) else "**missed**"
        suffix = " on both" if label.startswith("JSON decode → Value") else ""
        lines.append(f"| {label} | {fmt_ratio(ratios[0])} | {fmt_ratio(ratios[1])} | {fmt_target(target)}{suffix} | "
                     f"{verdict} | {' · '.join(mallocs)} |")

    # Codable's own floor beside swift-protobuf (CodableFloor.swift): a decoder that parses nothing and an encoder
    # that formats nothing. The plain Codable rows cannot beat swift-protobuf by more than its floor does (the
    # `@ProtobufModel` rows do not go through Codable).
    for measure in ("decode", "encode"):
        floor_notes += floor_line(
            results, f"Codable {measure} floor (no parsing or formatting at all)",
            f"protobuf.{measure}.floor {{}} Codable", f"protobuf.{measure} {{}} swift-protobuf",
            f"protobuf.{measure}.codable {{}} Courier")
    # The trees' own floor beside swift-protobuf (ValueFloor.swift): the same `Value` built again from its pieces,
    # parsing nothing. A decoder to `Value` can beat swift-protobuf by little more than the floor of its tree does.
    for name, floor, row in (("protobuf → Value", "valuefloor", "value"), ("ProtobufRawDecoder", "rawfloor", "raw")):
        floor_notes += floor_line(
            results, f"{name} tree floor (the same `Value` built from its pieces, no parsing)",
            f"protobuf.decode.{floor} {{}} Value", "protobuf.decode {} swift-protobuf",
            f"protobuf.decode.{row} {{}} Courier")

    # The pipeline: a whole send() through 10 no-op interceptors on the in-memory transport.
    send = percentile(results, "chain.send10 - Courier", TIME)
    untimed = percentile(results, "chain.send10.untimed - Courier", TIME)
    floor = percentile(results, "chain.transport - InMemoryTransport", TIME)
    send_mallocs = percentile(results, "chain.send10 - Courier", MALLOCS)
    untimed_mallocs = percentile(results, "chain.send10.untimed - Courier", MALLOCS)
    steady = percentile(results, "chain.send10.steady - Courier", TIME)
    warm = percentile(results, "chain.send10.warm - Courier", TIME)
    # The verdict reads the steady figure: calls back to back, each sample's time over its 1,000 calls, as the
    # issue measured its 49.7 µs. A sample of one call also times what the harness does to start it: each async
    # sample is a new task, started from a Dispatch thread on a pool thread that has just woken, and the
    # in-memory transport alone shows the same twofold gap between its median and its fastest sample; the warm
    # figure (one untimed call first, in the same sample) times one call without that start.
    if send is None or untimed is None or steady is None:
        complete = False
        cell, verdict = "—", "not run"
    else:
        cell = (f"{steady:.1f} µs, 1,000 calls back to back (one call per sample: {send:.1f} µs, "
                f"{untimed:.1f} µs without its timeout emulation"
                + ("" if warm is None else f", {warm:.1f} µs after an untimed call in the same sample") + ")")
        verdict = "met" if steady <= 10 else "**missed**"
    floor_note = "" if floor is None else f"; transport alone {floor:.1f} µs"
    lines.append(f"| whole `send()` through 10 no-op interceptors, in-memory transport{floor_note} | {cell} | — | "
                 f"≤ 10 µs | {verdict} | {fmt_count(send_mallocs)} ({fmt_count(untimed_mallocs)} untimed) |")

    # Peak memory of one typed decode of the 5,000-user page.
    ours = percentile(results, "memory.decode.model 5000 Courier", PEAK)
    peer = percentile(results, "memory.decode.model 5000 JSONDecoder", PEAK)
    ours_mallocs = percentile(results, "memory.decode.model 5000 Courier", MALLOCS)
    peer_mallocs = percentile(results, "memory.decode.model 5000 JSONDecoder", MALLOCS)
    if ours is None or peer is None:
        complete = False
        cell, verdict = "—", "not run"
    else:
        cell = f"+{ours / 1024:.1f} MiB (JSONDecoder +{peer / 1024:.1f})"
        verdict = "met" if ours <= peer else "**missed**"
    lines.append(f"| peak memory of one typed decode of users_5000.json vs JSONDecoder (MiB growth) | {cell} | — | "
                 f"≤ JSONDecoder | {verdict} | {fmt_count(ours_mallocs)} vs {fmt_count(peer_mallocs)} |")
    if floor_notes:
        lines += [""] + floor_notes

    # The same ratios from each side's fastest sample (p0). Medians decide the verdicts above; on a machine that
    # switches between speed states, a median can fall in either state while the fastest sample stays put, so
    # these show how much of a row's ratio is the code and how much the moment.
    p0_lines = ["", "Ratios of the fastest samples (p0 over p0; the verdicts above use medians):", "",
                "| measure | 5,000 users (p0) | 10 users (p0) | target |", "|---|---:|---:|---:|"]
    for label, ours, peer, peer_side, target in RATIO_ROWS:
        cells = [fmt_ratio(ratio(results, ours, peer, peer_side, size, "0.0")) for size in SIZES]
        p0_lines.append(f"| {label} | {cells[0]} | {cells[1]} | {fmt_target(target)} |")
    fastest = percentile(results, "chain.send10 - Courier", TIME, "0.0")
    if fastest is not None:
        steady_fastest = percentile(results, "chain.send10.steady - Courier", TIME, "0.0")
        steady_cell = "" if steady_fastest is None else f"{steady_fastest:.1f} µs back to back; "
        warm_fastest = percentile(results, "chain.send10.warm - Courier", TIME, "0.0")
        warm_cell = "" if warm_fastest is None else f"; {warm_fastest:.1f} µs after an untimed call"
        p0_lines.append(f"| whole `send()` through 10 no-op interceptors | {steady_cell}{fastest:.1f} µs one call "
                        f"per sample{warm_cell} | — | ≤ 10 µs |")
    lines += p0_lines
    return lines, complete


def details(results, targets, notes):
    """Every benchmark's time percentiles and mallocs per operation, by group; the hostile group per byte."""
    lines = []
    for target in sorted(set(targets.values()), key=lambda t: (t == "Hostile", t)):
        names = sorted(n for n, t in targets.items() if t == target)
        lines.append("")
        if target == "Hostile":
            lines += hostile(results, names, notes)
            continue
        lines.append(f"== {target}: wall clock per operation (µs: p0 · p50 · p90 · p99 · max), mallocs/op, iterations")
        for name in names:
            p = [percentile(results, name, TIME, q) for q in ("0.0", "50.0", "90.0", "99.0", "100.0")]
            if None in p:
                continue
            line = (f"  {name:<48} {p[0]:>11.2f} {p[1]:>11.2f} {p[2]:>11.2f} {p[3]:>11.2f} {p[4]:>11.2f}"
                    f"  {fmt_count(percentile(results, name, MALLOCS)):>9} mallocs  {results[name]['iterations']:>7}×")
            peak = percentile(results, name, PEAK)
            if peak is not None:
                line += f"  peak +{peak / 1024:.1f} MiB"
            lines.append(line)
        if target == "Schema":
            decode = percentile(results, "schema.decode 5000 JSONCodec", TIME)
            for name in ("schema.validate 5000 Courier", "schema.isValid 5000 Courier"):
                validate = percentile(results, name, TIME)
                if decode and validate:
                    lines.append(f"  => {name} vs the JSON decode of the same bytes: {decode / validate:.2f}× "
                                 "(validating costs less than decoding when ≥ 1)")
    return lines


def hostile(results, names, notes):
    """Per input byte, so linearity shows: a linear operation keeps its ns/byte as n grows tenfold."""
    lines = ["== Hostile: median time per input byte, peak memory growth of one operation, outcome"]

    def size(name):
        head, _, n = name.rpartition(" n=")
        return head, int(n) if n.isdigit() else 0

    for name in sorted(names, key=size):
        median = percentile(results, name, TIME)
        if median is None:
            continue
        note = notes.get(name, "")
        fields = dict(part.split("=", 1) for part in note.split("\t")[:1] if "=" in part)
        outcome = note.split("\t", 1)[1] if "\t" in note else "(no outcome noted)"
        size_bytes = int(fields.get("bytes", "0") or 0)
        peak = percentile(results, name, PEAK)
        per_byte = f"{median * 1000 / size_bytes:>10.2f} ns/byte" if size_bytes else f"{'?':>10} ns/byte"
        peak_text = "?" if peak is None else f"{peak / 1024:.1f}"
        lines.append(f"  {name.removeprefix('hostile.'):<66} {size_bytes:>9} bytes {median:>12.1f} µs {per_byte}"
                     f"  peak +{peak_text:>6} MiB  {outcome}")
    return lines


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    folder = sys.argv[1]
    results, targets = load(folder)
    notes = load_notes(folder)
    lines, complete = table(results)
    print("Issue 14's table (ratio = peer's median time / Courier's, same run; mallocs per operation, median):")
    print()
    print("\n".join(lines))
    print("\n".join(details(results, targets, notes)))
    # A partial run (BENCH_FILTER, BENCH_TARGETS) leaves rows out on purpose; say so rather than fail.
    if not complete:
        print("\n(rows marked 'not run' had no benchmark in this run: BENCH_FILTER or BENCH_TARGETS left them out, "
              "or a benchmark failed)")
        return 0 if os.environ.get("BENCH_PARTIAL") else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
