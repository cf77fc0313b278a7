/**
 * The explain panel's script (bundled by esbuild into dist/explainView.js, with Graphviz compiled to WebAssembly):
 * lays out the server's dot, falls back to the server's own SVG, and turns a click on a node into a request to
 * reveal its source line.
 */
import { Graphviz } from '@hpcc-js/wasm-graphviz';
import { lineOfLink } from '../src/explainReply';

interface VsCodeApi {
    postMessage(message: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const graph = document.getElementById('graph') as HTMLElement;

function show(svg: string, renderer: string): void {
    graph.innerHTML = svg;
    graph.dataset.renderer = renderer;
    for (const node of Array.from(graph.querySelectorAll('a, [data-line]'))) {
        const link = node.getAttribute('data-line') ?? node.getAttribute('xlink:href') ?? node.getAttribute('href');
        const line = lineOfLink(link);
        if (line === undefined) {
            continue;
        }
        node.setAttribute('data-source-line', String(line));
        node.addEventListener('click', (event) => {
            event.preventDefault();
            event.stopPropagation();
            vscode.postMessage({ type: 'reveal', line });
        });
    }
    vscode.postMessage({ type: 'rendered', renderer, nodes: graph.querySelectorAll('[data-source-line]').length });
}

async function render(dot: string | undefined, svg: string | undefined): Promise<void> {
    if (dot) {
        try {
            const graphviz = await Graphviz.load();
            show(graphviz.dot(dot), `graphviz ${graphviz.version()}`);
            return;
        } catch (error) {
            vscode.postMessage({ type: 'error', message: `Graphviz: ${String(error)}` });
        }
    }
    if (svg) {
        show(svg, 'autograd-lsp');
    } else {
        graph.textContent = 'No graph to draw at this line (see the explanation beside).';
        vscode.postMessage({ type: 'rendered', renderer: 'none', nodes: 0 });
    }
}

window.addEventListener('message', (event: MessageEvent) => {
    const data = event.data as { type?: string; dot?: string; svg?: string };
    if (data?.type === 'graph') {
        void render(data.dot, data.svg);
    }
});
vscode.postMessage({ type: 'ready' });
