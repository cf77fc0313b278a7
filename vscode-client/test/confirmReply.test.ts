import * as assert from 'node:assert/strict';
import { isolationWarning } from '../src/confirmReply';

describe('isolationWarning', () => {
    it('warns when the server ran the reproducer without the sandbox', () => {
        const warning = isolationWarning('AG001', {
            status: 'confirmed',
            isolation: 'none',
            isolation_note: 'not isolated: bubblewrap (bwrap) is not installed',
        });
        assert.ok(warning);
        assert.match(warning, /AG001 reproducer ran not isolated: bubblewrap \(bwrap\) is not installed\./);
        assert.match(warning, /install bubblewrap/);
    });

    it('says nothing for a sandboxed run, a run that never started, or an odd reply', () => {
        assert.equal(isolationWarning('AG001', { status: 'confirmed', isolation: 'bubblewrap' }), undefined);
        assert.equal(isolationWarning('AG001', { status: 'inconclusive', isolation: null }), undefined);
        assert.equal(isolationWarning('AG001', { status: 'disabled' }), undefined);
        assert.equal(isolationWarning('AG001', undefined), undefined);
        assert.equal(isolationWarning('AG001', 'confirmed'), undefined);
    });

    it('still warns without a note', () => {
        assert.match(isolationWarning('AG002', { isolation: 'none' }) ?? '', /AG002 reproducer ran not isolated\. /);
    });
});
