import { test } from 'tap'
import { chromium } from 'playwright-core'
import { buildApp } from '../examples/app.js'

import { accessSync, constants } from 'node:fs'

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

/** Why the browser cannot start, before a launch would wait out the test's timeout; `undefined` when it can. */
export function missingBrowser (file: string): string | undefined {
  try {
    accessSync(file, constants.X_OK)
    return undefined
  } catch {
    return `Chromium is not installed at ${file}: install Debian's chromium package (.ci/run does) or set CHROMIUM_PATH`
  }
}

test('a missing browser is named at once', async (t) => {
  t.match(missingBrowser('/nonexistent/chromium'), /Chromium is not installed at \/nonexistent\/chromium/)
})

test('Swagger UI in headless Chromium lists every item operation, runs one through "Try it out", and sends each PATCH format', async (t) => {
  const missing = missingBrowser(CHROMIUM)
  if (missing !== undefined) throw new Error(missing)
  const app = await buildApp({ databaseUrl: 'sqlite::memory:' })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as { port: number }
  await app.inject({ method: 'POST', url: '/items', payload: { name: 'Lamp', price: 30 } })
  // No outside network here: Chromium must not try to reach Google's services. Playwright gives it a fresh temporary profile.
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']
  })
  t.teardown(async () => {
    await browser.close()
    await app.close()
  })
  const page = await browser.newPage()
  await page.goto(`http://127.0.0.1:${port}/docs`)
  await page.waitForSelector('.opblock', { timeout: 30_000 })
  const operations = await page.$$eval('.opblock', (blocks) => blocks.map((b) => {
    const method = b.querySelector('.opblock-summary-method')?.textContent?.trim()
    const route = b.querySelector('.opblock-summary-path')?.getAttribute('data-path') ?? b.querySelector('.opblock-summary-path')?.textContent?.trim()
    return `${method} ${route}`
  }))
  const expected = ['GET /items', 'POST /items', 'GET /items/{id}', 'PUT /items/{id}', 'PATCH /items/{id}', 'DELETE /items/{id}',
    'POST /items/bulk', 'PUT /items/bulk', 'PATCH /items/bulk', 'DELETE /items/bulk']
  for (const operation of expected) t.ok(operations.includes(operation), `${operation} is listed`)

  const list = page.locator('.opblock-get').filter({ has: page.locator('[data-path="/items"]') }).first()
  await list.locator('.opblock-summary').click()
  await list.locator('button.try-out__btn').click()
  await list.locator('button.execute').click()
  const status = list.locator('.live-responses-table .response .response-col_status').first()
  await status.waitFor({ timeout: 30_000 })
  t.equal((await status.textContent())?.trim(), '200', '"Try it out" got a 200')
  t.match(await list.locator('.live-responses-table .microlight').first().textContent(), /"name": "Lamp"/)

  // PATCH offers each media type in its body menu, and "Try it out" sends each.
  const patch = page.locator('.opblock-patch').filter({ has: page.locator('[data-path="/items/{id}"]') }).first()
  await patch.locator('.opblock-summary').click()
  await patch.locator('button.try-out__btn').click()
  await patch.locator('tr[data-param-name="id"] input').fill('1')
  const media = patch.locator('.body-param-content-type select')
  t.same(await media.locator('option').allTextContents(), ['application/json', 'application/merge-patch+json', 'application/json-patch+json'], 'the three media types are offered')
  const sent: Array<[string, string, number]> = [
    ['application/json-patch+json', '[{"op": "test", "path": "/price", "value": 30}, {"op": "replace", "path": "/price", "value": 31}]', 31],
    ['application/merge-patch+json', '{"price": 32}', 32]
  ]
  for (const [type, body, price] of sent) {
    await media.selectOption(type)
    await patch.locator('textarea.body-param__text').fill(body)
    await patch.locator('button.execute').click()
    const answer = patch.locator('.live-responses-table .response .response-col_status').first()
    await answer.waitFor({ timeout: 30_000 })
    t.equal((await answer.textContent())?.trim(), '200', `"Try it out" sent ${type}`)
    t.equal((await app.inject('/items/1')).json().price, price, `${type}: applied`)
    await patch.locator('button.btn-clear').click()
  }
  if (process.env.SWAGGER_SCREENSHOT !== undefined) {
    await page.screenshot(
      { path: process.env.SWAGGER_SCREENSHOT, fullPage: false }
    )
  }
})
