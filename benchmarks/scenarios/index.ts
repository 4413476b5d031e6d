import { items } from './items.js'
import type { Scenario } from './types.js'

/**
 * Every benchmark scenario, in the order they are listed in the output. A new one
 * is a module in this folder exporting a `Scenario`, added here.
 */
export const scenarios: Scenario[] = [
  items
]
