/** Entry point: the output channel, the server, its commands, and the events that restart or reconfigure it. */
import * as vscode from 'vscode';
import { isolationWarning } from './confirmReply';
import { findingAt, ruleCode } from './cursorFinding';
import { registerExplain } from './explain';
import { onActiveInterpreterChange } from './pythonExtension';
import { Server } from './server';
import { Device, reactionToChange, SECTION } from './settings';

/** Server-side commands (workspace/executeCommand) and the fix-all code action kind. */
const SERVER_CONFIRM = 'autograd-lsp.confirm';
const SERVER_RULE_DOC = 'autograd-lsp.showRuleDoc';
const FIX_ALL_KIND = 'source.fixAll.autograd-lsp';

let server: Server | undefined;

/** Rule documentation as read-only `autograd-lsp-rule:/AG002.md` documents: previewable, never "unsaved". */
const RULE_DOC_SCHEME = 'autograd-lsp-rule';
const ruleDocTexts = new Map<string, string>();
const ruleDocs: vscode.TextDocumentContentProvider = {
    provideTextDocumentContent: (uri) => ruleDocTexts.get(uri.path) ?? '',
};

export async function activate(context: vscode.ExtensionContext): Promise<void> {
    const log = vscode.window.createOutputChannel('autograd-lsp', { log: true });
    server = new Server(context, log);
    const running = server;
    registerExplain(context, running, log);
    context.subscriptions.push(
        log,
        running,
        vscode.commands.registerCommand('autogradLsp.restart', () => running.restart()),
        vscode.commands.registerCommand('autogradLsp.showLog', () => log.show()),
        vscode.commands.registerCommand('autogradLsp.confirmCpu', () => confirmFinding(running, 'cpu')),
        vscode.commands.registerCommand('autogradLsp.confirmCuda', () => confirmFinding(running, 'cuda')),
        vscode.workspace.registerTextDocumentContentProvider(RULE_DOC_SCHEME, ruleDocs),
        vscode.commands.registerCommand('autogradLsp.showRuleDoc', () => showRuleDoc(running)),
        vscode.commands.registerCommand('autogradLsp.fixAll', () =>
            vscode.commands.executeCommand('editor.action.sourceAction', { kind: FIX_ALL_KIND, apply: 'first' }),
        ),
        vscode.workspace.onDidChangeConfiguration((event) => {
            const reaction = reactionToChange((section) => event.affectsConfiguration(section));
            if (reaction === 'restart') {
                void running.restart();
            } else if (reaction === 'forward') {
                void running.forwardSettings();
            }
        }),
        // Trust changes the interpreter allowed, the server's working folder and whether confirmation may run.
        vscode.workspace.onDidGrantWorkspaceTrust(() => running.restart()),
    );
    const interpreterWatch = await onActiveInterpreterChange(() => {
        if (!vscode.workspace.getConfiguration(SECTION).get<string>('interpreter')?.trim()) {
            void running.restart();
        }
    });
    if (interpreterWatch) {
        context.subscriptions.push(interpreterWatch);
    }
    await running.restart();
}

export async function deactivate(): Promise<void> {
    await server?.stop();
}

function findingUnderCursor(): { editor: vscode.TextEditor; diagnostic: vscode.Diagnostic; code: string } | undefined {
    const editor = vscode.window.activeTextEditor;
    if (!editor) {
        return undefined;
    }
    const diagnostic = findingAt(vscode.languages.getDiagnostics(editor.document.uri), editor.selection.active);
    const code = diagnostic && ruleCode(diagnostic);
    return diagnostic && code ? { editor, diagnostic, code } : undefined;
}

async function confirmFinding(server: Server, device: Device): Promise<void> {
    if (!vscode.workspace.isTrusted) {
        void vscode.window.showWarningMessage('autograd-lsp runs code to confirm a finding: trust this workspace first.');
        return;
    }
    const target = findingUnderCursor();
    if (!target) {
        void vscode.window.showInformationMessage('autograd-lsp: put the cursor on an autograd-lsp finding to confirm it.');
        return;
    }
    const { editor, diagnostic, code } = target;
    try {
        // The server reports progress (cancellable) and the verdict itself, and appends it to the diagnostic.
        const reply = await server.executeCommand(SERVER_CONFIRM, [editor.document.uri.toString(), diagnostic.range.start.line, code, device]);
        // Without bubblewrap the verdict says "[not isolated: …]"; say what that means, as a warning.
        const warning = isolationWarning(code, reply);
        if (warning) {
            void vscode.window.showWarningMessage(warning);
        }
    } catch (error) {
        void vscode.window.showErrorMessage(`autograd-lsp: confirming ${code} failed: ${errorMessage(error)}`);
    }
}

function errorMessage(error: unknown): string {
    return error instanceof Error ? error.message : String(error);
}

async function showRuleDoc(server: Server): Promise<void> {
    const code =
        findingUnderCursor()?.code ??
        (await vscode.window.showInputBox({ prompt: 'autograd-lsp rule: a code (AG002) or a name (stale-composed-weight)', value: 'AG0' }));
    if (!code?.trim()) {
        return;
    }
    try {
        const markdown = await server.executeCommand(SERVER_RULE_DOC, [code.trim()]);
        if (typeof markdown !== 'string' || !markdown) {
            return; // an unknown rule: the server has said so
        }
        const uri = vscode.Uri.from({ scheme: RULE_DOC_SCHEME, path: `/${code.trim().toUpperCase()}.md` });
        ruleDocTexts.set(uri.path, markdown);
        await vscode.commands.executeCommand('markdown.showPreview', uri);
    } catch (error) {
        void vscode.window.showErrorMessage(`autograd-lsp: rule documentation for ${code}: ${errorMessage(error)}`);
    }
}
