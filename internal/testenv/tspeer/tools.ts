// The peer's tools: the conformance fixtures, plus tools that make
// server→client requests on the standalone GET stream and one that closes
// its SSE stream mid-call.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { IMAGE, AUDIO } from './content.ts';

export interface ToolContext {
    args: Record<string, unknown>;
    progressToken: string | number | undefined;
    notify(n: { method: string; params: unknown }): Promise<void>;
    // ask sends a request to the client on the call's own stream.
    ask(method: string, params: unknown): Promise<Record<string, unknown>>;
    // askStandalone sends it on the session's standalone GET stream.
    askStandalone(method: string, params: unknown): Promise<Record<string, unknown>>;
    // closeStream closes the call's SSE stream (the client must resume).
    closeStream(): void;
}

interface PeerTool {
    name: string;
    description: string;
    inputSchema: { type: 'object'; [k: string]: unknown };
    run(ctx: ToolContext): Promise<CallToolResult>;
}

const noArgs = { type: 'object' as const, properties: {} };
const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));
const text = (t: string): CallToolResult => ({ content: [{ type: 'text', text: t }] });

function stringArg(name: string, description: string) {
    return { type: 'object' as const, properties: { [name]: { type: 'string', description } }, required: [name] };
}

const samplingParams = (prompt: string) => ({
    messages: [{ role: 'user', content: { type: 'text', text: prompt } }],
    maxTokens: 100
});

const elicitParams = (message: string) => ({
    message,
    requestedSchema: {
        type: 'object',
        properties: { response: { type: 'string', description: "User's response" } },
        required: ['response']
    }
});

const defaultsSchema = {
    type: 'object',
    properties: {
        name: { type: 'string', description: 'User name', default: 'John Doe' },
        age: { type: 'integer', description: 'User age', default: 30 },
        score: { type: 'number', description: 'User score', default: 95.5 },
        status: { type: 'string', description: 'User status', enum: ['active', 'inactive', 'pending'], default: 'active' },
        verified: { type: 'boolean', description: 'Verification status', default: true }
    }
};

const titled = [
    { const: 'value1', title: 'First Option' },
    { const: 'value2', title: 'Second Option' },
    { const: 'value3', title: 'Third Option' }
];

const enumsSchema = {
    type: 'object',
    properties: {
        untitledSingle: { type: 'string', enum: ['option1', 'option2', 'option3'] },
        titledSingle: { type: 'string', oneOf: titled },
        legacyEnum: { type: 'string', enum: ['opt1', 'opt2', 'opt3'], enumNames: ['Option One', 'Option Two', 'Option Three'] },
        untitledMulti: { type: 'array', minItems: 1, maxItems: 3, items: { type: 'string', enum: ['option1', 'option2', 'option3'] } },
        titledMulti: { type: 'array', minItems: 1, maxItems: 3, items: { type: 'string', anyOf: titled } }
    }
};

const schema202012 = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object' as const,
    $defs: {
        address: {
            $anchor: 'addressDef',
            type: 'object',
            properties: { street: { type: 'string' }, city: { type: 'string' } }
        }
    },
    properties: {
        name: { type: 'string' },
        address: { $ref: '#/$defs/address' },
        contactMethod: { type: 'string', enum: ['phone', 'email'] },
        phone: { type: 'string' },
        email: { type: 'string' }
    },
    allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
    if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
    then: { required: ['phone'] },
    else: { required: ['email'] },
    additionalProperties: false
};

function samplingText(r: Record<string, unknown>): string {
    const c = r.content as { text?: string } | undefined;
    return c?.text ?? 'No response';
}

export const tools: PeerTool[] = [
    {
        name: 'echo',
        description: 'Echoes its message back',
        inputSchema: stringArg('message', 'What to echo'),
        run: async ({ args }) => text(String(args.message ?? ''))
    },
    {
        name: 'test_simple_text',
        description: 'Tests simple text content response',
        inputSchema: noArgs,
        run: async () => text('This is a simple text response for testing.')
    },
    {
        name: 'test_image_content',
        description: 'Tests image content response',
        inputSchema: noArgs,
        run: async () => ({ content: [{ type: 'image', data: IMAGE, mimeType: 'image/png' }] })
    },
    {
        name: 'test_audio_content',
        description: 'Tests audio content response',
        inputSchema: noArgs,
        run: async () => ({ content: [{ type: 'audio', data: AUDIO, mimeType: 'audio/wav' }] })
    },
    {
        name: 'test_embedded_resource',
        description: 'Tests embedded resource content response',
        inputSchema: noArgs,
        run: async () => ({
            content: [
                { type: 'resource', resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' } }
            ]
        })
    },
    {
        name: 'test_multiple_content_types',
        description: 'Tests response with multiple content types (text, image, resource)',
        inputSchema: noArgs,
        run: async () => ({
            content: [
                { type: 'text', text: 'Multiple content types test:' },
                { type: 'image', data: IMAGE, mimeType: 'image/png' },
                { type: 'resource', resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: '{"test":"data","value":123}' } }
            ]
        })
    },
    {
        name: 'test_tool_with_logging',
        description: 'Tests tool that emits log messages during execution',
        inputSchema: noArgs,
        run: async ({ notify }) => {
            for (const data of ['Tool execution started', 'Tool processing data', 'Tool execution completed']) {
                await notify({ method: 'notifications/message', params: { level: 'info', data } });
                await sleep(50);
            }
            return text('Tool with logging executed successfully');
        }
    },
    {
        name: 'test_tool_with_progress',
        description: 'Tests tool that reports progress notifications',
        inputSchema: noArgs,
        run: async ({ notify, progressToken }) => {
            for (const progress of [0, 50, 100]) {
                if (progressToken !== undefined) {
                    await notify({ method: 'notifications/progress', params: { progressToken, progress, total: 100, message: `Completed step ${progress} of 100` } });
                }
                await sleep(50);
            }
            return text(String(progressToken));
        }
    },
    {
        name: 'test_error_handling',
        description: 'Tests error response handling',
        inputSchema: noArgs,
        run: async () => {
            throw new Error('This tool intentionally returns an error for testing');
        }
    },
    {
        name: 'test_sampling',
        description: 'Tests server-initiated sampling (LLM completion request)',
        inputSchema: stringArg('prompt', 'The prompt to send to the LLM'),
        run: async ({ args, ask }) => text(`LLM response: ${samplingText(await ask('sampling/createMessage', samplingParams(String(args.prompt))))}`)
    },
    {
        name: 'test_elicitation',
        description: 'Tests server-initiated elicitation (user input request)',
        inputSchema: stringArg('message', 'The message to show the user'),
        run: async ({ args, ask }) => {
            const r = await ask('elicitation/create', elicitParams(String(args.message)));
            return text(`User response: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`);
        }
    },
    {
        name: 'test_elicitation_sep1034_defaults',
        description: 'Tests elicitation with default values per SEP-1034',
        inputSchema: noArgs,
        run: async ({ ask }) => {
            const r = await ask('elicitation/create', { message: 'Test defaults for primitives', requestedSchema: defaultsSchema });
            return text(`Elicitation result: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`);
        }
    },
    {
        name: 'test_elicitation_sep1330_enums',
        description: 'Tests elicitation with enum schema improvements per SEP-1330',
        inputSchema: noArgs,
        run: async ({ ask }) => {
            const r = await ask('elicitation/create', { message: 'Test enum schemas', requestedSchema: enumsSchema });
            return text(`Elicitation result: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`);
        }
    },
    {
        name: 'json_schema_2020_12_tool',
        description: 'Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613, SEP-2106)',
        inputSchema: schema202012,
        run: async ({ args }) => text(`JSON Schema 2020-12 tool called with: ${JSON.stringify(args)}`)
    },
    {
        name: 'test_reconnection',
        description: 'Closes its SSE stream mid-call (SSE polling); the result arrives only to a client that resumes with Last-Event-ID',
        inputSchema: noArgs,
        run: async ({ closeStream }) => {
            await sleep(20);
            closeStream();
            await sleep(300);
            return text('Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure.');
        }
    },
    {
        name: 'list_roots',
        description: "Asks the client for roots/list on the call's own stream",
        inputSchema: noArgs,
        run: async ({ ask }) => text(`roots: ${JSON.stringify((await ask('roots/list', {})).roots)}`)
    },
    {
        name: 'standalone_sampling',
        description: 'Asks the client for a sampling/createMessage on the standalone GET stream during the call',
        inputSchema: stringArg('prompt', 'The prompt to send to the LLM'),
        run: async ({ args, askStandalone }) =>
            text(`LLM response: ${samplingText(await askStandalone('sampling/createMessage', samplingParams(String(args.prompt))))}`)
    },
    {
        name: 'standalone_elicitation',
        description: 'Asks the client for an elicitation/create on the standalone GET stream during the call',
        inputSchema: stringArg('message', 'The message to show the user'),
        run: async ({ args, askStandalone }) => {
            const r = await askStandalone('elicitation/create', elicitParams(String(args.message)));
            return text(`User response: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`);
        }
    },
    {
        name: 'standalone_roots',
        description: 'Asks the client for roots/list on the standalone GET stream during the call',
        inputSchema: noArgs,
        run: async ({ askStandalone }) => text(`roots: ${JSON.stringify((await askStandalone('roots/list', {})).roots)}`)
    }
];
