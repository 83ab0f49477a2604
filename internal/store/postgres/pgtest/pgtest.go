// Package pgtest gives tests a real, throw-away PostgreSQL: a cluster of
// its own (initdb in a temporary folder, a free loopback port, torn down
// when the tests end), or the server WIKID_TEST_POSTGRES names, and a
// fresh database for each test. It is imported only by tests.
//
// A package that uses it calls Main from its TestMain:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
// Without PostgreSQL (no WIKID_TEST_POSTGRES, no initdb found), Open skips
// the test with a message saying what to install; with
// WIKID_REQUIRE_POSTGRES=1 (CI) it fails instead.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wikid/wikid/internal/store/postgres"
)

// template is the database every test's database is copied from: already
// migrated, so that a test's database costs a file copy, not a migration.
const template = "wikid_template"

var (
	mainRan bool
	server  struct {
		once    sync.Once
		base    string // DSN of the maintenance database, "" if none
		skip    string // why there is none
		cluster *Cluster
	}
	seq atomic.Int64
)

// Main runs the package's tests and then stops the cluster they started.
func Main(m *testing.M) {
	mainRan = true
	code := m.Run()
	if c := server.cluster; c != nil {
		c.Stop()
	}
	os.Exit(code)
}

// DSN returns the connection string of a new, empty database that the
// current schema was applied to, dropped when t ends.
func DSN(t testing.TB) string {
	t.Helper()
	if !mainRan {
		t.Fatal("pgtest: call pgtest.Main(m) from the package's TestMain, so that the cluster is stopped after the tests")
	}
	server.once.Do(setup)
	if server.base == "" {
		if os.Getenv("WIKID_REQUIRE_POSTGRES") == "1" {
			t.Fatalf("pgtest: PostgreSQL is required (WIKID_REQUIRE_POSTGRES=1) but %s", server.skip)
		}
		t.Skipf("pgtest: no PostgreSQL for this test: %s (install Debian's postgresql package, or set WIKID_TEST_POSTGRES to a server's postgres:// URL where databases may be created)", server.skip)
	}
	name := fmt.Sprintf("wikid_test_%d_%d", os.Getpid(), seq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := admin(ctx, `CREATE DATABASE `+name+` TEMPLATE `+template); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := admin(ctx, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	return withDatabase(server.base, name, testPool)
}

// Open returns a store on a new database (see DSN), closed when t ends.
func Open(t testing.TB) *postgres.DB {
	t.Helper()
	dsn := DSN(t)
	db, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		t.Fatalf("pgtest: open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// admin runs one statement on the maintenance database.
func admin(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, server.base)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, err = conn.Exec(ctx, sql)
	return err
}

// testPool is the pool size of a test's store: tests run in parallel on
// one server.
const testPool = "&pool_max_conns=8"

// withDatabase returns dsn (a URL) naming database name instead, with the
// query parameters params ("&k=v…") after sslmode.
func withDatabase(dsn, name, params string) string {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return dsn
	}
	host := cfg.Host
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	u := fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable%s", cfg.User, host, cfg.Port, name, params)
	if cfg.Password != "" {
		u = fmt.Sprintf("postgres://%s:%s@%s:%d/%s?sslmode=disable%s", cfg.User, cfg.Password, host, cfg.Port, name, params)
	}
	return u
}

// setup finds or starts a server and makes the template database.
func setup() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	base := os.Getenv("WIKID_TEST_POSTGRES")
	if base == "" {
		c, err := StartCluster(ctx)
		if err != nil {
			server.skip = err.Error()
			return
		}
		server.cluster = c
		base = c.DSN
	}
	server.base = base
	admin(ctx, `DROP DATABASE IF EXISTS `+template+` WITH (FORCE)`)
	if err := admin(ctx, `CREATE DATABASE `+template); err != nil {
		server.base, server.skip = "", "creating the template database failed: "+err.Error()
		return
	}
	db, err := postgres.Open(ctx, withDatabase(base, template, testPool))
	if err != nil {
		server.base, server.skip = "", "migrating the template database failed: "+err.Error()
		return
	}
	db.Close()
}

// findBin returns the folder of initdb, pg_ctl and postgres.
func findBin() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if dir := filepath.Dir(p); fileExists(filepath.Join(dir, "pg_ctl")) {
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	for i := len(dirs) - 1; i >= 0; i-- {
		if fileExists(filepath.Join(dirs[i], "initdb")) {
			return dirs[i], nil
		}
	}
	return "", errors.New("initdb was not found on PATH or in /usr/lib/postgresql/*/bin")
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Cluster is a PostgreSQL server this process started.
type Cluster struct {
	// DSN is the URL of its maintenance database ("postgres"), as the
	// superuser wikid, without a password (trust on loopback).
	DSN      string
	bin, dir string
	cred     *syscall.Credential
}

// StartCluster runs initdb in a temporary folder and starts a server on a
// free loopback port, without durability (the cluster is thrown away:
// Stop removes it). As root, the server runs as the postgres user: it
// refuses root. Benchmarks use it too.
func StartCluster(ctx context.Context) (*Cluster, error) {
	bin, err := findBin()
	if err != nil {
		return nil, err
	}
	sweep(ctx, bin)
	dir, err := os.MkdirTemp("", clusterPrefix)
	if err != nil {
		return nil, err
	}
	// Who started it: a later run stops it if that process died without
	// stopping it (a test binary killed by its timeout).
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	c := &Cluster{bin: bin, dir: dir}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(dir)
			return nil, errors.New("running as root, and there is no postgres user to run the server as")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		c.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	if out, err := c.run(ctx, "initdb", "-D", data, "-U", "wikid", "--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync"); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting a throw-away cluster: initdb: %v: %s", err, out)
	}
	port, err := freePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300 -c shared_buffers=64MB", port, dir)
	if out, err := c.run(ctx, "pg_ctl", "start", "-w", "-t", "60", "-D", data, "-l", filepath.Join(dir, "log"), "-o", opts); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "log"))
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting a throw-away cluster: pg_ctl start: %v: %s %s", err, out, log)
	}
	c.DSN = fmt.Sprintf("postgres://wikid@127.0.0.1:%d/postgres?sslmode=disable", port)
	return c, nil
}

// CreateDatabase creates an empty database and returns its URL.
func (c *Cluster) CreateDatabase(ctx context.Context, name string) (string, error) {
	conn, err := pgx.Connect(ctx, c.DSN)
	if err != nil {
		return "", err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, `CREATE DATABASE `+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", err
	}
	return withDatabase(c.DSN, name, ""), nil
}

func (c *Cluster) run(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(c.bin, name), args...)
	cmd.Dir = c.dir
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	return cmd.CombinedOutput()
}

// clusterPrefix names the temporary folders of clusters; ownerFile, in
// one, holds the process ID of the process that started it.
const (
	clusterPrefix = "wikid-pgtest-"
	ownerFile     = "owner.pid"
)

// sweep stops the clusters whose starting process is gone, and removes
// their folders.
func sweep(ctx context.Context, bin string) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), clusterPrefix+"*"))
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue // being made, or not ours
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid == os.Getpid() || syscall.Kill(pid, 0) == nil {
			continue // its process runs (or may: signal 0 reached it)
		}
		c := &Cluster{bin: bin, dir: dir}
		if fi, err := os.Stat(dir); err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid != uint32(os.Geteuid()) {
				c.cred = &syscall.Credential{Uid: st.Uid, Gid: st.Gid}
			}
		}
		c.run(ctx, "pg_ctl", "stop", "-D", filepath.Join(dir, "data"), "-m", "immediate", "-w")
		os.RemoveAll(dir)
	}
}

// Stop stops the server at once and removes its folder.
func (c *Cluster) Stop() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c.run(ctx, "pg_ctl", "stop", "-D", filepath.Join(c.dir, "data"), "-m", "immediate", "-w")
	os.RemoveAll(c.dir)
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
