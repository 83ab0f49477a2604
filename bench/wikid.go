package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// proc is a server process the harness started; stop ends it by its pid.
type proc struct {
	name string
	cmd  *exec.Cmd
	out  *tailWriter // the end of its stdout and stderr
	log  string      // where stop saves that end
	done chan error
	ops  string // base URL of wikid's /metrics and /debug/pprof/ (its ops_addr)
}

// startProc starts cmd. Its output is kept in memory, not in a file: wikid
// logs every request, and a file would grow by gigabytes during a run.
func startProc(name, logPath string, cmd *exec.Cmd) (*proc, error) {
	out := &tailWriter{max: 64 << 10}
	cmd.Stdout, cmd.Stderr = out, out
	// If the harness dies without stopping it, the kernel does.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, out: out, log: logPath, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	return p, nil
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// stop sends SIGTERM, then SIGKILL after 10 s, and saves the log's end.
func (p *proc) stop() {
	select {
	case err := <-p.done:
		p.done <- err
	default:
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-p.done:
			p.done <- err
		case <-time.After(10 * time.Second):
			p.cmd.Process.Kill()
			p.done <- <-p.done
		}
	}
	os.WriteFile(p.log, p.out.bytes(), 0o644)
}

// tail returns the end of the process's output, for error messages.
func (p *proc) tail() string {
	b := p.out.bytes()
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// tailWriter keeps the last max bytes written to it.
type tailWriter struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailWriter) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > 2*t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(b), nil
}

func (t *tailWriter) bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return bytes.Clone(t.buf[max(0, len(t.buf)-t.max):])
}

// freeAddr returns a 127.0.0.1 address with a port free at the time of asking.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// waitHTTP polls url until it answers, the process exits, or 20 s pass.
func waitHTTP(p *proc, url string) error {
	c := &http.Client{Timeout: time.Second, CheckRedirect: noRedirect}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-p.done:
			p.done <- err
			return fmt.Errorf("%s exited during start-up (%v):\n%s", p.name, err, p.tail())
		default:
		}
		if res, err := c.Get(url); err == nil {
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%s did not answer %s within 20 s:\n%s", p.name, url, p.tail())
}

func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// moduleRoot finds the directory holding wikid's go.mod, from the working
// directory upwards.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil &&
			bytes.Contains(b, []byte("module github.com/wikid/wikid\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run from inside the wikid module (no go.mod for github.com/wikid/wikid above the working directory)")
		}
		dir = parent
	}
}

// buildWikid compiles ./cmd/wikid into dir.
func buildWikid(root, dir string) (string, error) {
	bin := filepath.Join(dir, "wikid")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/wikid")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/wikid: %v\n%s", err, out)
	}
	return bin, nil
}

// wikidCLI runs a wikid subcommand against a data directory.
func wikidCLI(bin, data, stdin string, args ...string) (string, error) {
	out, _, err := wikidCLICPU(bin, data, stdin, args...)
	return out, err
}

// wikidCLICPU is wikidCLI, and the CPU time (user and system) the command
// took.
func wikidCLICPU(bin, data, stdin string, args ...string) (string, time.Duration, error) {
	cmd := exec.Command(bin, append(args, "--data", data)...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", 0, fmt.Errorf("wikid %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return strings.TrimSpace(out.String()), cpu, nil
}

// startWikid serves data on a free port, and its operator endpoints on
// another (ops_addr, proc.ops); config is written as JSON when not nil.
func startWikid(name, bin, data, tmp string, config map[string]any) (*proc, string, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, "", err
	}
	opsAddr, err := freeAddr()
	if err != nil {
		return nil, "", err
	}
	args := []string{"serve", "--addr", addr, "--data", data}
	if quietFlag(bin) {
		// No access log, as for nginx (access_log off).
		args = append(args, "--log-level", "warn")
	}
	if config != nil {
		path := filepath.Join(tmp, name+".json")
		b, _ := json.Marshal(config)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return nil, "", err
		}
		args = append(args, "--config", path)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "WIKID_OPS_ADDR="+opsAddr)
	p, err := startProc(name, filepath.Join(tmp, name+".log"), cmd)
	if err != nil {
		return nil, "", err
	}
	base := "http://" + addr
	if err := waitHTTP(p, base+"/"); err != nil {
		p.stop()
		return nil, "", err
	}
	p.ops = "http://" + opsAddr
	if res, err := http.Get(p.ops + "/metrics"); err == nil {
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	} else {
		p.ops = base // a wikid from before ops_addr: /metrics on addr, for loopback
	}
	return p, base, nil
}

// quietFlag reports whether this wikid has --log-level.
func quietFlag(bin string) bool {
	return exec.Command(bin, "version", "--log-level", "warn").Run() == nil
}

// createPage creates title through the REST API.
func createPage(ctx context.Context, c *http.Client, base, token, title, source string) error {
	body, _ := json.Marshal(map[string]string{"title": title, "source": source, "comment": "bench seed"})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/w/rest.php/v1/page", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("create %q: %w", title, err)
	}
	defer res.Body.Close()
	msg, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusCreated && res.StatusCode != http.StatusOK {
		return fmt.Errorf("create %q: status %d: %s", title, res.StatusCode, msg)
	}
	return nil
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]*)"`)

// login posts the login form as a browser would and returns the session
// cookie's value.
func login(c *http.Client, base, user, password string) (string, error) {
	const path = "/wiki/Special:UserLogin"
	res, err := c.Get(base + path)
	if err != nil {
		return "", err
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := csrfRE.FindSubmatch(page)
	if m == nil {
		return "", fmt.Errorf("login form (status %d) has no csrf field", res.StatusCode)
	}
	form := url.Values{"csrf": {string(m[1])}, "username": {user}, "password": {password}}
	req, _ := http.NewRequest(http.MethodPost, base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	res, err = c.Do(req)
	if err != nil {
		return "", err
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	for _, ck := range res.Cookies() {
		if ck.Name == "wikid_session" && ck.Value != "" {
			return ck.Value, nil
		}
	}
	return "", fmt.Errorf("login answered %d without a wikid_session cookie", res.StatusCode)
}

// copyData copies a stopped wikid's data directory (the database with any
// WAL files, and the secret key).
func copyData(from, to string) error {
	if err := os.MkdirAll(to, 0o755); err != nil {
		return err
	}
	ents, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o600); err != nil {
			return err
		}
	}
	return nil
}
