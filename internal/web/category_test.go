package web_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/wiki"
)

// listed returns the titles a category page links to in its listings (its
// subcategories' and its pages', in order) and the letter headings.
func listed(t *testing.T, res *apptest.Response) (titles, headings []string) {
	t.Helper()
	_, list, ok := strings.Cut(res.Body, `<div class="category-groups">`)
	if !ok {
		return nil, nil
	}
	list, _, _ = strings.Cut(list, `class="catlinks"`)
	for _, m := range regexp.MustCompile(`<h3><bdi>([^<]*)</bdi>( <span class="muted">cont\.</span>)?</h3>|<li><a href="[^"]*"><bdi>([^<]*)</bdi>`).FindAllStringSubmatch(list, -1) {
		switch {
		case m[3] != "":
			titles = append(titles, html.UnescapeString(m[3]))
		case m[2] != "":
			headings = append(headings, html.UnescapeString(m[1])+" cont.")
		default:
			headings = append(headings, html.UnescapeString(m[1]))
		}
	}
	return titles, headings
}

func TestCategorySortKeys(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, pw := w.CreateUser(t, "Sorter", wiki.GroupUser)
	u := w.Login(t, "Sorter", pw)
	anon := w.Client(t)

	t.Run("members are listed by sort key under the first letters of their keys", func(t *testing.T) {
		u.Edit("Template:Person", "<includeonly>{{DEFAULTSORT:{{{last}}}, {{{first}}}}}[[Category:People]]</includeonly>")
		u.Edit("Ada Lovelace", "{{Person|first=Ada|last=Lovelace}} Mathematician.")
		u.Edit("Alan Turing", "[[Category:People|Turing, Alan]]")
		u.Edit("Grace Hopper", "{{DEFAULTSORT:Hopper, Grace}}\n\n[[Category:People]]")
		u.Edit("People index", "[[Category:People| ]]") // the idiom that lists a page first
		u.Edit("Help:Zed", "[[Category:People]]")       // its name without the namespace
		u.Edit("Category:Mathematicians", "[[Category:People|Math]]")
		u.Edit("Category:Computer scientists", "[[Category:People]]")
		res := anon.Get("/wiki/Category:People")
		mustStatus(t, res, http.StatusOK)
		titles, headings := listed(t, res)
		want := "Computer scientists,Mathematicians,People index,Grace Hopper,Ada Lovelace,Alan Turing,Help:Zed"
		if strings.Join(titles, ",") != want {
			t.Errorf("listed %q,\nwant %q", strings.Join(titles, ","), want)
		}
		if got := strings.Join(headings, ","); got != "C,M,\u00a0,H,L,T,Z" {
			t.Errorf("headings %q", got)
		}
		// DEFAULTSORT writes nothing on the page.
		mustNotContain(t, anon.Get("/wiki/Grace_Hopper"), "DEFAULTSORT", "Hopper, Grace")
	})

	t.Run("an edit that changes only a sort key re-orders the cached category page", func(t *testing.T) {
		u.Edit("Apple", "A fruit. [[Category:Orchard|Zulu]]")
		u.Edit("Banana", "A fruit. [[Category:Orchard]]")
		r1, r2 := anon.Get("/wiki/Category:Orchard"), anon.Get("/wiki/Category:Orchard")
		if xcache(r2) != "HIT" {
			t.Fatalf("the category page is not cached: X-Cache %q then %q", xcache(r1), xcache(r2))
		}
		if titles, _ := listed(t, r2); strings.Join(titles, ",") != "Banana,Apple" {
			t.Fatalf("listed %q before the edit", titles)
		}
		u.Edit("Apple", "A fruit. [[Category:Orchard|Aardvark]]")
		res := anon.Get("/wiki/Category:Orchard")
		if titles, headings := listed(t, res); strings.Join(titles, ",") != "Apple,Banana" || strings.Join(headings, ",") != "A,B" {
			t.Errorf("after the edit: listed %q under %q (X-Cache %q)", titles, headings, xcache(res))
		}
		// Through a template: its DEFAULTSORT reaches the page by the
		// links job, which purges the category page too.
		u.Edit("Template:Sortas", "{{DEFAULTSORT:{{{1}}}}}")
		u.Edit("Cherry", "A fruit. {{Sortas|Able}} [[Category:Orchard]]")
		if titles, _ := listed(t, anon.Get("/wiki/Category:Orchard")); strings.Join(titles, ",") != "Apple,Cherry,Banana" {
			t.Fatalf("listed %q", titles)
		}
		mustStatus(t, anon.Get("/wiki/Category:Orchard"), http.StatusOK)
		u.Edit("Template:Sortas", "{{DEFAULTSORT:Zz{{{1}}}}}")
		w.Settle(t)
		res = anon.Get("/wiki/Category:Orchard")
		if titles, _ := listed(t, res); strings.Join(titles, ",") != "Apple,Banana,Cherry" {
			t.Errorf("after the template's edit: listed %q (X-Cache %q)", titles, xcache(res))
		}
	})

	t.Run("pages go on by sort key and title, a group continued says so", func(t *testing.T) {
		// 250 members of one key but 10 of another, imported at once.
		pages := func(yield func(engine.ImportPage, error) bool) {
			for i := range 260 {
				key := "Middle"
				if i >= 250 {
					key = "Later"
				}
				p := engine.ImportPage{Title: wiki.Title(fmt.Sprintf("Member %03d", i)), Text: fmt.Sprintf("[[Category:Big|%s]]", key)}
				if !yield(p, nil) {
					return
				}
			}
		}
		if _, err := w.App.Engine.Import(context.Background(), pages, engine.Editor{UserName: "Sorter"}, "import", nil); err != nil {
			t.Fatal(err)
		}
		w.Settle(t)
		first := anon.Get("/wiki/Category:Big")
		titles, headings := listed(t, first)
		if len(titles) != 200 || titles[0] != "Member 250" || titles[10] != "Member 000" || strings.Join(headings, ",") != "L,M" {
			t.Fatalf("first page: %d listed, from %q; headings %q", len(titles), titles[:1], headings)
		}
		next := regexp.MustCompile(`<a href="([^"]*)">Next page →</a>`).FindStringSubmatch(first.Body)
		if next == nil {
			t.Fatal("the first page has no link to the next")
		}
		link := html.UnescapeString(next[1])
		if want := "/wiki/Category:Big?pagefrom=MIDDLE%0AMember_190"; link != want {
			t.Fatalf("next page link %q, want %q", link, want)
		}
		second := anon.Get(link)
		mustStatus(t, second, http.StatusOK)
		if xcache(second) == "" {
			t.Errorf("the next page is not cacheable: X-Cache %q", xcache(second))
		}
		titles, headings = listed(t, second)
		if len(titles) != 60 || titles[0] != "Member 190" || titles[59] != "Member 249" || strings.Join(headings, ",") != "M cont." {
			t.Fatalf("second page: %d listed, %q…%q; headings %q", len(titles), titles[0], titles[len(titles)-1], headings)
		}
		mustNotContain(t, second, "Next page", "<h2>Subcategories</h2>")
		// A page that starts with its group is no continuation.
		titles, headings = listed(t, anon.Get("/wiki/Category:Big?pagefrom=MIDDLE"))
		if len(titles) != 200 || titles[0] != "Member 000" || strings.Join(headings, ",") != "M" {
			t.Errorf("from MIDDLE: %d listed from %q; headings %q", len(titles), titles[0], headings)
		}
	})

	t.Run("the cursor is canonical: other spellings redirect, bad ones are refused", func(t *testing.T) {
		for from, to := range map[string]string{
			"pagefrom=middle%0AMember%20190": "pagefrom=MIDDLE%0AMember_190",
			"from=m":                         "pagefrom=M",
			"pagefrom=%C3%A9lan":             "pagefrom=%C3%89LAN",
			"pagefrom=B&redirect=no":         "pagefrom=B&redirect=no",
			"pagefrom=b&utm_source=x":        "pagefrom=B",
		} {
			res := anon.Get("/wiki/Category:Big?" + from)
			if from == to {
				mustStatus(t, res, http.StatusOK)
				continue
			}
			mustRedirect(t, res, http.StatusMovedPermanently, "/wiki/Category:Big?"+to)
		}
		for _, bad := range []string{"pagefrom=A%0AB%0AC", "pagefrom=A%01", "pagefrom=A%0A" + strings.Repeat("x", 300), "pagefrom=A&from=B"} {
			res := anon.Get("/wiki/Category:Big?" + bad)
			mustStatus(t, res, http.StatusBadRequest)
			mustContain(t, res, "pagefrom")
		}
	})
}

// A category page is cached like any page; deleting, moving or restoring
// one of its members changes its listing (the member goes, its new title
// is listed, it comes back), also when the member's sort key, given by its
// link, stays the same: the cached listing must not keep the old state.
func TestCategoryListingFollowsDeleteMoveUndelete(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, pw := w.CreateUser(t, "Shelver", wiki.GroupUser)
	u := w.Login(t, "Shelver", pw)
	anon := w.Client(t)
	admin := engine.Editor{UserName: "Shelver", Group: wiki.GroupAdmin}
	ctx := context.Background()
	u.Edit("Plum", "A fruit. [[Category:Shelf|P]]")
	u.Edit("Quince", "A fruit. [[Category:Shelf|Q]]")
	u.Edit("Rowan", "A tree. [[Category:Shelf|R]]")
	w.Settle(t)

	check := func(when, want string) {
		t.Helper()
		anon.Get("/wiki/Category:Shelf") // the first view after a purge fills the cache
		res := anon.Get("/wiki/Category:Shelf")
		mustStatus(t, res, http.StatusOK)
		if titles, _ := listed(t, res); strings.Join(titles, ",") != want {
			t.Errorf("%s: listed %q, want %q (X-Cache %q)", when, strings.Join(titles, ","), want, xcache(res))
		}
	}
	check("before", "Plum,Quince,Rowan")
	if err := w.App.Engine.Delete(ctx, "Plum", "test", admin); err != nil {
		t.Fatal(err)
	}
	w.Settle(t)
	check("after Plum's deletion", "Quince,Rowan")
	if _, err := w.App.Engine.Move(ctx, "Quince", "Quince tree", "test", false, admin); err != nil {
		t.Fatal(err)
	}
	w.Settle(t)
	check("after Quince's move", "Quince tree,Rowan")
	if _, err := w.App.Engine.Undelete(ctx, "Plum", "test", admin); err != nil {
		t.Fatal(err)
	}
	w.Settle(t)
	check("after Plum's undeletion", "Plum,Quince tree,Rowan")
}
