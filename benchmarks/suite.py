"""The benchmark suite: every registered measurement side by side in one process, one command.

Rules
-----
Not a rules module. Units (the same for every entry; see :mod:`benchmarks.harness`):

* **decision**: one action chosen by one seat, claim-window passes included;
* **step**: one call of the environment's step function (one ``env.step``; for a vector env one batched step
  counts one step per table, so steps = decisions there);
* **hand**: one deal played to its end (a win or an exhaustive draw), reset included;
* **call**: one call of a scoring or shanten function (scorer entries only).

Specification in mjenv
----------------------
``python -m benchmarks.suite [--quick] [--seconds S] [--repeats R] [--only SUBSTR ...] [--out DIR] [--json PATH]`` runs
every entry of :data:`REGISTRY` (warm-up, ``R`` timed repeats of ``S`` seconds each, medians), shows a
progress bar, and writes to ``benchmarks/results/``:

* ``<date>.md``: machine, settings, unit definitions and a markdown table of every figure;
* ``<date>.json``: the same plus CPU model, core count, load average, Python/numpy/numba/platform versions,
  package versions, settings and every per-repeat figure;
* ``<date>.png``: decisions/s against batch size for entries with a ``batch_size`` (one line per ``series``),
  and every other entry with a decisions/s figure as a horizontal reference line.

``--quick`` writes ``<date>-quick.*`` so a smoke run never overwrites a full one. ``--json PATH`` writes the
JSON record to ``PATH`` too (the README's is ``benchmarks/results/readme.json``), and ``--readme-table PATH``
prints the README's performance table from such a record (:func:`readme_table`; ``tests/test_readme.py``
checks that the README holds exactly that table).

Registering a measurement
-------------------------
An entry is ``(name, fn)`` in :data:`REGISTRY`; ``fn(seconds=..., repeats=...)`` returns one result dict (see
:func:`benchmarks.harness.result`) or a list of them (e.g. one per batch size). Optional keys the suite uses:
``batch_size`` (int), ``series`` (line label for batch entries; default the name), ``threads``, ``compile_s``,
``bytes_per_table``. Missing packages give :func:`benchmarks.harness.skipped` results, which are listed, not
plotted. An entry that raises is recorded as skipped with the error, so one broken entry never loses the run.

A batched entry, for example (``play`` being whatever steps ``batch`` tables and counts what happened)::

    def measure_vector(seconds, repeats):
        rows = []
        for batch in (1, 64, 1024, 8192):
            def work(budget_s, batch=batch):
                done, c = until(budget_s), Counts()
                while not done():
                    play(batch, c)  # adds to c.decisions, c.steps, c.hands
                return c

            timing = measure(work, seconds=seconds, repeats=repeats)
            rows.append(result(f"VectorEnv masks-only b={batch}", version, timing, "...",
                               batch_size=batch, series="VectorEnv masks-only, 2 threads", threads=2))
        return rows

    REGISTRY.insert(0, ("VectorEnv masks-only", measure_vector))
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import others, ours
from benchmarks.harness import RESULT_KEYS, skipped

Measurement = Callable[..., "dict | list[dict]"]

#: every measurement the suite runs, in table order. mjenv's own entries (AEC env, vector env at several batch
#: sizes and thread counts, our scorer) go first when they exist; the third-party ones follow.
REGISTRY: list[tuple[str, Measurement]] = [
    *ours.ALL,
    *others.ALL,
]

RESULTS_DIR = Path(__file__).resolve().parent / "results"

DEFINITIONS = """\
- **decision**: one action chosen by one seat, claim-window passes included (a seat asked "claim or pass?"
  that passes has made a decision).
- **step**: one call of the environment's step function (one `env.step`; riichienv's dict step may carry
  several seats' claim answers; a vector env's batched step counts one step per table, so there
  steps = decisions).
- **hand**: one deal played to its end (a win or an exhaustive draw), reset included.
- **call**: one call of a scoring or shanten function (scorer entries only).
- **forced**: the share of decisions that had a single legal action (an env that asks every seat after every
  discard, even seats that can only pass, counts many of these).
- **cpu/wall**: median process CPU seconds per wall second of the timed repeats: about 1 for a single-threaded
  entry that had a core to itself, lower when other processes took the core (its figure is then pessimistic),
  up to the thread count for a parallel entry.
- **per CPU-s**: decisions (calls for scorers) per second of this process's CPU time, median over the repeats.
  For a single-threaded entry on a shared machine this is close to what it would do with a core to itself;
  for a parallel entry it is the throughput per core actually used.
- Random legal policy everywhere; its cost is included. Each figure is the median over the timed repeats,
  after an untimed warm-up (compile time, where there is one, is reported apart and excluded).
"""


# -------------------------------------------------------------------------------------------- machine info
def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _dist_version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def git_commit() -> str | None:
    """The short commit of the mjenv checkout measured (:func:`mjenv.arena.report.provenance`), with ``+dirty``
    when its tracked files differ from it; None outside git."""
    from mjenv.arena.report import provenance

    p = provenance()
    return None if p["commit"] is None else p["commit"][:7] + ("+dirty" if p["dirty"] else "")


def machine_info() -> dict:
    """CPU, cores, load, the commit and the versions that a throughput figure depends on."""
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        usable = os.cpu_count()
    try:
        load = list(os.getloadavg())
    except OSError:
        load = None
    return {
        "commit": git_commit(),
        "cpu_model": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpu_usable": usable,
        "loadavg_at_start": load,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "packages": {
            d: _dist_version(d)
            for d in (
                "numpy",
                "numba",
                "mjenv",
                "pettingzoo",
                "gymnasium",
                "rlcard",
                "riichienv",
                "PyMahjongGB",
                "matplotlib",
                "torch",
            )
        },
    }


# ------------------------------------------------------------------------------------------- README table
#: the README's performance rows: (label, entry name in the suite's results, figure key)
README_ROWS = (
    ("`VectorEnv`, 1024 tables, 2 threads, masks only", "VectorEnv masks-only b=1024 t=2", "decisions_per_s"),
    (
        "`VectorEnv`, 1024 tables, 2 threads, float32 observations",
        "VectorEnv obs b=1024 t=2",
        "decisions_per_s",
    ),
    ("PettingZoo AEC env `mjenv.env()`, one table", "mjenv AEC env (PettingZoo)", "decisions_per_s"),
    ("riichienv (Rust, Japanese mahjong), one table", "riichienv", "decisions_per_s"),
    ("RLCard mahjong, one table", "RLCard mahjong", "decisions_per_s"),
    (
        "PyMahjongGB `MahjongFanCalculator` (C++ scorer), calls",
        "PyMahjongGB MahjongFanCalculator",
        "calls_per_s",
    ),
)


def _host(machine: dict) -> str:
    cpu = str(machine.get("cpu_model") or "?").replace("(R)", "").replace("(TM)", "").replace("(tm)", "")
    cpu = " ".join(cpu.split())
    for brand in ("AMD EPYC", "Intel Xeon", "Apple", "AMD Ryzen", "Intel Core"):
        if brand.lower() in cpu.lower():
            cpu = brand
            break
    return f"{cpu}, {machine.get('cpu_usable', '?')} cores"


def readme_table(record: dict) -> str:
    """The README's performance table (<= 6 rows) from one record of ``python -m benchmarks.suite --json``:
    each row with its figure per second, the date, the commit and the host it was measured on. Rows whose entry
    was skipped or not run are left out."""
    by_name = {r["name"]: r for r in record["results"]}
    date = record["settings"]["date"]
    commit = record["machine"].get("commit") or "?"
    host = _host(record["machine"])
    lines = [
        "| what (random legal play) | per second | date | commit | host |",
        "| --- | ---: | --- | --- | --- |",
    ]
    for label, name, key in README_ROWS:
        r = by_name.get(name)
        if r is None or r.get(key) is None:
            continue
        lines.append(f"| {label} | {r[key]:,.0f} | {date} | `{commit}` | {host} |")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------------ running
def _normalise(name: str, out) -> list[dict]:
    rows = out if isinstance(out, list) else [out]
    clean = []
    for r in rows:
        if not isinstance(r, dict):
            raise TypeError(f"entry {name!r} returned {type(r).__name__}, expected a result dict")
        missing = [k for k in RESULT_KEYS if k not in r]
        if missing:
            raise TypeError(f"entry {name!r} result lacks keys {missing}")
        clean.append(r)
    return clean


def run_suite(
    registry: Sequence[tuple[str, Measurement]],
    *,
    seconds: float,
    repeats: int,
    only: Sequence[str] = (),
    progress: bool = True,
) -> list[dict]:
    """Run every entry of ``registry`` whose name contains one of ``only`` (all when empty).

    Returns
    -------
    list of dict
        The result dicts, in registry order (an entry that returned a list contributes every row). An entry
        that raised becomes a skipped row carrying the error.
    """
    if not (isinstance(seconds, (int, float)) and seconds > 0):
        raise ValueError(f"seconds must be > 0, got {seconds!r}")
    if not (isinstance(repeats, int) and repeats >= 1):
        raise ValueError(f"repeats must be an int >= 1, got {repeats!r}")
    chosen = [(n, f) for n, f in registry if not only or any(s.lower() in n.lower() for s in only)]
    if not chosen:
        raise ValueError(f"no registered measurement matches {list(only)}; have {[n for n, _ in registry]}")
    from tqdm import tqdm

    rows: list[dict] = []
    bar = tqdm(chosen, desc="benchmarks", unit="entry", disable=not progress, file=sys.stderr)
    for name, fn in bar:
        bar.set_postfix_str(name)
        try:
            rows += _normalise(name, fn(seconds=seconds, repeats=repeats))
        except Exception as e:  # noqa: BLE001 - one broken entry must not lose the others' figures
            row = skipped(name, f"error: {type(e).__name__}: {e}")
            row["traceback"] = traceback.format_exc()
            rows.append(row)
        if progress:
            last = rows[-1]
            rate = last.get("decisions_per_s") or last.get("calls_per_s")
            bar.write(f"  {last['name']}: " + (f"{rate:,.0f}/s" if rate else f"skipped ({last['skipped']})"))
    return rows


# ------------------------------------------------------------------------------------------------ writing
def _fmt(v, digits: int = 0) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:,.{digits}f}"
    return str(v)


def _spread(r: dict, key: str) -> str:
    vals = [p[key] for p in r.get("per_repeat") or [] if p.get(key)]
    if len(vals) < 2:
        return ""
    return f" ({min(vals):,.0f}-{max(vals):,.0f})"


def _forced(r: dict) -> str:
    """Share of decisions that had a single legal action (claim windows that ask seats who can only pass)."""
    forced = (r.get("n_extra") or {}).get("forced_decisions")
    n = (r.get("n") or {}).get("decisions")
    return f"{100 * forced / n:.0f}%" if forced is not None and n else "-"


def markdown(rows: list[dict], info: dict, settings: dict) -> str:
    """The results page: header (machine, settings, definitions), one table row per result, notes, skips."""
    lines = [
        f"# mjenv benchmark suite - {settings['date']}",
        "",
        (
            f"Machine: {info['cpu_model']}, {info['cpu_usable']} usable cores of {info['cpu_count']}, "
            f"load average at start {info['loadavg_at_start']}; {info['platform']}; Python {info['python']}, "
            f"numpy {info['packages']['numpy']}, numba {info['packages']['numba']}."
        ),
        "",
        (
            f"Settings: {settings['repeats']} timed repeats of {settings['seconds']} s per entry after a "
            "warm-up"
            f"{' (--quick)' if settings['quick'] else ''}; command `{settings['command']}`."
        ),
        "",
        "Definitions:",
        "",
        DEFINITIONS,
        (
            "| entry | version | batch | threads | decisions/s (min-max) | forced | steps/s | hands/s "
            "| calls/s | per CPU-s | cpu/wall | notes |"
        ),
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    notes: dict[str, int] = {}
    for r in rows:
        if r["skipped"]:
            continue
        ref = ""
        if r.get("notes"):
            ref = f"[{notes.setdefault(r['notes'], len(notes) + 1)}]"
        lines.append(
            f"| {r['name']} | {_fmt(r['version'])} | {_fmt(r.get('batch_size'))} | {_fmt(r.get('threads'))} "
            f"| {_fmt(r['decisions_per_s'])}{_spread(r, 'decisions_per_s')} | {_forced(r)} "
            f"| {_fmt(r['steps_per_s'])} "
            f"| {_fmt(r['hands_per_s'], 1)} | {_fmt(r['calls_per_s'])}{_spread(r, 'calls_per_s')} "
            f"| {_fmt(r.get('decisions_per_cpu_s') or r.get('calls_per_cpu_s'))} "
            f"| {_fmt(r.get('cpu_per_wall'), 2)} | {ref} |"
        )
    if notes:
        lines += ["", "Notes:", ""]
        lines += [f"{i}. {text}" for text, i in notes.items()]
    skips = [r for r in rows if r["skipped"]]
    if skips:
        lines += ["", "Skipped:", ""]
        lines += [f"- {r['name']}: {r['skipped']}" for r in skips]
    return "\n".join(lines) + "\n"


def plot(rows: list[dict], path: Path, title: str) -> bool:
    """Draw decisions/s against batch size.

    Returns False (and draws nothing) when no row has decisions/s or matplotlib is missing.
    """
    drawable = [r for r in rows if not r["skipped"] and r.get("decisions_per_s")]
    if not drawable:
        return False
    try:
        import matplotlib
    except ImportError:
        print("no plot: matplotlib is not installed (pip install -e '.[bench]')", file=sys.stderr)
        return False
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5), dpi=120)
    series: dict[str, list[tuple[int, float]]] = {}
    refs = []
    for r in drawable:
        if r.get("batch_size") is not None:
            series.setdefault(r.get("series") or r["name"], []).append(
                (int(r["batch_size"]), r["decisions_per_s"])
            )
        else:
            refs.append(r)
    for label, pts in series.items():
        pts.sort()
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
    if not series:  # only reference lines: give them a nominal batch axis
        ax.set_xlim(1, 10_000)
    ax.set_xscale("log")
    ax.set_yscale("log")
    styles = ["--", ":", "-.", (0, (5, 1, 1, 1))]
    for i, r in enumerate(refs):
        ax.axhline(
            r["decisions_per_s"],
            linestyle=styles[i % len(styles)],
            color=f"C{(len(series) + i) % 10}",
            label=f"{r['name']} ({r['decisions_per_s']:,.0f}/s)",
        )
    ys = [r["decisions_per_s"] for r in drawable]
    ax.set_ylim(min(ys) / 2, max(ys) * 2)
    ax.set_xlabel("batch size (tables stepped together)")
    ax.set_ylabel("decisions / s (median)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return True


def write_results(rows: list[dict], info: dict, settings: dict, out_dir: Path) -> dict[str, Path]:
    """Write ``<stem>.md``, ``<stem>.json`` and (when anything is drawable) ``<stem>.png`` in ``out_dir``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = settings["date"] + ("-quick" if settings["quick"] else "")
    paths = {"md": out_dir / f"{stem}.md", "json": out_dir / f"{stem}.json", "png": out_dir / f"{stem}.png"}
    paths["md"].write_text(markdown(rows, info, settings), encoding="utf-8")
    record = {"machine": info, "settings": settings, "definitions": DEFINITIONS, "results": rows}
    paths["json"].write_text(json.dumps(record, indent=1, default=str) + "\n", encoding="utf-8")
    if not plot(rows, paths["png"], f"Random legal play, {info['cpu_usable']} cores - {settings['date']}"):
        del paths["png"]
    return paths


def main(argv: list[str] | None = None, registry: Sequence[tuple[str, Measurement]] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.suite", description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="smoke run: 0.3 s x 2 repeats unless given")
    p.add_argument(
        "--seconds", type=float, default=None, help="budget of each timed repeat (default 2, quick 0.3)"
    )
    p.add_argument("--repeats", type=int, default=None, help="timed repeats per entry (default 5, quick 2)")
    p.add_argument("--only", nargs="*", default=[], help="run only entries whose name contains one of these")
    p.add_argument("--out", type=Path, default=RESULTS_DIR, help="output folder (default benchmarks/results)")
    p.add_argument("--date", default=None, help="file stem date (default today, UTC, YYYY-MM-DD)")
    p.add_argument("--list", action="store_true", help="list registered entries and exit")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--json", type=Path, default=None, help="also write the JSON record to this path")
    p.add_argument(
        "--readme-table", type=Path, default=None, metavar="JSON",
        help="print the README's performance table from a record written by --json, and exit",
    )  # fmt: skip
    args = p.parse_args(argv)
    if args.readme_table is not None:
        print(readme_table(json.loads(args.readme_table.read_text(encoding="utf-8"))), end="")
        return 0
    registry = REGISTRY if registry is None else registry
    if args.list:
        for name, _ in registry:
            print(name)
        return 0
    seconds = args.seconds if args.seconds is not None else (0.3 if args.quick else 2.0)
    repeats = args.repeats if args.repeats is not None else (2 if args.quick else 5)
    if seconds <= 0 or repeats < 1:
        p.error("--seconds must be > 0 and --repeats >= 1")
    date = args.date or _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d")
    settings = {
        "date": date,
        "started_utc": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "quick": args.quick,
        "seconds": seconds,
        "repeats": repeats,
        "only": args.only,
        "command": " ".join(["python -m benchmarks.suite", *(argv if argv is not None else sys.argv[1:])]),
    }
    info = machine_info()
    t0 = time.perf_counter()
    try:
        rows = run_suite(
            registry, seconds=seconds, repeats=repeats, only=args.only, progress=not args.no_progress
        )
    except ValueError as e:
        p.error(str(e))
    settings["wall_s"] = time.perf_counter() - t0
    paths = write_results(rows, info, settings, args.out)
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(paths["json"].read_text(encoding="utf-8"), encoding="utf-8")
        paths["json_copy"] = args.json
    print(paths["md"].read_text(encoding="utf-8"))
    print("wrote " + ", ".join(str(v) for v in paths.values()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
