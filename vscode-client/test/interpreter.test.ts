import * as assert from 'node:assert/strict';
import { expandVariables, findOnPath, InterpreterLookup, resolveInterpreter } from '../src/interpreter';

function lookup(overrides: Partial<InterpreterLookup> = {}): InterpreterLookup & { logged: string[] } {
    const logged: string[] = [];
    return {
        setting: undefined,
        workspaceFolder: '/ws',
        homeDir: '/home/me',
        env: { VENV: '/opt/venv' },
        activeEnvironmentPath: async () => undefined,
        findOnPath: () => undefined,
        platform: 'linux',
        log: (message) => logged.push(message),
        logged,
        ...overrides,
    };
}

describe('resolveInterpreter', () => {
    it('prefers the setting over the Python extension and PATH', async () => {
        const resolved = await resolveInterpreter(
            lookup({ setting: '/usr/bin/python3.12', activeEnvironmentPath: async () => '/ext/python', findOnPath: () => '/usr/bin/python3' }),
        );
        assert.deepEqual(resolved, { path: '/usr/bin/python3.12', source: 'setting' });
    });

    it('expands ${workspaceFolder} and makes a relative setting relative to the folder', async () => {
        assert.equal((await resolveInterpreter(lookup({ setting: '${workspaceFolder}/.venv/bin/python' })))?.path, '/ws/.venv/bin/python');
        assert.equal((await resolveInterpreter(lookup({ setting: '.venv/bin/python' })))?.path, '/ws/.venv/bin/python');
    });

    it('looks a bare interpreter name up on PATH, and keeps it when PATH lacks it', async () => {
        const onPath = lookup({ setting: 'python3.11', findOnPath: (name) => (name === 'python3.11' ? '/usr/local/bin/python3.11' : undefined) });
        assert.deepEqual(await resolveInterpreter(onPath), { path: '/usr/local/bin/python3.11', source: 'setting' });
        assert.deepEqual(await resolveInterpreter(lookup({ setting: 'python3.99' })), { path: 'python3.99', source: 'setting' });
    });

    it('treats a blank setting as unset', async () => {
        const resolved = await resolveInterpreter(lookup({ setting: '   ', activeEnvironmentPath: async () => '/ext/python' }));
        assert.deepEqual(resolved, { path: '/ext/python', source: 'python-extension' });
    });

    it('falls back to python3 on PATH when the Python extension is absent', async () => {
        const found = lookup({ findOnPath: (name) => (name === 'python3' ? '/usr/bin/python3' : undefined) });
        assert.deepEqual(await resolveInterpreter(found), { path: '/usr/bin/python3', source: 'path' });
    });

    it('falls back to PATH, with a log line, when the Python extension fails', async () => {
        const failing = lookup({
            activeEnvironmentPath: async () => {
                throw new Error('not ready');
            },
            findOnPath: (name) => (name === 'python' ? '/usr/bin/python' : undefined),
        });
        assert.deepEqual(await resolveInterpreter(failing), { path: '/usr/bin/python', source: 'path' });
        assert.match(failing.logged[0], /not ready/);
    });

    it('uses python.exe on Windows and gives up when nothing is found', async () => {
        const asked: string[] = [];
        const resolved = await resolveInterpreter(lookup({ platform: 'win32', findOnPath: (name) => void asked.push(name) }));
        assert.equal(resolved, undefined);
        assert.deepEqual(asked, ['python.exe', 'py.exe']);
    });
});

describe('expandVariables', () => {
    const context = { workspaceFolder: '/ws', homeDir: '/home/me', env: { VENV: '/opt/venv' } };

    it('expands ~, ${userHome}, ${env:NAME} and ${workspaceFolder}', () => {
        assert.equal(expandVariables('~/venv/bin/python', context), '/home/me/venv/bin/python');
        assert.equal(expandVariables('${userHome}/x', context), '/home/me/x');
        assert.equal(expandVariables('${env:VENV}/bin/python', context), '/opt/venv/bin/python');
        assert.equal(expandVariables('${env:MISSING}python', context), 'python');
        assert.equal(expandVariables(' ${workspaceFolder}/p ', context), '/ws/p');
    });

    it('leaves ${workspaceFolder} alone without a folder', () => {
        assert.equal(expandVariables('${workspaceFolder}/p', { ...context, workspaceFolder: undefined }), '${workspaceFolder}/p');
    });
});

describe('findOnPath', () => {
    it('returns the first executable along PATH, skipping empty entries', () => {
        const executables = new Set(['/b/python3', '/c/python3']);
        const found = findOnPath('python3', { PATH: '::/a:/b:/c' }, 'linux', (candidate) => executables.has(candidate));
        assert.equal(found, '/b/python3');
    });

    it('splits a Windows Path on semicolons', () => {
        const found = findOnPath('python.exe', { Path: 'C:\\a;C:\\Python312' }, 'win32', (candidate) => candidate === 'C:\\Python312\\python.exe');
        assert.equal(found, 'C:\\Python312\\python.exe');
    });

    it('finds nothing without PATH', () => {
        assert.equal(findOnPath('python3', {}, 'linux', () => true), undefined);
    });
});
