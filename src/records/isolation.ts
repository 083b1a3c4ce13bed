import { z } from 'zod'

/**
 * How an attempt's processes were isolated, strongest first (design/sandbox.md §3, §5):
 * - `container`: the task's container image through a container engine's CLI (sandbox/container/):
 *   no network but the forwarded proxy, all capabilities dropped, container root id-mapped where the
 *   engine can, resource limits;
 * - `namespace+uid`: own PID and mount namespace, private /proc, /tmp and /home, read-only system,
 *   a separate unprivileged user per slot; the harness cannot read the action's environment or files;
 * - `env-only`: an allowlisted environment and a fresh HOME, same user: **not isolation**;
 * - `none`: the harness runs as a plain child of the action (allowlisted environment), no check.
 */
export const IsolationSchema = z.enum(['container', 'namespace+uid', 'env-only', 'none'])
export type Isolation = z.infer<typeof IsolationSchema>

/**
 * The canary self-test's result: `passed` (the probe saw no canary), `exposed` (it saw one: expected
 * for env-only, fatal for an isolating backend), `skipped` (backend `none`).
 */
export const CanaryResultSchema = z.enum(['passed', 'exposed', 'skipped'])
export type CanaryResult = z.infer<typeof CanaryResultSchema>

/** Network of a container: only forwarded loopback ports, nothing at all, or the engine's default network. */
export const ContainerNetworkSchema = z.enum(['proxy-only', 'none', 'public'])
export type ContainerNetwork = z.infer<typeof ContainerNetworkSchema>
