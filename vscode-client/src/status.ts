/** What the status-bar item says in each server state. */

export type ServerState = 'starting' | 'running' | 'stopped' | 'error';

export interface StatusView {
    text: string;
    tooltip: string;
    /** A `ThemeColor` id for the item's background, for states that need the user's attention. */
    background?: string;
}

const ICONS: Record<ServerState, string> = {
    starting: '$(sync~spin)',
    running: '$(check)',
    stopped: '$(circle-slash)',
    error: '$(error)',
};

export function statusView(state: ServerState, detail: string | undefined): StatusView {
    const headline = `autograd-lsp: ${state}`;
    return {
        text: `${ICONS[state]} autograd-lsp`,
        tooltip: detail ? `${headline}\n${detail}\nClick for the server log.` : `${headline}\nClick for the server log.`,
        ...(state === 'error' ? { background: 'statusBarItem.errorBackground' } : {}),
    };
}
