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
import { elicited, flag, listedRoots, runSteps, sampled, transportFrom } from './sessionsteps.ts';

const protocol = flag('protocol');

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
    return transportFrom<Transport>(
        (url, requestInit) => new StreamableHTTPClientTransport(url, { requestInit }),
        (command, args, env) => new StdioClientTransport({ command, args, env, stderr: 'inherit' })
    );
}

const client = new Client({ name: 'plexus-long-session', version: '1.0.0' }, { capabilities: { sampling: {}, elicitation: { form: {} }, roots: {} } });
client.setRequestHandler(ElicitRequestSchema, async () => elicited);
client.setRequestHandler(CreateMessageRequestSchema, async req => sampled(req.params.messages));
client.setRequestHandler(ListRootsRequestSchema, async () => listedRoots);

await runSteps(
    {
        connect: async () => {
            await client.connect(offering(transport()));
            return `server ${client.getServerVersion()?.name}`;
        },
        call: (name, args, timeout) => client.callTool({ name, arguments: args }, undefined, { timeout }) as Promise<{ isError?: boolean }>,
        close: () => client.close()
    },
    'elicitation,sampling,roots'
);
