package web

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/httpx"
	"github.com/wikid/wikid/internal/mwxml"
	"github.com/wikid/wikid/internal/wiki"
)

const (
	importPath = "/wiki/Special:Import"
	// An export of the form writes at most exportMaxPages pages and stops
	// after the page that passes exportMaxBytes of text: one request's
	// worth of work; the form says so.
	exportMaxPages = 1000
	// exportsPerMinute is how many lists or categories one client may
	// export a minute.
	exportsPerMinute = 6
	exportMaxBytes   = 64 << 20
)

// dumpData is the Special:Export and Special:Import page.
type dumpData struct {
	Export   bool // the export form, else the import form
	Error    string
	Pages    string // the export form's titles, one per line
	Category string
	CurOnly  bool
	MaxPages int
	MaxSize  string
	// Result is what an import did (nil before one).
	Result *engine.DumpStats
	Notes  []string
}

// exportPage answers Special:Export: its form; a dump of one page's
// current revision (GET Special:Export/Title, as MediaWiki answers it);
// or the dump the form asks for (POST). A dump is an attachment, never
// stored by any cache (a form's answer), written as it is read.
func (s *Server) exportPage(w http.ResponseWriter, r *http.Request, arg string) error {
	if r.Method != http.MethodPost && arg == "" {
		return s.writeDumpForm(w, r, http.StatusOK, dumpData{Export: true, CurOnly: true})
	}
	base, _ := s.feedBase(r)
	req := engine.ExportRequest{SiteName: s.cfg.SiteName, Base: base + "/wiki/Main_Page",
		MaxPages: exportMaxPages, MaxBytes: exportMaxBytes}
	name := "export"
	if r.Method != http.MethodPost {
		t, err := s.titles.Parse(arg)
		if err != nil {
			return wiki.Errorf(wiki.KindInvalid, "give a page: Special:Export/Title (%s)", wiki.Message(err))
		}
		req.Titles, name = []wiki.Title{t}, t.Key()
	} else {
		d := dumpData{Export: true, Pages: r.PostForm.Get("pages"), Category: strings.TrimSpace(r.PostForm.Get("catname")),
			CurOnly: r.PostForm.Get("curonly") != ""}
		fail := func(err error) error {
			d.Error = sentence(wiki.Message(err))
			return s.writeDumpForm(w, r, statusOf(err), d)
		}
		// A list or a category may read up to exportMaxBytes of text:
		// a few a minute per client.
		if wait, ok := s.exports.allow(s.limitKey(r)); !ok {
			w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds())+1))
			return fail(&wiki.Error{Kind: wiki.KindTooMany, RetryAfter: wait,
				Msg: fmt.Sprintf("you have exported %d lists of pages in the last minute; wait a minute and try again, or use wikid export on the server", exportsPerMinute)})
		}
		req.Full, req.Templates = !d.CurOnly, r.PostForm.Get("templates") != ""
		for _, line := range strings.Split(d.Pages, "\n") {
			if line = strings.TrimSpace(line); line == "" {
				continue
			}
			t, err := s.titles.Parse(line)
			if err != nil {
				return fail(wiki.Errorf(wiki.KindInvalid, "%q is not a title: %s", sanitizeLine(line), wiki.Message(err)))
			}
			req.Titles = append(req.Titles, t)
		}
		if len(req.Titles) > exportMaxPages {
			return fail(wiki.Errorf(wiki.KindInvalid, "%d titles: one export writes at most %d pages; split the list", len(req.Titles), exportMaxPages))
		}
		if d.Category != "" {
			c := d.Category
			if !strings.Contains(c, ":") {
				c = wiki.NSCategory + ":" + c
			}
			t, err := s.titles.Parse(c)
			if err != nil || t.Namespace() != wiki.NSCategory {
				return fail(wiki.Errorf(wiki.KindInvalid, "%q is not a category's name", sanitizeLine(d.Category)))
			}
			req.Category = t
		}
		if len(req.Titles) == 0 && req.Category == "" {
			return fail(wiki.Errorf(wiki.KindInvalid, "give the titles of the pages to export, one per line, or a category"))
		}
	}
	resp := &httpx.Response{Type: "application/xml; charset=utf-8", Header: http.Header{
		"Content-Disposition": {fmt.Sprintf("attachment; filename*=UTF-8''%s.xml", escapeFilename(name))},
	}}
	return httpx.WriteStream(w, r, resp, func(out io.Writer) error {
		st, err := s.eng.Export(r.Context(), out, req)
		if err != nil {
			s.log.Warn("export cut short", "err", err, "pages", st.Pages)
		}
		return nil
	})
}

// importPage answers Special:Import (administrators only): the form, and
// the import of the dump it sends (plain, gzip or bzip2, at most
// max_import_bytes), through the same code as wikid import, with a page
// telling what it did.
func (s *Server) importPage(w http.ResponseWriter, r *http.Request, _ string) error {
	if err := s.requireAdmin(r); err != nil {
		return err
	}
	if r.Method != http.MethodPost {
		return s.writeDumpForm(w, r, http.StatusOK, dumpData{})
	}
	d := dumpData{}
	fail := func(err error) error {
		if k := wiki.KindOf(err); k == wiki.KindInternal || k == wiki.KindUnauthorized || k == wiki.KindTooMany {
			return err
		}
		d.Error = sentence(wiki.Message(err))
		return s.writeDumpForm(w, r, statusOf(err), d)
	}
	if err := s.checkBlock(r); err != nil {
		return fail(err)
	}
	uid, name := s.editor(r)
	key := "u" + fmt.Sprint(uid)
	if uid == 0 {
		key = "a" + name
	}
	if wait, ok := s.uploads.allow(key); !ok {
		return fail(&wiki.Error{Kind: wiki.KindTooMany, RetryAfter: wait, Msg: "you have sent many files in the last minute; wait a minute and try again"})
	}
	form, err := s.readMultipart(w, r, s.cfg.ImportLimit(), s.tooLargeImport)
	defer form.Done()
	if err != nil {
		return fail(err)
	}
	if err := s.checkCSRF(r); err != nil {
		return fail(err)
	}
	if !form.HasFile {
		return fail(wiki.Errorf(wiki.KindInvalid, "choose a dump file (.xml, .xml.gz or .xml.bz2) to import"))
	}
	body, _, err := mwxml.Decompress(bytes.NewReader(form.File))
	if err != nil {
		return fail(wiki.Errorf(wiki.KindInvalid, "%s", strings.TrimPrefix(err.Error(), "mwxml: ")))
	}
	comment := strings.TrimSpace(form.Fields.Get("log-comment"))
	if comment == "" {
		comment = "Imported from " + sanitizeLine(form.FileName)
	}
	ed := s.editorOf(r)
	st, err := s.eng.ImportDump(r.Context(), body, engine.DumpOptions{Editor: ed, Log: comment, LocalUsers: true})
	form.Done() // before the answer: the next dump may come as soon as it is read
	d.Result = &st
	d.Notes = dumpNotes(st)
	if err != nil {
		d.Error = sentence("the import stopped: " + strings.TrimPrefix(wiki.Message(err), "mwxml: ") +
			"; the pages before it are imported, and importing the dump again, once fixed, skips them")
		return s.writeDumpForm(w, r, statusOf(wiki.Errorf(wiki.KindInvalid, "%v", err)), d)
	}
	return s.writeDumpForm(w, r, http.StatusOK, d)
}

// dumpNotes says what an import left out.
func dumpNotes(st engine.DumpStats) []string {
	var out []string
	if st.Hidden > 0 {
		out = append(out, fmt.Sprintf("%d revisions were not imported: their text is hidden (deleted) in the dump.", st.Hidden))
	}
	for m, n := range st.Unsupported {
		out = append(out, fmt.Sprintf("%d revisions of content model %q were not imported: this wiki has wikitext and Markdown pages.", n, m))
	}
	for ns, n := range st.ForeignNS {
		out = append(out, fmt.Sprintf("%d pages of the namespace %q, which this wiki has not, were imported into the main namespace with their prefix.", n, ns))
	}
	return out
}

func (s *Server) tooLargeImport() error {
	return wiki.Errorf(wiki.KindTooLarge, "the dump is larger than this form's limit of %s; import it with wikid import on the server, which has no limit, or ask for max_import_bytes to be raised",
		wiki.ByteSize(s.cfg.ImportLimit()))
}

func (s *Server) writeDumpForm(w http.ResponseWriter, r *http.Request, status int, d dumpData) error {
	d.MaxPages, d.MaxSize = exportMaxPages, wiki.ByteSize(exportMaxBytes)
	title := "Import pages"
	if d.Export {
		title = "Export pages"
	} else {
		d.MaxSize = wiki.ByteSize(s.cfg.ImportLimit())
	}
	p := s.formPage(r, title)
	p.Data = d
	s.writePage(w, r, status, "dumps", p)
	return nil
}
