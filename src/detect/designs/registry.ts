import type { ConfirmationDesign } from './contract.js'
import { rerunExact } from './rerun-exact.js'

/** Every confirmation design by name (a missing entry fails to compile). */
export type DesignName = 'rerun-exact'
export const DESIGNS: Record<DesignName, ConfirmationDesign> = {
  'rerun-exact': rerunExact,
}
/** The design every decision uses. */
export const DEFAULT_DESIGN: ConfirmationDesign = DESIGNS['rerun-exact']
