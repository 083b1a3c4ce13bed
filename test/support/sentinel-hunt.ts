import os from 'node:os'
import path from 'node:path'

/**
 * The secret hunt the sandbox probes run, as a bash script whose stdout holds everything it could
 * read: every /proc/<pid>/environ and cmdline, its parent chain's, the checkout's `.git/config`, a
 * planted file in the action user's home, the home folder and /home listings, and its own
 * environment. Markers `<TAG>-START uid=<uid>`, `<TAG>-READ <files read>` and `<TAG>-END` frame it.
 */
export function sentinelHuntScript(tag: string, where: { checkout: string; homeFile: string }): string {
  return [
    `echo "${tag}-START uid=$(id -u)"`,
    'n=0',
    'for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do',
    '  if tr "\\0" "\\n" < "$f" 2>/dev/null; then n=$((n+1)); fi',
    'done',
    `echo "${tag}-READ $n"`,
    'p=$$',
    'while [ "$p" -gt 1 ]; do',
    '  echo "PARENT $p"',
    '  tr "\\0" "\\n" < /proc/$p/environ 2>/dev/null',
    '  tr "\\0" " " < /proc/$p/cmdline 2>/dev/null; echo',
    "  p=$(awk '/^PPid:/{print $2}' /proc/$p/status 2>/dev/null || echo 0)",
    '  [ -n "$p" ] || p=0',
    'done',
    `cat ${JSON.stringify(path.join(where.checkout, '.git', 'config'))} 2>/dev/null`,
    `cat ${JSON.stringify(where.homeFile)} 2>/dev/null`,
    `ls -la ${JSON.stringify(os.homedir())} /home 2>/dev/null`,
    'env | sed "s/^/OWN /"',
    `echo ${tag}-END`,
  ].join('\n')
}
