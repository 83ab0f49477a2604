// Command wikid is a wiki in one binary. Run `wikid --help`.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/wikid/wikid/internal/app"
	"github.com/wikid/wikid/internal/auth"
	"github.com/wikid/wikid/internal/config"
	"github.com/wikid/wikid/internal/purge"
	"github.com/wikid/wikid/internal/store/backend"
	"github.com/wikid/wikid/internal/wiki"
)

const usage = `wikid — a wiki in one binary

Usage:
  wikid serve [--addr 127.0.0.1:8080] [--data ./data] [--config wikid.json]
        Start the wiki. Open http://127.0.0.1:8080 in a browser.
  wikid user add NAME [--admin]
        Create an account. The password is read from standard input when it
        is not a terminal, and asked for otherwise.
  wikid user list
        List the accounts with their group and block.
  wikid user set-groups NAME GROUP [--reason TEXT]
        Put the user in GROUP: user, rollbacker or admin.
  wikid user block NAME [--until DURATION] [--reason TEXT]
        Stop the user from changing anything (reading and logging in stay
        allowed) for DURATION (24h, 7d, 2w, 1y) or "infinite" (the default).
  wikid user unblock NAME [--reason TEXT]
        Lift the user's block.
  wikid user reset-password NAME [--stdin]
        Print a link that lets the user set a new password (once, for 24 h);
        with --stdin, set the password read from standard input. Either way
        the user's sessions end and their API tokens are revoked.
  wikid token create NAME
        Print a new API token for user NAME (use as "Authorization: Bearer TOKEN").
  wikid token list NAME
        List the user's API tokens (IDs, names, expiry, last use; never secrets).
  wikid token revoke ID | --all NAME
        Revoke one token, or every token of a user.
  wikid migrate up
        Apply the schema migrations this wikid brings (serve and every
        command apply them too when they open the database), and print the
        schema's version. A database a newer wikid migrated is refused.
  wikid migrate --from SOURCE --to DESTINATION [--sessions] [--renders] [--verify-only]
        Copy a wiki between stores: sqlite:PATH (a wikid.db file, or the
        data directory holding it) or postgres://user:password@host:5432/name.
        Pages, revisions, links, changes, the log, protection, accounts,
        blocks, tokens and unfinished jobs keep their IDs; --sessions copies
        the sign-ins (else users sign in again), --renders the stored
        renders. The destination must be empty, or an interrupted copy of
        the same source: running the command again resumes it. The search
        index is rebuilt by jobs the copy queues. Stop every wikid using the
        source first. Then both sides are compared table by table (rows and
        a checksum; exit status 1 if they differ); --verify-only compares
        without copying.
  wikid jobs run
        Run job workers only, without HTTP (SIGTERM drains them). Use beside
        a serve with "job_workers": 0, or to drain a backlog.
  wikid jobs list [--state queued|running|done|dead] [--limit N]
        List jobs, newest first.
  wikid jobs stats
        Count jobs per state and show the oldest queued job's age.
  wikid jobs retry ID
        Queue a dead job again.
  wikid page move --id ID NEWTITLE [--reason TEXT]
        Rename the page with id ID (as listed by wikid check), as the
        maintenance script; works for a title no URL reaches any more.
  wikid fix-titles [--dry-run] [--reason TEXT]
        Move every page whose stored title today's title rules spell
        otherwise (saved before its namespace existed: "Talk:foo" is now
        "Talk:Foo", "Wikid:About" is "Project:About"; or while
        capital_links was off: "apple" is now "Apple") to the title it now
        has, as the maintenance script, logged as any move; correct the
        namespace recorded with pages whose title is right. No redirect is
        left unless --redirect (URLs reach the new title, never the old
        one). A page whose new title is taken is skipped and reported (exit
        status 1). --dry-run says what would be done. wikid check lists
        such pages too.
  wikid import FILE.jsonl | DIRECTORY | - [--summary TEXT] [--user NAME]
        Import pages: JSON lines ({"title": "…", "text": "…"} per line; "-"
        reads standard input) or every .md file under DIRECTORY (the title
        is the path without .md, "_" as a space). Each page becomes a new
        revision (or the page is created), indexed for search at once, in
        batches of 1,000 per transaction. The jobs it queues (link colours,
        purges) run in the server. Pages a running server showed as
        missing may show so until its edge cache expires them.
  wikid import FILE.xml[.gz|.bz2] [--files DIR] [--no-local-users] [--username-prefix P]
        Import a MediaWiki XML dump (dumpBackup.php --full, Special:Export;
        told by its content, gzip and bzip2 too): every revision with its
        time, author (as "imported>Name" unless an account has that name,
        or always with --no-local-users), comment and minor flag, as
        wikitext; redirects, namespaces matched by number. A revision
        present already is skipped: importing again changes nothing, and
        an import that stopped completes when run again. Only the latest
        revision of each page is parsed; history makes no recent change,
        one import log entry per page. --files DIR uploads the files of the
        dump's uploads from DIR (dumpUploads.php), with their times.
  wikid export [--full] [--all] [--category NAME] [--markdown-model] [TITLE…]
        Write a MediaWiki XML dump (export-0.11, which importDump.php
        reads) of the titles, a category's pages or --all pages to standard
        output: the current revision of each, every revision with --full.
        Markdown pages are written as wikitext (MediaWiki has no Markdown
        model) unless --markdown-model. Deleted pages and revisions are
        never written.
  wikid upload FILE… [--title NAME] [--summary TEXT] [--user NAME]
        Upload files, each as File:its name (--title gives another name to
        one file), with the checks and log of any upload: the type is read
        from the content, a file over max_upload_bytes is refused, an
        existing file gets a new version. A file that fails is reported and
        the others go on (exit status 1).
  wikid check
        Report stored data that today's rules refuse: page titles and user
        names with invisible, bidirectional or unassigned characters or not
        in normal form (titles saved before their namespace existed, with
        the title they now have), users whose names look alike, pages whose
        latest revision is missing. Reads only (safe beside a running serve); exit
        status 0 when all is well, 1 when problems were found, 2 on errors.
  wikid stats
        Show how the database uses the disk: the file and its WAL, pages,
        revisions and renders (and how many are stored uncompressed), and
        the bytes of every table and index, per live page. Reads only (safe
        beside a running serve).
  wikid compact [--no-vacuum]
        Compress the revision texts and stored renders written before
        wikid compressed them, a batch per transaction (safe beside a
        running serve), then VACUUM: rebuild the file without its free
        pages, which gives them back to the file system. VACUUM needs free
        disk space about the database's size, and edits wait while it runs
        (a running serve's fail after 10 s); --no-vacuum skips it.
  wikid version
        Print the version.

Common flags (every command):
  --data DIR       data directory, holds wikid.db (env WIKID_DATA, default ./data)
                   and secret.key (copy it to every node that shares a database)
  --database URL   a PostgreSQL database instead of wikid.db, for several
                   nodes: postgres://user:password@host:5432/name
                   (env WIKID_DATABASE)
  --config FILE    JSON configuration file (env WIKID_CONFIG); see README
  --addr HOST:PORT listen address for serve (env WIKID_ADDR, default 127.0.0.1:8080)
  --capital-links=false
                   keep the first letter of titles as written: "apple" and
                   "Apple" are two pages (env WIKID_CAPITAL_LINKS, config
                   capital_links, default true); every command must run with
                   the wiki's setting
  --log-level L    debug, info, warn or error (default info)
`

func main() {
	stop, err := cpuProfile(os.Getenv("WIKID_CPUPROFILE"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "wikid:", err)
		os.Exit(1)
	}
	err = run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	if err != nil {
		code := 1
		var ee *exitError
		if errors.As(err, &ee) {
			code, err = ee.code, ee.err
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "wikid:", err)
		}
		os.Exit(code)
	}
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, usage)
		return nil
	}
	cmd, rest := args[0], args[1:]
	sub := ""
	if (cmd == "user" || cmd == "token" || cmd == "jobs" || cmd == "page" || cmd == "migrate") && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		sub, rest = rest[0], rest[1:]
	}
	fs := flag.NewFlagSet("wikid "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	cfg := config.Default()
	addr := fs.String("addr", "", "listen address")
	data := fs.String("data", "", "data directory")
	database := fs.String("database", "", "a PostgreSQL URL (default: the SQLite file in the data directory)")
	cfgFile := fs.String("config", getenv("WIKID_CONFIG"), "configuration file")
	logLevel := fs.String("log-level", "info", "log level")
	capitalLinks := fs.Bool("capital-links", true, "upper-case the first letter of titles (false: keep it as written)")
	admin := fs.Bool("admin", false, "make the user an administrator")
	state := fs.String("state", "", "jobs list: only jobs in this state")
	limit := fs.Int("limit", 50, "jobs list: how many")
	until := fs.String("until", "", "user block: how long (24h, 7d, infinite)")
	reason := fs.String("reason", "", "user set-groups, block, unblock, page move, fix-titles: the reason, for the log")
	fromStdin := fs.Bool("stdin", false, "user reset-password: read the new password from standard input")
	all := fs.Bool("all", false, "token revoke: every token of the user")
	pageID := fs.Int64("id", 0, "page move: the id of the page to move")
	summary := fs.String("summary", "", "import, upload: the edit summary of the imported revisions or uploads")
	asUser := fs.String("user", "", "import, upload: the account the changes are attributed to (default: the maintenance script)")
	fileTitle := fs.String("title", "", "upload: the file's name on the wiki (one file; default: its own name)")
	noVacuum := fs.Bool("no-vacuum", false, "compact: compress only, without VACUUM")
	copyFrom := fs.String("from", "", "migrate: the store to copy (sqlite:PATH or postgres://…)")
	copyTo := fs.String("to", "", "migrate: the store to copy into (sqlite:PATH or postgres://…)")
	sessions := fs.Bool("sessions", false, "migrate --from --to: copy the sign-ins too")
	renders := fs.Bool("renders", false, "migrate --from --to: copy the stored renders too")
	verifyOnly := fs.Bool("verify-only", false, "migrate --from --to: compare the stores, copy nothing")
	dryRun := fs.Bool("dry-run", false, "fix-titles: say what would be done, change nothing")
	filesDir := fs.String("files", "", "import of a MediaWiki dump: the directory of its uploads' files (dumpUploads.php), named as their titles")
	noLocalUsers := fs.Bool("no-local-users", false, "import of a MediaWiki dump: mark every author as imported, even one with an account here")
	userPrefix := fs.String("username-prefix", "imported", "import of a MediaWiki dump: authors are stored as PREFIX>Name")
	full := fs.Bool("full", false, "export: every revision (default: the current one of each page)")
	category := fs.String("category", "", "export: the pages of this category")
	keepMarkdown := fs.Bool("markdown-model", false, "export: write Markdown pages with <model>markdown</model> (for Wikid; MediaWiki refuses it) instead of wikitext")
	// Flags may follow positional arguments: wikid user add NAME --admin.
	var positional []string
	for {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil
			}
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if *cfgFile != "" {
		if err := cfg.LoadFile(*cfgFile); err != nil {
			return err
		}
	}
	if err := cfg.LoadEnv(getenv); err != nil {
		return err
	}
	if *addr != "" {
		cfg.Addr = *addr
	}
	if *data != "" {
		cfg.DataDir = *data
	}
	if *database != "" {
		cfg.Database = *database
	}
	fs.Visit(func(f *flag.Flag) { // only when given: the default is the file's or the environment's
		if f.Name == "capital-links" {
			cfg.CapitalLinks = *capitalLinks
		}
	})
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("--log-level %q: want debug, info, warn or error", *logLevel)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	cfg.LogOutput = stderr

	switch cmd {
	case "serve":
		return serve(ctx, cfg, log)
	case "version":
		fmt.Fprintln(stdout, "wikid", version())
		return nil
	case "user":
		return userCommand(ctx, cfg, sub, positional, accountFlags{admin: *admin, until: *until, reason: *reason, stdin: *fromStdin}, stdin, stdout, stderr)
	case "token":
		return tokenCommand(ctx, cfg, sub, positional, accountFlags{all: *all}, stdout)
	case "page":
		return pageCommand(ctx, cfg, log, sub, positional, *pageID, *reason, stdout)
	case "check":
		return check(ctx, cfg, positional, stdout)
	case "fix-titles":
		return fixTitles(ctx, cfg, log, positional, *dryRun, *reason, stdout)
	case "import":
		return importCommand(ctx, cfg, log, positional, *summary, *asUser, dumpFlags{files: *filesDir, noLocalUsers: *noLocalUsers, userPrefix: *userPrefix}, stdin, stdout, stderr)
	case "export":
		return exportCommand(ctx, cfg, log, positional, exportFlags{full: *full, all: *all, category: *category, markdown: *keepMarkdown}, stdout)
	case "upload":
		return uploadCommand(ctx, cfg, log, positional, *fileTitle, *summary, *asUser, stdout, stderr)
	case "stats":
		return stats(ctx, cfg, positional, stdout)
	case "compact":
		return compact(ctx, cfg, positional, *noVacuum, stdout)
	case "jobs":
		return jobsCommand(ctx, cfg, log, sub, positional, wiki.JobState(*state), *limit, stdout)
	case "migrate":
		if *copyFrom != "" || *copyTo != "" {
			if sub != "" || len(positional) != 0 {
				return errors.New(migrateCopyUsage)
			}
			return migrateCopy(ctx, log, copyFlags{from: *copyFrom, to: *copyTo, sessions: *sessions, renders: *renders, verifyOnly: *verifyOnly}, stdout, stderr)
		}
		return migrateUp(ctx, cfg, sub, positional, stdout)
	}
	return fmt.Errorf("unknown command %q; run `wikid --help` for the list", cmd)
}

func serve(ctx context.Context, cfg config.Config, log *slog.Logger) error {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	a, err := app.Open(ctx, cfg, log)
	if err != nil {
		return err
	}
	if err := a.Listen(); err != nil {
		a.Close()
		return err
	}
	return a.Serve(ctx)
}

// migrateUp applies the pending schema migrations and prints the version.
func migrateUp(ctx context.Context, cfg config.Config, sub string, args []string, stdout io.Writer) error {
	if sub != "up" || len(args) != 0 {
		return errors.New("usage: wikid migrate up, or " + strings.TrimPrefix(migrateCopyUsage, "usage: "))
	}
	db, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	v, err := db.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s is at schema version %d, the newest this wikid knows\n", backend.Describe(cfg), v)
	return nil
}

// openStore opens the store cfg names (see backend.Open).
func openStore(ctx context.Context, cfg config.Config) (backend.DB, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return backend.Open(ctx, cfg)
}

func userAdd(ctx context.Context, cfg config.Config, name string, admin bool, stdin io.Reader, stdout, stderr io.Writer) error {
	norm, err := auth.NormalizeUserName(name)
	if err != nil {
		return errors.New(wiki.Message(err))
	}
	password, err := readPassword(stdin, stderr)
	if err != nil {
		return err
	}
	if err := auth.ValidatePassword(password, password); err != nil {
		return errors.New(wiki.Message(err))
	}
	hash, err := auth.HashPassword(password)
	if err != nil {
		return err
	}
	db, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	group := wiki.GroupUser
	if admin {
		group = wiki.GroupAdmin
	}
	u, err := db.CreateUser(ctx, wiki.User{Name: norm, PasswordHash: hash, Group: group, Created: time.Now()})
	if errors.Is(err, wiki.ErrExists) {
		return fmt.Errorf("the user name %q is already taken", norm)
	}
	if err != nil {
		return err
	}
	// The creation is in Special:Log: running processes drop their copies.
	purge.NewNode(purge.NodeOptions{Log: db}).Purge(ctx, nil, purge.LogTitle)
	fmt.Fprintf(stdout, "created user %q (id %d, group %s)\n", u.Name, u.ID, u.Group)
	return nil
}

// readPassword reads a password: from a terminal without echo, asked twice;
// otherwise the first line of stdin.
func readPassword(stdin io.Reader, stderr io.Writer) (string, error) {
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(stderr, "Password: ")
		p1, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(stderr)
		if err != nil {
			return "", err
		}
		fmt.Fprint(stderr, "Again: ")
		p2, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(stderr)
		if err != nil {
			return "", err
		}
		if string(p1) != string(p2) {
			return "", errors.New("the two passwords differ")
		}
		return string(p1), nil
	}
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("no password on standard input; pipe one in, e.g. `echo 'secret-pass' | wikid user add NAME`")
	}
	return line, nil
}

func tokenCreate(ctx context.Context, cfg config.Config, name string, stdout io.Writer) error {
	db, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	norm, err := auth.LookupUserName(name)
	if err != nil {
		return errors.New(wiki.Message(err))
	}
	u, err := db.FindUserByName(ctx, norm)
	if errors.Is(err, wiki.ErrNotFound) {
		return fmt.Errorf("there is no user %q; create it first with `wikid user add %s`", norm, name)
	}
	if err != nil {
		return err
	}
	secret := "wkd_" + auth.NewSecret(32)
	if err := db.CreateToken(ctx, wiki.Token{ID: auth.HashToken(secret), UserID: u.ID, Name: "cli", Created: time.Now()}); err != nil {
		return err
	}
	fmt.Fprintln(stdout, secret)
	return nil
}

func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		v := bi.Main.Version
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += " (" + s.Value[:12] + ")"
			}
		}
		return v
	}
	return "(devel)"
}

// cpuProfile starts a CPU profile of the whole command into file when file
// is set (env WIKID_CPUPROFILE, for developers: go tool pprof reads it); the
// returned function stops it. serve has /debug/pprof on its ops address.
func cpuProfile(file string) (stop func(), err error) {
	if file == "" {
		return func() {}, nil
	}
	f, err := os.Create(file)
	if err != nil {
		return nil, fmt.Errorf("WIKID_CPUPROFILE: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("WIKID_CPUPROFILE: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
