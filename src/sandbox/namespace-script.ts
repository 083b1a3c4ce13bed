/**
 * The root shell kept as PID 1 of the namespace (design/sandbox.md §3 (a)). Its input comes in
 * HW_SB_* variables (the shell's environment is root's: the sandbox user cannot read it) and the
 * harness's complete environment and command line in "$@".
 *
 * It builds a new root on a private tmpfs from an allowlist and moves into it (pivot_root), so nothing
 * else of the host's file system exists for the harness:
 * - the system folders a program needs (HW_SB_SYSTEM: /usr, and /bin, /lib… as folders or as the
 *   symbolic links they are), read-only;
 * - a minimal /etc: the files and folders named in HW_SB_ETC (name resolution, users and groups,
 *   certificates, the dynamic linker's cache…; HW_SB_ETC_FILES and HW_SB_ETC_DIRS, names without
 *   spaces), files copied in, folders bound read-only;
 * - a private /proc of the namespace's own PIDs, a minimal /dev (null, zero, full, random, urandom,
 *   tty, a private /dev/shm and /dev/pts), empty private /tmp and /var/tmp, an empty /var and /run;
 * - the folders to expose (HW_SB_EXPOSE, `rw:<dir>` or `ro:<dir>`) at their own paths, and the masked
 *   folders inside them (HW_SB_MASK, e.g. a checkout's .git) covered with an empty read-only tmpfs.
 * The new root itself is read-only. With a network namespace of its own (HW_SB_NET set) it brings
 * up lo and, for forwarded ports (HW_SB_FORWARD), starts the loopback forwarder, then starts the harness as the slot's user with no
 * capabilities and no new privileges under `timeout -k`, and waits: when it returns, the namespace ends
 * and the kernel kills whatever the harness left.
 *
 * Every step refuses to run on an empty variable (`${X:?}`): this script must only ever run inside a
 * fresh mount namespace with its inputs set.
 */
export const NAMESPACE_SCRIPT = `set -eu
exec 3<&0
umask 022
S=\${HW_SB_STASH:?}
: "\${HW_SB_CWD:?}" "\${HW_SB_UID:?}" "\${HW_SB_GID:?}" "\${HW_SB_TIMEOUT:?}" "\${HW_SB_GRACE:?}" "\${HW_SB_SYSTEM:?}"
if [ "$$" != 1 ]; then echo "hw-sandbox: not PID 1 of a new namespace" >&2; exit 125; fi
mkdir -p "$S"
mount -t tmpfs -o mode=0700 hw-stash "$S"
R=$S/root
mkdir "$R"
mount -t tmpfs -o mode=0755,nosuid hw-root "$R"
# Few processes: every one started here takes a PID of the namespace before the harness's.
for d in $HW_SB_SYSTEM; do
  if [ -L "/$d" ]; then ln -s "$(readlink "/$d")" "$R/$d"
  elif [ -d "/$d" ]; then mkdir "$R/$d"; mount -o bind,ro,nosuid "/$d" "$R/$d"
  fi
done
mkdir -m 0755 "$R/etc" "$R/var" "$R/run" "$R/proc" "$R/dev" "$R/tmp" "$R/var/tmp"
# Files of /etc are copied (a symbolic link such as resolv.conf → /run/… by its content), folders bound.
if [ -n "\${HW_SB_ETC_FILES:-}" ]; then (cd /etc && cp -L --parents -t "$R/etc" $HW_SB_ETC_FILES); fi
for f in \${HW_SB_ETC_DIRS:-}; do
  mkdir -p "$R/etc/$f"; mount -o bind,ro,nosuid,nodev "/etc/$f" "$R/etc/$f"
done
for m in "$R/tmp" "$R/var/tmp"; do mount -t tmpfs -o mode=1777,nosuid,nodev hw "$m"; done
mount -t proc -o nosuid,nodev,noexec proc "$R/proc"
mount -t tmpfs -o mode=0755,nosuid hw-dev "$R/dev"
for n in null zero full random urandom tty; do
  if [ -e "/dev/$n" ]; then : > "$R/dev/$n"; mount --bind "/dev/$n" "$R/dev/$n"; fi
done
ln -s /proc/self/fd "$R/dev/fd"
ln -s /proc/self/fd/0 "$R/dev/stdin"; ln -s /proc/self/fd/1 "$R/dev/stdout"; ln -s /proc/self/fd/2 "$R/dev/stderr"
mkdir "$R/dev/shm" "$R/dev/pts"
mount -t tmpfs -o mode=1777,nosuid,nodev hw "$R/dev/shm"
if mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 hw-pts "$R/dev/pts" 2>/dev/null; then ln -s pts/ptmx "$R/dev/ptmx"; fi
printf '%s\\n' "\${HW_SB_EXPOSE:-}" > "$S/expose"
while IFS= read -r e; do
  if [ -z "$e" ]; then continue; fi
  p=\${e#*:}
  if [ -d "$p" ]; then mkdir -p "$R$p"
  else mkdir -p "$(dirname "$R$p")"; [ -e "$R$p" ] || : > "$R$p"
  fi
  case "$e" in ro:*) mount -o bind,ro "$p" "$R$p";; *) mount --bind "$p" "$R$p";; esac
done < "$S/expose"
printf '%s\\n' "\${HW_SB_MASK:-}" > "$S/mask"
while IFS= read -r h; do
  if [ -n "$h" ] && [ -d "$R$h" ]; then mount -t tmpfs -o mode=0755,nosuid,nodev,ro hw "$R$h"; fi
done < "$S/mask"
mount -o remount,ro,nosuid hw-root "$R"
# A network of its own (HW_SB_NET): only lo.
if [ -n "\${HW_SB_NET:-}" ]; then ip link set lo up; fi
if [ -n "\${HW_SB_FORWARD:-}" ]; then
  # Proxy-only network: a forwarder (root, outside the harness's reach) maps each 127.0.0.1:PORT to
  # the host's unix socket for it, the only way out. Started before the root moves, it moves with it
  # (its socket folder is exposed at the same path).
  env -i "\${HW_SB_NODE:?}" -e "\${HW_SB_FORWARD_JS:?}" "\${HW_SB_FORWARD:?}" \${HW_SB_PORTS:?} > "$S/forward" 2>&1 &
  i=0
  until grep -q hw-forward-ready "$S/forward"; do
    i=$((i+1))
    if [ "$i" -gt 200 ]; then echo "hw-sandbox: the loopback forwarder did not start: $(cat "$S/forward")" >&2; exit 125; fi
    sleep 0.05
  done
fi
# Into the new root; the host's whole tree (the stash included) is detached.
cd "$R"
pivot_root . .
umount -l .
cd "$HW_SB_CWD"
set +e
# An asynchronous command's stdin is /dev/null unless redirected: hand it ours (the prompt, for
# harnesses that read it from stdin).
timeout -k "$HW_SB_GRACE" "$HW_SB_TIMEOUT" setpriv --reuid="$HW_SB_UID" --regid="$HW_SB_GID" \\
  --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs env -i "$@" <&3 3<&- &
exec 3<&-
wait $!
`
