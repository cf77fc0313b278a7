/** The explain webview: one panel, reused; the graph drawn by the bundled Graphviz (WebAssembly), the markdown
 * beside it, and a click on a node revealing its source line in the editor. */
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { escapeHtml, ExplainReply, locate, makeNonce, panelHtml } from './explainReply';

const VIEW_TYPE = 'autogradLsp.explain';

export class ExplainPanel implements vscode.Disposable {
    private panel: vscode.WebviewPanel | undefined;
    private reply: ExplainReply | undefined;
    private readonly subscriptions: vscode.Disposable[] = [];

    constructor(
        private readonly extensionUri: vscode.Uri,
        private readonly log: vscode.LogOutputChannel,
    ) {}

    async show(reply: ExplainReply, title: string): Promise<void> {
        this.reply = reply;
        const details = await renderMarkdown(reply.markdown);
        if (!this.panel) {
            this.panel = vscode.window.createWebviewPanel(VIEW_TYPE, title, { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true }, {
                enableScripts: true,
                enableCommandUris: false,
                localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'dist')],
            });
            this.panel.onDidDispose(() => (this.panel = undefined), null, this.subscriptions);
            this.panel.webview.onDidReceiveMessage((message) => void this.onMessage(message), null, this.subscriptions);
        }
        const webview = this.panel.webview;
        this.panel.title = title;
        webview.html = panelHtml({
            cspSource: webview.cspSource,
            nonce: makeNonce((size) => randomBytes(size)),
            scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'explainView.js')).toString(),
            details,
            title,
        });
        this.panel.reveal(vscode.ViewColumn.Beside, true);
    }

    private async onMessage(message: { type?: string; line?: number; message?: string; renderer?: string; nodes?: number }): Promise<void> {
        if (message?.type === 'ready' && this.reply) {
            await this.panel?.webview.postMessage({ type: 'graph', dot: this.reply.dot, svg: this.reply.svg });
        } else if (message?.type === 'rendered') {
            this.log.info(`explain: graph drawn by ${message.renderer} (${message.nodes} linked nodes)`);
        } else if (message?.type === 'error') {
            this.log.warn(`explain panel: ${message.message}`);
        } else if (message?.type === 'reveal' && typeof message.line === 'number' && this.reply) {
            const place = locate(this.reply, message.line);
            if (place) {
                const position = new vscode.Position(place.line, 0);
                await vscode.window.showTextDocument(vscode.Uri.parse(place.uri), {
                    viewColumn: vscode.ViewColumn.One,
                    selection: new vscode.Range(position, position),
                });
            }
        }
    }

    dispose(): void {
        this.panel?.dispose();
        this.subscriptions.forEach((subscription) => subscription.dispose());
    }
}

/** The markdown as HTML by VS Code's own markdown renderer; escaped text if it is not there. */
async function renderMarkdown(markdown: string): Promise<string> {
    try {
        const html = await vscode.commands.executeCommand<string>('markdown.api.render', markdown);
        if (typeof html === 'string' && html) {
            return html;
        }
    } catch {
        // the built-in markdown extension is disabled: show the text as it is
    }
    return `<pre>${escapeHtml(markdown)}</pre>`;
}
