import { test } from 'tap'
import { meantName, nameDistance } from '../lib/core/names.js'

test('nameDistance: the mistakes a user makes in a name, and the names that are simply others', async (t) => {
  const near: Array<[string, string, number]> = [
    ['response_schema', 'responseSchema', 0],
    ['ResponseSchema', 'responseSchema', 0],
    ['detail-route', 'detailRoute', 0],
    ['unsafeDependency', 'unsafeDependencies', 0],
    ['orderingField', 'orderingFields', 0],
    ['searchs', 'searches', 0],
    ['boxes', 'box_', 0],
    ['getKwarg', 'getKwargs', 0],
    ['reponseSchema', 'responseSchema', 1],
    ['retreive', 'retrieve', 1],
    ['detialRoute', 'detailRoute', 1],
    ['reponseSchma', 'responseSchema', 2],
    ['lastModifedFeld', 'lastModifiedField', 2]
  ]
  for (const [typed, known, d] of near) t.equal(nameDistance(typed, known), d, `${typed} is ${d} from ${known}`)
  const far: Array<[string, string]> = [
    ['list', 'list'], // the same name is no mistake
    ['tags', 'tag'], // too short to tell
    ['etag', 'etags_'.slice(0, 3)],
    ['listAll', 'list'],
    ['bulkCreate', 'bulkUpdate'], // three edits
    ['retreiv', 'retrieve'], // two edits in a short name
    ['class', 'classes_x'],
    ['progress', 'progre'], // "ss" is no plural ending
    ['pageTitle', 'pageSize']
  ]
  for (const [typed, known] of far) t.equal(nameDistance(typed, known), undefined, `${typed} is not near ${known}`)
  t.equal(meantName('reponseSchem', ['responseHeaders', 'responseSchema', 'reponseSchemaX']), 'responseSchema', 'the nearest known name')
  t.equal(meantName('errorz', ['errors', 'error_']), 'errors', 'on a tie, the first listed')
  t.equal(meantName('zzzz', ['errors']), undefined)
})
