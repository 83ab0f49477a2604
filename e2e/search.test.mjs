// Browser test of the header's search box: title suggestions while typing
// (an ARIA combobox filled from rest.php/v1/search/title), the keyboard
// (Down/Up, Enter, Escape), a click, the "containing…" entry that searches
// the text, and Go (Enter without a highlight opens a page whose title
// matches, ignoring case and accents). A title with "&amp;" in it shows that
// titles are inserted as text. Page and console errors (Chromium reports CSP
// violations there) fail the test.
//
// Needs bin/wikid (make build) like wiki.test.mjs. Screenshots of the open
// list (desktop, phone, dark) land in e2e/screenshots/search-*.png.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { chromiumArgs, chromiumBin, cli, sleep, startWikid, stopWikid, tempDir, wikidBin } from './lib/wikid.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const shotDir = path.join(here, 'screenshots');

const desktop = { width: 1280, height: 800 };
const phone = { width: 390, height: 844 };

const bot = { name: 'Searcher', password: 'searcher password for the e2e test' };
// In folded-title order, as the suggestions list them.
const eclTitles = ['Ecl&amp;ir', 'Éclair', 'Éclair au chocolat', 'Eclipse'];

let server;
let browser;
let page;
const problems = [];
let failed = null;

describe('the header search box in a browser', { timeout: 120_000 }, () => {
  before(async () => {
    assert.ok(existsSync(wikidBin), `no wikid binary at ${wikidBin}: run "make build" (or set WIKID_BIN)`);
    assert.ok(existsSync(chromiumBin), `no browser at ${chromiumBin}: apt-get install -y chromium`);
    mkdirSync(shotDir, { recursive: true });
    rmSync(path.join(shotDir, 'search-failure.png'), { force: true });
    const data = tempDir('wikid-e2e-search-data-');
    let r = cli(data, ['user', 'add', bot.name], bot.password + '\n');
    assert.equal(r.status, 0, `wikid user add: ${r.stderr}`);
    r = cli(data, ['token', 'create', bot.name]);
    assert.equal(r.status, 0, `wikid token create: ${r.stderr}`);
    const token = r.stdout.trim();
    server = await startWikid(data);
    for (const title of [...eclTitles, 'Ecology', 'Harbour']) {
      const res = await fetch(server.url + '/w/rest.php/v1/page', {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ title, source: `All about ${title}.`, comment: 'e2e' }),
      });
      assert.equal(res.status, 201, `create ${title}: ${res.status} ${await res.text()}`);
    }
    browser = await chromium.launch({ executablePath: chromiumBin, headless: true, args: chromiumArgs });
    const context = await browser.newContext({ baseURL: server.url, viewport: desktop });
    context.setDefaultTimeout(10_000);
    context.setDefaultNavigationTimeout(15_000);
    page = await context.newPage();
    page.on('pageerror', (err) => problems.push(`${page.url()}: ${err.message}`));
    // Console errors other than failed loads of 4xx answers (the browser's
    // own /favicon.ico).
    page.on('console', (m) => {
      if (m.type() === 'error' && !/^Failed to load resource: the server responded with a status of 4\d\d/.test(m.text())) {
        problems.push(`${page.url()}: console: ${m.text()}`);
      }
    });
  });

  after(async () => {
    await browser?.close();
    await stopWikid(server, failed);
  });

  step('typing lists the titles that start with the text, ignoring case and accents', async () => {
    await page.goto('/wiki/Harbour');
    const box = page.getByRole('combobox', { name: 'Search' });
    assert.equal(await box.getAttribute('aria-expanded'), 'false');
    await box.pressSequentially('ecl', { delay: 40 });
    const list = page.getByRole('listbox');
    await list.waitFor();
    assert.equal(await box.getAttribute('aria-expanded'), 'true');
    assert.equal(await box.getAttribute('aria-controls'), await list.getAttribute('id'));
    await assertOptions([...eclTitles, 'Search for pages containing ecl']);
  });

  step('shows the open list readably on a desktop, a phone and in dark mode', async () => {
    const box = page.getByRole('combobox', { name: 'Search', exact: true });
    await box.press('ArrowDown'); // a highlighted entry in the pictures
    await box.press('ArrowDown');
    await page.screenshot({ path: path.join(shotDir, 'search-suggestions-desktop.png') });
    await page.setViewportSize(phone);
    await page.getByRole('listbox').waitFor();
    await page.screenshot({ path: path.join(shotDir, 'search-suggestions-phone.png') });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.screenshot({ path: path.join(shotDir, 'search-suggestions-phone-dark.png') });
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize(desktop);
    await box.press('ArrowUp');
    await box.press('ArrowUp');
  });

  step('Down and Up move the highlight; Enter opens the highlighted page', async () => {
    const box = page.getByRole('combobox', { name: 'Search', exact: true });
    await box.press('ArrowDown');
    await assertActive('Ecl&amp;ir');
    await box.press('ArrowDown');
    await assertActive('Éclair');
    await box.press('ArrowDown');
    await box.press('ArrowUp');
    await assertActive('Éclair');
    await box.press('Enter');
    await page.waitForURL((u) => decodeURIComponent(u.pathname) === '/wiki/Éclair' && u.search === '');
    await page.locator('h1.page-title', { hasText: 'Éclair' }).waitFor();
  });

  step('Escape closes the list and keeps the text', async () => {
    const box = page.getByRole('combobox', { name: 'Search', exact: true });
    await box.fill('');
    await box.pressSequentially('eco', { delay: 40 });
    await assertOptions(['Ecology', 'Search for pages containing eco']);
    await box.press('ArrowDown');
    await box.press('Escape');
    await page.getByRole('listbox').waitFor({ state: 'hidden' });
    assert.equal(await box.getAttribute('aria-expanded'), 'false');
    assert.equal(await box.getAttribute('aria-activedescendant'), null);
    assert.equal(await box.inputValue(), 'eco');
    await box.press('ArrowDown'); // opens it again
    await page.getByRole('listbox').waitFor();
    await box.press('Escape');
  });

  step('a click on a suggestion opens its page', async () => {
    const box = page.getByRole('combobox', { name: 'Search', exact: true });
    await box.fill('');
    await box.pressSequentially('ecli', { delay: 40 });
    await assertOptions(['Eclipse', 'Search for pages containing ecli']);
    await page.getByRole('option', { name: 'Eclipse' }).click();
    await page.waitForURL((u) => u.pathname === '/wiki/Eclipse');
  });

  step('the last entry searches for pages containing the text', async () => {
    const box = page.getByRole('combobox', { name: 'Search', exact: true });
    await box.fill('');
    await box.pressSequentially('about ecl', { delay: 20 });
    await assertOptions(['Search for pages containing about ecl']);
    await box.press('ArrowUp'); // from the box, Up goes to the last entry
    await assertActive('Search for pages containing about ecl');
    await box.press('Enter');
    await page.waitForURL((u) => u.pathname === '/wiki/Special:Search' && u.searchParams.get('q') === 'about ecl' && !u.searchParams.has('go'));
    await page.locator('ol.results li').first().waitFor();
  });

  step('Enter without a highlight goes to a page whose title matches (Go)', async () => {
    const box = page.getByRole('combobox', { name: 'Search', exact: true });
    await box.fill('ÉCLIPSE');
    await box.press('Enter');
    await page.waitForURL((u) => u.pathname === '/wiki/Eclipse');
    await page.getByRole('combobox', { name: 'Search', exact: true }).fill('eclair au');
    await page.getByRole('combobox', { name: 'Search', exact: true }).press('Enter');
    await page.waitForURL((u) => u.pathname === '/wiki/Special:Search' && u.searchParams.get('q') === 'eclair au');
  });

  step('ran no page with a script error or a CSP violation', async () => {
    assert.deepEqual(problems, []);
  });
});

function step(name, fn) {
  it(name, async (t) => {
    if (failed) return t.skip(`an earlier step failed: ${failed}`);
    try {
      await fn();
    } catch (err) {
      failed ??= name;
      await page?.screenshot({ path: path.join(shotDir, 'search-failure.png') }).catch(() => {});
      throw err;
    }
  });
}

// assertOptions waits until the list shows exactly want (the text of each
// option, in order).
async function assertOptions(want) {
  const options = page.getByRole('listbox').getByRole('option');
  const deadline = Date.now() + 5_000;
  let got;
  for (;;) {
    got = (await options.allTextContents()).map((s) => s.trim());
    if (JSON.stringify(got) === JSON.stringify(want) || Date.now() > deadline) break;
    await sleep(50);
  }
  assert.deepEqual(got, want);
}

// assertActive checks that the highlighted option, the one
// aria-activedescendant names, is the one whose text is want.
async function assertActive(want) {
  const id = await page.getByRole('combobox', { name: 'Search', exact: true }).getAttribute('aria-activedescendant');
  assert.ok(id, 'no aria-activedescendant');
  const el = page.locator(`[id="${id}"]`);
  assert.equal((await el.textContent()).trim(), want);
  assert.equal(await el.getAttribute('aria-selected'), 'true');
  assert.equal(await page.locator('[role=option][aria-selected=true]').count(), 1);
}
