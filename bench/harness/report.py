"""Turns bench/results/*.json into bench/RESULTS.md (a table per scenario, the goals of issue 6)
and PNG plots (throughput against threads, zarrkit's ratio per codec)."""

from __future__ import annotations

import json
import math
import os
from collections import defaultdict
from pathlib import Path

from scenarios import DESCRIPTIONS, SCENARIOS

PEER_ORDER = ["zarrkit", "codecs", "tensorstore", "zarrs", "zarr", "memmap", "h5py"]
PEER_COLORS = {"tensorstore": "tab:blue", "zarrs": "tab:orange", "zarr": "tab:green", "memmap": "tab:red",
               "h5py": "tab:purple", "zarrkit": "black", "codecs": "tab:gray"}
PEER_NAMES = {"zarrkit": "zarrkit", "codecs": "zarrkit's codecs alone", "tensorstore": "tensorstore",
              "zarrs": "zarr-python + zarrs", "zarr": "zarr-python 3", "memmap": "numpy.memmap + copy", "h5py": "h5py"}
# Not a peer: the floor zarrkit_bench measures for the same job (the codec chain alone, from
# and into memory; bench/README.md). Left out of the ratio plots, shown in the tables.
FLOORS = {"codecs"}

HEADER = """# Benchmark results

Produced by `bench/run` (bench/README.md says how). Every figure that counts is a ratio:
zarrkit against a peer, same files, same machine, same run, same thread count. Absolute times
drift with the machine's load; ratios much less so. Reads into device memory are in
[results/GPU.md](results/GPU.md); builds compared side by side (an engine change, old against
new, same run) in [results/ONE-ENGINE.md](results/ONE-ENGINE.md); several GPUs of one host in
[results/MULTI-GPU.md](results/MULTI-GPU.md).

How to read the tables:
- **median s** of the timed repetitions, **spread** their min-max. `in-process`: the operation
  alone, in a child process that has already imported its library and opened the array;
  `process`: a whole child process (start, import, open, the operation, exit).
- **GB/s**: logical bytes (decoded array bytes read or written) per second. A round trip counts
  the array once.
- **zarrkit x**: the peer's median time over zarrkit's (above 1: zarrkit is faster).
- **thr (cores)**: the thread count every peer was given and, in runs that show cores, pinned
  to (each child runs on that many CPUs), and in brackets the cores it kept busy on average
  over the timed repetitions (its CPU time, all threads, over the wall time).
- **zarrkit's codecs alone**: not a peer but a floor: the same job's chunks decoded and/or
  encoded by zarrkit's codec chain from and into memory, on the same threads, with no store,
  no gathering and no copy into an output; zarrkit's time over it is about what the rest
  costs (bench/README.md says why it is not a strict bound).
- **peak RSS**: the child's peak resident set (VmHWM of /proc/self/status); for whole reads, in brackets, the
  peak above the resident set before the first read, over the output's size.
- **p50 / p99**: per unit (one crop, one chunk, one batch) in the last repetition.
- **on disk**: the array's stored size and compression ratio; for writes and round trips, what
  that peer wrote (codec libraries of different versions compress the same values differently).
- **ok**: every read's checksum matched the raw values; every write, read back by tensorstore,
  matched them.
"""


def fmt_time(s):
    return f"{s * 1e3:.1f} ms" if s < 1 else f"{s:.2f} s"


def peer_rank(p):
    return PEER_ORDER.index(p) if p in PEER_ORDER else 99


def config_key(r):
    return (r["scenario"], r["case"], r["dataset"], r["variant"], r["threads"], r["cache"], r["mode"])


def zarrkit_index(records):
    return {config_key(r): r for r in records if r["peer"] == "zarrkit" and not r["error"]}


def ratio(r, index):
    z = index.get(config_key(r))
    if z is None or r["error"]:
        return None
    return r["median"] / z["median"]


def table(records, index) -> list[str]:
    lines = ["| case | data, codec, chunks | peer | thr (cores) | cache | mode | median | spread | GB/s | zarrkit x "
             "| p50 / p99 | peak RSS MiB | on disk MiB (ratio) | ok |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    ordered = sorted(records, key=lambda r: (r["case"], r["dataset"], r["variant"], r["mode"], r["cache"],
                                             r["threads"], peer_rank(r["peer"])))
    for r in ordered:
        data = f"{r['dataset']}: {r['label']}"
        threads = str(r["threads"])
        if r.get("threads_used") and r["threads_used"] != r["threads"]:
            threads += f" (uses {r['threads_used']})"
        if r.get("cores_busy") is not None:
            threads += f" ({r['cores_busy']:.1f})"
        if r["error"]:
            lines.append(f"| {r['case']} | {data} | {PEER_NAMES[r['peer']]} | {threads} | {r['cache']} | {r['mode']} "
                         f"| - | - | - | - | - | - | - | error: {r['error'][:120].replace('|', '/')} |")
            continue
        x = ratio(r, index)
        xs = "1" if r["peer"] == "zarrkit" else (f"{x:.2f}" if x else "-")
        units = (f"{r['unit_p50'] * 1e3:.2f} / {r['unit_p99'] * 1e3:.2f} ms" if "unit_p50" in r else "")
        rss = f"{r['peak_rss'] / 2**20:.0f}"
        if r["op"] == "read_all" and r["mode"] == "in-process":
            extra = (r["peak_rss"] - r["rss_before"]) / r["logical_bytes"]
            rss += f" ({extra:.2f}x)"
        disk = ""
        if r.get("bytes_on_disk"):
            disk = f"{r['bytes_on_disk'] / 2**20:.1f} ({r['dataset_bytes'] / r['bytes_on_disk']:.1f})"
        lines.append(f"| {r['case']} | {data} | {PEER_NAMES[r['peer']]} | {threads} | {r['cache']} | {r['mode']} "
                     f"| {fmt_time(r['median'])} | {fmt_time(r['min'])}-{fmt_time(r['max'])} | {r['gbps']:.2f} "
                     f"| {xs} | {units} | {rss} | {disk} | {'yes' if r['ok'] else 'NO'} |")
    return lines


def geomean(values):
    values = [v for v in values if v]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


GOALS = [
    # (text, scenarios, case names, peer, target)
    ("read all (S1, S2, S5), geometric mean over codecs", {"S1", "S2", "S5"}, {"read all"}, "tensorstore", 2.0),
    ("read all (S1, S2, S5), geometric mean over codecs", {"S1", "S2", "S5"}, {"read all"}, "zarrs", 1.3),
    ("read all (S1, S2, S5), geometric mean over codecs", {"S1", "S2", "S5"}, {"read all"}, "zarr", 5.0),
    ("chunk by chunk, several in flight (S1)", {"S1"}, {"chunk by chunk"}, "tensorstore", 4.0),
    ("round trip (S8)", {"S8"}, {"round trip"}, "tensorstore", 4.0),
    ("uncompressed whole read (S3)", {"S3"}, {"read all"}, "memmap", 0.9),
    ("uncompressed random crops (S3)", {"S3"}, None, "h5py", 2.0),
    ("writes (S2, S8)", {"S2", "S8"}, {"write all"}, "tensorstore", 2.0),
]


def goals(records, index, threads) -> list[str]:
    lines = [f"Warm page cache, in-process, {threads} threads; zarrkit's speed over the peer's "
             "(geometric mean over the codecs and data families measured).", "",
             "| goal | against | target | measured | met | cases |", "|---|---|---|---|---|---|"]
    for text, scen, names, peer, target in GOALS:
        chosen = [r for r in records if r["scenario"] in scen and r["peer"] == peer and r["cache"] == "warm"
                  and r["mode"] == "in-process" and r["threads"] == threads
                  and (names is None and r["op"] == "selections" or names is not None and r["case"] in names)]
        ratios = [ratio(r, index) for r in chosen]
        g = geomean(ratios)
        if g is None:
            continue
        met = "yes" if g >= target else f"no: {g / target:.2f} of the target"
        lines.append(f"| {text} | {PEER_NAMES[peer]} | >= {target}x | {g:.2f}x | {met} | {sum(1 for x in ratios if x)} |")
    return lines


def plots(results_dir: Path, link: str, label: str, records, index, threads) -> list[str]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return ["(matplotlib is not installed: no plots)"]
    made = []
    # Throughput against threads, for every case measured at more than one thread count.
    series = defaultdict(lambda: defaultdict(dict))
    for r in records:
        if r["error"] or r["cache"] != "warm" or r["mode"] != "in-process":
            continue
        series[(r["scenario"], r["case"], r["dataset"], r["label"])][r["peer"]][r["threads"]] = r["gbps"]
    swept = {k: v for k, v in series.items() if any(len(p) > 1 for p in v.values())}
    if swept:
        keys = sorted(swept)
        cols = 3
        rows = math.ceil(len(keys) / cols)
        fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 3.6 * rows), squeeze=False)
        for ax, key in zip(axes.flat, keys):
            for peer in sorted(swept[key], key=peer_rank):
                pts = sorted(swept[key][peer].items())
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=PEER_NAMES[peer],
                        color=PEER_COLORS.get(peer))
            ax.set_xscale("log", base=2)
            ax.set_title(f"{key[0]} {key[1]}: {key[2]}\n{key[3]}", fontsize=8)
            ax.set_xlabel("threads")
            ax.set_ylabel("GB/s")
            ax.grid(alpha=0.3)
        for ax in list(axes.flat)[len(keys):]:
            ax.axis("off")
        axes.flat[0].legend(fontsize=7)
        fig.tight_layout()
        name = f"{label}-threads.png"
        fig.savefig(results_dir / name, dpi=80)
        plt.close(fig)
        made.append(f"![throughput against threads]({link}/{name})")
    # zarrkit's ratio per codec, one panel per scenario.
    panels = defaultdict(lambda: defaultdict(dict))
    for r in records:
        if r["error"] or r["peer"] == "zarrkit" or r["peer"] in FLOORS or r["cache"] != "warm" \
                or r["mode"] != "in-process" or r["threads"] != threads:
            continue
        x = ratio(r, index)
        if x:
            panels[r["scenario"]][f"{r['case']}\n{r['dataset']}: {r['label']}"][r["peer"]] = x
    if panels:
        scen = [s for s in SCENARIOS if s in panels]
        heights = [max(2.0, 0.28 * len(panels[s]) * max(1, len({p for g in panels[s].values() for p in g})) / 2)
                   for s in scen]
        fig, axes = plt.subplots(len(scen), 1, figsize=(11, sum(heights) + 1.0 * len(scen)), squeeze=False,
                                 gridspec_kw={"height_ratios": heights})
        for ax, s in zip(axes.flat, scen):
            groups = sorted(panels[s])
            peers = sorted({p for g in groups for p in panels[s][g]}, key=peer_rank)
            width = 0.8 / max(1, len(peers))
            for i, peer in enumerate(peers):
                ax.barh([g + i * width for g in range(len(groups))],
                        [panels[s][g].get(peer, 0) for g in groups], width, label=PEER_NAMES[peer],
                        color=PEER_COLORS.get(peer))
            ax.axvline(1.0, color="black", linewidth=0.8)
            ax.set_xscale("log")
            ax.set_yticks([g + 0.4 - width / 2 for g in range(len(groups))])
            ax.set_yticklabels([g.replace("\n", " | ") for g in groups], fontsize=7)
            ax.invert_yaxis()
            ax.set_xlabel("zarrkit's speed over the peer (log; right of the line: zarrkit faster)", fontsize=8)
            ax.set_title(f"{s}: {DESCRIPTIONS[s]}", fontsize=9)
            ax.legend(fontsize=7, loc="lower right")
            ax.grid(axis="x", alpha=0.3, which="both")
        fig.tight_layout()
        fig.subplots_adjust(left=0.34)
        name = f"{label}-ratios.png"
        fig.savefig(results_dir / name, dpi=80)
        plt.close(fig)
        made.append(f"![zarrkit's speed over each peer, per codec]({link}/{name})")
    return made


def section(results_dir: Path, link: str, data: dict) -> list[str]:
    meta, records = data["meta"], data["records"]
    m = meta["machine"]
    index = zarrkit_index(records)
    threads = meta["threads"]
    lines = [f"## {meta['label']}: `--size {meta['size']}`", "",
             f"- command: `{meta['command']}`",
             f"- when: {meta['date']}, commit {meta['commit']}, {meta.get('elapsed_s', '?')} s in all",
             f"- machine: {m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB, {m['os']}, kernel {m['kernel']}, "
             f"Python {m['python']}" + (f", GPU {m['gpu']}" if m.get("gpu") else "") + f"; data on {m['data_fs']}",
             f"- threads: {threads} for every peer" + (f"; also {meta['sweep']} threads for the cases matching {meta.get('sweep_cases')}"
                                                  if meta["sweep"] else ""),
             f"- {meta['reps']} timed repetitions per measurement after one warm-up; {meta['cache_note']}"]
    versions = sorted({(r["peer"], r["version"]) for r in records if not r["error"]}, key=lambda x: peer_rank(x[0]))
    lines.append("- versions: " + "; ".join(f"{PEER_NAMES[p]} {v}" for p, v in versions))
    if meta.get("stopped"):
        lines.append(f"- {meta['stopped']}")
    if meta.get("notes"):
        lines += ["", meta["notes"]]
    lines += ["", "### Goals (issue 6)", ""] + goals(records, index, threads)
    lines += ["", "### Plots", ""] + plots(results_dir, link, meta["label"], records, index, threads)
    by_scenario = defaultdict(list)
    for r in records:
        by_scenario[r["scenario"]].append(r)
    for s in SCENARIOS:
        if s not in by_scenario:
            continue
        notes = sorted({r["note"] for r in by_scenario[s] if r.get("note")})
        lines += ["", f"### {s}: {DESCRIPTIONS[s]}", ""]
        lines += [f"- {n}" for n in notes]
        lines += [""] + table(by_scenario[s], index)
    return lines


def write(results_dir: Path, out: Path) -> None:
    parts = [HEADER]
    preface = results_dir / "NOTES.md"
    if preface.exists():
        parts.append(preface.read_text())
    order = {"full": 0, "quick": 1}
    files = sorted(results_dir.glob("*.json"), key=lambda p: (order.get(p.stem, 2), p.stem))
    for f in files:
        link = os.path.relpath(results_dir, out.parent)
        parts.append("\n".join(section(results_dir, link, json.loads(f.read_text()))))
    out.write_text("\n\n".join(parts) + "\n")


if __name__ == "__main__":
    # Rewrites bench/RESULTS.md from bench/results/*.json (after copying in a device run's file).
    bench = Path(__file__).resolve().parent.parent
    write(bench / "results", bench / "RESULTS.md")
