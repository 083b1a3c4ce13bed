import type { ConfirmationDesign } from './contract.js'
import { rerunExact } from './rerun-exact.js'
import { twoStageSplit } from './two-stage.js'

/** Every confirmation design by name (a missing entry fails to compile). */
export type DesignName = 'rerun-exact' | 'two-stage-split'
export const DESIGNS: Record<DesignName, ConfirmationDesign> = {
  'rerun-exact': rerunExact,
  'two-stage-split': twoStageSplit,
}
/** The design new decisions use; a recorded decision is confirmed by the design it names. */
export const DEFAULT_DESIGN: ConfirmationDesign = DESIGNS['two-stage-split']

/** The design a decision's confirmation names, else the default. */
export function designNamed(name: string | undefined): ConfirmationDesign {
  return name && name in DESIGNS ? DESIGNS[name as DesignName] : DEFAULT_DESIGN
}
