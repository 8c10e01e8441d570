// The peer matrix's TypeScript clients: runs the matrix's operations
// (internal/e2e/peermatrix_ops_test.go's runOps, mirrored step by step)
// for every row of a plan, on the TypeScript SDK 1.x client
// (@modelcontextprotocol/sdk, session era) or 2.x client
// (@modelcontextprotocol/client, pinned to the row's era), and prints one
// JSON object: row id → operation → observation.
//
// Usage: client.mjs PLAN.json
//   PLAN: {"idleMs": N, "parallel": N, "rows": [{"id", "client": "ts-sdk-1"|"ts-sdk-2",
//          "era", "key", "endpoint": {"kind": "stdio"|"http"|"sse", "url", "token",
//          "command": [...], "env": {...}},
//          "bounds": {"ops": {OP: ms}, "progress": ms, "ended": ms}}]}
//   bounds: how long the row waits for each operation (each question of
//   legacy-ask) and in a cancel (peermatrix_ops_test.go's bounds).
import { readFileSync } from 'node:fs';

const plan = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const ANSWER = { name: 'Ada', text: 'sampled', model: 'peer-model', root: 'file:///peer-root' };
const sleep = ms => new Promise(r => setTimeout(r, ms));

// settle waits until count() (what arrived so far) has not grown for 400
// ms, 3 s at most (peermatrix_ops_test.go's settle).
async function settle(count) {
    let last = count(),
        since = Date.now();
    for (const end = Date.now() + 3000; Date.now() < end; await sleep(25)) {
        const n = count();
        if (n !== last) {
            last = n;
            since = Date.now();
        } else if (Date.now() - since >= 400) return;
    }
}

const v1 = {
    Client: (await import('@modelcontextprotocol/sdk/client/index.js')).Client,
    StreamableHTTP: (await import('@modelcontextprotocol/sdk/client/streamableHttp.js')).StreamableHTTPClientTransport,
    SSE: (await import('@modelcontextprotocol/sdk/client/sse.js')).SSEClientTransport,
    Stdio: (await import('@modelcontextprotocol/sdk/client/stdio.js')).StdioClientTransport,
    types: await import('@modelcontextprotocol/sdk/types.js')
};
const v2 = await import('@modelcontextprotocol/client');
const v2stdio = await import('@modelcontextprotocol/client/stdio');

// errText renders an error without what differs between two connections.
function errText(e) {
    const msg = String(e?.message ?? e)
        .replace(/https?:\/\/[^\s"']+/g, 'URL')
        .replace(/\b[0-9a-f]{8}-[0-9a-f-]{27}\b|\b\d{3,}\b/g, 'N');
    return `error: ${msg}`;
}
const withErr = async f => {
    try {
        return await f();
    } catch (e) {
        return errText(e);
    }
};

// canonical is JSON with sorted keys.
function canonical(v) {
    const sort = x =>
        Array.isArray(x) ? x.map(sort) : x && typeof x === 'object' ? Object.fromEntries(Object.keys(x).sort().map(k => [k, sort(x[k])])) : x;
    return JSON.stringify(sort(v));
}

function transportOf(ep, lib) {
    const headers = ep.token ? { Authorization: `Bearer ${ep.token}` } : {};
    if (ep.kind === 'stdio') {
        const Stdio = lib === 'ts-sdk-1' ? v1.Stdio : v2stdio.StdioClientTransport;
        return new Stdio({ command: ep.command[0], args: ep.command.slice(1), env: { ...process.env, ...(ep.env ?? {}) }, stderr: 'ignore' });
    }
    const url = new URL(ep.url);
    if (ep.kind === 'sse') {
        const SSE = lib === 'ts-sdk-1' ? v1.SSE : v2.SSEClientTransport;
        return new SSE(url, { requestInit: { headers }, eventSourceInit: { fetch: (u, init) => fetch(u, { ...init, headers: { ...init?.headers, ...headers } }) } });
    }
    const HTTP = lib === 'ts-sdk-1' ? v1.StreamableHTTP : v2.StreamableHTTPClientTransport;
    return new HTTP(url, { requestInit: { headers } });
}

// session opens a client on a row and returns the operations' interface.
async function session(row) {
    const logs = [];
    let onProgress;
    const caps = { capabilities: { sampling: {}, elicitation: { form: {} }, roots: {} } };
    let client;
    const answers = {
        elicit: async () => ({ action: 'accept', content: { name: ANSWER.name } }),
        sample: async () => ({ role: 'assistant', model: ANSWER.model, content: { type: 'text', text: ANSWER.text } }),
        roots: async () => ({ roots: [{ uri: ANSWER.root, name: 'peer' }] })
    };
    if (row.client === 'ts-sdk-1') {
        const t = v1.types;
        client = new v1.Client({ name: 'matrix-ts-sdk-1', version: '1' }, caps);
        client.setRequestHandler(t.ElicitRequestSchema, answers.elicit);
        client.setRequestHandler(t.CreateMessageRequestSchema, answers.sample);
        client.setRequestHandler(t.ListRootsRequestSchema, answers.roots);
        client.setNotificationHandler(t.LoggingMessageNotificationSchema, n => logs.push(`${n.params.level}:${typeof n.params.data === 'string' ? n.params.data : canonical(n.params.data)}`));
    } else {
        client = new v2.Client({ name: 'matrix-ts-sdk-2', version: '1' }, { ...caps, versionNegotiation: { mode: row.era >= '2026-07-28' ? 'auto' : 'legacy' } });
        client.setRequestHandler('elicitation/create', answers.elicit);
        client.setRequestHandler('sampling/createMessage', answers.sample);
        client.setRequestHandler('roots/list', answers.roots);
        client.setNotificationHandler('notifications/message', n => logs.push(`${n.params.level}:${typeof n.params.data === 'string' ? n.params.data : canonical(n.params.data)}`));
    }
    await client.connect(transportOf(row.endpoint, row.client), { timeout: 30000 });
    // Every request's timeout is its operation's bound (ms).
    const callOpts = (ms, progress, signal) => ({
        timeout: ms,
        ...(progress ? { onprogress: p => progress(p.progress, p.total) } : {}),
        ...(signal ? { signal } : {})
    });
    return {
        async lists() {
            const out = {};
            for (const [k, f, field] of [
                ['tools', () => client.listTools(), 'tools'],
                ['resources', () => client.listResources(), 'resources'],
                ['templates', () => client.listResourceTemplates(), 'resourceTemplates'],
                ['prompts', () => client.listPrompts(), 'prompts']
            ]) {
                try {
                    out[k] = (await f())[field];
                } catch (e) {
                    out[k] = errText(e);
                }
            }
            return canonical(out);
        },
        async call(ms, name, args, progress, signal) {
            const params = args === undefined ? { name } : { name, arguments: args };
            const r =
                row.client === 'ts-sdk-1'
                    ? await client.callTool(params, undefined, callOpts(ms, progress, signal))
                    : await client.callTool(params, callOpts(ms, progress, signal));
            const body = (r.content ?? []).map(c => (c.type === 'text' ? c.text : canonical(c))).join('');
            return (r.isError ? 'isError: ' : '') + body;
        },
        async read(ms, uri) {
            const r = await client.readResource({ uri }, { timeout: ms });
            return r.contents.map(c => `${c.uri} ${c.mimeType} ${c.text}`).join('; ');
        },
        async prompt(ms, name, args) {
            const r = await client.getPrompt({ name, arguments: args }, { timeout: ms });
            return r.messages.map(m => `${m.role}: ${canonical(m.content)}`).join('; ');
        },
        async complete(ms, prompt, arg, value) {
            const r = await client.complete({ ref: { type: 'ref/prompt', name: prompt }, argument: { name: arg, value } }, { timeout: ms });
            return r.completion.values.join(',');
        },
        setLevel: (ms, level) => client.setLoggingLevel(level, { timeout: ms }),
        ping: ms => client.ping({ timeout: ms }),
        logs: () => logs.splice(0),
        close: () => client.close()
    };
}

// Lanes (peermatrix_ops_test.go's lane): in a row's lane, the operations
// that make the server ask or log run alone, the others beside each other;
// first come, first served, as Go's sync.RWMutex.
const EXCLUSIVE = new Set(['log', 'log-level', 'elicit', 'sample', 'roots', 'legacy-ask']);
const lanes = new Map();
function pump(l) {
    while (l.queue.length) {
        const next = l.queue[0];
        if (next.ex) {
            if (l.readers === 0 && !l.writer) {
                l.writer = true;
                l.queue.shift();
                next.resolve();
            }
            return;
        }
        if (l.writer) return;
        l.readers++;
        l.queue.shift();
        next.resolve();
    }
}
async function hold(name, ex, f) {
    if (!name) return f();
    if (!lanes.has(name)) lanes.set(name, { readers: 0, writer: false, queue: [] });
    const l = lanes.get(name);
    await new Promise(resolve => {
        l.queue.push({ ex, resolve });
        pump(l);
    });
    try {
        return await f();
    } finally {
        if (ex) l.writer = false;
        else l.readers--;
        pump(l);
    }
}

// runOps mirrors peermatrix_ops_test.go's runOps.
async function runOps(s, key, lane, bounds) {
    const obs = {};
    const ms = op => bounds.ops[op];
    const doOp = async (op, f) => {
        obs[op] = await hold(lane, EXCLUSIVE.has(op), () => withErr(f));
    };
    await doOp('lists', () => s.lists());
    await doOp('call', () => s.call(ms('call'), 'echo', { text: 'hi' }));
    await doOp('call-noargs', () => s.call(ms('call-noargs'), 'hello'));
    await doOp('read', async () => `${await withErr(() => s.read(ms('read'), 'peer://static'))} | ${await withErr(() => s.read(ms('read'), 'peer://item/42'))}`);
    await doOp('prompt', () => s.prompt(ms('prompt'), 'greet', { name: ANSWER.name }));
    await doOp('complete', () => s.complete(ms('complete'), 'greet', 'name', 'A'));
    await doOp('progress', async () => {
        const seen = [];
        const res = await withErr(() => s.call(ms('progress'), 'slow', { key: `${key}-p`, steps: 3, ms: 20 }, (p, total) => seen.push(`${p}/${total}`)));
        await settle(() => seen.length);
        return `progress ${seen.join(' ')}; ${res}`;
    });
    const logged = async op => {
        s.logs();
        const res = await withErr(() => s.call(ms(op), 'log', {}));
        const got = [];
        await settle(() => got.push(...s.logs()));
        return `${res}; received [${got.join(' ')}]`;
    };
    await doOp('log', () => logged('log'));
    await doOp('log-level', async () => {
        try {
            await s.setLevel(ms('log-level'), 'warning');
        } catch (e) {
            return `setLevel ${errText(e)}`;
        }
        return logged('log-level');
    });
    await doOp('noargs-after-level', () => s.call(ms('noargs-after-level'), 'hello'));
    // The cancelled call and the question right after it run alone in a lane.
    const clientSaw = await hold(lane, true, async () => {
        const abort = new AbortController();
        let first;
        const firstSeen = new Promise(r => (first = r));
        const ended = s
            .call(ms('cancel'), 'slow', { key: `${key}-c`, steps: 50, ms: 100 }, () => first(), abort.signal)
            .then(
                r => `client: ${r}`,
                e => (abort.signal.aborted ? 'client: cancelled' : `client: ${errText(e)}`)
            );
        // The first progress, or the call's end before it.
        await Promise.race([firstSeen, ended, sleep(bounds.progress)]);
        abort.abort();
        const saw = await Promise.race([ended, sleep(bounds.ended).then(() => 'client: still waiting after cancelling')]);
        obs['after-cancel'] = await withErr(() => s.call(ms('after-cancel'), 'ask', { kind: 'elicitation' }));
        return saw;
    });
    await doOp('cancel', async () => {
        let state = '';
        for (const end = Date.now() + bounds.progress; Date.now() < end; await sleep(50)) {
            try {
                state = await s.call(ms('cancel'), 'slow_status', { key: `${key}-c` });
            } catch (e) {
                return `${clientSaw}; server: ${errText(e)}`;
            }
            if (state !== 'running') break;
        }
        if (state === 'running' || state === 'done') {
            // Not cancelled: whether the 5 s call is still running when the
            // polling ends depends on how long the question after the
            // cancel took, not on the cancel (as runOps in
            // e2e/peermatrix_ops_test.go says it).
            state = 'ran on, not cancelled';
        }
        return `${clientSaw}; server: ${state}`;
    });
    for (const [op, kind] of [
        ['elicit', 'elicitation'],
        ['sample', 'sampling'],
        ['roots', 'roots']
    ]) {
        await doOp(op, () => s.call(ms(op), 'ask', { kind }));
    }
    await doOp('legacy-ask', async () => {
        const parts = [];
        for (const kind of ['elicitation', 'sampling', 'roots']) parts.push(await withErr(() => s.call(ms('legacy-ask'), 'ask_legacy', { kind })));
        return parts.join(' | ');
    });
    await doOp('ping', async () => {
        await s.ping(ms('ping'));
        return 'pong';
    });
    return obs;
}

const ops = ['lists', 'call', 'call-noargs', 'read', 'prompt', 'complete', 'progress', 'log', 'log-level', 'noargs-after-level', 'cancel', 'after-cancel', 'elicit', 'sample', 'roots', 'legacy-ask', 'ping', 'idle'];
const results = {};
let active = 0;
const waiting = [];
const slot = async () => {
    if (active < (plan.parallel ?? 4)) {
        active++;
        return;
    }
    await new Promise(r => waiting.push(r));
};
const release = () => {
    const next = waiting.shift();
    if (next) next();
    else active--;
};
await Promise.all(
    plan.rows.map(async row => {
        await slot();
        let s;
        try {
            s = await session(row);
        } catch (e) {
            release();
            results[row.id] = Object.fromEntries(ops.map(op => [op, `connect: ${errText(e)}`]));
            return;
        }
        const obs = await runOps(s, row.key, row.lane, row.bounds);
        release();
        await sleep(plan.idleMs);
        obs.idle = await hold(row.lane, false, () => withErr(() => s.call(row.bounds.ops.idle, 'echo', { text: 'still there' })));
        results[row.id] = obs;
        await withErr(() => s.close());
    })
);
// Exit once stdout took it all: a pipe's writes are asynchronous, and an
// exit before them drops the rest.
process.stdout.write(JSON.stringify(results), () => process.exit(0));
