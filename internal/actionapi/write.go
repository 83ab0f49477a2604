package actionapi

import (
	"crypto/md5"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/wiki"
)

// Logins. action=login takes a user name, optionally with a bot name
// after "@" ("Alice@bot", as MediaWiki's bot passwords), and one of the
// user's API tokens (`wikid token create`, Special:Preferences) as the
// password: a script's configuration then holds a secret that can be
// revoked alone, never the account's password. action=clientlogin takes
// the account's password, as the login form does. Both go through the
// site's login throttle and start the same session (cookie) as the form.

func (c *call) login() error {
	name, pass := c.p.get("lgname"), c.p.get("lgpassword")
	c.p.used["lgdomain"] = true
	tok := c.p.get("lgtoken")
	if c.p.inQuery("lgtoken") {
		// As every token: a URL is logged, cached and shown in a
		// Referer, and a login from a URL is a login CSRF.
		return errf("mustposttoken", "The \"lgtoken\" parameter was found in the query string, but must be in the POST body.")
	}
	if tok == "" || !strings.HasSuffix(tok, tokenSuffix) || !c.a.host.ValidToken(c.r, strings.TrimSuffix(tok, tokenSuffix)) {
		c.out["login"] = map[string]any{"result": "NeedToken", "token": c.a.host.CSRFToken(c.r) + tokenSuffix}
		if tok != "" {
			c.out["login"] = map[string]any{"result": "WrongToken"}
		}
		return nil
	}
	if name == "" || pass == "" {
		c.out["login"] = map[string]any{"result": "Failed", "reason": "Give lgname (your user name, or Name@bot) and lgpassword (an API token from `wikid token create` or Special:Preferences)."}
		return nil
	}
	user, _, _ := strings.Cut(name, "@")
	u, err := c.a.host.Login(c.w, c.r, strings.TrimSpace(user), pass, true)
	if err != nil {
		return c.loginFailed("login", err)
	}
	c.out["login"] = map[string]any{"result": "Success", "lguserid": u.ID, "lgusername": u.Name}
	return nil
}

// loginFailed answers a refused login in the module's shape.
func (c *call) loginFailed(module string, err error) error {
	var we *wiki.Error
	kind := wiki.KindOf(err)
	if kind == wiki.KindInternal {
		return err
	}
	msg := wiki.Message(err)
	if module == "login" {
		res := map[string]any{"result": "Failed", "reason": msg}
		if kind == wiki.KindTooMany || kind == wiki.KindUnavailable {
			res["result"] = "Throttled"
			if errors.As(err, &we) && we.RetryAfter > 0 {
				res["wait"] = int((we.RetryAfter + time.Second - 1) / time.Second)
			}
		}
		c.out["login"] = res
		return nil
	}
	c.out["clientlogin"] = map[string]any{"status": "FAIL", "message": msg, "messagecode": map[wiki.Kind]string{wiki.KindTooMany: "login-throttled"}[kind]}
	if c.out["clientlogin"].(map[string]any)["messagecode"] == "" {
		c.out["clientlogin"].(map[string]any)["messagecode"] = "wrongpassword"
	}
	return nil
}

func (c *call) clientLogin() error {
	for _, n := range []string{"loginreturnurl", "loginmessageformat", "loginmergerequestfields", "loginpreservestate", "rememberMe", "logincontinue", "loginrequests"} {
		c.p.used[n] = true
	}
	if err := c.checkToken("login"); err != nil {
		return err
	}
	if c.p.get("loginreturnurl") == "" && !c.p.has("logincontinue") {
		return errf("missingparam", "One of the parameters \"loginreturnurl\" and \"logincontinue\" is required.")
	}
	name, pass := c.p.get("username"), c.p.get("password")
	if name == "" || pass == "" {
		c.out["clientlogin"] = map[string]any{"status": "FAIL", "message": "Give username and password.", "messagecode": "authmanager-authn-no-primary"}
		return nil
	}
	u, err := c.a.host.Login(c.w, c.r, strings.TrimSpace(name), pass, false)
	if err != nil {
		return c.loginFailed("clientlogin", err)
	}
	c.out["clientlogin"] = map[string]any{"status": "PASS", "username": u.Name}
	return nil
}

func (c *call) logout() error {
	if err := c.a.host.Logout(c.w, c.r); err != nil {
		return err
	}
	return nil
}

// mayWrite applies what every change needs: the right, no block, and the
// rate limit.
func (c *call) mayWrite(require func() error) error {
	if err := require(); err != nil {
		return errf("permissiondenied", "%s", wiki.Message(err))
	}
	b, err := c.a.host.Block(c.r)
	if err != nil {
		return err
	}
	if b != nil {
		until := "with no end date"
		if !b.Expires.IsZero() {
			until = "until " + mwTime(b.Expires)
		}
		reason := b.Reason
		if reason == "" {
			reason = "no reason was given"
		}
		return errf("blocked", "You have been blocked from editing by %s %s. Reason: %s. You can still read pages; if you think the block is a mistake, contact %s or another administrator.", b.By.Name, until, reason, b.By.Name)
	}
	kind := "write"
	if c.module == "upload" {
		kind = "upload"
	}
	if wait, ok := c.a.host.Allow(c.r, kind); !ok {
		return &apiError{code: "ratelimited", info: "You've exceeded your rate limit. Please wait some time and try again.", retry: wait}
	}
	return nil
}

// target reads the page a write is about: title or pageid.
func (c *call) target(titleParam, idParam string) (wiki.Title, *wiki.Page, error) {
	raw := c.p.get(titleParam)
	id, err := c.int64(idParam)
	if err != nil {
		return "", nil, err
	}
	if raw != "" && id != 0 {
		return "", nil, errf("invalidparammix", "The parameters \"%s\" and \"%s\" can not be used together.", titleParam, idParam)
	}
	if id != 0 {
		p, err := c.a.store.FindPageByID(c.ctx, id)
		if errors.Is(err, wiki.ErrNotFound) || err == nil && p.Deleted {
			return "", nil, errf("nosuchpageid", "There is no page with ID %d.", id)
		}
		if err != nil {
			return "", nil, err
		}
		return p.Title, &p, nil
	}
	if raw == "" {
		return "", nil, errf("missingparam", "One of the parameters \"%s\" and \"%s\" is required.", titleParam, idParam)
	}
	t, err := c.a.site.Rules.Parse(raw)
	if err != nil {
		return "", nil, errf("invalidtitle", "Bad title \"%s\": %s", trunc(raw, 80), wiki.Message(err))
	}
	if t.IsSpecial() {
		return "", nil, errf("invalidtitle", "Special pages such as %s are made by the wiki and cannot be changed.", t)
	}
	p, err := c.a.store.FindPage(c.ctx, t)
	if errors.Is(err, wiki.ErrNotFound) || err == nil && p.Deleted {
		return t, nil, nil
	}
	if err != nil {
		return "", nil, err
	}
	return t, &p, nil
}

func (c *call) edit() error {
	if err := c.mayWrite(func() error { return c.a.host.RequireEdit(c.r) }); err != nil {
		return err
	}
	t, page, err := c.target("title", "pageid")
	if err != nil {
		return err
	}
	for _, n := range []string{"bot", "watchlist", "watch", "unwatch", "nocreate", "createonly", "recreate", "notminor", "tags", "contentformat", "contentmodel", "starttimestamp", "redirect", "watchlistexpiry", "captchaword", "captchaid"} {
		c.p.used[n] = true
	}
	model := wiki.ContentModel(c.p.get("contentmodel"))
	if model != "" && !model.Valid() {
		return errf("badvalue", "Unrecognized value for parameter \"contentmodel\": %s. Wikid pages are %s.", trunc(string(model), 40), engine.ModelNames())
	}
	text, hasText := c.p.vals["text"], c.p.has("text")
	appendText, prependText := c.p.get("appendtext"), c.p.get("prependtext")
	hasAppend := c.p.has("appendtext") || c.p.has("prependtext")
	if c.p.has("undo") {
		return errf("badvalue", "undo is not supported through the API yet; use the page's history.")
	}
	if !hasText && !hasAppend {
		return errf("missingparam", "One of the parameters \"text\", \"appendtext\" and \"prependtext\" is required.")
	}
	if c.p.flag("createonly") && page != nil {
		return errf("articleexists", "The article you tried to create has been created already.")
	}
	if c.p.flag("nocreate") && page == nil {
		return errf("missingtitle", "The page you specified doesn't exist.")
	}
	section := c.p.get("section")
	if section != "" && section != engine.NewSection {
		if _, err := engine.ParseSection(section); err != nil {
			return errf("nosuchsection", "There is no section %s: give a section number or new.", trunc(section, 20))
		}
	}
	sent := text
	if hasAppend {
		sent = prependText + text + appendText
	}
	if m := c.p.get("md5"); m != "" {
		sum := md5.Sum([]byte(sent))
		if !strings.EqualFold(hex.EncodeToString(sum[:]), m) {
			return errf("badmd5", "The supplied MD5 hash was incorrect: the text was changed in transit; send it again.")
		}
	}
	// The base revision: baserevid, else the revision current at
	// basetimestamp, else the latest (no conflict check, as MediaWiki).
	var base int64
	if page != nil {
		base = page.LatestID
	}
	baseRev, err := c.int64("baserevid")
	if err != nil {
		return err
	}
	if baseRev > 0 && page != nil {
		base = baseRev
	} else if bt := c.p.get("basetimestamp"); bt != "" && page != nil {
		when, err := parseTime(bt)
		if err != nil {
			return err
		}
		revs, err := c.a.store.History(c.ctx, wiki.HistoryQuery{PageID: page.ID, Limit: 50})
		if err != nil {
			return err
		}
		for _, rv := range revs {
			// The API's timestamps are whole seconds.
			if !rv.Time.Truncate(time.Second).After(when) {
				base = rv.ID
				break
			}
		}
	}
	if page == nil && (baseRev > 0 || c.p.get("basetimestamp") != "") && !c.p.flag("recreate") && c.p.get("section") != engine.NewSection {
		return errf("pagedeleted", "The page has been deleted since you fetched its timestamp; send recreate to create it anew.")
	}
	final := text
	if hasAppend && section == "" {
		cur := ""
		if page != nil {
			rv, err := c.a.store.FindRevision(c.ctx, page.LatestID)
			if err != nil {
				return err
			}
			cur, base = rv.Text, rv.ID
		}
		final = prependText + cur + appendText
	} else if hasAppend {
		final = prependText + text + appendText
	}
	if strings.TrimSpace(final) == "" && section != engine.NewSection {
		return errf("emptypage", "Creating or blanking a page with no text is not allowed: write something, or ask an administrator to delete the page.")
	}
	out, err := c.a.eng.Save(c.ctx, engine.Edit{Title: t, Text: final, Summary: c.p.get("summary"), Minor: c.p.flag("minor") && page != nil,
		BaseRevID: base, Editor: c.a.host.Editor(c.r), Section: section, SectionTitle: c.p.get("sectiontitle"), Model: model})
	if err != nil {
		return err
	}
	if err := c.watchAfter(out.Page.Title); err != nil {
		return err
	}
	res := map[string]any{"result": "Success", "pageid": out.Page.ID, "title": string(out.Page.Title), "contentmodel": contentModelOf(out.Page.Model, wiki.ModelMarkdown)}
	if out.NoChange {
		c.setFlag(res, "nochange", true)
		res["watched"] = c.flagValue()
	} else {
		res["oldrevid"], res["newrevid"], res["newtimestamp"] = out.Revision.ParentID, out.Revision.ID, mwTime(out.Revision.Time)
		c.setFlag(res, "new", out.Created)
		if c.v2 {
			res["watched"] = false
		}
	}
	c.out["edit"] = res
	return nil
}

func (c *call) move() error {
	if err := c.mayWrite(func() error {
		if !c.v.LoggedIn {
			return wiki.Errorf(wiki.KindUnauthorized, "log in with edit rights to move pages")
		}
		return c.a.host.RequireEdit(c.r)
	}); err != nil {
		return err
	}
	from, page, err := c.target("from", "fromid")
	if err != nil {
		return err
	}
	if page == nil {
		return errf("missingtitle", "The page %s does not exist, so it cannot be moved.", from)
	}
	rawTo := c.p.get("to")
	if rawTo == "" {
		return errf("missingparam", "The \"to\" parameter must be set: the page's new title.")
	}
	to, err := c.a.site.Rules.Parse(rawTo)
	if err != nil {
		return errf("invalidtitle", "Bad title \"%s\": %s", trunc(rawTo, 80), wiki.Message(err))
	}
	for _, n := range []string{"ignorewarnings", "watchlist", "tags", "movesubpages", "watch", "unwatch"} {
		c.p.used[n] = true
	}
	reason := c.p.get("reason")
	redirect := !c.p.flag("noredirect")
	ed := c.a.host.Editor(c.r)
	if _, err := c.a.eng.Move(c.ctx, from, to, reason, redirect, ed); err != nil {
		if errors.Is(err, wiki.ErrExists) {
			return errf("articleexists", "A page of that name already exists, or the name you have chosen is not valid. Please choose another name.")
		}
		return err
	}
	res := map[string]any{"from": string(from), "to": string(to), "reason": reason}
	c.setFlag(res, "redirectcreated", redirect)
	if c.p.flag("movetalk") {
		if ft, ok := from.Talk(); ok && ft != from {
			if tt, ok := to.Talk(); ok {
				if _, err := c.a.eng.Move(c.ctx, ft, tt, reason, redirect, ed); err == nil {
					res["talkfrom"], res["talkto"] = string(ft), string(tt)
				} else if !errors.Is(err, wiki.ErrNotFound) {
					res["talkmove-errors"] = []any{map[string]any{"code": c.mapError(err).code, "info": wiki.Message(err)}}
				}
			}
		}
	}
	c.out["move"] = res
	return nil
}

func (c *call) delete() error {
	if err := c.mayWrite(func() error { return c.a.host.RequireAdmin(c.r) }); err != nil {
		return err
	}
	t, page, err := c.target("title", "pageid")
	if err != nil {
		return err
	}
	if page == nil {
		return errf("missingtitle", "The page %s does not exist.", t)
	}
	c.p.used["tags"], c.p.used["watchlist"], c.p.used["oldimage"] = true, true, true
	reason := c.p.get("reason")
	if err := c.a.eng.Delete(c.ctx, t, reason, c.a.host.Editor(c.r)); err != nil {
		return err
	}
	c.out["delete"] = map[string]any{"title": string(t), "reason": reason, "logid": 0}
	return nil
}

func (c *call) protect() error {
	if err := c.mayWrite(func() error { return c.a.host.RequireAdmin(c.r) }); err != nil {
		return err
	}
	t, page, err := c.target("title", "pageid")
	if err != nil {
		return err
	}
	if !c.p.has("protections") {
		return errf("missingparam", "The \"protections\" parameter must be set, such as edit=sysop|move=sysop (or edit=all to lift it).")
	}
	c.p.used["cascade"], c.p.used["tags"], c.p.used["watchlist"], c.p.used["watch"] = true, true, true, true
	var edit, move wiki.ProtectionLevel
	var out []any
	expiries := c.p.list("expiry")
	expiry := time.Time{}
	expText := "infinite"
	if len(expiries) > 0 {
		expText = expiries[0]
		switch expText {
		case "infinite", "infinity", "indefinite", "never", "":
		default:
			when, err := parseTime(expText)
			if err != nil {
				return errf("invalidexpiry", "The expiry time \"%s\" is invalid: give infinite or a time such as 2030-01-01T00:00:00Z.", trunc(expText, 40))
			}
			if !when.After(c.a.now()) {
				return errf("pastexpiry", "The expiry time \"%s\" is in the past.", trunc(expText, 40))
			}
			expiry = when
		}
	}
	for _, pr := range c.p.list("protections") {
		typ, level, ok := strings.Cut(pr, "=")
		l, lok := levelOf(level)
		if !ok || !lok {
			return errf("protect-invalidlevel", "Invalid protection level \"%s\": use all, autoconfirmed or sysop.", trunc(level, 30))
		}
		switch typ {
		case "edit", "create":
			edit = l
		case "move":
			move = l
		default:
			return errf("protect-invalidaction", "Invalid protection type \"%s\": use edit, move or create.", trunc(typ, 30))
		}
		out = append(out, map[string]any{typ: level, "expiry": expiryOut(expiry)})
	}
	if page == nil {
		move = wiki.ProtectNone
	}
	reason := c.p.get("reason")
	if _, err := c.a.eng.Protect(c.ctx, t, edit, move, expiry, reason, c.a.host.Editor(c.r)); err != nil && !errors.Is(err, wiki.ErrNotFound) {
		return err
	}
	if out == nil {
		out = []any{}
	}
	c.out["protect"] = map[string]any{"title": string(t), "reason": reason, "protections": out}
	return nil
}

func (c *call) upload() error {
	if err := c.mayWrite(func() error { return c.a.host.RequireUpload(c.r) }); err != nil {
		return err
	}
	name := strings.TrimSpace(c.p.get("filename"))
	for _, n := range []string{"watchlist", "tags", "filesize", "async", "watch"} {
		c.p.used[n] = true
	}
	if c.p.has("url") || c.p.has("filekey") || c.p.has("chunk") || c.p.has("stash") {
		return errf("badvalue", "Wikid takes uploads as one multipart part named \"file\"; uploads by URL, stash or chunks are not supported.")
	}
	fh := c.p.files["file"]
	c.p.used["file"] = true
	if fh == nil {
		return errf("missingparam", "One of the parameters \"filekey\", \"file\" and \"url\" is required: send the file as a multipart part named \"file\".")
	}
	if name == "" {
		name = fh.Filename
	}
	name = strings.TrimPrefix(strings.TrimPrefix(name, "File:"), "file:")
	t, err := c.a.site.Rules.Parse("File:" + name)
	if err != nil || t.Namespace() != wiki.NSFile || strings.Contains(t.Name(), "/") {
		return errf("illegal-filename", "The file name is not allowed: name it like Diagram.png.")
	}
	if p, err := c.a.store.FindPage(c.ctx, t); err == nil && !p.Deleted && !c.p.flag("ignorewarnings") {
		c.out["upload"] = map[string]any{"result": "Warning", "warnings": map[string]any{"exists": t.Name()}, "filekey": "", "sessionkey": ""}
		return nil
	}
	f, err := fh.Open()
	if err != nil {
		return err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, c.a.site.MaxUploadBytes+1))
	if err != nil {
		return err
	}
	if int64(len(data)) > c.a.site.MaxUploadBytes {
		return errf("file-too-large", "The file is larger than api.php's limit of %d bytes: upload it at Special:Upload or with POST /w/rest.php/v1/file/{title}, which take files up to max_upload_bytes.", c.a.site.MaxUploadBytes)
	}
	out, err := c.a.eng.Upload(c.ctx, engine.Upload{Title: t, Data: data, Comment: c.p.get("comment"), Description: c.p.get("text"), Editor: c.a.host.Editor(c.r)})
	if err != nil {
		if wiki.KindOf(err) == wiki.KindConflict {
			return errf("fileexists-no-change", "%s", wiki.Message(err))
		}
		if wiki.KindOf(err) == wiki.KindInvalid {
			return errf("verification-error", "%s", wiki.Message(err))
		}
		return err
	}
	v := out.Version
	c.out["upload"] = map[string]any{"result": "Success", "filename": t.Name(), "imageinfo": map[string]any{
		"timestamp": mwTime(v.Time), "user": v.UserName, "size": v.Size, "width": v.Width, "height": v.Height,
		"descriptionurl": t.URL(), "mime": v.MIME, "comment": v.Comment}}
	return nil
}

// watchAfter applies the watchlist parameter of a change to t: watch,
// unwatch, nochange, or preferences (the default: as the edit form does).
func (c *call) watchAfter(t wiki.Title) error {
	mode, err := c.one("watchlist", "watch", "unwatch", "preferences", "nochange")
	if err != nil || !c.v.LoggedIn {
		return err
	}
	switch mode {
	case "watch", "unwatch":
		return c.a.host.Watch(c.r, t, mode == "watch")
	case "", "preferences":
		c.a.host.AutoWatch(c.r, t)
	}
	return nil
}

// watch is action=watch: titles (at most maxTitles) onto the viewer's
// watchlist, or off it with unwatch.
func (c *call) watch() error {
	if !c.v.LoggedIn {
		return errf("notloggedin", "Please log in to edit your watchlist.")
	}
	titles := c.p.list("titles")
	if raw := c.p.get("title"); raw != "" {
		titles = append(titles, raw)
	}
	if len(titles) == 0 {
		return errf("missingparam", "The \"titles\" parameter must be set: the pages to watch.")
	}
	if len(titles) > maxTitles {
		return errf("toomanyvalues", "Too many values supplied for parameter \"titles\". The limit is %d.", maxTitles)
	}
	c.p.used["expiry"] = true
	on := !c.p.flag("unwatch")
	out := []any{}
	for _, raw := range titles {
		t, err := c.a.site.Rules.Parse(raw)
		if err != nil || t.IsSpecial() {
			m := map[string]any{"title": raw}
			c.setFlag(m, "invalid", true)
			out = append(out, m)
			continue
		}
		if err := c.a.host.Watch(c.r, t, on); err != nil {
			return err
		}
		m := map[string]any{"ns": nsOf(t), "title": string(t)}
		if on {
			c.setFlag(m, "watched", true)
		} else {
			c.setFlag(m, "unwatched", true)
		}
		out = append(out, m)
	}
	c.out["watch"] = out
	c.out["batchcomplete"] = c.flagValue()
	return nil
}
