// Browser test of file uploads, as a person uploads and uses a picture: a
// new user registers, drags a PNG onto Special:Upload's drop zone (a real
// drop event with a DataTransfer), sees the name filled in and the progress
// bar move (the upload is throttled until the bar has been looked at), and
// lands on File:Harbour.png showing the picture. She puts it on a page as a
// right-aligned thumbnail with a caption, then uploads a new version (blue
// instead of orange) under the same name with the file input: the page
// using it, logged in and as a cached anonymous view, switches to the new
// picture once the job queue has re-rendered it, and the file page lists
// both versions and the page. The form refuses an HTML file named .png
// (the server's message in the form, no navigation) and a file over the
// wiki's max_upload_bytes (in the browser, nothing sent).
//
// The pictures are drawn on a canvas in the page: no binary file in the
// repository. Needs bin/wikid (make build) like wiki.test.mjs. Screenshots
// (desktop and phone) land in e2e/screenshots/files-*.png.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import {
  chromiumArgs, chromiumBin, eventually, startWikid, stopWikid, tempDir, wikidBin,
} from './lib/wikid.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const shotDir = path.join(here, 'screenshots');

const desktop = { width: 1280, height: 800 };
const phone = { width: 390, height: 844 };

// A small upload limit, so that the oversize file is small too.
const maxUploadBytes = 256 << 10;
const maxSize = '256 KiB';

const user = { name: 'Marta', password: 'marta password for the files test' };
const file = 'Harbour.png';
const article = 'Harbour walk';
const articlePath = '/wiki/Harbour_walk';
const caption = 'The harbour at dawn, from the lighthouse';
// The two versions: an orange dawn, then a blue noon.
const dawn = { sky: ['#ff9a3c', '#ffd29a'], sea: '#2d5d7b', sun: '#fff3c4' };
const noon = { sky: ['#2f6fd6', '#9cc7ff'], sea: '#163e5c', sun: '#ffffff' };

let server;
let browser;
let context; // Marta's
let page;
const problems = []; // script errors and console errors (CSP violations among them)
let failed = null;
let thumbSrc = null; // the first version's thumbnail on the article

describe('uploading a picture and showing it on a page', { timeout: 120_000 }, () => {
  before(async () => {
    assert.ok(existsSync(wikidBin), `no wikid binary at ${wikidBin}: run "make build" (or set WIKID_BIN)`);
    assert.ok(existsSync(chromiumBin), `no browser at ${chromiumBin}: apt-get install -y chromium`);
    mkdirSync(shotDir, { recursive: true });
    rmSync(path.join(shotDir, 'files-failure.png'), { force: true });
    server = await startWikid(tempDir('wikid-e2e-files-data-'), { config: { max_upload_bytes: maxUploadBytes } });
    browser = await chromium.launch({ executablePath: chromiumBin, headless: true, args: chromiumArgs });
    context = await browser.newContext({ baseURL: server.url, viewport: desktop });
    context.setDefaultTimeout(10_000);
    context.setDefaultNavigationTimeout(15_000);
    page = await context.newPage();
    watch(page, user.name);
  });

  after(async () => {
    await browser?.close();
    await stopWikid(server, failed);
  });

  step('a new user registers through the form', async () => {
    await page.goto('/wiki/Special:CreateAccount');
    await page.getByLabel('Username', { exact: true }).fill(user.name);
    await page.getByLabel('Password', { exact: true }).fill(user.password);
    await page.getByLabel('Confirm password', { exact: true }).fill(user.password);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL((u) => u.pathname !== '/wiki/Special:CreateAccount');
    await page.getByRole('banner').getByRole('link', { name: user.name, exact: true }).waitFor();
  });

  step('the sidebar’s "Upload file" opens Special:Upload, with the drop zone and the limit', async () => {
    await page.getByRole('navigation', { name: 'Site' }).getByRole('link', { name: 'Upload file' }).click();
    await page.waitForURL((u) => u.pathname === '/wiki/Special:Upload');
    await page.getByRole('heading', { name: 'Upload file' }).waitFor();
    await page.getByText(`Files up to ${maxSize}`).waitFor();
    assert.equal(await page.locator('#f-dest').inputValue(), '');
    assert.ok(await page.locator('#upload-error').isHidden());
    assert.ok(await page.locator('#upload-progress').isHidden());
    await shoot(page, 'upload-empty');
  });

  step('dropping a PNG on the drop zone names it and uploads it with a progress bar', async () => {
    const png = await picture(page, dawn);
    assert.ok(png.length < maxUploadBytes, `the picture (${png.length} bytes) fits the limit`);
    // A file chosen first names the upload; the file dropped next renames it.
    await page.locator('#f-file').setInputFiles({ name: 'IMG_0001.png', mimeType: 'image/png', buffer: png });
    assert.equal(await page.locator('#f-dest').inputValue(), 'IMG_0001.png');
    // The files of a real drop: a DataTransfer made in the page.
    const dt = await page.evaluateHandle(({ b64, name }) => {
      const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const data = new DataTransfer();
      data.items.add(new File([bytes], name, { type: 'image/png' }));
      return data;
    }, { b64: png.toString('base64'), name: file });
    const zone = page.locator('#dropzone');
    await zone.dispatchEvent('dragenter', { dataTransfer: dt });
    await zone.dispatchEvent('dragover', { dataTransfer: dt });
    assert.match(await zone.getAttribute('class'), /\bover\b/, 'the zone lights up under the drag');
    await zone.dispatchEvent('drop', { dataTransfer: dt });
    assert.doesNotMatch(await zone.getAttribute('class'), /\bover\b/);
    assert.equal(await page.locator('#f-dest').inputValue(), file, 'the name follows the dropped file');
    assert.equal(await page.locator('#f-file').evaluate((i) => i.files.length && i.files[0].name), file, 'the input holds the file');
    assert.match(await page.locator('#file-name').innerText(), new RegExp(`^${file} · \\d+(\\.\\d)? KiB$`));
    await page.getByLabel('Summary').fill('Dawn over the harbour');
    await page.getByLabel(/^Description/).fill('The harbour at dawn, drawn for the test.');

    // A slow link (the file would take 30 s) while the progress is looked
    // at, then a fast one.
    const cdp = await context.newCDPSession(page);
    const link = (uploadThroughput) => cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput });
    await cdp.send('Network.enable');
    await link(Math.ceil(png.length / 30));
    const bar = page.locator('#upload-progress progress');
    await page.getByRole('button', { name: 'Upload file' }).click();
    await page.locator('#upload-progress').waitFor();
    assert.ok(await page.getByRole('button', { name: 'Upload file' }).isDisabled(), 'no second click while it uploads');
    await page.waitForFunction(() => {
      const v = document.querySelector('#upload-progress progress').value;
      return v > 0 && v < 100;
    });
    const kib = (png.length / 1024).toFixed(1);
    assert.match(await page.locator('#upload-status').innerText(), new RegExp(`^Uploading… \\d+% of ${kib} KiB$`), 'the file’s own size');
    await shoot(page, 'upload-progress');
    const pct = await bar.evaluate((p) => p.value);
    assert.ok(pct > 0 && pct < 100, `still uploading after the screenshots: ${pct}%`);
    await link(-1);
    await page.waitForURL((u) => decodeURIComponent(u.pathname) === `/wiki/File:${file}`);
    await cdp.detach();
    assert.ok((await bar.count()) === 0, 'the file page has no progress bar');
    await page.getByRole('heading', { name: `File:${file}` }).waitFor();
    const img = page.locator('.file-preview img');
    await assertLoaded(img);
    assert.match(await img.getAttribute('src'), /^\/media\/[0-9a-f]{64}\//);
    await page.locator('.wiki-body', { hasText: 'drawn for the test' }).waitFor();
  });

  step('choosing a file with the file input works as well as a drop', async () => {
    await page.goto('/wiki/Special:Upload');
    const png = await picture(page, { sky: ['#7b5ea7', '#e3c7f2'], sea: '#35506b', sun: '#fff0f5' });
    await page.locator('#f-file').setInputFiles({ name: 'Dusk.png', mimeType: 'image/png', buffer: png });
    assert.equal(await page.locator('#f-dest').inputValue(), 'Dusk.png');
    await page.getByRole('button', { name: 'Upload file' }).click();
    await page.waitForURL((u) => u.pathname === '/wiki/File:Dusk.png');
    await assertLoaded(page.locator('.file-preview img'));
  });

  step('a page shows the picture as a right-aligned thumbnail with its caption', async () => {
    await page.goto(`${articlePath}?action=edit`);
    await page.getByLabel('Page text').fill([
      `[[File:${file}|thumb|240px|right|${caption}]]`,
      'The walk starts at the fish market and follows the quay to the lighthouse. ' +
        'Early in the morning the boats come back with the night’s catch, and the cafés open their shutters.',
      'From the end of the pier the whole bay is in view: the old town on its hill, the cranes of the new port ' +
        'and, on clear days, the islands. Allow an hour there and back, more with a coffee.',
      '## Getting there',
      'Tram 4 stops at the market; the walk is flat and fine for pushchairs.',
    ].join('\n\n'));
    await page.getByLabel('Summary').fill('A walk with a picture');
    await saveAndExpect(page, articlePath);
    const figure = page.locator('.wiki-body figure.thumb');
    await figure.waitFor();
    assert.match(await figure.getAttribute('class'), /\btright\b/);
    assert.equal((await figure.locator('figcaption').innerText()).trim(), caption);
    const img = figure.locator('img');
    await assertLoaded(img);
    thumbSrc = await img.getAttribute('src');
    assert.match(thumbSrc, new RegExp(`^/media/[0-9a-f]{64}/240px-${file.replace('.', '\\.')}$`));
    assert.match(await img.getAttribute('srcset'), /\/360px-Harbour\.png 1\.5x, \/media\/[0-9a-f]{64}\/480px-Harbour\.png 2x$/);
    const box = await img.boundingBox();
    assert.equal(Math.round(box.width), 240, 'shown 240 pixels wide');
    const geo = await figure.evaluate((f) => {
      const r = f.getBoundingClientRect();
      const body = f.closest('.wiki-body').getBoundingClientRect();
      return { float: getComputedStyle(f).float, right: r.right, bodyRight: body.right, width: r.width };
    });
    assert.equal(geo.float, 'right');
    assert.ok(geo.bodyRight - geo.right < 2, `against the right edge: ${JSON.stringify(geo)}`);
    assert.ok(geo.width < 260, `the figure is as wide as its picture, the caption wraps: ${JSON.stringify(geo)}`);
    assert.equal(await pixelColour(img), 'orange', 'the dawn picture');
    await shoot(page, 'thumbnail');
    await anonView(thumbSrc);
  });

  step('a new version under the same name replaces the picture everywhere', async () => {
    await page.goto(`/wiki/File:${file}`);
    await page.getByRole('link', { name: 'Upload a new version of this file' }).click();
    await page.waitForURL((u) => u.pathname === '/wiki/Special:Upload' && u.searchParams.get('wpDestFile') === file);
    await page.locator('.notice', { hasText: `A file named ${file} exists` }).waitFor();
    const png = await picture(page, noon);
    // The chosen file's own name does not replace the name asked for.
    await page.locator('#f-file').setInputFiles({ name: 'harbour-noon.png', mimeType: 'image/png', buffer: png });
    assert.equal(await page.locator('#f-dest').inputValue(), file);
    await page.getByLabel('Summary').fill('Noon instead of dawn');
    await page.getByRole('button', { name: 'Upload file' }).click();
    await page.waitForURL((u) => decodeURIComponent(u.pathname) === `/wiki/File:${file}`);
    const preview = page.locator('.file-preview img');
    await assertLoaded(preview);
    assert.equal(await pixelColour(preview), 'blue', 'the file page shows the new version');

    // The page using the file is re-rendered by a job: poll for the new picture.
    let src = null;
    await eventually(20_000, async () => {
      await page.goto(articlePath);
      src = await page.locator('.wiki-body figure.thumb img').getAttribute('src');
      assert.notEqual(src, thumbSrc, 'the thumbnail changes');
    });
    assert.match(src, /^\/media\/[0-9a-f]{64}\/240px-Harbour\.png$/);
    const img = page.locator('.wiki-body figure.thumb img');
    await assertLoaded(img);
    assert.equal(await pixelColour(img), 'blue', 'the noon picture');
    assert.equal((await page.locator('.wiki-body figure.thumb figcaption').innerText()).trim(), caption);
    await anonView(src);
  });

  step('the file page lists both versions and the page using the file', async () => {
    await page.goto(`/wiki/File:${file}`);
    const rows = page.locator('table.file-versions tbody tr');
    assert.equal(await rows.count(), 2, 'two versions');
    assert.match(await rows.nth(0).getAttribute('class'), /\bcurrent-version\b/);
    assert.match(await rows.nth(0).innerText(), /current[\s\S]*640 × 400[\s\S]*Marta[\s\S]*Noon instead of dawn/);
    assert.match(await rows.nth(1).innerText(), /640 × 400[\s\S]*Marta[\s\S]*Dawn over the harbour/);
    for (const i of [0, 1]) await assertLoaded(rows.nth(i).locator('img'));
    assert.equal(await pixelColour(rows.nth(1).locator('img')), 'orange', 'the old version keeps its own thumbnail');
    // The shared page offers no revert: that is the administrators'
    // Revert file tab.
    assert.equal(await page.getByRole('link', { name: 'revert' }).count(), 0, 'no revert link on the shared page');
    const oldSHA = /^\/media\/([0-9a-f]{64})\/Harbour\.png$/.exec(await rows.nth(1).getByRole('link').first().getAttribute('href'))?.[1];
    assert.ok(oldSHA, 'the old version’s date links to its bytes');
    const usage = page.locator('ul.file-usage li');
    assert.deepEqual(await usage.allInnerTexts(), [article]);
    await shoot(page, 'file-page');
  });

  step('an HTML file named .png is refused, with the server’s reason in the form', async () => {
    // On a phone, where the message above the form is a screen away from the button.
    await page.setViewportSize(phone);
    await page.goto('/wiki/Special:Upload');
    const url = page.url();
    await page.locator('#f-file').setInputFiles({
      name: 'Innocent.png', mimeType: 'image/png',
      buffer: Buffer.from('<!doctype html>\n<html><body><script>alert(document.cookie)</script></body></html>\n'),
    });
    assert.equal(await page.locator('#f-dest').inputValue(), 'Innocent.png');
    const [res] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/wiki/Special:Upload'),
      page.getByRole('button', { name: 'Upload file' }).click(),
    ]);
    assert.ok(res.status() >= 400 && res.status() < 500, `refused with a 4xx: ${res.status()}`);
    const error = page.locator('#upload-error');
    await error.waitFor();
    const message = await error.innerText();
    assert.match(message, /HTML/, `the reason names the content: ${message}`);
    assert.match(message, /^\p{Lu}.*\.$/u, `a sentence: ${message}`);
    assert.doesNotMatch(message, /HTTP \d+/, 'the server’s sentence, not the fallback');
    assert.equal(page.url(), url, 'no navigation');
    const seen = await error.evaluate((el) => {
      const r = el.getBoundingClientRect();
      return { top: r.top, bottom: r.bottom, height: innerHeight };
    });
    assert.ok(seen.top >= -1 && seen.bottom <= seen.height + 1, `the message is scrolled into view: ${JSON.stringify(seen)}`);
    await page.setViewportSize(desktop);
    assert.ok(await page.locator('#upload-progress').isHidden(), 'the progress bar is gone');
    assert.ok(await page.getByRole('button', { name: 'Upload file' }).isEnabled(), 'the form may be sent again');
    await shoot(page, 'upload-error');
    const missing = await fetch(`${server.url}/wiki/File:Innocent.png`, { redirect: 'manual' });
    assert.equal(missing.status, 404, 'no file page was made');
    await missing.arrayBuffer();
  });

  step('a file over the upload limit is refused in the browser, before sending', async () => {
    await page.goto('/wiki/Special:Upload');
    const posts = [];
    const onRequest = (r) => { if (r.method() === 'POST') posts.push(r.url()); };
    page.on('request', onRequest);
    const big = Buffer.alloc(maxUploadBytes + 1, 0x42);
    Buffer.from('\x89PNG\r\n\x1a\n', 'latin1').copy(big);
    await page.locator('#f-file').setInputFiles({ name: 'Huge.png', mimeType: 'image/png', buffer: big });
    const error = page.locator('#upload-error');
    await error.waitFor();
    assert.match(await error.innerText(), new RegExp(`larger than this wiki’s upload limit of ${maxSize}`));
    await page.getByRole('button', { name: 'Upload file' }).click();
    await page.waitForTimeout(300);
    page.off('request', onRequest);
    assert.deepEqual(posts, [], 'nothing is sent');
    assert.equal(new URL(page.url()).pathname, '/wiki/Special:Upload');
    assert.ok(await error.isVisible(), 'the message stays');
  });

  step('no page had a script error or a CSP violation', { always: true }, async () => {
    assert.deepEqual(problems, []);
  });
});

// picture draws a 640 × 400 harbour in palette on a canvas in page and
// returns it as PNG bytes.
async function picture(page, palette) {
  const b64 = await page.evaluate(async ({ sky, sea, sun }) => {
    const c = document.createElement('canvas');
    c.width = 640;
    c.height = 400;
    const g = c.getContext('2d');
    const grad = g.createLinearGradient(0, 0, 0, 260);
    grad.addColorStop(0, sky[0]);
    grad.addColorStop(1, sky[1]);
    g.fillStyle = grad;
    g.fillRect(0, 0, 640, 260);
    g.fillStyle = sun;
    g.beginPath();
    g.arc(460, 210, 48, 0, 2 * Math.PI);
    g.fill();
    g.fillStyle = sea;
    g.fillRect(0, 260, 640, 140);
    g.fillStyle = '#1d2a33'; // the lighthouse and the quay
    g.fillRect(80, 150, 28, 110);
    g.fillRect(0, 300, 260, 20);
    const blob = await new Promise((resolve) => c.toBlob(resolve, 'image/png'));
    const bytes = new Uint8Array(await blob.arrayBuffer());
    let s = '';
    for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    return btoa(s);
  }, palette);
  return Buffer.from(b64, 'base64');
}

// pixelColour reads the sky near an image's top-left corner: "orange" for
// the dawn, "blue" for the noon.
async function pixelColour(img) {
  const [r, , b] = await img.evaluate((el) => {
    const c = document.createElement('canvas');
    c.width = el.naturalWidth;
    c.height = el.naturalHeight;
    const g = c.getContext('2d');
    g.drawImage(el, 0, 0);
    return [...g.getImageData(Math.floor(c.width / 10), Math.floor(c.height / 20), 1, 1).data];
  });
  if (r > b + 60) return 'orange';
  if (b > r + 60) return 'blue';
  return `rgb(${r}, ?, ${b})`;
}

// assertLoaded waits for img to have loaded a picture.
async function assertLoaded(img) {
  await img.scrollIntoViewIfNeeded();
  await img.evaluate((el) => (el.complete ? null : new Promise((resolve) => {
    el.addEventListener('load', resolve, { once: true });
    el.addEventListener('error', resolve, { once: true });
  })));
  const w = await img.evaluate((el) => el.naturalWidth);
  assert.ok(w > 0, `${await img.getAttribute('src')} loaded (naturalWidth ${w})`);
}

// anonView opens the article in a browser context without a session, twice:
// the second answer is the edge cache's, and both show the thumbnail src.
async function anonView(src) {
  const anon = await browser.newContext({ baseURL: server.url, viewport: desktop });
  try {
    const p = await anon.newPage();
    watch(p, 'anonymous');
    await eventually(10_000, async () => {
      await p.goto(articlePath);
      const res = await p.reload();
      assert.equal(res.headers()['x-cache'], 'HIT', 'the anonymous view comes from the cache');
      assert.equal(await p.locator('.wiki-body figure.thumb img').getAttribute('src'), src, 'the anonymous view shows the same picture');
    });
    await p.getByRole('banner').getByRole('link', { name: 'Log in', exact: true }).waitFor();
    await assertLoaded(p.locator('.wiki-body figure.thumb img'));
  } finally {
    await anon.close();
  }
}

// watch records script errors and console errors other than the failed
// loads of 4xx answers (the refused uploads).
function watch(p, who) {
  p.on('pageerror', (err) => problems.push(`${who} ${p.url()}: ${err.message}`));
  p.on('console', (m) => {
    if (m.type() === 'error' && !/^Failed to load resource: the server responded with a status of 4\d\d/.test(m.text())) {
      problems.push(`${who} ${p.url()}: console: ${m.text()}`);
    }
  });
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
      await page?.screenshot({ path: path.join(shotDir, 'files-failure.png'), fullPage: true }).catch(() => {});
      throw err;
    }
  });
}

// shoot saves the page at desktop and phone sizes; at phone size nothing
// may stick out sideways (wide tables scroll in a box of their own).
async function shoot(p, name) {
  await p.screenshot({ path: path.join(shotDir, `files-${name}-desktop.png`), fullPage: true });
  await p.setViewportSize(phone);
  await p.screenshot({ path: path.join(shotDir, `files-${name}-phone.png`), fullPage: true });
  const { width, wide } = await p.evaluate(() => ({
    width: document.documentElement.scrollWidth,
    // The outermost elements that stick out, to say what to fix.
    wide: [...document.body.querySelectorAll('*')]
      .filter((el) => el.getBoundingClientRect().right > innerWidth + 0.5 && !(el.parentElement?.getBoundingClientRect().right > innerWidth + 0.5))
      .slice(0, 5).map((el) => `${el.localName}${el.id ? '#' + el.id : ''}.${[...el.classList].join('.')} (${Math.round(el.getBoundingClientRect().right)})`),
  }));
  await p.setViewportSize(desktop);
  assert.ok(width <= phone.width, `files-${name}: the page is ${width} pixels wide on a ${phone.width}-pixel phone: ${wide.join(', ')}`);
}

// saveAndExpect clicks "Save page" and waits to be sent to the page's view.
async function saveAndExpect(p, pathname) {
  await p.getByRole('button', { name: 'Save page' }).click();
  await p.waitForURL((u) => u.pathname === pathname && !u.searchParams.has('action'));
}
