package app_test

import (
	"testing"
	"time"

	"github.com/wikid/wikid/internal/config"
	"github.com/wikid/wikid/internal/render"
	"github.com/wikid/wikid/internal/render/pathological"
)

// TestRenderDefaultsAgree: the configuration's defaults are the ones the
// renderer and its tests are built for (config does not import render).
func TestRenderDefaultsAgree(t *testing.T) {
	c := config.Default()
	if time.Duration(c.RenderTimeout) != render.DefaultTimeout {
		t.Errorf("render_timeout default %v, render.DefaultTimeout %v", time.Duration(c.RenderTimeout), render.DefaultTimeout)
	}
	if c.MaxPageBytes != pathological.PageLimit {
		t.Errorf("max_page_bytes default %d, the size the renderer is tested at %d", c.MaxPageBytes, pathological.PageLimit)
	}
}
