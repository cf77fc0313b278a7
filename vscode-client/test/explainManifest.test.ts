import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

// out/test/explainManifest.test.js → the extension's package.json and .vscodeignore
const root = path.resolve(__dirname, '..', '..');
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));

describe('the manifest for explain', () => {
    it('declares limited support for untrusted workspaces, naming explain', () => {
        const untrusted = manifest.capabilities.untrustedWorkspaces;
        assert.equal(untrusted.supported, 'limited');
        assert.match(untrusted.description, /explained/);
    });

    it('enables the explain command only in trusted workspaces', () => {
        const explain = manifest.contributes.commands.find((c: { command: string }) => c.command === 'autogradLsp.explain');
        assert.equal(explain.title, 'Explain autograd graph here');
        assert.equal(explain.enablement, 'isWorkspaceTrusted');
        const menu = manifest.contributes.menus['editor/context'].find((m: { command: string }) => m.command === 'autogradLsp.explain');
        assert.match(menu.when, /isWorkspaceTrusted/);
    });

    it('bundles the panel script (with Graphviz) into the .vsix', () => {
        assert.match(manifest.scripts.bundle, /bundle-webview/);
        assert.match(manifest.scripts['bundle-webview'], /webview\/explainView\.ts .*--outfile=dist\/explainView\.js/);
        assert.ok(manifest.dependencies['@hpcc-js/wasm-graphviz']);
        assert.match(fs.readFileSync(path.join(root, '.vscodeignore'), 'utf8'), /^!dist\/explainView\.js$/m);
    });
});
