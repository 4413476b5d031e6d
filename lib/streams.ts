// The `fastify-views/streams` entry: what an event-stream route reads from (a hub of events published in
// the process, a feed of a store's new rows that resumes from an id) and what a streamed list declares
// (docs/streaming.md). The `Events` decorator is in the main entry, beside the other route decorators.
// The types entry comes with this one, so that a consumer's declaration emit can name the types of its
// view classes as `fastify-views/types` (without it: TS2742, "cannot be named without a reference to").
import './types.js'
export { EventHub, SlowSubscriber, type SubscribeOptions } from './views/events/event-hub.js'
export { ChangeFeed, type ChangeFeedOptions, type FollowOptions } from './views/events/change-feed.js'
export { EventStreamCut } from './registration/event-stream.js'
export { EVENT_STREAM, eventText, EventFieldError, type EventFields } from './http/event-stream.js'
export type { ListStreamOptions, ListStreamFormat, ListStreamSettings } from './views/generic/list-stream.js'
