package web

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestRecoverer(t *testing.T) {
	t.Parallel()
	logs := &lockedBuffer{}
	s := &Server{log: slog.New(slog.NewTextHandler(logs, nil))}
	mux := http.NewServeMux()
	mux.HandleFunc("/panic", func(http.ResponseWriter, *http.Request) { panic("boom in handler") })
	mux.HandleFunc("/panic-error", func(http.ResponseWriter, *http.Request) { panic(errors.New("an error value")) })
	mux.HandleFunc("/abort", func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) })
	mux.HandleFunc("/ok", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "still serving") })
	srv := httptest.NewServer(s.recoverer(mux))
	defer srv.Close()

	get := func(t *testing.T, path string) (int, string) {
		t.Helper()
		res, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}

	t.Run("a panicking handler is answered with 500 and logged", func(t *testing.T) {
		for _, path := range []string{"/panic", "/panic-error"} {
			status, body := get(t, path)
			if status != http.StatusInternalServerError {
				t.Errorf("GET %s: status %d, want 500", path, status)
			}
			if strings.Contains(body, "boom") || strings.Contains(body, "goroutine") {
				t.Errorf("GET %s: the panic leaked into the response: %q", path, body)
			}
		}
		if l := logs.String(); !strings.Contains(l, "panic in handler") || !strings.Contains(l, "boom in handler") || !strings.Contains(l, "recover_test.go") {
			t.Errorf("the panic was not logged with its value and stack:\n%s", l)
		}
	})

	t.Run("the server keeps serving after panics, also concurrent ones", func(t *testing.T) {
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				res, err := srv.Client().Get(srv.URL + "/panic")
				if err != nil {
					t.Error(err)
					return
				}
				res.Body.Close()
				if res.StatusCode != http.StatusInternalServerError {
					t.Errorf("status %d", res.StatusCode)
				}
			})
		}
		wg.Wait()
		if status, body := get(t, "/ok"); status != http.StatusOK || body != "still serving" {
			t.Errorf("GET /ok after panics: %d %q", status, body)
		}
	})

	t.Run("ErrAbortHandler still aborts the response", func(t *testing.T) {
		res, err := srv.Client().Get(srv.URL + "/abort")
		if err == nil {
			res.Body.Close()
			t.Errorf("GET /abort: got a response (%d), want an aborted connection", res.StatusCode)
		}
		if status, _ := get(t, "/ok"); status != http.StatusOK {
			t.Errorf("GET /ok after an abort: %d", status)
		}
	})
}
