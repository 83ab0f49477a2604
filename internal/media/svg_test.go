package media

import (
	"errors"
	"strings"
	"testing"
)

const svgNS = `xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"`

func TestProbeReadsTheSizeOfCleanSVGs(t *testing.T) {
	tests := []struct {
		name string
		svg  string
		want Info
	}{
		{"an SVG with a viewBox", `<svg ` + svgNS + ` viewBox="0 0 300 150"><rect width="10" height="10"/></svg>`, Info{300, 150, 1}},
		{"an SVG with a comma-separated viewBox", `<svg ` + svgNS + ` viewBox="-5,-5,40.4,20.2"/>`, Info{40, 20, 1}},
		{"an SVG with a width and a height", `<svg ` + svgNS + ` width="120" height="80px" viewBox="0 0 1 1"/>`, Info{120, 80, 1}},
		{"an SVG with a width and a viewBox", `<svg ` + svgNS + ` width="200" viewBox="0 0 100 50"/>`, Info{200, 100, 1}},
		{"an SVG with a height in inches and a viewBox", `<svg ` + svgNS + ` height="1in" viewBox="0 0 100 50"/>`, Info{192, 96, 1}},
		{"an SVG sized in percent with a viewBox", `<svg ` + svgNS + ` width="100%" height="100%" viewBox="0 0 64 48"/>`, Info{64, 48, 1}},
		{"an SVG that states no size", `<svg ` + svgNS + `><circle r="5"/></svg>`, Info{512, 512, 1}},
		{"an SVG with a declaration, a comment, a DOCTYPE and a style", `<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<!-- Created with Inkscape -->
<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">
<svg ` + svgNS + ` width="10" height="10">
 <defs><linearGradient id="g"/><style>.a { fill: url(#g); stroke: #000 }</style></defs>
 <rect class="a" fill="url('#g')" width="10" height="10"/>
 <use xlink:href="#g"/>
 <image href="data:image/png;base64,iVBORw0KGgo=" width="1" height="1"/>
 <a href="#top"><text>top</text></a>
</svg>
<!-- end -->`, Info{10, 10, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is accepted", func(t *testing.T) {
			got, err := Probe([]byte(tt.svg), mimeSVG)
			if err != nil || got != tt.want {
				t.Errorf("Probe = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestProbeRefusesUnsafeSVGs(t *testing.T) {
	tests := []struct {
		name string
		svg  string
	}{
		{"a script element", `<svg ` + svgNS + `><script>alert(1)</script></svg>`},
		{"a script element in capitals", `<svg ` + svgNS + `><SCRIPT>alert(1)</SCRIPT></svg>`},
		{"an onload attribute", `<svg ` + svgNS + ` onload="alert(1)"/>`},
		{"an onclick attribute deep inside", `<svg ` + svgNS + `><g><g><rect onClick="alert(1)"/></g></g></svg>`},
		{"a foreignObject", `<svg ` + svgNS + `><foreignObject><p>hi</p></foreignObject></svg>`},
		{"an HTML element", `<svg ` + svgNS + `><h:iframe xmlns:h="http://www.w3.org/1999/xhtml" src="x"/></svg>`},
		{"an external xlink:href", `<svg ` + svgNS + `><image xlink:href="https://evil.example/x.png"/></svg>`},
		{"an external href", `<svg ` + svgNS + `><use href="other.svg#icon"/></svg>`},
		{"a link to a site", `<svg ` + svgNS + `><a href="https://example.org/"><text>x</text></a></svg>`},
		{"an SVG embedded as data", `<svg ` + svgNS + `><image href="data:image/svg+xml;base64,PHN2Zz4="/></svg>`},
		{"a javascript: URL", `<svg ` + svgNS + `><a href="javascript:alert(1)"><text>x</text></a></svg>`},
		{"a javascript: URL hidden by a tab entity", `<svg ` + svgNS + `><a xlink:href="java&#x09;script:alert(1)"><text>x</text></a></svg>`},
		{"javascript: in an animation value", `<svg ` + svgNS + `><a><set attributeName="href" to="javascript:alert(1)"/></a></svg>`},
		{"an animation of a link", `<svg ` + svgNS + `><a><animate attributeName="xlink:href" values="#a;#b"/></a></svg>`},
		{"an entity declaration", `<!DOCTYPE svg [<!ENTITY a "aaaaaaaa">]><svg ` + svgNS + `><text>&a;</text></svg>`},
		{"a style sheet import", `<svg ` + svgNS + `><style>@import url(https://evil.example/a.css);</style></svg>`},
		{"an external url() in a style attribute", `<svg ` + svgNS + `><rect style="fill: url(https://evil.example/p.svg#p)"/></svg>`},
		{"an external url() in a fill", `<svg ` + svgNS + `><rect fill="url(https://evil.example/p.svg#p)"/></svg>`},
		{"an external style sheet instruction", `<?xml-stylesheet href="https://evil.example/a.css"?><svg ` + svgNS + `/>`},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is refused", func(t *testing.T) {
			_, err := Probe([]byte(tt.svg), mimeSVG)
			if !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), "this SVG contains script or external references and cannot be uploaded") {
				t.Errorf("Probe: %v; want ErrUnsafe", err)
			}
		})
	}
}

func TestProbeRefusesMalformedSVGs(t *testing.T) {
	tests := []struct {
		name string
		svg  string
	}{
		{"an unclosed root", `<svg ` + svgNS + `><g></g>`},
		{"mismatched tags", `<svg ` + svgNS + `><g></h></svg>`},
		{"a root other than svg", `<html/>`},
		{"an element after the root", `<svg ` + svgNS + `/><script>alert(1)</script>`},
		{"an HTML entity", `<svg ` + svgNS + `><text>&nbsp;</text></svg>`},
		{"an unknown encoding", `<?xml version="1.0" encoding="EBCDIC"?><svg/>`},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is refused", func(t *testing.T) {
			_, err := Probe([]byte(tt.svg), mimeSVG)
			if !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrUnsafe) {
				t.Errorf("Probe: %v; want ErrInvalid", err)
			}
		})
	}
}
