// The peer's resources and prompts: the conformance fixtures.
import { McpError, ErrorCode, type GetPromptResult, type ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';

// A 1×1 red PNG and a minimal WAV file.
export const IMAGE = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
export const AUDIO = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=';

export const resources = [
    { uri: 'test://static-text', name: 'static-text', description: 'A static text resource for testing', mimeType: 'text/plain' },
    { uri: 'test://static-binary', name: 'static-binary', description: 'A static binary resource (image) for testing', mimeType: 'image/png' },
    { uri: 'test://watched-resource', name: 'watched-resource', description: 'A resource clients may subscribe to', mimeType: 'text/plain' }
];

export const resourceTemplates = [
    { uriTemplate: 'test://template/{id}/data', name: 'template', description: 'A resource template with parameter substitution', mimeType: 'application/json' }
];

export function readResource(uri: string): ReadResourceResult {
    switch (uri) {
        case 'test://static-text':
            return { contents: [{ uri, mimeType: 'text/plain', text: 'This is the content of the static text resource.' }] };
        case 'test://static-binary':
            return { contents: [{ uri, mimeType: 'image/png', blob: IMAGE }] };
        case 'test://watched-resource':
            return { contents: [{ uri, mimeType: 'text/plain', text: 'Watched resource content' }] };
    }
    const m = /^test:\/\/template\/([^/]+)\/data$/.exec(uri);
    if (m) {
        const id = m[1];
        return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) }] };
    }
    throw new McpError(ErrorCode.InvalidParams, `no resource ${uri}`);
}

export const prompts = [
    { name: 'test_simple_prompt', title: 'Simple Test Prompt', description: 'A simple prompt without arguments' },
    {
        name: 'test_prompt_with_arguments',
        title: 'Prompt With Arguments',
        description: 'A prompt with required arguments',
        arguments: [
            { name: 'arg1', description: 'First test argument', required: true },
            { name: 'arg2', description: 'Second test argument', required: true }
        ]
    },
    {
        name: 'test_prompt_with_embedded_resource',
        title: 'Prompt With Embedded Resource',
        description: 'A prompt that includes an embedded resource',
        arguments: [{ name: 'resourceUri', description: 'URI of the resource to embed', required: true }]
    },
    { name: 'test_prompt_with_image', title: 'Prompt With Image', description: 'A prompt that includes image content' }
];

export function promptResult(name: string, args: Record<string, string>): GetPromptResult {
    switch (name) {
        case 'test_simple_prompt':
            return { description: 'A simple test prompt', messages: [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }] };
        case 'test_prompt_with_arguments':
            return {
                description: 'A prompt with arguments',
                messages: [{ role: 'user', content: { type: 'text', text: `Prompt with arguments: arg1='${args.arg1}', arg2='${args.arg2}'` } }]
            };
        case 'test_prompt_with_embedded_resource':
            return {
                description: 'A prompt with an embedded resource',
                messages: [
                    { role: 'user', content: { type: 'resource', resource: { uri: args.resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' } } },
                    { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } }
                ]
            };
        case 'test_prompt_with_image':
            return {
                description: 'A prompt with an image',
                messages: [
                    { role: 'user', content: { type: 'image', data: IMAGE, mimeType: 'image/png' } },
                    { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } }
                ]
            };
    }
    throw new McpError(ErrorCode.InvalidParams, `no prompt ${name}`);
}
