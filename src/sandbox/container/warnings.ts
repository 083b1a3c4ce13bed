import type { SandboxSetting } from '../../manifest/schema.js'
import { BASE_IMAGE_REF, parseImageRef } from '../../util/image-ref.js'

/**
 * What `validate` warns about in a container setting (pure): an image not pinned by digest drifts
 * between scheduled runs (a confound the report cannot see), except the base image built here from
 * Debian's packages, whose id is recorded per attempt. Only for a manifest a scheduled workflow runs
 * (`scheduledBy` names those workflows, or `--scheduled`): a one-off run records its image id anyway.
 */
export function containerWarnings(setting: SandboxSetting, scheduledBy: string[]): string[] {
  if (scheduledBy.length === 0) return []
  if (setting.backend !== 'container' || !setting.container) return []
  const ref = parseImageRef(setting.container.image)
  if (!ref || ref.digest || setting.container.image === BASE_IMAGE_REF) return []
  return [
    `sandbox.container.image "${setting.container.image}" is not pinned by digest and ${scheduledBy.join(', ')} runs this manifest on a schedule: each run may get a different image (pin it as name@sha256:<digest>)`,
  ]
}
