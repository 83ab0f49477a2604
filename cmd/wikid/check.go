package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"

	"github.com/wikid/wikid/internal/config"
	"github.com/wikid/wikid/internal/store"
	"github.com/wikid/wikid/internal/store/postgres"
	"github.com/wikid/wikid/internal/store/sqlite"
	"github.com/wikid/wikid/internal/wiki"
)

const checkUsage = "usage: wikid check"

// exitError ends the program with code; main prints err unless it is nil.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// checkReport prints findings under headings, each heading before the first
// finding of its section, and counts them.
type checkReport struct {
	w       io.Writer
	heading string // of the section being filled
	printed bool   // whether heading was printed
	n       int
}

func (r *checkReport) section(heading string) { r.heading, r.printed = heading, false }

func (r *checkReport) finding(format string, args ...any) {
	if !r.printed {
		if r.n > 0 {
			fmt.Fprintln(r.w)
		}
		fmt.Fprintln(r.w, r.heading)
		r.printed = true
	}
	r.n++
	fmt.Fprintf(r.w, "  "+format+"\n", args...)
}

// check reports stored data that today's rules refuse, reading only: it
// opens the database read-only, so it runs beside a serving wikid. Exit
// status 1 when it found something, 2 when it could not look.
func check(ctx context.Context, cfg config.Config, args []string, stdout io.Writer) error {
	if len(args) != 0 {
		return &exitError{2, errors.New(checkUsage)}
	}
	if err := cfg.Validate(); err != nil {
		return &exitError{2, err}
	}
	var db checkSource
	var err error
	if cfg.Postgres() {
		db, err = postgres.OpenForCheck(ctx, cfg.Database)
	} else {
		db, err = sqlite.OpenReadOnly(ctx, cfg.DBPath())
	}
	if errors.Is(err, fs.ErrNotExist) {
		return &exitError{2, fmt.Errorf("there is no wiki database at %s; give the data directory with --data or WIKID_DATA", cfg.DBPath())}
	}
	if err != nil {
		return &exitError{2, err}
	}
	defer db.Close()
	r := &checkReport{w: stdout}
	if err := checkData(ctx, db, cfg.TitleRules(), r); err != nil {
		return &exitError{2, err}
	}
	switch r.n {
	case 0:
		fmt.Fprintln(stdout, "no problems found")
		return nil
	case 1:
		fmt.Fprintln(stdout, "\n1 problem found")
	default:
		fmt.Fprintf(stdout, "\n%d problems found\n", r.n)
	}
	return &exitError{code: 1}
}

// checkSource is what check reads, from either engine.
type checkSource interface {
	EachPageTitle(ctx context.Context, fn func(store.CheckTitle) error) error
	EachUserName(ctx context.Context, fn func(store.CheckUser) error) error
	EachInconsistency(ctx context.Context, fn func(store.Inconsistency) error) error
	Close() error
}

// checkData reports what db holds that today's rules refuse: titles by
// rules, the wiki's (capital_links).
func checkData(ctx context.Context, db checkSource, rules wiki.TitleRules, r *checkReport) error {
	r.section("Page titles the title rules refuse or now spell differently:")
	var nsMismatch []store.CheckTitle
	err := db.EachPageTitle(ctx, func(p store.CheckTitle) error {
		state := ""
		if p.Deleted {
			state = " (deleted)"
		}
		// A live page no URL reaches can be renamed by its id.
		repair := ""
		if !p.Deleted {
			repair = fmt.Sprintf("; rename with: wikid page move --id %d NEW_TITLE", p.PageID)
		}
		t, err := rules.Parse(p.Title)
		switch {
		case err != nil:
			r.finding("page %d%s %q: %s%s", p.PageID, state, p.Title, wiki.Message(err), repair)
			t = wiki.Title(p.Title)
		case string(t) != p.Title:
			// A title saved before its namespace existed ("talk:foo" was
			// "Talk:foo", now "Talk:Foo"), before a rule changed, or while
			// capital_links was off ("apple" is now "Apple"): its move
			// also sets its namespace column.
			if !p.Deleted {
				repair = "; move it there with: wikid fix-titles"
			}
			r.finding("page %d%s %s: not in normal form; the title is now %s, which cannot reach this page%s",
				p.PageID, state, quoteName(p.Title), quoteName(string(t)), repair)
			return nil
		}
		if t.Namespace() != p.NS {
			nsMismatch = append(nsMismatch, p)
		}
		return nil
	})
	if err != nil {
		return err
	}

	r.section("User names the name rules refuse or now spell differently:")
	groups := newLookAlikes()
	err = db.EachUserName(ctx, func(u store.CheckUser) error {
		norm, err := wiki.ParseUserName(u.Name)
		switch {
		case err != nil:
			r.finding("user %d %q: %s", u.ID, u.Name, wiki.Message(err))
		case norm != u.Name:
			r.finding("user %d %s: not in normal form; the name is now %s, which cannot log in as this user", u.ID, quoteName(u.Name), quoteName(norm))
		}
		groups.add(u)
		return nil
	})
	if err != nil {
		return err
	}

	r.section("Users whose names look alike (only one of each group could be created today):")
	for _, g := range groups.groups() {
		names := make([]string, len(g))
		for i, u := range g {
			names[i] = fmt.Sprintf("%s (id %d)", quoteName(u.Name), u.ID)
		}
		r.finding("%s", strings.Join(names, ", "))
	}

	r.section("Stored data that disagrees with itself:")
	for _, p := range nsMismatch {
		repair := ""
		if t, err := rules.Parse(p.Title); err == nil && string(t) == p.Title {
			repair = "; wikid fix-titles corrects it"
		}
		r.finding("page %d %q: its namespace column says %s, its title %s%s", p.PageID, p.Title, nsName(p.NS), nsName(wiki.Title(p.Title).Namespace()), repair)
	}
	for _, u := range groups.staleSkeletons {
		r.finding("user %d %q: its stored look-alike key (users.skeleton) is out of date, so look-alikes of it are not refused", u.ID, u.Name)
	}
	return db.EachInconsistency(ctx, func(in store.Inconsistency) error {
		switch {
		case in.Title != "":
			r.finding("page %d %q: %s", in.PageID, in.Title, in.Problem)
		default:
			r.finding("%s", in.Problem)
		}
		return nil
	})
}

// nsName names a namespace for a message.
func nsName(ns string) string {
	if ns == "" {
		return "(main)"
	}
	return fmt.Sprintf("%q", ns)
}

// quoteName quotes a name, adding its escaped form when it holds non-ASCII
// characters, so that look-alikes read apart: "Аdmin" ("\u0410dmin").
func quoteName(s string) string {
	q, ascii := fmt.Sprintf("%q", s), fmt.Sprintf("%+q", s)
	if q == ascii {
		return q
	}
	return q + " (" + ascii + ")"
}

// lookAlikes groups users that share a look-alike key: any of
// wiki.UserNameLookAlikeKeys of their names, or their stored skeleton. It
// holds every key and name in memory, which is small beside a wiki's pages.
type lookAlikes struct {
	byKey          map[string]int64 // key → the first user seen with it
	parent         map[int64]int64  // union-find over user ids
	users          map[int64]store.CheckUser
	staleSkeletons []store.CheckUser
}

func newLookAlikes() *lookAlikes {
	return &lookAlikes{byKey: map[string]int64{}, parent: map[int64]int64{}, users: map[int64]store.CheckUser{}}
}

func (l *lookAlikes) root(id int64) int64 {
	for l.parent[id] != id {
		l.parent[id] = l.parent[l.parent[id]]
		id = l.parent[id]
	}
	return id
}

func (l *lookAlikes) add(u store.CheckUser) {
	l.users[u.ID] = u
	l.parent[u.ID] = u.ID
	keys := wiki.UserNameLookAlikeKeys(u.Name)
	if u.Skeleton != wiki.UserNameSkeleton(u.Name) {
		l.staleSkeletons = append(l.staleSkeletons, u)
		if u.Skeleton != "" {
			keys = append(keys, u.Skeleton)
		}
	}
	for _, k := range keys {
		other, ok := l.byKey[k]
		if !ok {
			l.byKey[k] = u.ID
			continue
		}
		a, b := l.root(other), l.root(u.ID)
		if a != b {
			l.parent[max(a, b)] = min(a, b)
		}
	}
}

// groups returns the groups of two or more users, each in id order, in the
// order of their first user.
func (l *lookAlikes) groups() [][]store.CheckUser {
	byRoot := map[int64][]store.CheckUser{}
	for id := range l.parent {
		if r := l.root(id); r != id {
			byRoot[r] = append(byRoot[r], l.users[id])
		}
	}
	out := make([][]store.CheckUser, 0, len(byRoot))
	for r, g := range byRoot {
		g = append(g, l.users[r])
		slices.SortFunc(g, func(a, b store.CheckUser) int { return cmp.Compare(a.ID, b.ID) })
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b []store.CheckUser) int { return cmp.Compare(a[0].ID, b[0].ID) })
	return out
}
