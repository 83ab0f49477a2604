"""Drive a running Wikid with the real MediaWiki clients, mwclient and
pywikibot, through /w/api.php.

Usage: clients.py BASE_URL USER PASSWORD API_TOKEN WORKDIR

Prints one JSON object: what each client read and did, for the Go test
(TestRealClients) to check against the wiki. Exits 3 when a client is not
installed (the test then skips, unless WIKID_REQUIRE_MWCLIENTS=1).
"""
import json
import os
import sys
import traceback
from urllib.parse import urlsplit

base, user, password, token, workdir = sys.argv[1:6]
u = urlsplit(base)
out = {}


def run(name, fn):
    try:
        out[name] = fn()
    except Exception as e:  # report, and let the Go test fail with it
        out[name] = {'error': '%s: %s' % (type(e).__name__, e), 'trace': traceback.format_exc()}


def with_mwclient():
    import mwclient
    res = {'version': mwclient.__version__}
    site = mwclient.Site(u.netloc, path='/w/', scheme=u.scheme, clients_useragent='wikid-test')
    # action=login with a bot-password style name and an API token.
    site.login(user + '@ci', token)
    res['logged_in_as'] = site.username
    page = site.pages['Client page']
    res['read'] = page.text()
    r = page.edit(res['read'] + '\n\nAdded by mwclient.', summary='mwclient summary')
    res['edit'] = {'result': r.get('result'), 'newrevid': r.get('newrevid')}
    res['recentchanges'] = [c['title'] for c in site.recentchanges(limit=10, max_items=10)]
    res['search'] = [h['title'] for h in site.search('Client', max_items=10)]
    res['allpages'] = [p.name for p in site.allpages(limit=5, max_items=10)]
    # action=clientlogin with the account's password, in a second session.
    site2 = mwclient.Site(u.netloc, path='/w/', scheme=u.scheme, clients_useragent='wikid-test')
    res['clientlogin'] = site2.clientlogin(username=user, password=password)
    site2.site_init()
    res['clientlogin_user'] = site2.username
    return res


def with_pywikibot():
    pwbdir = os.path.join(workdir, 'pywikibot')
    os.makedirs(os.path.join(pwbdir, 'families'), exist_ok=True)
    with open(os.path.join(pwbdir, 'families', 'wikid_family.py'), 'w') as f:
        f.write(
            'from pywikibot import family\n\n\n'
            'class Family(family.Family):\n'
            "    name = 'wikid'\n"
            '    langs = {%r: %r}\n\n'
            '    def scriptpath(self, code):\n'
            "        return '/w'\n\n"
            '    def protocol(self, code):\n'
            '        return %r\n' % ('en', u.netloc, u.scheme))
    pwfile = os.path.join(pwbdir, 'passwords.txt')
    with open(pwfile, 'w') as f:
        f.write('(%r, BotPassword(%r, %r))\n' % (user, 'ci', token))
    os.chmod(pwfile, 0o600)
    with open(os.path.join(pwbdir, 'user-config.py'), 'w') as f:
        f.write(
            "family = 'wikid'\nmylang = 'en'\n"
            "family_files['wikid'] = %r\n"
            "usernames['wikid']['en'] = %r\n"
            "password_file = %r\n"
            'put_throttle = 0\nwrite_maxlag = 0\nread_maxlag = 0\nmax_retries = 1\nretry_wait = 1\n'
            'socket_timeout = 30\nlog = []\nnoisysleep = 600\n'
            % (os.path.join(pwbdir, 'families', 'wikid_family.py'), user, pwfile))
    os.environ['PYWIKIBOT_DIR'] = pwbdir
    os.environ.pop('PYWIKIBOT_NO_USER_CONFIG', None)
    import pywikibot
    from pywikibot import config
    res = {'version': pywikibot.__version__}
    site = pywikibot.Site('en', 'wikid')
    site.login()
    res['logged_in_as'] = site.username()
    res['mw_version'] = str(site.version())
    page = pywikibot.Page(site, 'Client page')
    res['read'] = page.text
    page.text = res['read'] + '\n\nAdded by pywikibot.'
    page.save(summary='pywikibot summary')
    res['edit_revid'] = page.latest_revision_id
    new = pywikibot.Page(site, 'Pywikibot new page')
    new.text = 'Made by pywikibot.'
    new.save(summary='pywikibot creates')
    res['new_exists'] = new.exists()
    res['recentchanges'] = [c['title'] for c in site.recentchanges(total=10)]
    res['search'] = [p.title() for p in site.search('Client', total=10)]
    res['allpages'] = [p.title() for p in site.allpages(total=5)]
    res['history'] = [r.comment for r in page.revisions(total=5)]
    # A fresh Page: its revisions are read oldest first (rvdir=newer).
    res['oldest'] = pywikibot.Page(site, 'Client page').oldest_revision.comment
    return res


import importlib.util
missing = [m for m in ('mwclient', 'pywikibot') if importlib.util.find_spec(m) is None]
if missing:
    print('not installed: ' + ', '.join(missing), file=sys.stderr)
    sys.exit(3)
run('mwclient', with_mwclient)
run('pywikibot', with_pywikibot)
print(json.dumps(out, indent=1))
