/** The extension's settings, read and checked once, and the `autogradLsp` section the server receives. */

export const SECTION = 'autogradLsp';

export type Device = 'cpu' | 'cuda';
export type Level = 'error' | 'warning' | 'info';

export interface ExtensionSettings {
    select: string[];
    ignore: string[];
    severity: Record<string, Level>;
    interpreter: string;
    confirmDevice: Device;
    confirmTimeout: number;
}

/** What the server gets as initializationOptions and as the answer to workspace/configuration. */
export interface ServerSettings {
    /** Absent when the user selected nothing: the project's pyproject table (or every rule) applies. */
    select?: string[];
    ignore: string[];
    severity: Record<string, Level>;
    /** The user's interpreter: confirmation runs need their torch, whatever runs the server. */
    python: string | undefined;
    confirm: {
        timeout: number;
        device: Device;
        enabled: boolean;
    };
}

export const DEFAULT_CONFIRM_TIMEOUT = 30;
const LEVELS: readonly Level[] = ['error', 'warning', 'info'];

/** `get` is `WorkspaceConfiguration.get` for the `autogradLsp` section, or a stand-in in tests. */
export type SettingGetter = (key: string) => unknown;

function stringList(value: unknown, key: string, problems: string[]): string[] {
    if (value === undefined || value === null) {
        return [];
    }
    if (typeof value === 'string') {
        return value.trim() ? [value.trim()] : [];
    }
    if (Array.isArray(value) && value.every((item) => typeof item === 'string')) {
        return value.map((item) => item.trim()).filter((item) => item.length > 0);
    }
    problems.push(`${SECTION}.${key} must be a list of strings; ignoring ${JSON.stringify(value)}.`);
    return [];
}

function severityTable(value: unknown, problems: string[]): Record<string, Level> {
    if (value === undefined || value === null) {
        return {};
    }
    if (typeof value !== 'object' || Array.isArray(value)) {
        problems.push(`${SECTION}.severity must be an object of rule → "error" | "warning" | "info".`);
        return {};
    }
    const table: Record<string, Level> = {};
    for (const [rule, level] of Object.entries(value as Record<string, unknown>)) {
        const normalised = typeof level === 'string' ? level.toLowerCase() : level;
        if (LEVELS.includes(normalised as Level)) {
            table[rule] = normalised as Level;
        } else {
            problems.push(`${SECTION}.severity.${rule}: ${JSON.stringify(level)} is not one of ${LEVELS.join(', ')}.`);
        }
    }
    return table;
}

/** Invalid values become defaults plus a message, never an exception: a typo must not stop the server. */
export function readSettings(get: SettingGetter): { settings: ExtensionSettings; problems: string[] } {
    const problems: string[] = [];
    const device = get('confirm.device');
    const timeout = get('confirm.timeout');
    const interpreter = get('interpreter');
    if (device !== undefined && device !== 'cpu' && device !== 'cuda') {
        problems.push(`${SECTION}.confirm.device must be "cpu" or "cuda"; using "cpu".`);
    }
    const timeoutIsValid = typeof timeout === 'number' && Number.isFinite(timeout) && timeout > 0;
    if (timeout !== undefined && !timeoutIsValid) {
        problems.push(`${SECTION}.confirm.timeout must be a positive number of seconds; using ${DEFAULT_CONFIRM_TIMEOUT}.`);
    }
    return {
        settings: {
            select: stringList(get('select'), 'select', problems),
            ignore: stringList(get('ignore'), 'ignore', problems),
            severity: severityTable(get('severity'), problems),
            interpreter: typeof interpreter === 'string' ? interpreter.trim() : '',
            confirmDevice: device === 'cuda' ? 'cuda' : 'cpu',
            confirmTimeout: timeoutIsValid ? timeout : DEFAULT_CONFIRM_TIMEOUT,
        },
        problems,
    };
}

export function toServerSettings(
    settings: ExtensionSettings,
    context: { python: string | undefined; workspaceTrusted: boolean },
): ServerSettings {
    return {
        // The server reads an empty select as "no rules"; leaving it out keeps the project's own choice.
        ...(settings.select.length > 0 ? { select: settings.select } : {}),
        ignore: settings.ignore,
        severity: settings.severity,
        python: context.python,
        confirm: {
            timeout: settings.confirmTimeout,
            device: settings.confirmDevice,
            // Confirming runs the user's code: never in a workspace the user has not trusted.
            enabled: context.workspaceTrusted,
        },
    };
}

export type ConfigurationReaction = 'restart' | 'forward' | 'none';

/** The settings the server reads; `trace.server` is re-read by the language client itself. */
const FORWARDED_KEYS = ['select', 'ignore', 'severity', 'confirm'];

/** `affects` is `ConfigurationChangeEvent.affectsConfiguration`. */
export function reactionToChange(affects: (section: string) => boolean): ConfigurationReaction {
    if (affects(`${SECTION}.interpreter`)) {
        return 'restart';
    }
    return FORWARDED_KEYS.some((key) => affects(`${SECTION}.${key}`)) ? 'forward' : 'none';
}
