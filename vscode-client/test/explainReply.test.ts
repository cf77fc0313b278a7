import * as assert from 'node:assert/strict';
import {
    CLIENT_EXPLAIN_AT,
    escapeHtml,
    lineOfLink,
    locate,
    makeNonce,
    panelHtml,
    readReply,
    rewriteExplainCommand,
    SERVER_EXPLAIN,
    withExplainCapability,
} from '../src/explainReply';

const URI = 'file:///w/seed001_three_weights.py';
const REPLY = {
    status: 'explained',
    markdown: '**Culprit:** line 40',
    summary: 'explained line 39: the culprit is line 40',
    uri: URI,
    line: 38,
    culprit: { uri: URI, line: 39, message: 'optim.step() changed model.w2' },
    locations: { '20': [URI, 19], '40': [URI, 39], bad: ['x'], '7': ['vscode-notebook-cell:/n.ipynb#c1', 2] },
    dot: 'digraph { n1 [URL="#L20"] }',
};

describe('withExplainCapability', () => {
    it('adds explainFormats under experimental.autogradLsp and keeps what else is there', () => {
        const filled = withExplainCapability({ other: 1, autogradLsp: { keep: true } });
        assert.deepEqual(filled, { other: 1, autogradLsp: { keep: true, explainFormats: ['dot', 'svg'] } });
        assert.deepEqual(withExplainCapability(undefined), { autogradLsp: { explainFormats: ['dot', 'svg'] } });
    });
});

describe('readReply', () => {
    it('keeps the well-formed locations and the drawings', () => {
        const reply = readReply(REPLY);
        assert.ok(!('error' in reply));
        assert.deepEqual(reply.locations, { '20': [URI, 19], '40': [URI, 39], '7': ['vscode-notebook-cell:/n.ipynb#c1', 2] });
        assert.equal(reply.dot, REPLY.dot);
        assert.equal(reply.svg, undefined);
        assert.equal(reply.culprit?.line, 39);
    });

    it('turns a refusal, a cancellation or an odd reply into a message', () => {
        assert.deepEqual(readReply({ status: 'disabled', markdown: 'x', summary: 'runs are disabled' }), { error: 'runs are disabled' });
        assert.deepEqual(readReply({ status: 'cancelled', markdown: '', summary: 'cancelled' }), { error: 'cancelled' });
        assert.deepEqual(readReply(null), { error: 'the server sent no explanation' });
        assert.ok(!('error' in readReply({ status: 'timeout', markdown: 'did not finish', summary: 'timeout' })));
    });
});

describe('rewriteExplainCommand', () => {
    it('points the server explain command at the panel command and leaves others alone', () => {
        const explain = { title: 'Explain', command: SERVER_EXPLAIN, arguments: [URI, 38, 'cpu'] };
        assert.deepEqual(rewriteExplainCommand(explain), { title: 'Explain', command: CLIENT_EXPLAIN_AT, arguments: [URI, 38, 'cpu'] });
        const confirm = { title: 'Confirm', command: 'autograd-lsp.confirm', arguments: [] };
        assert.equal(rewriteExplainCommand(confirm), confirm);
    });
});

describe('lineOfLink and locate', () => {
    it('reads Graphviz hrefs and data-line values', () => {
        assert.equal(lineOfLink('#L20'), 20);
        assert.equal(lineOfLink('40'), 40);
        assert.equal(lineOfLink('#L0'), undefined);
        assert.equal(lineOfLink('https://example.com/#L3'), undefined);
        assert.equal(lineOfLink(null), undefined);
    });

    it('maps analysed lines through the reply, else into the explained document', () => {
        const reply = readReply(REPLY);
        assert.ok(!('error' in reply));
        assert.deepEqual(locate(reply, 20), { uri: URI, line: 19 });
        assert.deepEqual(locate(reply, 7), { uri: 'vscode-notebook-cell:/n.ipynb#c1', line: 2 });
        assert.deepEqual(locate(reply, 12), { uri: URI, line: 11 });
    });
});

describe('panelHtml', () => {
    const html = panelHtml({ cspSource: 'vscode-resource:', nonce: 'N0nce', scriptUri: 'vscode-resource:/dist/explainView.js',
        details: '<table></table>', title: 'Autograd graph: a<b>.py:3' });
    const csp = /http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(html)?.[1] ?? '';

    it('has a strict CSP: nothing by default, scripts by nonce only (and WebAssembly), no eval, no remote hosts', () => {
        assert.match(csp, /default-src 'none'/);
        assert.match(csp, /script-src 'nonce-N0nce' 'wasm-unsafe-eval'/);
        assert.doesNotMatch(csp, /unsafe-inline|'unsafe-eval'|https?:|\*/);
    });

    it('loads only the bundled script, with the nonce, and escapes the title', () => {
        assert.deepEqual([...html.matchAll(/<script[^>]*>/g)].map((m) => m[0]),
            ['<script nonce="N0nce" src="vscode-resource:/dist/explainView.js">']);
        assert.match(html, /<title>Autograd graph: a&lt;b&gt;\.py:3<\/title>/);
        assert.equal(escapeHtml(`<a href="x">'&'</a>`), '&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
    });
});

describe('makeNonce', () => {
    it('uses every random byte, from a 64-character alphabet', () => {
        const nonce = makeNonce((size) => Uint8Array.from({ length: size }, (_, i) => i * 11));
        assert.equal(nonce.length, 24);
        assert.match(nonce, /^[A-Za-z0-9_-]{24}$/);
        assert.notEqual(makeNonce((size) => new Uint8Array(size)), nonce);
    });
});
