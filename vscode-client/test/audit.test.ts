import * as assert from 'node:assert/strict';
import { splitArguments } from '../src/auditArguments';

describe('splitArguments', () => {
    it('splits at spaces and keeps quoted groups', () => {
        assert.deepEqual(splitArguments('--lr 0.1  --name "my run" \'a b\''), ['--lr', '0.1', '--name', 'my run', 'a b']);
    });

    it('keeps empty quoted arguments and escaped characters', () => {
        assert.deepEqual(splitArguments('"" x\\ y "say \\"hi\\""'), ['', 'x y', 'say "hi"']);
    });

    it('gives nothing for a blank line and expands nothing', () => {
        assert.deepEqual(splitArguments('   '), []);
        assert.deepEqual(splitArguments('$HOME *.py'), ['$HOME', '*.py']);
    });
});
