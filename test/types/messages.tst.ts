// The first line of the compiler's message for the five most common mistakes of a typed view.
// Each pins only the sentence the library's own types put in the message (README.md of this
// folder): the rest of the line is the compiler's, and changes between TypeScript versions.
import { Type } from '@sinclair/typebox'
import { describe, expect, test } from 'tstyche'
import { mix } from '../../lib/index.js'
import { AsyncGenericViewSet, GenericViewSet, MemoryRepository, PaginationFilter, asyncRepository } from '../../lib/generics.js'
import { ConditionalMixin } from '../../lib/conditional.js'

const Book = Type.Object({ id: Type.Integer(), title: Type.String(), year: Type.Integer(), updated_at: Type.String({ format: 'date-time' }) })
const BookParams = Type.Object({ id: Type.Integer() })
const books = asyncRepository(new MemoryRepository<{ id: number, title: string, year: number, updated_at: string }>())
const Books = mix(ConditionalMixin, AsyncGenericViewSet)

describe('the message names the mistake', () => {
  test('a misspelt static', () => {
    expect(Books.with({ responseSchemas: Book })).type.toRaiseError('"unknown static responseSchemas: did you mean responseSchema?"')
    expect(Books.with({ response_schema: Book })).type.toRaiseError('"unknown static response_schema: did you mean responseSchema?"')
    expect(Books.with({ unsafeDependency: [] })).type.toRaiseError('"unknown static unsafeDependency: did you mean unsafeDependencies?"')
    expect(Books.with({ createSchem: Book })).type.toRaiseError('"unknown static createSchem: did you mean createSchema?"')
    expect(Books.with({ detailParsms: BookParams })).type.toRaiseError('"unknown static detailParsms: did you mean detailParams?"')
    expect(Books.with({ conditonal: { etag: true } })).type.toRaiseError('"unknown static conditonal: did you mean conditional?"')
    expect(Books.with({ nonsense: 1 })).type.toRaiseError('"unknown static nonsense"')
    expect(Books.with({ responseSchema: Book })).type.not.toRaiseError()
  })

  test('a misspelt option of a group of statics', () => {
    expect(Books.with({ conditional: { etga: true } })).type.toRaiseError('"unknown option etga of conditional: did you mean etag?"')
    expect(Books.with({ patch: { maxOperation: 10 } })).type.toRaiseError('"unknown option maxOperation of patch: did you mean maxOperations?"')
    expect(Books.with({ conditional: { etag: true, require: true }, patch: { formats: ['json'], maxOperations: 10 } })).type.not.toRaiseError()
  })

  test('a static a group replaced', () => {
    expect(Books.with({ etag: true })).type.toRaiseError('"etag is now conditional: { etag }"')
    expect(Books.with({ requirePreconditions: true })).type.toRaiseError('"requirePreconditions is now conditional: { require }"')
    expect(Books.with({ patchFormats: ['json'] })).type.toRaiseError('"patchFormats is now patch: { formats }"')
    expect(PaginationFilter.with({ pagination: 'page' })).type.toRaiseError('"pagination is now paginator: new NumberedPages(), OffsetPages or CursorPages"')
  })

  test('a misspelt field in a filter', () => {
    const ByYear = PaginationFilter.with({ orderingFields: ['title', 'yaer'] })
    expect(Books.with({ responseSchema: Book, filter: ByYear })).type.toRaiseError('"the filter names yaer, a field the items do not have"')
    expect(Books.with({ responseSchema: Book, filter: PaginationFilter.with({ orderingFields: ['title', 'year'] }) })).type.not.toRaiseError()
    // A parameter renamed by fieldOf is checked as the field it compares.
    const Published = PaginationFilter.with({ fields: { published: Type.Integer() }, fieldOf: { published: 'year' } })
    expect(Books.with({ responseSchema: Book, filter: Published })).type.not.toRaiseError()
    const Misnamed = PaginationFilter.with({ fields: { published: Type.Integer() }, fieldOf: { published: 'yaer' } })
    expect(Books.with({ responseSchema: Book, filter: Misnamed })).type.toRaiseError('"the filter names yaer, a field the items do not have"')
    const Unrenamed = PaginationFilter.with({ fields: { published: Type.Integer() } })
    expect(Books.with({ responseSchema: Book, filter: Unrenamed })).type.toRaiseError('"the filter names published, a field the items do not have"')
  })

  test('a misspelt static of a filter', () => {
    expect(PaginationFilter.with({ orderingField: ['title'] })).type.toRaiseError('"unknown filter static orderingField: did you mean orderingFields?"')
    expect(PaginationFilter.with({ orderingFields: ['title'] })).type.not.toRaiseError()
  })

  test('a repository of other items', () => {
    const others = asyncRepository(new MemoryRepository<{ id: number, isbn: string }>())
    expect(Books.with({ responseSchema: Book, repository: others })).type.toRaiseError('"the repository holds other items than responseSchema describes"')
    expect(Books.with({ responseSchema: Book, repository: books })).type.not.toRaiseError()
  })

  test('a lastModifiedField that is not a time field of the item', () => {
    // The sentence is the compiler's own suggestion, which names the field the user meant.
    expect(Books.with({ responseSchema: Book, conditional: { lastModifiedField: 'updatedAt' } })).type.toRaiseError('Did you mean \'"updated_at"\'?')
    expect(Books.with({ responseSchema: Book, conditional: { lastModifiedField: 'updated_at' }, detailParams: BookParams })).type.not.toRaiseError()
  })
})

describe('a repository of the other family', () => {
  test('the message says which, and the fix', () => {
    const store = new MemoryRepository<{ id: number, title: string, year: number, updated_at: string }>()
    expect(Books.with({ responseSchema: Book, repository: store })).type.toRaiseError('"sync repository, async view: wrap it in asyncRepository()"')
    expect(GenericViewSet.with({ responseSchema: Book, repository: books })).type.toRaiseError('"async repository, sync view: use a sync one, or Async views"')
    expect(GenericViewSet.with({ responseSchema: Book, repository: store })).type.not.toRaiseError()
    expect(Books.with({ responseSchema: Book, repository: books })).type.not.toRaiseError()
    expect(Books.with({ responseSchema: Book, repository: books as never })).type.not.toRaiseError()
  })
})

describe('a plain JSON Schema where a TypeBox schema is wanted', () => {
  test('the message names the static and the fix', () => {
    const plain = { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] } as const
    expect(Books.with({ responseSchema: Book, detailParams: plain })).type.toRaiseError('"detailParams takes a TypeBox schema: build it with Type.Object({ ... })"')
    expect(Books.with({ responseSchema: { type: 'object', properties: {} } })).type.toRaiseError('"responseSchema takes a TypeBox schema: build it with Type.Object({ ... })"')
    expect(Books.with({ responseSchema: Book, detailParams: BookParams })).type.not.toRaiseError()
  })
})

describe('relation paths', () => {
  test('a filter comparing a relation\'s field (checked at registration) is no field the items lack', () => {
    const Tagged = PaginationFilter.with({ fields: { tag: Type.String() }, fieldOf: { tag: 'tags.tag' } })
    expect(Books.with({ responseSchema: Book, filter: Tagged })).type.not.toRaiseError()
  })
})
