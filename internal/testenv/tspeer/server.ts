// A conformance MCP server on the official TypeScript SDK, over streamable
// HTTP on 127.0.0.1. It serves the fixtures the conformance suite's server
// scenarios ask for (the names of the go-sdk's conformance everything-server)
// and does what that server does not:
//
//   - standalone_sampling, standalone_elicitation, standalone_roots send their
//     request to the client on the session's standalone GET stream (not on
//     the call's own POST stream) while the call waits for the answer;
//   - test_reconnection closes the call's SSE stream on purpose mid-call
//     (SSE polling): the result is only reachable by resuming with
//     Last-Event-ID on a GET.
//
// Usage: server.ts [--port N]   (PORT in the environment works too)
import { randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport, type EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
    CallToolRequestSchema,
    CompleteRequestSchema,
    CreateMessageResultSchema,
    ElicitResultSchema,
    GetPromptRequestSchema,
    ListPromptsRequestSchema,
    ListResourcesRequestSchema,
    ListResourceTemplatesRequestSchema,
    ListRootsResultSchema,
    ListToolsRequestSchema,
    McpError,
    ErrorCode,
    ReadResourceRequestSchema,
    SubscribeRequestSchema,
    UnsubscribeRequestSchema,
    isInitializeRequest,
    type CallToolResult,
    type Tool
} from '@modelcontextprotocol/sdk/types.js';
import { tools, type ToolContext } from './tools.ts';
import { prompts, promptResult, resources, resourceTemplates, readResource } from './content.ts';

function flag(name: string): string | undefined {
    const i = process.argv.indexOf('--' + name);
    return i >= 0 ? process.argv[i + 1] : undefined;
}

const port = Number(flag('port') ?? process.env.PORT ?? 3000);

// One event store for all sessions: a stream's events are replayed after
// the Last-Event-ID a client resumes with.
const events = new Map<string, { stream: string; message: unknown }>();
let eventSeq = 0;
const eventStore: EventStore = {
    async storeEvent(stream, message) {
        const id = `${stream}::${String(++eventSeq).padStart(10, '0')}`;
        events.set(id, { stream, message });
        return id;
    },
    async replayEventsAfter(last, { send }) {
        const stream = last.split('::')[0];
        const later = [...events.entries()].filter(([id, e]) => e.stream === stream && id > last).sort(([a], [b]) => a.localeCompare(b));
        for (const [id, e] of later) {
            await send(id, e.message as never);
        }
        return stream;
    }
};

const transports = new Map<string, StreamableHTTPServerTransport>();

function newServer(transport: () => StreamableHTTPServerTransport | undefined): Server {
    const server = new Server(
        { name: 'plexus-ts-peer', version: '1.0.0' },
        {
            capabilities: {
                tools: { listChanged: true },
                resources: { subscribe: true, listChanged: true },
                prompts: { listChanged: true },
                logging: {},
                completions: {}
            }
        }
    );
    const list: Tool[] = tools.map(t => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }));
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: list }));
    server.setRequestHandler(CallToolRequestSchema, async (req, extra): Promise<CallToolResult> => {
        const tool = tools.find(t => t.name === req.params.name);
        if (!tool) {
            throw new McpError(ErrorCode.InvalidParams, `unknown tool ${JSON.stringify(req.params.name)}`);
        }
        const ctx: ToolContext = {
            args: (req.params.arguments ?? {}) as Record<string, unknown>,
            progressToken: req.params._meta?.progressToken,
            notify: n => extra.sendNotification(n as never),
            ask: (method, params) => extra.sendRequest({ method, params } as never, schemaFor(method), { timeout: 30_000 }),
            askStandalone: async (method, params) => {
                await waitForStandaloneStream(transport());
                return server.request({ method, params } as never, schemaFor(method), { timeout: 30_000 });
            },
            closeStream: () => transport()?.closeSSEStream(extra.requestId)
        };
        try {
            return await tool.run(ctx);
        } catch (err) {
            return { isError: true, content: [{ type: 'text', text: err instanceof Error ? err.message : String(err) }] };
        }
    });
    server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources }));
    server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates }));
    server.setRequestHandler(ReadResourceRequestSchema, async req => readResource(req.params.uri));
    server.setRequestHandler(SubscribeRequestSchema, async () => ({}));
    server.setRequestHandler(UnsubscribeRequestSchema, async () => ({}));
    server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts }));
    server.setRequestHandler(GetPromptRequestSchema, async req => promptResult(req.params.name, req.params.arguments ?? {}));
    server.setRequestHandler(CompleteRequestSchema, async () => ({ completion: { values: [], total: 0, hasMore: false } }));
    return server;
}

function schemaFor(method: string) {
    switch (method) {
        case 'sampling/createMessage':
            return CreateMessageResultSchema;
        case 'elicitation/create':
            return ElicitResultSchema;
        case 'roots/list':
            return ListRootsResultSchema;
    }
    throw new Error(`no result schema for ${method}`);
}

// The SDK drops a message meant for the standalone stream when no GET is
// open; wait (a little) for the client to open one, and say so if it never does.
async function waitForStandaloneStream(t: StreamableHTTPServerTransport | undefined): Promise<void> {
    for (let i = 0; i < 100; i++) {
        // eslint-disable-next-line @typescript-eslint/no-explicit-any
        if ((t as any)?._webStandardTransport?._streamMapping?.has('_GET_stream')) {
            return;
        }
        await new Promise(r => setTimeout(r, 50));
    }
    throw new Error('the client opened no standalone GET stream within 5 s');
}

const app = createMcpExpressApp({ host: '127.0.0.1' });

app.post('/mcp', async (req: Request, res: Response) => {
    const sid = req.headers['mcp-session-id'] as string | undefined;
    let transport = sid ? transports.get(sid) : undefined;
    if (!transport) {
        if (sid || !isInitializeRequest(req.body)) {
            res.status(sid ? 404 : 400).json({
                jsonrpc: '2.0',
                error: { code: sid ? -32001 : -32000, message: sid ? 'session not found' : 'no session: initialize first' },
                id: null
            });
            return;
        }
        let made: StreamableHTTPServerTransport | undefined;
        made = new StreamableHTTPServerTransport({
            sessionIdGenerator: () => randomUUID(),
            eventStore,
            retryInterval: 200,
            onsessioninitialized: id => {
                transports.set(id, made!);
            }
        });
        made.onclose = () => {
            if (made?.sessionId) transports.delete(made.sessionId);
        };
        const t = made;
        await newServer(() => t).connect(t);
        transport = t;
    }
    await transport.handleRequest(req, res, req.body);
});

async function bySession(req: Request, res: Response) {
    const sid = req.headers['mcp-session-id'] as string | undefined;
    const transport = sid ? transports.get(sid) : undefined;
    if (!transport) {
        res.status(sid ? 404 : 400).send(sid ? 'session not found' : 'no session id');
        return;
    }
    await transport.handleRequest(req, res);
}
app.get('/mcp', bySession);
app.delete('/mcp', bySession);

app.listen(port, '127.0.0.1', err => {
    if (err) {
        console.error(err);
        process.exit(1);
    }
    console.error(`plexus-ts-peer listening on http://127.0.0.1:${port}/mcp`);
});
