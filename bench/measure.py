"""Process measurement: wall time, peak RSS (per process and summed over the process tree), /proc helpers."""
from __future__ import annotations

import os
import statistics
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024


@dataclass
class RunResult:
    cmd: list[str]
    wall: float  # seconds, spawn → reaped
    maxrss_mb: float  # largest single process of the tree (wait4 ru_maxrss covers waited-for descendants)
    tree_peak_mb: float  # largest sum of RSS over the live process tree, sampled every 20 ms
    user: float
    sys: float
    rc: int
    stdout: str = ""
    stderr: str = ""
    torch_maps: list = field(default_factory=list)  # torch libraries seen mapped in the tree (checked every ~0.5 s)


def descendants(pid: int) -> list[int]:
    """pid's live descendants (scans /proc; cheap in a container)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(b")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def rss_mb(pid: int) -> float:
    """Resident set size of one process in MiB (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as handle:
            return int(handle.read().split()[1]) * PAGE_KB / 1024
    except (OSError, IndexError, ValueError):
        return 0.0


def tree_rss_mb(pid: int) -> tuple[float, float]:
    """(RSS of pid, RSS of pid + all descendants) in MiB."""
    own = rss_mb(pid)
    return own, own + sum(rss_mb(child) for child in descendants(pid))


def cpu_seconds(pid: int) -> float:
    """user+sys CPU seconds used so far by pid (not its children)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
        fields = stat[stat.rindex(b")") + 2:].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


def mapped_torch(pid: int) -> list[str]:
    """Shared objects of torch mapped into pid (libtorch*, torch/_C*); empty when torch was never imported."""
    hits = set()
    try:
        with open(f"/proc/{pid}/maps") as handle:
            for line in handle:
                path = line.rstrip("\n").split(maxsplit=5)[-1] if line.count(" ") >= 5 else ""
                if "libtorch" in path or "/torch/_C" in path or "libc10" in path:
                    hits.add(path.strip())
    except OSError:
        pass
    return sorted(hits)


def run_measured(cmd: list[str], cwd: str | Path | None = None, env: dict | None = None, timeout: float = 1800,
                 stdout_path: Path | None = None, sample_tree: bool = True) -> RunResult:
    """Run cmd to completion; measure wall time, ru_maxrss and the peak summed RSS of its process tree."""
    out_handle = open(stdout_path, "wb") if stdout_path else subprocess.DEVNULL
    err_path = Path(str(stdout_path) + ".err") if stdout_path else None
    err_handle = open(err_path, "wb") if err_path else subprocess.PIPE
    peak = [0.0]
    done = threading.Event()
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out_handle, stderr=err_handle, stdin=subprocess.DEVNULL)

    torch_seen: set[str] = set()

    def sampler() -> None:
        ticks = 0
        while not done.wait(0.02):
            tree = [proc.pid, *descendants(proc.pid)]
            peak[0] = max(peak[0], sum(rss_mb(pid) for pid in tree))
            ticks += 1
            if ticks % 25 == 1:
                for pid in tree:
                    torch_seen.update(mapped_torch(pid))

    thread = threading.Thread(target=sampler, daemon=True) if sample_tree else None
    if thread:
        thread.start()
    stderr_text = ""
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    try:
        if err_handle is subprocess.PIPE:
            # drain stderr in a thread so a chatty child cannot block; reap with wait4 for its rusage
            chunks: list[bytes] = []
            drain = threading.Thread(target=lambda: chunks.append(proc.stderr.read()), daemon=True)
            drain.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        if err_handle is subprocess.PIPE:
            drain.join(5)
            stderr_text = b"".join(chunks).decode("utf-8", "replace")
        proc.returncode = os.waitstatus_to_exitcode(status)
    finally:
        timer.cancel()
        done.set()
        if thread:
            thread.join()
        if stdout_path:
            out_handle.close()
        if err_path:
            err_handle.close()
            try:
                stderr_text = err_path.read_text("utf-8", "replace")
            except OSError:
                stderr_text = ""
    stdout_text = ""
    if stdout_path:
        try:
            with open(stdout_path, "rb") as handle:
                stdout_text = handle.read(20000).decode("utf-8", "replace")
        except OSError:
            pass
    return RunResult(cmd, wall, usage.ru_maxrss / 1024, peak[0], usage.ru_utime, usage.ru_stime, proc.returncode, stdout_text, stderr_text,
                     sorted(torch_seen))


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def percentile(values, q: float):
    """Nearest-rank percentile (q in 0..100)."""
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    rank = max(1, min(len(values), int(-(-q * len(values) // 100))))
    return values[rank - 1]


@dataclass
class Series:
    """Repeated measurements of one variant."""

    name: str
    runs: list[RunResult] = field(default_factory=list)
    note: str = ""

    @property
    def walls(self) -> list[float]:
        return [r.wall for r in self.runs]

    @property
    def wall(self) -> float | None:
        return median(self.walls)

    @property
    def maxrss(self) -> float | None:
        return max((r.maxrss_mb for r in self.runs), default=None)

    @property
    def tree_peak(self) -> float | None:
        return max((r.tree_peak_mb for r in self.runs), default=None)


def paired_ratio(a: Series, b: Series) -> float | None:
    """Median over repetitions of a.wall[i] / b.wall[i] (runs alternated, so drift cancels)."""
    pairs = [x.wall / y.wall for x, y in zip(a.runs, b.runs) if y.wall > 0]
    return median(pairs)
