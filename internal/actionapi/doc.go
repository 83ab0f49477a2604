// Package actionapi serves MediaWiki's Action API (/w/api.php): the
// modules, parameter names and JSON shapes (formatversion 1 and 2) that
// MediaWiki clients such as mwclient and pywikibot use, over Wikid's
// engine and store. Sessions, CSRF tokens, the login throttle, rights,
// watchlists and rate limits belong to the web server, which passes them
// in through Host; opensearch stays in the web server (its answers are
// shared through the edge cache).
//
// Modules: query (meta=siteinfo|tokens|userinfo; prop=info|revisions|
// categories|links|templates; list=allpages|recentchanges|search|
// categorymembers|usercontribs|logevents; titles, pageids, revids,
// redirects and generators; MediaWiki's continuation), parse, login,
// clientlogin, logout, edit, move, delete, protect, upload, watch and
// paraminfo.
//
// Caching: every answer is "no-store" and never enters the edge cache. An
// answer may depend on the session (userinfo, tokens, what the viewer may
// read), the time (curtimestamp) or the client's address (an anonymous
// user's name), none of which is in a cache key.
//
// Logins: action=login takes the user's name (optionally "Name@bot", as
// MediaWiki's bot passwords) and one of the user's API tokens as the
// password; action=clientlogin takes the account's password. Both go
// through the site's login throttle and start the site's session.
//
// Cost: every list reads one bounded index range (limit at most 500,
// generators 50 pages); titles, pageids and revids take 50 values; page
// texts in one answer stay within a budget (8 MiB, then rvcontinue); parses
// take the engine's render slots, and texts to parse a rate limit, as do
// the texts parsed again outside the render cache (links, sections), one
// event per 64 KiB.
package actionapi
