import { expect } from 'vitest'

/** Asserts |actual − expected| ≤ tol·|expected| (relative; absolute when expected is 0). */
export function expectRelative(actual: number | null | undefined, expected: number, tol = 1e-9): void {
  expect(actual).not.toBeNull()
  expect(actual).toBeTypeOf('number')
  const a = actual as number
  const scale = expected === 0 ? 1 : Math.abs(expected)
  const err = Math.abs(a - expected) / scale
  if (!(err <= tol)) {
    throw new Error(`expected ${a} to be within ${tol} (relative) of ${expected}; relative error ${err}`)
  }
}

/** Recursively asserts that a result holds no NaN or ±Infinity anywhere (the JSON rule). */
export function expectAllFinite(value: unknown, path = 'result'): void {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`${path} is ${value}`)
    return
  }
  if (value === null || typeof value !== 'object') return
  if (ArrayBuffer.isView(value)) {
    Array.from(value as unknown as ArrayLike<number>).forEach((v, i) => {
      expectAllFinite(v, `${path}[${i}]`)
    })
    return
  }
  for (const [k, v] of Object.entries(value)) expectAllFinite(v, `${path}.${k}`)
}
