package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"
	"sync/atomic"
	"time"

	"github.com/wikid/wikid/internal/mwxml"
	"github.com/wikid/wikid/internal/wiki"
)

// DumpOptions are how a MediaWiki dump is imported.
type DumpOptions struct {
	// Editor is who imports: the performer of the import log entries
	// and of the uploads of files.
	Editor Editor
	// Log is the import log entries' comment ("" for no entries).
	Log string
	// UserPrefix marks the authors of imported revisions as from another
	// wiki, as MediaWiki's importer does: "imported" stores the author
	// Ann as "imported>Ann", with no account. Empty: "imported".
	UserPrefix string
	// LocalUsers attributes a revision to the account of the same name
	// when the wiki has one, as importDump.php does unless given
	// --no-local-users.
	LocalUsers bool
	// File, when not nil, returns the bytes of an uploaded file by its
	// name in the dump (its title without the namespace): a missing one
	// is ErrNotFound, and counted, not an error.
	File func(name string) ([]byte, error)
	// Progress, if not nil, is called after each batch with the counts
	// so far (those of pages and revisions, and Offset).
	Progress func(DumpStats)
}

// DumpStats counts what an import of a dump did.
type DumpStats struct {
	HistoryStats
	Hidden       int            // revisions whose text the dump hides (deleted): not imported
	Unsupported  map[string]int // revisions not imported, by content model (Wikid has wikitext and Markdown)
	ForeignNS    map[string]int // pages of namespaces the wiki has not, by name: imported into the main namespace, prefix and all
	Files        int            // file versions uploaded
	FilesMissing int            // file versions whose file was not found
	FilesSkipped int            // file versions the wiki has already
	Offset       int64          // bytes of XML read
}

// maxPagePart is how much text of one page a history import holds at
// once; a longer history is imported in parts.
const maxPagePart = 64 << 20

// pendingUpload is an upload of the dump, made after the pages are in.
type pendingUpload struct {
	title wiki.Title
	up    mwxml.Upload
}

// ImportDump imports a MediaWiki XML dump (r: decompressed, see
// mwxml.Decompress) through ImportHistory: namespaces are matched by
// their numbers (the dump's names, the wiki's), authors marked as
// imported (DumpOptions.UserPrefix), every revision kept with its time,
// comment and minor flag. Uploads' files, when opts.File finds them, are
// uploaded after the pages, with their own time and author. A malformed
// dump ends the import with an error naming the position and the page;
// the pages before it are imported.
func (e *Engine) ImportDump(ctx context.Context, r io.Reader, opts DumpOptions) (DumpStats, error) {
	st := DumpStats{Unsupported: map[string]int{}, ForeignNS: map[string]int{}}
	rd, err := mwxml.NewReader(r, mwxml.Limits{MaxTextBytes: e.maxPage})
	if err != nil {
		return st, err
	}
	site := rd.SiteInfo()
	prefix := opts.UserPrefix
	if prefix == "" {
		prefix = "imported"
	}
	users := map[string]wiki.HistoryRevision{}
	author := func(c mwxml.Contributor) (int64, string) {
		switch {
		case c.Deleted:
			return 0, prefix + ">Unknown user"
		case c.Username == "":
			return 0, c.IP
		case strings.Contains(c.Username, ">"):
			return 0, c.Username // imported already, from another wiki
		}
		if u, ok := users[c.Username]; ok {
			return u.UserID, u.UserName
		}
		u := wiki.HistoryRevision{UserName: prefix + ">" + c.Username}
		if opts.LocalUsers {
			if acc, err := e.store.FindUserByName(ctx, c.Username); err == nil {
				u.UserID, u.UserName = acc.ID, acc.Name
			}
		}
		users[c.Username] = u
		return u.UserID, u.UserName
	}
	rules := e.TitleRules()
	var uploads []pendingUpload
	var offset atomic.Int64 // written by the reading stage, read by Progress
	pages := func(yield func(HistoryPage, error) bool) {
		var cur HistoryPage
		var title wiki.Title
		curN := 0 // cur's number among the dump's pages (Reader.Pages)
		size := 0
		emit := func() bool {
			if len(cur.Revisions) == 0 {
				return true
			}
			p := cur
			cur.Revisions, size = nil, 0
			return yield(p, nil)
		}
		for {
			it, err := rd.Next()
			offset.Store(rd.Offset())
			if err == io.EOF {
				emit()
				return
			}
			if err != nil {
				// The page being read is left out whole, so that the
				// wiki stays as it was before it; the one before it, if
				// it ended, goes in.
				if n, in := rd.Pages(); (!in || n > curN) && !emit() {
					return
				}
				yield(HistoryPage{}, err)
				return
			}
			switch v := it.(type) {
			case *mwxml.Page:
				if !emit() {
					return
				}
				n, _ := rd.Pages()
				var foreign string
				title, foreign, err = dumpTitle(site, rules, v)
				if err != nil {
					yield(HistoryPage{}, fmt.Errorf("byte %d: page %q: %w", rd.Offset(), v.Title, err))
					return
				}
				if foreign != "" {
					st.ForeignNS[foreign]++
				}
				cur, curN = HistoryPage{Title: title}, n
				if v.Redirect != "" {
					if t, _, err := rules.ParseLink(v.Redirect); err == nil {
						cur.Redirect = t
					}
				}
			case *mwxml.Revision:
				if v.TextDeleted {
					st.Hidden++
					continue
				}
				model := wiki.ContentModel(v.Model)
				if model != wiki.ModelWikitext && model != wiki.ModelMarkdown {
					st.Unsupported[v.Model]++
					continue
				}
				if size+len(v.Text) > maxPagePart && !emit() {
					return
				}
				uid, name := author(v.Contributor)
				summary := v.Comment
				if v.CommentDeleted {
					summary = ""
				}
				cur.Revisions = append(cur.Revisions, wiki.HistoryRevision{
					Text: v.Text, Time: v.Timestamp, UserID: uid, UserName: name,
					Summary: summary, Minor: v.Minor, Model: model,
				})
				size += len(v.Text)
			case *mwxml.Upload:
				if opts.File != nil && title.Namespace() == wiki.NSFile {
					uploads = append(uploads, pendingUpload{title, *v})
				}
			}
		}
	}
	hopts := HistoryOptions{Editor: opts.Editor, Log: opts.Log}
	if opts.Progress != nil {
		hopts.Progress = func(h HistoryStats) {
			opts.Progress(DumpStats{HistoryStats: h, Offset: offset.Load()})
		}
	}
	h, err := e.ImportHistory(ctx, iter.Seq2[HistoryPage, error](pages), hopts)
	st.HistoryStats, st.Offset = h, offset.Load()
	if err != nil {
		return st, err
	}
	for _, u := range uploads {
		if err := e.importUpload(ctx, u, opts, author, &st); err != nil {
			return st, err
		}
	}
	return st, nil
}

// importUpload uploads one file version of a dump, with its time and
// author; the same bytes as the current version are skipped.
func (e *Engine) importUpload(ctx context.Context, u pendingUpload, opts DumpOptions, author func(mwxml.Contributor) (int64, string), st *DumpStats) error {
	name := u.up.Filename
	if name == "" {
		name = u.title.Name()
	}
	data, err := opts.File(name)
	if errors.Is(err, wiki.ErrNotFound) {
		st.FilesMissing++
		return nil
	}
	if err != nil {
		return fmt.Errorf("file %q: %w", name, err)
	}
	uid, uname := author(u.up.Contributor)
	ed := Editor{UserID: uid, UserName: uname, Group: opts.Editor.Group}
	_, err = e.Upload(ctx, Upload{Title: u.title, Data: data, Comment: u.up.Comment, Editor: ed, Time: u.up.Timestamp})
	switch {
	case errors.Is(err, errSameFile):
		st.FilesSkipped++
		return nil
	case err != nil:
		return fmt.Errorf("file %q: %w", name, err)
	}
	st.Files++
	return nil
}

// dumpTitle maps a dump page's title onto the wiki's namespaces by the
// namespace's number: the dump's local prefix (Benutzer:, or the site's
// name for the project namespace) becomes the wiki's canonical one. A
// namespace the wiki has not (MediaWiki:, Portal:, Module:…) keeps its
// prefix in the main namespace, as MediaWiki's importer does; foreign
// names it.
func dumpTitle(site mwxml.SiteInfo, rules wiki.TitleRules, p *mwxml.Page) (t wiki.Title, foreign string, err error) {
	name := p.Title
	if p.NS != 0 {
		local := ""
		if n, ok := site.NamespaceByKey(p.NS); ok {
			local = n.Name
		}
		ns, known := wiki.NamespaceByID(p.NS)
		rest, cut := "", false
		if local != "" {
			rest, cut = cutPrefix(name, local+":")
		}
		if !cut {
			// A dump without siteinfo, or a title that does not carry
			// its namespace's name: take the name after the first colon.
			_, rest, cut = strings.Cut(name, ":")
		}
		switch {
		case known && cut:
			name = ns.Name + ":" + rest
		case !known:
			foreign = local
			if foreign == "" {
				foreign = fmt.Sprintf("namespace %d", p.NS)
			}
		}
	}
	t, err = rules.Parse(name)
	if err != nil {
		return "", "", errors.New(wiki.Message(err))
	}
	return t, foreign, nil
}

// cutPrefix is strings.CutPrefix ignoring the case of the prefix's first
// letter and with spaces and underscores alike.
func cutPrefix(s, prefix string) (string, bool) {
	if len(s) < len(prefix) {
		return "", false
	}
	norm := func(x string) string { return strings.ToLower(strings.ReplaceAll(x, "_", " ")) }
	if norm(s[:len(prefix)]) != norm(prefix) {
		return "", false
	}
	return s[len(prefix):], true
}

// uploadTime is when an upload is recorded: its own time when it has one
// (an imported file's), else now.
func (e *Engine) uploadTime(up Upload) time.Time {
	if !up.Time.IsZero() {
		return up.Time
	}
	return e.now()
}
