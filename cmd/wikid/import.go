package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/wikid/wikid/internal/app"
	"github.com/wikid/wikid/internal/config"
	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/wiki"
)

const importUsage = "usage: wikid import FILE.xml[.gz|.bz2]|FILE.jsonl|DIRECTORY|- [--summary TEXT] [--user NAME] [--files DIR] [--no-local-users] [--username-prefix P]"

// importCommand imports pages from JSON lines ({"title": …, "text": …} per
// line; "-" reads standard input) or from a directory of Markdown files
// (the title is the path without .md, underscores as spaces).
func importCommand(ctx context.Context, cfg config.Config, log *slog.Logger, args []string, summary, user string, df dumpFlags, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) != 1 {
		return errors.New(importUsage)
	}
	src := args[0]
	var pages iter.Seq2[engine.ImportPage, error]
	rules := cfg.TitleRules()
	// A file or standard input is a MediaWiki dump (XML, maybe gzip or
	// bzip2) or JSON lines, told by its content.
	input := func(r io.Reader, name string, size int64) error {
		in := &countingFile{r: r}
		body, xml, err := sniffDump(in)
		if err != nil {
			return fmt.Errorf("import: %s: %w", name, err)
		}
		if xml {
			return importDump(ctx, cfg, log, in, body, size, summary, user, df, stdout, stderr)
		}
		pages = jsonLines(body, name, rules)
		return nil
	}
	switch info, err := os.Stat(src); {
	case src == "-":
		if err := input(stdin, "standard input", 0); err != nil || pages == nil {
			return err
		}
	case err != nil:
		return fmt.Errorf("import: %w", err)
	case info.IsDir():
		pages = markdownDir(src, rules)
	default:
		f, err := os.Open(src)
		if err != nil {
			return fmt.Errorf("import: %w", err)
		}
		defer f.Close()
		if err := input(f, src, info.Size()); err != nil || pages == nil {
			return err
		}
	}
	if summary == "" {
		summary = "Imported"
	}
	a, ed, err := openAs(ctx, cfg, log, "import", user)
	if err != nil {
		return err
	}
	defer a.Close()
	t0 := time.Now()
	last := t0
	st, err := a.Engine.Import(ctx, pages, ed, summary, func(st engine.ImportStats) {
		if time.Since(last) >= 5*time.Second {
			last = time.Now()
			fmt.Fprintf(stderr, "import: %d pages, %.0f pages/s\n", st.Pages, float64(st.Pages)/time.Since(t0).Seconds())
		}
	})
	mergeSearch(ctx, a.Store, log, err)
	took := time.Since(t0)
	fmt.Fprintf(stdout, "imported %d pages (%d created, %d changed, %d unchanged) in %v, %.0f pages/s\n",
		st.Pages, st.Created, st.Changed, st.Unchanged, took.Round(time.Millisecond), float64(st.Pages)/max(took.Seconds(), 1e-9))
	if err != nil {
		return fmt.Errorf("import stopped after %d pages (they are saved): %w", st.Pages, err)
	}
	return nil
}

// mergeSearch ends an import that went well: its search segments merge in
// the background, and it waits for them (counting that in its time), so
// that the wiki it leaves searches at full speed. A store whose index has
// no segments (PostgreSQL's) has nothing to wait for.
func mergeSearch(ctx context.Context, st wiki.Store, log *slog.Logger, importErr error) {
	s, ok := st.(interface{ MergeSearch(context.Context) error })
	if !ok || importErr != nil {
		return
	}
	if err := s.MergeSearch(ctx); err != nil {
		log.Warn("import: merging the search index (the server will)", "err", err)
	}
}

// jsonLines reads one page per line: {"title": "…", "text": "…"}, with
// an optional "content_model" (markdown or wikitext; absent: the wiki's
// default_content_model), the title parsed by rules, the wiki's.
func jsonLines(r io.Reader, name string, rules wiki.TitleRules) iter.Seq2[engine.ImportPage, error] {
	return func(yield func(engine.ImportPage, error) bool) {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
		for n := 1; sc.Scan(); n++ {
			// The line's bytes, not a copy: Unmarshal copies what it keeps.
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 {
				continue
			}
			p, ok := pageLineFast(line)
			if !ok {
				if err := json.Unmarshal(line, &p); err != nil {
					yield(engine.ImportPage{}, fmt.Errorf("%s line %d: not a JSON object with title and text: %v", name, n, err))
					return
				}
			}
			if p.Text == nil {
				p.Text = p.Source
			}
			if p.Text == nil {
				yield(engine.ImportPage{}, fmt.Errorf("%s line %d: no \"text\"", name, n))
				return
			}
			t, err := rules.Parse(p.Title)
			if err != nil {
				yield(engine.ImportPage{}, fmt.Errorf("%s line %d: title %q: %s", name, n, p.Title, wiki.Message(err)))
				return
			}
			if m := wiki.ContentModel(p.Model); m != "" && !m.Valid() {
				yield(engine.ImportPage{}, fmt.Errorf("%s line %d: content_model %q: want %s, or leave it out for the wiki's default", name, n, p.Model, engine.ModelNames()))
				return
			}
			if !yield(engine.ImportPage{Title: t, Text: *p.Text, Model: wiki.ContentModel(p.Model)}, nil) {
				return
			}
		}
		if err := sc.Err(); err != nil {
			yield(engine.ImportPage{}, fmt.Errorf("%s: %w", name, err))
		}
	}
}

// pageLine is a line of JSON lines import.
type pageLine struct {
	Title  string  `json:"title"`
	Text   *string `json:"text"`
	Source *string `json:"source"` // the REST API's name
	Model  string  `json:"content_model"`
}

// pageLineFast decodes line as json.Unmarshal into a pageLine would, for
// the lines most files hold: one object whose keys are the fields' names
// as written and whose values are strings of valid UTF-8 without
// surrogate escapes. It reports false for anything else (other keys,
// null, a key in other case, an error), which the caller hands to
// json.Unmarshal. It reads a line once where json.Unmarshal reads it twice
// (checking it, then decoding it): a tenth of a large import's parsing.
func pageLineFast(line []byte) (p pageLine, ok bool) {
	d := jsonScan{b: line}
	if !d.skip('{') {
		return p, false
	}
	if d.skip('}') {
		return p, d.end()
	}
	for {
		key, ok := d.str()
		if !ok || !d.skip(':') {
			return p, false
		}
		v, ok := d.str()
		if !ok {
			return p, false
		}
		switch key {
		case "title":
			p.Title = v
		case "text":
			p.Text = &v
		case "source":
			p.Source = &v
		case "content_model":
			p.Model = v
		default:
			return p, false
		}
		if d.skip('}') {
			return p, d.end()
		}
		if !d.skip(',') {
			return p, false
		}
	}
}

// jsonScan reads the JSON of pageLineFast.
type jsonScan struct {
	b []byte
	i int
}

func (d *jsonScan) space() {
	for d.i < len(d.b) && (d.b[d.i] == ' ' || d.b[d.i] == '\t' || d.b[d.i] == '\n' || d.b[d.i] == '\r') {
		d.i++
	}
}

// skip reads c after any space.
func (d *jsonScan) skip(c byte) bool {
	d.space()
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// end reports whether nothing but space is left.
func (d *jsonScan) end() bool {
	d.space()
	return d.i == len(d.b)
}

// str reads a string after any space: false for one it leaves to
// json.Unmarshal (invalid UTF-8, a surrogate escape) or that is not one.
func (d *jsonScan) str() (string, bool) {
	if !d.skip('"') {
		return "", false
	}
	start := d.i
	for d.i < len(d.b) {
		switch c := d.b[d.i]; {
		case c == '"':
			s := d.b[start:d.i]
			d.i++
			if !utf8.Valid(s) {
				return "", false
			}
			return string(s), true
		case c == '\\':
			return d.escaped(start)
		case c < 0x20:
			return "", false
		default:
			d.i++
		}
	}
	return "", false
}

// escaped goes on with a string holding escapes from its first one.
func (d *jsonScan) escaped(start int) (string, bool) {
	out := append(make([]byte, 0, len(d.b)-start), d.b[start:d.i]...)
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			if !utf8.Valid(out) {
				return "", false
			}
			return string(out), true
		case c < 0x20:
			return "", false
		case c != '\\':
			// The bytes up to the next quote, escape or control
			// character, appended at once.
			j := d.i + 1
			for j < len(d.b) && d.b[j] != '"' && d.b[j] != '\\' && d.b[j] >= 0x20 {
				j++
			}
			out = append(out, d.b[d.i:j]...)
			d.i = j
			continue
		}
		if d.i+1 >= len(d.b) {
			return "", false
		}
		e := d.b[d.i+1]
		d.i += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			if d.i+4 > len(d.b) {
				return "", false
			}
			var r rune
			for _, h := range d.b[d.i : d.i+4] {
				switch {
				case '0' <= h && h <= '9':
					r = r<<4 | rune(h-'0')
				case 'a' <= h && h <= 'f':
					r = r<<4 | rune(h-'a'+10)
				case 'A' <= h && h <= 'F':
					r = r<<4 | rune(h-'A'+10)
				default:
					return "", false
				}
			}
			if utf16.IsSurrogate(r) {
				return "", false
			}
			d.i += 4
			out = utf8.AppendRune(out, r)
		default:
			return "", false
		}
	}
	return "", false
}

// markdownDir reads every .md file under dir, in path order (symbolic
// links are not followed), titles parsed by rules, the wiki's.
func markdownDir(dir string, rules wiki.TitleRules) iter.Seq2[engine.ImportPage, error] {
	return func(yield func(engine.ImportPage, error) bool) {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || !strings.HasSuffix(path, ".md") || d.Type()&fs.ModeSymlink != 0 {
				return nil // only the directory's own files, not what links lead to
			}
			rel, err := filepath.Rel(dir, path)
			if err != nil {
				return err
			}
			name := strings.ReplaceAll(strings.TrimSuffix(filepath.ToSlash(rel), ".md"), "_", " ")
			t, err := rules.Parse(name)
			if err != nil {
				return fmt.Errorf("%s: title %q: %s", path, name, wiki.Message(err))
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if !utf8.Valid(b) {
				return fmt.Errorf("%s: not UTF-8 text; convert it (iconv -t UTF-8) and import again", path)
			}
			if !yield(engine.ImportPage{Title: t, Text: string(b)}, nil) {
				return fs.SkipAll
			}
			return nil
		})
		if err != nil {
			yield(engine.ImportPage{}, err)
		}
	}
}

// openAs opens the wiki for a command that changes it, without job
// workers (its jobs wait for the server's), and returns the editor its
// changes are attributed to: the account named user, or the maintenance
// script when user is empty. cmd names the command in errors.
func openAs(ctx context.Context, cfg config.Config, log *slog.Logger, cmd, user string) (*app.App, engine.Editor, error) {
	cfg.JobWorkers = 0
	a, err := app.Open(ctx, cfg, log)
	if err != nil {
		return nil, engine.Editor{}, err
	}
	ed := engine.Editor{UserName: wiki.MaintenanceActor.Name, Group: wiki.GroupAdmin}
	if user != "" {
		u, err := a.Store.FindUserByName(ctx, user)
		if err != nil {
			a.Close()
			return nil, engine.Editor{}, fmt.Errorf("%s: user %q: %w", cmd, user, err)
		}
		ed = engine.Editor{UserID: u.ID, UserName: u.Name, Group: u.Group}
	}
	return a, ed, nil
}
