// The peer matrix's set of tools, resources and prompts (the same as
// testenv/peerserver's; see its package comment) on the TypeScript peers:
//
//   --sdk ts1      the official TypeScript SDK 1.x (@modelcontextprotocol/sdk),
//                  McpServer; session era only
//   --sdk ts2      the TypeScript SDK 2.x (@modelcontextprotocol/server),
//                  McpServer; 2026-07-28 and, stateless, the session era
//   --sdk fastmcp  punkpeye's fastmcp (on the SDK 1.x); session era only
//
//   --transport stdio | http (streamable HTTP, stateful) | stateless
//   --port N       (http, stateless) on 127.0.0.1, endpoint /mcp
//
// ask asks in the library's way that serves both eras where it has one (an
// input_required result on 2.x); on 1.x and fastmcp, which have none, it
// asks as ask_legacy does: a request to the client related to the call.
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';

function flag(name, dflt) {
    const i = process.argv.indexOf('--' + name);
    return i >= 0 ? process.argv[i + 1] : dflt;
}
const sdk = flag('sdk', 'ts1');
const transport = flag('transport', 'stdio');
const port = Number(flag('port', '0'));

const levels = ['debug', 'info', 'warning', 'error'];
const names = ['Ada', 'Alan', 'Grace'];
const complete = prefix => names.filter(n => n.startsWith(prefix ?? ''));
const slowStates = new Map();
const elicitParams = {
    message: 'Who are you?',
    requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] }
};
const sampleParams = { maxTokens: 20, messages: [{ role: 'user', content: { type: 'text', text: 'Say hello' } }] };
const text = t => ({ content: [{ type: 'text', text: t }] });
const sleep = (ms, signal) =>
    new Promise((resolve, reject) => {
        const timer = setTimeout(resolve, ms);
        signal?.addEventListener('abort', () => {
            clearTimeout(timer);
            reject(new Error('cancelled'));
        });
    });

// answerText renders what the client answered (as peerserver does).
function answerText(kind, r) {
    if (!r) return `${kind}: no answer`;
    switch (kind) {
        case 'elicitation': {
            const c = r.content ?? {};
            return `elicitation: ${r.action} ${Object.keys(c).sort().map(k => `${k}=${c[k]}`).join(',')}`;
        }
        case 'sampling': {
            const c = Array.isArray(r.content) ? r.content.find(x => x.type === 'text') : r.content;
            return `sampling: ${c?.type === 'text' ? c.text : '(no text)'} (${r.model})`;
        }
        case 'roots':
            return `roots: ${(r.roots ?? []).map(x => x.uri).join(',')}`;
    }
    return `unknown kind ${kind}`;
}

// slow runs the slow tool with progress(i, total) and an abort signal.
async function slow({ key, steps, ms }, progress, signal) {
    slowStates.set(key, 'running');
    for (let i = 1; i <= steps; i++) {
        await progress?.(i, steps);
        try {
            await sleep(ms, signal);
        } catch (e) {
            slowStates.set(key, 'cancelled');
            throw e;
        }
    }
    slowStates.set(key, 'done');
    return text(`slow done: ${steps}`);
}

// mcpServerSet registers the set on an SDK McpServer (1.x or 2.x), given
// the version's helpers.
function mcpServerSet(server, { ResourceTemplate, completable, ask, askLegacy, log, progress, signalOf }) {
    server.registerTool('echo', { description: 'Echoes its text.', inputSchema: { text: z.string() } }, async ({ text: t }) => text(`echo: ${t}`));
    server.registerTool('hello', { description: 'Says hello; takes no arguments.' }, async () => text('hello'));
    server.registerTool(
        'slow',
        { description: 'Reports progress while it waits; cancellable.', inputSchema: { key: z.string(), steps: z.number(), ms: z.number() } },
        async (args, ctx) => slow(args, progress(ctx), signalOf(ctx))
    );
    server.registerTool('slow_status', { description: 'What slow noted under key.', inputSchema: { key: z.string() } }, async ({ key }) =>
        text(slowStates.get(key) ?? 'unknown')
    );
    server.registerTool('log', { description: 'Logs one message per level.' }, async (_args, ctx) => {
        for (const l of levels) await log(ctx, l, `log ${l}`);
        return text('logged');
    });
    const kind = { kind: z.enum(['elicitation', 'sampling', 'roots']) };
    server.registerTool('ask', { description: 'Asks the client (both eras where the library can).', inputSchema: kind }, ask);
    server.registerTool('ask_legacy', { description: 'Asks the client on the session (session era).', inputSchema: kind }, askLegacy);
    server.registerResource('static', 'peer://static', { mimeType: 'text/plain' }, async () => ({
        contents: [{ uri: 'peer://static', mimeType: 'text/plain', text: 'static resource' }]
    }));
    server.registerResource('item', new ResourceTemplate('peer://item/{id}', { list: undefined }), { mimeType: 'text/plain' }, async (uri, { id }) => ({
        contents: [{ uri: uri.href, mimeType: 'text/plain', text: `item ${id}` }]
    }));
    server.registerPrompt(
        'greet',
        { description: 'Greets someone.', argsSchema: { name: completable(z.string(), v => complete(v)) } },
        async ({ name }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Hello, ${name}!` } }] })
    );
}

// legacyAsk asks the client with a request related to the call.
async function legacyAsk(kind, send) {
    switch (kind) {
        case 'elicitation':
            return answerText(kind, await send('elicitation/create', elicitParams));
        case 'sampling':
            return answerText(kind, await send('sampling/createMessage', sampleParams));
        case 'roots':
            return answerText(kind, await send('roots/list', {}));
    }
}

async function ts1() {
    const { McpServer, ResourceTemplate } = await import('@modelcontextprotocol/sdk/server/mcp.js');
    const { completable } = await import('@modelcontextprotocol/sdk/server/completable.js');
    const types = await import('@modelcontextprotocol/sdk/types.js');
    const schemas = {
        'elicitation/create': types.ElicitResultSchema,
        'sampling/createMessage': types.CreateMessageResultSchema,
        'roots/list': types.ListRootsResultSchema
    };
    const askLegacy = async ({ kind }, extra) => text(await legacyAsk(kind, (method, params) => extra.sendRequest({ method, params }, schemas[method])));
    const make = () => {
        const server = new McpServer(
            { name: 'peer-ts-sdk-1', version: '1.0.0' },
            { capabilities: { logging: {}, completions: {} } }
        );
        mcpServerSet(server, {
            ResourceTemplate,
            completable,
            ask: askLegacy,
            askLegacy,
            log: (extra, level, data) => extra.sendNotification({ method: 'notifications/message', params: { level, logger: 'peer', data } }),
            progress: extra => {
                const token = extra._meta?.progressToken;
                return token === undefined
                    ? undefined
                    : (i, total) => extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: i, total } });
            },
            signalOf: extra => extra.signal
        });
        return server;
    };
    if (transport === 'stdio') {
        const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
        await make().connect(new StdioServerTransport());
        return;
    }
    const { StreamableHTTPServerTransport } = await import('@modelcontextprotocol/sdk/server/streamableHttp.js');
    const sessions = new Map();
    serveHTTP(async (req, res, body) => {
        const sid = req.headers['mcp-session-id'];
        if (transport === 'stateless') {
            const t = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
            const server = make();
            res.on('close', () => {
                t.close();
                server.close();
            });
            await server.connect(t);
            return t.handleRequest(req, res, body);
        }
        let t = sid ? sessions.get(sid) : undefined;
        if (!t) {
            if (sid || !types.isInitializeRequest(body)) {
                res.writeHead(sid ? 404 : 400, { 'content-type': 'application/json' }).end(
                    JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message: sid ? 'Session not found' : 'No session' } })
                );
                return;
            }
            t = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: id => sessions.set(id, t) });
            t.onclose = () => t.sessionId && sessions.delete(t.sessionId);
            await make().connect(t);
        }
        return t.handleRequest(req, res, body);
    });
}

async function ts2() {
    const m = await import('@modelcontextprotocol/server');
    const { McpServer, ResourceTemplate, completable, inputRequired, inputResponse, createMcpHandler, hostHeaderValidationResponse, localhostAllowedHostnames } = m;
    const make = () => {
        const server = new McpServer({ name: 'peer-ts-sdk-2', version: '1.0.0' }, { capabilities: { logging: {}, completions: {} } });
        mcpServerSet(server, {
            ResourceTemplate,
            completable,
            ask: async ({ kind }, ctx) => {
                const got = inputResponse(ctx.mcpReq.inputResponses, 'q');
                if (got && got.kind !== 'missing' && got.kind !== undefined) {
                    const r = got.kind === 'elicitation' ? got.result ?? { action: got.action, content: got.content } : got.kind === 'roots' ? { roots: got.roots } : got.result;
                    return text(answerText(kind, r));
                }
                const q =
                    kind === 'elicitation'
                        ? inputRequired.elicit(elicitParams)
                        : kind === 'sampling'
                          ? inputRequired.createMessage(sampleParams)
                          : inputRequired.listRoots();
                return inputRequired({ inputRequests: { q } });
            },
            askLegacy: async ({ kind }, ctx) => text(await legacyAsk(kind, (method, params) => ctx.mcpReq.send({ method, params }))),
            log: (ctx, level, data) => ctx.mcpReq.log(level, data, 'peer'),
            progress: ctx => {
                const token = ctx.mcpReq._meta?.progressToken;
                return token === undefined
                    ? undefined
                    : (i, total) => ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: i, total } });
            },
            signalOf: ctx => ctx.mcpReq.signal
        });
        return server;
    };
    if (transport === 'stdio') {
        const { StdioServerTransport } = await import('@modelcontextprotocol/server/stdio');
        await make().connect(new StdioServerTransport());
        return;
    }
    const handler = createMcpHandler(make);
    serveHTTP(async (req, res, body) => {
        const headers = new Headers();
        for (const [k, v] of Object.entries(req.headers)) {
            if (typeof v === 'string') headers.set(k, v);
            else if (Array.isArray(v)) for (const x of v) headers.append(k, x);
        }
        const hasBody = req.method === 'POST' && body !== undefined;
        const abort = new AbortController();
        res.on('close', () => abort.abort());
        const request = new Request(`http://${req.headers.host ?? '127.0.0.1'}${req.url}`, {
            method: req.method,
            headers,
            body: hasBody ? JSON.stringify(body) : undefined,
            signal: abort.signal
        });
        const r = hostHeaderValidationResponse(request, localhostAllowedHostnames()) ?? (await handler.fetch(request));
        res.writeHead(r.status, Object.fromEntries(r.headers.entries()));
        if (r.body) {
            try {
                for await (const chunk of r.body) res.write(chunk);
            } catch {}
        }
        res.end();
    });
}

async function fastmcp() {
    const { FastMCP } = await import('fastmcp');
    const server = new FastMCP({ name: 'peer-fastmcp', version: '1.0.0' });
    const sessionOf = ctx => server.sessions.find(s => s.sessionId === ctx.sessionId) ?? server.sessions[0];
    const ask = async ({ kind }, ctx) => {
        const session = sessionOf(ctx);
        const related = { relatedRequestId: ctx.requestId };
        return legacyAsk(kind, (method, params) => {
            switch (method) {
                case 'elicitation/create':
                    return ctx.elicit(params);
                case 'sampling/createMessage':
                    return session.requestSampling(params, related);
                case 'roots/list':
                    return session.server.listRoots(params, related);
            }
        });
    };
    server.addTool({ name: 'echo', description: 'Echoes its text.', parameters: z.object({ text: z.string() }), execute: async ({ text: t }) => `echo: ${t}` });
    server.addTool({ name: 'hello', description: 'Says hello; takes no arguments.', execute: async () => 'hello' });
    server.addTool({
        name: 'slow',
        description: 'Reports progress while it waits; cancellable.',
        parameters: z.object({ key: z.string(), steps: z.number(), ms: z.number() }),
        execute: async (args, ctx) => (await slow(args, (i, total) => ctx.reportProgress({ progress: i, total }), ctx.signal)).content[0].text
    });
    server.addTool({
        name: 'slow_status',
        description: 'What slow noted under key.',
        parameters: z.object({ key: z.string() }),
        execute: async ({ key }) => slowStates.get(key) ?? 'unknown'
    });
    server.addTool({
        name: 'log',
        description: 'Logs one message per level.',
        execute: async (_args, ctx) => {
            ctx.log.debug('log debug');
            ctx.log.info('log info');
            ctx.log.warn('log warning');
            ctx.log.error('log error');
            return 'logged';
        }
    });
    const kind = z.object({ kind: z.enum(['elicitation', 'sampling', 'roots']) });
    server.addTool({ name: 'ask', description: 'Asks the client (both eras where the library can).', parameters: kind, execute: ask });
    server.addTool({ name: 'ask_legacy', description: 'Asks the client on the session (session era).', parameters: kind, execute: ask });
    server.addResource({ uri: 'peer://static', name: 'static', mimeType: 'text/plain', load: async () => ({ text: 'static resource' }) });
    server.addResourceTemplate({
        uriTemplate: 'peer://item/{id}',
        name: 'item',
        mimeType: 'text/plain',
        arguments: [{ name: 'id', required: true }],
        load: async ({ id }) => ({ text: `item ${id}` })
    });
    server.addPrompt({
        name: 'greet',
        description: 'Greets someone.',
        arguments: [{ name: 'name', required: true, complete: async v => ({ values: complete(v) }) }],
        load: async ({ name }) => `Hello, ${name}!`
    });
    if (transport === 'stdio') {
        await server.start({ transportType: 'stdio' });
        return;
    }
    await server.start({ transportType: 'httpStream', httpStream: { port, host: '127.0.0.1', endpoint: '/mcp', stateless: transport === 'stateless' } });
}

// serveHTTP serves handle(req, res, parsedBody) at /mcp on 127.0.0.1:port.
function serveHTTP(handle) {
    createServer(async (req, res) => {
        if (!req.url?.startsWith('/mcp')) {
            res.writeHead(404).end();
            return;
        }
        try {
            const chunks = [];
            for await (const c of req) chunks.push(c);
            const raw = Buffer.concat(chunks).toString();
            await handle(req, res, raw ? JSON.parse(raw) : undefined);
        } catch (err) {
            if (!res.headersSent) res.writeHead(500);
            res.end(String(err));
        }
    }).listen(port, '127.0.0.1', () => console.error(`peer ${sdk} ${transport} listening on http://127.0.0.1:${port}/mcp`));
}

await { ts1, ts2, fastmcp }[sdk]();
