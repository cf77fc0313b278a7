/** Which Python runs the server: the setting, else the Python extension's environment, else PATH. */
import * as path from 'node:path';

export type InterpreterSource = 'setting' | 'python-extension' | 'path';

export interface ResolvedInterpreter {
    path: string;
    source: InterpreterSource;
}

export interface InterpreterLookup {
    /** The raw `autogradLsp.interpreter` value (empty or unset: not configured). */
    setting: string | undefined;
    /** Folder that `${workspaceFolder}` stands for, if any. */
    workspaceFolder: string | undefined;
    homeDir: string;
    env: Record<string, string | undefined>;
    /** The Python extension's active interpreter; undefined when that extension is absent or has none. */
    activeEnvironmentPath: () => Promise<string | undefined>;
    /** First executable of that name on PATH. */
    findOnPath: (name: string) => string | undefined;
    platform: NodeJS.Platform;
    log: (message: string) => void;
}

/** `${workspaceFolder}`, `${userHome}`, `${env:NAME}` and a leading `~`, as VS Code users write them. */
export function expandVariables(
    value: string,
    context: { workspaceFolder: string | undefined; homeDir: string; env: Record<string, string | undefined> },
): string {
    let expanded = value.trim();
    if (expanded === '~' || expanded.startsWith('~/') || expanded.startsWith('~\\')) {
        expanded = context.homeDir + expanded.slice(1);
    }
    return expanded.replace(/\$\{(workspaceFolder|userHome|env:([^}]+))\}/g, (whole, name: string, envName?: string) => {
        if (envName !== undefined) {
            return context.env[envName] ?? '';
        }
        if (name === 'userHome') {
            return context.homeDir;
        }
        return context.workspaceFolder ?? whole;
    });
}

export function pythonNamesOnPath(platform: NodeJS.Platform): string[] {
    return platform === 'win32' ? ['python.exe', 'py.exe'] : ['python3', 'python'];
}

export async function resolveInterpreter(lookup: InterpreterLookup): Promise<ResolvedInterpreter | undefined> {
    const configured = lookup.setting?.trim();
    if (configured) {
        // An explicit setting is authoritative: a wrong path must surface as an error, not be skipped silently.
        const expanded = expandVariables(configured, lookup);
        if (!expanded.includes('/') && !expanded.includes('\\')) {
            return { path: lookup.findOnPath(expanded) ?? expanded, source: 'setting' };
        }
        const folder = lookup.workspaceFolder;
        return { path: folder && !path.isAbsolute(expanded) ? path.join(folder, expanded) : expanded, source: 'setting' };
    }
    try {
        const active = await lookup.activeEnvironmentPath();
        if (active) {
            return { path: active, source: 'python-extension' };
        }
    } catch (error) {
        lookup.log(`The Python extension did not give an interpreter: ${String(error)}`);
    }
    for (const name of pythonNamesOnPath(lookup.platform)) {
        const found = lookup.findOnPath(name);
        if (found) {
            return { path: found, source: 'path' };
        }
    }
    return undefined;
}

/** PATH search with the file system injected, so that it can be tested without one. */
export function findOnPath(
    name: string,
    env: Record<string, string | undefined>,
    platform: NodeJS.Platform,
    isExecutableFile: (candidate: string) => boolean,
): string | undefined {
    const pathApi = platform === 'win32' ? path.win32 : path.posix;
    const separator = platform === 'win32' ? ';' : ':';
    const searchPath = env.PATH ?? env.Path ?? '';
    for (const directory of searchPath.split(separator)) {
        if (!directory) {
            continue;
        }
        const candidate = pathApi.join(directory, name);
        if (isExecutableFile(candidate)) {
            return candidate;
        }
    }
    return undefined;
}
