package wikitext

import (
	"github.com/wikid/wikid/internal/render"
	"github.com/wikid/wikid/internal/wiki"
)

func renderOpts(page wiki.Title) render.Options { return render.Options{EditPage: page} }
