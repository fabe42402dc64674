#!/usr/bin/env python3
"""Reads a `cargo build --timings` report: the crates that cost most, what
pulls each one in, the critical path, and the cost of each group of crates.

Usage: python3 tools/build_timings.py target/cargo-timings/cargo-timing.html [--top 20] [--markdown]
(run from the workspace root: `cargo metadata` names what pulls each crate in).

Times are each unit's wall-clock seconds as cargo measured them on the
machine that built it; with two cores, two units overlap, so the sum of the
units is about twice the build's wall-clock.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import subprocess
from pathlib import Path

# Groups of crates, by name prefix; the first match wins.
GROUPS = [
    ("bevy (viewer)", ("bevy", "x11rb", "winit", "naga_oil", "accesskit", "cosmic-text", "swash", "skrifa", "read-fonts", "font-types", "fontdb", "taffy")),
    ("burn wgpu backend (cubecl, cubek)", ("cubecl", "cubek", "burn-cubecl", "burn-wgpu", "pliron", "tracel", "nvml")),
    ("burn (flex, autodiff, nn, optim)", ("burn", "gemm", "pulp", "macerator")),
    ("wgpu + naga", ("wgpu", "naga", "spirv", "ash", "glow", "khronos", "gpu-")),
    ("rapier + parry + nalgebra", ("rapier", "parry", "nalgebra", "simba", "glamx", "wide", "urdf")),
    ("proprio crates", ("proprio", "feature-pins")),
]


def units(report: Path) -> list[dict]:
    text = report.read_text()
    match = re.search(r"const UNIT_DATA = (\[.*?\]);\n", text, re.S)
    if not match:
        raise SystemExit(f"{report}: no UNIT_DATA (is it a cargo --timings report?)")
    return json.loads(match.group(1))


def pulled_in_by(names: set[tuple[str, str]], built: set[str]) -> dict[tuple[str, str], str]:
    """For each crate name, a shortest chain to it from one of our crates,
    through crates this build compiled, normal dependencies first."""
    meta = json.loads(subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--locked"],
        check=True, capture_output=True, text=True,
    ).stdout)
    by_id = {p["id"]: p["name"] for p in meta["packages"]}
    version = {p["id"]: p["version"] for p in meta["packages"]}
    members = [m for m in meta["workspace_members"] if by_id[m] != "feature-pins"]
    out: dict[tuple[str, str], str] = {}
    for kinds in ({None, "build"}, {None, "build", "dev"}):
        edges = {
            n["id"]: [
                d["pkg"] for d in n["deps"]
                if by_id[d["pkg"]] in built and any(k["kind"] in kinds for k in d["dep_kinds"])
            ]
            for n in meta["resolve"]["nodes"]
        }
        chain = {m: [by_id[m]] for m in members}
        queue = collections.deque(members)
        while queue:
            node = queue.popleft()
            for dep in edges.get(node, []):
                if dep not in chain:
                    chain[dep] = chain[node] + [by_id[dep]]
                    queue.append(dep)
        for pkg_id, path in chain.items():
            key = (by_id[pkg_id], version[pkg_id])
            if key in names and key not in out:
                out[key] = " → ".join(path[:-1][-3:]) if len(path) > 1 else "(ours)"
    return out


def group(name: str) -> str:
    for label, prefixes in GROUPS:
        if name.startswith(prefixes):
            return label
    return "everything else"


def critical_path(data: list[dict]) -> tuple[float, list[dict]]:
    """The longest chain of units each waiting for the one before (its length
    is the build's wall-clock with unlimited cores, at these unit times)."""
    by_index = {u["i"]: u for u in data}
    waits_for = collections.defaultdict(list)  # unit -> (unit it waits for, seconds into that unit)
    for u in data:
        for j in u["unblocked_units"]:
            waits_for[j].append((u["i"], u["duration"]))
        for j in u["unblocked_rmeta_units"]:
            frontend = dict(u["sections"] or []).get("frontend", {})
            waits_for[j].append((u["i"], frontend.get("end", u["duration"])))
    ready: dict[int, tuple[float, int | None]] = {}  # unit -> (earliest start, unit it waited for)

    def start(i: int) -> float:
        if i not in ready:
            best = (0.0, None)
            for k, offset in waits_for.get(i, []):
                best = max(best, (start(k) + offset, k), key=lambda pair: pair[0])
            ready[i] = best
        return ready[i][0]

    last = max(data, key=lambda u: start(u["i"]) + u["duration"])
    length = start(last["i"]) + last["duration"]
    path, i = [], last["i"]
    while i is not None:
        path.append(by_index[i])
        i = ready[i][1]
    return length, path[::-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--markdown", action="store_true", help="tables for docs/benchmarks.md")
    args = parser.parse_args()
    data = units(args.report)
    wall = max(u["start"] + u["duration"] for u in data)
    total = sum(u["duration"] for u in data)
    top = sorted(data, key=lambda u: -u["duration"])[: args.top]
    via = pulled_in_by({(u["name"], u["version"]) for u in top}, {u["name"] for u in data})
    twice = {n for n, c in collections.Counter(u["name"] for u in data if not u["target"].strip()).items() if c > 1}

    def label(u: dict) -> str:
        target = u["target"].strip()
        name = f"{u['name']} {u['version']}" if u["name"] in twice else u["name"]
        return name + (f" ({target})" if target else "")

    print(f"{len(data)} units, {wall:.0f} s wall-clock, {total:.0f} s of unit time\n")
    if args.markdown:
        print("| crate | s | pulled in by |\n|---|---:|---|")
        for u in top:
            print(f"| {label(u)} | {u['duration']:.0f} | {via.get((u['name'], u['version']), '')} |")
    else:
        for u in top:
            print(f"{label(u):<40} {u['duration']:>7.1f} s   {via.get((u['name'], u['version']), '')}")
    sums = collections.Counter()
    for u in data:
        sums[group(u["name"])] += u["duration"]
    print("\ngroup, s of unit time (share)")
    for name, seconds in sums.most_common():
        print(f"  {name:<36} {seconds:>7.0f}  {seconds / total:>5.0%}")
    length, path = critical_path(data)
    print(f"\ncritical path: {length:.0f} s with unlimited cores, against {wall:.0f} s on this machine; its units of 5 s or more:")
    print("  " + " → ".join(f"{label(u)} {u['duration']:.0f} s" for u in path if u["duration"] >= 5))


if __name__ == "__main__":
    main()
