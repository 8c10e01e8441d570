// A team member's agent on the official TypeScript SDK client: it connects
// to a protected MCP endpoint with no token, follows the 401's
// resource_metadata pointer to the protected resource metadata and the
// authorization server the SDK discovers from it, registers, logs in (the
// authorization server approves at once: the "browser" here only follows
// its redirect back to this script's redirect URI and reads the code),
// connects again with the access token, lists the tools and calls the one
// whose name contains --tool with {"text": --text}. It prints one line per
// step ("ok STEP detail" or "FAIL STEP error") and exits 1 when a step
// failed.
//
// Usage: teamclient.ts --url URL --tool PART --text TEXT
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { flag } from './sessionsteps.ts';

const url = new URL(flag('url') ?? '');
const redirect = 'http://127.0.0.1:1/callback'; // never served: the redirect is read, not followed

class MemoryProvider implements OAuthClientProvider {
    info?: OAuthClientInformationMixed;
    saved?: OAuthTokens;
    verifier = '';
    code = '';
    get redirectUrl() { return redirect; }
    get clientMetadata(): OAuthClientMetadata {
        return { client_name: 'team agent', application_type: 'native', redirect_uris: [redirect], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' };
    }
    clientInformation() { return this.info; }
    saveClientInformation(i: OAuthClientInformationMixed) { this.info = i; }
    tokens() { return this.saved; }
    saveTokens(t: OAuthTokens) { this.saved = t; }
    saveCodeVerifier(v: string) { this.verifier = v; }
    codeVerifier() { return this.verifier; }
    async redirectToAuthorization(at: URL) {
        const resp = await fetch(at, { redirect: 'manual' });
        const back = new URL(resp.headers.get('location') ?? '', at);
        this.code = back.searchParams.get('code') ?? '';
        console.log(`ok authorize resource=${at.searchParams.get('resource')}`);
    }
}

async function main() {
    const provider = new MemoryProvider();
    const first = new Client({ name: 'team-agent', version: '1.0.0' });
    try {
        await first.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
        console.log('FAIL connect connected without a token');
        process.exit(1);
    } catch (e) {
        if (!(e instanceof UnauthorizedError) || provider.code === '') {
            console.log(`FAIL discover ${e}`);
            process.exit(1);
        }
    }
    const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
    await transport.finishAuth(provider.code);
    console.log('ok login');
    const client = new Client({ name: 'team-agent', version: '1.0.0' });
    await client.connect(transport);
    const { tools } = await client.listTools();
    const tool = tools.find(t => t.name.includes(flag('tool') ?? ''));
    if (!tool) {
        console.log(`FAIL list ${tools.map(t => t.name).join(',')}`);
        process.exit(1);
    }
    console.log(`ok list ${tools.length}`);
    const res = await client.callTool({ name: tool.name, arguments: { text: flag('text') ?? '' } });
    const text = (res.content as { type: string; text?: string }[]).map(c => c.text ?? '').join('');
    console.log(`${res.isError ? 'FAIL' : 'ok'} call ${text}`);
    await client.close();
    process.exit(res.isError ? 1 : 0);
}

main().catch(e => {
    console.log(`FAIL run ${e}`);
    process.exit(1);
});
