// A long session driven by the official TypeScript SDK client: it connects
// (streamable HTTP or a stdio command), makes N calls of echo, then, on the
// same session, calls the tools that elicit, sample and list roots, answering
// those requests as a client with those capabilities does. It prints one
// line per step ("ok STEP detail" or "FAIL STEP error") and exits 1 when a
// step failed.
//
// Usage:
//   longsession.ts --url URL [--token T] [options]
//   longsession.ts --stdio 'COMMAND ARG…' [options]
// Options:
//   --calls N            echo calls before the rest (default 100)
//   --protocol V         protocol version the client offers (default: the SDK's)
//   --steps a,b,…        tools to call after the echos, each one of
//                        elicitation, sampling, roots, standalone_elicitation,
//                        standalone_sampling, standalone_roots
//                        (default elicitation,sampling,roots)
//   --step-timeout MS    how long one step may take (default 10000)
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

function flag(name: string, def?: string): string | undefined {
    const i = process.argv.indexOf('--' + name);
    return i >= 0 ? process.argv[i + 1] : def;
}

const calls = Number(flag('calls', '100'));
const protocol = flag('protocol');
const steps = (flag('steps', 'elicitation,sampling,roots') ?? '').split(',').filter(Boolean);
const stepTimeout = Number(flag('step-timeout', '10000'));

// The tool each step calls, its arguments, and what its answer must contain.
const stepTools: Record<string, { tool: string; args: Record<string, unknown>; want: string }> = {
    elicitation: { tool: 'test_elicitation', args: { message: 'long-session question' }, want: 'action=accept' },
    sampling: { tool: 'test_sampling', args: { prompt: 'long-session prompt' }, want: 'sampled: long-session prompt' },
    roots: { tool: 'list_roots', args: {}, want: 'file:///long/session/root' },
    standalone_elicitation: { tool: 'standalone_elicitation', args: { message: 'standalone question' }, want: 'action=accept' },
    standalone_sampling: { tool: 'standalone_sampling', args: { prompt: 'standalone prompt' }, want: 'sampled: standalone prompt' },
    standalone_roots: { tool: 'standalone_roots', args: {}, want: 'file:///long/session/root' }
};

// offering pins the protocol version the client puts in its initialize.
function offering(t: Transport): Transport {
    if (!protocol) return t;
    const send = t.send.bind(t);
    t.send = (msg, opts) => {
        if ('method' in msg && msg.method === 'initialize' && msg.params) {
            msg = { ...msg, params: { ...msg.params, protocolVersion: protocol } };
        }
        return send(msg, opts);
    };
    return t;
}

function transport(): Transport {
    const url = flag('url');
    if (url) {
        const token = flag('token');
        return new StreamableHTTPClientTransport(new URL(url), {
            requestInit: token ? { headers: { Authorization: `Bearer ${token}` } } : undefined
        });
    }
    const cmd = flag('stdio');
    if (!cmd) {
        console.error('longsession.ts: give --url URL or --stdio COMMAND');
        process.exit(2);
    }
    const [command, ...args] = cmd.split(' ');
    return new StdioClientTransport({ command, args, env: process.env as Record<string, string>, stderr: 'inherit' });
}

const client = new Client({ name: 'plexus-long-session', version: '1.0.0' }, { capabilities: { sampling: {}, elicitation: { form: {} }, roots: {} } });
client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { response: 'yes' } }));
client.setRequestHandler(CreateMessageRequestSchema, async req => {
    const c = req.params.messages[0]?.content as { text?: string };
    return { role: 'assistant', model: 'long-session-model', content: { type: 'text', text: `sampled: ${c?.text}` } };
});
client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: 'file:///long/session/root', name: 'root' }] }));

function textOf(r: unknown): string {
    const content = (r as { content?: Array<{ type: string; text?: string }> }).content ?? [];
    return content.map(c => c.text ?? '').join('\n');
}

let failed = false;
async function step(name: string, run: () => Promise<string>) {
    const start = Date.now();
    try {
        const detail = await run();
        console.log(`ok ${name} ${Date.now() - start}ms ${detail}`);
    } catch (err) {
        failed = true;
        const msg = (err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ');
        console.log(`FAIL ${name} ${Date.now() - start}ms ${msg.length > 400 ? msg.slice(0, 400) + '…' : msg}`);
    }
}

await step('connect', async () => {
    await client.connect(offering(transport()));
    return `server ${client.getServerVersion()?.name}`;
});
if (!failed) {
    await step(`echo×${calls}`, async () => {
        for (let i = 0; i < calls; i++) {
            const r = await client.callTool({ name: 'echo', arguments: { message: `call ${i}` } }, undefined, { timeout: stepTimeout });
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
            const r = await client.callTool({ name: st.tool, arguments: st.args }, undefined, { timeout: stepTimeout });
            const got = textOf(r);
            if (r.isError || !got.includes(st.want)) throw new Error(`${st.tool} answered ${JSON.stringify(r)}`);
            return JSON.stringify(got);
        });
    }
}
await client.close().catch(() => {});
process.exit(failed ? 1 : 0);
