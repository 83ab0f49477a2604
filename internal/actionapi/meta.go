package actionapi

import (
	"strings"

	"github.com/wikid/wikid/internal/wiki"
)

// Generator is the MediaWiki version Wikid's API answers as: the release
// whose modules, parameters and shapes it follows. Clients check it
// (pywikibot and mwclient refuse versions they do not support).
const Generator = "MediaWiki 1.39.1"

var siprops = []string{"general", "namespaces", "namespacealiases", "specialpagealiases", "magicwords", "interwikimap", "dbrepllag",
	"statistics", "usergroups", "libraries", "extensions", "fileextensions", "rightsinfo", "restrictions", "languages",
	"languagevariants", "skins", "extensiontags", "functionhooks", "showhooks", "variables", "protocols", "defaultoptions", "uploaddialog", "autocreatetempuser", "clientlibraries"}

func (c *call) siteinfo(q map[string]any) error {
	props := c.enum("siprop", siprops...)
	if !c.p.has("siprop") {
		props = []string{"general"}
	}
	c.p.used["sifilteriw"], c.p.used["sishowalldb"], c.p.used["sinumberingroup"], c.p.used["siinlanguagecode"] = true, true, true, true
	s := c.a.site
	for _, p := range props {
		switch p {
		case "general":
			caseRule := "first-letter"
			if !s.Rules.CapitalLinks() {
				caseRule = "case-sensitive"
			}
			g := map[string]any{
				"mainpage": string(s.MainPage), "base": s.MainPage.URL(), "sitename": s.Name, "mainpageisdomainroot": false,
				"logo": "", "generator": Generator, "phpversion": "0", "phpsapi": "wikid", "dbtype": "wikid", "dbversion": "0",
				"imagewhitelistenabled": false, "langconversion": false, "linkconversion": false, "titleconversion": false,
				"linkprefixcharset": "", "linkprefix": "", "linktrail": "/^([a-z]+)(.*)$/sD", "legaltitlechars": " %!\"$&'()*,\\-.\\/0-9:;=?@A-Z\\\\^_`a-z~\\x80-\\xFF+",
				"invalidusernamechars": "@:>=", "fixarabicunicode": false, "fixmalayalamunicode": false, "git-hash": "", "git-branch": "",
				"case": caseRule, "lang": "en", "fallback": []any{}, "fallback8bitEncoding": "windows-1252",
				"writeapi": true, "maxarticlesize": c.a.eng.MaxPageBytes(), "timezone": "UTC", "timeoffset": 0,
				"articlepath": "/wiki/$1", "scriptpath": "/w", "script": "/w/index.php", "variantarticlepath": false,
				"server": "", "servername": c.r.Host, "wikiid": "wikid", "time": mwTime(c.a.now()),
				"misermode": true, "uploadsenabled": true, "maxuploadsize": s.MaxUploadBytes, "minuploadchunksize": 1024,
				"thumblimits": map[string]int{"0": 120, "1": 150, "2": 180, "3": 200, "4": 220, "5": 250, "6": 300, "7": 400},
				"imagelimits": map[string]any{"0": map[string]int{"width": 320, "height": 240}, "1": map[string]int{"width": 640, "height": 480}, "2": map[string]int{"width": 800, "height": 600}},
				"favicon":     "/favicon.ico", "centralidlookupprovider": "local", "allcentralidlookupproviders": []string{"local"},
				"interwikimagic": false, "magiclinks": map[string]any{}, "categorycollation": "uppercase",
				"nofollowlinks": true, "externallinktarget": false, "readonly": false, "rtl": false,
				"galleryoptions": map[string]any{}, "citeresponsivereferences": false,
			}
			if !c.v2 {
				delete(g, "readonly")
				delete(g, "rtl")
				delete(g, "writeapi")
				g["writeapi"] = ""
			}
			q["general"] = g
		case "namespaces":
			nss := map[string]any{}
			add := func(id int, name, canonical string, content, subpages bool) {
				m := map[string]any{"id": id, "case": "first-letter", "name": name, "canonical": canonical}
				if id == 0 {
					delete(m, "canonical")
				}
				if !c.v2 {
					m["*"] = name
					delete(m, "name")
				}
				c.setFlag(m, "content", content)
				c.setFlag(m, "subpages", subpages)
				if c.v2 {
					m["nonincludable"] = false
				}
				nss[itoa(id)] = m
			}
			add(-2, "Media", "Media", false, false)
			add(-1, "Special", "Special", false, false)
			for _, n := range wiki.Namespaces {
				add(n.ID, n.Name, n.Name, n.ID == 0, n.ID != 0)
			}
			q["namespaces"] = nss
		case "namespacealiases":
			q["namespacealiases"] = []any{
				c.alias(4, "Wikid"), c.alias(5, "Wikid talk"), c.alias(6, "Image"), c.alias(7, "Image talk"),
			}
		case "interwikimap", "magicwords", "specialpagealiases", "extensions", "libraries", "skins", "extensiontags", "functionhooks",
			"showhooks", "variables", "languagevariants", "clientlibraries":
			q[p] = []any{}
			if p == "languagevariants" {
				q[p] = map[string]any{}
			}
			if p == "skins" {
				q[p] = []any{c.star(map[string]any{"code": "wikid", "default": c.flagValue()}, "Wikid")}
			}
		case "dbrepllag":
			q[p] = []any{map[string]any{"host": c.a.host0, "lag": 0}}
		case "statistics":
			pages, err := c.a.store.PageCount(c.ctx)
			if err != nil {
				return err
			}
			users, err := c.a.store.CountUsers(c.ctx)
			if err != nil {
				return err
			}
			q[p] = map[string]any{"pages": pages, "articles": pages, "edits": 0, "images": 0, "users": users, "activeusers": users, "admins": 0, "jobs": 0}
		case "usergroups":
			var gs []any
			for _, g := range []wiki.Group{wiki.GroupAnonymous, wiki.GroupUser, wiki.GroupRollbacker, wiki.GroupAdmin} {
				gs = append(gs, map[string]any{"name": groupNames(g)[len(groupNames(g))-1], "rights": c.rights(g)})
			}
			q[p] = gs
		case "fileextensions":
			var l []any
			for _, e := range []string{"png", "gif", "jpg", "jpeg", "webp", "svg", "pdf"} {
				l = append(l, map[string]any{"ext": e})
			}
			q[p] = l
		case "rightsinfo":
			q[p] = map[string]any{"url": "", "text": ""}
		case "restrictions":
			q[p] = map[string]any{"types": []string{"create", "edit", "move"}, "levels": []string{"", "autoconfirmed", "sysop"},
				"cascadinglevels": []string{"sysop"}, "semiprotectedlevels": []string{"autoconfirmed"}}
		case "languages":
			q[p] = []any{c.star(map[string]any{"code": "en", "bcp47": "en"}, "English")}
		case "protocols":
			q[p] = []string{"http://", "https://", "mailto:"}
		case "defaultoptions":
			q[p] = map[string]any{"minordefault": 0, "watchdefault": 1, "watchcreations": 1}
		case "uploaddialog":
			q[p] = map[string]any{}
		case "autocreatetempuser":
			q[p] = map[string]any{"enabled": false}
		}
	}
	return nil
}

// star puts text under "*" (formatversion 1) or "name" (2).
func (c *call) star(m map[string]any, text string) map[string]any {
	if c.v2 {
		m["name"] = text
	} else {
		m["*"] = text
	}
	return m
}

func (c *call) alias(id int, name string) map[string]any {
	m := map[string]any{"id": id}
	if c.v2 {
		m["alias"] = name
	} else {
		m["*"] = name
	}
	return m
}

func itoa(n int) string {
	if n < 0 {
		return "-" + itoa(-n)
	}
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

var tokenTypes = []string{"createaccount", "csrf", "deleteglobalaccount", "login", "patrol", "rollback", "setglobalaccountstatus", "userrights", "watch"}

// tokens is meta=tokens. Every type is the session's one CSRF token (the
// login token too): a token proves the request comes from a page or
// client that read it with the session, which is all any of them is for.
func (c *call) tokens(q map[string]any) error {
	types := c.enum("type", tokenTypes...)
	if !c.p.has("type") {
		types = []string{"csrf"}
	}
	tok := c.a.host.CSRFToken(c.r) + tokenSuffix
	out := map[string]any{}
	for _, t := range types {
		out[t+"token"] = tok
	}
	q["tokens"] = out
	return nil
}

// groupNames are a Wikid group as MediaWiki's implicit and explicit groups.
func groupNames(g wiki.Group) []string {
	switch g {
	case wiki.GroupUser:
		return []string{"*", "user", "autoconfirmed"}
	case wiki.GroupRollbacker:
		return []string{"*", "user", "autoconfirmed", "rollbacker"}
	case wiki.GroupAdmin:
		return []string{"*", "user", "autoconfirmed", "sysop"}
	}
	return []string{"*"}
}

// rights are what group g may do, in MediaWiki's names.
func (c *call) rights(g wiki.Group) []string {
	s := c.a.site
	r := []string{}
	if g.AtLeast(s.ReadGroup) {
		r = append(r, "read")
	}
	if g.AtLeast(s.EditGroup) {
		r = append(r, "edit", "createpage", "createtalk", "writeapi", "minoredit", "applychangetags", "editmyprivateinfo")
		if g != wiki.GroupAnonymous {
			r = append(r, "move", "movefile", "move-subpages", "upload", "reupload", "reupload-own", "editmyoptions", "editmywatchlist", "viewmywatchlist", "sendemail")
		}
	}
	if g == wiki.GroupAnonymous && s.AllowRegistration {
		r = append(r, "createaccount")
	}
	if g.AtLeast(wiki.GroupRollbacker) {
		r = append(r, "rollback")
	}
	if g.AtLeast(wiki.GroupAdmin) {
		r = append(r, "delete", "undelete", "protect", "block", "userrights", "deletedhistory", "editprotected", "noratelimit")
	}
	return r
}

var uiprops = []string{"blockinfo", "hasmsg", "groups", "groupmemberships", "implicitgroups", "rights", "changeablegroups", "options",
	"editcount", "ratelimits", "theoreticalratelimits", "email", "realname", "acceptlang", "registrationdate", "registration", "unreadcount", "centralids", "latestcontrib", "cancreateaccount"}

func (c *call) userinfo(q map[string]any) error {
	props := c.enum("uiprop", uiprops...)
	v := c.v
	m := map[string]any{"id": v.UserID, "name": v.Name}
	if !v.LoggedIn {
		c.setFlag(m, "anon", true)
	}
	group := v.Group
	if !v.LoggedIn {
		group = wiki.GroupAnonymous
	}
	for _, p := range props {
		switch p {
		case "blockinfo":
			b, err := c.a.host.Block(c.r)
			if err != nil {
				return err
			}
			if b != nil {
				m["blockid"], m["blockedby"], m["blockedbyid"], m["blockreason"] = b.ID, b.By.Name, b.By.ID, b.Reason
				m["blockedtimestamp"], m["blockexpiry"] = mwTime(b.Created), expiryOut(b.Expires)
				c.setFlag(m, "blockpartial", false)
				if c.v2 {
					m["blockpartial"] = false
				}
			}
		case "hasmsg":
			if c.v2 {
				m["messages"] = false
			}
		case "groups":
			m["groups"] = groupNames(group)
		case "implicitgroups":
			m["implicitgroups"] = []string{"*", "user", "autoconfirmed"}[:min(len(groupNames(group)), 3)]
		case "groupmemberships":
			gm := []any{}
			for _, g := range groupNames(group) {
				if g != "*" && g != "user" && g != "autoconfirmed" {
					gm = append(gm, map[string]any{"group": g, "expiry": "infinity"})
				}
			}
			m["groupmemberships"] = gm
		case "rights":
			m["rights"] = c.rights(group)
		case "editcount":
			m["editcount"] = 0
		case "ratelimits", "theoreticalratelimits":
			m[p] = map[string]any{}
		case "options":
			m["options"] = map[string]any{"minordefault": 0}
		case "changeablegroups":
			m["changeablegroups"] = map[string]any{"add": []any{}, "remove": []any{}, "add-self": []any{}, "remove-self": []any{}}
		case "registrationdate", "registration":
			if v.LoggedIn && !v.Registered.IsZero() {
				m["registrationdate"] = mwTime(v.Registered)
			}
		case "unreadcount":
			m["unreadcount"] = 0
		case "centralids":
			m["centralids"] = map[string]any{"local": v.UserID}
		}
	}
	q["userinfo"] = m
	return nil
}

// paraminfo describes the modules, as much as clients read of it: names,
// prefixes, parameters with their limits, submodules, which modules must
// be posted and which can be generators.
func (c *call) paraminfo() error {
	mods := c.p.list("modules")
	for _, n := range []string{"querymodules", "formatmodules", "mainmodule", "pagesetmodule", "helpformat"} {
		for _, m := range c.p.list(n) {
			switch n {
			case "querymodules":
				mods = append(mods, "query+"+m)
			case "mainmodule":
				mods = append(mods, "main")
			}
		}
	}
	if c.p.has("mainmodule") {
		mods = append(mods, "main")
	}
	if len(mods) > 50 {
		return errf("toomanyvalues", "Too many values supplied for parameter \"modules\". The limit is 50.")
	}
	out := []any{}
	for _, m := range mods {
		if m == "query+*" || m == "*" {
			continue
		}
		info, ok := c.moduleInfo(m)
		if !ok {
			c.warn("paraminfo", "The module \""+trunc(m, 60)+"\" does not exist.")
			out = append(out, map[string]any{"name": m, "path": m, "missing": c.flagValue()})
			continue
		}
		out = append(out, info)
	}
	c.out["paraminfo"] = map[string]any{"modules": out}
	return nil
}

// moduleParams lists each module's parameters (without its prefix).
var moduleParams = map[string][]string{
	"main":                  {"action", "format", "maxlag", "smaxage", "maxage", "assert", "assertuser", "requestid", "servedby", "curtimestamp", "responselanginfo", "origin", "uselang", "errorformat", "errorlang", "errorsuselocal"},
	"query":                 {"prop", "list", "meta", "indexpageids", "export", "exportnowrap", "iwurl", "continue", "rawcontinue", "titles", "pageids", "revids", "generator", "redirects", "converttitles"},
	"query+allpages":        {"from", "continue", "to", "prefix", "namespace", "filterredir", "limit", "dir"},
	"query+search":          {"search", "namespace", "limit", "offset", "what", "info", "prop", "interwiki", "enablerewrites", "sort"},
	"query+recentchanges":   {"start", "end", "dir", "namespace", "user", "excludeuser", "tag", "prop", "show", "limit", "type", "toponly", "title", "continue", "generaterevisions", "slot"},
	"query+categorymembers": {"title", "pageid", "prop", "namespace", "type", "continue", "limit", "sort", "dir", "start", "end"},
	"query+usercontribs":    {"limit", "start", "end", "continue", "user", "userids", "userprefix", "namespace", "prop", "show", "tag", "toponly", "dir"},
	"query+logevents":       {"prop", "type", "action", "start", "end", "dir", "user", "title", "namespace", "prefix", "tag", "limit", "continue"},
	"query+info":            {"prop", "testactions", "testactionsdetail", "continue"},
	"query+revisions":       {"prop", "slots", "limit", "section", "startid", "endid", "start", "end", "dir", "user", "excludeuser", "tag", "continue"},
	"query+categories":      {"prop", "show", "limit", "continue", "categories", "dir"},
	"query+links":           {"namespace", "limit", "continue", "titles", "dir"},
	"query+templates":       {"namespace", "limit", "continue", "templates", "dir"},
	"query+siteinfo":        {"prop", "filteriw", "showalldb", "numberingroup", "inlanguagecode"},
	"query+tokens":          {"type"},
	"query+userinfo":        {"prop", "attachedwiki"},
	"parse":                 {"title", "text", "revid", "summary", "page", "pageid", "redirects", "oldid", "prop", "wrapoutputclass", "section", "sectiontitle", "disablelimitreport", "disableeditsection", "contentformat", "contentmodel"},
	"login":                 {"name", "password", "domain", "token"},
	"clientlogin":           {"requests", "messageformat", "mergerequestfields", "preservestate", "returnurl", "continue", "token"},
	"logout":                {"token"},
	"edit":                  {"title", "pageid", "section", "sectiontitle", "text", "summary", "tags", "minor", "notminor", "bot", "baserevid", "basetimestamp", "starttimestamp", "recreate", "createonly", "nocreate", "watchlist", "md5", "prependtext", "appendtext", "undo", "undoafter", "redirect", "contentformat", "contentmodel", "token"},
	"move":                  {"from", "fromid", "to", "reason", "movetalk", "movesubpages", "noredirect", "watchlist", "ignorewarnings", "tags", "token"},
	"delete":                {"title", "pageid", "reason", "tags", "watchlist", "oldimage", "token"},
	"protect":               {"title", "pageid", "protections", "expiry", "reason", "tags", "cascade", "watchlist", "token"},
	"upload":                {"filename", "comment", "tags", "text", "watchlist", "ignorewarnings", "file", "url", "filekey", "stash", "filesize", "offset", "chunk", "async", "checkstatus", "token"},
	"watch":                 {"title", "titles", "expiry", "unwatch", "token"},
	"paraminfo":             {"modules", "helpformat", "querymodules", "mainmodule", "pagesetmodule", "formatmodules"},
	"opensearch":            {"search", "namespace", "limit", "profile", "suggest", "redirects", "format", "warningsaserror"},
	"json":                  {"callback", "utf8", "ascii", "formatversion"},
}

var postModules = map[string]bool{"watch": true, "login": true, "clientlogin": true, "logout": true, "edit": true, "move": true, "delete": true, "protect": true, "upload": true}

func (c *call) moduleInfo(path string) (map[string]any, bool) {
	names, ok := moduleParams[path]
	if !ok {
		return nil, false
	}
	name := strings.TrimPrefix(path, "query+")
	group, prefix := "action", ""
	switch {
	case path == "main":
		group = ""
	case path == "json":
		group = "format"
	case strings.HasPrefix(path, "query+"):
		prefix = queryPrefix[name]
		group = "list"
		if contains(propModules, name) {
			group = "prop"
		} else if contains(metaModules, name) {
			group = "meta"
		}
	case path == "login":
		prefix = "lg"
	case path == "clientlogin":
		prefix = "login"
	}
	var params []any
	for _, n := range names {
		p := map[string]any{"index": len(params), "name": n, "type": "string"}
		c.setFlag(p, "multi", false)
		switch {
		case path == "query+tokens" && n == "type":
			p["type"], p["default"] = tokenTypes, "csrf"
			c.setFlag(p, "multi", true)
			if c.v2 {
				p["multi"] = true
			}
		case enumTypes[path+":"+n] != nil:
			p["type"] = enumTypes[path+":"+n]
			if multiParams[path+":"+n] || strings.HasSuffix(n, "prop") || n == "show" || n == "type" || n == "prop" {
				if c.v2 {
					p["multi"] = true
				} else {
					p["multi"] = ""
				}
				p["limit"], p["lowlimit"], p["highlimit"] = 50, 50, 500
			}
		case n == "limit":
			p["type"], p["min"], p["max"], p["highmax"], p["default"] = "limit", 1, maxLimit, maxLimit, 10
			if name == "search" {
				p["max"], p["highmax"] = 100, 100
			}
		case n == "action" && path == "main":
			var ts []string
			sub := map[string]any{}
			for _, a := range actionNames() {
				ts = append(ts, a)
				sub[a] = a
			}
			p["type"], p["submodules"] = ts, sub
		case n == "format" && path == "main":
			p["type"], p["submodules"] = []string{"json"}, map[string]any{"json": "json"}
		case path == "query" && (n == "prop" || n == "list" || n == "meta" || n == "generator"):
			mods := map[string][]string{"prop": propModules, "list": listModules, "meta": metaModules, "generator": genModules}[n]
			sub := map[string]any{}
			for _, m := range mods {
				sub[m] = "query+" + m
			}
			p["type"], p["submodules"] = mods, sub
			if n != "generator" {
				c.setFlag(p, "multi", true)
				if c.v2 {
					p["multi"] = true
				}
				p["limit"], p["lowlimit"], p["highlimit"] = 50, 50, 500
			}
			p["submoduleparamprefix"] = "g"
		case n == "titles" || n == "pageids" || n == "revids" || n == "prop" || n == "namespace" || n == "type" || n == "show" || n == "modules":
			if c.v2 {
				p["multi"] = true
			} else {
				p["multi"] = ""
			}
			p["limit"], p["lowlimit"], p["highlimit"] = 50, 50, 50
		case n == "file":
			p["type"] = "upload"
		case n == "token":
			p["type"], p["tokentype"] = "string", "csrf"
			if path == "login" || path == "clientlogin" {
				p["tokentype"] = "login"
			}
			c.setFlag(p, "required", true)
		}
		params = append(params, p)
	}
	m := map[string]any{"name": name, "classname": "Wikid", "path": path, "group": group, "prefix": prefix, "source": "Wikid",
		"sourcename": "Wikid", "licensetag": "", "licenselink": "", "parameters": params, "templatedparameters": []any{},
		"dynamicparameters": false, "helpurls": []any{}, "examples": []any{}, "description": ""}
	if postModules[path] {
		c.setFlag(m, "mustbeposted", true)
		c.setFlag(m, "writerights", true)
	}
	if strings.HasPrefix(path, "query+") && contains(genModules, name) {
		c.setFlag(m, "generator", true)
	}
	c.setFlag(m, "readrights", path != "login" && path != "clientlogin")
	return m, true
}

// enumTypes are the values of the enumerated parameters, by
// "module path:parameter" (clients check the values they send).
var enumTypes = map[string][]string{
	"query+recentchanges:show":   {"!anon", "!autopatrolled", "!bot", "!minor", "!patrolled", "!redirect", "anon", "autopatrolled", "bot", "minor", "patrolled", "redirect", "unpatrolled"},
	"query+recentchanges:type":   {"categorize", "edit", "external", "log", "new"},
	"query+recentchanges:prop":   {"comment", "flags", "ids", "loginfo", "parsedcomment", "patrolled", "redirect", "sha1", "sizes", "tags", "timestamp", "title", "user", "userid"},
	"query+recentchanges:dir":    {"newer", "older"},
	"query+usercontribs:show":    {"!autopatrolled", "!minor", "!new", "!patrolled", "!top", "autopatrolled", "minor", "new", "patrolled", "top"},
	"query+usercontribs:prop":    {"comment", "flags", "ids", "parsedcomment", "patrolled", "size", "sizediff", "tags", "timestamp", "title"},
	"query+usercontribs:dir":     {"newer", "older"},
	"query+revisions:prop":       rvprops,
	"query+revisions:dir":        {"newer", "older"},
	"query+info:prop":            {"associatedpage", "displaytitle", "linkclasses", "notificationtimestamp", "preload", "protection", "readable", "subjectid", "talkid", "url", "varianttitles", "watched", "watchers"},
	"query+allpages:filterredir": {"all", "nonredirects", "redirects"},
	"query+allpages:dir":         {"ascending", "descending"},
	"query+categorymembers:type": {"file", "page", "subcat"},
	"query+categorymembers:prop": {"ids", "sortkey", "sortkeyprefix", "timestamp", "title", "type"},
	"query+categorymembers:sort": {"sortkey", "timestamp"},
	"query+categorymembers:dir":  {"asc", "ascending", "desc", "descending", "newer", "older"},
	"query+search:what":          {"nearmatch", "text", "title"},
	"query+search:prop":          {"categorysnippet", "extensiondata", "isfilematch", "redirectsnippet", "redirecttitle", "sectionsnippet", "sectiontitle", "size", "snippet", "timestamp", "titlesnippet", "wordcount"},
	"query+search:info":          {"rewrittenquery", "suggestion", "totalhits"},
	"query+siteinfo:prop":        siprops,
	"query+userinfo:prop":        uiprops,
	"query+logevents:type":       {"block", "delete", "move", "newusers", "protect", "rights", "upload"},
	"query+logevents:prop":       {"comment", "details", "ids", "parsedcomment", "tags", "timestamp", "title", "type", "user", "userid"},
	"query+logevents:dir":        {"newer", "older"},
	"parse:prop":                 parseProps,
	"edit:watchlist":             {"nochange", "preferences", "unwatch", "watch"},
}

var multiParams = map[string]bool{}
