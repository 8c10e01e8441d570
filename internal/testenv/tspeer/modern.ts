// The peer as a strict MCP 2026-07-28 server, on the TypeScript SDK's v2
// line (@modelcontextprotocol/server; the v1 package speaks no 2026-07-28):
// stateless, every request carries its own protocol version, and a
// session-era request (initialize, a request without the 2026 envelope) is
// refused as that era defines. It serves the tools of tools.ts; the ones
// that ask the client something mid-call ask as 2026 does, within the
// result: the first call answers input_required with the request, and the
// client's retry carries the answer in inputResponses (multi round-trip).
// Asking on the standalone stream, which 2026 has no more, is an error.
//
// Usage: modern.ts [--port N]   (PORT in the environment works too)
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createMcpHandler, hostHeaderValidationResponse, localhostAllowedHostnames, Server } from '@modelcontextprotocol/server';
import { tools, type ToolContext } from './tools.ts';

function flag(name: string): string | undefined {
    const i = process.argv.indexOf('--' + name);
    return i >= 0 ? process.argv[i + 1] : undefined;
}

const port = Number(flag('port') ?? process.env.PORT ?? 3000);
const notHere = async (): Promise<never> => {
    throw new Error('this 2026-07-28 server has no standalone stream to ask on');
};

// needsInput is thrown by ask when the call's params carry no answer yet:
// the call then answers input_required with the request.
class NeedsInput {
    constructor(
        readonly key: string,
        readonly method: string,
        readonly params: unknown
    ) {}
}

// asker asks as 2026 does: the n-th question of a call is answered by the
// inputResponses entry ask<n> of its retry, or put to the client.
function asker(responses: Record<string, unknown> | undefined) {
    let n = 0;
    return async (method: string, params: unknown): Promise<Record<string, unknown>> => {
        const key = `ask${n++}`;
        const r = responses?.[key];
        if (r !== undefined) return r as Record<string, unknown>;
        throw new NeedsInput(key, method, params);
    };
}

const handler = createMcpHandler(
    () => {
        const server = new Server({ name: 'plexus-ts-peer-2026', version: '1.0.0' }, { capabilities: { tools: {} } });
        server.setRequestHandler('tools/list', async () => ({
            tools: tools.map(t => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }))
        }));
        server.setRequestHandler('tools/call', async (req, ctx) => {
            const tool = tools.find(t => t.name === req.params.name);
            if (!tool) {
                return { isError: true, content: [{ type: 'text', text: `unknown tool ${JSON.stringify(req.params.name)}` }] };
            }
            const tc: ToolContext = {
                args: (req.params.arguments ?? {}) as Record<string, unknown>,
                progressToken: req.params._meta?.progressToken,
                notify: n => ctx.mcpReq.notify(n as never),
                ask: asker(ctx.mcpReq.inputResponses),
                askStandalone: notHere,
                closeStream: () => {}
            };
            try {
                return await tool.run(tc);
            } catch (err) {
                if (err instanceof NeedsInput) {
                    return { resultType: 'input_required', inputRequests: { [err.key]: { method: err.method, params: err.params } } } as never;
                }
                return { isError: true, content: [{ type: 'text', text: err instanceof Error ? err.message : String(err) }] };
            }
        });
        return server;
    },
    { legacy: 'reject' }
);

// toRequest makes a web-standard Request of a node one.
async function toRequest(req: IncomingMessage): Promise<Request> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) {
        if (typeof v === 'string') headers.set(k, v);
        else if (Array.isArray(v)) for (const x of v) headers.append(k, x);
    }
    const body = chunks.length && req.method !== 'GET' && req.method !== 'HEAD' ? Buffer.concat(chunks) : undefined;
    return new Request(`http://${req.headers.host ?? '127.0.0.1'}${req.url}`, { method: req.method, headers, body });
}

async function send(res: ServerResponse, r: Response) {
    res.writeHead(r.status, Object.fromEntries(r.headers.entries()));
    if (r.body) {
        for await (const chunk of r.body) res.write(chunk);
    }
    res.end();
}

createServer(async (req, res) => {
    try {
        const request = await toRequest(req);
        const rejected = hostHeaderValidationResponse(request, localhostAllowedHostnames());
        await send(res, rejected ?? (await handler.fetch(request)));
    } catch (err) {
        res.writeHead(500).end(String(err));
    }
}).listen(port, '127.0.0.1', () => console.error(`plexus-ts-peer (2026-07-28, strict) listening on http://127.0.0.1:${port}/mcp`));
