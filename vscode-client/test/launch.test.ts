import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { isLaunchFailure, LaunchPlan, parseProbeOutput, planLaunch, PROBE_SCRIPT, ProbeResult } from '../src/launch';

const probe = (overrides: Partial<ProbeResult> = {}): ProbeResult => ({ python: [3, 11, 7], executable: '/venv/bin/python', autogradLsp: null, ...overrides });
const bundle = { root: '/ext/bundled', present: true };

describe('parseProbeOutput', () => {
    it('reads the last line, after whatever a site hook printed', () => {
        const output = 'conda says hi\n{"python": [3, 10, 2], "executable": "/p", "autograd_lsp": "0.1.0"}\n';
        assert.deepEqual(parseProbeOutput(output), { python: [3, 10, 2], executable: '/p', autogradLsp: '0.1.0' });
    });

    it('rejects output that is not the probe', () => {
        assert.equal(parseProbeOutput(''), undefined);
        assert.equal(parseProbeOutput('Python 2.7'), undefined);
        assert.equal(parseProbeOutput('{"python": 3}'), undefined);
    });

    it('matches what the probe script prints on a real interpreter', function () {
        let output: string;
        try {
            output = execFileSync(process.env.AUTOGRAD_LSP_PYTHON ?? 'python3', ['-c', PROBE_SCRIPT], { encoding: 'utf8', cwd: '/' });
        } catch {
            this.skip();
        }
        const parsed = parseProbeOutput(output);
        assert.ok(parsed, output);
        assert.equal(parsed.python[0], 3);
    });
});

describe('planLaunch', () => {
    it('runs the interpreter\'s own autograd_lsp when it is importable', () => {
        const plan = planLaunch('/venv/bin/python', probe({ autogradLsp: '0.1.0' }), bundle, '/mine', ':');
        assert.deepEqual(plan, { command: '/venv/bin/python', args: ['-m', 'autograd_lsp', 'serve'], env: {}, origin: 'interpreter' });
    });

    it('falls back to the bundled copy, bundled libraries first on PYTHONPATH', () => {
        const plan = planLaunch('/venv/bin/python', probe(), bundle, '/mine', ':') as LaunchPlan;
        assert.equal(plan.origin, 'bundled');
        assert.equal(plan.command, '/venv/bin/python');
        assert.deepEqual(plan.args, ['-m', 'autograd_lsp', 'serve']);
        assert.equal(plan.env.PYTHONPATH, [path.join('/ext/bundled', 'libs'), path.join('/ext/bundled', 'tool'), '/mine'].join(':'));
        assert.equal(plan.env.AUTOGRAD_LSP_BUNDLED_PATHS, [path.join('/ext/bundled', 'libs'), path.join('/ext/bundled', 'tool')].join(':'));
    });

    it('does not leave an empty PYTHONPATH entry (the current folder) when none was inherited', () => {
        const plan = planLaunch('/p', probe(), bundle, undefined, ':') as LaunchPlan;
        assert.equal(plan.env.PYTHONPATH.split(':').length, 2);
    });

    it('fails with advice when there is neither an installed nor a bundled server', () => {
        const plan = planLaunch('/p', probe(), { ...bundle, present: false }, undefined, ':');
        assert.ok(isLaunchFailure(plan));
        assert.match(plan.error, /pip install autograd-lsp/);
    });

    it('refuses a Python older than 3.10', () => {
        const plan = planLaunch('/usr/bin/python3', probe({ python: [3, 9, 18], autogradLsp: '0.1.0' }), bundle, undefined, ':');
        assert.ok(isLaunchFailure(plan));
        assert.match(plan.error, /3\.9\.18.*3\.10/);
        assert.equal(isLaunchFailure(planLaunch('/p', probe({ python: [4, 0, 0] }), bundle, undefined, ':')), false);
    });
});
