"""An open-ended differential fuzzing campaign: worker processes check bundles of random
programs (worker.py); this driver hands out seed chunks, restarts workers that die or
hang, and writes a report. Workers share DIR/runtime-cache, a disk cache of the runtime's
own objects only (programs are never cached: worker.py), and stop at the deadline.

  .venv/bin/python tests/fuzz/campaign.py [--seconds 600] [--programs N] [--workers 2]
        [--generators hlo,jax] [--bundle 6] [--chunk 100] [--start-seed S] [--out DIR]
        [--backends gpu --reference interpreter-ieee]   (a GPU's campaign: harness.py)
  .venv/bin/python tests/fuzz/campaign.py --report DIR     (report of logs already there)

Seeds: generator g's bundle k uses seed start + k, so two campaigns with different
--start-seed check different programs, and any finding replays from its seed alone
(triage.py --seed N --generator g).

A worker that dies (a signal: SIGSEGV, SIGFPE, an abort) is a crash of the bundle it had
started; one that logs nothing for --hang-seconds is a hang; both are recorded with the
seed and the worker is restarted on the next seed. Each worker process checks one chunk of
seeds and exits, so memory a compile leaves behind does not pile up.

The report (DIR/report.json and DIR/report.md): programs, modules, ops and element types
covered, findings by kind (mismatch, error, crash, parse, hang), the explained differences
by reason, skipped modules (XLA rejected them), and throughput.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import pathlib
import signal
import subprocess
import sys
import time

FUZZ_DIR = pathlib.Path(__file__).resolve().parents[1]
REPO = FUZZ_DIR.parents[1]


class Slot:
    """One worker process and the seeds it is checking."""

    def __init__(self, index: int):
        self.index = index
        self.proc: subprocess.Popen | None = None
        self.generator = ""
        self.next_seed = 0
        self.last_seed = 0
        self.log: pathlib.Path | None = None
        self.log_size = 0
        self.last_progress = 0.0


def _last_started(log: pathlib.Path) -> tuple[int | None, set]:
    started, done = None, set()
    if not log.exists():
        return None, done
    for line in log.read_text().splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if "start" in rec:
            started = rec["start"]
        elif "seed" in rec:
            done.add(rec["seed"])
    return started, done


def run(args) -> pathlib.Path:
    out = pathlib.Path(args.out)
    (out / "logs").mkdir(parents=True, exist_ok=True)
    (out / "cases").mkdir(exist_ok=True)
    generators = args.generators.split(",")
    next_seed = {g: args.start_seed for g in generators}
    deadline = time.monotonic() + args.seconds
    until = time.time() + args.seconds  # (workers stop starting bundles then)
    slots = [Slot(i) for i in range(args.workers)]
    events = open(out / "events.jsonl", "a", buffering=1)
    (out / "checked.json").write_text(json.dumps({
        "backends": args.backends or "interpreter,cpu,cpu-nofusion",
        "reference": args.reference}))
    env = dict(os.environ, PYTHONPATH=str(FUZZ_DIR), XLAPY_DISABLE_CACHE="1")
    turn = 0
    programs_target = args.programs

    counted = [0.0, 0]

    def programs_done() -> int:  # (re-read every 20 s: the logs grow long)
        if time.monotonic() - counted[0] > 20:
            counted[:] = [time.monotonic(), sum(r.get("programs", 0) for r in _records(out)
                                                if not r.get("skipped"))]
        return counted[1]

    def launch(slot: Slot, first: int | None = None):
        nonlocal turn
        if first is None:
            g = generators[turn % len(generators)]
            turn += 1
            first = next_seed[g]
            next_seed[g] += args.chunk
            slot.generator, slot.next_seed, slot.last_seed = g, first, first + args.chunk
        slot.log = out / "logs" / f"{slot.generator}_{first}.jsonl"
        slot.proc = subprocess.Popen(
            [sys.executable, "-m", "fuzzlib.worker", "--generator", slot.generator,
             "--seeds", f"{first}:{slot.last_seed}", "--bundle", str(args.bundle),
             "--log", str(slot.log), "--cases", str(out / "cases"),
             f"--runtime-cache={out / 'runtime-cache'}", "--until", str(until),
             "--reference", args.reference,
             *(["--backends", args.backends] if args.backends else [])],
            cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=open(
                out / "logs" / f"{slot.generator}_{first}.stderr", "ab"),
            start_new_session=True)
        slot.log_size = 0
        slot.last_progress = time.monotonic()

    def resume_after(slot: Slot, kind: str, detail: str):
        started, _ = _last_started(slot.log)
        events.write(json.dumps({"kind": kind, "generator": slot.generator, "seed": started,
                                 "detail": detail}) + "\n")
        if started is not None and started + 1 < slot.last_seed:
            launch(slot, started + 1)
        else:
            slot.proc = None

    stop = False
    while True:
        now = time.monotonic()
        if not stop and (now > deadline or (programs_target and
                                            programs_done() >= programs_target)):
            stop = True
        busy = False
        for slot in slots:
            if slot.proc is None:
                if not stop:
                    launch(slot)
                    busy = True
                continue
            busy = True
            rc = slot.proc.poll()
            size = slot.log.stat().st_size if slot.log.exists() else 0
            if size != slot.log_size:
                slot.log_size, slot.last_progress = size, now
            if rc is None:
                if now - slot.last_progress > args.hang_seconds:
                    os.killpg(slot.proc.pid, signal.SIGKILL)
                    slot.proc.wait()
                    resume_after(slot, "hang", f"no progress for {args.hang_seconds} s")
                continue
            if rc == 0:
                slot.proc = None
                continue
            sig = -rc if rc < 0 else None
            resume_after(slot, "crash", f"worker died: signal {signal.Signals(sig).name}"
                         if sig else f"worker exited with status {rc}")
        if stop and not any(s.proc for s in slots):
            break
        if not busy and stop:
            break
        time.sleep(0.5)
    events.close()
    report(out)
    return out


def _records(out: pathlib.Path):
    for log in sorted((out / "logs").glob("*.jsonl")):
        for line in log.read_text().splitlines():
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            if "seed" in rec:
                yield rec


def report(out: pathlib.Path) -> dict:
    programs = modules = 0
    seconds = 0.0
    ops, dtypes = collections.Counter(), collections.Counter()
    explained, skipped = collections.Counter(), collections.Counter()
    findings = collections.defaultdict(list)
    by_gen = collections.Counter()
    for rec in _records(out):
        if "generator_error" in rec:
            findings["generator-error"].append({"seed": rec["seed"],
                                                "generator": rec["generator"],
                                                "detail": rec["generator_error"]})
            continue
        modules += 1
        by_gen[rec["generator"]] += rec["programs"]
        seconds += rec.get("seconds", 0)
        if rec.get("skipped"):
            skipped[rec["skipped"].split(":")[0]] += 1
            continue
        programs += rec["programs"]
        ops.update(rec["ops"])
        dtypes.update(rec["dtypes"])
        explained.update(rec.get("explained", {}))
        for f in rec["findings"]:
            findings[f["kind"]].append({"seed": rec["seed"], "generator": rec["generator"],
                                        "backend": f["backend"], "detail": f["detail"][:300]})
    events = out / "events.jsonl"
    if events.exists():
        for line in events.read_text().splitlines():
            e = json.loads(line)
            findings[e["kind"]].append(e)
    data = {"programs_checked": programs, "modules_checked": modules,
            "programs_by_generator": dict(by_gen), "skipped_modules": dict(skipped),
            "seconds_in_workers": round(seconds, 1),
            "findings": {k: len(v) for k, v in findings.items()},
            "explained": dict(explained), "ops": dict(sorted(ops.items())),
            "dtypes": dict(sorted(dtypes.items())), "finding_list": findings}
    checked = out / "checked.json"
    checked = json.loads(checked.read_text()) if checked.exists() else {}
    data["checked"] = checked
    (out / "report.json").write_text(json.dumps(data, indent=1))
    lines = [f"# Fuzz campaign report ({out})", "",
             f"- backends: {checked.get('backends', '?')}, against "
             f"{'XLA:CPU' if checked.get('reference', 'xla') == 'xla' else checked['reference']}",
             f"- programs checked: {programs} in {modules} modules "
             f"({', '.join(f'{g}: {n}' for g, n in by_gen.items())})",
             f"- modules skipped: {dict(skipped) or 0}",
             f"- time in workers: {seconds:.0f} s"
             + (f" ({1000 * seconds / max(programs, 1):.0f} ms per program)" if programs else ""),
             "- findings: " + (", ".join(f"{k} {len(v)}" for k, v in findings.items())
                               or "none (mismatches 0, errors 0, crashes 0, hangs 0)"),
             f"- explained differences: {dict(explained) or 'none'}",
             f"- HLO opcodes covered ({len([o for o in ops if ':' not in o])}): "
             + ", ".join(o for o in sorted(ops) if ":" not in o),
             f"- JAX functions covered ({len([o for o in ops if o.startswith('jax:')])}): "
             + ", ".join(o[4:] for o in sorted(ops) if o.startswith("jax:")),
             f"- element types covered: {', '.join(sorted(dtypes))}", ""]
    for kind, items in findings.items():
        lines.append(f"## {kind} ({len(items)})")
        for it in items[:50]:
            lines.append(f"- {json.dumps(it)[:400]}")
        lines.append("")
    (out / "report.md").write_text("\n".join(lines))
    return data


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seconds", type=float,
                   default=float(os.environ.get("FUZZ_SECONDS", "600")))
    p.add_argument("--programs", type=int, default=0, help="stop after this many programs")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--generators", default="hlo,jax")
    p.add_argument("--backends", default=None,
                   help="xlapy backends checked (default: interpreter,cpu,cpu-nofusion; "
                        "gpu or gpu-emulator with --reference interpreter-ieee)")
    p.add_argument("--reference", default="xla", choices=("xla", "interpreter-ieee"))
    p.add_argument("--bundle", type=int, default=6, help="programs per module")
    # 100 bundles per process: a process's start (imports, JAX) costs a few seconds, about
    # a third of a 6-bundle jax worker's profile; workers stop at the deadline anyway
    p.add_argument("--chunk", type=int, default=100, help="bundles per worker process")
    p.add_argument("--start-seed", type=int, default=1_000_000)
    p.add_argument("--hang-seconds", type=float, default=300)
    p.add_argument("--out", default="out/fuzz")
    p.add_argument("--report", metavar="DIR", help="only write the report of DIR's logs")
    args = p.parse_args(argv)
    if args.report:
        data = report(pathlib.Path(args.report))
    else:
        data = report(run(args))
    print((pathlib.Path(args.report or args.out) / "report.md").read_text())
    bad = {k: v for k, v in data["findings"].items() if v}
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
