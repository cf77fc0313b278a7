/** What the notification needs from the server's `autograd-lsp.confirm` reply (its JSON verdict). */

/**
 * A warning when the run was not isolated (no bubblewrap here, or AUTOGRAD_LSP_SANDBOX=none): the
 * program ran with the user's privileges. Undefined when it ran in the sandbox, or nothing ran.
 */
export function isolationWarning(code: string, reply: unknown): string | undefined {
    if (typeof reply !== 'object' || reply === null) {
        return undefined;
    }
    const { isolation, isolation_note: note } = reply as { isolation?: unknown; isolation_note?: unknown };
    if (isolation !== 'none') {
        return undefined;
    }
    const why = typeof note === 'string' && note ? note : 'not isolated';
    return (
        `autograd-lsp: the ${code} reproducer ran ${why.startsWith('not isolated') ? why : `not isolated: ${why}`}. ` +
        'It could read your files and environment, write where you can and reach the network; ' +
        'install bubblewrap (Linux) for a sandboxed run.'
    );
}
