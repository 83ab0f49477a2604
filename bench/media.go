package main

// The media part: uploaded files. A wikid with default settings in its
// own data folder receives generated images through the REST API
// (mediagen.go: a 12-megapixel photo-like JPEG, a drawing-like PNG with a
// photo in it, and a ~200 KB JPEG), then:
//
//   - thumbnails: the first request of each of several widths of the JPEG
//     and the PNG is a miss that decodes, scales and encodes the image;
//     its wall time, Server-Timing app;dur and wikid's CPU time, per
//     megapixel of the source;
//   - serving: the 220-pixel thumbnail and the ~200 KB original, anonymous
//     hits, against nginx serving the same bytes under the same path (wrk,
//     identity and gzip, alternating rounds, medians);
//   - uploads: files sent one after another through the REST API, and the
//     same files through `wikid upload` into a data folder of their own;
//     MB/s.

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wikid/wikid/internal/wiki"
)

var mediaFlags struct {
	only, skip bool
	duration   time.Duration
	rounds     int
	conns      int
	uploads    int
	uploadRuns int
}

func init() {
	flag.BoolVar(&mediaFlags.only, "media", false, "run only the media part: thumbnail making per megapixel, thumbnails and an original served against nginx, upload MB/s (output bench/out/media.md unless -out)")
	flag.BoolVar(&mediaFlags.skip, "no-media", false, "leave the media part out of a full run")
	flag.DurationVar(&mediaFlags.duration, "media-duration", 5*time.Second, "length of each wrk run of the media part (-smoke: 1s)")
	flag.IntVar(&mediaFlags.rounds, "media-rounds", 3, "alternating wrk rounds of the media part (-smoke: 1)")
	flag.IntVar(&mediaFlags.conns, "media-conns", 10, "wrk connections of the media part")
	flag.IntVar(&mediaFlags.uploads, "media-uploads", 20, "files per upload run (-smoke: 3)")
	flag.IntVar(&mediaFlags.uploadRuns, "media-upload-runs", 3, "upload runs, through REST and through wikid upload each (-smoke: 1)")
}

const (
	// mediaServeTarget is the served thumbnails' and original's target:
	// req/s against nginx serving the same bytes.
	mediaServeTarget = 0.9
	// mediaServeWidth is the thumbnail served: the default width of a
	// [[File:X|thumb]].
	mediaServeWidth = wiki.DefaultThumbWidth
	// uploadsPerUser stays within wikid's upload rate per user (30 a
	// minute): a run of more uploads spreads them over several users.
	uploadsPerUser = 30
)

// mediaImage is one generated image as uploaded.
type mediaImage struct {
	name          string // file name, File:name
	what          string
	width, height int
	data          []byte
	sha           string // from the upload's answer
}

type thumbMiss struct {
	width  int
	wall   time.Duration
	app    time.Duration // Server-Timing app;dur, 0 when absent
	cpu    time.Duration // wikid's user+system time over the request
	size   int
	timing string
}

type thumbSet struct {
	img    *mediaImage
	misses []thumbMiss
}

type mediaServeRow struct {
	id, what, path, enc string
	size                int
	nginx, wikid        []hitRun
	noFront             []hitRun // wikid with "front": false
}

type uploadRun struct {
	files int
	bytes int64
	took  time.Duration
}

type mediaResult struct {
	smoke      bool
	thumbs     []thumbSet
	serve      []*mediaServeRow
	dur        time.Duration
	rounds     int
	conns      int
	rest, cli  []uploadRun
	uploadSize int
	cpuSource  string
	took       time.Duration
}

// runMediaOnly is the -media mode: the media part's table alone.
func runMediaOnly(ctx context.Context, o options) error {
	if err := ensureTools(); err != nil {
		return err
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	o.out = modeOut(o.out, root, "media.md")
	tmp, err := os.MkdirTemp("", "wikid-media-")
	if err != nil {
		return err
	}
	defer func() {
		if o.keep {
			step("media: kept %s", tmp)
		} else {
			os.RemoveAll(tmp)
		}
	}()
	step("media: building wikid in %s", tmp)
	bin, err := buildWikid(root, tmp)
	if err != nil {
		return err
	}
	res, err := mediaRun(ctx, o, bin, tmp)
	if err != nil {
		return err
	}
	return printAndWrite(res.markdown(bin), o.out)
}

// mediaRun measures the media part with wikid bin in dir (a folder of its
// own, which it fills with data folders, the nginx tree and the files).
func mediaRun(ctx context.Context, o options, bin, dir string) (*mediaResult, error) {
	start := time.Now()
	res := &mediaResult{smoke: o.smoke, dur: mediaFlags.duration, rounds: mediaFlags.rounds, conns: max(1, mediaFlags.conns)}
	uploads, runs := mediaFlags.uploads, mediaFlags.uploadRuns
	photoW, photoH, drawW, drawH, smallW, smallH := 4000, 3000, 2400, 1800, 1024, 768
	// The standard widths, and three others (made at a bounded rate per
	// client, 70 a minute).
	widths := append(slices.Clone(wiki.ThumbWidths), 300, 640, 800)
	if o.smoke {
		photoW, photoH, drawW, drawH, smallW, smallH = 640, 480, 480, 360, 400, 300
		widths = []int{120, 220, 300}
		if !flagSet("media-duration") {
			res.dur = time.Second
		}
		if !flagSet("media-rounds") {
			res.rounds = 1
		}
		if !flagSet("media-uploads") {
			uploads = 3
		}
		if !flagSet("media-upload-runs") {
			runs = 1
		}
	}
	uploads, runs, res.rounds = max(1, uploads), max(1, runs), max(1, res.rounds)

	step("media: generating a %d×%d JPEG, a %d×%d PNG and a %d×%d JPEG", photoW, photoH, drawW, drawH, smallW, smallH)
	photo := &mediaImage{name: "Bench_photo.jpg", what: "photo-like JPEG (q90)", width: photoW, height: photoH, data: photoJPEG(photoW, photoH, 90, 1)}
	drawing := &mediaImage{name: "Bench_drawing.png", what: "drawing-like PNG", width: drawW, height: drawH, data: drawingPNG(drawW, drawH, 2)}
	small := &mediaImage{name: "Bench_small.jpg", what: "photo-like JPEG (q90)", width: smallW, height: smallH, data: photoJPEG(smallW, smallH, 90, 3)}
	res.uploadSize = len(photo.data)

	// Accounts first, while no server holds the database: one for the
	// images, and enough for every upload run to stay within the rate.
	data := filepath.Join(dir, "data")
	perRun := (uploads + uploadsPerUser - 1) / uploadsPerUser
	tokens := make([]string, 1+runs*perRun)
	for i := range tokens {
		user := fmt.Sprintf("%s%d", benchUser, i)
		if _, err := wikidCLI(bin, data, benchPassword+"\n", "user", "add", user); err != nil {
			return nil, err
		}
		tok, err := wikidCLI(bin, data, "", "token", "create", user)
		if err != nil {
			return nil, err
		}
		tokens[i] = strings.TrimSpace(tok[strings.LastIndexAny(tok, " \n\t")+1:])
	}

	w, base, err := startWikid("wikid-media", bin, data, dir, nil)
	if err != nil {
		return nil, err
	}
	defer func() {
		if w != nil {
			w.stop()
		}
	}()
	c := &http.Client{Timeout: 2 * time.Minute, CheckRedirect: noRedirect,
		Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 4}}
	for _, img := range []*mediaImage{photo, drawing, small} {
		if img.sha, err = uploadREST(ctx, c, base, tokens[0], img.name, img.data); err != nil {
			return nil, err
		}
	}
	jc := &http.Client{Timeout: 30 * time.Second}
	if _, err := waitQueueEmpty(ctx, jc, w.ops, 5*time.Minute); err != nil {
		return nil, fmt.Errorf("media: the uploads' jobs: %w", err)
	}

	// Thumbnails: the first request of each width is the one that makes it.
	cpu, source := cpuReader(w.pid())
	if _, err := cpu(w.pid()); err != nil {
		return nil, err
	}
	res.cpuSource = source
	for _, img := range []*mediaImage{photo, drawing} {
		set := thumbSet{img: img}
		for _, width := range widths {
			if width >= img.width {
				continue
			}
			m, err := thumbnailMiss(ctx, c, base, w.pid(), cpu, img, width)
			if err != nil {
				return nil, err
			}
			step("media: %s %dpx: %s (app %s, CPU %s), %d bytes", img.name, width, fmtDur(m.wall), fmtDur(m.app), fmtDur(m.cpu), m.size)
			set.misses = append(set.misses, m)
		}
		res.thumbs = append(res.thumbs, set)
	}

	// Serving: anonymous hits on wikid, on a second wikid with "front":
	// false (the handlers answer hits, as they do on every connection the
	// front server handed to net/http), and the same bytes from nginx. Each
	// wikid has its own copy of the data, made while none runs.
	w.stop()
	if err := copyData(data, filepath.Join(dir, "data-nofront")); err != nil {
		return nil, err
	}
	if w, base, err = startWikid("wikid-media", bin, data, dir, nil); err != nil {
		return nil, err
	}
	nf, nfBase, err := startWikid("wikid-media-nofront", bin, filepath.Join(dir, "data-nofront"), dir, map[string]any{"front": false})
	if err != nil {
		return nil, err
	}
	err = mediaServe(ctx, res, c, filepath.Join(dir, "nginx"), photo, small,
		mediaServer{base, w.pid()}, mediaServer{nfBase, nf.pid()})
	nf.stop()
	if err != nil {
		return nil, err
	}

	// Uploads through REST, one after another, each run by fresh users;
	// then the same files through wikid upload, into a folder of their own.
	for run := range runs {
		if _, err := waitQueueEmpty(ctx, jc, w.ops, 5*time.Minute); err != nil {
			return nil, fmt.Errorf("media: jobs before upload run %d: %w", run+1, err)
		}
		files := uploadFiles(photo.data, "rest", run, uploads)
		u, err := uploadRunREST(ctx, c, base, tokens[1+run*perRun:1+(run+1)*perRun], run, files)
		if err != nil {
			return nil, err
		}
		step("media: REST upload run %d: %d files, %.1f MB in %s: %.1f MB/s", run+1, u.files, float64(u.bytes)/1e6, fmtDur(u.took), u.mbps())
		res.rest = append(res.rest, u)
	}
	w.stop()
	cliData := filepath.Join(dir, "data-cli")
	if _, err := wikidCLI(bin, cliData, "", "migrate", "up"); err != nil {
		return nil, err
	}
	for run := range runs {
		u, err := uploadRunCLI(ctx, bin, cliData, filepath.Join(dir, fmt.Sprintf("upload-%d", run)), uploadFiles(photo.data, "cli", run, uploads))
		if err != nil {
			return nil, err
		}
		step("media: wikid upload run %d: %d files, %.1f MB in %s: %.1f MB/s", run+1, u.files, float64(u.bytes)/1e6, fmtDur(u.took), u.mbps())
		res.cli = append(res.cli, u)
	}
	res.took = time.Since(start)
	return res, nil
}

// uploadREST posts data as File:name with token and returns its SHA-256,
// read from the answer's original URL.
func uploadREST(ctx context.Context, c *http.Client, base, token, name string, data []byte) (string, error) {
	body, ctype := multipartUpload(name, data)
	return postUpload(ctx, c, base, token, name, body, ctype)
}

// multipartUpload is an upload's body: the file, and a comment.
func multipartUpload(name string, data []byte) ([]byte, string) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	fw, _ := mw.CreateFormFile("file", name)
	fw.Write(data)
	mw.WriteField("comment", "bench upload")
	mw.Close()
	return b.Bytes(), mw.FormDataContentType()
}

var mediaURLRE = regexp.MustCompile(`"url":"/media/([0-9a-f]{64})/`)

func postUpload(ctx context.Context, c *http.Client, base, token, name string, body []byte, ctype string) (string, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/w/rest.php/v1/file/File:"+name, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", ctype)
	res, err := c.Do(req)
	if err != nil {
		return "", fmt.Errorf("upload %s: %w", name, err)
	}
	defer res.Body.Close()
	msg, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusCreated && res.StatusCode != http.StatusOK {
		return "", fmt.Errorf("upload %s: status %d: %s", name, res.StatusCode, msg)
	}
	m := mediaURLRE.FindSubmatch(msg)
	if m == nil {
		return "", fmt.Errorf("upload %s: no /media/ URL in the answer: %s", name, msg)
	}
	return string(m[1]), nil
}

var appDurRE = regexp.MustCompile(`(?:^|,)\s*app;(?:[^,]*;)?\s*dur=([0-9.]+)`)

// thumbnailMiss requests img's thumbnail at width for the first time and
// times it, reading the server's CPU time with cpu (cpuReader).
func thumbnailMiss(ctx context.Context, c *http.Client, base string, pid int, cpu func(int) (time.Duration, error), img *mediaImage, width int) (thumbMiss, error) {
	url := base + wiki.ThumbURL(img.sha, img.name, width)
	before, err := cpu(pid)
	if err != nil {
		return thumbMiss{}, err
	}
	t0 := time.Now()
	r, err := get(c, target{url: url})
	wall := time.Since(t0)
	if err != nil {
		return thumbMiss{}, fmt.Errorf("thumbnail %s: %w", url, err)
	}
	after, err := cpu(pid)
	if err != nil {
		return thumbMiss{}, err
	}
	if r.status != http.StatusOK {
		return thumbMiss{}, fmt.Errorf("thumbnail %s: status %d: %.300s", url, r.status, r.body)
	}
	if x := r.header.Get("X-Cache"); x == "HIT" {
		return thumbMiss{}, fmt.Errorf("thumbnail %s: the first request was a hit (X-Cache %s): made before?", url, x)
	}
	m := thumbMiss{width: width, wall: wall, cpu: after - before, size: len(r.body), timing: r.header.Get("Server-Timing")}
	if s := appDurRE.FindStringSubmatch(m.timing); s != nil {
		ms, _ := strconv.ParseFloat(s[1], 64)
		m.app = time.Duration(ms * float64(time.Millisecond))
	}
	return m, nil
}

// mediaServer is a wikid the serving part measures.
type mediaServer struct {
	base string
	pid  int
}

// mediaServe measures anonymous hits on the thumbnail of photo and on the
// original of small, on both wikids, against nginx serving the same bytes
// from dir/www.
func mediaServe(ctx context.Context, res *mediaResult, c *http.Client, dir string, photo, small *mediaImage, front, noFront mediaServer) error {
	rows := []*mediaServeRow{
		{id: "thumbnail", what: fmt.Sprintf("thumbnail, %dpx of the %d×%d JPEG", mediaServeWidth, photo.width, photo.height),
			path: wiki.ThumbURL(photo.sha, photo.name, mediaServeWidth)},
		{id: "original", what: fmt.Sprintf("original, %d×%d JPEG", small.width, small.height), path: wiki.OriginalURL(small.sha, small.name)},
	}
	files := map[string][]byte{}
	for _, r := range rows {
		// The bytes measured are those of a hit (the first request after
		// the restart filled the edge from the store).
		hit, err := fetchStable(c, front.base+r.path, nil)
		if err != nil {
			return fmt.Errorf("media: %w", err)
		}
		if _, err := fetchStable(c, noFront.base+r.path, nil); err != nil {
			return fmt.Errorf("media: the \"front\": false wikid: %w", err)
		}
		r.size = len(hit.body)
		files[r.path] = hit.body
	}
	ngx, ngxBase, err := startNginxFiles(dir, files, "image/jpeg jpg jpeg; image/png png;")
	if err != nil {
		return err
	}
	defer ngx.stop()
	workers, err := nginxWorkers(ngx.pid())
	if err != nil {
		return err
	}
	servers := []struct {
		name, base string
		hit        bool
		pids       func() []int
	}{
		{"nginx", ngxBase, false, func() []int { return workers }},
		{"wikid", front.base, true, func() []int { return []int{front.pid} }},
		{"wikid front:false", noFront.base, true, func() []int { return []int{noFront.pid} }},
	}

	// Both encodings: an image is sent as it is either way, by all three.
	var all []*mediaServeRow
	for _, r := range rows {
		for _, enc := range []string{"identity", "gzip"} {
			rr := *r
			rr.enc = enc
			for _, sv := range servers {
				got, err := get(c, target{url: sv.base + r.path, headers: rr.headers()})
				if err != nil {
					return fmt.Errorf("media: check %s %s: %w", sv.name, r.path, err)
				}
				switch {
				case got.status != http.StatusOK || !bytes.Equal(got.body, files[r.path]):
					return fmt.Errorf("media: %s does not send the saved bytes of %s with %s (status %d, %d bytes, Content-Encoding %q)",
						sv.name, r.path, enc, got.status, len(got.body), got.header.Get("Content-Encoding"))
				case got.header.Get("Content-Type") != http.DetectContentType(files[r.path]):
					return fmt.Errorf("media: %s sends %s as %q", sv.name, r.path, got.header.Get("Content-Type"))
				case sv.hit && got.header.Get("X-Cache") != "HIT":
					return fmt.Errorf("media: %s answers %s with %s from X-Cache %q, not a hit", sv.name, r.path, enc, got.header.Get("X-Cache"))
				}
			}
			all = append(all, &rr)
		}
	}
	res.serve = all
	step("media: wrk -t1 -c%d -d%s, %d alternating round(s): %d bytes (thumbnail), %d bytes (original)",
		res.conns, wrkDuration(res.dur), res.rounds, rows[0].size, rows[1].size)
	for round := range res.rounds {
		for _, r := range all {
			if res.smoke && r.enc == "gzip" {
				continue // checked above; measured in full runs only
			}
			into := []*[]hitRun{&r.nginx, &r.wikid, &r.noFront}
			for i, sv := range servers {
				k := hitCase{target{name: sv.name, url: sv.base + r.path, headers: r.headers()}, sv.pids}
				run, err := hitWrk(ctx, k, res.conns, res.dur)
				if err != nil {
					return err
				}
				step("  %-10s %-8s round %d %-18s %9.0f req/s %7.1f µs CPU/req", r.id, r.enc, round+1, sv.name, run.rps, run.cpuUS)
				*into[i] = append(*into[i], run)
			}
		}
	}
	return nil
}

// headers are the request headers of the row's encoding.
func (r *mediaServeRow) headers() []string {
	if r.enc == "gzip" {
		return []string{"Accept-Encoding: gzip"}
	}
	return nil
}

// uploadFiles are n distinct valid JPEGs: jpg with a comment naming the
// run and the file, so that each is stored as a blob of its own (blobs are
// deduplicated by content) while the pixels, which uploads do not decode,
// stay the same.
func uploadFiles(jpg []byte, kind string, run, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = withComment(jpg, fmt.Sprintf("wikid bench upload %s run %d file %d", kind, run, i))
	}
	return out
}

func (u uploadRun) mbps() float64 {
	if u.took <= 0 {
		return 0
	}
	return float64(u.bytes) / 1e6 / u.took.Seconds()
}

// uploadRunREST posts files one after another, each as a new file, the
// users' tokens taking turns of uploadsPerUser; it times the posting only
// (the bodies are built first).
func uploadRunREST(ctx context.Context, c *http.Client, base string, tokens []string, run int, files [][]byte) (uploadRun, error) {
	type post struct {
		name, ctype string
		body        []byte
	}
	posts := make([]post, len(files))
	u := uploadRun{files: len(files)}
	for i, f := range files {
		p := post{name: fmt.Sprintf("Bench_upload_%d_%d.jpg", run, i)}
		p.body, p.ctype = multipartUpload(p.name, f)
		posts[i] = p
		u.bytes += int64(len(f))
	}
	t0 := time.Now()
	for i, p := range posts {
		if _, err := postUpload(ctx, c, base, tokens[i/uploadsPerUser], p.name, p.body, p.ctype); err != nil {
			return u, err
		}
	}
	u.took = time.Since(t0)
	return u, nil
}

// uploadRunCLI writes files into dir and uploads them with one wikid
// upload command; it times the command (start-up and database opening
// included).
func uploadRunCLI(ctx context.Context, bin, data, dir string, files [][]byte) (uploadRun, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return uploadRun{}, err
	}
	u := uploadRun{files: len(files)}
	args := []string{"upload"}
	for i, f := range files {
		p := filepath.Join(dir, fmt.Sprintf("Bench_cli_%s_%d.jpg", filepath.Base(dir), i))
		if err := os.WriteFile(p, f, 0o644); err != nil {
			return u, err
		}
		args = append(args, p)
		u.bytes += int64(len(f))
	}
	args = append(args, "--summary", "bench upload", "--data", data)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	t0 := time.Now()
	if err := cmd.Run(); err != nil {
		return u, fmt.Errorf("wikid upload: %v\n%s", err, errb.String())
	}
	u.took = time.Since(t0)
	return u, nil
}

// cpuReader returns how to read the CPU time of process pid so far, and
// its source, chosen once: the sum of its threads' run time from
// schedstat (nanoseconds, for one request's), or else user+system time
// from /proc/PID/stat (clock ticks). The difference of two readings means
// something only when both come from one source.
func cpuReader(pid int) (read func(int) (time.Duration, error), source string) {
	if _, err := schedstatCPU(pid); err == nil {
		return schedstatCPU, "the sum of its threads' schedstat"
	}
	return statCPU, "/proc/PID/stat, in 10 ms ticks"
}

// statCPU is the user+system time of process pid so far, from
// /proc/PID/stat: it counts the threads that ended too, which schedstat's
// sum over the threads left does not (for a process's CPU over minutes).
func statCPU(pid int) (time.Duration, error) {
	t, err := cpuTicks([]int{pid})
	return time.Duration(t) * time.Second / clockTicks, err
}

func schedstatCPU(pid int) (time.Duration, error) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return 0, err
	}
	var sum time.Duration
	read := 0
	for _, t := range tasks {
		path := fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, t.Name())
		b, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue // the thread ended meanwhile, or no schedstat (below)
		}
		if err != nil {
			return 0, err
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			return 0, fmt.Errorf("%s: empty", path)
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", path, err)
		}
		sum += time.Duration(ns)
		read++
	}
	if read == 0 {
		return 0, fmt.Errorf("/proc/%d/task/*/schedstat: none to read", pid)
	}
	return sum, nil
}

func medianOf(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func (r *mediaResult) markdown(bin string) string {
	var b strings.Builder
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(&b, "## Media: thumbnails, served files, uploads\n\n")
	fmt.Fprintf(&b, "date %s; wikid %s; %d CPUs (%s), load average at the end %s; the part took %s\n\n",
		time.Now().Format(time.RFC3339), bin, runtime.NumCPU(), cpuModel(), firstWords(string(load), 3), r.took.Round(time.Second))
	if r.smoke {
		b.WriteString("Smoke run: tiny images, the figures mean nothing.\n\n")
	}

	b.WriteString("### Thumbnails made on first request\n\n")
	fmt.Fprintf(&b, "Each width's first request, anonymous, one at a time, after the uploads' jobs ran: wall time at the client, Server-Timing `app;dur`, and wikid's CPU time over the request (%s). Per megapixel of the source; medians over the widths.\n\n", r.cpuSource)
	b.WriteString("| source | pixels | bytes | widths | wall ms/MP | app ms/MP | CPU ms/MP | wall median (min–max) |\n|---|---|---|---|---|---|---|---|\n")
	for _, s := range r.thumbs {
		if len(s.misses) == 0 {
			continue
		}
		mp := megapixels(s.img.width, s.img.height)
		var wall, app, cpu []time.Duration
		for _, m := range s.misses {
			wall, app, cpu = append(wall, m.wall), append(app, m.app), append(cpu, m.cpu)
		}
		per := func(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond)/mp) }
		lo, hi := slices.Min(wall), slices.Max(wall)
		fmt.Fprintf(&b, "| %s | %d×%d (%.1f MP) | %s | %d | %s | %s | %s | %s (%s–%s) |\n",
			s.img.what, s.img.width, s.img.height, mp, fmtRPS(float64(len(s.img.data))), len(s.misses),
			per(medianDur(wall)), per(medianDur(app)), per(medianDur(cpu)), fmtDur(medianDur(wall)), fmtDur(lo), fmtDur(hi))
	}
	b.WriteString("\n")
	for _, s := range r.thumbs {
		var parts []string
		for _, m := range s.misses {
			parts = append(parts, fmt.Sprintf("%dpx %.0f ms (CPU %.0f ms, %s B)", m.width,
				float64(m.wall)/float64(time.Millisecond), float64(m.cpu)/float64(time.Millisecond), fmtRPS(float64(m.size))))
		}
		fmt.Fprintf(&b, "- %s, each width's wall time (CPU time, thumbnail bytes): %s\n", s.img.name, strings.Join(parts, ", "))
	}
	if len(r.thumbs) > 0 && len(r.thumbs[0].misses) > 0 {
		fmt.Fprintf(&b, "- a miss's Server-Timing: `%s`\n", r.thumbs[0].misses[0].timing)
	}

	b.WriteString("\n### Served against nginx\n\n")
	fmt.Fprintf(&b, "Anonymous edge-cache hits on wikid (its front server answers them), and on a second wikid with `\"front\": false` on a copy of the data (net/http and the handlers answer them, as they answer every request of a connection the front server handed over, after a miss or a logged-in request on it); nginx serves the same bytes from a file under the same path (`sendfile on`, Content-Type by extension). `wrk -t1 -c%d -d%s`, %d alternating round(s) of the three, medians; CPU is the server's user+system time per request (all nginx workers; the whole wikid process). Target ≥ %.1f× nginx for wikid.\n\n",
		r.conns, wrkDuration(r.dur), r.rounds, mediaServeTarget)
	b.WriteString("| file | bytes | Accept-Encoding | nginx req/s (CPU µs/req) | wikid req/s (CPU µs/req) | × nginx (range) | target | front:false req/s (CPU µs/req) | × nginx |\n|---|---|---|---|---|---|---|---|---|\n")
	rps := func(h hitRun) float64 { return h.rps }
	cpu := func(h hitRun) float64 { return h.cpuUS }
	med := func(rs []hitRun, f func(hitRun) float64) float64 {
		v := make([]float64, len(rs))
		for i, x := range rs {
			v[i] = f(x)
		}
		return medianOf(v)
	}
	times := func(v, ref float64) float64 {
		if ref == 0 {
			return 0
		}
		return v / ref
	}
	for _, s := range r.serve {
		if len(s.nginx) == 0 {
			continue // not measured (a smoke run's gzip rows)
		}
		ngx, wk, nf := med(s.nginx, rps), med(s.wikid, rps), med(s.noFront, rps)
		var ratios []float64
		for i := range min(len(s.nginx), len(s.wikid)) {
			if s.nginx[i].rps > 0 {
				ratios = append(ratios, s.wikid[i].rps/s.nginx[i].rps)
			}
		}
		rng := ""
		if len(ratios) > 1 {
			rng = fmt.Sprintf(" (%.2f–%.2f)", slices.Min(ratios), slices.Max(ratios))
		}
		x := times(wk, ngx)
		v := verdict(x >= mediaServeTarget)
		if r.smoke {
			v = "—"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s (%.1f) | %s (%.1f) | %.2f×%s | ≥ %.1f× %s | %s (%.1f) | %.2f× |\n",
			s.what, fmtRPS(float64(s.size)), s.enc, fmtRPS(ngx), med(s.nginx, cpu), fmtRPS(wk), med(s.wikid, cpu), x, rng,
			mediaServeTarget, v, fmtRPS(nf), med(s.noFront, cpu), times(nf, ngx))
	}

	b.WriteString("\n### Uploads\n\n")
	fmt.Fprintf(&b, "Files of %s bytes each (the photo-like JPEG, each with its own comment segment so that each is a blob of its own), sent one after another as new files: through `POST /w/rest.php/v1/file/{title}` (multipart, bearer token; the time of the posting, bodies built before; wikid's jobs drained before each run), and through one `wikid upload FILE…` command into a data folder of its own (its wall time, start-up and database opening included). MB = 10⁶ bytes; median of the runs.\n\n",
		fmtRPS(float64(r.uploadSize)))
	b.WriteString("| path | runs | files × run | MB/s median (range) | files/s | ms per file |\n|---|---|---|---|---|---|\n")
	for _, p := range []struct {
		name string
		runs []uploadRun
	}{{"REST API", r.rest}, {"wikid upload (CLI)", r.cli}} {
		if len(p.runs) == 0 {
			continue
		}
		var mbps, fps []float64
		for _, u := range p.runs {
			mbps = append(mbps, u.mbps())
			fps = append(fps, float64(u.files)/u.took.Seconds())
		}
		f := medianOf(fps)
		fmt.Fprintf(&b, "| %s | %d | %d | %.1f (%.1f–%.1f) | %.1f | %.0f |\n",
			p.name, len(p.runs), p.runs[0].files, medianOf(mbps), slices.Min(mbps), slices.Max(mbps), f, 1000/f)
	}
	return b.String()
}
