// Browser test of an administrator handling a vandal, from the web UI: the
// admin (made with the CLI before the server starts) writes a page; a vandal
// registers, blanks it with junk and creates a junk page; the admin finds the
// edit in RecentChanges, reverts it from the diff, deletes the junk page,
// blocks the vandal (Special:Block, Special:BlockList), protects the page
// (?action=protect) and reads it all back in Special:Log. The vandal, still
// logged in, is refused (block notice, 403 on a POST of a form opened before
// the block); an anonymous reader sees the lock, and a new user the
// protection notice instead of an edit form.
//
// Three browser contexts: the admin's, the vandal's, and a fresh one.
// Needs bin/wikid (make build) like wiki.test.mjs. Screenshots (desktop and
// phone) land in e2e/screenshots/.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import {
  chromiumArgs, chromiumBin, cli, eventually, startWikid, stopWikid, tempDir, wikidBin,
} from './lib/wikid.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const shotDir = path.join(here, 'screenshots');

const desktop = { width: 1280, height: 800 };
const phone = { width: 390, height: 844 };

const admin = { name: 'Ada', password: 'admin password for the e2e test' };
const vandal = { name: 'Vandal', password: 'vandal password for the e2e test' };
const newcomer = { name: 'Newcomer', password: 'newcomer password for the e2e test' };
const goodText = 'Harbour is the old port of the town.\n\nFerries leave for the islands every morning.';
const junkText = 'VANDALISM spam spam';
const junkPage = 'Cheap spam offers';

let server;
let browser;
const as = {}; // who → { context, page }
const problems = []; // page errors, console errors (CSP violations among them)
let failed = null;
let current = null; // the page a failure screenshot is taken of

describe('an administrator handling a vandal in the browser', { timeout: 180_000 }, () => {
  before(async () => {
    assert.ok(existsSync(wikidBin), `no wikid binary at ${wikidBin}: run "make build" (or set WIKID_BIN)`);
    assert.ok(existsSync(chromiumBin), `no browser at ${chromiumBin}: apt-get install -y chromium`);
    mkdirSync(shotDir, { recursive: true });
    rmSync(path.join(shotDir, 'admin-failure.png'), { force: true });
    const data = tempDir('wikid-e2e-admin-data-');
    // The administrator exists before the server starts: the group is in
    // place when Ada first logs in.
    const r = cli(data, ['user', 'add', admin.name, '--admin'], admin.password + '\n');
    assert.equal(r.status, 0, `wikid user add ${admin.name} --admin: ${r.stderr}`);
    server = await startWikid(data);
    browser = await chromium.launch({ executablePath: chromiumBin, headless: true, args: chromiumArgs });
    for (const who of ['admin', 'vandal', 'anon']) as[who] = await openContext(who);
  });

  after(async () => {
    await browser?.close();
    await stopWikid(server, failed);
  });

  step('the admin logs in and writes the page Harbour', async () => {
    const page = use('admin');
    await logIn(page, admin);
    await page.goto('/wiki/Harbour?action=edit');
    await page.getByLabel('Page text').fill(goodText);
    await page.getByLabel('Summary').fill('About the harbour');
    await saveAndExpect(page, '/wiki/Harbour');
    await page.locator('#content .wiki-body', { hasText: 'Ferries leave' }).waitFor();
  });

  step('a vandal registers, replaces the text with junk and creates a junk page', async () => {
    const page = use('vandal');
    await register(page, vandal);
    await page.goto('/wiki/Harbour?action=edit');
    await page.getByLabel('Page text').fill(junkText);
    await page.getByLabel('Summary').fill('improved');
    await saveAndExpect(page, '/wiki/Harbour');
    await page.locator('#content .wiki-body', { hasText: 'VANDALISM' }).waitFor();
    await page.goto(`/wiki/${junkPage.replaceAll(' ', '_')}?action=edit`);
    await page.getByLabel('Page text').fill('Buy spam spam spam now!');
    await saveAndExpect(page, `/wiki/${junkPage.replaceAll(' ', '_')}`);
  });

  step('the vandal keeps an edit form open in a second tab', async () => {
    // Opened before the block: its POST comes after it.
    const tab = await as.vandal.context.newPage();
    watch(tab, 'vandal tab');
    as.vandal.tab = tab;
    await tab.goto('/wiki/Harbour?action=edit');
    await tab.getByRole('button', { name: 'Save page' }).waitFor();
  });

  step('the admin sees the edit in RecentChanges and opens its diff', async () => {
    const page = use('admin');
    const entry = page.locator('ul.changes > li', { hasText: 'Harbour' }).filter({ hasText: vandal.name });
    await eventually(10_000, async () => {
      await page.goto('/wiki/Special:RecentChanges');
      assert.equal(await entry.count(), 1, 'one entry for the vandal’s edit of Harbour');
    });
    await page.locator('ul.changes > li', { hasText: junkPage }).filter({ hasText: vandal.name }).waitFor();
    await entry.getByRole('link', { name: 'diff', exact: true }).click();
    await page.waitForURL((u) => u.pathname === '/wiki/Harbour' && u.searchParams.has('diff'));
    await page.locator('table.diff ins', { hasText: 'VANDALISM' }).first().waitFor();
    await page.locator('table.diff del', { hasText: 'Ferries' }).first().waitFor();
  });

  step('the admin reverts with "Revert to the older revision"', async () => {
    const page = use('admin');
    await page.getByRole('button', { name: 'Revert to the older revision' }).click();
    await page.waitForURL((u) => u.pathname === '/wiki/Harbour' && u.search === '');
    await page.locator('#content .wiki-body', { hasText: 'Ferries leave for the islands' }).waitFor();
    assert.equal(await page.locator('#content .wiki-body', { hasText: 'VANDALISM' }).count(), 0);
    // Everyone sees the good text again, anonymous readers too.
    const anon = use('anon');
    await anon.goto('/wiki/Harbour');
    await anon.locator('#content .wiki-body', { hasText: 'Ferries leave for the islands' }).waitFor();
  });

  step('the admin deletes the junk page', async () => {
    const page = use('admin');
    const url = `/wiki/${junkPage.replaceAll(' ', '_')}`;
    await page.goto(url + '?action=delete');
    await page.getByLabel('Reason').fill('spam');
    await page.getByRole('button', { name: 'Delete page' }).click();
    await page.waitForURL((u) => u.pathname === url && u.search === '');
    const res = await use('anon').goto(url);
    assert.equal(res.status(), 404, 'the deleted page is gone for readers');
  });

  step('the admin blocks the vandal at Special:Block', async () => {
    const page = use('admin');
    await page.goto('/wiki/Special:Block');
    await page.getByLabel('User name').waitFor();
    await shoot(page, 'special-block');
    await page.getByLabel('User name').fill(vandal.name);
    await page.getByLabel('Expiry').fill('1 week');
    await page.getByLabel('Reason').fill('vandalism');
    await page.getByRole('button', { name: 'Block', exact: true }).click();
    await page.waitForURL((u) => u.pathname === '/wiki/Special:BlockList');
  });

  step('Special:BlockList shows the block', async () => {
    const page = use('admin');
    const row = page.locator('table.list tbody tr', { hasText: vandal.name });
    assert.equal(await row.count(), 1, 'one row for the vandal');
    const cells = await row.locator('td').allTextContents();
    assert.equal(cells[0].trim(), vandal.name);
    assert.equal(cells[1].trim(), admin.name, 'blocked by');
    assert.match(cells[3], /\d{4}/, 'a week from now, not infinite');
    assert.equal(cells[4].trim(), 'vandalism');
    await shoot(page, 'blocklist');
  });

  step('the still logged-in vandal gets the block notice instead of the edit form', async () => {
    const page = use('vandal');
    const res = await page.goto('/wiki/Harbour?action=edit');
    assert.equal(res.status(), 403);
    await page.getByRole('heading', { name: 'You are blocked from editing' }).waitFor();
    const text = await page.locator('#content').innerText();
    assert.match(text, new RegExp(`blocked from editing by ${admin.name} until .*\\d{4}`), 'who and until when');
    assert.match(text, /Reason: vandalism/);
    assert.equal(await page.getByLabel('Page text').count(), 0, 'no edit form');
    assert.equal(await page.getByRole('button', { name: 'Save page' }).count(), 0);
    await shoot(page, 'blocked-edit');
  });

  step('a POST of the form opened before the block is refused with 403', async () => {
    const tab = use('vandal', 'tab');
    await tab.getByLabel('Page text').fill(junkText + ' again');
    const [res] = await Promise.all([
      tab.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/wiki/Harbour'),
      tab.getByRole('button', { name: 'Save page' }).click(),
    ]);
    assert.equal(res.status(), 403);
    await tab.locator('#content', { hasText: 'Reason: vandalism' }).waitFor();
    // The same refusal for a new page, posted straight from the browser's request API.
    const csrf = await tab.evaluate(() => document.querySelector('input[name=csrf]')?.value ?? '');
    const post = await as.vandal.context.request.post('/wiki/Spam_again?action=submit', {
      form: { csrf, baserev: '0', text: 'spam', summary: '', save: '1' }, maxRedirects: 0,
    });
    assert.equal(post.status(), 403);
    const anon = use('anon');
    await anon.goto('/wiki/Harbour');
    await anon.locator('#content .wiki-body', { hasText: 'Ferries leave for the islands' }).waitFor();
    assert.equal((await anon.goto('/wiki/Spam_again')).status(), 404);
  });

  step('the admin protects Harbour with ?action=protect', async () => {
    const page = use('admin');
    await page.goto('/wiki/Harbour?action=protect');
    await page.getByLabel('Edit (and create)').waitFor();
    await shoot(page, 'protect-form');
    await page.getByLabel('Edit (and create)').selectOption('admins');
    await page.getByLabel('Move', { exact: true }).selectOption('admins');
    await page.getByLabel(/^Expires/).fill('1 month');
    await page.getByLabel('Reason').fill('repeated vandalism');
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.waitForURL((u) => u.pathname === '/wiki/Harbour' && u.search === '');
    await page.locator('a.lock').waitFor();
  });

  step('an anonymous reader sees the lock on the page', async () => {
    const anon = use('anon');
    await anon.goto('/wiki/Harbour');
    const lock = anon.locator('a.lock');
    await lock.waitFor();
    assert.equal(await lock.locator('svg.icon-lock').count(), 1, 'the padlock icon');
    assert.match((await lock.getAttribute('title')) ?? '', /edit admins only/);
    await shoot(anon, 'protected-page');
  });

  step('a newly registered user sees the protection notice instead of an edit form', async () => {
    const anon = use('anon');
    await anon.goto('/wiki/Harbour?action=edit');
    // Anonymous users may not edit here: the edit link leads to the login.
    await anon.waitForURL((u) => u.pathname === '/wiki/Special:UserLogin');
    await register(anon, newcomer);
    await anon.goto('/wiki/Harbour?action=edit');
    const notice = anon.locator('.notice.protected');
    await notice.waitFor();
    assert.match(await notice.innerText(), /only administrators can edit it.*Reason: repeated vandalism.*expires at/s);
    assert.equal(await anon.getByRole('button', { name: 'Save page' }).count(), 0, 'no save button');
    assert.equal((await anon.locator('textarea[readonly]').inputValue()).trimEnd(), goodText, 'the source, read-only');
    await shoot(anon, 'protected-edit');
    // The blocked vandal still gets the block notice first.
    const page = use('vandal');
    assert.equal((await page.goto('/wiki/Harbour?action=edit')).status(), 403);
    await page.getByRole('heading', { name: 'You are blocked from editing' }).waitFor();
  });

  step('Special:Log lists the block, the protection and the deletion', async () => {
    const page = use('admin');
    await page.goto('/wiki/Special:Log');
    const block = page.locator('ul.log > li.log-block');
    const protect = page.locator('ul.log > li.log-protect');
    const del = page.locator('ul.log > li.log-delete');
    await block.first().waitFor();
    assert.match(await block.innerText(), new RegExp(`${admin.name} \\(contribs\\) blocked ${vandal.name} \\(expires \\d\\d:\\d\\d, \\d+ \\w+ \\d{4}\\) \\(vandalism\\)`));
    assert.match(await protect.innerText(), new RegExp(`${admin.name} \\(contribs\\) protected Harbour \\[edit=admins\\] \\[move=admins\\] .*repeated vandalism`));
    assert.match(await del.innerText(), new RegExp(`deleted page ${junkPage}.*spam`));
    await page.locator('ul.log > li.log-newusers', { hasText: vandal.name }).waitFor();
    await shoot(page, 'special-log');
  });

  step('Special:Log/block and Special:Log/protect filter by type', async () => {
    const page = use('admin');
    // The filter form's type redirects to the subpage.
    await page.getByLabel('Type').selectOption('block');
    await page.getByRole('button', { name: 'Show' }).click();
    await page.waitForURL((u) => u.pathname === '/wiki/Special:Log/block');
    await page.getByRole('heading', { name: 'Block log' }).waitFor();
    assert.deepEqual(await logTypes(page), ['block']);

    await page.goto('/wiki/Special:Log/protect');
    assert.deepEqual(await logTypes(page), ['protect']);
    await page.locator('ul.log > li', { hasText: 'Harbour' }).waitFor();

    await page.goto(`/wiki/Special:Log?user=${admin.name}&page=Harbour`);
    assert.deepEqual(await logTypes(page), ['protect']);
    // The lock links to the page's protection log.
    const anon = use('anon');
    await anon.goto('/wiki/Harbour');
    await anon.locator('a.lock').click();
    await anon.locator('ul.log > li.log-protect', { hasText: 'repeated vandalism' }).waitFor();
  });

  step('RecentChanges still shows the revert', async () => {
    const page = use('admin');
    await page.goto('/wiki/Special:RecentChanges');
    const revert = page.locator('ul.changes > li', { hasText: 'Harbour' }).filter({ hasText: admin.name })
      .filter({ hasText: /Reverted to revision \d+ by Ada/ });
    assert.equal(await revert.count(), 1);
  });

  step('no page had a script error or a CSP violation', { always: true }, async () => {
    assert.deepEqual(problems, []);
  });
});

// openContext opens a browser context of its own (cookies apart) and its page.
async function openContext(who) {
  const context = await browser.newContext({ baseURL: server.url, viewport: desktop });
  context.setDefaultTimeout(10_000);
  context.setDefaultNavigationTimeout(15_000);
  const page = await context.newPage();
  watch(page, who);
  return { context, page };
}

// watch records script errors and console errors (Chromium reports CSP
// violations there) other than the failed loads of 4xx answers, which the
// test causes on purpose.
function watch(page, who) {
  page.on('pageerror', (err) => problems.push(`${who} ${page.url()}: ${err.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && !/^Failed to load resource: the server responded with a status of 4\d\d/.test(m.text())) {
      problems.push(`${who} ${page.url()}: console: ${m.text()}`);
    }
  });
}

function use(who, which = 'page') {
  current = as[who][which];
  return current;
}

// step runs one part of the story; once a step has failed the later ones are
// skipped, except those marked always.
function step(name, opts, fn) {
  if (typeof opts === 'function') [opts, fn] = [{}, opts];
  it(name, async (t) => {
    if (failed && !opts.always) return t.skip(`an earlier step failed: ${failed}`);
    try {
      await fn();
    } catch (err) {
      failed ??= name;
      await current?.screenshot({ path: path.join(shotDir, 'admin-failure.png'), fullPage: true }).catch(() => {});
      throw err;
    }
  });
}

// shoot saves the page at desktop and phone sizes.
async function shoot(page, name) {
  await page.screenshot({ path: path.join(shotDir, `${name}-desktop.png`), fullPage: true });
  await page.setViewportSize(phone);
  await page.screenshot({ path: path.join(shotDir, `${name}-phone.png`), fullPage: true });
  await page.setViewportSize(desktop);
}

async function logIn(page, u) {
  await page.goto('/wiki/Special:UserLogin');
  await page.getByLabel('Username', { exact: true }).fill(u.name);
  await page.getByLabel('Password', { exact: true }).fill(u.password);
  await page.getByRole('button', { name: 'Log in', exact: true }).click();
  await page.waitForURL((url) => url.pathname !== '/wiki/Special:UserLogin');
  await page.getByRole('banner').getByRole('link', { name: u.name, exact: true }).waitFor();
}

async function register(page, u) {
  await page.goto('/wiki/Special:CreateAccount');
  await page.getByLabel('Username', { exact: true }).fill(u.name);
  await page.getByLabel('Password', { exact: true }).fill(u.password);
  await page.getByLabel('Confirm password', { exact: true }).fill(u.password);
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.waitForURL((url) => url.pathname !== '/wiki/Special:CreateAccount');
  await page.getByRole('banner').getByRole('link', { name: u.name, exact: true }).waitFor();
}

// saveAndExpect clicks "Save page" and waits to be sent to the page's view.
async function saveAndExpect(page, pathname) {
  await page.getByRole('button', { name: 'Save page' }).click();
  await page.waitForURL((u) => u.pathname === pathname && !u.searchParams.has('action'));
}

// logTypes lists the types of the entries Special:Log shows, once each.
async function logTypes(page) {
  const classes = await page.locator('ul.log > li').evaluateAll((lis) => lis.map((li) => li.className));
  assert.ok(classes.length > 0, 'some log entries');
  return [...new Set(classes.map((c) => c.replace(/^log-/, '')))];
}
