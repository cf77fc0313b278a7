import * as assert from 'node:assert/strict';
import { readSettings, reactionToChange, toServerSettings } from '../src/settings';

function getter(values: Record<string, unknown>) {
    return (key: string) => values[key];
}

describe('readSettings', () => {
    it('reads the contributed defaults', () => {
        const { settings, problems } = readSettings(
            getter({ select: [], ignore: [], severity: {}, interpreter: '', 'confirm.device': 'cpu', 'confirm.timeout': 30 }),
        );
        assert.deepEqual(settings, { select: [], ignore: [], severity: {}, interpreter: '', confirmDevice: 'cpu', confirmTimeout: 30 });
        assert.deepEqual(problems, []);
    });

    it('keeps valid values and trims rule names', () => {
        const { settings } = readSettings(
            getter({ select: [' AG00 ', 'stale-composed-weight', ''], ignore: 'AG011', severity: { AG008: 'INFO' }, 'confirm.device': 'cuda', 'confirm.timeout': 5.5 }),
        );
        assert.deepEqual(settings.select, ['AG00', 'stale-composed-weight']);
        assert.deepEqual(settings.ignore, ['AG011']);
        assert.deepEqual(settings.severity, { AG008: 'info' });
        assert.equal(settings.confirmDevice, 'cuda');
        assert.equal(settings.confirmTimeout, 5.5);
    });

    it('turns invalid values into defaults and one message each', () => {
        const { settings, problems } = readSettings(
            getter({ select: [1, 2], severity: { AG001: 'fatal', AG002: 'warning' }, 'confirm.device': 'tpu', 'confirm.timeout': -1, interpreter: 3 }),
        );
        assert.deepEqual(settings.select, []);
        assert.deepEqual(settings.severity, { AG002: 'warning' });
        assert.equal(settings.confirmDevice, 'cpu');
        assert.equal(settings.confirmTimeout, 30);
        assert.equal(settings.interpreter, '');
        assert.equal(problems.length, 4);
        assert.match(problems.join('\n'), /autogradLsp\.select/);
        assert.match(problems.join('\n'), /severity\.AG001/);
        assert.match(problems.join('\n'), /confirm\.device/);
        assert.match(problems.join('\n'), /confirm\.timeout/);
    });

    it('rejects a severity that is not an object', () => {
        const { settings, problems } = readSettings(getter({ severity: ['error'] }));
        assert.deepEqual(settings.severity, {});
        assert.equal(problems.length, 1);
    });
});

describe('toServerSettings', () => {
    const base = readSettings(getter({})).settings;

    it('maps to the autogradLsp section the server reads', () => {
        const settings = { ...base, select: ['AG0'], ignore: ['AG011'], severity: { AG008: 'info' as const }, confirmDevice: 'cuda' as const, confirmTimeout: 12 };
        assert.deepEqual(toServerSettings(settings, { python: '/venv/bin/python', workspaceTrusted: true }), {
            select: ['AG0'],
            ignore: ['AG011'],
            severity: { AG008: 'info' },
            python: '/venv/bin/python',
            confirm: { timeout: 12, device: 'cuda', enabled: true },
        });
    });

    it('leaves select out when the user selected nothing, so the project config applies', () => {
        assert.equal('select' in toServerSettings(base, { python: undefined, workspaceTrusted: true }), false);
    });

    it('disables confirmation in an untrusted workspace', () => {
        assert.equal(toServerSettings(base, { python: '/p', workspaceTrusted: false }).confirm.enabled, false);
    });
});

describe('reactionToChange', () => {
    const changed = (...sections: string[]) => (section: string) =>
        sections.some((changedSection) => changedSection === section || changedSection.startsWith(`${section}.`) || section.startsWith(`${changedSection}.`));

    it('restarts when the interpreter changes', () => {
        assert.equal(reactionToChange(changed('autogradLsp.interpreter')), 'restart');
        assert.equal(reactionToChange(changed('autogradLsp')), 'restart');
    });

    it('forwards rule and confirmation settings', () => {
        assert.equal(reactionToChange(changed('autogradLsp.select')), 'forward');
        assert.equal(reactionToChange(changed('autogradLsp.confirm.timeout')), 'forward');
        assert.equal(reactionToChange(changed('autogradLsp.trace.server', 'autogradLsp.severity')), 'forward');
    });

    it('ignores trace and other extensions\' settings', () => {
        assert.equal(reactionToChange(changed('autogradLsp.trace.server')), 'none');
        assert.equal(reactionToChange(changed('python.defaultInterpreterPath')), 'none');
    });
});
