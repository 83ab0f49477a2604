// Package config holds Wikid's settings: defaults, then an optional JSON
// file, then WIKID_* environment variables, then command-line flags.
// Nothing else reads the environment; the result is passed down as values.
package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/wikid/wikid/internal/wiki"
)

// Config is the whole configuration. JSON names are the config file's keys.
type Config struct {
	Addr     string `json:"addr"`      // listen address
	DataDir  string `json:"data"`      // holds wikid.db (unless Database names PostgreSQL) and secret.key
	Database string `json:"database"`  // "": the embedded SQLite file in data; or a postgres:// URL, for nodes sharing one database
	SiteName string `json:"site_name"` // shown in the header and <title>
	MainPage string `json:"main_page"` // where / redirects
	// CapitalLinks upper-cases the first letter of every title's name, so
	// that [[apple]] is the page Apple (MediaWiki's $wgCapitalLinks);
	// false keeps it as written, except in User, User talk and Special.
	CapitalLinks bool `json:"capital_links"`
	// DefaultContentModel is the markup of pages created without one
	// (markdown or wikitext); a page keeps its model on every edit.
	DefaultContentModel wiki.ContentModel `json:"default_content_model"`

	AllowRegistration bool       `json:"allow_registration"`
	ReadGroup         wiki.Group `json:"read_group"` // who may read: anonymous, user, admin
	EditGroup         wiki.Group `json:"edit_group"` // who may edit

	MaxPageBytes      int           `json:"max_page_bytes"`   // a page's text may not be longer: saves and previews over it get 413
	MaxBodyBytes      int64         `json:"max_body_bytes"`   // request bodies over this get 413 (0: derived from max_page_bytes, see BodyLimit)
	SessionTTL        Duration      `json:"session_ttl"`      // login lifetime
	CacheMaxBytes     int64         `json:"cache_max_bytes"`  // edge cache budget
	SMaxAge           int           `json:"s_maxage"`         // seconds shared caches may keep anonymous pages
	ListTTL           Duration      `json:"list_ttl"`         // edge lifetime of RecentChanges/AllPages
	NoRenderCache     bool          `json:"no_render_cache"`  // benchmark only: render every view from markup
	NoEdgeCache       bool          `json:"no_edge_cache"`    // benchmark only: answer every request from the handlers
	SecureCookies     string        `json:"secure_cookies"`   // auto (when the request came over TLS), always, never
	AccessLog         bool          `json:"access_log"`       // log every request (buffered, off the request path)
	Front             bool          `json:"front"`            // answer edge hits in the front server, before net/http (false: the handlers answer them; for measuring)
	FrontLoops        int           `json:"front_loops"`      // event loops of the front server on Linux (0: one per two CPUs; -1: a goroutine per connection)
	TrustProxy        bool          `json:"trust_proxy"`      // deprecated alias: loopback is a trusted proxy
	TrustedProxies    []string      `json:"trusted_proxies"`  // proxies (addresses or CIDRs) whose forwarding headers are honoured
	ClientIPHeader    string        `json:"client_ip_header"` // X-Forwarded-For (default) or Forwarded: which header trusted proxies set
	OpsAddr           string        `json:"ops_addr"`         // listener for /metrics and /debug/pprof/ ("": none; admins only on addr)
	MaxConns          int           `json:"max_conns"`        // cap on open client connections (0: from the file-descriptor limit)
	CDNPurge          []string      `json:"cdn_purge"`        // Varnish/CDN base URLs purged, through jobs, on every change
	ShutdownGrace     time.Duration `json:"-"`                // how long in-flight requests get on SIGTERM
	LogOutput         io.Writer     `json:"-"`                // where the access log writes (standard error when nil): the command's log output
	ReadTimeout       time.Duration `json:"-"`
	ReadHeaderTimeout time.Duration `json:"-"`
	WriteTimeout      time.Duration `json:"-"`
	IdleTimeout       time.Duration `json:"-"`
	MaxHeaderBytes    int           `json:"-"`

	// CanonicalURL is the wiki's public base URL ("https://wiki.example.org",
	// MediaWiki's $wgCanonicalServer): feeds need absolute URLs and IDs, and
	// with it their shared responses are cached as the pages they follow.
	// Without it a feed's URLs come from the request's Host, so no shared
	// cache may keep it.
	CanonicalURL string `json:"canonical_url"`

	RenderConcurrency int      `json:"render_concurrency"` // renders at once (0: GOMAXPROCS)
	RenderQueue       int      `json:"render_queue"`       // renders waiting for a slot before 503 (0: 32 per slot)
	RenderWait        Duration `json:"render_wait"`        // longest wait for a render slot before 503
	RenderTimeout     Duration `json:"render_timeout"`     // CPU time a render may take before the page shows as plain text (0: no limit)

	JobWorkers int      `json:"job_workers"`  // background job workers in serve (0: none; run `wikid jobs run` instead)
	JobLease   Duration `json:"job_lease"`    // how long a worker holds leased jobs before another may take them
	JobMaxDuty float64  `json:"job_max_duty"` // fraction of the time a worker may be busy while draining (0: no limit)
	JobNice    int      `json:"job_nice"`     // Linux: niceness of the job workers' threads (0: as any goroutine)
	RCMaxAge   Duration `json:"rc_max_age"`   // how long recent changes (and contributions) are kept (0: forever)

	MaxUploadBytes int64      `json:"max_upload_bytes"` // an uploaded file may not be larger: uploads over it get 413
	MaxImportBytes int64      `json:"max_import_bytes"` // a dump sent to Special:Import may not be larger (0: DefaultImportBytes; wikid import has no limit)
	UploadGroup    wiki.Group `json:"upload_group"`     // who may upload files
	// UploadTypes are the MIME types uploads may have, judged by their
	// content (empty: images, PDF, plain text, office and archive types).
	UploadTypes []string `json:"upload_types"`
	// StripGPS removes GPS positions from uploaded photos' originals
	// (thumbnails never carry any).
	StripGPS bool `json:"strip_gps"`
}

// Duration is a time.Duration that reads "30s" or "720h" from JSON.
type Duration time.Duration

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("want a duration such as \"30s\" or \"720h\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// Default returns the embedded defaults: SQLite under ./data, in-process cache.
func Default() Config {
	return Config{
		Addr:                "127.0.0.1:8080",
		DataDir:             "./data",
		SiteName:            "Wikid",
		MainPage:            "Main Page",
		CapitalLinks:        true,
		DefaultContentModel: wiki.ModelMarkdown,
		AllowRegistration:   true,
		ReadGroup:           wiki.GroupAnonymous,
		EditGroup:           wiki.GroupUser,
		MaxPageBytes:        2 << 20, // MediaWiki's $wgMaxArticleSize
		SessionTTL:          Duration(30 * 24 * time.Hour),
		CacheMaxBytes:       256 << 20,
		SMaxAge:             300,
		ListTTL:             Duration(15 * time.Second),
		SecureCookies:       "auto",
		ClientIPHeader:      "X-Forwarded-For",
		AccessLog:           true,
		Front:               true,
		RenderWait:          Duration(10 * time.Second),
		RenderTimeout:       Duration(3 * time.Second), // render.DefaultTimeout
		JobWorkers:          1,
		JobLease:            Duration(2 * time.Minute),
		JobMaxDuty:          0.5, // a draining backlog leaves half a CPU per worker to page views
		JobNice:             10,  // and page views get the CPU first when it is scarce
		ShutdownGrace:       15 * time.Second,
		ReadTimeout:         30 * time.Second,
		ReadHeaderTimeout:   10 * time.Second,
		WriteTimeout:        60 * time.Second,
		IdleTimeout:         120 * time.Second,
		MaxHeaderBytes:      64 << 10,
		MaxUploadBytes:      100 << 20,
		UploadGroup:         wiki.GroupUser,
	}
}

// LoadFile overlays the JSON file at path on c. Unknown keys are an error,
// so a typo does not silently fall back to a default.
func (c *Config) LoadFile(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config: read %s: %w", path, err)
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(c); err != nil {
		return fmt.Errorf("config: %s: %w", path, err)
	}
	return nil
}

// LoadEnv overlays WIKID_* variables read through getenv.
func (c *Config) LoadEnv(getenv func(string) string) error {
	str := func(name string, dst *string) {
		if v := getenv(name); v != "" {
			*dst = v
		}
	}
	str("WIKID_ADDR", &c.Addr)
	str("WIKID_DATA", &c.DataDir)
	str("WIKID_DATABASE", &c.Database)
	str("WIKID_SITE_NAME", &c.SiteName)
	if v := getenv("WIKID_ALLOW_REGISTRATION"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("config: WIKID_ALLOW_REGISTRATION=%q: want true or false", v)
		}
		c.AllowRegistration = b
	}
	if v := getenv("WIKID_CAPITAL_LINKS"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("config: WIKID_CAPITAL_LINKS=%q: want true (the first letter of titles is upper-cased) or false (kept as written)", v)
		}
		c.CapitalLinks = b
	}
	if v := getenv("WIKID_DEFAULT_CONTENT_MODEL"); v != "" {
		c.DefaultContentModel = wiki.ContentModel(v)
	}
	if v := getenv("WIKID_MAX_PAGE_BYTES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("config: WIKID_MAX_PAGE_BYTES=%q: want a number of bytes such as 2097152", v)
		}
		c.MaxPageBytes = n
	}
	if v := getenv("WIKID_JOB_WORKERS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("config: WIKID_JOB_WORKERS=%q: want a number of workers", v)
		}
		c.JobWorkers = n
	}
	if v := getenv("WIKID_TRUSTED_PROXIES"); v != "" {
		c.TrustedProxies = splitList(v)
	}
	if v := getenv("WIKID_CDN_PURGE"); v != "" {
		c.CDNPurge = splitList(v)
	}
	str("WIKID_OPS_ADDR", &c.OpsAddr)
	str("WIKID_CANONICAL_URL", &c.CanonicalURL)
	if v := getenv("WIKID_MAX_CONNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("config: WIKID_MAX_CONNS=%q: want a number of connections", v)
		}
		c.MaxConns = n
	}
	if v := getenv("WIKID_FRONT_LOOPS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("config: WIKID_FRONT_LOOPS=%q: want a number of event loops (0: one per two CPUs, -1: none)", v)
		}
		c.FrontLoops = n
	}
	if v := getenv("WIKID_READ_GROUP"); v != "" {
		c.ReadGroup = wiki.Group(v)
	}
	if v := getenv("WIKID_EDIT_GROUP"); v != "" {
		c.EditGroup = wiki.Group(v)
	}
	return nil
}

// Validate reports the first setting that cannot work, saying how to fix it.
func (c *Config) Validate() error {
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		return fmt.Errorf("config: addr %q: want host:port such as 127.0.0.1:8080", c.Addr)
	}
	if c.DataDir == "" {
		return errors.New("config: data directory is empty; set --data or WIKID_DATA")
	}
	if c.Database != "" && !c.Postgres() {
		return errors.New("config: database: want a PostgreSQL URL such as postgres://wikid:password@db.example:5432/wikid, or nothing for the embedded SQLite file in the data directory")
	}
	if _, err := c.TitleRules().Parse(c.MainPage); err != nil {
		return fmt.Errorf("config: main_page: %w", err)
	}
	for name, g := range map[string]wiki.Group{"read_group": c.ReadGroup, "edit_group": c.EditGroup, "upload_group": c.UploadGroup} {
		if g != wiki.GroupAnonymous && !wiki.ValidUserGroup(g) {
			return fmt.Errorf("config: %s %q: want anonymous, %s", name, g, wiki.UserGroupNames())
		}
	}
	if c.EditGroup.Rank() < c.ReadGroup.Rank() {
		return fmt.Errorf("config: edit_group %q may not be lower than read_group %q", c.EditGroup, c.ReadGroup)
	}
	if c.UploadGroup.Rank() < c.EditGroup.Rank() {
		return fmt.Errorf("config: upload_group %q may not be lower than edit_group %q: an upload edits its file page", c.UploadGroup, c.EditGroup)
	}
	if c.MaxUploadBytes < 1 || c.MaxUploadBytes > MaxUploadLimit {
		return fmt.Errorf("config: max_upload_bytes %d: want 1 to %d bytes (the default is 104857600, 100 MiB)", c.MaxUploadBytes, int64(MaxUploadLimit))
	}
	if c.MaxImportBytes < 0 || c.MaxImportBytes > MaxUploadLimit {
		return fmt.Errorf("config: max_import_bytes %d: want 1 to %d bytes, or 0 for the default of 20971520 (20 MiB; wikid import reads dumps of any size)", c.MaxImportBytes, int64(MaxUploadLimit))
	}
	switch c.SecureCookies {
	case "auto", "always", "never":
	default:
		return fmt.Errorf("config: secure_cookies %q: want auto, always or never", c.SecureCookies)
	}
	if !c.DefaultContentModel.Valid() {
		return fmt.Errorf("config: default_content_model %q: want markdown or wikitext (the markup of new pages; default markdown)", c.DefaultContentModel)
	}
	if c.MaxPageBytes < 1024 || c.MaxPageBytes > MaxPageBytesLimit {
		return fmt.Errorf("config: max_page_bytes %d: want 1024 to %d (default %d, 2 MiB)", c.MaxPageBytes, MaxPageBytesLimit, Default().MaxPageBytes)
	}
	if c.MaxBodyBytes != 0 && c.MaxBodyBytes < 1024 {
		return fmt.Errorf("config: max_body_bytes %d is too small; use at least 1024, or 0 to derive it from max_page_bytes", c.MaxBodyBytes)
	}
	if c.RenderConcurrency < 0 || c.RenderQueue < 0 {
		return errors.New("config: render_concurrency and render_queue may not be negative (0 derives them from the CPUs)")
	}
	if time.Duration(c.RenderWait) < 0 || time.Duration(c.RenderTimeout) < 0 {
		return errors.New("config: render_wait and render_timeout may not be negative")
	}
	if t := time.Duration(c.RenderTimeout); t > 0 && t < 100*time.Millisecond {
		return fmt.Errorf("config: render_timeout %v is too short for ordinary pages; use at least 100ms (default %v), or 0 for none", t, time.Duration(Default().RenderTimeout))
	}
	if c.JobWorkers < 0 || c.JobWorkers > 64 {
		return fmt.Errorf("config: job_workers %d: want 0 (no workers in serve) to 64; 1–2 suit SQLite", c.JobWorkers)
	}
	if time.Duration(c.JobLease) < time.Second {
		return fmt.Errorf("config: job_lease %v is too short; use at least 1s (default 2m)", time.Duration(c.JobLease))
	}
	if c.JobNice < 0 || c.JobNice > 19 {
		return fmt.Errorf("config: job_nice %d: want 0 (the workers run like any goroutine) to 19", c.JobNice)
	}
	if c.JobMaxDuty < 0 || c.JobMaxDuty > 1 {
		return fmt.Errorf("config: job_max_duty %v: want a fraction between 0 and 1 (0: no limit)", c.JobMaxDuty)
	}
	if c.RCMaxAge < 0 {
		return errors.New("config: rc_max_age may not be negative (0 keeps recent changes forever)")
	}
	if _, err := c.TrustedPrefixes(); err != nil {
		return err
	}
	switch c.ClientIPHeader {
	case "X-Forwarded-For", "Forwarded":
	default:
		return fmt.Errorf("config: client_ip_header %q: want X-Forwarded-For or Forwarded (the header your proxy sets)", c.ClientIPHeader)
	}
	if c.OpsAddr != "" {
		if _, _, err := net.SplitHostPort(c.OpsAddr); err != nil {
			return fmt.Errorf("config: ops_addr %q: want host:port such as 127.0.0.1:9090", c.OpsAddr)
		}
		if _, port, _ := net.SplitHostPort(c.OpsAddr); c.OpsAddr == c.Addr && port != "0" { // ":0" picks a free port for each
			return fmt.Errorf("config: ops_addr %q is the same as addr; give the operator endpoints their own port", c.OpsAddr)
		}
	}
	if c.MaxConns < 0 {
		return errors.New("config: max_conns may not be negative (0 derives it from the file-descriptor limit)")
	}
	if c.FrontLoops < -1 || c.FrontLoops > 64 {
		return fmt.Errorf("config: front_loops %d: want 0 (one per two CPUs), 1 to 64 event loops, or -1 (a goroutine per connection)", c.FrontLoops)
	}
	if c.CanonicalURL != "" {
		u, err := url.Parse(c.CanonicalURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return fmt.Errorf("config: canonical_url %q: want the wiki's base URL such as https://wiki.example.org", c.CanonicalURL)
		}
	}
	for _, b := range c.CDNPurge {
		u, err := url.Parse(b)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("config: cdn_purge %q: want a base URL such as http://127.0.0.1:6081", b)
		}
	}
	if c.CacheMaxBytes < 0 || c.SMaxAge < 0 {
		return errors.New("config: cache_max_bytes and s_maxage may not be negative")
	}
	return nil
}

// TitleRules are the title rules capital_links sets, for everything that
// reads titles from people or pages.
func (c *Config) TitleRules() wiki.TitleRules { return wiki.NewTitleRules(c.CapitalLinks) }

// MaxPageBytesLimit is the largest max_page_bytes accepted. Rendering is
// bounded per byte of source, and the render limits and tests are set for
// pages up to this size (MediaWiki caps $wgMaxArticleSize the same way).
const MaxPageBytesLimit = 16 << 20

// BodyLimit is the largest request body accepted: max_body_bytes when set,
// else what a page of max_page_bytes can take on the wire. A form
// percent-encodes every byte outside ASCII letters and digits as three
// bytes, so a page at the limit in any script fits, with room for the
// other fields.
func (c *Config) BodyLimit() int64 {
	if c.MaxBodyBytes > 0 {
		return c.MaxBodyBytes
	}
	return 3*int64(c.MaxPageBytes) + 64<<10
}

// MaxUploadLimit is the largest max_upload_bytes accepted: an upload is
// held in memory while its content is checked.
const MaxUploadLimit = 1 << 30

// DefaultImportBytes is the largest dump Special:Import takes when
// max_import_bytes is 0.
const DefaultImportBytes = 20 << 20

// ImportLimit is the largest dump Special:Import takes (max_import_bytes).
func (c *Config) ImportLimit() int64 {
	if c.MaxImportBytes == 0 {
		return DefaultImportBytes
	}
	return c.MaxImportBytes
}

// UploadBodyLimit is the largest body of an upload request: the file and
// the form's other fields.
func (c *Config) UploadBodyLimit() int64 { return c.MaxUploadBytes + 256<<10 }

// TrustedPrefixes parses trusted_proxies (addresses or CIDRs); trust_proxy
// adds the loopback networks.
func (c *Config) TrustedPrefixes() ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range c.TrustedProxies {
		s = strings.TrimSpace(s)
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("config: trusted_proxies %q: want an address (10.0.0.2) or a network (10.0.0.0/8)", s)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	if c.TrustProxy {
		out = append(out, netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128"))
	}
	return out, nil
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Postgres reports whether the store is a PostgreSQL database.
func (c *Config) Postgres() bool {
	return strings.HasPrefix(c.Database, "postgres://") || strings.HasPrefix(c.Database, "postgresql://")
}

// DBPath is the SQLite database file.
func (c *Config) DBPath() string { return filepath.Join(c.DataDir, "wikid.db") }
