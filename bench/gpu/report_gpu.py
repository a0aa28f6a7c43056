"""Markdown tables of one GPU session's S6, S7 and S10 results (what
tools/gpu_bench/device_session.sh leaves in $OUT), with ratios against the peers.

  python bench/gpu/report_gpu.py s7.json bench.jsonl > tables.md
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from typing import Any


def fmt(v: Any, digits: int = 2) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def s7_table(s7: dict[str, Any]) -> list[str]:
    lines = [
        f"S7, kernel-only batched decode, {s7['total_mib']} MiB of family-N float32 per batch, {s7['device']}, "
        f"median of {s7['reps']} (CUDA events); CPU: {s7['host_threads']} threads.",
        "",
        "| codec | chunk KiB | chunks | ratio | zarrkit GPU GB/s | nvCOMP GB/s | zarrkit / nvCOMP | CPU GB/s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in s7["rows"]:
        z, n = r.get("zarrkit_gbs"), r.get("nvcomp_gbs")
        ratio = f"{z / n:.2f}x" if z and n else "-"
        lines.append(f"| {r['codec']} | {r['chunk_kib']} | {r['chunks']} | {fmt(r['ratio'])} | {fmt(z, 1)} | {fmt(n, 1)} "
                     f"| {ratio} | {fmt(r.get('cpu_gbs'), 1)} |")
    return lines


def reads_table(rows: list[dict[str, Any]], scenario: str) -> list[str]:
    by_case: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    order: list[str] = []
    for r in rows:
        if r.get("scenario") != scenario:
            continue
        if r["case"] not in by_case:
            order.append(r["case"])
        by_case[r["case"]][r["peer"]] = r
    lines = [
        "| case | ratio | peer | median s | spread s | logical GB/s | zarrkit x | ok |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for case in order:
        peers = by_case[case]
        base = peers.get("zarrkit") or peers.get("zarrkit (host)")
        for name, r in peers.items():
            if "error" in r:
                lines.append(f"| {case} | | {name} | | | | | {r['error'][:120]} |")
                continue
            # The host reads of S10 compare with zarrkit's host read, device reads with its device read.
            ref = peers.get("zarrkit (host)") if "(host)" in name else base
            x = ref["median_s"] and r["median_s"] / ref["median_s"] if ref and "median_s" in ref else None
            lines.append(
                f"| {case} | {fmt(r.get('ratio'))} | {name} | {r['median_s']:.4f} | {r['min_s']:.4f}-{r['max_s']:.4f} "
                f"| {r['gbs']:.2f} | {fmt(x)} | {r.get('ok')} |")
    return lines


def main() -> int:
    s7 = json.load(open(sys.argv[1])) if len(sys.argv) > 1 and sys.argv[1] != "-" else None
    rows = [json.loads(line) for line in open(sys.argv[2])] if len(sys.argv) > 2 else []
    env = next((r for r in rows if r.get("scenario") == "environment"), None)
    if env:
        print("Environment: " + ", ".join(f"{k} {v}" for k, v in env.items() if k != "scenario"))
        print()
    if s7:
        print("\n".join(s7_table(s7)))
        print()
    for scenario in ("S6", "S10"):
        if any(r.get("scenario") == scenario for r in rows):
            print(f"{scenario}:")
            print()
            print("\n".join(reads_table(rows, scenario)))
            print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
