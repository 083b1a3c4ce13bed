/**
 * Where one attempt's bridge is. `stdio`: the harness starts `command args…` itself, once per
 * invocation (each resumed turn too, rig.md §3.1), so the world lives in a state folder named in argv
 * — never in env: Codex passes a whitelist, Gemini and Copilot drop variables (rig.md §3.2). `http`: a
 * bridge already listening on 127.0.0.1 (`url` ends in `/mcp`).
 */
export type BridgeEndpoint =
  | { kind: 'stdio'; command: string; args: string[] }
  | { kind: 'http'; url: string }
