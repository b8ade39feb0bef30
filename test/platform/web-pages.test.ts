import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { contentSecurityPolicy } from '../../api/plugins/web-pages';
import { WEB_DIST, WEB_MANIFEST } from '../../web/manifest';
import { html } from '../../web/shared/html';
import { pageShell } from '../../web/shared/page-shell';
import { ctx } from '../support/root-hooks';

describe('pages: the one toolchain (web/, esbuild, /assets/)', () => {
  it('serves each built file under a content-hashed name, cached for good; anything else under /assets/ is 404', async () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(WEB_DIST, WEB_MANIFEST), 'utf8')) as Record<string, string>;
    for (const [name, file] of Object.entries(manifest)) {
      assert.equal(ctx.app.webAsset(name), `/assets/${file}`);
      const res = await ctx.app.inject({ method: 'GET', url: `/assets/${file}` });
      assert.equal(res.statusCode, 200, file);
      assert.match(res.headers['cache-control'] as string, /immutable/);
      assert.match(res.headers['content-type'] as string, file.endsWith('.js') ? /^text\/javascript/ : /^text\/css/);
    }
    assert.equal(ctx.app.webAsset('nothing.js'), null);
    for (const url of ['/assets/nothing.js', `/assets/${WEB_MANIFEST}`, '/assets/..%2Fbuild.ts']) {
      assert.equal((await ctx.app.inject({ method: 'GET', url })).statusCode, 404, url);
    }
  });

  it('escapes every interpolated value; only SafeHtml passes through', () => {
    const words = '<script>alert("x")</script> & \'quotes\'';
    assert.equal(html`<p title="${words}">${words}</p>`.text,
      '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quotes&#39;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; ' +
        '&#39;quotes&#39;</p>');
    assert.equal(html`<ul>${['a<', 'b'].map((x) => html`<li>${x}</li>`)}</ul>`.text, '<ul><li>a&lt;</li><li>b</li></ul>');
    assert.equal(html`${html`<b>kept</b>`}${null}${undefined}${false}`.text, '<b>kept</b>');
    const shell = pageShell({ lang: 'en', title: 'A </title>', body: html`<p>hi</p>`, data: { note: '</script><script>' } });
    assert.ok(!shell.includes('</script><script>'), 'page data cannot close its script element');
    assert.match(shell, /<html lang="en">/);
  });

  it('a policy without unsafe-inline or unsafe-eval; framing refused unless origins are named', () => {
    const strict = contentSecurityPolicy();
    assert.doesNotMatch(strict, /unsafe-inline|unsafe-eval/);
    assert.match(strict, /frame-ancestors 'none'/);
    assert.match(strict, /script-src 'self'/);
    assert.match(contentSecurityPolicy({ frameAncestors: ['https://shop.example'] }), /frame-ancestors https:\/\/shop\.example/);
    assert.match(contentSecurityPolicy({ scripts: false }), /script-src 'none'/);
  });
});
