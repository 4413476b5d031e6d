import { test } from 'tap'
import Fastify, { type FastifyInstance, type FastifyRequest, type InjectOptions } from 'fastify'
import swagger from '@fastify/swagger'
import Database from 'better-sqlite3'
import { Type, type Static } from '@sinclair/typebox'
import { Type as Type1 } from 'typebox'
import views, {
  APIView, AsyncListAPIView, AsyncRetrieveAPIView, Catch, configureApp, Events, Get, Override, PartialUpdateAPIView,
  Post, Throws, View, mix
} from '../lib/index.js'
import type { ListStreamOptions } from '../lib/streams.js'
import { IsAuthenticated, permission, type Authenticator } from '../lib/access.js'
import type { EventSchemas, EventStreamSettings, FastifyViewsOptions } from '../lib/types.js'
import {
  APIError, CONFIGURATION_ERRORS, ConfigurationError, ErrorFormat, type ConfigurationErrorCode
} from '../lib/errors.js'
import {
  AsyncGenericListAPIView, BaseFilter, GenericListAPIView, GenericRetrieveAPIView, GenericViewSet, MemoryRepository,
  OffsetLimitFilter, PaginationFilter, SearchFilter, SoftDeleteMixin, SparseFieldsMixin, asyncRepository, composeFilters
} from '../lib/generics.js'
import { AsyncGenericBulkCreateAPIView, AsyncGenericBulkDestroyAPIView, GenericBulkDestroyAPIView } from '../lib/bulk.js'
import { ConditionalMixin } from '../lib/conditional.js'
import { swaggerOptions } from '../lib/openapi/swagger.js'
import { AsyncSqliteRepository, SqliteRepository } from '../lib/stores/sql/index.js'
import { memoryCache, redisCache, type CacheOptions } from '../lib/cache.js'
import { otelMetrics, otelTracing } from '../lib/opentelemetry.js'
import { prometheusMetrics } from '../lib/prometheus.js'
import { build, caught, problem } from './helpers.js'

const Item = Type.Object({ id: Type.Integer(), name: Type.String(), price: Type.Number() }, { $id: 'ConfigItem' })
const rows = () => new MemoryRepository({ rows: [{ id: 1, name: 'apple', price: 3 }, { id: 2, name: 'pear', price: 5 }] })

const COLUMNS = ['id', 'name', 'price']
/** An authenticator that finds no credentials: every request is anonymous. */
const NOBODY: Authenticator = { scheme: 'none', securityScheme: { type: 'http', scheme: 'bearer' }, challenge: 'Bearer', authenticate: () => undefined }
function sqlite (): SqliteRepository {
  const db = new Database(':memory:')
  db.exec('CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL)')
  db.exec("INSERT INTO items (id, name, price) VALUES (1, 'apple', 3), (2, 'pear', 5)")
  return new SqliteRepository(db, { table: 'items', columns: COLUMNS })
}

class NameFilter extends BaseFilter {
  static override fields = { name: Type.String() }
}

/** A mistake that throws where the user makes it: at class definition, in a call, or at registration. */
interface ThrownCase {
  code: ConfigurationErrorCode
  mistake: string
  /** Makes the mistake; what it throws or rejects with is checked. */
  act: () => unknown
  /** The user's own names the message must carry. */
  message: RegExp
}

/** A mistake only a request reveals: the client gets a bare 500 problem, the log gets the error. */
interface RequestCase {
  code: ConfigurationErrorCode
  mistake: string
  options: () => FastifyViewsOptions
  request: InjectOptions
  message: RegExp
}

const thrown: ThrownCase[] = [
  {
    code: 'FV_ERR_ABSTRACT_VIEW',
    mistake: 'a mixed view leaves one of its standard actions unimplemented',
    act: () => {
      class HalfDone extends mix(AsyncListAPIView, AsyncRetrieveAPIView) {
        override async list () { return [] }
      }
      return build({ views: [HalfDone] })
    },
    message: /^Cannot register HalfDone: it is abstract, action method "retrieve" is not implemented$/
  },
  {
    code: 'FV_ERR_NO_ROUTE',
    mistake: '@Override on a helper that is neither a route nor a standard action',
    act: () => {
      class Stray extends APIView {
        @Override({ summary: 'nothing to override' })
        helper () { return 1 }
      }
      return build({ views: [Stray] })
    },
    message: /^Stray\.helper has @Override or @Throws but no route decorator/
  },
  {
    code: 'FV_ERR_NO_ROUTE',
    mistake: '@Throws on a helper that is neither a route nor a standard action',
    act: () => {
      class Gone extends APIError { static override status = 410 }
      class Thrower extends APIView {
        @Throws(Gone)
        lookup () { return 1 }
      }
      return build({ views: [Thrower] })
    },
    message: /^Thrower\.lookup has @Override or @Throws/
  },
  {
    code: 'FV_ERR_DECORATOR_TARGET',
    mistake: 'a route decorator on a static method (thrown while the class is defined)',
    act: () => {
      class StaticRoute extends View {
        // @ts-expect-error route decorators refuse static methods
        @Get('/') static ping () { return {} }
      }
      return StaticRoute
    },
    message: /^@Get applies to public instance methods, not to ping$/
  },
  {
    code: 'FV_ERR_DECORATOR_TARGET',
    mistake: 'a route decorator on a #private method',
    act: () => {
      class PrivateRoute extends View {
        // @ts-expect-error route decorators refuse #private methods
        @Get('/') #hidden () { return {} }
        use () { return this.#hidden() }
      }
      return PrivateRoute
    },
    message: /^@Get applies to public instance methods, not to #hidden$/
  },
  {
    code: 'FV_ERR_CATCH_UNMAPPED',
    mistake: '@Catch(Type) with no raises entry and no status or detail of its own',
    act: () => {
      class Unmapped extends Error {}
      class Shop extends APIView {
        @Get('/')
        @Catch(Unmapped)
        show () { return {} }
      }
      return build({ views: [Shop] })
    },
    message: /^Shop\.show: @Catch\(Unmapped\) needs an entry in Shop\.raises or its own status and detail$/
  },
  {
    code: 'FV_ERR_RAISES',
    mistake: 'a raises entry with its members swapped',
    act: () => {
      class PagerDown extends Error {}
      class Escalations extends APIView {
        // The error before the exception type: an array literal's type does not keep the order.
        static override raises = [[{ status: 503, detail: 'The pager is down.' }, PagerDown]]
        @Post('/escalate')
        @Catch(PagerDown)
        escalate () { return { paged: true } }
      }
      return build({ views: [Escalations] })
    },
    message: /^Escalations\.raises\[0\] is not a pair of an exception class and its error: write \[ExceptionClass, 'detail'\] \(a 400\) or \[ExceptionClass, \{ status, detail \}\]$/
  },
  {
    code: 'FV_ERR_NO_RESPONSE_SCHEMA',
    mistake: 'a generic view over a repository with no responseSchema',
    act: () => {
      class Users extends GenericViewSet {
        static override repository = rows() as never
      }
      return build({ views: [Users] })
    },
    message: /^Cannot register Users: partialUpdate, update, retrieve, create, list send stored objects but have no response schema/
  },
  {
    code: 'FV_ERR_UNKNOWN_ACTION',
    mistake: 'a misspelt action in actionDependencies',
    act: () => {
      // @ts-expect-error 'destory' is not an action of the view
      class Things extends GenericViewSet {
        static override responseSchema = Item
        static override repository = rows() as never
        static override actionDependencies = { destory: [() => {}] }
      }
      return build({ views: [Things] })
    },
    message: /^Cannot register Things: actionDependencies names "destory", which is not an action of this view/
  },
  {
    code: 'FV_ERR_NO_REPOSITORY',
    mistake: 'a generic view with no repository',
    act: () => {
      class Missing extends AsyncGenericListAPIView { static override responseSchema = Item }
      return build({ views: [Missing] })
    },
    message: /^Cannot register Missing: set its static repository or override its repository getter$/
  },
  {
    code: 'FV_ERR_NOT_ATOMIC',
    mistake: 'If-Match checked over a hand-written repository that does not declare atomicPreconditions',
    act: () => {
      const store = rows()
      const plain = {
        create: (values: Record<string, unknown>) => store.create(values),
        get: (criteria: Record<string, unknown>) => store.get(criteria),
        list: () => store.list({}),
        count: () => store.count({}),
        update: (criteria: Record<string, unknown>, values: Record<string, unknown>) => store.update(criteria, values),
        delete: (criteria: Record<string, unknown>) => store.delete(criteria)
      }
      class Tagged extends mix(ConditionalMixin, GenericViewSet) {
        static override responseSchema = Item
        static override conditional = { etag: true }
        static override repository = plain as never
      }
      return build({ views: [Tagged] })
    },
    message: /^Cannot register Tagged: it checks If-Match on .*update.*, but its repository does not declare atomicPreconditions: true/
  },
  {
    code: 'FV_ERR_PREFIX_PARAMS',
    mistake: 'a nested view registered under a prefix that names its parameter otherwise',
    act: () => {
      class Nested extends GenericViewSet {
        static override responseSchema = Item
        static override prefixParams = Type.Object({ shopId: Type.Integer() })
        static override repository = rows() as never
      }
      return build({ views: [{ view: Nested, prefix: '/shops/:shop/items' }] })
    },
    message: /^Cannot register Nested: its prefixParams declares "shopId", which its prefix \(\/shops\/:shop\/items\) does not name/
  },
  {
    code: 'FV_ERR_ENVELOPE',
    mistake: 'an envelope beside merge-patch documents',
    act: () => {
      class Wrapped extends GenericViewSet {
        static override responseSchema = Item
        static override envelope = 'item'
        static override createSchema = Type.Object({ name: Type.String(), price: Type.Number() })
        static override patch = { formats: ['json', 'merge-patch'] as const }
        static override repository = rows() as never
      }
      return build({ views: [{ view: Wrapped, prefix: '/items' }] })
    },
    message: /^Cannot register Wrapped: patch documents apply to the representation, which its envelope "item" wraps/
  },
  {
    code: 'FV_ERR_PATCH_TARGET',
    mistake: 'an action view that takes JSON Patch with no way to read the object it applies to',
    act: () => {
      class Notes extends PartialUpdateAPIView {
        static override responseSchema = Item
        static override createSchema = Type.Object({ name: Type.String() })
        static override patch = { formats: ['json', 'json-patch'] as const }
        override partialUpdate () { return null }
      }
      return build({ views: [Notes] })
    },
    message: /^Cannot register Notes: patch formats json-patch need the current object; implement getPatchTarget\(request\), or set patch = \{ formats: \['json'\] \}$/
  },
  {
    code: 'FV_ERR_BULK_CONFIG',
    mistake: 'a generic bulk create view without createSchema',
    act: () => {
      class Imports extends AsyncGenericBulkCreateAPIView {
        static override responseSchema = Item
        static override repository = rows() as never
      }
      return build({ views: [Imports] })
    },
    message: /^Cannot register Imports: bulkCreate needs createSchema$/
  },
  {
    code: 'FV_ERR_BULK_CONFIG',
    mistake: 'a generic bulk delete view with filter left unset',
    act: () => {
      class Purge extends AsyncGenericBulkDestroyAPIView { static override repository = rows() as never }
      return build({ views: [Purge] })
    },
    message: /^Cannot register Purge: bulkDelete needs filter \(a filter class, or null/
  },
  {
    code: 'FV_ERR_UNKNOWN_FIELD',
    mistake: 'a misspelt orderingFields entry over a SQL table (a 500 on ?sort=yaer otherwise)',
    act: () => {
      const db = new Database(':memory:')
      db.exec('CREATE TABLE films (id INTEGER PRIMARY KEY, title TEXT, year INTEGER)')
      class FilmFilter extends BaseFilter { static override orderingFields = ['title', 'yaer'] }
      class Films extends GenericListAPIView {
        static override responseSchema = Type.Object({ id: Type.Integer(), title: Type.String(), year: Type.Integer() })
        static override filter = FilmFilter
        static override repository = new SqliteRepository(db, { table: 'films', columns: ['id', 'title', 'year'] })
      }
      return build({ views: [Films] })
    },
    message: /^Cannot register Films: FilmFilter\.orderingFields names "yaer", which its repository does not have \(its fields: id, title, year\)$/
  },
  {
    code: 'FV_ERR_UNKNOWN_FIELD',
    mistake: 'a misspelt lastModifiedField (Last-Modified silently never sent otherwise)',
    act: () => {
      class Stamped extends mix(ConditionalMixin, GenericViewSet) {
        static override responseSchema = Type.Object({ id: Type.Integer(), updated_at: Type.String({ format: 'date-time' }) })
        static override conditional = { etag: true, lastModifiedField: 'updatedAt' }
        static override repository = rows() as never
      }
      return build({ views: [{ view: Stamped, prefix: '' }] })
    },
    message: /^Cannot register Stamped: conditional\.lastModifiedField "updatedAt" is not a property of its responseSchema \(its properties: id, updated_at\)$/
  },
  {
    code: 'FV_ERR_FILTER_FIELD',
    mistake: "a filter's operator names a field it does not declare (met when its view registers)",
    act: () => {
      class PriceFilter extends BaseFilter { static override operators = { price: ['gt'] as const } }
      class Cheap extends GenericListAPIView {
        static override responseSchema = Item
        static override filter = PriceFilter
        static override repository = rows() as never
      }
      return build({ views: [Cheap] })
    },
    message: /^PriceFilter\.operators\.price: declare the field in fields or operatorFields$/
  },
  {
    code: 'FV_ERR_FILTER_FIELD',
    mistake: 'a filter parameter typed as a string for a numeric field: every ?price= would match nothing',
    act: () => {
      const ByPrice = BaseFilter.with({ fields: { price: Type.String() }, operatorFields: { name: Type.Integer() } })
      class Cheap extends GenericListAPIView.with({ responseSchema: Item, filter: ByPrice, repository: rows() }) {}
      return build({ views: [{ view: Cheap, prefix: '/cheap' }] })
    },
    message: /^Cannot register Cheap: BaseFilter\.with\(fields, operatorFields\)\.fields\.price takes string, but price holds number values, so no value a client sends would match a row: declare it as Type\.Number\(\); .*\.operatorFields\.name takes integer, but name holds string values.*: declare it as Type\.String\(\)$/
  },
  {
    code: 'FV_ERR_FILTER_FIELD',
    mistake: 'a search field that holds numbers: q would never match it',
    act: () => {
      class Search extends SearchFilter { static override searchFields = ['name', 'price'] }
      class Found extends GenericListAPIView.with({ responseSchema: Item, filter: Search, repository: rows() }) {}
      return build({ views: [{ view: Found, prefix: '/found' }] })
    },
    message: /^Cannot register Found: Search\.searchFields names price, which holds number values, and q looks for text, so it would never match there: drop it from searchFields, and filter it through fields or operators$/
  },
  {
    code: 'FV_ERR_FILTER_FIELD',
    mistake: 'a filter parameter typed as a string for an INTEGER column the response schema does not type',
    act: () => {
      const db = new Database(':memory:')
      db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, year INTEGER)')
      const repository = new SqliteRepository(db, { table: 'notes', columns: ['id', 'year'] })
      const ByYear = BaseFilter.with({ fields: { year: Type.String() } })
      class Notes extends GenericListAPIView.with(
        { responseSchema: Type.Object({ id: Type.Integer(), year: Type.Unknown() }), filter: ByYear, repository }
      ) {}
      return build({ views: [{ view: Notes, prefix: '/notes' }] })
    },
    message: /year takes string, but year holds integer values, .*: declare it as Type\.Integer\(\)$/
  },
  {
    code: 'FV_ERR_SOFT_DELETE',
    mistake: 'a soft delete on a column the table does not have: every read would fail, and DELETE would stamp nothing',
    act: () => {
      class Notes extends mix(SoftDeleteMixin, GenericViewSet) {
        static override repository = sqlite()
        static override responseSchema = Item
        static override softDelete = { field: 'removed_at' }
      }
      return build({ views: [Notes] })
    },
    message: /^Cannot register Notes: softDelete\.field "removed_at" is not a field of its repository \(its fields: id, name, price\)/
  },
  {
    code: 'FV_ERR_SPARSE_FIELDS',
    mistake: 'sparse fieldsets over a filter that takes "fields": which of the two a client meant could not be told',
    act: () => {
      const Pages = PaginationFilter.with({ fields: { fields: Type.String() } })
      const Tagged = Type.Object({ id: Type.Integer(), fields: Type.String() })
      class Notes extends mix(SparseFieldsMixin, GenericListAPIView).with({
        responseSchema: Tagged, filter: Pages, repository: new MemoryRepository({ rows: [] })
      }) {}
      return build({ views: [{ view: Notes, prefix: '/notes' }] })
    },
    message: /^Cannot register Notes: its filter has a parameter "fields", a name of the sparse fieldsets' parameters; rename the filter's \(docs\/sparse-fields\.md\)$/
  },
  {
    code: 'FV_ERR_EXPAND',
    mistake: 'an expansion of a relation to one object found by a field that is not the related key: it would embed any of several rows',
    act: () => {
      class Owners extends GenericRetrieveAPIView.with({
        responseSchema: Item, detailParams: Type.Object({ id: Type.Integer() }), repository: rows()
      }) {}
      class Notes extends mix(SparseFieldsMixin, GenericListAPIView).with({
        responseSchema: Item, repository: rows(), expand: { owner: { view: Owners, on: { name: 'name' } } }
      }) {}
      return build({ views: [{ view: Notes, prefix: '/notes' }, { view: Owners, prefix: '/owners' }] })
    },
    message: /^Cannot register Notes: expand\.owner is a relation to one object, found by "name", which is not the key of Owners's repository \(id\)/
  },
  {
    code: 'FV_ERR_MISSPELT_MEMBER',
    mistake: 'a misspelt static in a filter class body (orderingField): the list would have no sort parameter',
    act: () => {
      class Pages extends PaginationFilter { static orderingField = ['name'] }
      class Notes extends GenericListAPIView.with({ responseSchema: Item, filter: Pages, repository: rows() }) {}
      return build({ views: [{ view: Notes, prefix: '/notes' }] })
    },
    message: /^Pages\.orderingField looks like a misspelling of orderingFields, which it does not replace \(the inherited orderingFields still applies\); rename it orderingFields, or give it a name of its own$/
  },
  {
    code: 'FV_ERR_MISSPELT_MEMBER',
    mistake: 'a misspelt static in a filter given to composeFilters (search_fields)',
    act: () => {
      class Search extends SearchFilter { static search_fields = ['name'] }
      return composeFilters(PaginationFilter, Search)
    },
    message: /^Search\.search_fields looks like a misspelling of searchFields/
  },
  {
    code: 'FV_ERR_UNKNOWN_FIELD',
    mistake: 'a custom route whose params schema requires a parameter its path does not name',
    act: () => {
      const CoverParams = Type.Object({ id: Type.Integer() })
      class Books extends APIView {
        @Get('/:bookId/cover', { schema: { params: CoverParams }, responseSchema: Type.Object({ url: Type.String() }) })
        cover () { return { url: '' } }
      }
      return build({ views: [{ view: Books, prefix: '/books' }] })
    },
    message: /^Cannot register Books: the params schema of Books\.cover requires "id", which its path \(\/books\/:bookId\/cover\) does not have: name it in the path \(`\/:id`\), or give the schema the names the path has \(bookId\)$/
  },
  {
    code: 'FV_ERR_UNKNOWN_FIELD',
    mistake: 'a custom route on a path with no parameter whose params schema requires one',
    act: () => {
      class Books extends APIView {
        @Get('/latest', { schema: { params: Type.Object({ id: Type.Integer() }) }, responseSchema: Type.Object({}) })
        latest () { return {} }
      }
      return build({ views: [{ view: Books, prefix: '/books' }] })
    },
    message: /which its path \(\/books\/latest\) does not have: name it in the path \(`\/:id`\), or give the schema the names the path has \(none\)$/
  },
  {
    code: 'FV_ERR_FILTER_FIELD',
    mistake: 'a filter parameter for a field that holds lists',
    act: () => {
      const ByTags = BaseFilter.with({ fields: { tags: Type.String() } })
      class Tagged extends GenericListAPIView.with({ responseSchema: Type.Object({ id: Type.Integer(), tags: Type.Array(Type.String()) }), filter: ByTags, repository: new MemoryRepository({ rows: [{ id: 1, tags: ['a'] }] }) }) {}
      return build({ views: [{ view: Tagged, prefix: '/tagged' }] })
    },
    message: /fields\.tags takes string, but tags holds array values, so no value a client sends would match a row: declare it as Type\.Array\(\.\.\.\)$/
  },
  {
    code: 'FV_ERR_FILTER_PAGINATION',
    mistake: 'composeFilters over two filters that paginate differently',
    act: () => {
      class Pages extends PaginationFilter {}
      class Window extends OffsetLimitFilter {}
      return composeFilters(NameFilter, Pages, Window)
    },
    message: /^composeFilters: NameFilter, Pages, Window paginate in 2 different ways \(NumberedPages, OffsetPages\), and a list has one kind of page\. Compose at most one paginating filter with the others$/
  },
  {
    code: 'FV_ERR_NOT_A_MIXIN',
    mistake: 'mix() given a view class of its own rather than a mixin',
    act: () => {
      class Catalogue extends APIView {}
      return mix(Catalogue as never)
    },
    message: /^mix\(\) combines mixin classes such as AsyncListAPIView; got Catalogue$/
  },
  {
    code: 'FV_ERR_UNKNOWN_STATIC',
    mistake: '.with() given a static the class does not have (a typo, from JavaScript)',
    act: () => (AsyncListAPIView.with as (statics: object) => unknown).call(AsyncListAPIView, { responseSchemas: {} }),
    message: /^AsyncListAPIView\.with\(responseSchemas\): "responseSchemas" is not a static of AsyncListAPIView, so it would never be read; did you mean "responseSchema"\?$/
  },
  {
    code: 'FV_ERR_UNKNOWN_FIELD',
    mistake: 'a createSchema member that is not a column of the SQL table: every create would fail',
    act: () => {
      const db = new Database(':memory:')
      db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT NOT NULL)')
      class Notes extends GenericViewSet {
        static override repository = new SqliteRepository(db, { table: 'notes', columns: ['id', 'title'] }) as never
        static override responseSchema = Type.Object({ id: Type.Integer(), title: Type.String() })
        static override createSchema = Type.Object({ title: Type.String(), isbn: Type.String() })
      }
      return build({ views: [{ view: Notes, prefix: '/notes' }] })
    },
    message: /^Cannot register Notes: the body of create, partialUpdate, update has "isbn", which its repository does not have \(its fields: id, title\)\. Remove it from the body schema, add the column.*say so: static override mappingActions = \['create', 'partialUpdate', 'update'\]$/
  },
  {
    code: 'FV_ERR_UNKNOWN_FIELD',
    mistake: 'a bulk create item with a member that is not a column',
    act: () => {
      const db = new Database(':memory:')
      db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT NOT NULL)')
      class Notes extends AsyncGenericBulkCreateAPIView {
        static override repository = new AsyncSqliteRepository(db, { table: 'notes', columns: ['id', 'title'] }) as never
        static override responseSchema = Type.Object({ id: Type.Integer(), title: Type.String() })
        static override createSchema = Type.Object(
          { title: Type.String(), tags: Type.Array(Type.String()), owner: Type.String() }
        )
      }
      return build({ views: [{ view: Notes, prefix: '/notes' }] })
    },
    message: /^Cannot register Notes: the body of bulkCreate has "tags", "owner", which its repository does not have.*Remove them from the body schema.*say so: static override mappingActions = \['bulkCreate'\]$/
  },
  {
    code: 'FV_ERR_PAGE_SIZE',
    mistake: 'a maxOffset that is no whole number of rows: every page would be refused, or none bounded',
    act: () => {
      class Pages extends OffsetLimitFilter.with({ maxOffset: -1 }) {}
      class Notes extends GenericListAPIView {
        static override repository = rows()
        static override responseSchema = Type.Object({ id: Type.Integer() })
        static override filter = Pages
      }
      return build({ views: [{ view: Notes, prefix: '/notes' }] })
    },
    message: /^Pages: maxOffset is -1; give a whole number of rows from 0 \(Number\.MAX_SAFE_INTEGER for no bound\)$/
  },
  {
    code: 'FV_ERR_PAGE_SIZE',
    mistake: 'a default page longer than the longest allowed: pages would silently be shorter',
    act: () => {
      class Pages extends PaginationFilter.with({ defaultPageSize: 50, maxPageSize: 20 }) {}
      class Notes extends GenericListAPIView {
        static override repository = rows()
        static override responseSchema = Type.Object({ id: Type.Integer() })
        static override filter = Pages
      }
      return build({ views: [{ view: Notes, prefix: '/notes' }] })
    },
    message: /^Pages: defaultPageSize 50 is more than maxPageSize 20, so pages would hold 20 items, not 50\. Lower defaultPageSize to 20 or less, or raise maxPageSize$/
  },
  {
    code: 'FV_ERR_UNSUPPORTED_SCHEMA',
    mistake: 'Type.Date() in a response schema: no answer could be written with it',
    act: () => {
      class Notes extends GenericViewSet {
        static override repository = rows()
        static override responseSchema = Type.Object({ id: Type.Integer(), updated_at: Type.Date() })
      }
      return build({ views: [{ view: Notes, prefix: '/notes' }] })
    },
    message: /^Notes\.(\w+ )?responseSchema: Type\.Date\(\) describes a JavaScript value that JSON cannot hold.*Use Type\.String\(\{ format: 'date-time' \}\) and send dates as ISO strings$/
  },
  {
    code: 'FV_ERR_UNSUPPORTED_SCHEMA',
    mistake: 'Type.Uint8Array() in a body: no JSON body holds one',
    act: () => {
      class Uploads extends APIView {
        @Post('/', { schema: { body: Type.Object({ data: Type.Uint8Array() }) }, responseSchema: Type.Object({}) })
        upload () { return {} }
      }
      return build({ views: [Uploads] })
    },
    message: /^Uploads\.upload schema\.body: Type\.Uint8Array\(\) describes a JavaScript value that JSON cannot hold.*Describe the JSON form of the value instead$/
  },
  {
    code: 'FV_ERR_SCHEMA_COLUMNS',
    mistake: 'a response schema that wants a string where the table may hold NULL, and a string where it holds integers',
    act: () => {
      const db = new Database(':memory:')
      db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT NOT NULL, note TEXT, year INTEGER NOT NULL)')
      class Notes extends GenericViewSet {
        static override repository = new SqliteRepository(db, { table: 'notes', columns: ['id', 'title', 'note', 'year'] }) as never
        static override responseSchema = Type.Object(
          { id: Type.Integer(), title: Type.String(), note: Type.String(), year: Type.String() }
        )
      }
      return build({ views: [{ view: Notes, prefix: '/notes' }] })
    },
    message: /^Cannot register Notes: its responseSchema does not describe every row of its table: "note" may be NULL in the table, and the schema does not accept null; "year" holds integer values, and the schema wants string\. .*Type\.Union\(\[Type\.String\(\), Type\.Null\(\)\]\)/
  },
  {
    code: 'FV_ERR_SCHEMA_COLUMNS',
    mistake: 'a create over a MemoryRepository whose body may lack a member the response requires: stored, then a 500 on every read',
    act: () => {
      const Stamped = Type.Object({ id: Type.Integer(), name: Type.String(), updated_at: Type.String({ format: 'date-time' }) })
      class Notes extends GenericViewSet.with(
        {
          responseSchema: Stamped,
          createSchema: Type.Object({ name: Type.String(), updated_at: Type.Optional(Type.String()) }),
          repository: new MemoryRepository<Static<typeof Stamped>>()
        }
      ) {}
      return build({ views: [{ view: Notes, prefix: '/notes' }] })
    },
    message: /^Cannot register Notes: its responseSchema requires "updated_at", which the body of create may leave out, and its repository stores only what the body gives \(and id\): the row would be stored without it, .*Require "updated_at" in the body schema, make it optional in responseSchema, have the store fill it/
  },
  {
    code: 'FV_ERR_SCHEMA_COLUMNS',
    mistake: 'a bulk create over an async MemoryRepository whose items may lack members the response requires',
    act: () => {
      const Owned = Type.Object({ id: Type.Integer(), name: Type.String(), owner: Type.String(), price: Type.Number() })
      class Notes extends AsyncGenericBulkCreateAPIView.with(
        {
          responseSchema: Owned,
          createSchema: Type.Object({ name: Type.String() }),
          repository: asyncRepository(new MemoryRepository<Static<typeof Owned>>())
        }
      ) {}
      return build({ views: [{ view: Notes, prefix: '/notes' }] })
    },
    message: /requires "owner", "price", which the body of bulkCreate may leave out.* without them, .*make them optional in responseSchema/
  },
  {
    code: 'FV_ERR_NO_CONTENT_BODY',
    mistake: 'a create answering 204 while it still returns the created object: the body would be dropped',
    act: () => {
      class Notes extends GenericViewSet {
        static override repository = rows()
        static override responseSchema = Type.Object({ id: Type.Integer() })
        @Override({ statusCode: 204 })
        override create (request: FastifyRequest) { return super.create(request) }
      }
      return build({ views: [{ view: Notes, prefix: '/notes' }] })
    },
    message: /^Cannot register Notes: create answers 204 No Content, which has no body, but it would send one \(its responseSchema\)\. Set returnOnCreate = false/
  },
  {
    code: 'FV_ERR_NO_CONTENT_BODY',
    mistake: 'a custom route declaring a response schema and answering 204',
    act: () => {
      class Notes extends APIView {
        @Get('/touch', { statusCode: 204, responseSchema: Type.Object({ touched: Type.Boolean() }) })
        touch () { return { touched: true } }
      }
      return build({ views: [Notes] })
    },
    message: /^Cannot register Notes: Notes\.touch declares a responseSchema but answers 204 No Content, which has no body: drop the responseSchema, or answer 200$/
  },
  {
    code: 'FV_ERR_NO_CONTENT_BODY',
    mistake: 'a list answering 204',
    act: () => {
      class Notes extends GenericViewSet {
        static override repository = rows()
        static override responseSchema = Type.Object({ id: Type.Integer() })
        @Override({ statusCode: 204 })
        override list (request: FastifyRequest) { return super.list(request) }
      }
      return build({ views: [{ view: Notes, prefix: '/notes' }] })
    },
    message: /^Cannot register Notes: list answers 204 No Content.*Leave its statusCode as it was$/
  },
  {
    code: 'FV_ERR_CONFIGURE_FIRST',
    mistake: 'a route of the app added before the plugin, without configureApp: it would keep Fastify\'s JSON errors',
    act: async () => {
      const app = Fastify()
      app.get('/ping', async () => 'pong')
      await app.register(views, { views: [] })
    },
    message: /^fastify-views: 1 route was added before the plugin \(\/ping \(GET, HEAD\)\), so it keeps Fastify's JSON errors, not problem\+json\. Call configureApp\(app\) right after creating the app/
  },
  {
    code: 'FV_ERR_CONFIGURE_FIRST',
    mistake: 'a route of the app added before a plugin given an error format of its own: the message names that format, not problem+json',
    act: async () => {
      const app = Fastify()
      app.get('/ping', async () => 'pong')
      const body = (problem: { detail: string }) => ({ errors: { body: [problem.detail] } })
      const conduit = new ErrorFormat({ validationStatus: 422, body, schema: Type.Unknown() })
      await app.register(views, { views: [], errorFormat: conduit })
    },
    message: /so it keeps Fastify's JSON errors, not its error format \(application\/json, validation 422\)\. Call configureApp\(app, \{ errorFormat \}\) right after creating the app/
  },
  {
    code: 'FV_ERR_ROUTE_CONTENT',
    mistake: 'an unexpectedContent value that is neither ignore nor refuse',
    act: () => {
      class Echo extends APIView {
        @Post('/ping', { unexpectedContent: 'reject' as 'refuse' }) ping () { return {} }
      }
      return build({ views: [Echo] })
    },
    message: /^Cannot register Echo: Echo\.ping has unexpectedContent "reject"; it is 'ignore' \(the default: .*\) or 'refuse' \(a 415\)$/
  },
  {
    code: 'FV_ERR_ROUTE_CONTENT',
    mistake: 'an optional body on a standard action, which reads the body it validates',
    act: () => {
      class Notes extends GenericViewSet {
        static override repository = rows()
        static override responseSchema = Item
        @Override({ schema: { body: Type.Optional(Type.Object({ name: Type.String(), price: Type.Number() })) } })
        override create (request: FastifyRequest) { return super.create(request) }
      }
      return build({ views: [{ view: Notes, prefix: '/notes' }] })
    },
    message: /^Cannot register Notes: Notes\.create declares an optional body \(Type\.Optional\), but a standard action reads the body it validates\. Declare the body without Type\.Optional, or move the route to a method of its own/
  },
  {
    code: 'FV_ERR_DEPRECATION',
    mistake: 'a deprecation date that is no date',
    act: () => {
      class Legacy extends APIView {
        @Get('/old', { deprecation: { since: '2026-12-01', sunset: 'next year' } }) old () { return {} }
      }
      return build({ views: [Legacy] })
    },
    message: /^Cannot register Legacy: Legacy\.old has deprecation\.sunset "next year", which is not a date: give a Date or an ISO 8601 date/
  },
  {
    code: 'FV_ERR_NO_PREFIX',
    mistake: 'a CRUD view registered with no prefix: its actions would land on /',
    act: () => {
      class Notes extends GenericViewSet {
        static override repository = rows()
        static override responseSchema = Type.Object({ id: Type.Integer() })
      }
      return build({ views: [Notes] })
    },
    message: /^Cannot register Notes: it has no prefix, so its actions \(.*list.*\) would be served at the root of the application\. Register it as \{ view: Notes, prefix: '\/items' \}/
  },
  {
    code: 'FV_ERR_SHARED_ROUTE',
    mistake: 'two views on one prefix: the second would take the routes of the first',
    act: () => {
      class Notes extends GenericViewSet {
        static override repository = rows()
        static override responseSchema = Type.Object({ id: Type.Integer() })
      }
      class Drafts extends Notes {}
      return build({ views: [{ view: Notes, prefix: '/notes' }, { view: Drafts, prefix: '/notes' }] })
    },
    message: /^Cannot register Drafts: (GET|POST|PUT|PATCH|DELETE) \/notes(\/:id)? is already served by Notes\. Give one of them another prefix/
  },
  {
    code: 'FV_ERR_CONDITIONAL_OFF',
    mistake: 'ConditionalMixin with neither etag nor conditionalRequests: it would send no validators and check nothing',
    act: () => {
      class Notes extends mix(ConditionalMixin, GenericViewSet) {
        static override repository = rows()
        static override responseSchema = Type.Object({ id: Type.Integer(), updated_at: Type.String({ format: 'date-time' }) })
        static override conditional = { lastModifiedField: 'updated_at' }
      }
      return build({ views: [Notes] })
    },
    message: /^Cannot register Notes: it mixes in ConditionalMixin but turns nothing on.*Set conditional = \{ etag: true \}/
  },
  {
    code: 'FV_ERR_RENAMED_STATIC',
    mistake: 'a static a group replaced, set the old way: etag = true would never be read, and the view would send no ETag',
    act: () => {
      class Notes extends mix(ConditionalMixin, GenericViewSet) {
        static override repository = rows()
        static override responseSchema = Type.Object({ id: Type.Integer() })
        static etag = true
      }
      return build({ views: [Notes] })
    },
    message: /^Cannot register Notes: Notes\.etag is now conditional: \{ etag \}, and the old name is no longer read \(CHANGELOG\.md, "Upgrading"\)$/
  },
  {
    code: 'FV_ERR_VERSION_FIELD',
    mistake: 'versionField over a store that keeps no version: every state of a row would have the same ETag, and a stale If-Match would win',
    act: () => {
      class Notes extends mix(ConditionalMixin, GenericViewSet) {
        static override repository = rows()
        static override responseSchema = Type.Object({ id: Type.Integer(), version: Type.Integer() })
        static override conditional = { etag: true, versionField: 'version' }
      }
      return build({ views: [Notes] })
    },
    message: /^Cannot register Notes: conditional\.versionField is "version", but its repository keeps no version.*versionColumn of a SQL table/
  },
  {
    code: 'FV_ERR_MISSPELT_MEMBER',
    mistake: 'a misspelt hook in the class body (getKwarg): the rows it meant to scope would all be served',
    act: () => {
      class Notes extends GenericViewSet {
        static override repository = rows()
        static override responseSchema = Type.Object({ id: Type.Integer() })
        getKwarg () { return { owner: 'ann' } }
      }
      return build({ views: [Notes] })
    },
    message: /^Cannot register Notes: Notes\.prototype\.getKwarg looks like a misspelling of getKwargs, which it does not replace \(the inherited getKwargs still applies\); rename it getKwargs, or give it a name of its own$/
  },
  {
    code: 'FV_ERR_UNSUPPORTED_SCHEMA',
    mistake: 'a typebox 1.x Type.Refine in a response schema: its function would never run',
    act: () => {
      class Refined extends APIView {
        static override responseSchema = Type1.Object({ name: Type1.Refine(Type1.String(), (name) => name !== '') })
        @Get('/')
        one () { return { name: 'x' } }
      }
      return build({ views: [Refined] })
    },
    message: /^Refined\.responseSchema: Type\.Refine \(typebox 1\.x\) is not supported: views check their schemas as JSON Schema, which cannot say what it means$/
  },
  {
    code: 'FV_ERR_VIEW_ENTRY',
    mistake: 'a views entry that is a plain class, not a view',
    act: async () => {
      class NotAView {}
      const app = Fastify()
      try {
        await app.register(views, { views: [NotAView] } as unknown as FastifyViewsOptions).ready()
      } finally {
        await app.close()
      }
    },
    message: /^fastify-views: each entry of `views` must be a View class, \{ view, \.\.\.options \} or a ViewRouter; got the class NotAView$/
  },
  {
    code: 'FV_ERR_COMPONENT_CLASH',
    mistake: 'two different error classes with one name documented in one OpenAPI document',
    act: async () => {
      const teapot = class Refused extends APIError { static override status = 418 }
      const legal = class Refused extends APIError { static override status = 451 }
      class Orders extends APIView {
        @Get('/a')
        @Throws(teapot)
        a () { return {} }

        @Get('/b')
        @Throws(legal)
        b () { return {} }
      }
      const app = Fastify()
      try {
        await app.register(swagger, swaggerOptions({ info: { title: 'Shop', version: '1.0.0' } }))
        await app.register(views, { views: [Orders] })
        await app.ready()
        return app.swagger()
      } finally {
        await app.close()
      }
    },
    message: /^Two different schemas are documented as the component "RefusedProblem"; give one of them \(or its error class\) another name$/
  },
  {
    code: 'FV_ERR_SQL_NAME',
    mistake: 'a SqliteRepository whose column is not a plain identifier',
    act: () => new SqliteRepository(new Database(':memory:'), { table: 'items', columns: ['id', 'name; DROP TABLE items'] }),
    message: /^Not a plain SQL identifier: "name; DROP TABLE items"$/
  },
  {
    code: 'FV_ERR_SQL_NAME',
    mistake: 'a SqliteRepository asked for a column it was not given',
    act: () => sqlite().list({ colour: 'red' }, { orderBy: [] }),
    message: /^"items": no column "colour"$/
  },
  {
    code: 'FV_ERR_RELATION',
    mistake: 'a SqliteRepository relation pointing at a field the repository does not have',
    act: () => new SqliteRepository(new Database(':memory:'), { table: 'items', columns: COLUMNS, relations: { tags: { table: 'item_tags', on: { item_id: 'uid' }, fields: ['tag'] } } }),
    message: /^"items": relations\.tags: on points at "uid", which is not a field of "items" \(/
  },
  {
    code: 'FV_ERR_PERMISSION',
    mistake: 'an object rule no criteria express, on a list',
    act: () => {
      const NotOwner = permission<{ name: string }>({ name: 'NotOwner', object: (_principal, item) => item.name !== 'apple' })
      class Listed extends GenericViewSet {
        static override responseSchema = Item
        static override repository = rows() as never
        static override permissions = [NotOwner]
      }
      return build({ auth: { authenticators: [NOBODY] }, views: [{ view: Listed, prefix: '/items' }] })
    },
    message: /^Cannot register Listed's list \(GET \/\): NotOwner judges objects by a check no criteria express/
  },
  {
    code: 'FV_ERR_PERMISSION',
    mistake: 'an object rule on a view that reads no objects',
    act: () => {
      const Owned = permission<{ name: string }>({ name: 'Owned', scope: () => ({ name: 'apple' }) })
      class Echo extends APIView {
        static override permissions = [Owned]
        @Get('/') echo () { return {} }
      }
      return build({ auth: { authenticators: [NOBODY] }, views: [{ view: Echo, prefix: '/echo' }] })
    },
    message: /^Cannot register Echo's echo \(GET \/\): Owned judges objects, but Echo is no generic view and reads none/
  },
  {
    code: 'FV_ERR_PERMISSION',
    mistake: 'a permission that needs a principal on an application that authenticates nobody',
    act: () => {
      class Private extends GenericViewSet {
        static override responseSchema = Item
        static override repository = rows() as never
        static override permissions = [IsAuthenticated]
      }
      return build({ views: [{ view: Private, prefix: '/items' }] })
    },
    message: /^Cannot register Private's destroy \(DELETE \/:id\): IsAuthenticated refuses anonymous requests, and the application authenticates nobody/
  },
  {
    code: 'FV_ERR_AUTH',
    mistake: 'an auth with no authenticator',
    act: () => configureApp(Fastify(), { auth: { authenticators: [] } }),
    message: /^fastify-views: auth lists no authenticators, so every request would be anonymous/
  },
  {
    code: 'FV_ERR_AUTH',
    mistake: 'a second auth on one application',
    act: () => {
      const app = Fastify()
      configureApp(app, { auth: { authenticators: [NOBODY] } })
      configureApp(app, { auth: { authenticators: [NOBODY] } })
    },
    message: /^fastify-views: the application was configured with one auth and is now given another/
  },
  {
    code: 'FV_ERR_THROTTLE',
    mistake: 'a throttled view on an application that did not register @fastify/rate-limit',
    act: () => {
      class Uploads extends APIView {
        static override throttles = [{ scope: 'uploads', rate: '10/minute' as const }]
        @Post('/uploads') upload () { return {} }
      }
      return build({ views: [Uploads] })
    },
    message: /^Cannot register Uploads's upload \(POST \/uploads\): it is throttled \('uploads'\), but the application has no @fastify\/rate-limit 11 to count with\. Register it before the views: `await app\.register\(rateLimit, \{ global: false \}\)`/
  },
  {
    code: 'FV_ERR_SQL_OPTION',
    mistake: 'an AsyncSqliteRepository told to wait for a lock a time that is not a number of milliseconds',
    act: () => new AsyncSqliteRepository(new Database(':memory:'), { table: 'items', columns: COLUMNS }, { lockTimeout: Number('5s') }),
    message: /^AsyncSqliteRepository of "items": lockTimeout must be a finite, non-negative number of milliseconds; got NaN \(number\)\. Give it in milliseconds: \{ lockTimeout: 5000 \}$/
  },
  {
    code: 'FV_ERR_SQL_FRAGMENT',
    mistake: 'a positional criterion given as a bare SQL string, not a { sql, params } fragment',
    act: () => sqlite().deleteMany({}, 'price > 3'),
    message: /^SQL repositories take positional criteria as \{ sql, params \} fragments$/
  },
  {
    // The check that throws it is on LIMIT and OFFSET, before they are written into the SQL text.
    code: 'FV_ERR_SQL_ROW_COUNT',
    mistake: 'a LIMIT that is not a whole row count',
    act: () => sqlite().list({}, { orderBy: [], limit: 1.5 }),
    message: /^LIMIT or OFFSET must be a whole, non-negative row count; got 1\.5$/
  },
  {
    code: 'FV_ERR_SQL_ROW_COUNT',
    mistake: 'an OFFSET that is not a whole row count',
    act: () => sqlite().list({}, { orderBy: [], offset: 2.5 }),
    message: /^LIMIT or OFFSET must be a whole, non-negative row count; got 2\.5$/
  },
  {
    code: 'FV_ERR_VALIDATION_POLICY',
    mistake: 'a validation policy option with a value it does not take',
    act: () => {
      class Echo extends APIView {
        @Get('/') echo () { return {} }
      }
      return build({ views: [{ view: Echo, prefix: '/echo', validation: { unknownProperties: 'remove' as 'strip' } }] })
    },
    message: /^Echo's registration: validation\.unknownProperties must be 'refuse' or 'strip'; got "remove"$/
  },
  {
    code: 'FV_ERR_VALIDATION_POLICY',
    mistake: 'a query default its own schema refuses',
    act: () => {
      class Pages extends APIView {
        @Get('/', { schema: { querystring: Type.Object({ limit: Type.Integer({ minimum: 1, default: 0 }) }) } }) list () { return {} }
      }
      return build({ views: [{ view: Pages, prefix: '/pages' }] })
    },
    message: /^Pages\.list schema\.querystring: the default of limit \(0\) is not a value its own schema accepts/
  },
  {
    code: 'FV_ERR_ERROR_FORMAT',
    mistake: 'an error format whose validation status is neither 400 nor 422',
    act: () => new ErrorFormat({ validationStatus: 418 as 422, body: (problem) => problem, schema: Type.Unknown() }),
    message: /validationStatus must be 400 or 422; got 418$/
  },
  {
    code: 'FV_ERR_ERROR_FORMAT',
    mistake: 'an error format without a body function',
    act: () => new ErrorFormat({ body: undefined as never, schema: Type.Unknown() }),
    message: /an error format needs body \(problem\) => body and the schema of that body$/
  },
  {
    code: 'FV_ERR_ERROR_FORMAT',
    mistake: 'the application configured with problem+json, then the plugin given another format',
    act: async () => {
      const app = Fastify()
      configureApp(app)
      const format = new ErrorFormat(
        {
          validationStatus: 422,
          body: (problem) => ({ message: problem.detail }),
          schema: Type.Object({ message: Type.String() })
        }
      )
      await app.register(views, { errorFormat: format })
      await app.ready()
    },
    message: /configured with one error format and is now given another \(problem\+json, then application\/json, validation 422\)/
  },
  ...cacheCases(),
  ...streamCases(),
  ...telemetryCases()
]

/** Refusals of telemetries (FV_ERR_TELEMETRY): each names the option or the value, and the fix. */
function telemetryCases (): ThrownCase[] {
  const refused = (mistake: string, act: ThrownCase['act'], message: RegExp): ThrownCase =>
    ({ code: 'FV_ERR_TELEMETRY', mistake: `telemetry: ${mistake}`, act, message })
  return [
    refused('a misspelt option of otelTracing', () => otelTracing({ principalID: String } as never),
      /^fastify-views: otelTracing has no option "principalID"; it takes tracer, principalId, statements$/),
    refused('a misspelt option of prometheusMetrics', () => prometheusMetrics({ prefx: 'shop_' } as never),
      /^fastify-views: prometheusMetrics has no option "prefx"; it takes registry, prefix, buckets$/),
    refused('options that are not an object', () => otelMetrics('meter' as never),
      /^fastify-views: otelMetrics\(options\) takes an object of options, not meter$/),
    refused('a telemetry that is not one', () => configureApp(Fastify(), { telemetry: [otelMetrics(), {} as never] }),
      /^fastify-views: telemetry\[1\] is not a telemetry \(an object with observe\(route\)\): give otelTracing\(\), /),
    refused('a second telemetry for the application', async () => {
      const app = Fastify()
      configureApp(app, { telemetry: otelTracing() })
      await app.register(views, { telemetry: otelMetrics() })
      await app.ready()
    }, /^fastify-views: the application was configured with one telemetry and is now given another; give it once/)
  ]
}

/** A generic view over the two rows with `static cache`, on an app with a cache store (unless `store` is false). */
function cached (cache: CacheOptions, options: { store?: boolean } = {}): ThrownCase['act'] {
  return () => {
    class Cached extends GenericViewSet {
      static override responseSchema = Item
      static override repository = rows() as never
      static override cache = cache
    }
    const store = options.store === false ? {} : { cache: memoryCache() }
    return build({ views: [{ view: Cached, prefix: '/items' }], ...store })
  }
}

/** A regular expression of several parts, each as written (String.raw), for a message too long for one line. */
function pattern (...parts: string[]): RegExp {
  return new RegExp(parts.join(''))
}

/** The cache's refusals (FV_ERR_CACHE): each names the view, the option and the fix. */
function cacheCases (): ThrownCase[] {
  const refused = (mistake: string, act: ThrownCase['act'], message: RegExp): ThrownCase =>
    ({ code: 'FV_ERR_CACHE', mistake: `cache: ${mistake}`, act, message })
  class Echo extends APIView {
    @Get('/') echo () { return {} }
  }
  const seconds = String.raw`give a number of seconds above 0 and at most a year \(31536000\)$`
  const shared = String.raw`^Cannot register (Mine|Judged): cache\.shared keeps one answer for everyone, ` +
    String.raw`and the view's `
  return [
    refused('a view with static cache on an application without a cache store', cached({ ttl: 60 }, { store: false }),
      pattern(String.raw`^Cannot register Cached: it declares static cache, and the application has no cache store\. `,
        String.raw`Give it one before the views: configureApp\(app, \{ cache: memoryCache\(\) \}\)`)),
    refused('cache.actions naming no GET action of the view', cached({ ttl: 60, actions: ['list', 'make'] }),
      pattern(String.raw`^Cannot register Cached: cache\.actions names "make", `,
        String.raw`which is not a GET action of the view \(its GET actions: (list, retrieve|retrieve, list)\)$`)),
    refused('a ttl of 0', cached({ ttl: 0 }), pattern(String.raw`^Cannot register Cached: cache\.ttl is 0; `, seconds)),
    refused('a ttl past a year', cached({ ttl: 365 * 86_400 + 1 }),
      pattern(String.raw`cache\.ttl is 31536001; `, seconds)),
    refused('a maxAge that is no number', cached({ ttl: 60, maxAge: '60' as never }),
      pattern(String.raw`cache\.maxAge is 60; `, seconds)),
    refused('an idempotency lease that is not finite', cached({ idempotency: { lease: Infinity } }),
      pattern(String.raw`cache\.idempotency\.lease is Infinity; `, seconds)),
    refused('a jitter above one half', cached({ ttl: 60, jitter: 0.75 }),
      /^Cannot register Cached: cache\.jitter is 0\.75; give a fraction from 0 to 0\.5$/),
    refused('a vary that names no header', cached({ ttl: 60, vary: ['accept language'] }),
      /^Cannot register Cached: cache\.vary names "accept language", which is not a header's name$/),
    refused('a resource that is not a plain name', cached({ ttl: 60, resource: 'items/all' }),
      pattern(String.raw`^Cannot register Cached: cache\.resource "items\/all" is not a plain name: `,
        String.raw`use letters, digits, _ \. - \(at most 100\)$`)),
    refused('a misspelt option', cached({ tll: 60 } as never),
      /^Cannot register Cached: cache has no option "tll" \(its options: ttl, actions, /),
    refused('a view that is not generic, cached without cache.resource', () => {
      class Clock extends Echo {
        static override cache = { ttl: 60 }
      }
      return build({ cache: memoryCache(), views: [{ view: Clock, prefix: '/clock' }] })
    }, pattern(String.raw`^Cannot register Clock: it is not a generic view, so the cache cannot tell what it reads `,
      String.raw`and writes: name it, cache = \{ resource: 'items', \.\.\. \}$`)),
    refused('cache.shared on a view whose getKwargs narrows each request\'s rows', () => {
      const narrowed = { getKwargs () { return { name: 'apple' } } }
      class Mine extends GenericViewSet.with({ responseSchema: Item, repository: rows() }, narrowed) {
        static override cache = { ttl: 60, shared: true }
      }
      return build({ cache: memoryCache(), views: [{ view: Mine, prefix: '/mine' }] })
    }, pattern(shared, String.raw`getKwargs narrows what each request reads, `,
      String.raw`so one principal's answer could reach another\. Leave shared out`)),
    refused('cache.shared on a view whose checkObjectPermissions judges each object', () => {
      const judging = { checkObjectPermissions () {} }
      class Judged extends GenericViewSet.with({ responseSchema: Item, repository: rows() }, judging) {
        static override cache = { ttl: 60, shared: true }
      }
      return build({ cache: memoryCache(), views: [{ view: Judged, prefix: '/judged' }] })
    }, pattern(shared, 'checkObjectPermissions judges what each request reads')),
    refused('answers kept per principal on an application whose auth has no principalId', () => {
      class Cached extends GenericViewSet.with({ responseSchema: Item, repository: rows() }) {
        static override cache = { ttl: 60 }
      }
      const auth = { authenticators: [NOBODY] }
      return build({ auth, cache: memoryCache(), views: [{ view: Cached, prefix: '/items' }] })
    }, pattern(String.raw`^Cannot register Cached: its answers are kept for each principal apart, `,
      String.raw`and the application's auth has no principalId to tell them by\. Give auth a principalId`)),
    refused('two resources for one repository', () => {
      const repository = rows()
      const First = GenericViewSet.with({ responseSchema: Item, repository })
      class Second extends GenericViewSet.with({ responseSchema: Item, repository }) {
        static override cache = { ttl: 60, resource: 'other' }
      }
      const entries = [{ view: First, prefix: '/first' }, { view: Second, prefix: '/second' }]
      return build({ cache: memoryCache(), views: entries })
    }, pattern(String.raw`^Cannot register Second: its repository is .*'s, whose resource is "ConfigItem", `,
      String.raw`and its own is "other", so a write through one would leave the other's cached answers stale\. `,
      String.raw`Give both one name: cache = \{ resource: 'ConfigItem' \}$`)),
    refused('invalidates naming a view that has no resource', cached({ invalidates: [Echo] }),
      pattern(String.raw`^Cannot register Cached: cache\.invalidates names Echo, which has no resource: `,
        String.raw`name a generic view, or a resource's name$`)),
    refused('an idempotency option cache.idempotency does not have', cached({ idempotency: { ttl: 60, retries: 3 } as never }),
      /^Cannot register Cached: cache\.idempotency has no option "retries" \(its options: ttl, lease\)$/),
    // A JavaScript caller is not stopped by the types.
    refused('invalidates naming neither a view nor a name', cached({ invalidates: [42 as unknown as string] }),
      /^Cannot register Cached: cache\.invalidates names 42, which has no resource: /),
    refused('invalidates naming a resource that is not a plain name', cached({ invalidates: ['a b'] }),
      /^Cannot register Cached: cache\.resource "a b" is not a plain name/),
    refused('an in-process store bounded by no entries', () => memoryCache({ maxEntries: 0 }),
      /^memoryCache: maxEntries is 0; give a positive integer \(default 10000\)$/),
    refused('an in-process store bounded by a fraction of a byte', () => memoryCache({ maxBytes: 1.5 }),
      /^memoryCache: maxBytes is 1\.5; give a positive integer \(default 67108864\)$/),
    refused('a Redis store that waits no time', () => redisCache({} as never, { timeout: 0 }),
      /^redisCache: timeout \(0\) and generationTtl \(undefined\) must be positive numbers$/),
    refused('a second cache store on one application', () => {
      const app = Fastify()
      configureApp(app, { cache: memoryCache() })
      configureApp(app, { cache: memoryCache() })
    }, /^fastify-views: the application was configured with one cache store and is now given another; give it once/)
  ]
}

/** Refusals of event-stream routes and streamed lists (FV_ERR_STREAM): each names its method or view, and the option. */
function streamCases (): ThrownCase[] {
  const refused = (mistake: string, act: ThrownCase['act'], message: RegExp): ThrownCase =>
    ({ code: 'FV_ERR_STREAM', mistake: `streams: ${mistake}`, act, message })
  const Tick = Type.Object({ n: Type.Integer() })
  /** A view with one @Events route of these events and settings: the decorator throws as the class is declared. */
  const eventsView = (events: EventSchemas, settings: EventStreamSettings = {}) => () => {
    class Changes extends APIView {
      @Events('/changes', { events, ...settings })
      async * changes () { yield * [] }
    }
    return Changes
  }
  const ticks = (settings: EventStreamSettings): ThrownCase['act'] => eventsView({ tick: Tick }, settings)
  const limit = (name: string, unit: string, least: number, value: string): RegExp =>
    new RegExp(`^@Events changes: ${name} is a whole number of ${unit} from ${least}, not ${value}$`)
  /** A generic list view over the two rows with `static listStream`, registered. */
  const streamed = (listStream: ListStreamOptions | boolean) => () => {
    class Exported extends GenericListAPIView {
      static override responseSchema = Item
      static override repository = rows() as never
      static override listStream = listStream
    }
    return build({ views: [{ view: Exported, prefix: '/items' }] })
  }
  const formats = String.raw`^Exported\.listStream\.formats lists 'ndjson', 'array' or both, not `
  const pageSize = String.raw`^Exported\.listStream\.pageSize is a whole number of rows from 1 to 10000, not `
  return [
    refused('@Events with no event', eventsView({}),
      /^@Events changes: events names no event; write events: \{ name: Schema, \.\.\. \}$/),
    refused('@Events whose events are not an object (a JavaScript caller)', eventsView(null as never),
      /events names no event/),
    refused('an event name holding a line break, which would end its field', eventsView({ 'tick\ndata: forged': Tick }),
      /^@Events changes: the event name "tick\\ndata: forged" holds a line break$/),
    refused('an event name holding a carriage return', eventsView({ 'tick\r': Tick }),
      /the event name "tick\\r" holds a line break$/),
    refused('an event whose schema is no schema', eventsView({ tick: 'integer' as never }),
      /^@Events changes: events\.tick is not a schema$/),
    refused('an event whose schema is null', eventsView({ tick: Tick, tock: null as never }),
      /^@Events changes: events\.tock is not a schema$/),
    refused('a negative heartbeat', ticks({ heartbeat: -1 }), limit('heartbeat', 'milliseconds', 0, '-1')),
    refused('a fractional heartbeat', ticks({ heartbeat: 1.5 }), limit('heartbeat', 'milliseconds', 0, '1\\.5')),
    refused('a buffer smaller than 1024 bytes', ticks({ maxBufferedBytes: 10 }),
      limit('maxBufferedBytes', 'bytes', 1024, '10')),
    refused('a stallTimeout of 0, which would cut every client', ticks({ stallTimeout: 0 }),
      limit('stallTimeout', 'milliseconds', 1, '0')),
    refused('an openAfter that is no number', ticks({ openAfter: NaN }), limit('openAfter', 'milliseconds', 0, 'NaN')),
    refused('an openAfter given as text', ticks({ openAfter: '1000' as never }),
      limit('openAfter', 'milliseconds', 0, '1000')),
    refused('listStream with an option it does not take', streamed({ pageSize: 10, format: ['ndjson'] } as never),
      /^Exported\.listStream has no option format: it takes formats and pageSize$/),
    refused('listStream formats naming another format', streamed({ formats: ['ndjson', 'csv'] as never }),
      new RegExp(formats + String.raw`\["ndjson","csv"\]$`)),
    refused('listStream formats listing none', streamed({ formats: [] }), new RegExp(formats + String.raw`\[\]$`)),
    refused('listStream formats as one string', streamed({ formats: 'ndjson' as never }),
      new RegExp(formats + '"ndjson"$')),
    refused('a listStream pageSize of 0', streamed({ pageSize: 0 }), new RegExp(pageSize + '0$')),
    refused('a listStream pageSize past 10000', streamed({ pageSize: 10_001 }), new RegExp(pageSize + '10001$')),
    refused('a fractional listStream pageSize', streamed({ pageSize: 2.5 }), new RegExp(pageSize + String.raw`2\.5$`)),
    refused('listStream on a view that is not generic', () => {
      class Handmade extends AsyncListAPIView {
        static listStream = true
        override async list () { return [] }
      }
      return build({ views: [{ view: Handmade, prefix: '/handmade' }] })
    }, pattern(String.raw`^Handmade\.listStream streams a generic view's list of its responseSchema: `,
      String.raw`give the view a responseSchema and a repository \(a generic view\), or leave listStream out$`))
  ]
}

const atRequest: RequestCase[] = [
  {
    code: 'FV_ERR_NOT_IMPLEMENTED',
    mistake: "an implemented action that calls the mixin's placeholder through super",
    options: () => {
      class Delegating extends AsyncListAPIView {
        // The type of the placeholder is an implementation; only running it shows it is not one.
        override async list () { return await (super.list as () => Promise<unknown[]>)() }
      }
      return { views: [{ view: Delegating, prefix: '/delegating' }] }
    },
    request: { method: 'GET', url: '/delegating' },
    message: /^Delegating\.list is not implemented/
  },
  {
    code: 'FV_ERR_OPTION_IS_CRITERION',
    mistake: 'a repository option named like a filter criterion, once a request sends that criterion',
    options: () => {
      class Purge extends GenericBulkDestroyAPIView {
        static override filter = NameFilter
        static override repository = rows() as never
        static override repositoryOptions = { name: 'shadow' }
      }
      return { views: [{ view: Purge, prefix: '/purge' }] }
    },
    request: { method: 'DELETE', url: '/purge/bulk?name=apple' },
    message: /^Purge: repository option "name" is also a filter criterion; override mergeRepositoryOptions to choose a precedence$/
  },
  {
    code: 'FV_ERR_SQL_NAME',
    mistake: 'a getKwargs criterion that is not a column of the SQL repository behind the view (a filter field is refused at registration)',
    options: () => {
      class Items extends GenericListAPIView {
        static override responseSchema = Item
        static override repository = sqlite() as never
        override getKwargs () { return { colour: 'red' } }
      }
      return { views: [{ view: Items, prefix: '/items' }] }
    },
    request: { method: 'GET', url: '/items' },
    message: /^"items": no column "colour"$/
  },
  {
    code: 'FV_ERR_SQL_FRAGMENT',
    mistake: 'a bulk view whose resolveFilter passes a bare SQL string as a positional criterion',
    options: () => {
      class Sweep extends GenericBulkDestroyAPIView {
        static override filter = NameFilter
        static override repository = sqlite() as never
        override resolveFilter (filter: BaseFilter) { return { args: ['price > 3'], kwargs: filter.asKwargs() } }
      }
      return { views: [{ view: Sweep, prefix: '/sweep' }] }
    },
    request: { method: 'DELETE', url: '/sweep/bulk?name=apple' },
    message: /^SQL repositories take positional criteria as \{ sql, params \} fragments$/
  }
]

for (const { code, mistake, act, message } of thrown) {
  test(`${code}: ${mistake}`, async (t) => {
    const error = await caught(act)
    t.ok(error instanceof ConfigurationError, 'a ConfigurationError')
    t.ok(error instanceof TypeError, 'a TypeError')
    t.equal((error as ConfigurationError).code, code, 'its code')
    t.equal((error as Error).name, 'TypeError', 'named as JavaScript names a value of the wrong shape')
    t.match((error as Error).message, message, "the message names the user's mistake")
  })
}

async function app (options: FastifyViewsOptions, lines: string[], errors: unknown[]): Promise<FastifyInstance> {
  const instance = Fastify({ logger: { level: 'error', stream: { write: (line: string) => { lines.push(line) } } } })
  instance.addHook('onError', async (_request, _reply, error) => { errors.push(error) })
  await instance.register(views, options)
  await instance.ready()
  return instance
}

for (const { code, mistake, options, request, message } of atRequest) {
  test(`${code} at request time: ${mistake}`, async (t) => {
    const lines: string[] = []
    const errors: unknown[] = []
    const server = await app(options(), lines, errors)
    t.teardown(() => server.close())
    const res = await server.inject(request)
    const body = problem(t, res, 500)
    t.equal(body.detail, 'An unexpected error occurred.', 'a generic detail')
    t.same(Object.keys(body).sort(), ['detail', 'instance', 'status', 'title', 'type'], 'nothing but the problem members')
    for (const leak of [code, 'TypeError', 'ConfigurationError', 'at ']) t.notOk(res.body.includes(leak), `the body does not carry ${JSON.stringify(leak)}`)

    t.equal(errors.length, 1, 'one error')
    const [error] = errors
    t.ok(error instanceof ConfigurationError, 'a ConfigurationError')
    t.ok(error instanceof TypeError, 'a TypeError')
    t.equal((error as ConfigurationError).code, code, 'its code')
    t.match((error as Error).message, message)
    t.notOk(res.body.includes((error as Error).message), 'the body does not carry the message')

    const logged = lines.map((line) => JSON.parse(line)).filter((entry) => entry.err !== undefined)
    t.equal(logged.length, 1, 'logged once')
    t.match(logged[0], { level: 50, err: { type: 'ConfigurationError', code, message, stack: /ConfigurationError|TypeError/ } }, 'the log has the error, its code and its stack')
  })
}

test('every configuration error code has a case', async (t) => {
  const covered = new Set([...thrown, ...atRequest].map((c) => c.code))
  for (const code of Object.keys(CONFIGURATION_ERRORS)) t.ok(covered.has(code as ConfigurationErrorCode), `${code} has a case`)
  t.same([...covered].filter((code) => !(code in CONFIGURATION_ERRORS)), [], 'no case names a code that does not exist')
  t.same(Object.entries(CONFIGURATION_ERRORS).filter(([key, value]) => key !== value), [], 'each code is its own value')
})
