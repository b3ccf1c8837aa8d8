// What the browser benchmarks (web-list, web-admin) share: a navigation timed
// until the page says it has drawn what the bench waits for. The bench adds an
// init script to the page's context that sets `window.__drawn` to the
// milliseconds from the navigation's start once its condition holds.

/**
 * Opens `url` in `page` (brought to the front, so its frames are not
 * throttled) and resolves with `window.__drawn`. After 60 s without it,
 * rejects with what the page shows instead (`describe`, run in the page,
 * answers a JSON-able description), so a bench that waits in vain says why.
 */
export async function msUntilDrawn(page, url, what, describe = () => document.body.innerText.slice(0, 400)) {
  await page.bringToFront();
  await page.goto(url, { waitUntil: 'commit' });
  return page
    .waitForFunction(() => window.__drawn, null, { timeout: 60_000 })
    .then((h) => h.jsonValue())
    .catch(async (err) => {
      const seen = await page.evaluate(describe).catch(() => '(the page could not be read)');
      throw new Error(`${url}: ${what} not drawn in 60 s; the page shows ${JSON.stringify(seen)}`, { cause: err });
    });
}
