// The steppers of the operations (operations.ts), below the executors: one steps a generator over a synchronous executor, the other over an asynchronous one.
import type { Dialect } from './dialect.js'
import { translateError } from './errors.js'
import type { Operation, Statement, StatementResult, TransactionStep } from './statement.js'

/** Runs an operation on a synchronous executor; database errors are translated where they occur, as `dialect` reads them. */
export function runSync<T> (
  operation: Operation<T>,
  execute: (step: Statement | TransactionStep) => StatementResult,
  dialect: Dialect
): T {
  let next = operation.next()
  while (next.done !== true) {
    let result: StatementResult
    try {
      result = execute(next.value)
    } catch (error) {
      next = operation.throw(translateError(error, dialect))
      continue
    }
    next = operation.next(result)
  }
  return next.value
}

/** Runs an operation on an asynchronous executor; database errors are translated where they occur, as `dialect` reads them. */
export async function runAsync<T> (
  operation: Operation<T>,
  execute: (step: Statement | TransactionStep) => Promise<StatementResult>,
  dialect: Dialect
): Promise<T> {
  let next = operation.next()
  while (next.done !== true) {
    let result: StatementResult
    try {
      result = await execute(next.value)
    } catch (error) {
      next = operation.throw(translateError(error, dialect))
      continue
    }
    next = operation.next(result)
  }
  return next.value
}
