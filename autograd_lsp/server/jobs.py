"""Long-running jobs started by a command (confirm now; explain next): run off the event loop on a thread of
their own, with a cancellable $/progress, and when cancelled — from the progress or by $/cancelRequest — the
child processes they started are killed. What a job computes is its caller's business (see confirming.py)."""
from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import signal
import threading
import time
from pathlib import Path

from lsprotocol import types

HARNESS_MARKER = b"__agl_harness__"  # in the command line of every child the confirm runner starts


class JobCancelled(Exception):
    """The user cancelled the job from its progress notification."""


@contextlib.contextmanager
def cancelled_with_request(ls):
    """pygls cancels a `workspace/executeCommand` request's response but not the command's coroutine (it runs
    as an inner task): register the coroutine to be cancelled with its request (see AutogradProtocol)."""
    request_id, task = ls.protocol.msg_id, asyncio.current_task()
    if request_id is not None and task is not None:
        ls.protocol.cancel_callbacks.setdefault(request_id, []).append(task.cancel)
    try:
        yield
    finally:
        ls.protocol.cancel_callbacks.pop(request_id, None)


async def run_job(ls, title: str, message: str, fn, *args, cleanup_s: float, marker: bytes = HARNESS_MARKER, **kwargs):
    """fn(*args, **kwargs) — blocking, possibly starting child processes — on its own thread, under a
    cancellable progress. Returns its result or raises its exception; raises JobCancelled when the user
    cancels the progress and CancelledError when the request is cancelled. On either, the child processes
    whose command line holds `marker` and that started since are killed (watched for `cleanup_s`)."""
    token = await begin_progress(ls, title, message)
    before = child_processes(marker)
    job = in_thread(fn, *args, **kwargs)
    waits = [asyncio.wrap_future(job)]
    cancel = ls.work_done_progress.tokens.get(token) if token is not None else None
    if cancel is not None:
        waits.append(asyncio.wrap_future(cancel))
    outcome = "error"
    try:
        done, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        if waits[0] not in done:
            kill_new_children(before, job, cleanup_s, marker)
            outcome = "cancelled"
            raise JobCancelled(title)
        result = waits[0].result()
        outcome = "done"
        return result
    except asyncio.CancelledError:  # $/cancelRequest on the command
        kill_new_children(before, job, cleanup_s, marker)
        outcome = "cancelled"
        raise
    finally:
        if token is not None:
            ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message=outcome))
            ls.work_done_progress.tokens.pop(token, None)


async def begin_progress(ls, title: str, message: str):
    if not ls.client_has("window", "work_done_progress"):
        return None
    token = f"autograd-lsp-{next(ls.progress_ids)}"
    try:
        await asyncio.wait_for(ls.work_done_progress.create_async(token), 10)
    except Exception:
        return None
    ls.work_done_progress.begin(token, types.WorkDoneProgressBegin(title=title, message=message, cancellable=True))
    return token


def in_thread(fn, *args, **kwargs) -> concurrent.futures.Future:
    """Run one job on its own daemon thread: a cancelled run still finishing must not delay the next."""
    future: concurrent.futures.Future = concurrent.futures.Future()

    def work():
        if future.set_running_or_notify_cancel():
            try:
                future.set_result(fn(*args, **kwargs))
            except BaseException as error:
                future.set_exception(error)

    threading.Thread(target=work, name="autograd-lsp-job", daemon=True).start()
    return future


def child_processes(marker: bytes = HARNESS_MARKER) -> set[int]:
    """Child processes whose command line holds `marker` (Linux /proc; empty elsewhere)."""
    found = set()
    try:
        tasks = list(Path("/proc/self/task").iterdir())
    except OSError:
        return found
    for task in tasks:
        try:
            children = (task / "children").read_text().split()
        except OSError:
            continue
        for pid in children:
            try:
                if marker in Path(f"/proc/{pid}/cmdline").read_bytes():
                    found.add(int(pid))
            except OSError:
                continue
    return found


def kill_new_children(before: set[int], job: concurrent.futures.Future, limit_s: float, marker: bytes = HARNESS_MARKER) -> None:
    """Cancelling a job stops its child processes: the runners have no cancel hook, so those started since the
    job began are killed (each leads its own process group), watching until the job ends in case a child had
    not started yet."""

    def watch():
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline:
            for pid in child_processes(marker) - before:
                try:
                    os.killpg(pid, signal.SIGKILL)
                except OSError:
                    pass
            if job.done():
                return
            time.sleep(0.1)

    threading.Thread(target=watch, name="autograd-lsp-job-cancel", daemon=True).start()
