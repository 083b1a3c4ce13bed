/**
 * Request bodies shaped like what coding-agent CLIs send, per wire API: Claude Code (Anthropic
 * messages), OpenHands and OpenCode (chat completions), Codex (Responses) and Gemini CLI (Gemini
 * generateContent). Prompts are abridged; the structure, field names and the phrases the role rules
 * read are the ones these harnesses use.
 */

const TASK = 'The test tests/test_parser.py::test_nested_quotes fails. Fix the parser so it passes.'

// ---- Claude Code (Anthropic messages) ----
const CLAUDE_SYSTEM = [
  { type: 'text', text: "You are Claude Code, Anthropic's official CLI for Claude." },
  {
    type: 'text',
    text: 'You are an interactive CLI tool that helps users with software engineering tasks. Use the instructions below and the tools available to you to assist the user.\n\n# Tone and style\nYou should be concise, direct, and to the point.',
    cache_control: { type: 'ephemeral' },
  },
]
const anthropicTool = (name: string, description: string, props: Record<string, unknown>) => ({
  name,
  description,
  input_schema: { type: 'object', properties: props, required: Object.keys(props) },
})
export const CLAUDE_TOOLS = [
  anthropicTool('Bash', 'Executes a given bash command in a persistent shell session', {
    command: { type: 'string' },
  }),
  anthropicTool('Read', 'Reads a file from the local filesystem.', { file_path: { type: 'string' } }),
  anthropicTool('Edit', 'Performs exact string replacements in files.', {
    file_path: { type: 'string' },
    old_string: { type: 'string' },
    new_string: { type: 'string' },
  }),
  anthropicTool('Glob', 'Fast file pattern matching tool', { pattern: { type: 'string' } }),
  anthropicTool('Grep', 'A powerful search tool built on ripgrep', { pattern: { type: 'string' } }),
  anthropicTool('Task', 'Launch a new agent to handle complex, multi-step tasks autonomously.', {
    description: { type: 'string' },
    prompt: { type: 'string' },
    subagent_type: { type: 'string' },
  }),
]

/** Claude Code's main loop: `turns` tool round-trips after the task. */
export function claudePrimary(turns = 0): Record<string, unknown> {
  const messages: unknown[] = [{ role: 'user', content: [{ type: 'text', text: TASK }] }]
  for (let i = 0; i < turns; i++) {
    messages.push({
      role: 'assistant',
      content: [
        { type: 'tool_use', id: `toolu_0${i}`, name: 'Bash', input: { command: `pytest -x -k t${i}` } },
      ],
    })
    messages.push({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: `toolu_0${i}`, content: `1 failed in 0.0${i}s` }],
    })
  }
  return {
    model: 'claude-sonnet-4-5-20250929',
    max_tokens: 32000,
    temperature: 1,
    system: CLAUDE_SYSTEM,
    tools: CLAUDE_TOOLS,
    messages,
    metadata: { user_id: 'user_0123_account__session_abcd' },
    stream: true,
  }
}

/** Claude Code's topic/title call: the small model, no tools. */
export function claudeTitle(): Record<string, unknown> {
  return {
    model: 'claude-3-5-haiku-20241022',
    max_tokens: 512,
    temperature: 0,
    system: [
      {
        type: 'text',
        text: "Analyze if this message indicates a new conversation topic. If it does, extract a 2-3 word title that captures the new topic. Format your response as a JSON object with two fields: 'isNewTopic' (boolean) and 'title' (string, or null if isNewTopic is false). Only include these fields, no other text.",
      },
    ],
    messages: [{ role: 'user', content: TASK }],
    stream: true,
  }
}

/** A Task subagent: its own system prompt and a subset of the tools. */
export function claudeSubagent(): Record<string, unknown> {
  return {
    model: 'claude-sonnet-4-5-20250929',
    max_tokens: 32000,
    temperature: 1,
    system: [
      { type: 'text', text: "You are Claude Code, Anthropic's official CLI for Claude." },
      {
        type: 'text',
        text: "You are an agent for Claude Code. Given the user's message, you should use the tools available to complete the task. Do what has been asked; nothing more, nothing less.",
      },
    ],
    tools: CLAUDE_TOOLS.filter((t) => ['Bash', 'Read', 'Glob', 'Grep'].includes(t.name)),
    messages: [{ role: 'user', content: 'Find where quoted strings are tokenized in src/parser/.' }],
    stream: true,
  }
}

/** /compact: the conversation so far and the summary instruction as the latest user message. */
export function claudeCompact(): Record<string, unknown> {
  const b = claudePrimary(2)
  const messages = [...(b.messages as unknown[])]
  messages.push({
    role: 'user',
    content:
      "Your task is to create a detailed summary of the conversation so far, paying close attention to the user's explicit requests and your previous actions.",
  })
  return { ...b, messages }
}

/** The first request after compaction: the history replaced by its summary. */
export function claudeAfterCompact(): Record<string, unknown> {
  return {
    ...claudePrimary(0),
    messages: [
      {
        role: 'user',
        content:
          'This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:\nAnalysis: the parser drops escaped quotes.',
      },
    ],
  }
}

// ---- OpenHands / OpenCode (chat completions) ----
const fn = (name: string, description: string, props: Record<string, unknown>) => ({
  type: 'function',
  function: {
    name,
    description,
    parameters: { type: 'object', properties: props, required: Object.keys(props) },
  },
})
export const OPENHANDS_TOOLS = [
  fn('execute_bash', 'Execute a bash command in the terminal within a persistent shell session.', {
    command: { type: 'string' },
  }),
  fn('str_replace_editor', 'Custom editing tool for viewing, creating and editing files', {
    command: { type: 'string', enum: ['view', 'create', 'str_replace', 'insert', 'undo_edit'] },
    path: { type: 'string' },
  }),
  fn('think', 'Use the tool to think about something.', { thought: { type: 'string' } }),
  fn('finish', 'Signals the completion of the current task or conversation.', {
    message: { type: 'string' },
  }),
]
const OPENHANDS_SYSTEM =
  'You are OpenHands agent, a helpful AI assistant that can interact with a computer to solve tasks.\n<ROLE>\nYour primary role is to assist users by executing commands, modifying code, and solving technical problems effectively.\n</ROLE>'

/** OpenHands' CodeAct loop: system, task, then `turns` tool round-trips. */
export function openhandsPrimary(turns = 0): Record<string, unknown> {
  const messages: unknown[] = [
    {
      role: 'system',
      content: [{ type: 'text', text: OPENHANDS_SYSTEM, cache_control: { type: 'ephemeral' } }],
    },
    { role: 'user', content: [{ type: 'text', text: TASK }] },
  ]
  for (let i = 0; i < turns; i++) {
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: `call_${i}`,
          type: 'function',
          function: { name: 'execute_bash', arguments: `{"command":"ls ${i}"}` },
        },
      ],
    })
    messages.push({
      role: 'tool',
      tool_call_id: `call_${i}`,
      name: 'execute_bash',
      content: `parser.py\ntests ${i}`,
    })
  }
  return {
    model: 'glm-4.6',
    messages,
    tools: OPENHANDS_TOOLS,
    temperature: 0,
    top_p: 1,
    max_completion_tokens: 64000,
    stream: false,
  }
}

/** OpenCode's title call. */
export function opencodeTitle(): Record<string, unknown> {
  return {
    model: 'glm-4.6',
    messages: [
      {
        role: 'system',
        content:
          'You are a title generator. You output ONLY a thread title. Nothing else.\n\n<task>\nGenerate a brief title that would help the user find this conversation later.\n</task>',
      },
      { role: 'user', content: `Generate a title for this conversation:\n${TASK}` },
    ],
    max_tokens: 1500,
    temperature: 0.5,
    stream: true,
  }
}

/** OpenCode's session summary call (after the session, no tools). */
export function opencodeSummary(): Record<string, unknown> {
  return {
    model: 'glm-4.6',
    messages: [
      {
        role: 'system',
        content: 'Summarize what was done in this conversation. Write like a pull request description.',
      },
      { role: 'user', content: TASK },
      { role: 'assistant', content: 'I fixed the tokenizer.' },
      { role: 'user', content: 'Provide a short summary of the changes above.' },
    ],
    stream: true,
  }
}

// ---- Codex (Responses) ----
const CODEX_INSTRUCTIONS =
  "You are Codex, based on GPT-5. You are running as a coding agent in the Codex CLI on a user's computer.\n\n## General\n- The arguments to `shell` will be passed to execvp()."
export const CODEX_TOOLS = [
  {
    type: 'function',
    name: 'shell',
    description: 'Runs a shell command and returns its output.',
    strict: false,
    parameters: {
      type: 'object',
      properties: { command: { type: 'array', items: { type: 'string' } }, workdir: { type: 'string' } },
      required: ['command'],
    },
  },
  {
    type: 'function',
    name: 'update_plan',
    description: 'Updates the task plan.',
    strict: false,
    parameters: { type: 'object', properties: { plan: { type: 'array' } }, required: ['plan'] },
  },
]

/** Codex's turn: environment context, task, then `turns` function call/output pairs. */
export function codexPrimary(turns = 0): Record<string, unknown> {
  const input: unknown[] = [
    {
      type: 'message',
      role: 'user',
      content: [
        { type: 'input_text', text: '<environment_context>\n  <cwd>/testbed</cwd>\n</environment_context>' },
      ],
    },
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: TASK }] },
  ]
  for (let i = 0; i < turns; i++) {
    input.push({ type: 'reasoning', summary: [], encrypted_content: `gAAAA${i}` })
    input.push({
      type: 'function_call',
      name: 'shell',
      arguments: `{"command":["pytest","-x"]}`,
      call_id: `call_${i}`,
    })
    input.push({
      type: 'function_call_output',
      call_id: `call_${i}`,
      output: `{"output":"1 failed","metadata":{"exit_code":${i}}}`,
    })
  }
  return {
    model: 'gpt-5-codex',
    instructions: CODEX_INSTRUCTIONS,
    input,
    tools: CODEX_TOOLS,
    tool_choice: 'auto',
    parallel_tool_calls: false,
    reasoning: { effort: 'medium', summary: 'auto' },
    store: false,
    stream: true,
    include: ['reasoning.encrypted_content'],
    prompt_cache_key: '0199a3b2-5c1e-7f00-8000-000000000000',
  }
}

/** Codex's checkpoint compaction: the history and the compaction prompt as the latest message. */
export function codexCompact(): Record<string, unknown> {
  const b = codexPrimary(1)
  return {
    ...b,
    input: [
      ...(b.input as unknown[]),
      {
        type: 'message',
        role: 'user',
        content: [
          {
            type: 'input_text',
            text: 'You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary for another LLM that will resume the task.',
          },
        ],
      },
    ],
  }
}

// ---- Gemini CLI (Gemini generateContent) ----
const GEMINI_SYSTEM = {
  parts: [
    {
      text: 'You are an interactive CLI agent specializing in software engineering tasks. Your primary goal is to help users safely and efficiently, adhering strictly to the following instructions and utilizing your available tools.',
    },
  ],
}
export const GEMINI_TOOLS = [
  {
    functionDeclarations: [
      {
        name: 'list_directory',
        description: 'Lists files.',
        parameters: { type: 'OBJECT', properties: { path: { type: 'STRING' } } },
      },
      {
        name: 'read_file',
        description: 'Reads a file.',
        parameters: { type: 'OBJECT', properties: { absolute_path: { type: 'STRING' } } },
      },
      {
        name: 'run_shell_command',
        description: 'Runs a command.',
        parameters: { type: 'OBJECT', properties: { command: { type: 'STRING' } } },
      },
      {
        name: 'replace',
        description: 'Replaces text in a file.',
        parameters: { type: 'OBJECT', properties: { file_path: { type: 'STRING' } } },
      },
    ],
  },
]

export function geminiPrimary(turns = 0): Record<string, unknown> {
  const contents: unknown[] = [
    {
      role: 'user',
      parts: [{ text: 'This is the Gemini CLI. We are setting up the context for our chat.' }],
    },
    { role: 'model', parts: [{ text: 'Got it. Thanks for the context!' }] },
    { role: 'user', parts: [{ text: TASK }] },
  ]
  for (let i = 0; i < turns; i++) {
    contents.push({
      role: 'model',
      parts: [{ functionCall: { name: 'run_shell_command', args: { command: 'pytest' } } }],
    })
    contents.push({
      role: 'user',
      parts: [{ functionResponse: { name: 'run_shell_command', response: { output: `1 failed ${i}` } } }],
    })
  }
  return {
    contents,
    systemInstruction: GEMINI_SYSTEM,
    tools: GEMINI_TOOLS,
    generationConfig: {
      temperature: 0,
      topP: 1,
      thinkingConfig: { includeThoughts: true, thinkingBudget: 8192 },
    },
  }
}

/** Gemini CLI's history compression call: its own system instruction, no tools. */
export function geminiCompress(): Record<string, unknown> {
  const b = geminiPrimary(2)
  return {
    contents: [
      ...(b.contents as unknown[]),
      {
        role: 'user',
        parts: [{ text: 'First, reason in your scratchpad. Then, generate the <state_snapshot>.' }],
      },
    ],
    systemInstruction: {
      parts: [
        {
          text: 'You are the component that summarizes internal chat history into a given structure. When the conversation history grows too large, you will be invoked to distill the entire history into a concise, structured XML snapshot.',
        },
      ],
    },
    generationConfig: { temperature: 0 },
  }
}

/** Gemini CLI's next-speaker check: no tools, a JSON answer, nothing a rule claims. */
export function geminiNextSpeaker(): Record<string, unknown> {
  const b = geminiPrimary(1)
  return {
    contents: [
      ...(b.contents as unknown[]),
      {
        role: 'user',
        parts: [
          {
            text: 'Analyze *only* the content and structure of your immediately preceding response (your last turn in the conversation history). Based *strictly* on that response, determine who should logically speak next: the user or the model.',
          },
        ],
      },
    ],
    generationConfig: { temperature: 0, responseMimeType: 'application/json' },
  }
}
