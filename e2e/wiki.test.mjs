// Browser test of the whole wiki, as a user sees it: registers, logs in,
// creates a page with a wiki link, follows the red link, creates that page,
// edits, and opens history and a diff. Then stops the server with SIGTERM.
//
// It builds nothing: run `make e2e`, or build bin/wikid and run `node --test`
// here. WIKID_BIN names another binary; CHROMIUM another browser.
// Screenshots (desktop and phone) land in e2e/screenshots/.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { chromiumArgs, chromiumBin, eventually, removeTempDirs, startWikid, tempDir, wikidBin } from './lib/wikid.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const shotDir = path.join(here, 'screenshots');

const desktop = { width: 1280, height: 800 };
const phone = { width: 390, height: 844 };

const user = { name: 'Alice', password: 'correct horse battery staple' };

let server; // { proc, url, log, exited }
let context; // Playwright browser context
let page;
const pageErrors = [];
let failed = null; // name of the first step that failed

describe('a visitor using the wiki in a browser', { timeout: 180_000 }, () => {
  before(async () => {
    assert.ok(existsSync(wikidBin), `no wikid binary at ${wikidBin}: run "make build" (or set WIKID_BIN)`);
    assert.ok(existsSync(chromiumBin), `no browser at ${chromiumBin}: apt-get install -y chromium`);
    mkdirSync(shotDir, { recursive: true });
    rmSync(path.join(shotDir, 'failure.png'), { force: true });
    server = await startWikid();

    const profile = tempDir('wikid-e2e-chromium-');
    context = await chromium.launchPersistentContext(profile, {
      executablePath: chromiumBin,
      headless: true, // Playwright passes --headless
      args: chromiumArgs,
      baseURL: server.url,
      viewport: desktop,
    });
    context.setDefaultTimeout(10_000);
    context.setDefaultNavigationTimeout(15_000);
    page = context.pages()[0] ?? (await context.newPage());
    page.on('pageerror', (err) => pageErrors.push(err.message));
  });

  after(async () => {
    await context?.close();
    if (server && server.exited === null) server.proc.kill('SIGKILL');
    if (failed) console.error(`--- wikid output ---\n${server?.log.join('') ?? ''}`);
    removeTempDirs();
  });

  step('shows the main page with "Log in" and "Create account" links', async () => {
    await page.goto('/');
    const header = page.getByRole('banner');
    await assertHref(header.getByRole('link', { name: 'Log in', exact: true }), '/wiki/Special:UserLogin');
    await assertHref(header.getByRole('link', { name: 'Create account', exact: true }), '/wiki/Special:CreateAccount');
    await shoot('main-page');
  });

  step('creates an account and is logged in', async () => {
    await page.getByRole('banner').getByRole('link', { name: 'Create account', exact: true }).click();
    await page.waitForURL((u) => u.pathname === '/wiki/Special:CreateAccount');
    await page.getByLabel('Username', { exact: true }).fill(user.name);
    await page.getByLabel('Password', { exact: true }).fill(user.password);
    await page.getByLabel('Confirm password', { exact: true }).fill(user.password);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL((u) => u.pathname !== '/wiki/Special:CreateAccount');
    await assertLoggedIn();
  });

  step('logs out', async () => {
    await page.getByRole('banner').getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('banner').getByRole('link', { name: 'Log in', exact: true }).waitFor();
    assert.equal(await page.getByRole('banner').getByRole('button', { name: 'Log out' }).count(), 0);
  });

  step('logs in again at the login page', async () => {
    await page.getByRole('banner').getByRole('link', { name: 'Log in', exact: true }).click();
    await page.waitForURL((u) => u.pathname === '/wiki/Special:UserLogin');
    await shoot('login-page');
    await page.getByLabel('Username', { exact: true }).fill(user.name);
    await page.getByLabel('Password', { exact: true }).fill(user.password);
    await page.getByRole('button', { name: 'Log in', exact: true }).click();
    await page.waitForURL((u) => u.pathname !== '/wiki/Special:UserLogin');
    await assertLoggedIn();
  });

  step('creates a page with a link to a page that does not exist yet', async () => {
    await page.goto('/wiki/Travel_notes?action=edit');
    const text = page.getByLabel('Page text');
    assert.equal(await text.inputValue(), '', 'a new page starts empty');
    await page.getByRole('button', { name: 'Show preview' }).waitFor();
    await shoot('edit-form');
    await text.fill('We took the [[Night train]] from Vienna.');
    await page.getByLabel('Summary').fill('First draft');
    await saveAndExpect('/wiki/Travel_notes');
    await page.locator('#content .wiki-body', { hasText: 'from Vienna' }).waitFor();
    await shoot('rendered-page');
  });

  step('follows the red link and creates that page', async () => {
    const redLink = page.locator('#content .wiki-body a.new', { hasText: 'Night train' });
    assert.equal(await redLink.count(), 1, 'the link to a missing page is a red link (a.new)');
    await redLink.click();
    await page.waitForURL(
      (u) =>
        u.pathname === '/wiki/Night_train' &&
        u.searchParams.get('action') === 'edit' &&
        u.searchParams.get('redlink') === '1',
    );
    const text = page.getByLabel('Page text');
    assert.equal(await text.inputValue(), '', 'the red link opens an empty edit form');
    await text.fill('An overnight service between cities.');
    await page.getByLabel('Summary').fill('New page');
    await saveAndExpect('/wiki/Night_train');
    await page.locator('#content .wiki-body', { hasText: 'overnight service' }).waitFor();
  });

  step('shows the link as a blue link once the page exists', async () => {
    // Pages that link to a new page are re-rendered by background jobs: allow a few seconds.
    await eventually(15_000, async () => {
      await page.goto('/wiki/Travel_notes');
      const link = page.locator('#content .wiki-body a', { hasText: 'Night train' });
      const classes = ((await link.getAttribute('class')) ?? '').split(/\s+/);
      assert.ok(!classes.includes('new'), `link still has class "new" (class="${classes.join(' ')}")`);
    });
  });

  step('edits the page, previews, and saves', async () => {
    const edit = page.getByRole('link', { name: 'Edit', exact: true }).first();
    assert.match((await edit.getAttribute('href')) ?? '', /[?&]action=edit\b/);
    await edit.click();
    await page.waitForURL((u) => u.searchParams.get('action') === 'edit');
    const text = page.getByLabel('Page text');
    assert.match(await text.inputValue(), /from Vienna/, 'the edit form holds the current text');
    const changed = 'We took the [[Night train]] from Munich.\n\nWe arrived at dawn.';
    await text.fill(changed);
    await page.getByLabel('Summary').fill('Fix the city');

    await page.getByRole('button', { name: 'Show preview' }).click();
    await page.locator('.preview', { hasText: 'arrived at dawn' }).waitFor();
    assert.equal(await page.getByLabel('Page text').inputValue(), changed, 'preview keeps the text');
    assert.equal(await page.getByLabel('Summary').inputValue(), 'Fix the city', 'preview keeps the summary');

    await saveAndExpect('/wiki/Travel_notes');
    await page.locator('#content .wiki-body', { hasText: 'from Munich' }).waitFor();
  });

  step('lists both revisions in the history', async () => {
    const history = page.getByRole('link', { name: 'History', exact: true }).first();
    assert.match((await history.getAttribute('href')) ?? '', /[?&]action=history\b/);
    await history.click();
    await page.waitForURL((u) => u.searchParams.get('action') === 'history');
    const revisions = page.locator('#content ul.history > li, #content table.history tr:has(td)');
    await revisions.first().waitFor();
    assert.equal(await revisions.count(), 2, 'one entry per revision');
    await shoot('history');
  });

  step('shows a word diff between the two revisions', async () => {
    await page.getByRole('link', { name: 'prev', exact: true }).first().click();
    await page.waitForURL((u) => u.searchParams.has('diff') && u.searchParams.has('oldid'));
    const params = new URL(page.url()).searchParams;
    assert.ok(Number(params.get('diff')) > Number(params.get('oldid')), `diff=${params.get('diff')} oldid=${params.get('oldid')}`);
    await page.locator('table.diff').waitFor();
    await page.locator('table.diff ins', { hasText: 'Munich' }).first().waitFor();
    await page.locator('table.diff del', { hasText: 'Vienna' }).first().waitFor();
    const deleted = (await page.locator('table.diff del').allTextContents()).join(' ');
    assert.ok(!deleted.includes('We took the'), `highlights words, not whole lines: <del>${deleted}</del>`);
    await shoot('diff');
  });

  step('ran no page with a script error', async () => {
    assert.deepEqual(pageErrors, []);
  });

  step('stops gracefully on SIGTERM within 10 s', { always: true }, async () => {
    assert.ok(server, 'the server never started');
    // Close the browser first so that its idle and preconnected sockets do not count.
    await context?.close();
    server.proc.kill('SIGTERM');
    const exit = await Promise.race([
      server.done,
      new Promise((resolve) => setTimeout(() => resolve(null), 10_000)),
    ]);
    assert.ok(exit, 'wikid still running 10 s after SIGTERM');
    assert.deepEqual(exit, { code: 0, signal: null }, 'wikid exits 0 on SIGTERM');
  });
});

// step runs one part of the story; once a step has failed the later ones are
// skipped (they would only fail for the same reason), except those marked always.
function step(name, opts, fn) {
  if (typeof opts === 'function') [opts, fn] = [{}, opts];
  it(name, async (t) => {
    if (failed && !opts.always) return t.skip(`an earlier step failed: ${failed}`);
    try {
      await fn();
    } catch (err) {
      failed ??= name;
      await page?.screenshot({ path: path.join(shotDir, 'failure.png'), fullPage: true }).catch(() => {});
      throw err;
    }
  });
}

// shoot saves the current page at desktop and phone sizes.
async function shoot(name) {
  await page.screenshot({ path: path.join(shotDir, `${name}-desktop.png`), fullPage: true });
  await page.setViewportSize(phone);
  await page.screenshot({ path: path.join(shotDir, `${name}-phone.png`), fullPage: true });
  await page.setViewportSize(desktop);
}

async function assertLoggedIn() {
  const header = page.getByRole('banner');
  await assertHref(header.getByRole('link', { name: user.name, exact: true }), `/wiki/User:${user.name}`);
  await header.getByRole('button', { name: 'Log out' }).waitFor();
  assert.equal(await header.getByRole('link', { name: 'Log in', exact: true }).count(), 0);
}

async function assertHref(link, want) {
  await link.waitFor();
  const href = await link.getAttribute('href');
  assert.equal(decodeURIComponent(new URL(href, server.url).pathname), want, `href of ${link}`);
}

// saveAndExpect clicks "Save page" and waits to be sent to the page's view.
async function saveAndExpect(pathname) {
  await page.getByRole('button', { name: 'Save page' }).click();
  await page.waitForURL((u) => u.pathname === pathname && !u.searchParams.has('action'));
}
