/**
 * The root shell kept as PID 1 of the namespace (design/sandbox.md §3 (a)). Its input comes in
 * HW_SB_* variables (the shell's environment is root's: the sandbox user cannot read it) and the
 * harness's complete environment and command line in "$@". It parks the folders to expose on a private
 * tmpfs, makes every real mount read-only, puts empty tmpfs over /tmp, /var/tmp, /dev/shm and the
 * hidden homes, puts the parked folders back (read-only ones read-only), covers the masked folders
 * (HW_SB_MASK, e.g. a checkout's .git inside an exposed folder) with an empty read-only tmpfs, with a
 * network namespace of its own (HW_SB_FORWARD set) brings up lo and starts the loopback forwarder, then
 * starts the harness as the slot's user with no capabilities and no new privileges under `timeout -k`,
 * and waits: when it returns, the namespace ends and the kernel kills whatever the harness left.
 *
 * Every step refuses to run on an empty variable (`${X:?}`): this script must only ever run inside a
 * fresh mount namespace with its inputs set.
 */
export const NAMESPACE_SCRIPT = `set -eu
exec 3<&0
umask 022
S=\${HW_SB_STASH:?}
: "\${HW_SB_CWD:?}" "\${HW_SB_UID:?}" "\${HW_SB_GID:?}" "\${HW_SB_TIMEOUT:?}" "\${HW_SB_GRACE:?}"
if [ "$$" != 1 ]; then echo "hw-sandbox: not PID 1 of a new namespace" >&2; exit 125; fi
mkdir -p "$S"
mount -t tmpfs -o mode=0700 hw-stash "$S"
printf '%s\\n' "\${HW_SB_EXPOSE:-}" > "$S/expose"
printf '%s\\n' "\${HW_SB_HIDE:-}" > "$S/hide"
n=0
while IFS= read -r e; do
  if [ -z "$e" ]; then continue; fi
  n=$((n+1)); mkdir "$S/$n"; mount --bind "\${e#*:}" "$S/$n"
done < "$S/expose"
awk '{print $2}' /proc/self/mounts > "$S/mounts"
while IFS= read -r m; do
  m=$(printf '%b' "$m")
  case "$m" in /proc|/proc/*|/sys|/sys/*|/dev|/dev/*) continue;; esac
  case "$m" in "$S"|"$S"/*) continue;; esac
  if [ "$m" = / ]; then mount -o remount,bind,ro /; else mount -o remount,bind,ro "$m" 2>/dev/null || :; fi
done < "$S/mounts"
for m in /tmp /var/tmp /dev/shm; do
  if [ -d "$m" ]; then mount -t tmpfs -o mode=1777,nosuid,nodev hw "$m"; fi
done
while IFS= read -r h; do
  if [ -n "$h" ] && [ -d "$h" ]; then mount -t tmpfs -o mode=0755,nosuid,nodev hw "$h"; fi
done < "$S/hide"
n=0
while IFS= read -r e; do
  if [ -z "$e" ]; then continue; fi
  n=$((n+1)); p=\${e#*:}
  mkdir -p "$p"
  mount --bind "$S/$n" "$p"
  case "$e" in ro:*) mount -o remount,bind,ro "$p";; esac
done < "$S/expose"
printf '%s\\n' "\${HW_SB_MASK:-}" > "$S/mask"
while IFS= read -r h; do
  if [ -n "$h" ] && [ -d "$h" ]; then mount -t tmpfs -o mode=0755,nosuid,nodev,ro hw "$h"; fi
done < "$S/mask"
if [ -n "\${HW_SB_FORWARD:-}" ]; then
  # Proxy-only network: this namespace has only lo; a forwarder (root, outside the harness's reach)
  # maps each 127.0.0.1:PORT to the host's unix socket for it, the only way out.
  ip link set lo up
  env -i "\${HW_SB_NODE:?}" -e "\${HW_SB_FORWARD_JS:?}" "\${HW_SB_FORWARD:?}" \${HW_SB_PORTS:?} > "$S/forward" 2>&1 &
  i=0
  until grep -q hw-forward-ready "$S/forward"; do
    i=$((i+1))
    if [ "$i" -gt 200 ]; then echo "hw-sandbox: the loopback forwarder did not start: $(cat "$S/forward")" >&2; exit 125; fi
    sleep 0.05
  done
fi
umount -l "$S"
cd "$HW_SB_CWD"
set +e
# An asynchronous command's stdin is /dev/null unless redirected: hand it ours (the prompt, for
# harnesses that read it from stdin).
timeout -k "$HW_SB_GRACE" "$HW_SB_TIMEOUT" setpriv --reuid="$HW_SB_UID" --regid="$HW_SB_GID" \\
  --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs env -i "$@" <&3 3<&- &
exec 3<&-
wait $!
`
