"""Drives JupyterLab in headless Chromium (Debian's, through Playwright) and reports what a person would see.

Run by tests/test_jupyterlab_e2e.py with the Jupyter environment's Python. Opens the notebook, waits for
jupyterlab-lsp's diagnostics (CodeMirror lint marks), hovers the first one to open its tooltip, takes a screenshot
and prints one JSON object: the marks (cell, text, classes) and the tooltip's diagnostics. Judging is the test's job.

usage: driver.py URL TOKEN NOTEBOOK SCREENSHOT PROFILE_DIR"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage"]
MARK = ".jp-Notebook .jp-Cell .cm-lintRange"
WAIT_MS = 120_000  # the first diagnostics wait for the kernel, the LSP connection and the server's first check


def marks(page) -> list[dict]:
    return page.evaluate("""(selector) => {
        const cells = [...document.querySelectorAll('.jp-Notebook .jp-Cell')];
        return [...document.querySelectorAll(selector)].map((mark) => ({
            cell: cells.indexOf(mark.closest('.jp-Cell')),
            text: mark.textContent,
            classes: [...mark.classList],
        }));
    }""", MARK)


def main(url: str, token: str, notebook: str, screenshot: str, profile: str) -> None:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch_persistent_context(
            profile, executable_path=os.environ.get("E2E_CHROMIUM", "/usr/bin/chromium"), headless=True,
            args=CHROMIUM_FLAGS, viewport={"width": 1000, "height": 400})
        page = browser.pages[0] if browser.pages else browser.new_page()
        step = "open the notebook"
        try:
            page.goto(f"{url}/lab/tree/{notebook}?token={token}")
            page.locator(".jp-Notebook .jp-Cell .cm-content").first.wait_for(timeout=WAIT_MS)
            step = "wait for a diagnostic"
            page.locator(MARK).first.wait_for(timeout=WAIT_MS)
            page.wait_for_timeout(1000)  # later diagnostics of the same check arrive in the same message
            step = "close the file browser"
            page.locator('.jp-SideBar.jp-mod-left li[data-id="filebrowser"]').click()  # its tab toggles it
            page.locator("#filebrowser").wait_for(state="hidden", timeout=10_000)
            step = "hover the diagnostic"
            page.locator(MARK).first.hover()
            tooltip = page.locator(".cm-tooltip-lint").first
            tooltip.wait_for(timeout=20_000)
            shown = [{"message": item.locator(".cm-diagnosticText").inner_text(),
                      "source": item.locator(".cm-diagnosticSource").inner_text(),
                      "classes": (item.get_attribute("class") or "").split()}
                     for item in tooltip.locator(".cm-diagnostic").all()]
            page.screenshot(path=screenshot)
            print(json.dumps({"marks": marks(page), "tooltip": shown}))
        except Exception as error:
            page.screenshot(path=str(Path(screenshot).with_name("failed-" + Path(screenshot).name)))
            raise SystemExit(f"e2e: step '{step}' failed: {error}") from None
        finally:
            browser.close()


if __name__ == "__main__":
    main(*sys.argv[1:])
