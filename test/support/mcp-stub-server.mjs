// A stand-in tool-bridge for wiring tests: an MCP server (official SDK, stdio) serving the tools of a
// JSON file with their raw JSON Schema, answering each call with the tool's fixed `result` text and
// appending `{tool, arguments}` to a JSON-lines log. Usage: node mcp-stub-server.mjs <tools.json> <calls.jsonl>
import { appendFileSync, readFileSync } from 'node:fs'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'

const [toolsFile, logFile] = process.argv.slice(2)
const tools = JSON.parse(readFileSync(toolsFile, 'utf8'))
const server = new Server({ name: 'hw-stub-bridge', version: '1.0.0' }, { capabilities: { tools: {} } })
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
}))
server.setRequestHandler(CallToolRequestSchema, async (req) => {
  const tool = tools.find((t) => t.name === req.params.name)
  appendFileSync(
    logFile,
    `${JSON.stringify({ tool: req.params.name, arguments: req.params.arguments ?? {} })}\n`,
  )
  if (!tool) return { isError: true, content: [{ type: 'text', text: `unknown tool ${req.params.name}` }] }
  return { content: [{ type: 'text', text: tool.result }] }
})
await server.connect(new StdioServerTransport())
