import * as assert from 'node:assert/strict';
import { DiagnosticLike, findingAt, ruleCode } from '../src/cursorFinding';

function finding(code: DiagnosticLike['code'], startLine: number, startCharacter: number, endLine: number, endCharacter: number, source = 'autograd-lsp'): DiagnosticLike {
    return { code, source, range: { start: { line: startLine, character: startCharacter }, end: { line: endLine, character: endCharacter } } };
}

describe('findingAt', () => {
    it('picks the innermost autograd-lsp finding under the cursor', () => {
        const outer = finding('AG016', 8, 0, 12, 20);
        const inner = finding('AG002', 9, 32, 9, 33);
        assert.equal(findingAt([outer, inner], { line: 9, character: 32 }), inner);
        assert.equal(findingAt([outer, inner], { line: 10, character: 0 }), outer);
    });

    it('ignores other tools\' diagnostics', () => {
        const pylance = finding('reportUndefinedVariable', 3, 0, 3, 10, 'Pylance');
        assert.equal(findingAt([pylance], { line: 3, character: 2 }), undefined);
    });

    it('takes a finding on the cursor\'s line when none is under the cursor', () => {
        const ag002 = finding({ value: 'AG002' }, 9, 32, 9, 33);
        assert.equal(findingAt([ag002], { line: 9, character: 0 }), ag002);
        assert.equal(findingAt([ag002], { line: 8, character: 0 }), undefined);
    });

    it('includes the range ends', () => {
        const ag001 = finding('AG001', 2, 4, 2, 8);
        assert.equal(findingAt([ag001], { line: 2, character: 8 }), ag001);
        assert.equal(findingAt([ag001], { line: 2, character: 4 }), ag001);
    });
});

describe('ruleCode', () => {
    it('reads plain and structured codes', () => {
        assert.equal(ruleCode(finding('AG002', 0, 0, 0, 1)), 'AG002');
        assert.equal(ruleCode(finding({ value: 'AG011' }, 0, 0, 0, 1)), 'AG011');
        assert.equal(ruleCode(finding(undefined, 0, 0, 0, 1)), undefined);
    });
});
