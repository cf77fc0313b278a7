/** The audit command's arguments line, split as a shell would (no vscode import: unit-tested with mocha). */

/**
 * The script's arguments as a shell would split them (spaces; single and double quotes group; a backslash escapes
 * the next character outside single quotes). No expansion of variables or globs: nothing runs a shell.
 */
export function splitArguments(line: string): string[] {
    const args: string[] = [];
    let current = '';
    let started = false;
    let quote: string | undefined;
    for (let i = 0; i < line.length; i++) {
        const char = line[i];
        if (quote) {
            if (char === quote) {
                quote = undefined;
            } else if (char === '\\' && quote === '"' && i + 1 < line.length) {
                current += line[++i];
            } else {
                current += char;
            }
        } else if (char === "'" || char === '"') {
            quote = char;
            started = true;
        } else if (char === '\\' && i + 1 < line.length) {
            current += line[++i];
            started = true;
        } else if (/\s/.test(char)) {
            if (started) {
                args.push(current);
            }
            current = '';
            started = false;
        } else {
            current += char;
            started = true;
        }
    }
    if (started) {
        args.push(current);
    }
    return args;
}
