/** The autograd-lsp diagnostic a command acts on: the one under the cursor, else the first on its line. */

export const DIAGNOSTIC_SOURCE = 'autograd-lsp';

export interface Position {
    line: number;
    character: number;
}

export interface Range {
    start: Position;
    end: Position;
}

/** The shape shared by `vscode.Diagnostic` and test doubles. */
export interface DiagnosticLike {
    range: Range;
    source?: string;
    code?: string | number | { value: string | number };
}

export function ruleCode(diagnostic: DiagnosticLike): string | undefined {
    const code = typeof diagnostic.code === 'object' ? diagnostic.code.value : diagnostic.code;
    return code === undefined ? undefined : String(code);
}

function before(a: Position, b: Position): boolean {
    return a.line < b.line || (a.line === b.line && a.character < b.character);
}

function contains(range: Range, position: Position): boolean {
    return !before(position, range.start) && !before(range.end, position);
}

/** Lines and characters a range spans, so that the innermost of nested findings wins. */
function extent(range: Range): [number, number] {
    return [range.end.line - range.start.line, range.end.character - range.start.character];
}

function smaller(a: Range, b: Range): boolean {
    const [aLines, aCharacters] = extent(a);
    const [bLines, bCharacters] = extent(b);
    return aLines < bLines || (aLines === bLines && aCharacters < bCharacters);
}

export function findingAt<T extends DiagnosticLike>(diagnostics: readonly T[], cursor: Position): T | undefined {
    const ours = diagnostics.filter((diagnostic) => diagnostic.source === DIAGNOSTIC_SOURCE && ruleCode(diagnostic));
    const under = ours.filter((diagnostic) => contains(diagnostic.range, cursor));
    if (under.length > 0) {
        return under.reduce((best, candidate) => (smaller(candidate.range, best.range) ? candidate : best));
    }
    return ours.find((diagnostic) => diagnostic.range.start.line <= cursor.line && cursor.line <= diagnostic.range.end.line);
}
