// One slow call by the official TypeScript SDK client over streamable
// HTTP, for a test that cuts the client's connection mid-call: the client
// must resume its stream with Last-Event-ID and still get the answer.
// Prints "calling" as the call goes out, then "ok TEXT" with the call's
// text, or "FAIL error"; exits 1 on failure.
//
// Usage:
//   resume.ts --url URL [--token T] --tool NAME --ms N [--progress]
// --progress asks for progress notifications (the call then carries a
// progress token).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { flag, transportFrom } from './sessionsteps.ts';

const client = new Client({ name: 'plexus-resume', version: '1.0.0' }, { capabilities: {} });
const transport = transportFrom<StreamableHTTPClientTransport>(
    (url, requestInit) => new StreamableHTTPClientTransport(url, { requestInit }),
    () => {
        throw new Error('resume.ts takes --url only');
    }
);
transport.onerror = err => console.error(`transport: ${err.message}`);
try {
    await client.connect(transport);
    console.log('calling');
    const res = await client.callTool(
        { name: flag('tool')!, arguments: { ms: Number(flag('ms')) } },
        undefined,
        { timeout: 60000, ...(process.argv.includes('--progress') ? { onprogress: () => {} } : {}) }
    );
    const content = (res.content ?? []) as Array<{ text?: string }>;
    const text = content.map(c => c.text ?? '').join('\n');
    console.log(res.isError ? `FAIL error result: ${text}` : `ok ${text}`);
    await client.close();
    process.exit(res.isError ? 1 : 0);
} catch (err) {
    console.log(`FAIL ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
}
