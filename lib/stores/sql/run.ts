import { translateError } from './errors.js'
import type { Operation, Statement, StatementResult, TransactionStep } from './statement.js'

// The two runners of the operations written once in operations.ts: one steps a generator over a
// synchronous driver, the other over an asynchronous one.

/** Runs an operation on a synchronous executor; database errors are translated where they occur. */
export function runSync<T> (
  operation: Operation<T>,
  execute: (step: Statement | TransactionStep) => StatementResult
): T {
  let next = operation.next()
  while (next.done !== true) {
    let result: StatementResult
    try {
      result = execute(next.value)
    } catch (error) {
      next = operation.throw(translateError(error))
      continue
    }
    next = operation.next(result)
  }
  return next.value
}

/** Runs an operation on an asynchronous executor. */
export async function runAsync<T> (
  operation: Operation<T>,
  execute: (step: Statement | TransactionStep) => Promise<StatementResult>
): Promise<T> {
  let next = operation.next()
  while (next.done !== true) {
    let result: StatementResult
    try {
      result = await execute(next.value)
    } catch (error) {
      next = operation.throw(translateError(error))
      continue
    }
    next = operation.next(result)
  }
  return next.value
}
