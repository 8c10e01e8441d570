// The long session of longsession.ts in the MCP 2026-07-28 era, driven by
// the TypeScript SDK's v2 client (@modelcontextprotocol/client) pinned to
// 2026-07-28: no protocol session — every request carries its version,
// client and capabilities — so "the same session" is one client and one
// connection making N echo calls and then calling the tools that ask the
// client for elicitation, sampling and roots, which 2026 puts within the
// call's result (input_required) and the client answers by calling again
// with inputResponses. One line per step ("ok STEP detail" or "FAIL STEP
// error"); exit 1 when a step failed.
//
// Usage:
//   longsession2026.ts --url URL [--token T] [options]
//   longsession2026.ts --stdio 'COMMAND ARG…' [options]
// Options:
//   --calls N            echo calls before the rest (default 100)
//   --steps a,b,…        of elicitation, sampling, roots (default all three)
//   --step-timeout MS    how long one step may take (default 10000)
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { elicited, listedRoots, runSteps, sampled, transportFrom } from './sessionsteps.ts';

function transport() {
    return transportFrom<StreamableHTTPClientTransport | StdioClientTransport>(
        (url, requestInit) => new StreamableHTTPClientTransport(url, { requestInit }),
        (command, args, env) => new StdioClientTransport({ command, args, env, stderr: 'inherit' })
    );
}

const client = new Client(
    { name: 'plexus-long-session-2026', version: '1.0.0' },
    { capabilities: { sampling: {}, elicitation: { form: {} }, roots: {} }, versionNegotiation: { mode: { pin: '2026-07-28' } } }
);
client.setRequestHandler('elicitation/create', async () => elicited);
client.setRequestHandler('sampling/createMessage', async req => sampled(req.params.messages));
client.setRequestHandler('roots/list', async () => listedRoots);

await runSteps(
    {
        connect: async () => {
            await client.connect(transport());
            return `server ${client.getServerVersion()?.name}`;
        },
        call: (name, args, timeout) => client.callTool({ name, arguments: args }, { timeout }) as Promise<{ isError?: boolean }>,
        close: () => client.close()
    },
    'elicitation,sampling,roots'
);
