/** "Audit this file by running it": the server runs the file (loops bounded) under every rule's runtime probe. */
import * as vscode from 'vscode';
import { splitArguments } from './auditArguments';

const SERVER_AUDIT = 'autograd-lsp.audit';
const ARGUMENTS_KEY = 'autogradLsp.auditArguments';

interface CommandRunner {
    executeCommand(command: string, args: unknown[]): Promise<unknown>;
}

/** The command: asks for the script's arguments (remembered per file), then lets the server run it. The server
 * shows the progress (cancellable), the result message and the run's diagnostics. */
export function registerAudit(context: vscode.ExtensionContext, server: CommandRunner): vscode.Disposable {
    return vscode.commands.registerCommand('autogradLsp.audit', async () => {
        if (!vscode.workspace.isTrusted) {
            void vscode.window.showWarningMessage('autograd-lsp runs your file to audit it: trust this workspace first.');
            return;
        }
        const document = vscode.window.activeNotebookEditor?.notebook ?? vscode.window.activeTextEditor?.document;
        if (!document || document.uri.scheme !== 'file') {
            void vscode.window.showInformationMessage('autograd-lsp: open a Python file or notebook saved on disk to audit it.');
            return;
        }
        const uri = document.uri.toString();
        const remembered = context.workspaceState.get<Record<string, string>>(ARGUMENTS_KEY, {});
        const line = await vscode.window.showInputBox({
            title: 'Audit this file by running it',
            prompt: "The script's arguments (sys.argv[1:]); loops run their first 3 iterations",
            value: remembered[uri] ?? '',
        });
        if (line === undefined) {
            return; // dismissed
        }
        await context.workspaceState.update(ARGUMENTS_KEY, { ...remembered, [uri]: line });
        try {
            await server.executeCommand(SERVER_AUDIT, [uri, { args: splitArguments(line) }]);
        } catch (error) {
            const message = error instanceof Error ? error.message : String(error);
            void vscode.window.showErrorMessage(`autograd-lsp: the audit failed: ${message}`);
        }
    });
}
