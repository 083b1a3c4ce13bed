/**
 * Validators return a list of error messages; an empty list means the input is valid.
 */

/** @param {{ name?: unknown, email?: unknown }} user */
export function validateUser(user) {
  const errors = []
  if (typeof user.name !== 'string' || user.name.trim() === '') errors.push('name is required')
  if (typeof user.email !== 'string' || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(user.email)) {
    errors.push('email is invalid')
  }
  return errors
}

/** @param {{ quantity?: unknown, contactEmail?: unknown }} order */
export function validateOrder(order) {
  const errors = []
  if (!Number.isInteger(order.quantity) || order.quantity < 1) {
    errors.push('quantity must be a positive integer')
  }
  if (typeof order.contactEmail !== 'string' || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(order.contactEmail)) {
    errors.push('contactEmail is invalid')
  }
  return errors
}

/** @param {{ to?: unknown, cc?: unknown[] }} invite */
export function validateInvite(invite) {
  const errors = []
  if (typeof invite.to !== 'string' || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(invite.to)) {
    errors.push('to is invalid')
  }
  for (const [i, cc] of (invite.cc ?? []).entries()) {
    if (typeof cc !== 'string' || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(cc)) errors.push(`cc[${i}] is invalid`)
  }
  return errors
}
