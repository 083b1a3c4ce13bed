/**
 * The MCP SDK client pieces the Pi bridge extension needs, bundled by the build into
 * dist/pi-bridge-sdk/ so the extension works where Harness Watch runs from its bundle (the GitHub
 * Action) without node_modules. Re-exports only; see harnesses/pi-bridge.ts.
 */
export { Client } from '@modelcontextprotocol/sdk/client/index.js'
export { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
export { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
