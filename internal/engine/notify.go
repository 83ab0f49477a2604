package engine

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"

	"github.com/wikid/wikid/internal/diff"
	"github.com/wikid/wikid/internal/wiki"
)

// Notifications: an edit to a user's talk page by someone else tells that
// user, and a signed comment (the editor's signature in the text the edit
// added) that links a user's page tells that user. Save finds the
// recipients in the text it saves (CPU only) and, when there are any,
// queues a notify job in the edit's transaction; the job looks the users
// up, stores the notifications and has every process read their accounts
// again (the user bar's count).

// notifyPayload is the notify job's payload.
type notifyPayload struct {
	Title    wiki.Title `json:"title"`
	Base     int64      `json:"base"` // the revision the edit replaced (0: it created the page)
	Agent    string     `json:"agent"`
	Talk     string     `json:"talk,omitempty"`     // the owner of the user talk page edited
	Mentions []string   `json:"mentions,omitempty"` // users linked in a signed comment the edit added
}

// wikiLinkRE finds the targets of wiki links ([[Target]], [[Target|label]]).
var wikiLinkRE = regexp.MustCompile(`\[\[([^\[\]|#\n]{1,255})`)

// addedText returns the lines of text that old does not have, joined.
func addedText(old, text string) string {
	if old == "" {
		return text
	}
	a, b := strings.Split(old, "\n"), strings.Split(text, "\n")
	var out strings.Builder
	for _, ed := range diff.Edits(a, b) {
		for _, l := range b[ed.NewStart:ed.NewEnd] {
			out.WriteString(l)
			out.WriteByte('\n')
		}
	}
	return out.String()
}

// notifyJob returns the notify job of an edit by agent of page t from old
// to text, and whether there is anyone to tell. Mentions count when
// mentions is set: a revert restores old comments, which mentioned their
// users when they were first written.
func (e *Engine) notifyJob(t wiki.Title, base int64, agent, old, text string, mentions bool) (wiki.JobSpec, bool) {
	p := notifyPayload{Title: t, Base: base, Agent: agent}
	if t.Namespace() == wiki.NSUserTalk && !strings.Contains(t.Name(), "/") && !sameUser(t.Name(), agent) {
		p.Talk = t.Name()
	}
	if mentions && strings.Contains(text, "[[") {
		p.Mentions = e.mentions(agent, addedText(old, text), p.Talk)
	}
	if p.Talk == "" && len(p.Mentions) == 0 {
		return wiki.JobSpec{}, false
	}
	b, err := json.Marshal(p)
	if err != nil {
		return wiki.JobSpec{}, false
	}
	return wiki.JobSpec{Kind: wiki.JobNotify, Payload: b}, true
}

func sameUser(a, b string) bool { return strings.EqualFold(a, b) }

// mentions returns the users whose pages added links to, when added is
// signed by agent (links to agent's user page, talk page or
// contributions); not agent, not skip (told otherwise), each once, none
// when there are more than wiki.MaxMentions.
func (e *Engine) mentions(agent, added, skip string) []string {
	rules := e.TitleRules()
	var users []string
	signed := false
	seen := map[string]bool{}
	for _, m := range wikiLinkRE.FindAllStringSubmatch(added, -1) {
		t, err := rules.Parse(strings.TrimSpace(m[1]))
		if err != nil {
			continue
		}
		name := t.Name()
		switch t.Namespace() {
		case wiki.NSUser:
			if strings.Contains(name, "/") {
				continue // a user's subpage is not a mention
			}
			if sameUser(name, agent) {
				signed = true
				continue
			}
			if !sameUser(name, skip) && !seen[strings.ToLower(name)] {
				seen[strings.ToLower(name)] = true
				users = append(users, name)
			}
		case wiki.NSUserTalk:
			signed = signed || sameUser(name, agent)
		case wiki.NSSpecial:
			if c, ok := strings.CutPrefix(name, "Contributions/"); ok && sameUser(c, agent) {
				signed = true
			}
		}
	}
	if !signed || len(users) > wiki.MaxMentions {
		return nil
	}
	return users
}

// runNotify stores an edit's notifications and tells every process to
// read the accounts of the users notified again.
func (e *Engine) runNotify(ctx context.Context, j wiki.Job) error {
	p, err := decode[notifyPayload](j)
	if err != nil {
		return err
	}
	revID := e.editRevision(ctx, p)
	now := e.now()
	var ns []wiki.Notification
	var ids []int64
	add := func(name, kind string) error {
		u, err := e.store.FindUserByName(ctx, name)
		if errors.Is(err, wiki.ErrNotFound) {
			return nil // a link to a user page without an account
		}
		if err != nil {
			return err
		}
		ns = append(ns, wiki.Notification{UserID: u.ID, Kind: kind, Title: p.Title, RevID: revID, Agent: p.Agent, Time: now})
		ids = append(ids, u.ID)
		return nil
	}
	if p.Talk != "" {
		if err := add(p.Talk, wiki.NotifyTalk); err != nil {
			return err
		}
	}
	for _, name := range p.Mentions {
		if err := add(name, wiki.NotifyMention); err != nil {
			return err
		}
	}
	if len(ns) == 0 {
		return nil
	}
	if err := e.store.AddNotifications(ctx, ns); err != nil {
		return err
	}
	e.purger.UsersChanged(ctx, ids...)
	return nil
}

// editRevision finds the revision the edit of p made: the one after p.Base
// by p.Agent among the page's latest; 0 when it is not found (the page
// was moved or deleted since).
func (e *Engine) editRevision(ctx context.Context, p notifyPayload) int64 {
	page, err := e.store.FindPage(ctx, p.Title)
	if err != nil || page.Deleted {
		return 0
	}
	revs, err := e.store.History(ctx, wiki.HistoryQuery{PageID: page.ID, Limit: 50})
	if err != nil {
		return 0
	}
	for _, r := range revs {
		if r.ParentID == p.Base && r.UserName == p.Agent {
			return r.ID
		}
	}
	return 0
}
