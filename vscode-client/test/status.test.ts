import * as assert from 'node:assert/strict';
import { statusView } from '../src/status';

describe('statusView', () => {
    it('names the state and marks errors', () => {
        assert.match(statusView('running', '/venv/bin/python').tooltip, /running\n\/venv\/bin\/python/);
        assert.equal(statusView('running', undefined).background, undefined);
        assert.equal(statusView('error', 'no Python').background, 'statusBarItem.errorBackground');
        assert.match(statusView('starting', undefined).text, /sync~spin/);
    });
});
