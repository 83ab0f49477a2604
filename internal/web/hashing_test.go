package web_test

// Password hashing on request paths is bounded: account creation checks
// the name before hashing and is limited per address, and every hash
// (login, account creation) holds one of a few slots; a request that gets
// none in time is answered 503, never queued without bound.

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"net/url"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/session"
	"github.com/wikid/wikid/internal/web"
	"github.com/wikid/wikid/internal/wiki"
)

// hashCounter installs a gate on w that counts the hashes it runs and the
// most that ran at once; hold, when set, runs inside each slot.
type hashCounter struct {
	total, peak atomic.Int64
}

func countHashes(w *loginWiki, g *session.Gate, hold func()) *hashCounter {
	hc := &hashCounter{}
	g.Observe(func(running int) {
		hc.total.Add(1)
		for {
			p := hc.peak.Load()
			if int64(running) <= p || hc.peak.CompareAndSwap(p, int64(running)) {
				break
			}
		}
		if hold != nil {
			hold()
		}
	})
	web.SetHashGate(w.App.Web, g)
	return hc
}

// post sends a form from a fresh browser (so that goroutines share no
// cookie jar) with extra header lines, and returns the answer.
func post(t *testing.T, w *loginWiki, path string, form url.Values, header ...string) *apptest.Response {
	c := w.Client(t)
	form.Set("csrf", w.csrf)
	r := c.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for _, h := range header {
		k, v, _ := strings.Cut(h, ":")
		r.Header.Add(k, strings.TrimSpace(v))
	}
	return c.Do(r)
}

func register(t *testing.T, w *loginWiki, name string, header ...string) *apptest.Response {
	return post(t, w, "/wiki/Special:CreateAccount",
		url.Values{"username": {name}, "password": {"a-good-password"}, "retype": {"a-good-password"}}, header...)
}

func loginAs(t *testing.T, w *loginWiki, name, password string, header ...string) *apptest.Response {
	return post(t, w, "/wiki/Special:UserLogin", url.Values{"username": {name}, "password": {password}}, header...)
}

// A name that is taken costs no hash: 32 parallel attempts at it are all
// told so, and no password is hashed.
func TestRegisterTakenNameHashesNothing(t *testing.T) {
	t.Parallel()
	w := newLoginWiki(t, behindLoopbackProxy)
	w.CreateUser(t, "Existing user", wiki.GroupUser)
	hc := countHashes(w, session.DefaultGate(), nil)
	var wg sync.WaitGroup
	res := make([]*apptest.Response, 32)
	for i := range res {
		wg.Go(func() {
			res[i] = register(t, w, []string{"Existing user", "existing user", "Existing_user"}[i%3], from("192.0.2.1"))
		})
	}
	wg.Wait()
	for i, r := range res {
		if r.StatusCode != http.StatusBadRequest || !strings.Contains(r.Body, "is already taken") {
			t.Errorf("registration %d of a taken name: %d, want 400 saying it is taken", i+1, r.StatusCode)
		}
	}
	if n := hc.total.Load(); n != 0 {
		t.Errorf("%d passwords were hashed for a taken name", n)
	}
	// Nor did they count against the address.
	mustStatus(t, register(t, w, "Fresh user", from("192.0.2.1")), http.StatusSeeOther)
}

// Account creations are limited per address: a few at once, then growing
// waits, each refusal a 429 with Retry-After that says what to do.
func TestRegistrationThrottle(t *testing.T) {
	t.Parallel()
	w := newLoginWiki(t, behindLoopbackProxy)
	p := session.RegistrationPolicy()
	for i := range p.FreePerAddress {
		mustStatus(t, register(t, w, fmt.Sprint("Signup ", i), from("192.0.2.10")), http.StatusSeeOther)
	}
	res := register(t, w, "Signup over", from("192.0.2.10"))
	mustStatus(t, res, http.StatusTooManyRequests)
	mustContain(t, res, "Too many accounts were created from your address", "Wait 5 minutes")
	if ra := retryAfter(t, res); ra != p.FirstWait {
		t.Errorf("Retry-After %v, want %v", ra, p.FirstWait)
	}
	if cc := res.Header.Get("Cache-Control"); cc != "no-store" || len(res.Header.Values("Set-Cookie")) > 0 {
		t.Errorf("429: Cache-Control %q, Set-Cookie %q", cc, res.Header.Values("Set-Cookie"))
	}
	if _, err := w.App.Store.FindUserByName(t.Context(), "Signup over"); err == nil {
		t.Error("the refused account was created")
	}
	// Another address is not slowed down.
	mustStatus(t, register(t, w, "Signup elsewhere", from("192.0.2.11")), http.StatusSeeOther)
	// After the wait one more, then a longer wait.
	w.clock.Add(p.FirstWait)
	mustStatus(t, register(t, w, "Signup over", from("192.0.2.10")), http.StatusSeeOther)
	res = register(t, w, "Signup later", from("192.0.2.10"))
	mustStatus(t, res, http.StatusTooManyRequests)
	if ra := retryAfter(t, res); ra != 2*p.FirstWait {
		t.Errorf("Retry-After %v, want %v", ra, 2*p.FirstWait)
	}
}

// With every hashing slot held, logins and registrations are answered 503
// with Retry-After after a short wait; they are not counted by the
// throttles (nothing was checked), and never more hashes run than slots.
func TestPasswordHashingBounded(t *testing.T) {
	t.Parallel()
	w := newLoginWiki(t, behindLoopbackProxy)
	w.AllowServerErrors() // the 503s
	_, pw := w.CreateUser(t, "Bounded user", wiki.GroupUser)
	release := make(chan struct{})
	var holding sync.WaitGroup
	holding.Add(2)
	var held atomic.Int64
	const slots = 2
	hc := countHashes(w, session.NewGate(slots, 300*time.Millisecond), func() {
		if held.Add(1) <= slots {
			holding.Done()
			<-release
		}
	})

	// Two logins take both slots and keep them.
	var holders sync.WaitGroup
	holderRes := make([]*apptest.Response, slots)
	for i := range holderRes {
		holders.Go(func() { holderRes[i] = loginAs(t, w, "Bounded user", pw, from("192.0.2.9")) })
	}
	holding.Wait()

	// Everyone else is refused: 24 logins and account creations at once,
	// then, one after the other, more wrong passwords from one address
	// and more account creations from another than their throttles let
	// through.
	var wg sync.WaitGroup
	refused := make([]*apptest.Response, 24)
	for i := range refused {
		wg.Go(func() {
			addr := from(fmt.Sprintf("198.18.2.%d", i+1))
			if i%2 == 0 {
				refused[i] = loginAs(t, w, "Bounded user", "wrong-password", addr)
			} else {
				refused[i] = register(t, w, "Bounded new "+strconv.Itoa(i), addr)
			}
		})
	}
	wg.Wait()
	for range 8 {
		refused = append(refused, loginAs(t, w, "Bounded user", "wrong-password", from("192.0.2.5")))
	}
	for i := range 7 {
		refused = append(refused, register(t, w, "Bounded next "+strconv.Itoa(i), from("192.0.2.6")))
	}
	for i, res := range refused {
		if res.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("request %d with every slot held: %d, want 503", i+1, res.StatusCode)
			continue
		}
		if res.Header.Get("Retry-After") != "5" || res.Header.Get("Cache-Control") != "no-store" || len(res.Header.Values("Set-Cookie")) > 0 {
			t.Errorf("503: Retry-After %q, Cache-Control %q, Set-Cookie %q", res.Header.Get("Retry-After"),
				res.Header.Get("Cache-Control"), res.Header.Values("Set-Cookie"))
		}
		if !strings.Contains(res.Body, "The server is busy checking other logins. Try again in a few seconds.") {
			t.Errorf("request %d: the 503 does not say why", i+1)
		}
	}
	close(release)
	holders.Wait()
	for i, res := range holderRes {
		if res.StatusCode != http.StatusSeeOther {
			t.Errorf("holder %d: %d, want 303", i+1, res.StatusCode)
		}
	}
	if p := hc.peak.Load(); p > slots {
		t.Errorf("%d hashes ran at once, over the %d slots", p, slots)
	}
	if n := hc.total.Load(); n != slots {
		t.Errorf("%d hashes ran; only the %d holders should have", n, slots)
	}
	// The refused attempts did not count: more than the free failures were
	// refused at 192.0.2.5, and more than the free accounts at 192.0.2.6,
	// and yet the next ones pass.
	mustStatus(t, loginAs(t, w, "Bounded user", pw, from("192.0.2.5")), http.StatusSeeOther)
	mustStatus(t, register(t, w, "Bounded after", from("192.0.2.6")), http.StatusSeeOther)
}

// Under a burst of logins and registrations from many addresses, with the
// default gate, no more hashes run at once than its slots (two per CPU):
// memory is bounded by the slots, not by the requests.
func TestPasswordHashingBurst(t *testing.T) {
	t.Parallel()
	w := newLoginWiki(t, behindLoopbackProxy)
	w.AllowServerErrors() // 503s, if the burst outlasts the wait
	_, pw := w.CreateUser(t, "Burst user", wiki.GroupUser)
	g := session.DefaultGate()
	hc := countHashes(w, g, nil)
	var wg sync.WaitGroup
	statuses := make([]int, 64)
	for i := range statuses {
		wg.Go(func() {
			addr := from(fmt.Sprintf("198.18.1.%d", i+1))
			var res *apptest.Response
			switch i % 3 {
			case 0:
				res = register(t, w, "Burst new "+strconv.Itoa(i), addr)
			case 1:
				res = loginAs(t, w, "Burst user", pw, addr)
			default:
				res = loginAs(t, w, "Nobody "+strconv.Itoa(i), "wrong-password", addr)
			}
			statuses[i] = res.StatusCode
		})
	}
	wg.Wait()
	counts := map[int]int{}
	for _, st := range statuses {
		counts[st]++
		if st != http.StatusSeeOther && st != http.StatusUnauthorized && st != http.StatusServiceUnavailable {
			t.Errorf("status %d in the burst", st)
		}
	}
	if p := hc.peak.Load(); p > int64(g.Slots()) || g.Slots() != 2*runtime.GOMAXPROCS(0) {
		t.Errorf("%d hashes at once with %d slots (GOMAXPROCS %d)", p, g.Slots(), runtime.GOMAXPROCS(0))
	}
	t.Logf("64 parallel logins and registrations: %v; %d hashes, at most %d at once (%d slots)", counts, hc.total.Load(), hc.peak.Load(), g.Slots())
}

// Every argon2 hash in this package goes through the gate: auth's hashing
// functions are called only from hashing.go's wrappers.
func TestPasswordHashingOnlyThroughTheGate(t *testing.T) {
	allowed := map[string]bool{"hashPassword": true, "checkPassword": true, "dummyHash": true}
	files, _ := filepath.Glob("*.go")
	fset := token.NewFileSet()
	found := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range af.Decls {
			owner := ""
			switch d := decl.(type) {
			case *ast.FuncDecl:
				owner = d.Name.Name
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					if vs, ok := spec.(*ast.ValueSpec); ok && len(vs.Names) > 0 {
						owner = vs.Names[0].Name
					}
				}
			}
			ast.Inspect(decl, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "auth" && (sel.Sel.Name == "HashPassword" || sel.Sel.Name == "CheckPassword") {
					found++
					if f != "hashing.go" || !allowed[owner] {
						t.Errorf("%s: auth.%s in %s, outside the hashing gate (hashing.go)", fset.Position(sel.Pos()), sel.Sel.Name, owner)
					}
				}
				return true
			})
		}
	}
	if found == 0 {
		t.Fatal("no call of auth.HashPassword or auth.CheckPassword found: the source was not read")
	}
}
