// Browser test of two users working together on one page, each in a browser
// context of its own: Ada writes Garden (the edit form watches it for her),
// Ben stars it with the watch star's script, Ada reads her watchlist as a
// feed reader would (a private Atom link from her preferences), Ben opens a
// signed topic on Talk:Garden that mentions Ada, Ada is notified and answers
// by editing the section, and Ben's watchlist shows the answer. Then a vandal
// (a third context) spams the page: Ada undoes the edits from the history
// (an undo of the latest edit, then of an older one), and Ben, a rollbacker,
// rolls back a second spree with the history's rollback button; the history
// and RecentChanges carry the undo and rollback tags.
//
// Throughout, an anonymous reader (Node's fetch, no cookies) gets Garden
// from the edge cache (X-Cache: HIT on a second fetch) and never a trace of
// a logged-in user; logged-in views of Garden are spliced from the cached
// copy (X-Cache: SPLICE) with each viewer's own star.
//
// Needs bin/wikid (make build) like wiki.test.mjs. Screenshots (desktop)
// land in e2e/screenshots/collab-*.png.

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

const ada = { name: 'Ada', password: 'ada password for the e2e test' };
const ben = { name: 'Ben', password: 'ben password for the e2e test' };
const vandal = { name: 'Vandal', password: 'vandal password for the e2e test' };
const users = [ada, ben, vandal];
const gardenText = 'The garden has tomatoes, beans and a pear tree.\n\nThe beds are weeded on Saturdays.';
const spam = ['SPAM ONE', 'SPAM TWO', 'SPAM THREE', 'SPAM FOUR'];

let server;
let browser;
const as = {}; // who → { context, page }
const problems = []; // page errors, console errors (CSP violations among them)
let failed = null;
let current = null; // the page a failure screenshot is taken of

describe('two users working together on a page in the browser', { timeout: 120_000 }, () => {
  before(async () => {
    assert.ok(existsSync(wikidBin), `no wikid binary at ${wikidBin}: run "make build" (or set WIKID_BIN)`);
    assert.ok(existsSync(chromiumBin), `no browser at ${chromiumBin}: apt-get install -y chromium`);
    mkdirSync(shotDir, { recursive: true });
    rmSync(path.join(shotDir, 'collab-failure.png'), { force: true });
    const data = tempDir('wikid-e2e-collab-data-');
    // Anonymous users may not edit by default (edit_group "user"): the
    // vandal has an account too. Ben may roll back.
    for (const u of users) {
      const r = cli(data, ['user', 'add', u.name], u.password + '\n');
      assert.equal(r.status, 0, `wikid user add ${u.name}: ${r.stderr}`);
    }
    const r = cli(data, ['user', 'set-groups', ben.name, 'rollbacker']);
    assert.equal(r.status, 0, `wikid user set-groups ${ben.name} rollbacker: ${r.stderr}`);
    server = await startWikid(data);
    browser = await chromium.launch({ executablePath: chromiumBin, headless: true, args: chromiumArgs });
    for (const who of ['ada', 'ben', 'vandal']) as[who] = await openContext(who);
  });

  after(async () => {
    await browser?.close();
    await stopWikid(server, failed);
  });

  step('Ada and Ben log in through the login form, each in a context of their own', async () => {
    await logIn(use('ada'), ada);
    await logIn(use('ben'), ben);
  });

  step('Ada creates Garden; the edit form watches it for her', async () => {
    const page = use('ada');
    await page.goto('/wiki/Garden?action=edit');
    const watch = page.getByRole('checkbox', { name: 'Watch this page' });
    assert.ok(await watch.isChecked(), '"Watch this page" is ticked by default');
    await page.getByLabel('Page text').fill(gardenText);
    await page.getByLabel('Summary').fill('A page about the garden');
    await saveAndExpect(page, '/wiki/Garden');
    await page.locator('#content .wiki-body', { hasText: 'pear tree' }).waitFor();
    const star = tabs(page).getByRole('link', { name: unwatchName });
    await star.waitFor();
    assert.equal(await star.getAttribute('class'), 'watch watched', 'the lit star');
    await shoot(page, 'star');
    await anonCached('/wiki/Garden', { has: 'pear tree' });
  });

  step('a logged-in view of the cached Garden is spliced, with the viewer’s own star', async () => {
    const page = use('ada');
    const res = await page.goto('/wiki/Garden');
    assert.equal(res.headers()['x-cache'], 'SPLICE', 'Ada’s view is spliced from the cached page');
    await tabs(page).getByRole('link', { name: unwatchName }).waitFor();
    await page.getByRole('banner').getByRole('link', { name: ada.name, exact: true }).waitFor();
  });

  step('Ben stars Garden with the watch tab without leaving the page', async () => {
    const page = use('ben');
    const res = await page.goto('/wiki/Garden');
    assert.equal(res.headers()['x-cache'], 'SPLICE', 'Ben’s view is spliced from the cached page');
    const url = page.url();
    const star = tabs(page).getByRole('link', { name: watchName });
    assert.equal(await star.getAttribute('class'), 'watch');
    const [post] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/wiki/Garden'),
      star.click(),
    ]);
    assert.equal(post.status(), 204, 'watch.js posts the form and gets 204');
    const lit = tabs(page).getByRole('link', { name: unwatchName });
    await lit.waitFor();
    assert.equal(await lit.getAttribute('class'), 'watch watched');
    assert.equal(page.url(), url, 'the star flips in place: no navigation');
    const again = await page.reload();
    assert.equal(again.headers()['x-cache'], 'SPLICE');
    await tabs(page).getByRole('link', { name: unwatchName }).waitFor();
    await anonCached('/wiki/Garden', { has: 'pear tree' });
  });

  step('Ada makes a watchlist feed link, and a feed reader gets Atom with Garden', async () => {
    const page = use('ada');
    await page.goto('/wiki/Special:Preferences');
    await page.getByRole('button', { name: 'Make a feed link', exact: true }).click();
    const code = page.locator('code.secret');
    await code.waitFor();
    const feedURL = (await code.innerText()).trim();
    assert.match(feedURL, /^http:\/\/127\.0\.0\.1:\d+\/.*Special:Watchlist.*wltoken=/, 'an absolute URL with the token');
    await page.getByRole('button', { name: 'Make a new feed link', exact: true }).waitFor();
    const res = await fetch(feedURL, { signal: AbortSignal.timeout(10_000) });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/atom\+xml\b/);
    const xml = await res.text();
    assert.match(xml, /<entry>[\s\S]*<title[^>]*>Garden<\/title>[\s\S]*<\/entry>/, 'an entry for Garden');
    // Parsed by the browser's XML parser: well-formed Atom, an entry per change.
    const feed = await page.evaluate((text) => {
      const doc = new DOMParser().parseFromString(text, 'application/xml');
      const atom = 'http://www.w3.org/2005/Atom';
      const el = doc.documentElement;
      return {
        error: doc.getElementsByTagName('parsererror')[0]?.textContent ?? null,
        root: `{${el.namespaceURI}}${el.localName}`,
        titles: [...doc.getElementsByTagNameNS(atom, 'entry')].map((e) => e.getElementsByTagNameNS(atom, 'title')[0]?.textContent),
        links: [...doc.getElementsByTagNameNS(atom, 'entry')].map((e) => e.getElementsByTagNameNS(atom, 'link')[0]?.getAttribute('href')),
      };
    }, xml);
    assert.equal(feed.error, null, 'well-formed XML');
    assert.equal(feed.root, '{http://www.w3.org/2005/Atom}feed');
    assert.ok(feed.titles.includes('Garden'), `entries: ${JSON.stringify(feed.titles)}`);
    assert.ok(feed.links.every((l) => l?.startsWith(server.url + '/')), `entry links: ${JSON.stringify(feed.links)}`);
    // A wrong token is refused, and the feed is nobody's to cache.
    assert.match(res.headers.get('cache-control') ?? '', /private|no-store/);
    const bad = await fetch(feedURL.replace(/wltoken=[^&]+/, 'wltoken=wrong'), { signal: AbortSignal.timeout(10_000) });
    assert.ok(bad.status >= 400, `a wrong token: ${bad.status}`);
  });

  step('Ben opens a signed topic on Talk:Garden with "Add topic"', async () => {
    const page = use('ben');
    await page.goto('/wiki/Garden');
    await page.getByRole('navigation', { name: 'Namespaces' }).getByRole('link', { name: /discussion|talk/i }).click();
    await page.waitForURL((u) => u.pathname === '/wiki/Talk:Garden');
    await tabs(page).getByRole('link', { name: 'Add topic', exact: true }).click();
    await page.waitForURL((u) => u.searchParams.get('action') === 'edit' && u.searchParams.get('section') === 'new');
    await page.getByLabel('Subject').fill('Watering');
    await page.getByLabel('Section text').fill('Should we water daily? [[User:Ada]] ~~~~');
    await saveAndExpect(page, '/wiki/Talk:Garden');
    const body = page.locator('#content .wiki-body');
    await body.getByRole('heading', { name: /Watering/ }).waitFor();
    const text = await body.innerText();
    assert.ok(!text.includes('~~~~'), `the signature is expanded: ${text}`);
    assert.match(text, /Should we water daily\? User:Ada Ben \(talk\) \d\d:\d\d, \d+ \w+ \d{4} \(UTC\)/, 'the name and the time');
    await assertUserLink(body.getByRole('link', { name: ben.name, exact: true }), ben);
    await shoot(page, 'talk-topic');
    await anonCached('/wiki/Garden', { has: 'pear tree' });
    await anonCached('/wiki/Talk:Garden', { has: 'Should we water daily' });
  });

  step('Ada sees the mention in her user bar and reads it at Special:Notifications', async () => {
    const page = use('ada');
    const count = page.locator('nav.user a.notifications .count');
    // The notification is written by a background job.
    await eventually(15_000, async () => {
      await page.goto('/wiki/Garden');
      assert.equal((await count.innerText({ timeout: 500 })).trim(), '1');
    });
    assert.equal(await count.getAttribute('aria-label'), '1 unread');
    await page.getByRole('banner').getByRole('link', { name: /^Notifications/ }).click();
    await page.waitForURL((u) => u.pathname === '/wiki/Special:Notifications');
    const item = page.locator('ul.notifications-list > li', { hasText: `${ben.name} mentioned you on Talk:Garden` });
    await item.waitFor();
    assert.equal(await page.locator('ul.notifications-list > li').count(), 1);
    await item.locator('.new-flag', { hasText: 'new' }).waitFor(); // new to this view
    assert.equal(await count.count(), 0, 'reading the list clears the count, on this page already');
    await shoot(page, 'notifications');
    await page.goto('/wiki/Garden');
    await page.locator('nav.user a.notifications').waitFor();
    assert.equal(await count.count(), 0, 'no unread count once read');
    assert.equal(await page.locator('nav.user a.notifications.unread').count(), 0);
  });

  step('Ada answers by editing the "Watering" section', async () => {
    const page = use('ada');
    await page.goto('/wiki/Talk:Garden');
    const heading = page.locator('#content .wiki-body').getByRole('heading', { name: /Watering/ });
    await heading.locator('span.mw-editsection a').click();
    await page.waitForURL((u) => u.searchParams.get('action') === 'edit' && u.searchParams.get('section') === '1');
    const text = page.getByLabel('Section text');
    const section = await text.inputValue();
    assert.match(section, /Watering/);
    assert.match(section, /Should we water daily\?/);
    await text.fill(section.trimEnd() + '\n\nYes, daily. ~~~~');
    await page.getByRole('button', { name: 'Save page' }).click();
    await page.waitForURL((u) => u.pathname === '/wiki/Talk:Garden' && !u.searchParams.has('action'));
    const body = page.locator('#content .wiki-body');
    await body.getByText(/Yes, daily\./).waitFor();
    assert.ok(!(await body.innerText()).includes('~~~~'));
    await assertUserLink(body.getByRole('link', { name: ada.name, exact: true }), ada);
    assert.equal(await body.getByRole('heading', { name: /Watering/ }).count(), 1, 'still one Watering section');
  });

  step('Ben’s watchlist lists Ada’s answer on Talk:Garden', async () => {
    const page = use('ben');
    const entry = page.locator('ul.changes > li', { hasText: 'Talk:Garden' }).filter({ hasText: ada.name });
    await eventually(10_000, async () => {
      await page.goto('/wiki/Special:Watchlist');
      assert.equal(await entry.count(), 1, 'one entry for Ada’s answer');
    });
    await shoot(page, 'watchlist');
    // Ben was not mentioned: no notification for him.
    assert.equal(await page.locator('nav.user a.notifications .count').count(), 0);
    await anonCached('/wiki/Talk:Garden', { has: 'Yes, daily.' });
  });

  step('a vandal appends spam to Garden twice', async () => {
    const page = use('vandal');
    await logIn(page, vandal);
    for (const line of spam.slice(0, 2)) await appendLine(page, 'Garden', line);
    await anonCached('/wiki/Garden', { has: spam[1] });
  });

  step('Ada undoes the latest spam from the history', async () => {
    const page = use('ada');
    await page.goto('/wiki/Garden?action=history');
    const rows = page.locator('ul.history > li');
    assert.equal(await rows.count(), 3);
    assert.match(await rows.nth(0).innerText(), new RegExp(vandal.name));
    await rows.nth(0).getByRole('link', { name: 'undo', exact: true }).click();
    await page.waitForURL((u) => u.searchParams.get('action') === 'edit' && u.searchParams.has('undo'));
    await page.getByRole('note').filter({ hasText: 'save to undo the edit' }).waitFor();
    await page.getByRole('region', { name: 'Changes the undo makes' }).locator('del', { hasText: spam[1] }).first().waitFor();
    const text = await page.getByLabel('Page text').inputValue();
    assert.ok(!text.includes(spam[1]) && text.includes(spam[0]), `the text less the latest spam: ${text}`);
    assert.match(await page.getByLabel('Summary').inputValue(), /Undo revision \d+ by .*Vandal/i);
    await shoot(page, 'undo-form');
    await saveAndExpect(page, '/wiki/Garden');
    await assertBody(page, { has: spam[0], lacks: spam[1] });
    await anonCached('/wiki/Garden', { has: spam[0], lacks: spam[1] });
  });

  step('Ada undoes the older spam too, from its history row', async () => {
    const page = use('ada');
    await page.goto('/wiki/Garden?action=history');
    const rows = page.locator('ul.history > li');
    assert.equal(await rows.count(), 4);
    // Newest first: Ada's undo, the two spam edits, Ada's first revision.
    const first = rows.nth(2);
    assert.match(await first.innerText(), new RegExp(vandal.name));
    await first.getByRole('link', { name: 'undo', exact: true }).click();
    await page.waitForURL((u) => u.searchParams.get('action') === 'edit' && u.searchParams.has('undo'));
    assert.equal((await page.getByLabel('Page text').inputValue()).trimEnd(), gardenText);
    await saveAndExpect(page, '/wiki/Garden');
    await assertBody(page, { has: 'pear tree', lacks: 'SPAM' });
    await page.goto('/wiki/Garden?action=history');
    for (const i of [0, 1]) {
      const row = rows.nth(i);
      assert.match(await row.innerText(), new RegExp(ada.name));
      await row.locator('span.tag.tag-undo', { hasText: 'undo' }).waitFor();
    }
    assert.equal(await rows.nth(2).locator('span.tag').count(), 0, 'the vandal’s edit has no tag');
    await anonCached('/wiki/Garden', { has: 'pear tree', lacks: 'SPAM' });
  });

  step('Ben rolls back a second spree with the history’s rollback button', async () => {
    await appendLine(use('vandal'), 'Garden', spam[2]);
    await appendLine(use('vandal'), 'Garden', spam[3]);
    const page = use('ben');
    await page.goto('/wiki/Garden?action=history');
    const button = page.getByRole('button', { name: 'rollback 2 edits', exact: true });
    // Without a script a GET of its target asks first.
    const target = await button.getAttribute('formaction');
    await page.goto(target);
    await page.getByRole('heading', { name: 'Roll back edits to Garden' }).waitFor();
    await page.getByText(`Revert the 2 latest edits by ${vandal.name}`).waitFor();
    await page.getByRole('button', { name: 'Roll back', exact: true }).waitFor();
    await page.goBack();
    await button.click();
    await page.waitForURL((u) => u.pathname === '/wiki/Garden' && u.searchParams.has('diff'));
    await page.goto('/wiki/Garden');
    await assertBody(page, { has: 'pear tree', lacks: 'SPAM' });
    await page.goto('/wiki/Garden?action=edit');
    assert.equal((await page.getByLabel('Page text').inputValue()).trimEnd(), gardenText, 'Ada’s text, verbatim');
    await page.goto('/wiki/Garden?action=history');
    const top = page.locator('ul.history > li').first();
    assert.match(await top.innerText(), new RegExp(ben.name));
    await top.locator('span.tag.tag-rollback', { hasText: 'rollback' }).waitFor();
    await shoot(page, 'history-tags');
    await anonCached('/wiki/Garden', { has: 'pear tree', lacks: 'SPAM' });
  });

  step('RecentChanges shows the rollback and the undos with their tags', async () => {
    const page = use('ada');
    await page.goto('/wiki/Special:RecentChanges');
    const garden = page.locator('ul.changes > li', { hasText: 'Garden' }).filter({ hasNotText: 'Talk:Garden' });
    await garden.filter({ hasText: ben.name }).locator('span.tag-rollback').waitFor();
    assert.equal(await garden.filter({ hasText: ada.name }).locator('span.tag-undo').count(), 2);
  });

  step('no page had a script error or a CSP violation', { always: true }, async () => {
    assert.deepEqual(problems, []);
  });
});

// anonCached fetches pathname twice as an anonymous reader (no cookies):
// the second answer comes from the edge cache, has the text it should, and
// neither shows a logged-in user's star, notifications or name.
async function anonCached(pathname, { has, lacks } = {}) {
  await eventually(10_000, async () => {
    const res = [];
    for (let i = 0; i < 2; i++) {
      const r = await fetch(server.url + pathname, { redirect: 'manual', signal: AbortSignal.timeout(10_000) });
      res.push({ status: r.status, cache: r.headers.get('x-cache'), html: await r.text() });
    }
    for (const { status, html } of res) {
      assert.equal(status, 200, `anonymous GET ${pathname}`);
      assert.ok(!html.includes('Unwatch'), `an anonymous ${pathname} shows no star`);
      assert.ok(!/notifications/i.test(html), `an anonymous ${pathname} shows no notifications`);
      const bar = /<nav class="user"[^>]*>([\s\S]*?)<\/nav>/.exec(html)?.[1] ?? '';
      assert.match(bar, /Log in/, `the anonymous user bar of ${pathname}`);
      for (const u of users) assert.ok(!bar.includes(u.name), `${u.name} in the anonymous user bar of ${pathname}: ${bar}`);
      if (has) assert.ok(html.includes(has), `anonymous ${pathname} has "${has}"`);
      if (lacks) assert.ok(!html.includes(lacks), `anonymous ${pathname} lacks "${lacks}"`);
    }
    assert.equal(res[1].cache, 'HIT', `the second anonymous GET ${pathname} is a cache hit (first: ${res[0].cache})`);
  });
}

// appendLine adds a paragraph to a page through its edit form.
async function appendLine(page, title, line) {
  await page.goto(`/wiki/${title}?action=edit`);
  const text = page.getByLabel('Page text');
  const old = await text.inputValue();
  await text.fill(old.trimEnd() + '\n\n' + line);
  await page.getByLabel('Summary').fill('improved');
  await saveAndExpect(page, `/wiki/${title}`);
  await page.locator('#content .wiki-body', { hasText: line }).waitFor();
}

async function assertBody(page, { has, lacks }) {
  const text = await page.locator('#content .wiki-body').innerText();
  if (has) assert.ok(text.includes(has), `the page has "${has}": ${text}`);
  if (lacks) assert.ok(!text.includes(lacks), `the page lacks "${lacks}": ${text}`);
}

// The star's accessible names: style.css draws the star (☆ or ★) before
// the word, and Chromium counts it in.
const watchName = /^[☆★]?\s*Watch$/;
const unwatchName = /^[☆★]?\s*Unwatch$/;

// assertUserLink checks a signature's link to the user page (a red link
// while the page does not exist).
async function assertUserLink(link, u) {
  await link.waitFor();
  const href = new URL(await link.getAttribute('href'), server.url);
  assert.equal(decodeURIComponent(href.pathname), `/wiki/User:${u.name}`, `the signature links to ${u.name}'s user page`);
}

function tabs(page) {
  return page.getByRole('navigation', { name: 'Page actions' });
}

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
// violations there) other than the failed loads of 4xx answers (Talk:Garden
// is a 404 until Ben writes it).
function watch(page, who) {
  page.on('pageerror', (err) => problems.push(`${who} ${page.url()}: ${err.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && !/^Failed to load resource: the server responded with a status of 4\d\d/.test(m.text())) {
      problems.push(`${who} ${page.url()}: console: ${m.text()}`);
    }
  });
}

function use(who) {
  current = as[who].page;
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
      await current?.screenshot({ path: path.join(shotDir, 'collab-failure.png'), fullPage: true }).catch(() => {});
      throw err;
    }
  });
}

// shoot saves the page at desktop size.
async function shoot(page, name) {
  await page.screenshot({ path: path.join(shotDir, `collab-${name}-desktop.png`), fullPage: true });
}

async function logIn(page, u) {
  await page.goto('/wiki/Special:UserLogin');
  await page.getByLabel('Username', { exact: true }).fill(u.name);
  await page.getByLabel('Password', { exact: true }).fill(u.password);
  await page.getByRole('button', { name: 'Log in', exact: true }).click();
  await page.waitForURL((url) => url.pathname !== '/wiki/Special:UserLogin');
  await page.getByRole('banner').getByRole('link', { name: u.name, exact: true }).waitFor();
}

// saveAndExpect clicks "Save page" and waits to be sent to the page's view.
async function saveAndExpect(page, pathname) {
  await page.getByRole('button', { name: 'Save page' }).click();
  await page.waitForURL((u) => u.pathname === pathname && !u.searchParams.has('action'));
}
