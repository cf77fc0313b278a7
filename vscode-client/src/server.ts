/** The language client's life: find Python, decide how to start the server, start/stop/restart it, feed it settings. */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
    DidChangeConfigurationNotification,
    ExecuteCommandRequest,
    LanguageClient,
    LanguageClientOptions,
    RevealOutputChannelOn,
    ServerOptions,
    State,
} from 'vscode-languageclient/node';
import { findOnPath, resolveInterpreter, ResolvedInterpreter } from './interpreter';
import { isLaunchFailure, LaunchPlan, parseProbeOutput, planLaunch, PROBE_SCRIPT, ProbeResult } from './launch';
import { activeInterpreter } from './pythonExtension';
import { explainCapability, explainCodeActions } from './explain';
import { readSettings, SECTION, ServerSettings, toServerSettings } from './settings';
import { ServerState, statusView } from './status';

const PROBE_TIMEOUT_MS = 20_000;

export const DOCUMENT_SELECTOR = [
    { scheme: 'file', language: 'python' },
    { scheme: 'untitled', language: 'python' },
    { notebook: 'jupyter-notebook', language: 'python' },
];

function isExecutableFile(candidate: string): boolean {
    try {
        fs.accessSync(candidate, fs.constants.X_OK);
        return fs.statSync(candidate).isFile();
    } catch {
        return false;
    }
}

function runProbe(interpreter: string, cwd: string): Promise<ProbeResult> {
    return new Promise((resolve, reject) => {
        execFile(interpreter, ['-c', PROBE_SCRIPT], { cwd, timeout: PROBE_TIMEOUT_MS }, (error, stdout, stderr) => {
            const probe = error ? undefined : parseProbeOutput(stdout);
            if (probe) {
                resolve(probe);
            } else {
                reject(new Error(`${interpreter} could not be run: ${error?.message ?? 'unexpected output'} ${stderr}`.trim()));
            }
        });
    });
}

export class Server implements vscode.Disposable {
    private client: LanguageClient | undefined;
    private interpreter: ResolvedInterpreter | undefined;
    /** Restarts run one after another: a settings change during a start must not start two servers. */
    private queue: Promise<void> = Promise.resolve();
    private readonly statusItem: vscode.StatusBarItem;

    constructor(
        private readonly context: vscode.ExtensionContext,
        readonly log: vscode.LogOutputChannel,
    ) {
        this.statusItem = vscode.window.createStatusBarItem('autogradLsp.status', vscode.StatusBarAlignment.Right, 100);
        this.statusItem.name = 'autograd-lsp';
        this.statusItem.command = 'autogradLsp.showLog';
        this.statusItem.show();
    }

    restart(): Promise<void> {
        return this.enqueue(async () => {
            await this.stopClient();
            await this.startClient();
        });
    }

    stop(): Promise<void> {
        return this.enqueue(() => this.stopClient());
    }

    private enqueue(job: () => Promise<void>): Promise<void> {
        // A failed job must not leave the queue rejected: every later restart would be skipped.
        this.queue = this.queue.then(job).catch((error) => this.fail(`Unexpected error: ${String(error)}`));
        return this.queue;
    }

    dispose(): void {
        this.statusItem.dispose();
        void this.stop();
    }

    /** The `autogradLsp` section as the server sees it, for a resource's scope. */
    serverSettings(scope: vscode.Uri | undefined): ServerSettings {
        const { settings, problems } = readSettings((key) => vscode.workspace.getConfiguration(SECTION, scope).get(key));
        problems.forEach((problem) => this.log.warn(problem));
        return toServerSettings(settings, { python: this.interpreter?.path, workspaceTrusted: vscode.workspace.isTrusted });
    }

    async forwardSettings(): Promise<void> {
        if (this.client?.isRunning()) {
            const settings = { [SECTION]: this.serverSettings(this.firstFolder()) };
            await this.client.sendNotification(DidChangeConfigurationNotification.type, { settings });
        }
    }

    async executeCommand(command: string, args: unknown[]): Promise<unknown> {
        await this.queue;
        if (!this.client?.isRunning()) {
            throw new Error('the autograd-lsp server is not running (see the autograd-lsp output).');
        }
        return this.client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
    }

    private firstFolder(): vscode.Uri | undefined {
        return vscode.workspace.workspaceFolders?.[0]?.uri;
    }

    private setState(state: ServerState, detail?: string): void {
        const view = statusView(state, detail);
        this.statusItem.text = view.text;
        this.statusItem.tooltip = view.tooltip;
        this.statusItem.backgroundColor = view.background ? new vscode.ThemeColor(view.background) : undefined;
    }

    private async startClient(): Promise<void> {
        this.setState('starting');
        const folder = this.firstFolder();
        // Until the user trusts the workspace, neither its interpreter nor its folder (first on sys.path) is used.
        const trusted = vscode.workspace.isTrusted;
        const cwd = trusted && folder?.scheme === 'file' ? folder.fsPath : this.context.extensionPath;
        const interpreter = await resolveInterpreter({
            setting: vscode.workspace.getConfiguration(SECTION, folder).get<string>('interpreter'),
            workspaceFolder: folder?.fsPath,
            homeDir: os.homedir(),
            env: process.env,
            activeEnvironmentPath: () => (trusted ? activeInterpreter(folder) : Promise.resolve(undefined)),
            findOnPath: (name) => findOnPath(name, process.env, process.platform, isExecutableFile),
            platform: process.platform,
            log: (message) => this.log.warn(message),
        });
        if (!interpreter) {
            this.fail('No Python interpreter found: set autogradLsp.interpreter, or select one with the Python extension.');
            return;
        }
        this.interpreter = interpreter;
        this.log.info(`Interpreter: ${interpreter.path} (from ${interpreter.source})`);

        let plan: LaunchPlan;
        try {
            const probe = await runProbe(interpreter.path, cwd);
            this.log.info(`Python ${probe.python.join('.')} at ${probe.executable}; autograd_lsp: ${probe.autogradLsp ?? 'not importable'}`);
            const bundleRoot = this.context.asAbsolutePath('bundled');
            const bundle = { root: bundleRoot, present: fs.existsSync(path.join(bundleRoot, 'tool', 'autograd_lsp')) };
            const planned = planLaunch(interpreter.path, probe, bundle, process.env.PYTHONPATH, path.delimiter);
            if (isLaunchFailure(planned)) {
                this.fail(planned.error);
                return;
            }
            plan = planned;
        } catch (error) {
            this.fail(`${String(error)}. Set autogradLsp.interpreter to a working Python.`);
            return;
        }
        const origin = plan.origin === 'bundled' ? 'the extension\'s bundled copy' : 'the interpreter\'s own autograd_lsp';
        this.log.info(`Starting ${[plan.command, ...plan.args].join(' ')} with ${origin} (cwd ${cwd})`);
        await this.launch(plan, cwd, `${interpreter.path}\nserver: ${origin}`);
    }

    private async launch(plan: LaunchPlan, cwd: string, detail: string): Promise<void> {
        const serverOptions: ServerOptions = {
            command: plan.command,
            args: plan.args,
            options: { cwd, env: { ...process.env, ...plan.env } },
        };
        const clientOptions: LanguageClientOptions = {
            documentSelector: DOCUMENT_SELECTOR,
            outputChannel: this.log,
            traceOutputChannel: this.log,
            revealOutputChannelOn: RevealOutputChannelOn.Never,
            initializationOptions: this.serverSettings(this.firstFolder()),
            middleware: {
                provideCodeActions: explainCodeActions,
                workspace: {
                    // The client would send the raw section (interpreter, trace: keys the server rejects, and no
                    // trust). The extension's own configuration listener sends the mapped settings instead.
                    didChangeConfiguration: async () => undefined,
                    // Answer for our section with the mapped settings (interpreter and trust included), not the raw ones.
                    configuration: async (params, token, next) => {
                        const raw = await next(params, token);
                        return params.items.map((item, index) =>
                            item.section === SECTION
                                ? this.serverSettings(item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined)
                                : Array.isArray(raw) ? raw[index] : null,
                        );
                    },
                },
            },
        };
        const client = new LanguageClient('autogradLsp', 'autograd-lsp', serverOptions, clientOptions);
        client.registerFeature(explainCapability);
        client.onDidChangeState(({ newState }) => {
            if (newState === State.Running) {
                this.setState('running', detail);
            } else if (newState === State.Starting) {
                this.setState('starting', detail);
            } else if (this.client === client) {
                this.setState('stopped', detail);
            }
        });
        this.client = client;
        try {
            await client.start();
        } catch (error) {
            this.fail(`The server did not start: ${String(error)}`);
        }
    }

    private fail(message: string): void {
        this.log.error(message);
        this.setState('error', message);
        void vscode.window.showErrorMessage(`autograd-lsp: ${message}`, 'Show log').then((choice) => {
            if (choice) {
                this.log.show();
            }
        });
    }

    private async stopClient(): Promise<void> {
        const client = this.client;
        this.client = undefined;
        if (client) {
            try {
                await client.dispose();
            } catch (error) {
                // A server that never started cannot be stopped; nothing is left to clean up then.
                this.log.warn(`Stopping the server: ${String(error)}`);
            }
        }
        this.setState('stopped');
    }
}
