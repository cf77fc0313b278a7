"""Turn what the harness observed into a status, by the rule's runtime signature.

Order of judgement:

1. the run could not happen: ``torch-missing``, ``cuda-unavailable``, ``timeout``, ``resource-limit``
   (MemoryError, an allocator "can't allocate memory", the file-size limit, or a SIGKILL we did not
   send), ``error`` (the harness itself failed);
2. the program raised an exception: matching one of the rule's error signatures → ``confirmed``
   (for rules whose error comes from the flagged statement itself, only when a frame of the
   traceback is that statement); anything else → ``inconclusive`` (the program stopped before the
   finding could show, or failed for another reason);
3. a warning signature matched → ``confirmed``; the probe saw the symptom → ``confirmed``;
4. the flagged statement never ran → ``inconclusive``;
5. the probe measured no symptom, or the program ran to completion without the signature →
   ``not-reproduced``; a probe that could not decide → ``inconclusive``.
"""
from __future__ import annotations

from dataclasses import dataclass

from .reproducer import Reproducer
from .sandbox import RunOutcome
from .signatures import MEMORY_ERRORS, RuntimeSignature


@dataclass
class Verdict:
    status: str
    observed: str
    user_line: int | None = None
    forward_line: int | None = None


def _first_line(text: str) -> str:
    text = (text or "").strip()
    return text.split("\n", 1)[0][:500]


def _in_flagged(frames: list[dict], flagged: tuple[int, int]) -> bool:
    start, end = flagged
    return any(f.get("user_line") and start <= f["user_line"] <= end for f in frames)


def decide(signature: RuntimeSignature | None, reproducer: Reproducer, outcome: RunOutcome, timeout: float, memory_limit: int | None) -> Verdict:
    facts = outcome.facts or {}
    if outcome.extra.get("start_error"):
        return Verdict("error", outcome.output)
    if facts.get("status") in ("torch-missing", "cuda-unavailable"):
        return Verdict(facts["status"], facts.get("observed", ""))
    if outcome.timed_out:
        return Verdict("timeout", f"no verdict within {timeout:g} s; the process group was killed")
    if outcome.killed_by == "SIGXFSZ":
        return Verdict("resource-limit", "the program wrote a file over the sandbox's file-size limit")
    if outcome.killed_by in ("SIGKILL", "SIGSEGV", "SIGBUS", "SIGABRT") and not facts:
        if outcome.killed_by == "SIGKILL":
            return Verdict("resource-limit", "the process was killed (SIGKILL), most likely out of memory")
        tail = _first_line(outcome.output.strip().rsplit("\n", 1)[-1]) if outcome.output.strip() else ""
        return Verdict("error", f"the interpreter crashed ({outcome.killed_by}){': ' + tail if tail else ''}")
    if not facts:
        return Verdict("error", f"the harness reported nothing (exit status {outcome.returncode}): {_first_line(outcome.output[-2000:])}")
    if facts.get("harness_error"):
        return Verdict("error", "the harness failed: " + facts["harness_error"].strip().rsplit("\n", 1)[-1])

    forward_line = facts.get("forward_line")
    exception = facts.get("exception")
    if exception:
        types = exception.get("types", [])
        message = exception.get("message", "")
        observed = f"{types[0] if types else 'Exception'}: {_first_line(message)}"
        line = exception.get("user_line")
        for memory in MEMORY_ERRORS:
            if memory.matches(types, message):
                limit = f" ({memory_limit / (1 << 30):g} GiB)" if memory_limit else ""
                return Verdict("resource-limit", f"{observed} — the sandbox's memory limit{limit} was hit", line)
        if signature is not None:
            for error in signature.errors:
                if not error.matches(types, message):
                    continue
                if error.at_flagged_line and not _in_flagged(exception.get("frames", []), reproducer.flagged):
                    where = f"line {line}" if line else "code the reproducer added"
                    return Verdict(
                        "inconclusive",
                        f"{observed} — raised at {where}, not by the flagged statement (lines {reproducer.flagged[0]}-{reproducer.flagged[1]})",
                        line,
                        forward_line,
                    )
                return Verdict("confirmed", observed, line, forward_line)
        if not facts.get("reached") and reproducer.reach_check:
            return Verdict("inconclusive", f"the reproducer failed before reaching line {reproducer.flagged[0]}: {observed}", line, forward_line)
        if facts.get("probe") and facts["probe"].get("state") == "symptom":
            probe = facts["probe"]
            return Verdict("confirmed", probe["detail"], probe.get("line") or line)
        return Verdict("inconclusive", f"the reproducer stopped with {observed}, which is not {signature.code if signature else 'the'} runtime signature", line, forward_line)

    # An error the program raised and caught itself (try/except around the bug) still counts.
    if signature is not None:
        for raised in facts.get("raised", []):
            for error in signature.errors:
                line = raised.get("user_line")
                if error.matches(raised.get("types", []), raised.get("message", "")) and (
                    not error.at_flagged_line or (line and reproducer.flagged[0] <= line <= reproducer.flagged[1])
                ):
                    kind = raised["types"][0] if raised.get("types") else "Exception"
                    return Verdict("confirmed", f"{kind}: {_first_line(raised['message'])} (raised, then caught by the program)", line, forward_line)
        for warning in facts.get("warnings", []):
            for expected in signature.warnings:
                if expected.matches(warning.get("category", []), warning.get("message", "")):
                    return Verdict("confirmed", f"{warning['category'][0]}: {_first_line(warning['message'])}", warning.get("user_line"))
    probe = facts.get("probe")
    if probe and probe.get("state") == "symptom":
        # Measured outside the user's code (e.g. after a synthesized instantiation): the flagged line.
        return Verdict("confirmed", probe["detail"], probe.get("line") or reproducer.flagged[0])
    exit_code = facts.get("exit_code")
    if not facts.get("reached") and reproducer.reach_check:
        if exit_code not in (None, 0):
            return Verdict("inconclusive", f"the program called sys.exit({exit_code}) before reaching line {reproducer.flagged[0]} (does it need command-line arguments?)")
        return Verdict("inconclusive", f"line {reproducer.flagged[0]} was never executed by the reproducer ({reproducer.mode} mode)")
    if probe and probe.get("state") == "inconclusive":
        return Verdict("inconclusive", probe["detail"], probe.get("line"))
    if probe and probe.get("state") == "clean":
        return Verdict("not-reproduced", probe["detail"], probe.get("line"))
    if exit_code not in (None, 0):
        return Verdict("inconclusive", f"the program exited with sys.exit({exit_code}) before the finding could show")
    expected = signature.description if signature else "the rule's signature"
    return Verdict("not-reproduced", f"ran to completion without {expected}")
