/**
 * How few blocks a ratio of totals over its threshold θ rests on. With the midpoint m = (1 + θ)/2
 * and Dᵢ = tᵢ − m·bᵢ, k is the fewest blocks whose removal (largest Dᵢ first) brings the rest's
 * ratio to m or below: without them, at least half of the excess over parity that the threshold
 * allows is gone. A small k (at most CONCENTRATED_SHARE of the blocks, at least 1) means the ratio
 * is carried by a few runaway blocks rather than by the panel — a cost to name, not to read as
 * cleared when a test of totals cannot confirm it on so few blocks. Pure.
 */

/** A ratio resting on at most this share of the blocks is reported as concentrated. */
export const CONCENTRATED_SHARE = 0.1

export interface Concentration {
  k: number
  instances: string[]
}

/** Null when the ratio is at or below θ, or rests on more than CONCENTRATED_SHARE of the blocks. */
export function concentration(
  cols: { instances: readonly string[]; base: ArrayLike<number>; treat: ArrayLike<number> },
  threshold: number,
): Concentration | null {
  const n = cols.instances.length
  let st = 0
  let sb = 0
  for (let i = 0; i < n; i++) {
    st += cols.treat[i] as number
    sb += cols.base[i] as number
  }
  if (!(st > threshold * sb)) return null
  const mid = (1 + threshold) / 2
  const d = cols.instances.map((instance, i) => ({
    instance,
    d: (cols.treat[i] as number) - mid * (cols.base[i] as number),
  }))
  let total = st - mid * sb
  d.sort((a, b) => b.d - a.d || (a.instance < b.instance ? -1 : 1))
  const limit = Math.max(1, Math.floor(CONCENTRATED_SHARE * n))
  const out: string[] = []
  for (const x of d) {
    if (total <= 0) break
    if (out.length >= limit) return null
    out.push(x.instance)
    total -= x.d
  }
  return total <= 0 ? { k: out.length, instances: out } : null
}
