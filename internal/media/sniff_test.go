package media

import (
	"errors"
	"image"
	"slices"
	"strings"
	"testing"
)

// every lists each type Sniff reports, to test recognition apart from the
// allowed list.
var every = []string{
	mimePNG, mimeJPEG, mimeGIF, mimeWebP, mimeSVG, mimePDF, mimeText, mimeZIP, mimeDOCX, mimeXLSX, mimePPTX, mimeODT, mimeODS, mimeODP, mimeODG,
	mimeDOC, mimeXLS, mimePPT, mimeOLE, mimeGzip, mimeSevenZip, mimeTar, mimeMP4, mimeM4A, mimeMOV, mimeWebM, mimeMKV, mimeMP3, mimeOgg, mimeOGV, mimeFLAC, mimeWAV,
}

func TestSniffRecognisesTypesByContent(t *testing.T) {
	small := image.Rect(0, 0, 4, 4)
	tests := []struct {
		name string
		head []byte
		want string
	}{
		{"a PNG image", encodePNG(t, image.NewRGBA(small)), mimePNG},
		{"a JPEG image", encodeJPEG(t, image.NewRGBA(small)), mimeJPEG},
		{"a GIF image", encodeGIF(t, 4, 4, red), mimeGIF},
		{"a WebP image", solidWebP(4, 4, blue8), mimeWebP},
		{"an SVG image", []byte(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"/>`), mimeSVG},
		{"an SVG image after a declaration, a comment and a DOCTYPE", []byte("\xef\xbb\xbf<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- made by hand -->\n" +
			`<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">` + "\n<svg xmlns=\"http://www.w3.org/2000/svg\"></svg>"), mimeSVG},
		{"an SVG image in Latin-1", []byte("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><svg><title>caf\xe9</title></svg>"), mimeSVG},
		{"a PDF document", []byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj"), mimePDF},
		{"a text file", []byte("Hello, wiki.\nSecond line.\n"), mimeText},
		{"UTF-8 text with a byte-order mark", []byte("\xef\xbb\xbfcafé"), mimeText},
		{"text whose head ends in the middle of a character", []byte("caf\xc3"), mimeText},
		{"text that begins with a less-than sign", []byte("<3 to the wiki"), mimeText},
		{"a ZIP archive", zipOf(t, "", "a.txt", "b.txt"), mimeZIP},
		{"a Word document", zipOf(t, "", "[Content_Types].xml", "_rels/.rels", "word/document.xml"), mimeDOCX},
		{"an Excel spreadsheet", zipOf(t, "", "[Content_Types].xml", "_rels/.rels", "xl/workbook.xml"), mimeXLSX},
		{"a PowerPoint presentation", zipOf(t, "", "[Content_Types].xml", "_rels/.rels", "ppt/presentation.xml"), mimePPTX},
		{"a ZIP with a word folder but no content types", zipOf(t, "", "word/document.xml"), mimeZIP},
		{"an OpenDocument text", zipOf(t, mimeODT, "content.xml"), mimeODT},
		{"an OpenDocument spreadsheet", zipOf(t, mimeODS, "content.xml"), mimeODS},
		{"an OpenDocument presentation", zipOf(t, mimeODP, "content.xml"), mimeODP},
		{"an OpenDocument drawing", zipOf(t, mimeODG, "content.xml"), mimeODG},
		{"a Word document whose central directory is beyond the head", zipOf(t, "", "[Content_Types].xml", "word/document.xml", strings.Repeat("x", 8000))[:4096], mimeDOCX},
		{"an old Word document", oleFile("WordDocument"), mimeDOC},
		{"an old Excel spreadsheet", oleFile("Workbook"), mimeXLS},
		{"an old PowerPoint presentation", oleFile("PowerPoint Document"), mimePPT},
		{"another compound file", oleFile("Contents"), mimeOLE},
		{"a gzip archive", gzipOf("hello"), mimeGzip},
		{"a 7z archive", []byte("7z\xbc\xaf\x27\x1c\x00\x04"), mimeSevenZip},
		{"a tar archive", tarOf(t), mimeTar},
		{"an MP4 video", []byte("\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isomiso2"), mimeMP4},
		{"an MP4 audio file", []byte("\x00\x00\x00\x18ftypM4A \x00\x00\x02\x00"), mimeM4A},
		{"a WebM video", []byte("\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\xf7\x81\x01\x42\x82\x84webm"), mimeWebM},
		{"an MP3 file with an ID3 tag", []byte("ID3\x03\x00\x00\x00\x00\x00\x00"), mimeMP3},
		{"an MP3 file without a tag", []byte("\xff\xfb\x90\x64\x00"), mimeMP3},
		{"an Ogg audio file", []byte("OggS\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x01vorbis"), mimeOgg},
		{"a GIF followed by HTML (a polyglot)", append(encodeGIF(t, 2, 2, red), "<html><script>alert(1)</script>"...), mimeGIF},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is "+tt.want, func(t *testing.T) {
			got, err := Sniff(tt.head, every)
			if err != nil || got != tt.want {
				t.Errorf("Sniff = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestSniffRefusesHTMLAndUnknownContent(t *testing.T) {
	tests := []struct {
		name string
		head string
		say  string // in the message
	}{
		{"an HTML document", "<!DOCTYPE html>\n<html><head><title>x</title></head><body>hi</body></html>", "HTML cannot be uploaded"},
		{"HTML named like an image (content decides)", "<html><body><img src=x onerror=alert(1)></body></html>", "HTML document"},
		{"HTML after spaces", "  \r\n\t<script>alert(1)</script>", "HTML document"},
		{"HTML after a byte-order mark", "\xef\xbb\xbf<html>", "HTML document"},
		{"an iframe", "<IFRAME src=//evil.example>", "HTML document"},
		{"an img tag", "<img src=x onerror=alert(1)>", "HTML document"},
		{"HTML after a comment", "<!-- x --><html><body></body></html>", "HTML document"},
		{"an svg tag that is not XML", "<svg/onload=alert(1)>", "HTML document"},
		{"XHTML", `<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><body/></html>`, "XHTML document"},
		{"XML in the XHTML namespace", `<?xml version="1.0"?><x:body xmlns:x="http://www.w3.org/1999/xhtml"/>`, "XHTML document"},
		{"XML other than SVG", `<?xml version="1.0"?><note><to>you</to></note>`, `root element is "note"`},
		{"text with a NUL", "hello\x00world", "cannot tell what type"},
		{"invalid UTF-8", "caf\xe9 au lait", "cannot tell what type"},
		{"UTF-16 HTML", "\xff\xfe<\x00h\x00t\x00m\x00l\x00>\x00", "cannot tell what type"},
		{"an executable", "MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff", "cannot tell what type"},
		{"an empty file", "", "empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is refused", func(t *testing.T) {
			got, err := Sniff([]byte(tt.head), every)
			if !errors.Is(err, ErrType) || !strings.Contains(err.Error(), tt.say) {
				t.Errorf("Sniff = %q, %v; want ErrType saying %q", got, err, tt.say)
			}
		})
	}
}

func TestSniffRefusesTypesTheWikiDoesNotAccept(t *testing.T) {
	_, err := Sniff([]byte("7z\xbc\xaf\x27\x1c\x00\x04"), []string{mimePNG, mimeJPEG})
	if !errors.Is(err, ErrType) || !strings.Contains(err.Error(), mimeSevenZip) || !strings.Contains(err.Error(), "does not accept") {
		t.Errorf("err = %v; want ErrType naming %s", err, mimeSevenZip)
	}
	var me *Error
	if !errors.As(err, &me) || strings.HasPrefix(me.Msg, "media:") {
		t.Errorf("err = %#v; want an *Error whose Msg has no package prefix", err)
	}
	if got, err := Sniff([]byte("GIF89a"), []string{" IMAGE/GIF "}); err != nil || got != mimeGIF {
		t.Errorf("allowed types compare case-insensitively: got %q, %v", got, err)
	}
	for _, m := range DefaultAllowed {
		if !slices.Contains(every, m) || Extensions(m) == nil {
			t.Errorf("DefaultAllowed has %q, which Sniff does not report or has no extensions", m)
		}
	}
}

func TestCheckNameWantsTheTypesExtension(t *testing.T) {
	tests := []struct {
		name, mime string
		want       string // "" when accepted
	}{
		{"Photo.jpg", mimeJPEG, ""},
		{"Photo.JPEG", mimeJPEG, ""},
		{"Notes.txt", mimeText, ""},
		{"Data.csv", mimeText, ""},
		{"Backup.tar.gz", mimeGzip, ""},
		{"X.png", mimeJPEG, `the file is a JPEG image, but its name ends in ".png": name it "X.jpg"`},
		{"Page.html", mimeText, `the file is a text file, but its name ends in ".html": name it "Page.txt"`},
		{"Report", mimePDF, `the file is a PDF document, but its name has no extension: name it "Report.pdf"`},
		{"Report.pdf", "application/x-unknown", "cannot be uploaded"},
	}
	for _, tt := range tests {
		t.Run(tt.name+" as "+tt.mime, func(t *testing.T) {
			err := CheckName(tt.name, tt.mime)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("CheckName = %v; want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("CheckName = %v; want %q", err, tt.want)
			}
		})
	}
}
