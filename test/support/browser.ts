import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { TestContext } from 'node:test';
import type { Page } from 'playwright-core';

/** The Chromium on PATH (scripts/ensure-chromium.sh installs it), or undefined. */
export function chromiumOnPath(): string | undefined {
  for (const folder of (process.env.PATH ?? '').split(delimiter)) {
    for (const name of ['chromium', 'chromium-browser']) if (existsSync(join(folder, name))) return join(folder, name);
  }
  return undefined;
}

/** The Chromium to test with; without one, the test is skipped (and fails on CI, which installs it first). */
export function chromiumOrSkip(t: TestContext): string | undefined {
  const executablePath = chromiumOnPath();
  if (!executablePath) {
    if (process.env.CI) assert.fail('Chromium is not installed: scripts/ensure-chromium.sh installs it (CI runs it before the tests).');
    t.skip('Chromium is not installed: run scripts/ensure-chromium.sh');
  }
  return executablePath;
}

/** Lets the page read files only; every other request is refused and listed, for the test to find none. */
export async function refuseNetwork(page: Page): Promise<string[]> {
  const fetched: string[] = [];
  await page.route('**/*', (route) => {
    if (!route.request().url().startsWith('file:')) fetched.push(route.request().url());
    return route.request().url().startsWith('file:') ? route.continue() : route.abort();
  });
  return fetched;
}
