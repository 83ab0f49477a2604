package web

import (
	"errors"
	"net/http"

	"github.com/wikid/wikid/internal/wiki"
)

type formField struct {
	Name, Label, Type, Value string
	Required, Checked        bool
}

type formData struct {
	Heading, Intro, Action, Submit, Cancel, Error string
	Danger                                        bool
	Fields                                        []formField
}

func (s *Server) writeForm(w http.ResponseWriter, r *http.Request, t wiki.Title, tab string, status int, d formData) error {
	p := s.formPage(r, d.Heading)
	p.Tabs = s.titleTabs(r, t, tab, true)
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
	reason, err := formValue(r, "reason")
	if err != nil {
		return err
	}
	to, err := wiki.ParseTitle(r.PostFormValue("newtitle"))
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
	if err := s.requireAdmin(r); err != nil {
		return err
	}
	reason, err := formValue(r, "reason")
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
	if err := s.requireAdmin(r); err != nil {
		return err
	}
	reason, err := formValue(r, "reason")
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
