/**
 * The explain feature's pure parts (no `vscode` import, so mocha tests them and the webview bundles them): the
 * capability the client declares, reading the server's reply, rewriting the server's code-action command to the
 * client's, the node → source-line link, and the panel's HTML with its content security policy.
 */

/** The server's command (workspace/executeCommand) and the client command that opens the panel instead. */
export const SERVER_EXPLAIN = 'autograd-lsp.explain';
export const CLIENT_EXPLAIN_AT = 'autogradLsp.explainAt';

/** What this client accepts with the markdown: `capabilities.experimental.autogradLsp.explainFormats`. */
export const EXPLAIN_FORMATS = ['dot', 'svg'] as const;

export function withExplainCapability(experimental: unknown): Record<string, unknown> {
    const base = experimental && typeof experimental === 'object' ? { ...(experimental as Record<string, unknown>) } : {};
    const ours = base.autogradLsp && typeof base.autogradLsp === 'object' ? (base.autogradLsp as Record<string, unknown>) : {};
    base.autogradLsp = { ...ours, explainFormats: [...EXPLAIN_FORMATS] };
    return base;
}

export interface ExplainReply {
    status: string;
    markdown: string;
    summary: string;
    uri?: string;
    line?: number;
    culprit?: { uri: string; line: number; message?: string } | null;
    /** analysed line (as a string) → [document uri, 0-based line] */
    locations: Record<string, [string, number]>;
    svg?: string;
    dot?: string;
}

/** The reply as the panel uses it, or a message saying why there is nothing to show. */
export function readReply(reply: unknown): ExplainReply | { error: string } {
    if (!reply || typeof reply !== 'object') {
        return { error: 'the server sent no explanation' };
    }
    const r = reply as Record<string, unknown>;
    const status = typeof r.status === 'string' ? r.status : 'unknown';
    const markdown = typeof r.markdown === 'string' ? r.markdown : '';
    const summary = typeof r.summary === 'string' ? r.summary : status;
    if (status === 'cancelled' || status === 'disabled' || (status === 'error' && !markdown)) {
        return { error: summary };
    }
    const locations: Record<string, [string, number]> = {};
    if (r.locations && typeof r.locations === 'object') {
        for (const [key, value] of Object.entries(r.locations as Record<string, unknown>)) {
            if (Array.isArray(value) && typeof value[0] === 'string' && Number.isInteger(value[1])) {
                locations[key] = [value[0], value[1] as number];
            }
        }
    }
    const culprit = r.culprit && typeof r.culprit === 'object' ? (r.culprit as ExplainReply['culprit']) : null;
    return {
        status, markdown, summary, locations, culprit,
        uri: typeof r.uri === 'string' ? r.uri : undefined,
        line: typeof r.line === 'number' ? r.line : undefined,
        svg: typeof r.svg === 'string' ? r.svg : undefined,
        dot: typeof r.dot === 'string' ? r.dot : undefined,
    };
}

export interface CommandLike {
    title: string;
    command: string;
    arguments?: unknown[];
}

/** The server's explain command, pointed at the client command that shows the reply (VS Code would drop it). */
export function rewriteExplainCommand<T extends CommandLike>(command: T): T {
    return command.command === SERVER_EXPLAIN ? { ...command, command: CLIENT_EXPLAIN_AT } : command;
}

/** `#L20` (Graphviz's href of a node whose dot says URL="#L20") or a `data-line` value → 20; else undefined. */
export function lineOfLink(link: string | null | undefined): number | undefined {
    const match = /^(?:#L)?(\d+)$/.exec((link ?? '').trim());
    const line = match ? Number(match[1]) : NaN;
    return Number.isInteger(line) && line > 0 ? line : undefined;
}

/** Where an analysed line is shown: the reply's map, else the explained document itself (1-based → 0-based). */
export function locate(reply: ExplainReply, line: number): { uri: string; line: number } | undefined {
    const place = reply.locations[String(line)];
    if (place) {
        return { uri: place[0], line: place[1] };
    }
    return reply.uri ? { uri: reply.uri, line: line - 1 } : undefined;
}

export function escapeHtml(text: string): string {
    return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

/**
 * The panel: the graph on the left, the markdown on the right. Scripts only with the nonce (the bundled view and
 * Graphviz's WebAssembly, hence 'wasm-unsafe-eval'); no inline handlers, no remote content, no eval.
 */
export function panelHtml(options: { cspSource: string; nonce: string; scriptUri: string; details: string; title: string }): string {
    const { cspSource, nonce, scriptUri, details, title } = options;
    const csp = [
        "default-src 'none'",
        `img-src ${cspSource} data:`,
        `style-src ${cspSource} 'nonce-${nonce}'`,
        `script-src 'nonce-${nonce}' 'wasm-unsafe-eval'`,
        `font-src ${cspSource}`,
    ].join('; ');
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>${escapeHtml(title)}</title>
<style nonce="${nonce}">
  body { display: flex; gap: 12px; margin: 0; padding: 8px; font-family: var(--vscode-font-family); color: var(--vscode-foreground); }
  #graph { flex: 3; overflow: auto; min-width: 0; background: #fff; border-radius: 4px; padding: 6px; }
  #graph svg { max-width: 100%; height: auto; }
  #graph a, #graph [data-line] { cursor: pointer; }
  #details { flex: 2; overflow: auto; min-width: 0; font-size: 12px; }
  #details table { border-collapse: collapse; }
  #details th, #details td { border: 1px solid var(--vscode-panel-border, #8884); padding: 2px 6px; }
  #status { color: var(--vscode-descriptionForeground); }
</style>
</head>
<body>
<div id="graph"><p id="status">Rendering the graph…</p></div>
<div id="details">${details}</div>
<script nonce="${nonce}" src="${scriptUri}"></script>
</body>
</html>`;
}

/** A nonce for the CSP: 24 characters (144 bits) from a cryptographic source. */
export function makeNonce(random: (size: number) => Uint8Array): string {
    return Array.from(random(24), (byte) => 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'[byte % 64]).join('');
}
