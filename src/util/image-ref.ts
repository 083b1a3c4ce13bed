/** An image reference split into its parts. */
export interface ImageRef {
  /** name with registry and path, e.g. `localhost/harness-watch-base` or `docker.io/swebench/x`. */
  name: string
  tag: string | null
  /** `sha256:<64 hex>` when pinned. */
  digest: string | null
}

const COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*'
const DOMAIN =
  '(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::[0-9]+)?/)?'
const REF = new RegExp(
  `^(${DOMAIN}${COMPONENT}(?:/${COMPONENT})*)(?::([\\w][\\w.-]{0,127}))?(?:@(sha256:[a-f0-9]{64}))?$`,
)

/**
 * Parse an image reference the way Docker's reference grammar reads it (`name[:tag][@sha256:…]`);
 * null when it is not one (upper case in the path, an empty part, a digest that is not sha256 of 64
 * hex digits…).
 */
export function parseImageRef(ref: string): ImageRef | null {
  const m = REF.exec(ref)
  if (!m?.[1] || ref.length > 255) return null
  return { name: m[1], tag: m[2] ?? null, digest: m[3] ?? null }
}

/** The Debian base image manifests use by default, built from Debian's packages on first use. */
export const BASE_IMAGE_REF = 'localhost/harness-watch-base:bookworm'
