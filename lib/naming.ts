import type { TSchema } from '@sinclair/typebox'
import type { ViewClass } from './view.js'

interface Named { apiComponentName?: string, responseSchema?: TSchema }

/**
 * The name of a view's resource: `apiComponentName`, else the `$id` or `title` of its
 * response schema, else the class name without a View/APIView/ViewSet suffix.
 */
export function componentName (klass: ViewClass): string {
  const named = klass as ViewClass & Named
  if (typeof named.apiComponentName === 'string' && named.apiComponentName !== '') return named.apiComponentName
  const schema = named.responseSchema as (TSchema & { $id?: unknown, title?: unknown }) | undefined
  if (typeof schema?.$id === 'string') return schema.$id
  if (typeof schema?.title === 'string') return schema.title
  return klass.name.replace(/(APIView|ViewSet|View)$/, '') || klass.name
}
