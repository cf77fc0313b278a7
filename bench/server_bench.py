"""Language-server figures: start → initialize, didOpen → first diagnostics, one-character edits → diagnostics,
a burst of edits, RSS with 50 files open, torch never mapped, for autograd-lsp and for the bare parse floor."""
from __future__ import annotations

import ast
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import corpus
from .cli_bench import with_repo_path
from .lsp_client import LspClient, LspError, sync_kind
from .measure import cpu_seconds, descendants, mapped_torch, median, percentile, tree_rss_mb

BENCH_DIR = Path(__file__).resolve().parent
WORK_DIR = BENCH_DIR / ".work"
# A second, real ~2,000-line training module edited like train_2000.py (pinned: figures stay comparable)
REAL_MODULE = ("trl", "0.19.1", "trl/trainer/dpo_trainer.py")
REAL_EDITS = 100


def real_module() -> Path:
    """trl's DPOTrainer (1,929 lines), from its pinned PyPI wheel, unpacked once into the corpus folder."""
    import zipfile

    project, version, member = REAL_MODULE
    target = corpus.CORPUS_DIR / "server" / f"{project}-{version}" / member
    if not target.is_file():
        wheel = corpus._find_wheel(project, version) or corpus._download(project, version, quiet=True)
        with zipfile.ZipFile(wheel) as archive:
            data = archive.read(member)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return target


@dataclass
class Session:
    label: str
    ok: bool = True
    error: str = ""
    init_s: float | None = None
    open_ms: float | None = None
    open_diagnostics: int | None = None
    edit_ms: list[float] = field(default_factory=list)
    burst_s: float | None = None
    burst_edits: int = 0
    burst_publishes: int = 0
    open50_s: float | None = None
    rss_open_mb: float | None = None  # server process after the first file
    rss50_mb: float | None = None  # server process with 50 files open, after it went idle
    rss50_tree_mb: float | None = None  # server + every helper subprocess
    idle_wait_s: float | None = None
    cpu_s: float | None = None  # CPU seconds the server tree used over the whole session
    torch_maps: list[str] = field(default_factory=list)
    versioned: bool | None = None
    sync: int | None = None
    server_requests: list[str] = field(default_factory=list)
    real_open_ms: float | None = None  # didOpen of REAL_MODULE → its first diagnostics
    real_edit_ms: list[float] = field(default_factory=list)  # one-character edits of REAL_MODULE
    # one-character edits of the code inside function bodies (a digit, a name, a string), after the trivia series
    code_edit_ms: list[float] = field(default_factory=list)
    real_code_edit_ms: list[float] = field(default_factory=list)


def edit_positions(text: str, count: int) -> list[int]:
    """``count`` distinct 0-based line numbers spread over the file where appending one character keeps the
    file valid (not a line ending in a backslash continuation)."""
    lines = text.split("\n")
    usable = [i for i, line in enumerate(lines[:-1]) if not line.rstrip().endswith("\\")]
    step = max(1, len(usable) // count)
    chosen = usable[::step][:count]
    while len(chosen) < count:  # tiny files: wrap around
        chosen += usable[: count - len(chosen)]
    return chosen


def _single_char_edit(lines: list[str], line_no: int) -> tuple[dict, str]:
    """Append a character to a line: inside a trailing comment ("x") or as trailing whitespace (" ")."""
    line = lines[line_no]
    char = "x" if " # " in line or line.lstrip().startswith("#") else " "
    col = len(line.encode("utf-16-le")) // 2
    lines[line_no] = line + char
    change = {"range": {"start": {"line": line_no, "character": col}, "end": {"line": line_no, "character": col}}, "text": char}
    return change, char


_CODE_EDITS: dict = {}


def code_edits(text: str, count: int) -> list[tuple[int, int, int, str]]:
    """``count`` one-character edits of code inside function bodies, spread over the file, each on a line of its
    own, that keep the file valid when applied one after another: a digit of an integer literal changed, a
    character appended to a name read in an expression, a character typed into a string literal. Each is
    (0-based line, start character, end character, new text); the kinds take turns."""
    key = (hash(text), count)
    if key in _CODE_EDITS:
        return _CODE_EDITS[key]
    lines = text.split("\n")
    tree = ast.parse(text)
    by_kind: dict[str, dict[int, tuple]] = {"digit": {}, "name": {}, "string": {}}
    in_fstring = {id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for part in ast.walk(node)}
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for stmt in function.body:
            for node in ast.walk(stmt):
                if getattr(node, "lineno", None) != getattr(node, "end_lineno", 0) or not lines[node.lineno - 1].isascii():
                    continue
                line_no, line = node.lineno - 1, lines[node.lineno - 1]
                segment = line[node.col_offset:node.end_col_offset]
                if isinstance(node, ast.Constant) and type(node.value) is int and segment.isdigit():
                    digit = str((int(segment[-1]) + 1) % 10)
                    by_kind["digit"].setdefault(line_no, (line_no, node.end_col_offset - 1, node.end_col_offset, digit))
                elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                    by_kind["name"].setdefault(line_no, (line_no, node.end_col_offset, node.end_col_offset, "q"))
                elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in in_fstring \
                        and segment[:1] in "'\"" and len(segment) >= 2 and segment[-1] == segment[0] and segment[:3] != segment[0] * 3:
                    by_kind["string"].setdefault(line_no, (line_no, node.end_col_offset - 1, node.end_col_offset - 1, "x"))
    pools = {kind: [found[k] for k in sorted(found)] for kind, found in by_kind.items()}
    chosen: list[tuple] = []
    used: set[int] = set()
    per_kind = max(1, -(-count // 3))
    for kind in ("digit", "name", "string"):  # an even spread over the file from each kind
        pool = pools[kind]
        step = max(1, len(pool) // per_kind)
        chosen += [edit for edit in pool[::step][:per_kind]]
    chosen.sort(key=lambda edit: (edit[0] * 7919) % max(len(lines), 1))  # kinds and places interleaved, deterministically
    out, current = [], list(lines)
    for edit in chosen:
        line_no, start, end, new = edit
        if line_no in used or len(out) >= count:
            continue
        candidate = list(current)
        candidate[line_no] = current[line_no][:start] + new + current[line_no][end:]
        try:
            ast.parse("\n".join(candidate))
        except SyntaxError:
            continue
        used.add(line_no)
        current = candidate
        out.append(edit)
    _CODE_EDITS[key] = out
    return out


def _code_change(lines: list[str], edit: tuple[int, int, int, str]) -> dict:
    """Apply one code edit to `lines` (ASCII lines: columns are characters and UTF-16 units alike)."""
    line_no, start, end, new = edit
    lines[line_no] = lines[line_no][:start] + new + lines[line_no][end:]
    return {"range": {"start": {"line": line_no, "character": start}, "end": {"line": line_no, "character": end}}, "text": new}


def _tree_cpu(pid: int) -> float:
    return cpu_seconds(pid) + sum(cpu_seconds(child) for child in descendants(pid))


def _wait_idle(pid: int, limit: float = 20.0, quiet_for: float = 1.0) -> float:
    """Wait until the server tree stops using CPU (background warm-up done); return seconds waited."""
    start = time.perf_counter()
    last, last_change = _tree_cpu(pid), time.perf_counter()
    while time.perf_counter() - start < limit:
        time.sleep(0.2)
        now = _tree_cpu(pid)
        if now - last > 0.03:
            last, last_change = now, time.perf_counter()
        elif time.perf_counter() - last_change >= quiet_for:
            break
    return time.perf_counter() - start


def run_session(label: str, cmd: list[str], env: dict, train_file: Path, other_files: list[Path], edits: int,
                burst: int, log_dir: Path, configuration=None, initialization_options=None, real_file: Path | None = None) -> Session:
    session = Session(label)
    log_dir.mkdir(parents=True, exist_ok=True)
    client = LspClient(cmd, cwd=str(WORK_DIR), env=env, stderr_path=log_dir / f"{label}.stderr", configuration=configuration)
    try:
        caps, session.init_s = client.initialize(corpus.CORPUS_DIR, initialization_options=initialization_options)
        session.sync = sync_kind(caps)
        pid = client.proc.pid

        # didOpen → first diagnostics (immediately after initialized, as an editor restoring a tab would)
        uri = train_file.resolve().as_uri()
        text = train_file.read_text("utf-8")
        version = 1
        sent = time.perf_counter()
        client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": version, "text": text}})
        record, index = client.wait_published(lambda p: p.uri == uri, timeout=60)
        session.open_ms = (record.at - sent) * 1000
        session.open_diagnostics = record.count
        session.versioned = record.version is not None
        session.rss_open_mb = tree_rss_mb(pid)[0]

        lines = text.split("\n")
        positions = edit_positions(text, edits + burst)

        def change_params(v: int, line_no: int, lines=lines, uri=uri) -> dict:
            change, _ = _single_char_edit(lines, line_no)
            changes = [change] if session.sync == 2 else [{"text": "\n".join(lines)}]
            return {"textDocument": {"uri": uri, "version": v}, "contentChanges": changes}

        def code_params(v: int, edit, lines, uri) -> dict:
            change = _code_change(lines, edit)
            changes = [change] if session.sync == 2 else [{"text": "\n".join(lines)}]
            return {"textDocument": {"uri": uri, "version": v}, "contentChanges": changes}

        def edit_one_by_one(uri: str, lines: list[str], line_numbers: list, version: int, out: list[float], code: bool = False) -> int:
            """One edit at a time, each waiting for its diagnostics; returns the last version sent."""
            for line_no in line_numbers:
                version += 1
                params = code_params(version, line_no, lines, uri) if code else change_params(version, line_no, lines, uri)
                start_index = len(client.published)
                sent = time.perf_counter()
                client.notify("textDocument/didChange", params)
                want = version
                if session.versioned:
                    record, _ = client.wait_published(lambda p, want=want: p.uri == uri and p.version == want, start_index, timeout=30)
                else:
                    record, _ = client.wait_published(lambda p: p.uri == uri, start_index, timeout=30)
                out.append((record.at - sent) * 1000)
            return version

        version = edit_one_by_one(uri, lines, positions[:edits], version, session.edit_ms)
        if edits:  # code inside function bodies (the trivia series leaves the code as it was)
            version = edit_one_by_one(uri, lines, code_edits("\n".join(lines), edits), version, session.code_edit_ms, code=True)

        # the same on a real training module, then closed again (so the rest of the session is unchanged)
        if real_file is not None and edits:
            real_uri = real_file.resolve().as_uri()
            real_text = real_file.read_text("utf-8")
            start_index = len(client.published)
            sent = time.perf_counter()
            client.notify("textDocument/didOpen", {"textDocument": {"uri": real_uri, "languageId": "python", "version": 1, "text": real_text}})
            record, _ = client.wait_published(lambda p: p.uri == real_uri, start_index, timeout=60)
            session.real_open_ms = (record.at - sent) * 1000
            real_lines = real_text.split("\n")
            real_version = edit_one_by_one(real_uri, real_lines, edit_positions(real_text, min(edits, REAL_EDITS)), 1, session.real_edit_ms)
            edit_one_by_one(real_uri, real_lines, code_edits("\n".join(real_lines), min(edits, REAL_EDITS)), real_version,
                            session.real_code_edit_ms, code=True)
            client.notify("textDocument/didClose", {"textDocument": {"uri": real_uri}})

        # a burst: every edit sent at once (fast typing), time to the diagnostics of the last version
        if burst:
            start_index = len(client.published)
            sent = time.perf_counter()
            for line_no in positions[edits:edits + burst]:
                version += 1
                client.notify("textDocument/didChange", change_params(version, line_no))
            want = version
            if session.versioned:
                record, _ = client.wait_published(lambda p: p.uri == uri and p.version == want, start_index, timeout=120)
                session.burst_s = record.at - sent
            else:  # unversioned: the last publish before 1 s of silence
                time.sleep(1.0)
                while len(client.published) and time.perf_counter() - client.published[-1].at < 1.0:
                    time.sleep(0.2)
                session.burst_s = client.published[-1].at - sent
            session.burst_edits = burst
            session.burst_publishes = sum(1 for p in client.published[start_index:] if p.uri == uri)

        # 49 more files → 50 open
        uris = []
        start_index = len(client.published)
        sent = time.perf_counter()
        for path in other_files:
            other = path.resolve().as_uri()
            uris.append(other)
            client.notify("textDocument/didOpen", {"textDocument": {"uri": other, "languageId": "python", "version": 1,
                                                                  "text": path.read_text("utf-8")}})
        pending = set(uris)
        index = start_index
        while pending:
            record, index = client.wait_published(lambda p: p.uri in pending, index, timeout=120)
            pending.discard(record.uri)
            index += 1
        session.open50_s = time.perf_counter() - sent
        session.idle_wait_s = _wait_idle(pid)
        session.rss50_mb, session.rss50_tree_mb = tree_rss_mb(pid)
        session.cpu_s = _tree_cpu(pid)
        for proc in [pid, *descendants(pid)]:
            session.torch_maps.extend(mapped_torch(proc))
        session.server_requests = sorted(set(client.server_requests))
    except (LspError, OSError) as error:
        session.ok = False
        session.error = f"{type(error).__name__}: {error}"
    finally:
        client.shutdown()
    if not session.ok:
        tail = [l for l in (log_dir / f"{label}.stderr").read_text("utf-8", "replace").splitlines() if l.strip()]
        if tail:
            session.error += f" (stderr: {tail[-1].strip()[:200]})"
    return session


def pick_other_files(count: int, exclude: Path) -> list[Path]:
    """``count`` real corpus files spread over every project (deterministic)."""
    files = [f for f in corpus.corpus_files(generated=False) if f != exclude]
    step = max(1, len(files) // count)
    return files[::step][:count]


KINDS = ("bare", "cold", "warm", "nodebounce")
NO_DEBOUNCE = {"debounce": 0}  # initializationOptions of the "nodebounce" sessions: the analysis latency alone


def server_figures(product_cmd: list[str] | None, reps: int, edits: int, burst: int, log_dir: Path, progress=print) -> dict:
    """Alternate bare / autograd-lsp (jedi cold: fresh XDG_CACHE_HOME) / autograd-lsp (jedi warm) sessions."""
    train = corpus.TRAIN_SCRIPT
    others = pick_other_files(49, train)
    try:
        real = real_module()
    except corpus.CorpusUnavailable as error:
        progress(f"  server: no real module to edit ({error})")
        real = None
    bare_cmd = [os.environ.get("BENCH_PYTHON") or _python(), str(BENCH_DIR / "bare_server.py")]
    results: dict[str, list[Session]] = {kind: [] for kind in KINDS}
    for rep in range(reps):
        cache = Path(tempfile.mkdtemp(prefix="bench-xdg-", dir=str(WORK_DIR)))
        try:
            env = with_repo_path(dict(os.environ, XDG_CACHE_HOME=str(cache)))
            plan = [("bare", bare_cmd, None)]
            if product_cmd:
                # cold must come first: it fills the jedi cache the later sessions reuse
                plan += [("cold", product_cmd, None), ("warm", product_cmd, None), ("nodebounce", product_cmd, NO_DEBOUNCE)]
            if rep % 2 == 1 and product_cmd:  # alternate the floor's position against drift
                plan = plan[1:] + plan[:1]
            for kind, cmd, init_options in plan:
                session = run_session(f"{kind}-{rep}", cmd, env, train, others, edits, burst, log_dir, initialization_options=init_options,
                                      real_file=real)
                results[kind].append(session)
                progress(f"  server {kind:4s} rep {rep + 1}/{reps}: " + summarize(session))
        finally:
            shutil.rmtree(cache, ignore_errors=True)
    return results


def summarize(session: Session) -> str:
    if not session.ok:
        return f"FAILED {session.error}"
    return (f"init {session.init_s * 1000:.0f} ms, open {session.open_ms:.0f} ms ({session.open_diagnostics} diags), "
            f"edit p50 {median(session.edit_ms):.1f} p95 {percentile(session.edit_ms, 95):.1f} max {max(session.edit_ms):.1f} ms, "
            + (f"code edit p50 {median(session.code_edit_ms):.1f} p95 {percentile(session.code_edit_ms, 95):.1f} max {max(session.code_edit_ms):.1f} ms, "
               if session.code_edit_ms else "")
            + (f"{REAL_MODULE[2].rsplit('/', 1)[-1]} edit p50 {median(session.real_edit_ms):.1f} p95 {percentile(session.real_edit_ms, 95):.1f} ms, "
               if session.real_edit_ms else "")
            + (f"code p50 {median(session.real_code_edit_ms):.1f} p95 {percentile(session.real_code_edit_ms, 95):.1f} ms, "
               if session.real_code_edit_ms else "")
            + f"burst {session.burst_s if session.burst_s is not None else float('nan'):.2f} s ({session.burst_publishes} publishes), "
            f"50 files {session.open50_s:.2f} s, RSS {session.rss50_mb:.0f}/{session.rss50_tree_mb:.0f} MB, torch {'MAPPED' if session.torch_maps else 'no'}")


def _python() -> str:
    import sys
    return sys.executable
