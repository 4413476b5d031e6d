import { bulkCreate } from './bulk-create.js'
import { cacheScenario } from './cache.js'
import { conditionalWrite } from './conditional-write.js'
import { etagScenario } from './etag.js'
import { expandList } from './expand.js'
import { genericList } from './generic-list.js'
import { genericRetrieve } from './generic-retrieve.js'
import { items } from './items.js'
import { list1000 } from './list-1000.js'
import { patchScenario, sqlitePatch } from './patch.js'
import { peersCreate, peersList, peersRetrieve } from './peers.js'
import { permissionsRetrieve } from './permissions.js'
import { sparseList } from './sparse.js'
import { sqliteBulkCreate, sqliteBulkCreate10k, sqliteRetrieve } from './sqlite.js'
import { telemetryScenarios } from './telemetry.js'
import type { AnyScenario } from './types.js'
import { versionedRetrieve, versionedWrite, versionedWritePg } from './versioned.js'

/**
 * Every benchmark scenario, in the order they are listed in the output. A new one
 * is a module in this folder exporting a `Scenario` (or a `BatchScenario`), added here.
 */
export const scenarios: AnyScenario[] = [
  items,
  genericList,
  genericRetrieve,
  etagScenario,
  bulkCreate,
  sqliteRetrieve,
  sqliteBulkCreate,
  conditionalWrite,
  versionedWrite,
  versionedWritePg,
  versionedRetrieve,
  patchScenario,
  sqlitePatch,
  list1000,
  sqliteBulkCreate10k,
  peersList,
  peersRetrieve,
  peersCreate,
  permissionsRetrieve,
  sparseList,
  expandList,
  cacheScenario,
  ...telemetryScenarios // only in a process that serves one of them alone (telemetry.ts)
]
