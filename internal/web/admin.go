package web

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/wikid/wikid/internal/purge"

	"github.com/wikid/wikid/internal/auth"
	"github.com/wikid/wikid/internal/httpx"
	"github.com/wikid/wikid/internal/wiki"
)

// The administrators' special pages: Special:UserRights, Special:Block,
// Special:Unblock and Special:BlockList. Each checks requireAdmin (which
// reads the group from the store) on GET and POST; special() has already
// checked the CSRF token of a POST. Every answer is a form or a list for
// one administrator: no-store, never in a shared cache.

// adminTarget returns the account a page acts on: the subpage, or the
// "target" field of the form.
func (s *Server) adminTarget(r *http.Request, arg string) (wiki.User, string, error) {
	name := arg
	if name == "" && r.Method == http.MethodPost {
		name = r.PostFormValue("target")
	}
	if name == "" {
		return wiki.User{}, "", nil
	}
	norm, err := auth.LookupUserName(name)
	if err != nil {
		return wiki.User{}, name, err
	}
	u, err := s.store.FindUserByName(r.Context(), norm)
	if errors.Is(err, wiki.ErrNotFound) {
		return wiki.User{}, norm, wiki.Errorf(wiki.KindNotFound, "there is no user %q; check the spelling (Special:ListUsers is not there yet: `wikid user list` lists them)", norm)
	}
	return u, norm, err
}

// adminForm starts an administrator's page that acts on an account: it
// checks the viewer, finds the account (the subpage, or the form's target)
// and sets the form's action. A name that finds no account is the form's
// error, with its status; the account is then the zero User.
func (s *Server) adminForm(r *http.Request, arg, page string, d *formData) (wiki.User, string, int, error) {
	if err := s.requireAdmin(r); err != nil {
		return wiki.User{}, "", 0, err
	}
	u, name, err := s.adminTarget(r, arg)
	d.Action = userPath(page, name)
	if err != nil {
		if wiki.KindOf(err) == wiki.KindInternal {
			return wiki.User{}, "", 0, err
		}
		d.Error = wiki.Message(err)
		return wiki.User{}, name, statusOf(err), nil
	}
	return u, name, http.StatusOK, nil
}

// actor is the viewer as the performer of an administrative action.
func actor(v Viewer) wiki.Actor { return wiki.Actor{ID: v.User.ID, Name: v.User.Name} }

// userPath is the canonical URL of special page name acting on user.
func userPath(name, user string) string {
	if user == "" {
		return "/wiki/Special:" + name
	}
	return "/wiki/Special:" + name + "/" + wiki.EscapeKey(wiki.Title(user).Key())
}

func (s *Server) userRightsPage(w http.ResponseWriter, r *http.Request, arg string) error {
	d := formData{Heading: "User rights", Submit: "Save group", Cancel: "/wiki/Special:SpecialPages",
		Intro: "Administrators may delete and restore pages, block users and change groups. Rollbackers may undo a user's latest edits to a page in one click (rollback). Users may edit."}
	u, name, status, err := s.adminForm(r, arg, "UserRights", &d)
	if err != nil {
		return err
	}
	if r.Method == http.MethodPost && u.ID != 0 {
		reason, err := s.actionReason(r)
		if err != nil {
			return err
		}
		g := wiki.Group(r.PostFormValue("group"))
		if !wiki.ValidUserGroup(g) {
			d.Error, status = "Choose the group "+wiki.UserGroupNames()+".", http.StatusBadRequest
		} else {
			v := viewerOf(r)
			old, err := s.store.SetUserGroup(r.Context(), wiki.GroupChange{UserID: u.ID, Group: g, By: actor(v), Reason: reason, Time: s.now()})
			if err != nil {
				return err
			}
			s.accountChanged(r.Context(), u.ID)
			s.eng.Purge(r.Context(), purge.LogTitle) // the entry is in Special:Log
			s.log.Info("group changed", "user", u.Name, "old", old, "new", g, "by", v.User.Name)
			redirect(w, r, userPath("UserRights", u.Name), http.StatusSeeOther)
			return nil
		}
	}
	if u.ID == 0 {
		d.Fields = []formField{{Name: "target", Label: "User name", Type: "text", Value: name, Required: true}}
		d.Submit = "Show the user's group"
		d.Action = "/wiki/Special:UserRights"
		if r.Method == http.MethodPost && d.Error == "" {
			d.Error, status = "Give a user name.", http.StatusBadRequest
		}
		return s.writeAdminForm(w, r, status, d)
	}
	d.Heading = "User rights of " + u.Name
	d.Info = u.Name + " is in the group " + string(u.Group) + "."
	groups := make([]formOption, len(wiki.UserGroups))
	for i, g := range wiki.UserGroups {
		groups[i] = formOption{Value: string(g), Label: string(g), Selected: u.Group == g}
	}
	d.Fields = []formField{
		{Name: "group", Label: "Group", Type: "select", Value: string(u.Group), Options: groups},
		{Name: "reason", Label: "Reason", Type: "text", Value: r.PostFormValue("reason")},
	}
	return s.writeAdminForm(w, r, status, d)
}

func (s *Server) writeAdminForm(w http.ResponseWriter, r *http.Request, status int, d formData) error {
	p := s.formPage(r, d.Heading)
	p.Data = d
	s.writePage(w, r, status, "form", p)
	return nil
}

func (s *Server) blockPage(w http.ResponseWriter, r *http.Request, arg string) error {
	d := formData{Heading: "Block user", Submit: "Block", Cancel: "/wiki/Special:BlockList", Danger: true,
		Intro: "A blocked user can still read and log in, but cannot edit, move, delete or use the API to change anything."}
	u, name, status, err := s.adminForm(r, arg, "Block", &d)
	if err != nil {
		return err
	}
	expiry := r.PostFormValue("expiry")
	if expiry == "" {
		expiry = "infinite"
	}
	if r.Method == http.MethodPost && u.ID != 0 {
		reason, err := s.actionReason(r)
		if err != nil {
			return err
		}
		v := viewerOf(r)
		now := s.now()
		until, err := wiki.ParseExpiry(expiry, now)
		switch {
		case err != nil:
			d.Error, status = wiki.Message(err), http.StatusBadRequest
		case u.ID == v.User.ID:
			d.Error, status = "You cannot block yourself; ask another administrator.", http.StatusBadRequest
		default:
			re, err := s.store.BlockUser(r.Context(), wiki.Block{UserID: u.ID, By: actor(v), Reason: reason, Created: now, Expires: until})
			if err != nil {
				return err
			}
			s.accountChanged(r.Context(), u.ID)
			s.eng.Purge(r.Context(), purge.LogTitle) // the entry is in Special:Log
			s.log.Info("user blocked", "user", u.Name, "until", expiryText(until), "reblock", re, "by", v.User.Name)
			redirect(w, r, "/wiki/Special:BlockList", http.StatusSeeOther)
			return nil
		}
	}
	d.Fields = []formField{
		{Name: "target", Label: "User name", Type: "text", Value: name, Required: true},
		{Name: "expiry", Label: "Expiry", Type: "text", Value: expiry, Required: true,
			Help: "A duration such as 1h, 1d, 1w, 30d or 1y (or “1 week”, “12 hours”), or infinite. Suggested: " + joinChoices(expiryChoices) + "."},
		{Name: "reason", Label: "Reason", Type: "text", Value: r.PostFormValue("reason")},
	}
	if u.ID != 0 {
		d.Heading = "Block " + u.Name
		if b, err := s.store.FindBlock(r.Context(), u.ID, s.now()); err == nil {
			d.Info = u.Name + " is already blocked until " + expiryText(b.Expires) + " by " + b.By.Name + " (" + b.Reason + "). Saving changes that block."
			d.Submit = "Change block"
		} else if !errors.Is(err, wiki.ErrNotFound) {
			return err
		}
	} else if r.Method == http.MethodPost && d.Error == "" {
		d.Error, status = "Give the name of the user to block.", http.StatusBadRequest
	}
	return s.writeAdminForm(w, r, status, d)
}

func joinChoices(cs []string) string {
	out := ""
	for i, c := range cs {
		if i > 0 {
			out += ", "
		}
		out += c
	}
	return out
}

func (s *Server) unblockPage(w http.ResponseWriter, r *http.Request, arg string) error {
	d := formData{Heading: "Unblock user", Submit: "Unblock", Cancel: "/wiki/Special:BlockList",
		Intro: "Lift a block: the user may edit again at once."}
	u, name, status, err := s.adminForm(r, arg, "Unblock", &d)
	if err != nil {
		return err
	}
	if r.Method == http.MethodPost && u.ID != 0 {
		// A blocked administrator cannot lift blocks, their own included:
		// otherwise blocking an administrator would do nothing.
		reason, err := s.actionReason(r)
		if err != nil {
			return err
		}
		v := viewerOf(r)
		err = s.store.UnblockUser(r.Context(), u.ID, actor(v), reason, s.now())
		if errors.Is(err, wiki.ErrNotFound) {
			d.Error, status = u.Name+" is not blocked; nothing to lift.", http.StatusConflict
		} else if err != nil {
			return err
		} else {
			s.accountChanged(r.Context(), u.ID)
			s.eng.Purge(r.Context(), purge.LogTitle) // the entry is in Special:Log
			s.log.Info("user unblocked", "user", u.Name, "by", v.User.Name)
			redirect(w, r, "/wiki/Special:BlockList", http.StatusSeeOther)
			return nil
		}
	} else if r.Method == http.MethodPost && d.Error == "" {
		d.Error, status = "Give the name of the user to unblock.", http.StatusBadRequest
	}
	d.Fields = []formField{
		{Name: "target", Label: "User name", Type: "text", Value: name, Required: true},
		{Name: "reason", Label: "Reason", Type: "text", Value: r.PostFormValue("reason")},
	}
	return s.writeAdminForm(w, r, status, d)
}

type blockListData struct {
	Blocks []wiki.Block
	Next   string
}

func (s *Server) blockListPage(w http.ResponseWriter, r *http.Request, _ string) error {
	if err := s.requireAdmin(r); err != nil {
		return err
	}
	rq := httpx.From(r)
	limit := int(rq.Int("limit", 50))
	bs, err := s.store.ListBlocks(r.Context(), wiki.BlockQuery{At: s.now(), Before: rq.Int("offset", 0), Limit: limit + 1})
	if err != nil {
		return err
	}
	var d blockListData
	if len(bs) > limit {
		d.Next = rq.Link("/wiki/Special:BlockList", "offset", strconv.FormatInt(bs[limit-1].ID, 10), "limit", strconv.Itoa(limit))
		bs = bs[:limit]
	}
	d.Blocks = bs
	p := s.formPage(r, "Blocked users")
	p.Data = d
	s.writePage(w, r, http.StatusOK, "blocklist", p)
	return nil
}
