/**
 * In-process cost of constructing a view the way the route handler does: one call site that
 * sees every view class of the app (so V8 cannot specialise it), for six classes built with
 * `mix(...)`, without and with an instance field declared in the user's class.
 * `node build/benchmarks/construction.js` after `npx tsc -p tsconfig.json`.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { mix } from '../lib/index.js'
import type { MixinClass } from '../lib/types.js'
import {
  AsyncGenericCreateAPIView, AsyncGenericListAPIView, AsyncGenericRetrieveAPIView, GenericCreateAPIView,
  GenericListAPIView, GenericRetrieveAPIView, GenericUpdateAPIView
} from '../lib/generics.js'

type Construct = new (request: FastifyRequest, reply: FastifyReply) => object
const sets: MixinClass[][] = [
  [AsyncGenericListAPIView, AsyncGenericCreateAPIView, AsyncGenericRetrieveAPIView], [GenericListAPIView], [
    GenericRetrieveAPIView
  ],
  [AsyncGenericListAPIView, AsyncGenericCreateAPIView], [GenericRetrieveAPIView, GenericUpdateAPIView], [
    GenericListAPIView,
    GenericCreateAPIView
  ]
]
// The classes as the library sees them: constructible with a request and a reply.
const plain = sets.map((set) => class extends (mix(...set) as unknown as Construct) {})
const withField = sets.map(
  (set) => class extends (mix(...set) as unknown as Construct) { cache: Map<string, unknown> | null = null }
)
const request = {} as FastifyRequest
const reply = {} as FastifyReply
const make = (Klass: Construct): object => new Klass(request, reply)

function nsPerConstruction (Klass: Construct): number {
  const started = process.hrtime.bigint()
  for (let i = 0; i < 1_000_000; i++) make(Klass)
  return Number(process.hrtime.bigint() - started) / 1_000_000
}

// Every class through the one call site first, as an app with many views does.
for (const Klass of [...plain, ...withField]) for (let i = 0; i < 10_000; i++) make(Klass)
for (const [label, classes] of [['no instance field', plain], ['one instance field', withField]] as const) {
  const times = classes.map(nsPerConstruction).sort((a, b) => a - b)
  console.log(`${label}: ${times[times.length >> 1].toFixed(0)} ns per construction (median of ${classes.length} view classes)`)
}
