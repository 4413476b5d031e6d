// Telemetry: the options of each telemetry, the protocol an application's own implements, and where they go.
import { describe, expect, test } from 'tstyche'
import Fastify from 'fastify'
import type { Tracer } from '@opentelemetry/api'
import { configureApp } from '../../lib/index.js'
import type { FastifyViewsOptions, ObservedRoute, RouteObserver, Telemetry } from '../../lib/types.js'
import type { Principal } from '../../lib/access.js'
import { otelMetrics, otelTracing, type OtelTracingOptions } from '../../lib/opentelemetry.js'
import { prometheusMetrics, type PrometheusMetrics } from '../../lib/prometheus.js'

describe('the telemetries and their options', () => {
  test('each returns a telemetry; the Prometheus one with its registry and handler', () => {
    expect(otelTracing()).type.toBeAssignableTo<Telemetry>()
    expect(otelMetrics()).type.toBeAssignableTo<Telemetry>()
    expect(prometheusMetrics()).type.toBe<PrometheusMetrics>()
    expect(prometheusMetrics()).type.toBeAssignableTo<Telemetry>()
  })
  test('a misspelt or mistyped option does not compile', () => {
    expect(otelTracing).type.not.toBeCallableWith({ principalID: () => 'x' })
    expect(otelTracing).type.not.toBeCallableWith({ tracer: 'tracer' })
    expect(otelTracing).type.not.toBeCallableWith({ statements: 'yes' })
    expect(otelMetrics).type.not.toBeCallableWith({ metre: {} })
    expect(prometheusMetrics).type.not.toBeCallableWith({ prefix: 1 })
    expect(prometheusMetrics).type.not.toBeCallableWith({ registry: 'default' })
  })
  test('principalId is given the application\'s principal and returns an id or nothing', () => {
    type PrincipalId = ((principal: Principal) => string | number | undefined) | undefined
    expect<OtelTracingOptions['principalId']>().type.toBe<PrincipalId>()
    const principalId = (principal: Principal): string => String(principal)
    expect(otelTracing).type.toBeCallableWith({ tracer: {} as Tracer, principalId })
    expect(otelTracing).type.not.toBeCallableWith({ principalId: (principal: Principal) => ({ principal }) })
  })
})

describe('the protocol', () => {
  test('an application\'s own telemetry: observe returns an observer or nothing', () => {
    const counting: Telemetry = {
      observe (route) {
        expect(route).type.toBe<ObservedRoute>()
        return route.stream === 'events' ? undefined : { start () {}, end (_request, _reply, finished) { expect(finished).type.toBe<boolean>() } }
      }
    }
    expect(counting).type.toBeAssignableTo<Telemetry>()
    expect({ start () {} }).type.not.toBeAssignableTo<RouteObserver>()
    expect<ObservedRoute['stream']>().type.toBe<'events' | undefined>()
  })
  test('the plugin and configureApp take one telemetry or a list', () => {
    expect<FastifyViewsOptions['telemetry']>().type.toBe<Telemetry | readonly Telemetry[] | undefined>()
    expect(configureApp).type.toBeCallableWith(Fastify(), { telemetry: [otelTracing(), prometheusMetrics()] })
    expect(configureApp).type.not.toBeCallableWith(Fastify(), { telemetry: { start () {} } })
  })
})
