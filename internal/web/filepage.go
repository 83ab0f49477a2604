package web

import (
	"errors"
	"net/http"
	"slices"
	"strconv"

	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/httpx"
	"github.com/wikid/wikid/internal/wiki"
)

// A File: page shows, around its description, the file itself (a
// preview of an image, a link to anything else), its versions and the
// pages that show it. All of it is part of the cached page: an upload
// saves the page (a null revision), which purges it, and the pages that
// start or stop showing the file purge it too (engine.Save).

// previewWidth bounds the preview of an image on its file page.
const previewWidth = 800

// maxFileUsage is how many of the pages showing a file its page lists.
const maxFileUsage = 100

// fileView is what a File: page shows of its file.
type fileView struct {
	Current    wiki.FileVersion
	URL        string     // the current version's bytes
	Dimensions string     // its size, for people
	Preview    *imageView // nil when the file is not an image that can be shown
	Problem    string     // why there is no preview of an image
	Versions   []fileVersionRow
	Usage      []wiki.Page
	More       bool // more pages than Usage show the file
	Deleted    bool
}

// imageView is an img element's attributes.
type imageView struct {
	Src, Srcset   string
	Width, Height int
}

// fileVersionRow is one line of a file's history.
type fileVersionRow struct {
	wiki.FileVersion
	Current bool
	URL     string // its bytes
	Thumb   *imageView
	Size    string // for people
}

// Dimensions writes a version's size in pixels and bytes.
func (r fileVersionRow) Dimensions() string {
	if r.Width > 0 {
		return strconv.Itoa(r.Width) + " × " + strconv.Itoa(r.Height) + " (" + r.Size + ")"
	}
	return r.Size
}

// imageAt is the img of version v at most width pixels wide (the original
// when it is no wider), with a 2× source for dense screens.
func imageAt(v wiki.FileVersion, width int) *imageView {
	if !v.IsImage() || v.Width <= 0 {
		return nil
	}
	if v.Width <= width || !v.Thumbable() {
		if !v.Thumbable() && v.MIME != "image/svg+xml" {
			return nil
		}
		w := min(v.Width, width)
		return &imageView{Src: wiki.OriginalURL(v.SHA256, v.Name()), Width: w, Height: scaled(v, w)}
	}
	img := &imageView{Src: wiki.ThumbURL(v.SHA256, v.Name(), width), Width: width, Height: scaled(v, width)}
	if w2 := 2 * width; w2 < v.Width {
		img.Srcset = wiki.ThumbURL(v.SHA256, v.Name(), w2) + " 2x"
	} else {
		img.Srcset = wiki.OriginalURL(v.SHA256, v.Name()) + " 2x"
	}
	return img
}

// scaled is v's height at width w.
func scaled(v wiki.FileVersion, w int) int {
	if v.Width == 0 {
		return 0
	}
	return max(1, (v.Height*w+v.Width/2)/v.Width)
}

// fillFile adds the file of File: page d.Title to d: its visible versions
// only, the newest current. The page is cached and shared, so versions
// hidden by a deletion (the page created again since) are left out for
// everyone, administrators too; a page with none visible shows no file.
func (s *Server) fillFile(r *http.Request, d *viewData) error {
	ctx := r.Context()
	all, err := s.store.FileVersions(ctx, d.Title)
	if err != nil {
		return err
	}
	versions := slices.DeleteFunc(all, func(v wiki.FileVersion) bool { return v.Hidden })
	if len(versions) == 0 {
		return nil
	}
	f := &fileView{Current: versions[0], URL: wiki.OriginalURL(versions[0].SHA256, versions[0].Name())}
	f.Preview = imageAt(f.Current, previewWidth)
	if f.Current.IsImage() && f.Preview == nil {
		f.Problem = "No preview: this image is " + strconv.Itoa(f.Current.Width) + " × " + strconv.Itoa(f.Current.Height) +
			" pixels, more than the " + strconv.Itoa(wiki.MaxImagePixels/1_000_000) + " megapixels the wiki scales. Download the original to see it."
	}
	for i, v := range versions {
		row := fileVersionRow{FileVersion: v, Current: i == 0, URL: wiki.OriginalURL(v.SHA256, v.Name()), Size: wiki.ByteSize(v.Size)}
		if v.Thumbable() && v.Width > 120 {
			row.Thumb = &imageView{Src: wiki.ThumbURL(v.SHA256, v.Name(), 120), Width: 120, Height: scaled(v, 120)}
		} else if v.IsImage() && (v.Thumbable() || v.MIME == "image/svg+xml") {
			row.Thumb = &imageView{Src: row.URL, Width: min(v.Width, 120), Height: scaled(v, min(v.Width, 120))}
		}
		f.Versions = append(f.Versions, row)
	}
	usage, err := s.store.FileUsage(ctx, d.Title, wiki.ListQuery{Limit: maxFileUsage + 1})
	if err != nil {
		return err
	}
	if len(usage) > maxFileUsage {
		usage, f.More = usage[:maxFileUsage], true
	}
	f.Usage = usage
	f.Dimensions = f.Versions[0].Dimensions()
	d.File = f
	return nil
}

// oldimageParam names the version a file revert makes current again, by
// its SHA-256 (MediaWiki names it by its archive name).
var oldimageParam = httpx.Param{Name: "oldimage", Kind: httpx.Text, Max: 64}

// fileRevertable returns the version of file t that r's revert names:
// administrators only.
func (s *Server) fileRevertable(r *http.Request, t wiki.Title) (wiki.FileVersion, error) {
	if err := s.requireAdmin(r); err != nil {
		return wiki.FileVersion{}, err
	}
	sha := r.FormValue("oldimage")
	if !shaPattern.MatchString(sha) {
		return wiki.FileVersion{}, wiki.Errorf(wiki.KindInvalid, "say which version to revert to: the Revert file tab lists them")
	}
	v, deleted, err := s.store.FindFileVersion(r.Context(), t, sha)
	if errors.Is(err, wiki.ErrNotFound) || deleted {
		return wiki.FileVersion{}, wiki.Errorf(wiki.KindNotFound, "%s has no such version", t)
	}
	return v, err
}

// fileRevertData is the revert form: the file's versions, each older one
// with a button that makes it current again.
type fileRevertData struct {
	Title    wiki.Title
	Versions []fileVersionRow
	Error    string
}

// fileRevertForm lists the versions of file t to revert to, or asks to
// confirm the revert to the one oldimage names.
func (s *Server) fileRevertForm(w http.ResponseWriter, r *http.Request, t wiki.Title) error {
	if r.FormValue("oldimage") != "" {
		v, err := s.fileRevertable(r, t)
		if err != nil {
			return err
		}
		return s.writeForm(w, r, t, "filerevert", http.StatusOK, formData{
			Heading: "Revert " + t.Name(),
			Intro:   "Make the version of " + v.Time.UTC().Format("15:04, 2 January 2006") + " by " + v.UserName + " the current version of " + string(t) + " again. Every page showing the file shows that version.",
			Action:  t.URL() + "?action=filerevert&oldimage=" + v.SHA256, Submit: "Revert", Cancel: t.URL(),
			Fields: []formField{{Name: "comment", Label: "Reason", Type: "text"}},
		})
	}
	if err := s.requireAdmin(r); err != nil {
		return err
	}
	d := &viewData{Title: t}
	if err := s.fillFile(r, d); err != nil {
		return err
	}
	if d.File == nil {
		return wiki.Errorf(wiki.KindNotFound, "%s has no uploaded file to revert", t)
	}
	p := s.formPage(r, "Revert "+t.Name())
	if err := s.setTabs(p, r, t, "filerevert", true); err != nil {
		return err
	}
	p.Data = fileRevertData{Title: t, Versions: d.File.Versions}
	s.writePage(w, r, http.StatusOK, "filerevert", p)
	return nil
}

func (s *Server) fileRevert(w http.ResponseWriter, r *http.Request, t wiki.Title) error {
	v, err := s.fileRevertable(r, t)
	if err != nil {
		return err
	}
	if _, err := s.eng.Upload(r.Context(), engine.Upload{Title: t, Revert: v.SHA256, Comment: r.PostFormValue("comment"), Editor: s.editorOf(r)}); err != nil {
		return err
	}
	redirect(w, r, t.URL(), http.StatusSeeOther)
	return nil
}
