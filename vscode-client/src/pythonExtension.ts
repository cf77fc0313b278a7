/** The optional Python extension (ms-python.python): its active interpreter, read through its public API. */
import * as vscode from 'vscode';

const PYTHON_EXTENSION_ID = 'ms-python.python';

/** The part of the Python extension's API this extension uses (`@vscode/python-extension`'s `environments`). */
interface PythonEnvironmentsApi {
    getActiveEnvironmentPath(resource?: vscode.Uri): { id: string; path: string };
    resolveEnvironment?(environment: { id: string; path: string }): Promise<{ executable: { uri?: vscode.Uri } } | undefined>;
    onDidChangeActiveEnvironmentPath?: vscode.Event<unknown>;
}

async function environmentsApi(): Promise<PythonEnvironmentsApi | undefined> {
    const extension = vscode.extensions.getExtension(PYTHON_EXTENSION_ID);
    if (!extension) {
        return undefined;
    }
    const api = extension.isActive ? extension.exports : await extension.activate();
    return api?.environments;
}

export async function activeInterpreter(resource: vscode.Uri | undefined): Promise<string | undefined> {
    const environments = await environmentsApi();
    if (!environments) {
        return undefined;
    }
    const active = environments.getActiveEnvironmentPath(resource);
    // The active path may name an environment folder (conda); resolving it gives the executable.
    const resolved = await environments.resolveEnvironment?.(active);
    return resolved?.executable.uri?.fsPath ?? active.path;
}

export async function onActiveInterpreterChange(listener: () => void): Promise<vscode.Disposable | undefined> {
    try {
        return (await environmentsApi())?.onDidChangeActiveEnvironmentPath?.(listener);
    } catch {
        return undefined;
    }
}
