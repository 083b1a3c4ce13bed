import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { execa } from 'execa'
import { describe, expect, it } from 'vitest'
import { commandAdapter, renderCommandTemplate } from '../../src/harnesses/command.js'
import { adapterFor } from '../../src/harnesses/registry.js'
import { leaks, makeCtx, useAttemptDirs } from './helpers.js'

describe('renderCommandTemplate', () => {
  const values = {
    prompt: `it's "quoted" $HOME`,
    prompt_file: '/t/prompt.md',
    workspace: '/w/x y',
    base_url: 'http://127.0.0.1:9',
    openai_base_url: 'http://127.0.0.1:9/v1',
    model: 'gpt-5',
    api_key: 'sk-1',
  }
  it('shell-quotes each placeholder and leaves other braces alone', () => {
    const out = renderCommandTemplate(
      `agent -m {model} --url {openai_base_url} -C {workspace} {prompt} \${X} {"a":1}`,
      values,
    )
    expect(out).toBe(
      `agent -m gpt-5 --url http://127.0.0.1:9/v1 -C '/w/x y' 'it'\\''s "quoted" $HOME' \${X} {"a":1}`,
    )
  })
})

describe('command adapter', () => {
  const dirs = useAttemptDirs()

  it('runs the template under bash -lc with the prompt intact and only the isolated env', async () => {
    const ctx = makeCtx(dirs, {
      config: {
        args: ['--extra', 'two words'],
        env: { MY_FLAG: 'on' },
        pass_env: [],
        files: { '.config/tool/conf.txt': 'x=1\n' },
        command:
          // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell expansion in a command template
          'printf "%s\\n" {prompt} > out.txt; cat {prompt_file} > pf.txt; echo "$HW_MODEL $HW_API_KEY $MY_FLAG ${HW_LEAK_CANARY:-none}" {base_url} {openai_base_url}; echo "$PATH" > path.txt; printf "%s|" "$@" > args.txt; echo',
      },
    })
    const installed = await commandAdapter.install('1.0.0', { cacheDir: dirs.tmp, log: () => {} })
    const inv = await commandAdapter.prepare(installed, ctx)
    expect(inv.command).toBe('bash')
    expect(inv.args[0]).toBe('-lc')
    expect(inv.cwd).toBe(dirs.workspace)
    expect(leaks(inv.env)).toEqual([])
    expect(inv.env.HOME).toBe(dirs.home)
    expect(inv.env.TMPDIR).toBe(dirs.tmp)
    expect(inv.env.XDG_CONFIG_HOME).toBe(path.join(dirs.home, '.config'))
    expect(inv.env.HW_OPENAI_BASE_URL).toBe('http://127.0.0.1:4555/v1')
    expect(inv.env.OPENAI_API_KEY).toBe('sk-hw-attempt-1')
    expect(await readFile(path.join(dirs.home, '.config/tool/conf.txt'), 'utf8')).toBe('x=1\n')

    const r = await execa(inv.command, inv.args, {
      env: inv.env,
      extendEnv: false,
      cwd: inv.cwd,
      stdin: 'ignore',
    })
    expect(r.stdout.split('\n')[0]).toBe(
      'claude-sonnet-4-5 sk-hw-attempt-1 on none http://127.0.0.1:4555 http://127.0.0.1:4555/v1',
    )
    expect(await readFile(path.join(dirs.workspace, 'out.txt'), 'utf8')).toBe(`${ctx.prompt}\n`)
    expect(await readFile(path.join(dirs.workspace, 'pf.txt'), 'utf8')).toBe(ctx.prompt)
    // /etc/profile resets PATH in a login shell; the adapter restores the isolated PATH.
    expect((await readFile(path.join(dirs.workspace, 'path.txt'), 'utf8')).trim()).toBe(inv.env.PATH)
    expect(await commandAdapter.probeVersion(installed)).toBe('1.0.0')
  })

  it('appends config.args as quoted words', async () => {
    const ctx = makeCtx(dirs, {
      config: { args: ['two words', "it's"], env: {}, pass_env: [], files: {}, command: 'printf "[%s]" ' },
    })
    const inv = await commandAdapter.prepare(
      await commandAdapter.install('1', { cacheDir: dirs.tmp, log: () => {} }),
      ctx,
    )
    const r = await execa(inv.command, inv.args, { env: inv.env, extendEnv: false, cwd: inv.cwd })
    expect(r.stdout).toBe("[two words][it's]")
  })

  it('passes allowlisted runner variables only', async () => {
    process.env.HW_TEST_PASSED = 'yes'
    try {
      const ctx = makeCtx(dirs, {
        config: {
          args: [],
          env: {},
          pass_env: ['HW_TEST_PASSED', 'HW_TEST_ABSENT'],
          files: {},
          command: 'true',
        },
      })
      const inv = await commandAdapter.prepare(
        await commandAdapter.install('1', { cacheDir: dirs.tmp, log: () => {} }),
        ctx,
      )
      expect(inv.env.HW_TEST_PASSED).toBe('yes')
      expect('HW_TEST_ABSENT' in inv.env).toBe(false)
    } finally {
      delete process.env.HW_TEST_PASSED
    }
  })

  it('refuses a missing template and files outside the home', async () => {
    const installed = await commandAdapter.install('1', { cacheDir: dirs.tmp, log: () => {} })
    await expect(commandAdapter.prepare(installed, makeCtx(dirs))).rejects.toMatchObject({
      code: 'bad_config',
    })
    const outside = makeCtx(dirs, {
      config: { args: [], env: {}, pass_env: [], files: { '../evil.txt': 'x' }, command: 'true' },
    })
    await expect(commandAdapter.prepare(installed, outside)).rejects.toMatchObject({
      code: 'bad_config_file',
    })
  })

  it('parses the last stdout line and flags a command that cannot start', async () => {
    const ctx = makeCtx(dirs)
    const ok = await commandAdapter.parse(
      {
        stdout: '{"type":"step"}\nworking\nall done\n',
        stderr: '',
        exitCode: 0,
        signal: null,
        home: dirs.home,
      },
      ctx,
    )
    expect(ok).toEqual({
      finalMessage: 'all done',
      trajectory: [{ type: 'step' }],
      selfReport: null,
      startupError: null,
    })
    const missing = await commandAdapter.parse(
      {
        stdout: '',
        stderr: 'bash: line 1: my-agent: command not found\n',
        exitCode: 127,
        signal: null,
        home: dirs.home,
      },
      ctx,
    )
    expect(missing.startupError).toContain('command not found')
  })

  it('is what the registry returns, and unknown names are a user error', () => {
    expect(adapterFor('command')).toBe(commandAdapter)
    expect(() => adapterFor('nope')).toThrow(/unknown harness "nope"/)
  })
})

describe('command: its own usage count', () => {
  it('the last {"type":"self_report"} line is the self-report; bad values are left out, none is null', async () => {
    const parse = (stdout: string) =>
      commandAdapter.parse(
        { stdout, stderr: '', exitCode: 0, signal: null, home: '/nonexistent' },
        makeCtx({ workspace: '/nonexistent/w', home: '/nonexistent/h', tmp: '/nonexistent/t' }),
      )
    const r = await parse(
      [
        '{"type":"self_report","requests":2}',
        'working…',
        '{"type":"self_report","requests":6,"input_tokens":120.5,"output_tokens":-1,"turns":1.5,"cost_usd":"0.1"}',
        'done',
      ].join('\n'),
    )
    expect(r.selfReport).toEqual({
      input_tokens: 120.5,
      output_tokens: null,
      cache_read_tokens: null,
      cache_write_tokens: null,
      cost_usd: null,
      requests: 6,
      turns: null,
    })
    expect(r.finalMessage).toBe('done')
    expect((await parse('{"type":"self_report","requests":"six"}\n')).selfReport).toBeNull()
    expect((await parse('{"type":"usage","requests":6}\n')).selfReport).toBeNull()
  })
})
