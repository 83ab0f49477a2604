// XSS corpus in a real browser. Every vector of e2e/xss-data/vectors.json (a
// deterministic selection from the PyPI package brs-kb, see xss-data/README.md)
// is saved through the REST API as page text, in wiki link labels and targets,
// table cells, headings (and so the TOC), macro parameters, category names,
// edit summaries, titles and user names, then every surface that shows them is
// opened in headless Chromium: page views (anonymous and logged in), the REST
// HTML, history, diffs, RecentChanges, AllPages, categories, search (query and
// snippets), previews, the upload form (the file name asked for), and
// error/missing pages with the vector in the URL.
//
// Hooks record any dialog, any call of alert/confirm/prompt/print, any
// CSP violation, any popup or navigation away, and any request to an origin
// other than the wiki's (those are aborted, so nothing leaves the machine).
// Each page's DOM is also scanned for on* attributes, javascript:/data: URLs
// and elements the templates never emit. Everything runs twice: with the
// wiki's CSP, and with CSP bypassed (the HTML itself must be clean). 0 allowed.
//
// XSS_FULL=1: one page per vector instead of 20 per page, and every
// category and consecutive diff. Needs bin/wikid (make build) like wiki.test.mjs.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import {
  chromiumArgs, chromiumBin, cli, eventually, sleep, startWikid, stopWikid, tempDir, wikidBin,
} from './lib/wikid.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const FULL = process.env.XSS_FULL === '1';
const BATCH = FULL ? 1 : 20;
const corpus = JSON.parse(readFileSync(path.join(here, 'xss-data/vectors.json'), 'utf8'));
const vectors = corpus.vectors.map((v) => v.payload);
const PASSWORD = 'xss-corpus-password-1';
const BOT = 'XssBot';

let server;
let browser;
let token; // BOT's API token
const users = []; // { name, token } vector-named users created with the CLI
const batches = []; // { n, text: {title, key, first, last, revs: []}, variants: {key}, vecs: [] }
const titleKeys = []; // keys of pages created with a vector as the title
const categoryKeys = new Set();
const badTitles = []; // vectors refused as titles
const formUsers = { created: [], refused: [] };
const surfaces = new Map(); // surface → number of vector placements shown
const stats = { navigations: 0, vectorsTried: vectors.length };
const findings = []; // { pass, url, kind, detail }
let failed = null;

const onlyVector = (v) => v.replace(/[\r\n]+/g, ' ');
const urlFor = (key) => '/wiki/' + key.split('/').map(encodeURIComponent).join('/').replace(/%3A/g, ':');
const count = (surface, n) => surfaces.set(surface, (surfaces.get(surface) ?? 0) + n);

describe('the XSS corpus in a real browser', { timeout: FULL ? 3_600_000 : 600_000 }, () => {
  before(async () => {
    assert.ok(existsSync(wikidBin), `no wikid binary at ${wikidBin}: run "make build" (or set WIKID_BIN)`);
    assert.ok(existsSync(chromiumBin), `no browser at ${chromiumBin}: apt-get install -y chromium`);
    assert.ok(vectors.length >= 200, `only ${vectors.length} vectors in xss-data/vectors.json`);
    const data = tempDir('wikid-xss-data-');
    // Accounts before the server starts: one for the API, and vector-named ones.
    mustCLI(data, ['user', 'add', BOT], PASSWORD + '\n');
    token = mustCLI(data, ['token', 'create', BOT]).trim();
    for (const name of userNameVectors()) {
      const r = cli(data, ['user', 'add', name], PASSWORD + '\n');
      assert.ok(r.signal === null && (r.status === 0 || r.status === 1), `wikid user add ${JSON.stringify(name)}: ${r.status} ${r.signal} ${r.stderr}`);
      if (r.status !== 0) {
        assert.match(r.stderr, /^wikid: /, `a refused name gets a message: ${r.stderr}`);
        continue;
      }
      users.push({ name, token: mustCLI(data, ['token', 'create', name]).trim() });
    }
    assert.ok(users.length >= 2, `at least two vector-named users: ${JSON.stringify(users)}`);
    server = await startWikid(data);
    // Requests to other hosts go to a closed port: they fail without leaving the machine.
    browser = await chromium.launch({ executablePath: chromiumBin, headless: true, args: chromiumArgs,
      proxy: { server: 'http://127.0.0.1:9', bypass: '127.0.0.1' } });
  });

  after(async () => {
    await browser?.close();
    await stopWikid(server, failed);
  });

  step('saves every vector as page text, one revision and edit summary per vector', async () => {
    for (let i = 0, n = 0; i < vectors.length; i += BATCH, n++) batches.push({ n, vecs: vectors.slice(i, i + BATCH) });
    await pool(batches, 4, async (b) => {
      const tag = String(b.n).padStart(3, '0');
      // Revision 0 has a slot per vector; edit j fills slot j with vector j and
      // has vector j as its summary, so that every diff shows it word by word.
      let text = `Batch ${tag} of the XSS corpus: xsscorpusbatch${tag}.\n\n` +
        b.vecs.map((_, j) => `## Vector ${j + 1}\n\nxss-slot-${j}-x\n`).join('\n');
      const created = await api('POST', '/w/rest.php/v1/page', { title: `XSS text ${tag}`, source: text, comment: 'corpus batch' });
      assert.equal(created.status, 201, `create XSS text ${tag}: ${created.text}`);
      b.text = { key: created.json.key, revs: [created.json.latest.id] };
      for (let j = 0; j < b.vecs.length; j++) {
        const who = j % 5 === 4 ? users[j % users.length].token : token; // some edits by vector-named users
        text = text.split(`xss-slot-${j}-x`).join(b.vecs[j]);
        const r = await api('PUT', `/w/rest.php/v1/page/${encodeURIComponent(b.text.key)}`,
          { source: text, comment: b.vecs[j], latest: { id: b.text.revs.at(-1) } }, who);
        assert.equal(r.status, 200, `edit ${b.text.key} with vector ${j}: ${r.text}`);
        b.text.revs.push(r.json.latest.id);
      }
    });
    count('page text', vectors.length);
    count('edit summaries', vectors.length);
  });

  step('saves every vector in links, a table, a heading, a macro and a category', async () => {
    await pool(batches, 4, async (b) => {
      const tag = String(b.n).padStart(3, '0');
      const src = [`Variants of batch ${tag}.`];
      for (const v of b.vecs.map(onlyVector)) {
        src.push(
          `### ${v}`,
          `Label: [[XSS text ${tag}|${v}]] and target: [[${v}]] and [[${v}|label]].`,
          `| cell | other |\n|---|---|\n| ${v.replace(/\|/g, '\\|')} | [[Main Page\\|${v.replace(/\|/g, '\\|')}]] |`,
          `Link title [t](/wiki/Main_Page "${v}") and image alt ![${v}](x).`,
          `{{AllPages|prefix=${v}}}`,
          `[[Category:${v}]]`,
        );
      }
      const r = await api('POST', '/w/rest.php/v1/page', { title: `XSS variants ${tag}`, source: src.join('\n\n'), comment: b.vecs[0] });
      assert.equal(r.status, 201, `create XSS variants ${tag}: ${r.text}`);
      b.variants = { key: r.json.key };
    });
    for (const s of ['wiki link labels', 'wiki link targets', 'table cells', 'headings and TOC', 'link titles and image alt', 'macro parameters', 'category names'])
      count(s, vectors.length);
  });

  step('tries every vector as a title: a page or a clean 400', async () => {
    await pool(vectors, 4, async (v) => {
      const r = await api('POST', '/w/rest.php/v1/page', { title: v, source: `Page titled with a vector.\n\n${v}`, comment: v });
      assert.match(r.ct ?? '', /^application\/json/, `title ${JSON.stringify(v)}: ${r.status} ${r.ct}`);
      if (r.status === 201) titleKeys.push(r.json.key);
      else if (r.status === 400) {
        assert.equal(r.json?.httpCode, 400, r.text);
        assert.equal(typeof r.json?.messageTranslations?.en, 'string', r.text);
        badTitles.push(v);
      } else assert.equal(r.status, 409, `title ${JSON.stringify(v)}: ${r.status} ${r.text}`); // two vectors, one title
    });
    assert.ok(titleKeys.length > 0 && badTitles.length > 0, `${titleKeys.length} valid, ${badTitles.length} refused`);
    count('titles', vectors.length);
  });

  step('background jobs finish (links, categories, search index)', async () => {
    await eventually(120_000, async () => {
      const out = mustCLI(server.data, ['jobs', 'stats']);
      assert.match(out, /queued\s+0\b/, out);
      assert.match(out, /running\s+0\b/, out);
    });
    const cats = await api('GET', '/w/rest.php/v1/search/page?q=xsscorpusbatch000&limit=1');
    assert.equal(cats.status, 200, cats.text);
  });

  for (const bypassCSP of [true, false]) {
    const pass = bypassCSP ? 'CSP bypassed' : 'with CSP';
    let b; // openPass

    step(`${pass}: opens every surface anonymously`, async () => {
      b = await openPass(bypassCSP);
      b.main = await newTab(b);
      await probe(b, b.main);
      await visitAll(b, anonymousURLs(bypassCSP));
    });

    step(`${pass}: user names through the form, logged-in views, previews`, async () => {
      const { page } = b.main;
      const tab = b.main;
      if (bypassCSP) {
        // Register vector-named users through the form (a few: registration may be throttled).
        for (const name of formUserNames()) {
          await visit(b, tab, '/wiki/Special:CreateAccount');
          await page.getByLabel('Username', { exact: true }).fill(name);
          await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
          await page.getByLabel('Confirm password', { exact: true }).fill(PASSWORD);
          const [resp] = await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Create account' }).click()]);
          const status = resp?.status() ?? 0;
          assert.ok([200, 400, 409, 429].includes(status), `register ${JSON.stringify(name)}: HTTP ${status}`);
          await settle(b, tab, page.url());
          if (new URL(page.url()).pathname === '/wiki/Special:CreateAccount') {
            await page.locator('.error[role=alert]').waitFor();
            formUsers.refused.push(name);
          } else {
            formUsers.created.push(name);
            await page.getByRole('banner').getByRole('button', { name: 'Log out' }).click();
            await page.waitForURL((u) => u.pathname !== '/wiki/Special:UserLogout');
          }
        }
        count('user names', users.length + formUsers.created.length + formUsers.refused.length);
      }
      const uploadNames = vectors.filter((_, i) => FULL || i % 10 === 0).map((v) => v.slice(0, 250));
      // Log in as a vector-named user: the user bar is spliced into cached pages.
      const me = users[bypassCSP ? 0 : 1];
      await visit(b, tab, '/wiki/Special:UserLogin');
      await page.getByLabel('Username', { exact: true }).fill(me.name);
      await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
      await page.getByRole('button', { name: 'Log in', exact: true }).click();
      await page.waitForURL((u) => u.pathname !== '/wiki/Special:UserLogin');
      await page.getByRole('banner').getByRole('button', { name: 'Log out' }).waitFor();
      await visitAll(b, [
        ...batches.flatMap((bt) => [urlFor(bt.text.key), urlFor(bt.variants.key), `${urlFor(bt.text.key)}?action=history`]),
        ...titleKeys.slice(0, FULL ? undefined : 20).map(urlFor),
        '/wiki/Special:RecentChanges?limit=500',
        // The upload form echoes the name asked for (wpDestFile, as a red
        // file link sends it) and runs upload.js: every 10th vector.
        ...uploadNames.map((v) => '/wiki/Special:Upload?' + new URLSearchParams({ wpDestFile: v })),
      ]);
      if (bypassCSP) count('upload form', uploadNames.length);
      // Previews: the batch text with a vector as the summary, through the edit form.
      for (const bt of batches) {
        await visit(b, tab, `/wiki/XSS_preview_${bt.n}?action=edit`);
        const text = bt.vecs.map((v, j) => `## Vector ${j + 1}\n\n${v}\n`).join('\n') + '\n\n' +
          bt.vecs.map((v) => `[[Main Page|${onlyVector(v)}]] [[Category:${onlyVector(v)}]]`).join('\n\n');
        await page.getByLabel('Page text').fill(text);
        await page.getByLabel('Summary').fill(onlyVector(bt.vecs[0]));
        await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Show preview' }).click()]);
        await page.locator('.preview').waitFor();
        await settle(b, tab, page.url());
      }
      if (bypassCSP) count('previews', vectors.length);
      await b.context.close();
    });
  }

  step('executed nothing, requested nothing foreign, served clean HTML', async () => {
    const by = (k) => findings.filter((f) => f.kind === k);
    const executed = [...by('dialog'), ...by('call'), ...by('csp-violation'), ...by('popup'), ...by('navigation')];
    const foreign = by('foreign-request');
    const dom = by('dom');
    const list = (fs) => fs.slice(0, 30).map((f) => `  [${f.pass}] ${f.url}: ${f.kind} ${f.detail}`).join('\n');
    const total = [...surfaces.values()].reduce((a, b) => a + b, 0);
    console.log(`xss: ${vectors.length} vectors (${corpus.source.package} ${corpus.source.version}) × ${surfaces.size} surfaces ` +
      `(${total} placements), ${stats.navigations} page loads in 2 passes (CSP on, CSP bypassed): ` +
      `${executed.length} executed, ${foreign.length} foreign requests, ${dom.length} unsafe DOM findings, ` +
      `titles: ${titleKeys.length} created, ${badTitles.length} refused with 400; ` +
      `user names: ${users.length + formUsers.created.length} created, ${formUsers.refused.length} refused; ` +
      `${by('pageerror').length} script errors (logged)`);
    console.log(`xss surfaces: ${[...surfaces].map(([k, v]) => `${k} ${v}`).join(', ')}`);
    if (by('pageerror').length) console.log(`script errors (not failures):\n${list(by('pageerror'))}`);
    const problems = [[executed, 'script ran'], [foreign, 'requests to other origins'], [dom, 'unsafe markup in served pages']]
      .filter(([fs]) => fs.length).map(([fs, what]) => `${what} (${fs.length}):\n${list(fs)}`);
    if (problems.length) {
      const out = path.join(tmpdir(), `wikid-xss-findings-${process.pid}.json`);
      writeFileSync(out, JSON.stringify(findings, null, 1));
      problems.push(`all findings: ${out}`);
    }
    assert.deepEqual(problems, []);
  });
});

// ---- the URLs to open ----

// With CSP (the HTML is the same; the bypassed pass is the strict one) the
// per-vector pages are sampled, every 10th, unless XSS_FULL=1.
function anonymousURLs(all) {
  const u = [];
  const pick = (_, i) => all || FULL || i % 10 === 0;
  const add = (surface, n, ...urls) => { u.push(...urls); count(surface, n); };
  const once = !surfaces.has('page views'); // count placements in the first pass only
  const c = once ? add : (_s, _n, ...urls) => u.push(...urls);
  for (const b of batches) {
    const k = b.text.key;
    c('page views', b.vecs.length * 2, urlFor(k), urlFor(b.variants.key));
    c('REST page HTML', b.vecs.length * 2, `/w/rest.php/v1/page/${encodeURIComponent(k)}/html`,
      `/w/rest.php/v1/page/${encodeURIComponent(b.variants.key)}/html`);
    c('history', b.vecs.length, `${urlFor(k)}?action=history`);
    c('diffs', b.vecs.length, `${urlFor(k)}?diff=${b.text.revs.at(-1)}&oldid=${b.text.revs[0]}`);
    if (FULL) for (let j = 1; j < b.text.revs.length; j++) u.push(`${urlFor(k)}?diff=${b.text.revs[j]}&oldid=${b.text.revs[j - 1]}`);
    c('old revisions', b.vecs.length, `${urlFor(k)}?oldid=${b.text.revs[Math.floor(b.text.revs.length / 2)]}`);
  }
  c('RecentChanges', vectors.length * 2, '/wiki/Special:RecentChanges?limit=500');
  c('AllPages', titleKeys.length, '/wiki/Special:AllPages?limit=1000');
  c('Special:Categories', vectors.length, '/wiki/Special:Categories?limit=1000');
  for (const user of users) c('contributions', 1, `/wiki/Special:Contributions/${encodeURIComponent(user.name)}`);
  // Category pages: every category in full mode, a spread otherwise.
  const cats = [...new Set(batches.flatMap((b) => b.vecs.map(onlyVector)))];
  for (const [i, v] of cats.entries()) if (FULL || i % 10 === 0) c('category pages', 1, urlFor('Category:' + v.trim()));
  // Pages with a vector as the title, and missing pages named after them.
  for (const key of titleKeys.filter(pick)) c('vector titles', 1, urlFor(key), urlFor(key + '_(missing)'));
  // Search: the vector as the query (echoed back) and snippets of the pages holding it.
  for (const v of vectors.filter(pick)) c('search', 1, '/wiki/Special:Search?' + new URLSearchParams({ q: v.slice(0, 280) }));
  // Error pages: the vector in the path and in the query.
  for (const [i, v] of badTitles.filter(pick).entries()) {
    c('error pages', 1, '/wiki/' + encodeURIComponent(v));
    if (FULL || i % 2 === 0) c('error pages', 1, '/w/index.php?' + new URLSearchParams({ title: v, action: 'history' }));
  }
  return u;
}

// ---- the browser ----

async function openPass(bypassCSP) {
  const pass = bypassCSP ? 'CSP bypassed' : 'with CSP';
  const context = await browser.newContext({ bypassCSP, baseURL: server.url, viewport: { width: 1280, height: 800 } });
  context.setDefaultTimeout(10_000);
  context.setDefaultNavigationTimeout(15_000);
  const origin = new URL(server.url).origin;
  const b = { context, origin, pass, bypassCSP, tabs: new Map() };
  const where = (page) => b.tabs.get(page)?.current ?? page?.url() ?? '?';
  // Anything that leaves the wiki is recorded; the browser's proxy (a closed
  // port) makes it fail, so nothing leaves the machine.
  context.on('request', (req) => {
    const url = req.url();
    if (url.startsWith(origin + '/') || url === 'about:blank' || url === 'about:srcdoc' || url.startsWith('data:')) return; // data: URLs: the DOM scan
    let page = null;
    try { page = req.frame().page(); } catch { /* service worker */ }
    // Wikid embeds no image from another site (they render as links), so every
    // request elsewhere is a finding.
    const kind = 'foreign-request';
    findings.push({ pass, url: where(page), kind, detail: `${req.resourceType()} ${url.slice(0, 200)}` });
  });
  // The recorder's name is random per run: no vector can call or replace it.
  const binding = 'xss_' + randomBytes(12).toString('hex');
  await context.exposeBinding(binding, ({ page }, kind, detail) => {
    findings.push({ pass, url: where(page), kind, detail: String(detail).slice(0, 300) });
  });
  await context.addInitScript(({ binding }) => {
    const record = window[binding];
    try { delete window[binding]; } catch { /* non-configurable: fine */ }
    for (const name of ['alert', 'confirm', 'prompt', 'print']) {
      const fn = function (...args) { record('call', `${name}(${args.map(String).join(', ')})`); return name === 'confirm' ? false : null; };
      try { Object.defineProperty(window, name, { value: fn, writable: false, configurable: false }); } catch { window[name] = fn; }
    }
    window.open = function (...args) { record('call', `window.open(${args.map(String).join(', ')})`); return null; };
    document.addEventListener('securitypolicyviolation', (e) =>
      record('csp-violation', `${e.violatedDirective} blocked ${e.blockedURI || 'inline'} at ${e.sourceFile}:${e.lineNumber} ${e.sample}`), true);
  }, { binding });
  context.on('page', (page) => {
    if (!b.opening && !b.tabs.has(page)) { findings.push({ pass, url: '?', kind: 'popup', detail: page.url() }); page.close().catch(() => {}); }
  });
  return b;
}

async function newTab(b) {
  const { pass, origin } = b;
  const tab = { current: '' };
  b.opening = (b.opening ?? 0) + 1; // the context's page event fires before newPage resolves
  const page = await b.context.newPage().finally(() => b.opening--);
  b.tabs.set(page, tab);
  tab.page = page;
  page.on('popup', (p) => { findings.push({ pass, url: tab.current, kind: 'popup', detail: p.url() }); p.close().catch(() => {}); });
  page.on('dialog', (d) => { findings.push({ pass, url: tab.current, kind: 'dialog', detail: `${d.type()} ${d.message()}` }); d.dismiss().catch(() => {}); });
  page.on('pageerror', (e) => findings.push({ pass, url: tab.current, kind: 'pageerror', detail: e.message }));
  page.on('console', (m) => { if (m.type() === 'error' && !/Failed to load resource|ERR_PROXY|ERR_TUNNEL/.test(m.text())) findings.push({ pass, url: tab.current, kind: 'pageerror', detail: `console: ${m.text()}` }); });
  page.on('framenavigated', (f) => {
    const u = f.url();
    if (u !== 'about:blank' && u !== 'about:srcdoc' && !u.startsWith(origin + '/')) findings.push({ pass, url: tab.current, kind: 'navigation', detail: u.slice(0, 200) });
  });
  return tab;
}

// probe proves the hooks work: a handler added through the DOM runs when CSP
// is bypassed and is blocked (and reported) when it is not.
async function probe(b, tab) {
  await visit(b, tab, '/wiki/Special:AllPages');
  const before = findings.length;
  await tab.page.evaluate(() => {
    const img = document.createElement('img');
    img.setAttribute('onerror', 'alert("probe")');
    img.src = '/no-such-image.png';
    document.body.append(img);
  });
  await eventually(3000, async () => assert.ok(findings.length > before, `${b.pass}: the probe was not recorded`));
  await sleep(100);
  const got = findings.splice(before);
  const kinds = new Set(got.map((f) => f.kind));
  if (b.bypassCSP) assert.ok(kinds.has('call'), `${b.pass}: probe alert not seen: ${JSON.stringify(got)}`);
  else assert.ok(kinds.has('csp-violation'), `${b.pass}: probe CSP violation not seen: ${JSON.stringify(got)}`);
}

// visitAll opens urls in n tabs at once.
async function visitAll(b, urls, n = 4) {
  const tabs = await Promise.all(Array.from({ length: n }, () => newTab(b)));
  let next = 0;
  await Promise.all(tabs.map(async (tab) => {
    while (next < urls.length) await visit(b, tab, urls[next++]);
  }));
  await Promise.all(tabs.map((t) => t.page.close()));
}

async function visit(b, tab, url) {
  await load(b, tab, url);
  // List pages: follow "Older changes →" / "Next page →" (a few pages at most).
  if (/Special:(RecentChanges|AllPages|Categories)/.test(url)) {
    for (let i = 0; i < 5; i++) {
      const next = await tab.page.locator('p.pager a').first().getAttribute('href', { timeout: 200 }).catch(() => null);
      if (!next) break;
      await load(b, tab, next);
    }
  }
}

async function load(b, tab, url) {
  tab.current = url;
  if (++stats.navigations % 200 === 0 && process.env.XSS_VERBOSE) console.error(`xss: ${stats.navigations} page loads, ${Math.round(performance.now() / 1000)} s`);
  const resp = await tab.page.goto(url, { waitUntil: 'load' });
  const status = resp?.status() ?? 0;
  if (status >= 500 || status === 0) findings.push({ pass: b.pass, url, kind: 'dom', detail: `HTTP ${status}` });
  await settle(b, tab, url);
}

// settle lets late handlers (ontoggle, animations, autofocus) fire, then scans the DOM.
async function settle(b, tab, url) {
  await sleep(FULL ? 150 : 20);
  const bad = await tab.page.evaluate(scanDOM, b.origin).catch((e) => [`scan failed: ${e.message}`]);
  for (const d of bad) findings.push({ pass: b.pass, url, kind: 'dom', detail: d });
}

// scanDOM runs in the page: everything the templates never emit.
function scanDOM(origin) {
  const bad = [];
  const urlAttrs = ['href', 'src', 'action', 'formaction', 'xlink:href', 'data', 'poster', 'background', 'srcset', 'ping', 'cite', 'longdesc', 'manifest', 'codebase', 'lowsrc', 'dynsrc'];
  const forbidden = new Set(['iframe', 'frame', 'frameset', 'object', 'embed', 'applet', 'base', 'svg', 'math', 'template', 'style', 'portal', 'fencedframe', 'xmp', 'noembed', 'noframes', 'plaintext', 'isindex', 'video', 'audio', 'source', 'track', 'marquee', 'keygen', 'dialog', 'slot', 'selectedcontent']);
  const okScheme = (v) => {
    const s = v.replace(/[\u0000-\u0020\u007f-\u00a0]+/g, '').toLowerCase();
    const m = /^([a-z][a-z0-9+.-]*):/.exec(s);
    return !m || ['http', 'https', 'mailto'].includes(m[1]);
  };
  const walk = (root) => {
    for (const el of root.querySelectorAll('*')) {
      const tag = el.localName;
      const where = `<${tag}${el.id ? '#' + el.id : ''}${el.className && typeof el.className === 'string' ? '.' + el.className.split(' ')[0] : ''}>`;
      if (el.shadowRoot) { bad.push(`shadow root on ${where}`); walk(el.shadowRoot); }
      if (forbidden.has(tag) || el.namespaceURI !== 'http://www.w3.org/1999/xhtml') bad.push(`element ${where} ns=${el.namespaceURI}`);
      if (tag === 'script') {
        const src = el.getAttribute('src') ?? '';
        if (!/^\/static\/(macros|suggest|watch|upload)\.[0-9a-f]+\.js$/.test(src) || el.textContent.trim() || el.parentNode !== document.head) bad.push(`script src=${src} ${el.textContent.slice(0, 80)}`);
      }
      if (tag === 'link' && !(el.getAttribute('rel') === 'stylesheet' && /^\/static\/style\.[0-9a-f]+\.css$/.test(el.getAttribute('href') ?? '')) &&
          !(el.getAttribute('rel') === 'search' && el.getAttribute('href') === '/w/opensearch_desc.php' && el.parentNode === document.head) &&
          // a page's feeds: the wiki's own URLs, in the head
          !(el.getAttribute('rel') === 'alternate' && ['application/atom+xml', 'application/rss+xml'].includes(el.getAttribute('type')) &&
            /^\/wiki\/[^/\\][^?#]*\?(?:[^#]*&)?feed=(?:atom|rss)(?:&|$)/.test(el.getAttribute('href') ?? '') && el.parentNode === document.head))
        bad.push(`link ${el.outerHTML.slice(0, 120)}`);
      if (tag === 'meta' && (el.hasAttribute('http-equiv') || !(el.hasAttribute('charset') || ['viewport', 'robots'].includes(el.getAttribute('name'))))) bad.push(`meta ${el.outerHTML.slice(0, 120)}`);
      if (tag === 'form') {
        const a = el.getAttribute('action') ?? '';
        if (!a.startsWith('/') || a.startsWith('//') || a.startsWith('/\\')) bad.push(`form action=${a}`);
      }
      for (const attr of el.attributes) {
        const n = attr.name.toLowerCase();
        if (n.startsWith('on')) bad.push(`${where} ${n}=${attr.value.slice(0, 80)}`);
        if (n === 'style' || n === 'srcdoc' || n === 'formaction' || n === 'is' || n.startsWith('xmlns') || n === 'popover' || n === 'contenteditable' || n.includes(':'))
          bad.push(`${where} attribute ${n}=${attr.value.slice(0, 80)}`);
        if (urlAttrs.includes(n) && !okScheme(attr.value)) bad.push(`${where} ${n}=${attr.value.slice(0, 80)}`);
        if (tag === 'img' && n === 'src') {
          const u = new URL(attr.value, document.baseURI);
          if (u.origin !== origin && u.protocol !== 'https:') bad.push(`${where} loads ${u.href.slice(0, 100)}`);
        }
      }
    }
  };
  walk(document);
  if (document.baseURI !== location.href.split('#')[0] && document.baseURI !== location.href) bad.push(`base URI changed to ${document.baseURI}`);
  return bad;
}

// ---- input ----

// userNameVectors: short vectors for CLI accounts; the ones NormalizeUserName
// refuses must fail cleanly. Deterministic: first six under 60 characters
// without '<' (likely valid), and three with '<' (always refused).
function userNameVectors() {
  const short = vectors.filter((v) => v.length <= 60 && !/[\r\n]/.test(v));
  const valid = short.filter((v) => !/[<>[\]{}|#/:@%~]/.test(v)).slice(0, 6);
  return [...valid, ...short.filter((v) => v.includes('<')).slice(0, 3)];
}

// formUserNames: a few more for the registration form, other than the CLI ones.
function formUserNames() {
  const short = vectors.filter((v) => v.length <= 60 && !/[\r\n]/.test(v));
  return [...short.filter((v) => !/[<>[\]{}|#/:@%~]/.test(v)).slice(6, 9), ...short.filter((v) => v.includes('<')).slice(3, 6)];
}

// ---- plumbing ----

function mustCLI(data, args, input) {
  const r = cli(data, args, input);
  assert.equal(r.status, 0, `wikid ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

async function api(method, p, body, bearer = token) {
  const headers = { authorization: `Bearer ${bearer}` };
  if (body) headers['content-type'] = 'application/json';
  const r = await fetch(server.url + p, { method, headers, body: body && JSON.stringify(body), redirect: 'manual' });
  const text = await r.text();
  let json = null;
  try { json = JSON.parse(text); } catch { /* not JSON */ }
  assert.ok(r.status < 500, `${method} ${p}: HTTP ${r.status} ${text.slice(0, 300)}`);
  return { status: r.status, json, text, ct: r.headers.get('content-type') };
}

async function pool(items, n, fn) {
  let next = 0;
  await Promise.all(Array.from({ length: n }, async () => {
    while (next < items.length) await fn(items[next++]);
  }));
}

function step(name, fn) {
  it(name, async (t) => {
    if (failed) return t.skip(`an earlier step failed: ${failed}`);
    const t0 = Date.now();
    try {
      await fn();
      if (process.env.XSS_VERBOSE) console.error(`xss: ${name}: ${Date.now() - t0} ms, ${stats.navigations} page loads so far`);
    } catch (err) {
      failed ??= name;
      throw err;
    }
  });
}
