package web

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/wikid/wikid/internal/view"
	"github.com/wikid/wikid/internal/wiki"
)

type formField struct {
	Name, Label, Type, Value string
	Required, Checked        bool
	Options                  []formOption // Type "select"
	Help                     string       // a line under the field
}

type formOption struct {
	Value, Label string
	Selected     bool
}

type formData struct {
	Heading, Intro, Action, Submit, Cancel, Error string
	Info                                          string // a notice above the form (what the change replaces)
	Danger                                        bool
	Fields                                        []formField
	Log                                           []wiki.LogEntry // the page's log, below the intro
}

func (s *Server) writeForm(w http.ResponseWriter, r *http.Request, t wiki.Title, tab string, status int, d formData) error {
	p := s.formPage(r, d.Heading)
	if err := s.setTabs(p, r, t, tab, true); err != nil {
		return err
	}
	p.Data = d
	s.writePage(w, r, status, "form", p)
	return nil
}

func (s *Server) moveForm(w http.ResponseWriter, r *http.Request, t wiki.Title, errMsg string) error {
	v := viewerOf(r)
	if !v.LoggedIn || !s.canEdit(v) {
		return wiki.Errorf(wiki.KindForbidden, "you need to be logged in with edit rights to move pages")
	}
	newTitle := r.PostFormValue("newtitle")
	if newTitle == "" {
		newTitle = string(t)
	}
	status := http.StatusOK
	if errMsg != "" {
		status = http.StatusBadRequest
	}
	return s.writeForm(w, r, t, "move", status, formData{
		Heading: "Move " + string(t), Intro: "Renaming a page moves its history with it. Links to the old title keep working through a redirect.",
		Action: t.URL() + "?action=move", Submit: "Move page", Cancel: t.URL(), Error: errMsg,
		Fields: []formField{
			{Name: "newtitle", Label: "New title", Type: "text", Value: newTitle, Required: true},
			{Name: "reason", Label: "Reason", Type: "text", Value: r.PostFormValue("reason")},
			{Name: "redirect", Label: "Leave a redirect behind", Type: "checkbox", Checked: r.Method == http.MethodGet || r.PostFormValue("redirect") != ""},
		},
	})
}

func (s *Server) move(w http.ResponseWriter, r *http.Request, t wiki.Title) error {
	v := viewerOf(r)
	if !v.LoggedIn || !s.canEdit(v) {
		return wiki.Errorf(wiki.KindForbidden, "you need to be logged in with edit rights to move pages")
	}
	if err := s.checkBlock(r); err != nil {
		return err
	}
	reason, err := formValue(r, "reason")
	if err != nil {
		return err
	}
	to, err := s.titles.Parse(r.PostFormValue("newtitle"))
	if err != nil {
		return s.moveForm(w, r, t, wiki.Message(err))
	}
	_, err = s.eng.Move(r.Context(), t, to, reason, r.PostFormValue("redirect") != "", s.editorOf(r))
	switch {
	case errors.Is(err, wiki.ErrExists):
		return s.moveForm(w, r, t, "A page named “"+string(to)+"” already exists. Choose another title, or ask an administrator to delete that page first.")
	case errors.Is(err, wiki.ErrNotFound):
		return wiki.Errorf(wiki.KindNotFound, "the page %q does not exist, so it cannot be moved", t)
	case wiki.KindOf(err) == wiki.KindInvalid:
		return s.moveForm(w, r, t, wiki.Message(err))
	case err != nil:
		return err
	}
	redirect(w, r, to.URL(), http.StatusSeeOther)
	return nil
}

func (s *Server) deleteForm(w http.ResponseWriter, r *http.Request, t wiki.Title, errMsg string) error {
	if err := s.requireAdmin(r); err != nil {
		return err
	}
	return s.writeForm(w, r, t, "delete", http.StatusOK, formData{
		Heading: "Delete " + string(t), Intro: "The page and its whole history will be hidden. Administrators can undelete it later.",
		Action: t.URL() + "?action=delete", Submit: "Delete page", Cancel: t.URL(), Error: errMsg, Danger: true,
		Fields: []formField{{Name: "reason", Label: "Reason", Type: "text"}},
	})
}

func (s *Server) delete(w http.ResponseWriter, r *http.Request, t wiki.Title) error {
	reason, err := s.adminPost(r)
	if err != nil {
		return err
	}
	err = s.eng.Delete(r.Context(), t, reason, s.editorOf(r))
	if errors.Is(err, wiki.ErrNotFound) {
		return wiki.Errorf(wiki.KindNotFound, "the page %q does not exist, so it cannot be deleted", t)
	}
	if err != nil {
		return err
	}
	redirect(w, r, t.URL(), http.StatusSeeOther)
	return nil
}

func (s *Server) undeleteForm(w http.ResponseWriter, r *http.Request, t wiki.Title, errMsg string) error {
	if err := s.requireAdmin(r); err != nil {
		return err
	}
	return s.writeForm(w, r, t, "view", http.StatusOK, formData{
		Heading: "Undelete " + string(t), Intro: "Restore the page and its whole history.",
		Action: t.URL() + "?action=undelete", Submit: "Restore page", Cancel: t.URL(), Error: errMsg,
		Fields: []formField{{Name: "reason", Label: "Reason", Type: "text"}},
	})
}

func (s *Server) undelete(w http.ResponseWriter, r *http.Request, t wiki.Title) error {
	reason, err := s.adminPost(r)
	if err != nil {
		return err
	}
	_, err = s.eng.Undelete(r.Context(), t, reason, s.editorOf(r))
	if errors.Is(err, wiki.ErrNotFound) {
		return wiki.Errorf(wiki.KindNotFound, "there is no deleted page %q to restore", t)
	}
	if err != nil {
		return err
	}
	redirect(w, r, t.URL(), http.StatusSeeOther)
	return nil
}

// protectLevelOptions are the choices of a protection level select.
func protectLevelOptions(cur wiki.ProtectionLevel, action string) []formOption {
	labels := map[wiki.ProtectionLevel]string{
		wiki.ProtectNone:   "Allow all users",
		wiki.ProtectUsers:  "Allow only registered users",
		wiki.ProtectAdmins: "Allow only administrators",
	}
	out := make([]formOption, 0, len(wiki.ProtectionLevels))
	for _, l := range wiki.ProtectionLevels {
		out = append(out, formOption{Value: string(l), Label: labels[l] + " to " + action, Selected: l == cur})
	}
	return out
}

// protectForm is action=protect: the title's protection, for
// administrators to set, change or remove. Cascading protection is not
// offered.
func (s *Server) protectForm(w http.ResponseWriter, r *http.Request, t wiki.Title, errMsg string) error {
	if err := s.requireAdmin(r); err != nil {
		return err
	}
	cur, active, err := s.eng.Protection(r.Context(), t)
	if err != nil {
		return err
	}
	if !active {
		cur = wiki.Protection{}
	}
	edit, move, expiry, reason := cur.Edit, cur.Move, "infinite", ""
	if !cur.Expiry.IsZero() {
		expiry = cur.Expiry.UTC().Format(time.RFC3339)
	}
	if r.Method == http.MethodPost {
		edit, move = wiki.ProtectionLevel(r.PostFormValue("edit")), wiki.ProtectionLevel(r.PostFormValue("move"))
		expiry, reason = r.PostFormValue("expiry"), r.PostFormValue("reason")
	}
	intro := "This title is not protected. Protecting it limits who may edit (or create) and move it."
	if active {
		intro = "This title is protected: edit " + levelText(cur.Edit) + ", move " + levelText(cur.Move) + ", " + view.ExpiryText(expiry) +
			". Set both levels to “Allow all users” to remove the protection."
	}
	log, err := s.store.Log(r.Context(), wiki.LogQuery{Type: wiki.LogProtect, Target: t, Limit: 10})
	if err != nil {
		return err
	}
	status := http.StatusOK
	if errMsg != "" {
		status = http.StatusBadRequest
	}
	return s.writeForm(w, r, t, "protect", status, formData{
		Heading: "Protect " + string(t), Intro: intro, Log: log,
		Action: t.URL() + "?action=protect", Submit: "Confirm", Cancel: t.URL(), Error: errMsg,
		Fields: []formField{
			{Name: "edit", Label: "Edit (and create)", Type: "select", Options: protectLevelOptions(edit, "edit")},
			{Name: "move", Label: "Move", Type: "select", Options: protectLevelOptions(move, "move")},
			{Name: "expiry", Label: "Expires", Type: "text", Value: expiry,
				Help: "A duration such as “1 week” or “12 hours”, a date such as 2027-01-31, or “infinite”."},
			{Name: "reason", Label: "Reason", Type: "text", Value: reason},
		},
	})
}

func levelText(l wiki.ProtectionLevel) string {
	switch l {
	case wiki.ProtectUsers:
		return "registered users only"
	case wiki.ProtectAdmins:
		return "administrators only"
	}
	return "everyone"
}

// protect sets, changes or removes t's protection (a POST from protectForm).
func (s *Server) protect(w http.ResponseWriter, r *http.Request, t wiki.Title) error {
	reason, err := s.adminPost(r)
	if err != nil {
		return err
	}
	edit, move := wiki.ProtectionLevel(r.PostFormValue("edit")), wiki.ProtectionLevel(r.PostFormValue("move"))
	if !edit.Valid() || !move.Valid() {
		return s.protectForm(w, r, t, "Choose a protection level from the lists.")
	}
	expiry, err := parseExpiry(r.PostFormValue("expiry"), s.now())
	if err != nil {
		return s.protectForm(w, r, t, wiki.Message(err))
	}
	_, err = s.eng.Protect(r.Context(), t, edit, move, expiry, reason, s.editorOf(r))
	if wiki.KindOf(err) == wiki.KindInvalid {
		return s.protectForm(w, r, t, wiki.Message(err))
	}
	if err != nil {
		return err
	}
	redirect(w, r, t.URL(), http.StatusSeeOther)
	return nil
}

// parseExpiry reads an expiry as MediaWiki's protection form takes it:
// "infinite" (or empty, "indefinite", "never"), a duration ("1 week",
// "12 hours", or "1w" as on Special:Block: wiki.ParseDuration), or a time
// (RFC 3339, or a date: its start in UTC). Zero means never.
func parseExpiry(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "", "infinite", "indefinite", "infinity", "never":
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, strings.ToUpper(s)); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t.UTC(), nil
	}
	// A duration, as the block form takes it too: "1 week", "12 hours", "1w", "30d".
	if d, err := wiki.ParseDuration(s); err == nil {
		return now.Add(d).UTC(), nil
	}
	return time.Time{}, wiki.Errorf(wiki.KindInvalid, "the expiry %.40q is not understood; give a duration such as \"1 week\" or \"12 hours\", a date such as 2027-01-31, or \"infinite\"", s)
}

// adminPost checks that an administrator who is not blocked sent r, and
// returns the form's reason (actionReason).
func (s *Server) adminPost(r *http.Request) (string, error) {
	if err := s.requireAdmin(r); err != nil {
		return "", err
	}
	return s.actionReason(r)
}

// actionReason refuses a blocked viewer and returns the form's reason,
// folded to one line: the start of every administrator's change.
func (s *Server) actionReason(r *http.Request) (string, error) {
	if err := s.checkBlock(r); err != nil {
		return "", err
	}
	reason, err := formValue(r, "reason")
	return wiki.OneLine(reason, 500), err
}
