/** "autograd-lsp: Explain autograd graph here": ask the server (which runs the program once, with progress and
 * cancellation) and show the graph in the panel. Off in untrusted workspaces: it runs the workspace's code. */
import * as vscode from 'vscode';
import type { Middleware, StaticFeature } from 'vscode-languageclient/node';
import { CLIENT_EXPLAIN_AT, readReply, rewriteExplainCommand, SERVER_EXPLAIN, withExplainCapability } from './explainReply';
import { ExplainPanel } from './explainPanel';

interface Runner {
    executeCommand(command: string, args: unknown[]): Promise<unknown>;
}

/** Declares which drawings the panel accepts (`experimental.autogradLsp.explainFormats`, see the server). */
export const explainCapability: StaticFeature = {
    fillClientCapabilities: (capabilities) => {
        capabilities.experimental = withExplainCapability(capabilities.experimental);
    },
    initialize: () => undefined,
    getState: () => ({ kind: 'static' }),
    clear: () => undefined,
};

/** The server's "Explain" code actions would run its command and drop the reply: point them at the panel. */
export const explainCodeActions: Middleware['provideCodeActions'] = async (document, range, context, token, next) => {
    const actions = await next(document, range, context, token);
    return actions?.map((action) => {
        if (action instanceof vscode.CodeAction) {
            if (action.command) {
                action.command = rewriteExplainCommand(action.command);
            }
            return action;
        }
        return rewriteExplainCommand(action);
    });
};

export function registerExplain(context: vscode.ExtensionContext, server: Runner, log: vscode.LogOutputChannel): void {
    const panel = new ExplainPanel(context.extensionUri, log);
    context.subscriptions.push(
        panel,
        vscode.commands.registerCommand('autogradLsp.explain', () => {
            const editor = vscode.window.activeTextEditor;
            if (!editor) {
                void vscode.window.showInformationMessage('autograd-lsp: put the cursor on a line of a Python file to explain its autograd graph.');
                return;
            }
            return explainAt(server, panel, editor.document.uri.toString(), editor.selection.active.line);
        }),
        vscode.commands.registerCommand(CLIENT_EXPLAIN_AT, (uri: string, line: number, device?: string) => explainAt(server, panel, uri, line, device)),
    );
}

async function explainAt(server: Runner, panel: ExplainPanel, uri: string, line: number, device?: string): Promise<void> {
    if (!vscode.workspace.isTrusted) {
        void vscode.window.showWarningMessage('autograd-lsp runs your program to explain its autograd graph: trust this workspace first.');
        return;
    }
    const chosen = device ?? vscode.workspace.getConfiguration('autogradLsp', vscode.Uri.parse(uri)).get<string>('confirm.device') ?? 'cpu';
    try {
        // The server reports cancellable progress itself while the program runs.
        const reply = readReply(await server.executeCommand(SERVER_EXPLAIN, [uri, line, chosen]));
        if ('error' in reply) {
            void vscode.window.showWarningMessage(`autograd-lsp: ${reply.error}`);
            return;
        }
        const name = vscode.Uri.parse(uri).path.split('/').pop() ?? uri;
        await panel.show(reply, `Autograd graph: ${name}:${line + 1}`);
    } catch (error) {
        void vscode.window.showErrorMessage(`autograd-lsp: explaining line ${line + 1} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
}
