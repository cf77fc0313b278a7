/** How to start the server with a given interpreter: its own autograd_lsp if importable, else the bundled copy. */
import * as path from 'node:path';

/** The oldest Python the server supports (pyproject's requires-python). */
export const MIN_PYTHON: readonly [number, number] = [3, 10];

/** Run as `<python> -c PROBE_SCRIPT`: one JSON line saying what this interpreter is and whether it has the server. */
export const PROBE_SCRIPT = [
    'import json, sys',
    'try:',
    '    import autograd_lsp',
    '    version = getattr(autograd_lsp, "__version__", "unknown")',
    'except Exception:',
    '    version = None',
    'print(json.dumps({"python": list(sys.version_info[:3]), "executable": sys.executable, "autograd_lsp": version}))',
].join('\n');

export interface ProbeResult {
    python: [number, number, number];
    executable: string;
    /** The importable autograd_lsp's version, or null when it cannot be imported. */
    autogradLsp: string | null;
}

export function parseProbeOutput(stdout: string): ProbeResult | undefined {
    // The last line: a sitecustomize or a conda activation hook may print before it.
    const lastLine = stdout.trim().split(/\r?\n/).pop() ?? '';
    try {
        const parsed = JSON.parse(lastLine);
        if (!Array.isArray(parsed.python) || typeof parsed.executable !== 'string') {
            return undefined;
        }
        return { python: parsed.python, executable: parsed.executable, autogradLsp: parsed.autograd_lsp ?? null };
    } catch {
        return undefined;
    }
}

export type ServerOrigin = 'interpreter' | 'bundled';

export interface LaunchPlan {
    command: string;
    args: string[];
    /** Variables to add to the inherited environment. */
    env: Record<string, string>;
    origin: ServerOrigin;
}

export interface LaunchFailure {
    error: string;
}

export interface BundleLayout {
    /** The extension's `bundled/` folder. */
    root: string;
    /** Whether `bundled/tool/autograd_lsp` exists (absent in a development checkout before packaging). */
    present: boolean;
}

export function bundledPythonPath(bundle: BundleLayout, delimiter: string, inherited: string | undefined): string {
    // Bundled libraries come first so that an older pygls in the user's environment cannot shadow them.
    const entries = [path.join(bundle.root, 'libs'), path.join(bundle.root, 'tool')];
    if (inherited) {
        entries.push(inherited);
    }
    return entries.join(delimiter);
}

export function planLaunch(
    interpreter: string,
    probe: ProbeResult,
    bundle: BundleLayout,
    inheritedPythonPath: string | undefined,
    delimiter: string,
): LaunchPlan | LaunchFailure {
    const [major, minor] = probe.python;
    if (major < MIN_PYTHON[0] || (major === MIN_PYTHON[0] && minor < MIN_PYTHON[1])) {
        return {
            error: `${interpreter} is Python ${probe.python.join('.')}; autograd-lsp needs Python ${MIN_PYTHON.join('.')} or newer. Set autogradLsp.interpreter.`,
        };
    }
    const args = ['-m', 'autograd_lsp', 'serve'];
    if (probe.autogradLsp !== null) {
        return { command: interpreter, args, env: {}, origin: 'interpreter' };
    }
    if (!bundle.present) {
        return {
            error: `autograd_lsp is not installed in ${interpreter} and this build of the extension has no bundled copy: run \`${interpreter} -m pip install autograd-lsp\`.`,
        };
    }
    return {
        command: interpreter,
        args,
        env: {
            PYTHONPATH: bundledPythonPath(bundle, delimiter, inheritedPythonPath),
            // The server strips these again before running the user's code for runtime confirmation.
            AUTOGRAD_LSP_BUNDLED_PATHS: [path.join(bundle.root, 'libs'), path.join(bundle.root, 'tool')].join(delimiter),
        },
        origin: 'bundled',
    };
}

export function isLaunchFailure(plan: LaunchPlan | LaunchFailure): plan is LaunchFailure {
    return 'error' in plan;
}
