// A user's client that approves (or declines) Plexus's approval questions:
// connects to a face on the TypeScript SDK 1.x client (session era) or
// 2.x client (@modelcontextprotocol/client, MCP 2026-07-28), answers every
// elicitation with ANSWER, calls TOOL twice, and prints one JSON object:
// {"asked": [the questions' messages], "calls": [each call's text, "isError: …" for an error result]}.
//
// Usage: approve.mjs ts-sdk-1|ts-sdk-2 URL TOKEN CLIENT-NAME TOOL accept|decline
const [lib, url, token, name, tool, answer] = process.argv.slice(2);
const headers = { Authorization: `Bearer ${token}` };
const asked = [];
const elicit = async req => {
    asked.push(req.params.message);
    return answer === 'accept' ? { action: 'accept', content: {} } : { action: 'decline' };
};
const caps = { capabilities: { elicitation: { form: {} } } };
let client, transport;
if (lib === 'ts-sdk-1') {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    const { ElicitRequestSchema } = await import('@modelcontextprotocol/sdk/types.js');
    client = new Client({ name, version: '1' }, caps);
    client.setRequestHandler(ElicitRequestSchema, elicit);
    transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
} else {
    const v2 = await import('@modelcontextprotocol/client');
    client = new v2.Client({ name, version: '1' }, { ...caps, versionNegotiation: { mode: 'auto' } });
    client.setRequestHandler('elicitation/create', elicit);
    transport = new v2.StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
}
await client.connect(transport, { timeout: 30000 });
const calls = [];
for (const text of ['first', 'second']) {
    const params = { name: tool, arguments: { text } };
    try {
        const r = lib === 'ts-sdk-1' ? await client.callTool(params, undefined, { timeout: 20000 }) : await client.callTool(params, { timeout: 20000 });
        calls.push((r.isError ? 'isError: ' : '') + (r.content ?? []).map(c => c.text ?? '').join(''));
    } catch (e) {
        calls.push(`error: ${e?.message ?? e}`);
    }
}
await client.close();
process.stdout.write(JSON.stringify({ asked, calls }));
