"""Render the collected figures as Markdown (bench/RESULTS.md)."""
from __future__ import annotations

from .measure import median, paired_ratio, percentile

OK, MISS, NA = "✅", "❌", "—"


def _s(x, unit="s", digits=2):
    return NA if x is None else f"{x:.{digits}f} {unit}".rstrip()


def _ms(x):
    return NA if x is None else f"{x:.0f} ms" if x >= 100 else f"{x:.1f} ms"


def _x(x, digits=2):
    return NA if x is None else f"{x:.{digits}f}×"


def _met(value, ok) -> str:
    if value is None:
        return NA
    return OK if ok(value) else MISS


class Table:
    def __init__(self, *headers):
        self.rows = [list(headers)]

    def add(self, *cells):
        self.rows.append([str(c) for c in cells])

    def render(self) -> str:
        head, *body = self.rows
        out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
        out += ["| " + " | ".join(row) + " |" for row in body]
        return "\n".join(out)


def write_report(data: dict, args) -> str:
    misses: list[str] = []
    parts = [f"# autograd-lsp benchmark results{' (quick mode: harness smoke test, not figures to quote)' if data['quick'] else ''}", ""]
    m = data["machine"]
    parts += [
        f"Measured {m['date']} with:", "", "```", data["command"], "```", "",
        f"**Machine:** {m['cpu']}, {m['cores']} cores, {m['ram']} RAM, {m['os']}; load average (1/5/15 min) at start {m['load_at_start']}, at end {m.get('load_at_end', '?')}. "
        f"Noisy shared VM: every comparison below is a ratio of runs alternated in the same session (median of "
        f"{args.reps} CLI repetitions, {args.server_reps} server sessions per kind, {args.confirm_reps} confirmation runs per sample).",
        "",
        "**Software:** Python " + m["python"] + ", " + ", ".join(f"{k} {m[k]}" for k in ("autograd-lsp", "torch", "pygls", "lsprotocol", "jedi", "flake8", "torchfix") if k in m) + ".",
        "",
        f"**Corpus:** {data['corpus']['files']:,} files, {data['corpus']['lines']:,} lines: "
        + ", ".join(f"{p} {v}" for p, v in data["corpus"]["projects"].items())
        + " (wheels from PyPI, `.py` files unpacked) + generated `train_2000.py` and `notebook_200.ipynb` (bench/corpus.py); "
        + "paths given to every tool: " + ", ".join(f"`{r}`" for r in data["corpus"]["roots"]) + ".",
        "",
    ]
    lines = data["corpus"]["lines"]

    # ------------------------------------------------------------------ CLI
    series = data.get("cli_series") or {}
    if series:
        jobs = args.jobs
        floor = series.get("floor")
        one = series.get("cli_1_nocache")
        par = series.get(f"cli_{jobs}_nocache")
        cold = series.get("cli_1_cold")
        warm = series.get("cli_1_warm")
        parwarm = series.get(f"cli_{jobs}_warm")
        f1 = series.get("flake8_j1")
        fn = series.get(f"flake8_j{jobs}")
        table = Table("CLI figure", "wall (median)", "lines/s", "peak RSS (largest process / tree sum)", "ratio", "target", "met")

        def row(s, label, ratio_text="", target="", met=""):
            if s is None:
                table.add(label, "not measured", NA, NA, ratio_text or NA, target or NA, met or NA)
                return
            table.add(label, _s(s.wall), f"{lines / s.wall:,.0f}" if s.wall else NA, f"{s.maxrss:.0f} / {s.tree_peak:.0f} MB", ratio_text or NA, target or NA, met or NA)

        row(floor, "floor: `ast.parse` every file (one process)", "1× (reference)")
        r = paired_ratio(one, floor) if one and floor else None
        row(one, "`autograd-lsp check --jobs 1 --no-cache`", f"{_x(r)} floor", "≤ 3× floor", _met(r, lambda v: v <= 3))
        if r is not None and r > 3:
            misses.append(f"CLI one process is {r:.2f}× the ast.parse floor (target ≤ 3×)")
        nocross = series.get("cli_1_nocache_nocross")
        if nocross:
            r = paired_ratio(nocross, floor) if floor else None
            row(nocross, "`check --jobs 1 --no-cache --no-cross-module` (no jedi)", f"{_x(r)} floor", "(reference)")
        r = paired_ratio(one, par) if one and par else None
        row(par, f"`autograd-lsp check --jobs {jobs} --no-cache`", f"{_x(r)} faster than 1 process", "≥ 1.6×", _met(r, lambda v: v >= 1.6))
        if r is not None and r < 1.6:
            misses.append(f"--jobs {jobs} is only {r:.2f}× the one-process speed (target ≥ 1.6×)")
        row(cold, "`check --jobs 1`, cache emptied first (cold, writes cache)", f"{_x(paired_ratio(cold, one))} of no-cache" if cold and one else "")
        r = paired_ratio(warm, cold) if warm and cold else None
        row(warm, "`check --jobs 1`, warm cache", f"{_x(r)} of cold" + (f" ({_x(paired_ratio(warm, one))} of no-cache)" if warm and one else ""), "≤ 0.2× cold", _met(r, lambda v: v <= 0.2))
        if r is not None and r > 0.2:
            misses.append(f"warm cache run is {r:.2f}× the cold run (target ≤ 0.2×)")
        row(parwarm, f"`check --jobs {jobs}`, warm cache", f"{_x(paired_ratio(parwarm, floor))} floor" if parwarm and floor else "")
        r = paired_ratio(one, f1) if one and f1 else None
        row(f1, "flake8 default rules, `--jobs 1`", f"autograd-lsp 1 proc = {_x(r)} flake8 -j1", "autograd-lsp faster (< 1×)", _met(r, lambda v: v < 1))
        if r is not None and r >= 1:
            misses.append(f"autograd-lsp (1 process) takes {r:.2f}× flake8 -j1's time (target: faster)")
        r = paired_ratio(par, fn) if par and fn else None
        row(fn, f"flake8 default rules, `--jobs {jobs}` (its default)", f"autograd-lsp -j{jobs} = {_x(r)} flake8 -j{jobs}", "autograd-lsp faster (< 1×)", _met(r, lambda v: v < 1))
        if r is not None and r >= 1:
            misses.append(f"autograd-lsp --jobs {jobs} takes {r:.2f}× flake8 -j{jobs}'s time (target: faster)")

        tf = data.get("torchfix_series") or {}
        tfs = tf.get("torchfix")
        if tfs:
            info = data["torchfix"]
            tf_one = tf.get("cli_1_nocache")
            r = paired_ratio(tfs, tf_one) if tf_one else None
            label = f"TorchFix {m.get('torchfix', '')} default rules, default jobs (all cores), " + ("whole corpus, 1 run" if info["mode"] == "full" else f"subset {', '.join(info['roots'])} ({info['lines']:,} lines), {info['reps']} runs")
            table.add(label, _s(tfs.wall), f"{info['lines'] / tfs.wall:,.0f}", f"{tfs.maxrss:.0f} / {tfs.tree_peak:.0f} MB",
                      f"TorchFix = {_x(r, 0)} autograd-lsp 1 proc (same files, same session)" if r else NA, "≥ 50×", _met(r, lambda v: v >= 50))
            if r is not None and r < 50:
                misses.append(f"only {r:.0f}× faster than TorchFix (target ≥ 50×)")
            if info["mode"] == "subset" and floor and floor.wall:
                tf_floor = tf.get("floor")
                if tf_floor and tf_floor.wall:
                    table.add("TorchFix scaled to the whole corpus (subset wall × corpus/subset lines)", _s(tfs.wall * lines / info["lines"]), NA, NA, "estimate", NA, NA)
        else:
            table.add("TorchFix", "not run" + (" (quick mode)" if data["quick"] else ""), NA, NA, NA, "≥ 50×", NA)

        torch_cli = sorted({h for s in series.values() if s.name.startswith("cli_") for r in s.runs for h in r.torch_maps})
        table.add("torch mapped into the CLI or a child (`/proc/<pid>/maps`, sampled every 0.5 s)", NA, NA, NA,
                  ("**yes**: " + ", ".join(torch_cli[:2])) if torch_cli else "never", "never (PERF.md: jedi's helper imports torch unless refused)",
                  _met(True if one else None, lambda _: not torch_cli))
        if torch_cli:
            runs = sorted({s.name for s in series.values() if s.name.startswith("cli_") and any(r.torch_maps for r in s.runs)})
            misses.append("torch was mapped into the CLI's process tree (jedi's compiled-module helper subprocess) in: " + ", ".join(runs))
        rss_one = max((s.maxrss for s in (one, cold, warm) if s), default=None)
        rss_par = max((s.tree_peak for s in (par, parwarm) if s), default=None)
        table.add("peak RSS, one process (ru_maxrss)", NA, NA, _s(rss_one, "MB", 0), NA, "≤ 300 MB", _met(rss_one, lambda v: v <= 300))
        table.add(f"peak RSS, --jobs {jobs} (sum over the process tree, sampled every 20 ms)", NA, NA, _s(rss_par, "MB", 0), NA, "≤ 300 MB", _met(rss_par, lambda v: v <= 300))
        for value, what in ((rss_one, "one process"), (rss_par, f"--jobs {jobs} (tree sum)")):
            if value is not None and value > 300:
                misses.append(f"CLI peak RSS {value:.0f} MB for {what} (target ≤ 300 MB)")
        parts += ["## Command line", "", table.render(), ""]
        parts += ["Ratios are medians of per-repetition ratios (each repetition runs every variant once, order rotated). "
                  "`flake8` runs from its own venv (bench/.work/flake8-venv) so no plugin (TorchFix) slows it down; "
                  "flake8 does not read notebooks, autograd-lsp and the floor do.", ""]

    # ------------------------------------------------------------------ server
    server = data.get("server")
    if server:
        kinds = [k for k in ("bare", "cold", "warm", "nodebounce") if server.get(k)]
        names = {"bare": "bare pygls + ast.parse (floor)", "cold": "autograd-lsp, jedi cache cold", "warm": "autograd-lsp, jedi cache warm",
                 "nodebounce": "autograd-lsp, jedi warm, `debounce: 0` (analysis alone)"}
        ok_sessions = {k: [s for s in server[k] if s.ok] for k in kinds}
        failed = [s for k in kinds for s in server[k] if not s.ok]
        table = Table("server figure", *(names[k] for k in kinds), "target", "met")

        def pooled(kind, attr):
            values = []
            for s in ok_sessions[kind]:
                values.extend(getattr(s, attr))
            return values

        def med(kind, attr):
            return median([getattr(s, attr) for s in ok_sessions[kind]])

        def worst(kind, attr):
            return max((getattr(s, attr) for s in ok_sessions[kind] if getattr(s, attr) is not None), default=None)

        product = [k for k in ("cold", "warm") if k in kinds and ok_sessions[k]]
        init = {k: med(k, "init_s") for k in kinds}
        worst_init = max((init[k] for k in product if init[k] is not None), default=None)
        table.add("process start → `initialize` result (median)", *(_ms(init[k] * 1000 if init[k] else None) for k in kinds), "≤ 600 ms", _met(worst_init, lambda v: v <= 0.6))
        if worst_init is not None and worst_init > 0.6:
            misses.append(f"start → initialize {worst_init * 1000:.0f} ms (target ≤ 600 ms)")
        opened = {k: med(k, "open_ms") for k in kinds}
        open_worst = {k: worst(k, "open_ms") for k in kinds}
        table.add("didOpen `train_2000.py` → first diagnostics, median (worst)", *(f"{_ms(opened[k])} ({_ms(open_worst[k])})" for k in kinds),
                  "≤ 150 ms, even jedi cold", _met(max((open_worst[k] for k in product if open_worst[k] is not None), default=None), lambda v: v <= 150))
        for k in product:
            if open_worst[k] is not None and open_worst[k] > 150:
                misses.append(f"didOpen → diagnostics up to {open_worst[k]:.0f} ms with jedi {k} (median {opened[k]:.0f} ms; target ≤ 150 ms)")
        diag_counts = {k: med(k, "open_diagnostics") for k in kinds}
        table.add("diagnostics published for it", *(NA if diag_counts[k] is None else f"{diag_counts[k]:.0f}" for k in kinds), "", "")
        edits = {k: pooled(k, "edit_ms") for k in kinds}
        p50 = {k: median(edits[k]) for k in kinds}
        p95 = {k: percentile(edits[k], 95) for k in kinds}
        n_edits = {k: len(edits[k]) for k in kinds}
        bare50 = p50.get("bare")
        for k in product:
            ratio = p50[k] / bare50 if p50[k] and bare50 else None
            if ratio is not None and ratio > 2:
                misses.append(f"edit → diagnostics p50 {p50[k]:.1f} ms = {ratio:.2f}× the bare floor's {bare50:.1f} ms (jedi {k}; target ≤ 2×)")
            if p95[k] is not None and p95[k] > 80:
                misses.append(f"edit → diagnostics p95 {p95[k]:.1f} ms with jedi {k} (target ≤ 80 ms)")
        worst_ratio = max((p50[k] / bare50 for k in product if p50[k] and bare50), default=None)
        table.add(f"one-character edit → its diagnostics, p50 ({args.edits} sequential edits × sessions)",
                  *(f"{_ms(p50[k])}" + (f" ({p50[k] / bare50:.2f}× floor)" if k != "bare" and p50[k] and bare50 else "") for k in kinds),
                  "≤ 2× floor", _met(worst_ratio, lambda v: v <= 2))
        worst_p95 = max((p95[k] for k in product if p95[k] is not None), default=None)
        table.add("… p95", *(_ms(p95[k]) for k in kinds), "≤ 80 ms", _met(worst_p95, lambda v: v <= 80))
        table.add("… max", *(_ms(max(edits[k]) if edits[k] else None) for k in kinds), "", "")
        real = {k: pooled(k, "real_edit_ms") for k in kinds}
        if any(real.values()):  # the same edits on a real ~2,000-line training module (server_bench.REAL_MODULE)
            from bench.server_bench import REAL_MODULE

            real50 = {k: median(real[k]) if real[k] else None for k in kinds}
            real95 = {k: percentile(real[k], 95) if real[k] else None for k in kinds}
            bare_real = real50.get("bare")
            real_ratio = max((real50[k] / bare_real for k in product if real50[k] and bare_real), default=None)
            name = f"`{REAL_MODULE[2]}` ({REAL_MODULE[0]} {REAL_MODULE[1]}, real)"
            table.add(f"one-character edit of {name} → its diagnostics, p50",
                      *(f"{_ms(real50[k])}" + (f" ({real50[k] / bare_real:.2f}× floor)" if k != "bare" and real50[k] and bare_real else "") for k in kinds),
                      "≤ 2× floor", _met(real_ratio, lambda v: v <= 2))
            real_p95 = max((real95[k] for k in product if real95[k] is not None), default=None)
            table.add("… p95", *(_ms(real95[k]) for k in kinds), "≤ 80 ms", _met(real_p95, lambda v: v <= 80))
            for k in product:
                if real50[k] and bare_real and real50[k] / bare_real > 2:
                    misses.append(f"{REAL_MODULE[2]}: edit → diagnostics p50 {real50[k]:.1f} ms = {real50[k] / bare_real:.2f}× the floor (jedi {k}; target ≤ 2×)")
                if real95[k] is not None and real95[k] > 80:
                    misses.append(f"{REAL_MODULE[2]}: edit → diagnostics p95 {real95[k]:.1f} ms with jedi {k} (target ≤ 80 ms)")
        from bench.server_bench import REAL_MODULE

        for attr, what in (("code_edit_ms", "`train_2000.py`"), ("real_code_edit_ms", f"`{REAL_MODULE[2]}`")):
            # code inside function bodies (a digit, a name, a string): what the server walks again per edit
            code = {k: pooled(k, attr) for k in kinds}
            if not any(code.values()):
                continue
            code50 = {k: median(code[k]) if code[k] else None for k in kinds}
            code95 = {k: percentile(code[k], 95) if code[k] else None for k in kinds}
            bare_code = code50.get("bare")
            code_ratio = max((code50[k] / bare_code for k in product if code50[k] and bare_code), default=None)
            table.add(f"one-character **code** edit in a function body of {what} → its diagnostics, p50",
                      *(f"{_ms(code50[k])}" + (f" ({code50[k] / bare_code:.2f}× floor)" if k != "bare" and code50[k] and bare_code else "") for k in kinds),
                      "≤ 2× floor", _met(code_ratio, lambda v: v <= 2))
            code_p95 = max((code95[k] for k in product if code95[k] is not None), default=None)
            table.add("… p95", *(_ms(code95[k]) for k in kinds), "≤ 80 ms", _met(code_p95, lambda v: v <= 80))
            table.add("… max", *(_ms(max(code[k]) if code[k] else None) for k in kinds), "", "")
            for k in product:
                if code50[k] and bare_code and code50[k] / bare_code > 2:
                    misses.append(f"{what}: code edit → diagnostics p50 {code50[k]:.1f} ms = {code50[k] / bare_code:.2f}× the floor (jedi {k}; target ≤ 2×)")
                if code95[k] is not None and code95[k] > 80:
                    misses.append(f"{what}: code edit → diagnostics p95 {code95[k]:.1f} ms with jedi {k} (target ≤ 80 ms)")
        burst = {k: med(k, "burst_s") for k in kinds}
        pubs = {k: med(k, "burst_publishes") for k in kinds}
        table.add(f"burst of {args.burst} edits → diagnostics of the last (publishes received)",
                  *(f"{_ms(burst[k] * 1000 if burst[k] is not None else None)} ({NA if pubs[k] is None else f'{pubs[k]:.0f}'})" for k in kinds), "", "")
        table.add("open 49 more corpus files → all diagnostics", *(_ms((med(k, "open50_s") or 0) * 1000) for k in kinds), "", "")
        rss = {k: med(k, "rss50_mb") for k in kinds}
        rss_tree = {k: max((s.rss50_tree_mb for s in ok_sessions[k]), default=None) for k in kinds}
        worst_rss = max((rss_tree[k] for k in product if rss_tree[k] is not None), default=None)
        table.add("RSS with 50 files open, idle: server (server + helper processes, worst)", *(f"{_s(rss[k], 'MB', 0)} ({_s(rss_tree[k], 'MB', 0)})" for k in kinds),
                  "≤ 150 MB", _met(worst_rss, lambda v: v <= 150))
        if worst_rss is not None and worst_rss > 150:
            misses.append(f"server RSS with 50 files open {worst_rss:.0f} MB incl. helpers (target ≤ 150 MB)")
        table.add("CPU seconds used by the server over a session (incl. background jedi)", *(_s(med(k, "cpu_s")) for k in kinds), "", "")
        torch_hits = {k: sorted({h for s in ok_sessions[k] for h in s.torch_maps}) for k in kinds}
        table.add("torch mapped into the server or a child (`/proc/<pid>/maps`)", *(("**yes**: " + ", ".join(torch_hits[k][:2])) if torch_hits[k] else "never" for k in kinds),
                  "never", _met(True if product else None, lambda _: not any(torch_hits[k] for k in product)))
        if any(torch_hits[k] for k in product):
            misses.append("torch was mapped into the server process tree")
        parts += ["## Language server", "", table.render(), ""]
        notes = [f"{sum(len(ok_sessions[k]) for k in kinds)} sessions; edits append one character (to a comment, else a trailing space) "
                 f"on lines spread over the 2,000-line file, so the file stays valid and is fully analysed each time; "
                 f"sync kind used: {', '.join(sorted({str(s.sync) for k in kinds for s in ok_sessions[k]}))} (2 = incremental). "
                 f"Diagnostics are matched to edits by version where the server sends one "
                 f"(versioned: {', '.join(f'{k}={ok_sessions[k][0].versioned}' for k in kinds if ok_sessions[k])}). "
                 "jedi cold = a fresh `XDG_CACHE_HOME` per session; warm = the same directory right after the cold session. "
                 "The `debounce: 0` column (initializationOptions, jedi warm) is informational: it shows the analysis "
                 "latency without the server's default 75 ms debounce; targets are judged on the default (cold/warm) columns. "
                 "The RSS figure is read after the server went idle (no CPU for 1 s, up to 20 s)."]
        reqs = sorted({r for k in kinds for s in ok_sessions[k] for r in s.server_requests})
        if reqs:
            notes.append("Server → client requests seen (answered with null / null per configuration item): " + ", ".join(reqs) + ".")
        if failed:
            notes.append("Failed sessions: " + "; ".join(f"{s.label}: {s.error}" for s in failed))
            misses.append(f"{len(failed)} server session(s) failed: " + "; ".join(f"{s.label}: {s.error}" for s in failed)[:300])
        parts += [" ".join(notes), ""]

    # ------------------------------------------------------------------ confirm
    confirm = data.get("confirm")
    if confirm:
        torch_s = confirm["torch_import"]
        table = Table("sample:line", "codes", "verdict", "time to verdict (median)", "paired `import torch`", "overhead over import", "target ≤ import + 2 s", "peak RSS")
        for result in confirm["results"]:
            over = result.overhead
            table.add(f"`{result.marker.target}`", ",".join(result.marker.codes), result.verdict + (f" (rc {result.rc}: {result.error})" if result.error else ""),
                      _s(result.wall), _s(median(result.torch_walls)), _s(over), _met(over, lambda v: v <= 2.0), _s(result.maxrss_mb, "MB", 0))
            if over is not None and over > 2.0:
                misses.append(f"confirm {result.marker.target} takes import torch + {over:.2f} s (target ≤ + 2 s)")
        walls = [r.wall for r in confirm["results"] if r.wall]
        parts += ["## Confirmation (runtime confirmer)", "",
                  f"`python -c \"import torch\"` alone: median {_s(torch_s)} over {confirm['torch_import_runs']} runs (one right before each confirmation). "
                  f"Confirmations: median {_s(median(walls))}, worst {_s(max(walls) if walls else None)}.", "", table.render(), ""]

    # ------------------------------------------------------------------ where time goes
    phases = data.get("phases")
    profile = data.get("profile")
    if phases or profile:
        parts += ["## Where the CLI's time goes", ""]
        if phases and "timings" in phases:
            table = Table("phase (in-process, one pass over the corpus)", "seconds", "share of check_source")
            total = phases["timings"].get("check_source (all)") or 0
            for name, seconds in phases["timings"].items():
                table.add(name, f"{seconds:.2f}", f"{seconds / total * 100:.0f}%" if total else NA)
            for code, seconds in list(phases["per_rule"].items())[:8]:
                table.add(f"  rule {code}", f"{seconds:.3f}", f"{seconds / total * 100:.1f}%" if total else NA)
            parts += [f"{phases['files']} files, {phases['lines']:,} lines (`python -m bench.phases`). The phases are timed separately, then "
                      f"`check_source` runs the whole pipeline again.", "", table.render(), ""]
            if phases.get("error_count"):
                parts += [f"{phases['error_count']} rule/model exceptions, first: `{phases['errors'][0]}`", ""]
        elif phases:
            parts += ["Phase timing failed: `" + str(phases.get("error", ""))[-300:] + "`", ""]
        if profile:
            top = _profile_excerpt(profile, 25)
            parts += ["`python -m cProfile -m autograd_lsp check <corpus> --jobs 1 --no-cache` (full output: bench/.work/cli-profile.txt):", "", "```", top, "```", ""]

    if data.get("wide"):
        from .wide_bench import report_lines
        parts += report_lines(data["wide"], misses)

    # ------------------------------------------------------------------ summary
    summary = ["## Targets missed", ""]
    summary += [f"- {m}" for m in misses] or ["- none"]
    notes = data.get("notes") or []
    if notes:
        summary += ["", "## Notes", ""] + [f"- {n}" for n in notes]
    timing = ", ".join(f"{part} {seconds:.0f} s" for part, seconds in (data.get("part_s") or {}).items())
    summary += ["", f"Whole run: {data['elapsed_s']:.0f} s ({timing}). Raw figures: bench/.work/results.json; logs of every run: bench/.work/logs/.", ""]
    # put the summary right after the header so the misses are seen first
    return "\n".join(parts[:2] + summary + parts[2:])


def _profile_excerpt(profile: str, top: int) -> str:
    """The header and the first ``top`` rows of each sort order in pstats output."""
    out, rows = [], 0
    for line in profile.splitlines():
        if line.startswith("## "):
            out.append(line)
            rows = -1
            continue
        if "ncalls" in line and "tottime" in line:
            out.append(line)
            rows = 0
            continue
        if rows >= 0 and line.strip() and rows < top:
            out.append(line)
            rows += 1
    return "\n".join(out)
