// Event-stream routes (`@Events`): what a method yields is typed by the route's events, its request by its schemas.
import { Type, type Static } from '@sinclair/typebox'
import { describe, expect, test } from 'tstyche'
import { APIView, Events } from '../../lib/index.js'
import type { EventStreamContext, ServerEvent, ViewRequest } from '../../lib/types.js'
import { IdParams, Item, ListQuery, StringIdParams } from './schemas.js'

const ItemId = Type.Object({ id: Type.Integer() })
const EVENTS = { created: Item, deleted: ItemId }
type ItemEvent = ServerEvent<typeof EVENTS>

/** Some events of the route, from a function of their own. */
async function * itemEvents (): AsyncGenerator<ItemEvent> {
  yield { event: 'deleted', data: { id: 1 } }
}

describe('ServerEvent: each event name with the data of its schema', () => {
  test('a union of one object per event', () => {
    expect<ItemEvent>().type.toBe<
      | { event: 'created', data: Static<typeof Item>, id?: string | number, retry?: number }
      | { event: 'deleted', data: { id: number }, id?: string | number, retry?: number }
    >()
    expect({ event: 'created' as const, data: { id: 1, name: 'a' } }).type.toBeAssignableTo<ItemEvent>()
    expect({ event: 'created' as const, data: { id: 1 } }).type.not.toBeAssignableTo<ItemEvent>()
    expect({ event: 'updated' as const, data: { id: 1 } }).type.not.toBeAssignableTo<ItemEvent>()
  })
})

describe('@Events: the method is checked against the route\'s events', () => {
  test('an async generator yielding declared events, or a function returning an async iterable, compiles', () => {
    class Feed extends APIView {
      @(expect(Events('/events', { events: EVENTS })).type.toBeApplicable)
      async * events () {
        yield { event: 'created' as const, data: { id: 1, name: 'a' } }
        yield { event: 'deleted' as const, id: 'd-1', retry: 3000, data: { id: 1 } }
      }

      @(expect(Events('/returned', { events: EVENTS })).type.toBeApplicable)
      returned (_request: unknown, _stream: EventStreamContext) { return itemEvents() }

      @(expect(Events('/promised', { events: EVENTS })).type.toBeApplicable)
      async promised () { return itemEvents() }

      @(expect(Events(undefined, { events: EVENTS, heartbeat: 0, detail: true })).type.toBeApplicable)
      async * defaults () { yield { event: 'deleted' as const, data: { id: 2 } } }
    }
    void Feed
  })

  test('a wrong event name or a wrong data shape does not compile', () => {
    class Feed extends APIView {
      @(expect(Events('/events', { events: EVENTS })).type.not.toBeApplicable)
      async * misspelt () { yield { event: 'create' as const, data: { id: 1, name: 'a' } } }

      @(expect(Events('/events', { events: EVENTS })).type.not.toBeApplicable)
      async * missingMember () { yield { event: 'created' as const, data: { id: 1 } } }

      @(expect(Events('/events', { events: EVENTS })).type.not.toBeApplicable)
      async * wrongType () { yield { event: 'deleted' as const, data: { id: '1' } } }

      @(expect(Events('/events', { events: EVENTS })).type.not.toBeApplicable)
      async * otherEventsData () { yield { event: 'deleted' as const, data: { name: 'a' } } }

      @(expect(Events('/events', { events: EVENTS })).type.not.toBeApplicable)
      async * badId () { yield { event: 'deleted' as const, id: true, data: { id: 1 } } }
    }
    void Feed
  })

  test('a method that returns no async iterable does not compile', () => {
    class Feed extends APIView {
      @(expect(Events('/events', { events: EVENTS })).type.toBeApplicable)
      async * fits () { yield { event: 'deleted' as const, data: { id: 1 } } }

      @(expect(Events('/events', { events: EVENTS })).type.not.toBeApplicable)
      array () { return [{ event: 'deleted' as const, data: { id: 1 } }] }

      @(expect(Events('/events', { events: EVENTS })).type.not.toBeApplicable)
      * syncGenerator () { yield { event: 'deleted' as const, data: { id: 1 } } }

      @(expect(Events('/events', { events: EVENTS })).type.not.toBeApplicable)
      async one () { return { event: 'deleted' as const, data: { id: 1 } } }

      @(expect(Events('/events', { events: EVENTS })).type.not.toBeApplicable)
      text () { return 'event: deleted\ndata: {"id":1}\n\n' }

      @(expect(Events('/events', { events: EVENTS })).type.not.toBeApplicable)
      nothing () {}
    }
    void Feed
  })
})

describe('the context and the request of an event-stream method', () => {
  test('lastEventId is text from the client or nothing; signal an AbortSignal', () => {
    expect<EventStreamContext['lastEventId']>().type.toBe<string | undefined>()
    expect<EventStreamContext['signal']>().type.toBe<AbortSignal>()
    class Feed extends APIView {
      @(expect(Events('/events', { events: EVENTS })).type.toBeApplicable)
      async * events (_request: unknown, stream: EventStreamContext) {
        expect(stream.lastEventId).type.toBe<string | undefined>()
        yield { event: 'deleted' as const, id: stream.lastEventId, data: { id: 1 } }
      }

      @(expect(Events('/events', { events: EVENTS })).type.not.toBeApplicable)
      async * numeric (_request: unknown, stream: { lastEventId: number, signal: AbortSignal }) {
        yield { event: 'deleted' as const, data: { id: stream.lastEventId } }
      }
    }
    void Feed
  })

  test('the request is typed from the route\'s schemas', () => {
    class Feed extends APIView {
      @(expect(Events('/:id/events', { schema: { params: IdParams, querystring: ListQuery }, events: EVENTS }))
        .type.toBeApplicable)
      async * one (request: ViewRequest<{ params: typeof IdParams, querystring: typeof ListQuery }>) {
        expect(request.params.id).type.toBe<number>()
        expect(request.query.page).type.toBe<number>()
        expect(request.query.search).type.toBe<string | undefined>()
        yield { event: 'deleted' as const, data: { id: request.params.id } }
      }

      @(expect(Events('/:id/events', { schema: { params: IdParams }, events: EVENTS })).type.not.toBeApplicable)
      async * stringId (request: ViewRequest<{ params: typeof StringIdParams }>) {
        yield { event: 'deleted' as const, data: { id: Number(request.params.id) } }
      }
    }
    void Feed
  })
})

describe('Events options', () => {
  test('events are required, the settings are numbers, and there is no responseSchema', () => {
    expect(Events).type.toBeCallableWith('/events', {
      events: EVENTS,
      heartbeat: 0,
      maxBufferedBytes: 1024,
      stallTimeout: 1,
      openAfter: 0,
      summary: 'Changes',
      permissions: []
    })
    expect(Events).type.not.toBeCallableWith('/events', { heartbeat: 1000 })
    expect(Events).type.not.toBeCallableWith('/events', { events: EVENTS, heartbeat: '15s' })
    expect(Events).type.not.toBeCallableWith('/events', { events: EVENTS, responseSchema: Item })
    expect(Events).type.not.toBeCallableWith('/events', { events: EVENTS, statusCode: 201 })
  })
})
