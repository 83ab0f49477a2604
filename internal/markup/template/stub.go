package template

import (
	"context"
	"strings"

	"github.com/wikid/wikid/internal/wiki"
)

type Loader func(ctx context.Context, t wiki.Title) (text string, ok bool, err error)
type Page struct {
	Title    wiki.Title
	SiteName string
}
type Limits struct{ Depth, PostExpand, Nodes, Templates int }
type Result struct {
	Text      string
	Templates []wiki.Title
	Errors    int
}

func Has(src string) bool { return strings.Contains(src, "{{") }
func Expand(ctx context.Context, src string, p Page, load Loader, keep func(inner string) bool, lim Limits) (Result, error) {
	return Result{Text: src}, nil
}
