// The steps of a long session, shared by longsession.ts (session era) and
// longsession2026.ts (MCP 2026-07-28): connect, N echo calls, then the
// tools that ask the client something, each checked by what its answer
// must contain. One line per step ("ok STEP detail" or "FAIL STEP error");
// the process exits 1 when a step failed.

export function flag(name: string, def?: string): string | undefined {
    const i = process.argv.indexOf('--' + name);
    return i >= 0 ? process.argv[i + 1] : def;
}

// transportFrom makes the transport the command line names (--url URL
// [--token T], or --stdio 'COMMAND ARG…') with the SDK's classes given.
export function transportFrom<T>(
    http: (url: URL, init: RequestInit | undefined) => T,
    stdio: (command: string, args: string[], env: Record<string, string>) => T
): T {
    const url = flag('url');
    if (url) {
        const token = flag('token');
        return http(new URL(url), token ? { headers: { Authorization: `Bearer ${token}` } } : undefined);
    }
    const cmd = flag('stdio');
    if (!cmd) {
        console.error(`${process.argv[1]}: give --url URL or --stdio COMMAND`);
        process.exit(2);
    }
    const [command, ...args] = cmd.split(' ');
    return stdio(command, args, process.env as Record<string, string>);
}

// stepTools: the tool each step calls, its arguments, and what its answer
// must contain.
export const stepTools: Record<string, { tool: string; args: Record<string, unknown>; want: string }> = {
    elicitation: { tool: 'test_elicitation', args: { message: 'long-session question' }, want: 'action=accept' },
    sampling: { tool: 'test_sampling', args: { prompt: 'long-session prompt' }, want: 'sampled: long-session prompt' },
    roots: { tool: 'list_roots', args: {}, want: 'file:///long/session/root' },
    standalone_elicitation: { tool: 'standalone_elicitation', args: { message: 'standalone question' }, want: 'action=accept' },
    standalone_sampling: { tool: 'standalone_sampling', args: { prompt: 'standalone prompt' }, want: 'sampled: standalone prompt' },
    standalone_roots: { tool: 'standalone_roots', args: {}, want: 'file:///long/session/root' }
};

// The answers the client gives to what it is asked.
export const elicited = { action: 'accept' as const, content: { response: 'yes' } };
export const listedRoots = { roots: [{ uri: 'file:///long/session/root', name: 'root' }] };
export function sampled(messages: Array<{ content: unknown }>) {
    const c = messages[0]?.content as { text?: string };
    return { role: 'assistant' as const, model: 'long-session-model', content: { type: 'text' as const, text: `sampled: ${c?.text}` } };
}

function textOf(r: unknown): string {
    const content = (r as { content?: Array<{ type: string; text?: string }> }).content ?? [];
    return content.map(c => c.text ?? '').join('\n');
}

// A session as the steps drive it.
export interface StepClient {
    connect(): Promise<string>;
    call(name: string, args: Record<string, unknown>, timeoutMs: number): Promise<{ isError?: boolean }>;
    close(): Promise<void>;
}

// runSteps runs the long session given by the command line (--calls,
// --steps, --step-timeout) and exits.
export async function runSteps(c: StepClient, defaultSteps: string): Promise<never> {
    const calls = Number(flag('calls', '100'));
    const steps = (flag('steps', defaultSteps) ?? '').split(',').filter(Boolean);
    const stepTimeout = Number(flag('step-timeout', '10000'));
    let failed = false;
    const step = async (name: string, run: () => Promise<string>) => {
        const start = Date.now();
        try {
            const detail = await run();
            console.log(`ok ${name} ${Date.now() - start}ms ${detail}`);
        } catch (err) {
            failed = true;
            const msg = (err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ');
            console.log(`FAIL ${name} ${Date.now() - start}ms ${msg.length > 400 ? msg.slice(0, 400) + '…' : msg}`);
        }
    };
    await step('connect', () => c.connect());
    if (!failed) {
        await step(`echo×${calls}`, async () => {
            for (let i = 0; i < calls; i++) {
                const r = await c.call('echo', { message: `call ${i}` }, stepTimeout);
                if (textOf(r) !== `call ${i}`) throw new Error(`echo ${i} answered ${JSON.stringify(r)}`);
            }
            return 'all answered';
        });
        for (const s of steps) {
            const st = stepTools[s];
            if (!st) {
                failed = true;
                console.log(`FAIL ${s} no such step`);
                continue;
            }
            await step(s, async () => {
                const r = await c.call(st.tool, st.args, stepTimeout);
                const got = textOf(r);
                if (r.isError || !got.includes(st.want)) throw new Error(`${st.tool} answered ${JSON.stringify(r)}`);
                return JSON.stringify(got);
            });
        }
    }
    await c.close().catch(() => {});
    process.exit(failed ? 1 : 0);
}
