package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// nginxConf serves dir/www on addr. The settings are the fair ones for this
// comparison: sendfile without tcp_nopush (Debian's stock tcp_nopush on
// stalls loopback responses by ~40 ms), no access log, long keep-alive,
// one worker per core, and gzip_static serving the precompressed copy.
const nginxConf = `# written by wikid's bench harness
worker_processes auto;
daemon off;
pid {{dir}}/nginx.pid;
error_log {{dir}}/nginx-error.log warn;

events {
	worker_connections 1024;
}

http {
	access_log off;
	sendfile on;
	tcp_nopush off;
	tcp_nodelay on;
	keepalive_requests 100000;
	keepalive_timeout 75s;
	etag on;
	gzip off;
	gzip_static on;
	server_tokens off;
	client_body_temp_path {{dir}}/body;

	types { }
	default_type text/html;
	charset utf-8;

	server {
		listen {{addr}};
		root {{dir}}/www;
		location / {
		}
	}
}
`

// startNginx writes the article's HTML (and its gzip copy) under urlPath in
// dir/www and starts nginx in the foreground on a free port.
func startNginx(dir, urlPath string, html, gz []byte) (*proc, string, error) {
	return startNginxFiles(dir, map[string][]byte{urlPath: html, urlPath + ".gz": gz}, "")
}

// startNginxFiles writes files (by URL path) in dir/www and starts nginx in
// the foreground on a free port, with types as its types block (empty:
// everything is text/html). It waits until nginx serves the first path.
func startNginxFiles(dir string, files map[string][]byte, types string) (*proc, string, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, "", err
	}
	var first string
	for urlPath, body := range files {
		if first == "" || urlPath < first {
			first = urlPath
		}
		file := filepath.Join(dir, "www", filepath.FromSlash(strings.TrimPrefix(urlPath, "/")))
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return nil, "", err
		}
		if err := os.WriteFile(file, body, 0o644); err != nil {
			return nil, "", err
		}
		// Workers run as an unprivileged user when nginx starts as root: they
		// must be able to reach the file through the temporary directories.
		for d, tmp := filepath.Dir(file), filepath.Clean(os.TempDir()); strings.HasPrefix(d, tmp+"/"); d = filepath.Dir(d) {
			if err := os.Chmod(d, 0o755); err != nil {
				return nil, "", err
			}
		}
	}
	block := "types { }"
	if types != "" {
		block = "types { " + types + " }"
	}
	conf := strings.NewReplacer("{{dir}}", dir, "{{addr}}", addr, "types { }", block).Replace(nginxConf)
	confPath := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		return nil, "", err
	}
	bin := nginxBin()
	if out, err := exec.Command(bin, "-t", "-q", "-p", dir, "-c", confPath, "-e", filepath.Join(dir, "nginx-error.log")).CombinedOutput(); err != nil {
		return nil, "", fmt.Errorf("nginx -t: %v\n%s", err, out)
	}
	p, err := startProc("nginx", filepath.Join(dir, "nginx.log"),
		exec.Command(bin, "-p", dir, "-c", confPath, "-e", filepath.Join(dir, "nginx-error.log")))
	if err != nil {
		return nil, "", err
	}
	base := "http://" + addr
	if err := waitHTTP(p, base+first); err != nil {
		p.stop()
		return nil, "", err
	}
	return p, base, nil
}

func nginxBin() string {
	if _, err := os.Stat("/usr/sbin/nginx"); err == nil {
		return "/usr/sbin/nginx"
	}
	return "nginx"
}

// nginxWorkers lists the worker pids of the nginx master pid (its children).
func nginxWorkers(master int) ([]int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", master, master))
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			pids = append(pids, n)
		}
	}
	if len(pids) == 0 {
		return nil, fmt.Errorf("nginx master %d has no workers", master)
	}
	return pids, nil
}
