package main

// The scale part (go run ./bench -scale): a real wikid holding a large
// generated wiki (scalecorpus.go). It measures the import through the REST
// API, the search index's lag behind it, the database's bytes per page,
// search latency by query class, list pages and history on a miss, a cold
// start, and wikid's RSS at the end. It only measures: no target missed
// makes it fail.

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // dbstat, on a copy of the stopped wiki's database
)

var scaleFlags struct {
	on      bool
	skip    bool
	pages   int
	clients int
	queries int
	profile string
	data    string
	corpus  string
}

func init() {
	flag.BoolVar(&scaleFlags.on, "scale", false, "run only the scale part: import a generated wiki through REST, then search, lists, cold start, size and RSS (output bench/out/scale.md unless -out)")
	flag.BoolVar(&scaleFlags.skip, "no-scale", false, "leave the scale part out of a -smoke run (a full run leaves it to -scale: it takes long)")
	flag.IntVar(&scaleFlags.pages, "scale-pages", 100000, "pages the scale part generates and imports (-smoke: 1000)")
	flag.IntVar(&scaleFlags.clients, "scale-clients", 4, "parallel clients of the import and of the concurrent searches")
	flag.IntVar(&scaleFlags.queries, "scale-queries", 200, "queries per class, endpoint and concurrency (-smoke: 10)")
	flag.StringVar(&scaleFlags.corpus, "scale-corpus", "", "write the generated wiki (-scale-pages pages) to this file as JSON lines for wikid import, and stop")
	flag.StringVar(&scaleFlags.profile, "scale-cpuprofile", "", "write a CPU profile of the bulk import (wikid import) to this file (for go tool pprof)")
	flag.StringVar(&scaleFlags.data, "scale-data", "", "skip the import: measure search, lists, cold start and RSS on this data folder, which holds the -scale-pages wiki imported before (wikid import of a -scale-corpus file)")
}

// The targets printed beside the figures.
const (
	scaleSearchP99  = 50 * time.Millisecond // with -scale-clients concurrent clients
	scaleImportRate = 2000                  // pages/s, search indexed
	scaleBytesPage  = 12 << 10
	scaleRSS        = 300 << 20
	scaleSeed       = 20240601
)

// formEscape escapes a query value as a browser submitting a form does
// (the form wikid redirects other spellings to): * stays as it is.
func formEscape(q string) string { return strings.ReplaceAll(url.QueryEscape(q), "%2A", "*") }

// writeJSONLines writes pages as `wikid import` reads them.
func writeJSONLines(path string, pages []scalePage) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	enc := json.NewEncoder(bw)
	for _, p := range pages {
		if err := enc.Encode(map[string]string{"title": p.title, "text": p.source}); err != nil {
			f.Close()
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// scaleClient is a keep-alive client with a timeout long enough for a
// slow search at scale.
func scaleClient() *http.Client {
	c := keepAliveClient()
	c.Timeout = 2 * time.Minute
	return c
}

type scaleResult struct {
	pages, bytes int
	lang         map[string]int
	gen          time.Duration
	importTook   time.Duration // the REST part
	importErrs   int
	restPages    int
	bulkTook     time.Duration // wikid import
	bulkPages    int
	bulkCPU      scaleCPU      // during wikid import
	bulkLag      time.Duration // bulk import end to its last page found by REST search
	lag          time.Duration // import end to jobs drained
	lagSearch    time.Duration // import end to the last page found by REST search
	jobsDone     int
	dbBytes      int64
	dbFiles      string
	tables       []scaleTable
	search       []scaleSearchRow
	lists        []scaleSearchRow
	cold         time.Duration
	rss, rssHWM  int64
	took         time.Duration
	notes        []string
}

type scaleTable struct {
	name  string
	bytes int64
}

type scaleSearchRow struct {
	class, endpoint string
	clients         int
	lat             []time.Duration // sorted
	hits, errs      int
	example         string
}

// modeOut is where a mode writes its table: out if -out was given, else
// bench/out/name, relative paths under the module root.
func modeOut(out, root, name string) string {
	if !flagSet("out") {
		out = filepath.Join("bench", "out", name)
	}
	if !filepath.IsAbs(out) {
		out = filepath.Join(root, out)
	}
	return out
}

// runScale is the -scale mode: the scale part's table alone.
func runScale(ctx context.Context, o options) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	o.out = modeOut(o.out, root, "scale.md")
	text, err := scaleRun(ctx, o)
	if err != nil {
		return err
	}
	return printAndWrite(text, o.out)
}

// scaleRun runs the scale part and returns its table.
func scaleRun(ctx context.Context, o options) (string, error) {
	start := time.Now()
	pages, clients, queries := scaleFlags.pages, max(1, scaleFlags.clients), max(1, scaleFlags.queries)
	if o.smoke {
		if !flagSet("scale-pages") {
			pages = 1000
		}
		if !flagSet("scale-queries") {
			queries = 10
		}
	}
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp("", "wikid-scale-")
	if err != nil {
		return "", err
	}
	var w *proc
	defer func() {
		if w != nil {
			w.stop()
		}
		if o.keep {
			step("scale: kept %s", tmp)
		} else {
			os.RemoveAll(tmp)
		}
	}()

	res := &scaleResult{pages: pages, lang: map[string]int{}}
	step("scale: generating %d pages (seed %d)", pages, scaleSeed)
	t0 := time.Now()
	corpus := newScaleCorpus(pages, scaleSeed)
	res.gen = time.Since(t0)
	for _, p := range corpus.pages {
		res.bytes += len(p.source)
		res.lang[p.lang]++
	}

	step("scale: building wikid in %s", tmp)
	bin, err := buildWikid(root, tmp)
	if err != nil {
		return "", err
	}
	data := filepath.Join(tmp, "data")
	if scaleFlags.data != "" {
		data = scaleFlags.data
		res.notes = append(res.notes, "the import was not measured: search and lists ran on "+data)
		// As after an import, or on a server that has run a while: the
		// database in the page cache, so that the first queries measure
		// the search and not the disk.
		if f, err := os.Open(filepath.Join(data, "wikid.db")); err == nil {
			n, _ := io.Copy(io.Discard, f)
			f.Close()
			res.notes = append(res.notes, fmt.Sprintf("the database (%d MB) was read once before, into the page cache", n>>20))
		}
	} else if err := scaleBuild(ctx, res, corpus, bin, data, tmp, clients); err != nil {
		return "", err
	}

	// Cold start, and the measured wikid: no edge cache, so every search,
	// list and history is answered by the handlers.
	t0 = time.Now()
	w, base, err := startWikid("wikid-scale-nocache", bin, data, tmp, map[string]any{"no_edge_cache": true})
	if err != nil {
		return "", err
	}
	res.cold = time.Since(t0)
	if err := scaleSearch(ctx, res, corpus, base, clients, queries); err != nil {
		return "", err
	}
	if err := scaleLists(ctx, res, corpus, base, queries); err != nil {
		return "", err
	}
	res.rss, _ = pidStatus(w.pid(), "VmRSS")
	res.rssHWM, _ = pidStatus(w.pid(), "VmHWM")
	res.took = time.Since(start)

	return res.markdown(o.smoke, clients), nil
}

// scaleBuild makes the wiki in data: an admin, then the import, measured
// into res, and the database's size once the server is stopped.
func scaleBuild(ctx context.Context, res *scaleResult, corpus *scaleCorpus, bin, data, tmp string, clients int) error {
	pages := len(corpus.pages)
	const user, password = "ScaleAdmin", "scale-password-long-enough"
	if _, err := wikidCLI(bin, data, password+"\n", "user", "add", user, "--admin"); err != nil {
		return err
	}
	token, err := wikidCLI(bin, data, "", "token", "create", user)
	if err != nil {
		return err
	}
	token = strings.TrimSpace(token[strings.LastIndexAny(token, " \n\t")+1:])

	// The import: default settings (the edge cache on, one job worker).
	w, base, err := startWikid("wikid-scale", bin, data, tmp, nil)
	if err != nil {
		return err
	}
	defer func() {
		if w != nil {
			w.stop()
		}
	}()
	// The bulk import: every page but the last few, through `wikid import`
	// beside the running server (as an operator would); the rest through
	// REST, clients at a time, for the per-edit rate.
	rest := min(2000, max(1, pages/10))
	bulk := &scaleCorpus{pages: corpus.pages[:pages-rest]}
	tail := &scaleCorpus{pages: corpus.pages[pages-rest:]}
	jsonl := filepath.Join(tmp, "corpus.jsonl")
	if err := writeJSONLines(jsonl, bulk.pages); err != nil {
		return err
	}
	step("scale: importing %d pages (%d MB of Markdown) with wikid import", len(bulk.pages), res.bytes>>20)
	if scaleFlags.profile != "" {
		// wikid profiles the whole command into WIKID_CPUPROFILE.
		p, err := filepath.Abs(scaleFlags.profile)
		if err != nil {
			return err
		}
		os.Setenv("WIKID_CPUPROFILE", p)
	}
	server0, server0Err := statCPU(w.cmd.Process.Pid)
	machine0, machine0Err := machineCPU()
	t0 := time.Now()
	out, importCPU, err := wikidCLICPU(bin, data, "", "import", jsonl, "--summary", "scale import")
	os.Unsetenv("WIKID_CPUPROFILE")
	if err != nil {
		return err
	}
	res.bulkTook, res.bulkPages = time.Since(t0), len(bulk.pages)
	server1, serverErr := statCPU(w.cmd.Process.Pid)
	machine1, machineErr := machineCPU()
	if serverErr == nil && machineErr == nil && server0Err == nil && machine0Err == nil {
		res.bulkCPU = scaleCPU{importer: importCPU, server: server1 - server0, cores: machine1.cores,
			busy: machine1.busy - machine0.busy, steal: machine1.steal - machine0.steal, idle: machine1.idle - machine0.idle}
	}
	step("scale: %s", strings.TrimSpace(out))
	titles, err := restSearch(ctx, scaleClient(), base, bulk.pages[len(bulk.pages)-1].title, 100)
	if err != nil {
		return err
	}
	res.bulkLag = time.Since(t0) - res.bulkTook
	if !slices.Contains(titles, bulk.pages[len(bulk.pages)-1].title) {
		res.bulkLag = -1
		res.notes = append(res.notes, "the bulk import's last page was not found by search right after the import")
	}
	step("scale: creating the last %d pages through REST with %d clients", rest, clients)
	if err := scaleImport(ctx, res, tail, base, token, clients); err != nil {
		return err
	}
	imported := time.Now()
	step("scale: REST: %d pages in %s (%.0f pages/s); waiting for the job queue", rest, res.importTook.Round(time.Millisecond), float64(rest)/res.importTook.Seconds())
	if err := scaleLag(ctx, res, corpus, w, base, imported); err != nil {
		return err
	}

	// Size: stopped, so the WAL is checkpointed into the database file.
	w.stop()
	w = nil
	if err := scaleSize(res, data, tmp); err != nil {
		return err
	}

	return nil
}

// scaleImport creates every page through POST /w/rest.php/v1/page, clients
// at a time. A failed create is counted and the import goes on; more than
// 1% failures stop the run.
func scaleImport(ctx context.Context, res *scaleResult, c *scaleCorpus, base, token string, clients int) error {
	next := atomic.Int64{}
	var errs atomic.Int64
	var first atomic.Value
	var wg sync.WaitGroup
	t0 := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hc := scaleClient()
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= len(c.pages) {
					return
				}
				if err := createPage(ctx, hc, base, token, c.pages[i].title, c.pages[i].source); err != nil {
					first.CompareAndSwap(nil, err.Error())
					if errs.Add(1) > int64(len(c.pages)/100+1) {
						return
					}
				}
				if i%10000 == 9999 {
					step("scale:   %d pages, %.0f pages/s", i+1, float64(i+1)/time.Since(t0).Seconds())
				}
			}
		}()
	}
	wg.Wait()
	res.importTook = time.Since(t0)
	res.importErrs = int(errs.Load())
	res.restPages = len(c.pages)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if res.importErrs > len(c.pages)/100+1 {
		return fmt.Errorf("scale: import: %d creates failed, the first: %v", res.importErrs, first.Load())
	}
	if res.importErrs > 0 {
		res.notes = append(res.notes, fmt.Sprintf("%d creates failed during the import; the first: %v", res.importErrs, first.Load()))
	}
	return nil
}

// scaleLag waits until the job queue is drained and until REST search
// finds the last imported page by a word of its title.
func scaleLag(ctx context.Context, res *scaleResult, c *scaleCorpus, w *proc, base string, imported time.Time) error {
	hc := scaleClient()
	last := c.pages[len(c.pages)-1]
	// The title's words, each a term (title matches rank first).
	probe := last.title
	found := false
	for {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !found {
			titles, err := restSearch(ctx, hc, base, probe, 100)
			if err != nil {
				return err
			}
			if slices.Contains(titles, last.title) {
				found, res.lagSearch = true, time.Since(imported)
			}
		}
		m, err := jobCounts(hc, w.ops)
		if errors.Is(err, errNoJobStats) {
			time.Sleep(time.Second)
			continue
		}
		if err != nil {
			return err
		}
		if m["queued"] == 0 && m["running"] == 0 && found {
			res.lag, res.jobsDone = time.Since(imported), m["done"]
			if m["dead"] > 0 {
				res.notes = append(res.notes, fmt.Sprintf("%d dead jobs after the import", m["dead"]))
			}
			return nil
		}
		if time.Since(imported) > 2*time.Hour || (!found && m["queued"] == 0 && m["running"] == 0 && time.Since(imported) > 5*time.Minute) {
			return fmt.Errorf("scale: the job queue was not drained 2 h after the import (%v; last page found: %v)", m, found)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// restSearch returns the titles REST search answers for q.
func restSearch(ctx context.Context, hc *http.Client, base, q string, limit int) ([]string, error) {
	u := base + "/w/rest.php/v1/search/page?q=" + url.QueryEscape(q) + "&limit=" + strconv.Itoa(limit)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	r, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer r.Body.Close()
	body, _ := io.ReadAll(r.Body)
	if r.StatusCode != 200 {
		return nil, fmt.Errorf("GET %s: status %d: %.200s", u, r.StatusCode, body)
	}
	var out struct {
		Pages []struct {
			Title string `json:"title"`
			Key   string `json:"key"`
		} `json:"pages"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	var titles []string
	for _, p := range out.Pages {
		titles = append(titles, p.Title, strings.ReplaceAll(p.Key, "_", " "))
	}
	return titles, nil
}

// scaleSize sums the data directory's database files (wikid stopped, so
// the WAL is checkpointed) and, when the driver has the dbstat table,
// the bytes of each table and index.
func scaleSize(res *scaleResult, data, tmp string) error {
	ents, err := os.ReadDir(data)
	if err != nil {
		return err
	}
	var files []string
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "wikid.db") {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			return err
		}
		res.dbBytes += fi.Size()
		files = append(files, fmt.Sprintf("%s %s", e.Name(), fmtBytes(uint64(fi.Size()))))
	}
	res.dbFiles = strings.Join(files, ", ")
	// dbstat on a copy: this process never opens the wiki's own file.
	cp := filepath.Join(tmp, "dbstat.db")
	db, err := sql.Open("sqlite", filepath.Join(data, "wikid.db")+"?mode=ro")
	if err != nil {
		return err
	}
	_, err = db.Exec(`VACUUM INTO ?`, cp)
	db.Close()
	if err != nil {
		res.notes = append(res.notes, "VACUUM INTO failed, no per-table sizes: "+err.Error())
		return nil
	}
	defer os.Remove(cp)
	if fi, err := os.Stat(cp); err == nil {
		res.notes = append(res.notes, fmt.Sprintf("VACUUM INTO copy: %s (%s per page)", fmtBytes(uint64(fi.Size())), fmtBytes(uint64(fi.Size()/int64(res.pages)))))
	}
	db, err = sql.Open("sqlite", cp)
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC`)
	if err != nil {
		res.notes = append(res.notes, "no per-table sizes (dbstat): "+err.Error())
		return nil
	}
	defer rows.Close()
	for rows.Next() {
		var t scaleTable
		if err := rows.Scan(&t.name, &t.bytes); err != nil {
			return err
		}
		res.tables = append(res.tables, t)
	}
	return rows.Err()
}

// scaleQueries draws n queries of each class from the corpus, seeded.
func scaleQueries(c *scaleCorpus, n int) map[string][]string {
	r := rand.New(rand.NewPCG(scaleSeed, 7))
	out := map[string][]string{}
	// Rare words: the least frequent tenth of the words that occur (at
	// scale, every word of the vocabulary occurs several times).
	var rare []string
	for _, w := range c.words {
		if c.count[w] > 0 {
			rare = append(rare, w)
		}
	}
	slices.SortStableFunc(rare, func(a, b string) int { return c.count[a] - c.count[b] })
	rare = rare[:max(1, len(rare)/10)]
	var en, ko, zh []scalePage
	for _, p := range c.pages {
		switch p.lang {
		case "ko":
			ko = append(ko, p)
		case "zh":
			zh = append(zh, p)
		default:
			en = append(en, p)
		}
	}
	// A substring of n runes of a random page of pages, starting at a rune
	// that keep accepts, its runes all accepted too.
	sub := func(pages []scalePage, n int, keep func(rune) bool) string {
		for range 1000 {
			rs := []rune(pages[r.IntN(len(pages))].source)
			i := r.IntN(max(1, len(rs)-n))
			if i+n > len(rs) {
				continue
			}
			ok := true
			for _, x := range rs[i : i+n] {
				ok = ok && keep(x)
			}
			if ok && (i == 0 || !keep(rs[i-1]) || n == 2) {
				return string(rs[i : i+n])
			}
		}
		return ""
	}
	hangul := func(x rune) bool { return x >= 0xAC00 && x <= 0xD7A3 }
	han := func(x rune) bool { return x >= 0x4E00 && x <= 0x9FFF }
	for range n {
		out["common word"] = append(out["common word"], c.words[len(functionWords)+r.IntN(40)])
		if len(rare) > 0 {
			out["rare word"] = append(out["rare word"], rare[r.IntN(len(rare))])
		}
		p := en[r.IntN(len(en))]
		fs := strings.Fields(p.source[strings.Index(p.source, "\n\n")+2:])
		for range 100 {
			i := r.IntN(len(fs) - 1)
			a, b := fs[i], fs[i+1]
			if isWord(a) && isWord(b) {
				out["phrase"] = append(out["phrase"], `"`+a+" "+b+`"`)
				break
			}
		}
		w := c.words[len(functionWords)+r.IntN(2000)]
		out["prefix"] = append(out["prefix"], w[:min(len(w), 3+r.IntN(2))]+"*")
		if len(ko) > 0 {
			if q := sub(ko, 2, hangul); q != "" {
				out["Korean 2 chars"] = append(out["Korean 2 chars"], q)
			}
		}
		if len(zh) > 0 {
			if q := sub(zh, 2, han); q != "" {
				out["Chinese 2 chars"] = append(out["Chinese 2 chars"], q)
			}
		}
	}
	return out
}

func isWord(s string) bool {
	for _, x := range s {
		if x < 'a' || x > 'z' {
			return false
		}
	}
	return len(s) > 0
}

var scaleClasses = []string{"common word", "rare word", "phrase", "prefix", "Korean 2 chars", "Chinese 2 chars"}

// scaleSearch times every query class on both endpoints, first with one
// client, then with clients concurrent ones.
func scaleSearch(ctx context.Context, res *scaleResult, c *scaleCorpus, base string, clients, n int) error {
	qs := scaleQueries(c, n)
	endpoints := []struct {
		name string
		url  func(q string) string
	}{
		{"Special:Search", func(q string) string { return base + "/wiki/Special:Search?q=" + formEscape(q) }},
		{"REST search/page", func(q string) string {
			return base + "/w/rest.php/v1/search/page?q=" + formEscape(q) + "&limit=10"
		}},
		// Title completion, for the prefix class only: what the search box
		// asks while a reader types.
		{"REST search/title", func(q string) string {
			return base + "/w/rest.php/v1/search/title?q=" + url.QueryEscape(strings.TrimSuffix(q, "*")) + "&limit=8"
		}},
	}
	for _, k := range []int{1, clients} {
		if k == 1 && clients == 1 && len(res.search) > 0 {
			break
		}
		for _, ep := range endpoints {
			for _, class := range scaleClasses {
				if ep.name == "REST search/title" && class != "prefix" {
					continue
				}
				step("scale: search %-16s %-17s %d client(s), %d queries", class, ep.name, k, len(qs[class]))
				var urls []string
				for _, q := range qs[class] {
					urls = append(urls, ep.url(q))
				}
				row, err := timeGets(ctx, urls, k, func(body []byte) bool {
					if strings.HasPrefix(ep.name, "REST") {
						return strings.Contains(string(body), `"title"`)
					}
					return strings.Contains(string(body), `<ol class="results"`)
				})
				if err != nil {
					return fmt.Errorf("scale: search %s on %s: %w", class, ep.name, err)
				}
				row.class, row.endpoint, row.clients = class, ep.name, k
				if len(qs[class]) > 0 {
					row.example = qs[class][0]
				}
				res.search = append(res.search, row)
			}
		}
	}
	return nil
}

// scaleLists times AllPages (from a random title), RecentChanges (various
// limits and offsets) and the histories of random pages, one client.
func scaleLists(ctx context.Context, res *scaleResult, c *scaleCorpus, base string, n int) (err error) {
	r := rand.New(rand.NewPCG(scaleSeed, 11))
	var all, rc, hist []string
	for i := range n {
		p := c.pages[r.IntN(len(c.pages))]
		all = append(all, base+"/wiki/Special:AllPages?from="+url.QueryEscape(p.title))
		rc = append(rc, base+"/wiki/Special:RecentChanges?limit="+strconv.Itoa(50+i%3*50))
		hist = append(hist, base+"/wiki/"+url.PathEscape(strings.ReplaceAll(p.title, " ", "_"))+"?action=history")
	}
	for _, l := range []struct {
		name string
		urls []string
	}{{"Special:AllPages?from=…", all}, {"Special:RecentChanges", rc}, {"?action=history", hist}} {
		step("scale: %s, %d requests", l.name, len(l.urls))
		// Canonical URLs first: wikid redirects other spellings of a query
		// before running it, so resolving them costs no list or history.
		for i, u := range l.urls {
			if l.urls[i], err = canonicalURL(ctx, u); err != nil {
				return fmt.Errorf("scale: %s: %w", l.name, err)
			}
		}
		row, err := timeGets(ctx, l.urls, 1, nil)
		if err != nil {
			return fmt.Errorf("scale: %s: %w", l.name, err)
		}
		row.endpoint, row.clients = l.name, 1
		res.lists = append(res.lists, row)
	}
	return nil
}

// canonicalURL follows u's redirects (at most 3) without reading bodies.
func canonicalURL(ctx context.Context, u string) (string, error) {
	hc := &http.Client{Timeout: time.Minute, CheckRedirect: noRedirect}
	for range 3 {
		req, _ := http.NewRequestWithContext(ctx, http.MethodHead, u, nil)
		r, err := hc.Do(req)
		if err != nil {
			return "", err
		}
		r.Body.Close()
		if r.StatusCode < 300 || r.StatusCode > 399 {
			return u, nil
		}
		loc, err := r.Location()
		if err != nil {
			return "", fmt.Errorf("HEAD %s: %d without Location", u, r.StatusCode)
		}
		u = loc.String()
	}
	return u, nil
}

// timeGets requests every URL, clients at a time, and returns the sorted
// latencies; hit, when not nil, tells a body with results from one without.
// A status other than 200 is an error.
func timeGets(ctx context.Context, urls []string, clients int, hit func([]byte) bool) (scaleSearchRow, error) {
	var row scaleSearchRow
	var mu sync.Mutex
	var firstErr error
	next := atomic.Int64{}
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hc := scaleClient()
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= len(urls) {
					return
				}
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, urls[i], nil)
				t0 := time.Now()
				r, err := hc.Do(req)
				var body []byte
				if err == nil {
					body, err = io.ReadAll(r.Body)
					r.Body.Close()
					if err == nil && r.StatusCode != 200 {
						err = fmt.Errorf("GET %s: status %d", urls[i], r.StatusCode)
					}
				}
				took := time.Since(t0)
				mu.Lock()
				if err != nil {
					row.errs++
					if firstErr == nil {
						firstErr = err
					}
				} else {
					row.lat = append(row.lat, took)
					if hit != nil && hit(body) {
						row.hits++
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return row, ctx.Err()
	}
	if firstErr != nil && row.errs > len(urls)/10 {
		return row, firstErr
	}
	slices.Sort(row.lat)
	return row, nil
}

// pidStatus reads a kB field of /proc/PID/status, in bytes.
func pidStatus(pid int, field string) (int64, bool) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}

func passFail(ok bool) string {
	if ok {
		return "ok"
	}
	return "FAIL"
}

func (res *scaleResult) markdown(smoke bool, clients int) string {
	var b strings.Builder
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(&b, "## Scale: %d pages\n\n", res.pages)
	fmt.Fprintf(&b, "date %s; %d CPUs (%s), load average at the end %s; run took %s (generating the corpus %s)\n\n",
		time.Now().Format(time.RFC3339), runtime.NumCPU(), cpuModel(), firstWords(string(load), 3), res.took.Round(time.Second), res.gen.Round(time.Millisecond))
	if smoke {
		b.WriteString("Smoke run: the figures mean nothing.\n\n")
	}
	fmt.Fprintf(&b, "corpus: seed %d, %d pages (%d English-like, %d Korean, %d Chinese), %s of Markdown (%s per page on average)\n\n",
		scaleSeed, res.pages, res.lang["en"], res.lang["ko"], res.lang["zh"], fmtBytes(uint64(int64(res.bytes))), fmtBytes(uint64(res.bytes/max(1, res.pages))))

	b.WriteString("| measure | figure | target | |\n|---|---|---|---|\n")
	if res.bulkPages > 0 {
		res.importRows(&b, clients)
	}
	fmt.Fprintf(&b, "| cold start: process start to the first 200 on / (polled every 50 ms) | %s | | |\n", fmtDur(res.cold))
	fmt.Fprintf(&b, "| RSS of wikid at the end (peak) | %s (%s) | ≤ 300 MB | %s |\n", fmtBytes(uint64(res.rss)), fmtBytes(uint64(res.rssHWM)), passFail(res.rss <= scaleRSS && res.rss > 0))

	b.WriteString("\n### Search (no edge cache)\n\n| class | endpoint | clients | n | results | p50 | p99 | max | target | | example |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range res.search {
		target, ok := "", ""
		if s.clients == clients && len(s.lat) > 0 {
			target, ok = "p99 ≤ 50 ms", passFail(pct(s.lat, 99) <= scaleSearchP99)
		}
		var mx time.Duration
		if len(s.lat) > 0 {
			mx = s.lat[len(s.lat)-1]
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %s | %s | %s | %s | %s | `%s` |\n", s.class, s.endpoint, s.clients, len(s.lat), s.hits,
			fmtDur(pct(s.lat, 50)), fmtDur(pct(s.lat, 99)), fmtDur(mx), target, ok, s.example)
	}
	b.WriteString("\n### Lists and history (no edge cache, one client)\n\n| page | n | p50 | p99 | max |\n|---|---|---|---|---|\n")
	for _, s := range res.lists {
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s |\n", s.endpoint, len(s.lat), fmtDur(pct(s.lat, 50)), fmtDur(pct(s.lat, 99)), fmtDur(s.lat[len(s.lat)-1]))
	}
	if len(res.tables) > 0 {
		b.WriteString("\n### Database by table and index (dbstat, on a VACUUM INTO copy)\n\n| table or index | bytes | per page |\n|---|---|---|\n")
		for i, t := range res.tables {
			if i == 15 {
				break
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", t.name, fmtBytes(uint64(t.bytes)), fmtBytes(uint64(t.bytes/int64(max(1, res.pages)))))
		}
	}
	if len(res.notes) > 0 {
		b.WriteString("\nNotes:\n\n")
		for _, n := range res.notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	return b.String()
}

// importRows writes the table rows of the import and the database size.
func (res *scaleResult) importRows(b *strings.Builder, clients int) {
	bulkRate := float64(res.bulkPages) / res.bulkTook.Seconds()
	indexed := float64(res.bulkPages) / (res.bulkTook + max(0, res.bulkLag)).Seconds()
	rate := float64(res.restPages) / res.importTook.Seconds()
	fmt.Fprintf(b, "| import, `wikid import` of JSON lines beside the running server (%d pages) | %.0f pages/s (%s) | | |\n", res.bulkPages, bulkRate, res.bulkTook.Round(time.Millisecond))
	if c := res.bulkCPU; c.busy > 0 {
		// On a shared machine, the import's rate is read with what else ran.
		r := func(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) }
		fmt.Fprintf(b, "| CPU during it: `wikid import`, the server, other processes; taken by the host (steal); idle (/proc) | %s (%s a page), %s, %s; %s; %s idle of %d cores × %s | | |\n",
			r(c.importer), fmtDur(c.importer/time.Duration(max(1, res.bulkPages))), r(c.server),
			r(max(0, c.busy-c.importer-c.server)), r(c.steal), r(c.idle), c.cores, r(res.bulkTook))
	}
	fmt.Fprintf(b, "| search index lag after it: its last page found by REST search | %s | ≤ 10 s | %s |\n", fmtDur(res.bulkLag), passFail(res.bulkLag >= 0 && res.bulkLag <= 10*time.Second))
	fmt.Fprintf(b, "| import with search indexed (pages / (import + index lag)) | %.0f pages/s | ≥ %d pages/s | %s |\n", indexed, scaleImportRate, passFail(indexed >= scaleImportRate))
	fmt.Fprintf(b, "| import, REST POST page, %d clients (the last %d pages) | %.0f pages/s (%s) | | |\n", clients, res.restPages, rate, res.importTook.Round(time.Millisecond))
	fmt.Fprintf(b, "| search index lag after the REST import: last page found | %s | | |\n", fmtDur(res.lagSearch))
	fmt.Fprintf(b, "| job queue drained after the REST import (%d jobs done in all) | %s | | |\n", res.jobsDone, fmtDur(res.lag))
	per := res.dbBytes / int64(max(1, res.pages))
	fmt.Fprintf(b, "| database bytes per page (%s) | %s | ≤ 12 KB | %s |\n", res.dbFiles, fmtBytes(uint64(per)), passFail(per <= scaleBytesPage))
}

// scaleCPU is where the machine's CPU time went during the bulk import.
type scaleCPU struct {
	importer, server  time.Duration // user and system time of each process
	busy, steal, idle time.Duration // the machine's, all cores (/proc/stat)
	cores             int
}

// machineTimes is /proc/stat's first line, all cores' time: busy (user,
// nice, system, irq, softirq), taken by the host (steal) and idle (idle,
// iowait); and its count of cores (the cpuN lines), which may be more than
// this process may run on.
type machineTimes struct {
	busy, steal, idle time.Duration
	cores             int
}

func machineCPU() (machineTimes, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return machineTimes{}, err
	}
	line, rest, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return machineTimes{}, fmt.Errorf("/proc/stat: unexpected first line %q", line)
	}
	var t [8]int64
	for i := range t {
		if t[i], err = strconv.ParseInt(f[i+1], 10, 64); err != nil {
			return machineTimes{}, fmt.Errorf("/proc/stat: %w", err)
		}
	}
	tick := func(n int64) time.Duration { return time.Duration(n) * time.Second / clockTicks }
	m := machineTimes{busy: tick(t[0] + t[1] + t[2] + t[5] + t[6]), steal: tick(t[7]), idle: tick(t[3] + t[4])}
	for l := range strings.Lines(rest) {
		if strings.HasPrefix(l, "cpu") && len(l) > 3 && l[3] >= '0' && l[3] <= '9' {
			m.cores++
		}
	}
	return m, nil
}
