#!/usr/bin/env bash
# Reference solution: move the expression to src/email.js and call isValidEmail from each validator.
set -euo pipefail
cat > src/email.js <<'EOF'
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

/**
 * True when `value` is a string that looks like an e-mail address.
 * @param {unknown} value
 * @returns {boolean}
 */
export function isValidEmail(value) {
  return typeof value === 'string' && EMAIL.test(value)
}
EOF
cat > src/validate.js <<'EOF'
import { isValidEmail } from './email.js'

/**
 * Validators return a list of error messages; an empty list means the input is valid.
 */

/** @param {{ name?: unknown, email?: unknown }} user */
export function validateUser(user) {
  const errors = []
  if (typeof user.name !== 'string' || user.name.trim() === '') errors.push('name is required')
  if (!isValidEmail(user.email)) errors.push('email is invalid')
  return errors
}

/** @param {{ quantity?: unknown, contactEmail?: unknown }} order */
export function validateOrder(order) {
  const errors = []
  if (!Number.isInteger(order.quantity) || order.quantity < 1) {
    errors.push('quantity must be a positive integer')
  }
  if (!isValidEmail(order.contactEmail)) errors.push('contactEmail is invalid')
  return errors
}

/** @param {{ to?: unknown, cc?: unknown[] }} invite */
export function validateInvite(invite) {
  const errors = []
  if (!isValidEmail(invite.to)) errors.push('to is invalid')
  for (const [i, cc] of (invite.cc ?? []).entries()) {
    if (!isValidEmail(cc)) errors.push(`cc[${i}] is invalid`)
  }
  return errors
}
EOF
