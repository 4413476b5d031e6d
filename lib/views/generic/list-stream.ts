// What `listStream` declares (views layer): the streamed forms a generic list answers besides its page, checked at registration.
import { ConfigurationError } from '../../core/configuration-error.js'

/** The streamed forms a list answers besides its page. */
export type ListStreamFormat = 'ndjson' | 'array'

/** `static listStream`: the list also answers its rows as a stream, chosen by `Accept` (docs/streaming.md, "Streamed lists"). */
export interface ListStreamOptions {
  /**
   * `ndjson`: one JSON object a line (`application/x-ndjson`, `application/jsonl`); `array`: one JSON
   * array sent as it is read (`application/json; stream=array`). Default both.
   */
  formats?: readonly ListStreamFormat[]
  /** Rows read at a time. Default 1000. */
  pageSize?: number
}

/** `listStream` with every option given. */
export interface ListStreamSettings { readonly formats: readonly ListStreamFormat[], readonly pageSize: number }

/** `listStream`, checked: a mistake fails at registration naming the view. */
export function listStreamSettings (
  owner: string,
  options: ListStreamOptions | boolean | undefined
): ListStreamSettings | undefined {
  if (options === undefined || options === false) return undefined
  const { formats = ['ndjson', 'array'], pageSize = 1000, ...rest } = options === true ? {} : options
  const unknown = Object.keys(rest)
  if (unknown.length > 0) throw new ConfigurationError('FV_ERR_STREAM', `${owner}.listStream has no option ${unknown.join(', ')}: it takes formats and pageSize`)
  if (!Array.isArray(formats) || formats.length === 0 || formats.some((format) => format !== 'ndjson' && format !== 'array')) {
    throw new ConfigurationError('FV_ERR_STREAM', `${owner}.listStream.formats lists 'ndjson', 'array' or both, not ${JSON.stringify(formats)}`)
  }
  if (!Number.isSafeInteger(pageSize) || pageSize < 1 || pageSize > 10_000) {
    throw new ConfigurationError('FV_ERR_STREAM', `${owner}.listStream.pageSize is a whole number of rows from 1 to 10000, not ${String(pageSize)}`)
  }
  return { formats, pageSize }
}
