// Streamed lists (registration layer, a route feature): a generic list with `listStream` answers NDJSON or a
// JSON array sent as it is read when `Accept` asks for one, in constant memory, and documents both.
import { Readable } from 'node:stream'
import { Type, type TSchema } from '@sinclair/typebox'
import type { FastifyReply } from 'fastify'
import { ConfigurationError } from '../core/configuration-error.js'
import { negotiate, offers, type Offer } from '../http/accept.js'
import { BadRequest } from '../http/errors.js'
import { isObjectNode } from '../core/schema-node.js'
import { wireForm } from '../schema/wire.js'
import { listItemOf } from '../views/actions/list-create.js'
import { isGenericList } from '../views/generic/generic-list.js'
import { mapsItself } from '../views/generic/generic-view.js'
import { pickFields } from '../views/generic/expand.js'
import { listRows } from '../views/generic/streamed-list.js'
import type { ListingView } from '../views/generic/generic-list.js'
import { listStreamSettings, type ListStreamFormat, type ListStreamOptions } from '../views/generic/list-stream.js'
import { ANSWERED, type BeforeAction, type RouteContribution, type RouteDefinition, type ViewClass } from '../views/view.js'
import type { FieldSet } from '../query/field-set.js'

/** The media types of each streamed form, the first the one sent. */
const MEDIA_TYPES: Readonly<Record<ListStreamFormat, readonly string[]>> = {
  ndjson: ['application/x-ndjson', 'application/jsonl'],
  array: ['application/json; stream=array']
}

/** Each row's text: serialized by the compiled serializer of the list's item (of its partial form for a field set). */
type Encode = (row: unknown, set: FieldSet | undefined) => string

/** A page's rows as one chunk; the array's brackets and commas around them, so that what is sent is one JSON value. */
async function * chunks (
  pages: AsyncIterable<unknown[]>,
  encode: Encode,
  set: FieldSet | undefined,
  array: boolean
): AsyncGenerator<string> {
  let first = true
  for await (const rows of pages) {
    let text = ''
    for (const row of rows) {
      text += array ? (first ? '[' : ',') + encode(row, set) : encode(row, set) + '\n'
      first = false
    }
    yield text
  }
  if (array) yield first ? '[]\n' : ']\n'
}

/** The item schema of a page: its array's items, the array itself or the first array member of its envelope. */
function pageItem (page: TSchema, item: TSchema): TSchema {
  // A TSchema's members are untyped: the page's are schemas, as the pagination that built it made them.
  const members = page.type === 'array' ? [page] : Object.values(page.properties as Record<string, TSchema>)
  const array = members.find((member) => member.type === 'array')
  // The library's pages all hold their items' array; a pagination of one's own may not, and its item is documented.
  /* c8 ignore next */
  return (array?.items ?? item) as TSchema
}

/** `Vary: Accept` beside what the answer varies by already: the same URL answers a page or a stream. */
function varyByAccept (reply: FastifyReply): void {
  const vary = reply.getHeader('vary')
  reply.header('vary', vary === undefined ? 'Accept' : `${String(vary)}, Accept`)
}

/** The options of a class that may stream its list. */
interface StreamingClass { listStream?: ListStreamOptions | boolean, defaultSerializerOptions?: { byAlias?: boolean } }

/**
 * What `listStream` adds to a generic view's list: a step that, when `Accept` prefers a streamed
 * form, reads the list page by page (`listRows`) and answers with its rows, the action not run; and
 * the streamed forms in the document beside the page. The page stays the answer to any other Accept.
 */
export function streamedLists (
  route: RouteDefinition,
  _method: string,
  view: ViewClass
): RouteContribution | undefined {
  if (route.name !== 'list' || !route.standard) return undefined
  // Its statics as the feature reads them: a view without them streams nothing.
  const klass = view as ViewClass & StreamingClass
  const settings = listStreamSettings(view.name, klass.listStream)
  if (settings === undefined) return undefined
  const item = listItemOf(view)
  if (item === undefined || route.responseSchema === undefined || !('getFilter' in view.prototype)) {
    throw new ConfigurationError('FV_ERR_STREAM', `${view.name}.listStream streams a generic view's list of its responseSchema: ` +
      'give the view a responseSchema and a repository (a generic view), or leave listStream out')
  }
  // The stream reads as the generic list does: a list of the view's own (rows hidden, mapped, added) would not be what it sends.
  if (!isGenericList(Reflect.get(view.prototype, 'list')) || mapsItself(view, 'list')) {
    throw new ConfigurationError('FV_ERR_STREAM', `${view.name}.listStream streams the rows the generic list reads, and ${view.name} ` +
      `${mapsItself(view, 'list') ? 'maps its list itself (mappingActions)' : 'has a list of its own'}: the stream would not send what ` +
      'its list does. Leave listStream out, or narrow the rows with getKwargs or permissions, which the stream reads too')
  }
  const form = wireForm(item, klass.defaultSerializerOptions ?? { byAlias: true })
  const whole = route.compileSerializer(form.schema)
  // A field set leaves members out: the partial form of the item, every member optional, serializes it.
  // An object node of the item's wire form, which is a TypeBox schema.
  const partial = isObjectNode(form.schema) ? route.compileSerializer(Type.Partial(form.schema as TSchema)) : whole
  const toWire = form.toWire
  const wire = (row: unknown): unknown => toWire === undefined ? row : toWire(row)
  // A field set names fields, so the row is cut before its members take their wire names.
  const encode: Encode = (row, set) => set === undefined
    ? whole(wire(row))
    // A row of a generic list is an object of the store's; a field set applies only to an object item.
    : partial(wire(pickFields(row as Record<string, unknown>, set.names)))
  const streamed = settings.formats.flatMap((format) => MEDIA_TYPES[format].map((mediaType) => ({ mediaType, format })))
  const choices: Offer[] = offers(['application/json', ...streamed.map(({ mediaType }) => mediaType)])
  const formatOf = new Map(streamed.map(({ mediaType, format }) => [mediaType, format]))
  const { pageSize } = settings
  const step: BeforeAction = (view, request, reply) => {
    varyByAccept(reply)
    const mediaType = negotiate(request.headers.accept, choices)?.mediaType
    const format = mediaType === undefined ? undefined : formatOf.get(mediaType)
    if (mediaType === undefined || format === undefined) return undefined
    const type = format === 'array' ? 'application/json; charset=utf-8' : `${mediaType}; charset=utf-8`
    // A HEAD is answered the headers alone: its body would be read to the end and dropped.
    if (request.method === 'HEAD') {
      reply.type(type).send()
      return ANSWERED
    }
    const set = (view as { fieldSet?: FieldSet }).fieldSet
    if (set !== undefined && set.expand.size > 0) {
      throw new BadRequest('A streamed list does not embed relations: leave out expand, or ask for the page (Accept: application/json).')
    }
    reply.type(type)
    // No byte is written before the first page is read: a failed first read is an error answer, a later one cuts the stream.
    // A generic view (registration checked its class has getFilter), which is what ListingView reads.
    const rows = listRows(view as unknown as ListingView, pageSize)
    reply.send(Readable.from(chunks(rows, encode, set, format === 'array'),
      { objectMode: false, highWaterMark: 65_536 }))
    return ANSWERED
  }
  // A row is documented as the page documents its items: with a field set (SparseFieldsMixin), the partial item.
  const documented = pageItem(route.responseSchema, item)
  const itemDoc = { schema: Type.String({ description: 'One JSON object a line, each as x-itemSchema describes it.' }), 'x-itemSchema': documented }
  const content: Record<string, { schema: TSchema, 'x-itemSchema'?: TSchema }> = { 'application/json': { schema: route.responseSchema } }
  for (const { mediaType, format } of streamed) {
    content[mediaType] = format === 'ndjson' ? itemDoc : { schema: Type.Array(documented, { description: 'Every row of the list, sent as it is read.' }) }
  }
  return { beforeAction: [step], responses: { 200: { content } } }
}
