package web

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/httpx"
	"github.com/wikid/wikid/internal/wiki"
)

// Uploads: Special:Upload (a form; its script adds drag and drop and a
// progress bar), POST /w/rest.php/v1/file/{title} for clients, and
// `wikid upload` for bulk. All three read a multipart body of at most
// max_upload_bytes for the file, held in memory while the engine checks
// its content (engine.Upload).

// uploadsPerMinute bounds the uploads one user makes.
const uploadsPerMinute = 30

// uploadReadTimeout is how long an upload's body may take to arrive: the
// server's read timeout is for pages, not for a large file on a slow link.
const uploadReadTimeout = 15 * time.Minute

// maxUploadFields bounds the form fields of an upload other than the
// file, together.
const maxUploadFields = 256 << 10

// uploadSlots is how many uploads are read at once: each is held in
// memory (up to max_upload_bytes) while it is checked, so this bounds
// the memory uploads take. The others are refused with 503.
const uploadSlots = 4

// uploadPath is the one path a browser's upload is posted to, whose body
// may be as large as a file (limits).
const uploadPath = "/wiki/Special:Upload"

// isUploadPath reports whether a request to p may carry a file.
func isUploadPath(p string) bool {
	return p == uploadPath || p == importPath || strings.HasPrefix(p, restBase+"file/")
}

// uploadForm is an upload request's body: its file and its other fields.
type uploadForm struct {
	File     []byte
	FileName string // as the client named it
	HasFile  bool
	Fields   url.Values
	// done gives back the upload's slot and its uploader's turn; nil
	// when none was taken.
	done func()
}

// Done ends the upload: its slot and its uploader's turn are free for the
// next one. Call it when the request is answered (a deferred call right
// after readUpload, whatever its error): a client that sends its next
// file as soon as it has the answer must not find its turn still taken.
// The request's end frees them too, later, if Done is never called.
func (f uploadForm) Done() {
	if f.done != nil {
		f.done()
	}
}

// readUpload reads r's multipart body: the part named "file" whole (at
// most max_upload_bytes), the other fields into r.PostForm (so that the
// CSRF check finds its token there).
func (s *Server) readUpload(w http.ResponseWriter, r *http.Request) (uploadForm, error) {
	return s.readMultipart(w, r, s.cfg.MaxUploadBytes, s.tooLargeUpload)
}

// readMultipart is readUpload with a limit of its own: the file may not
// be longer than limit bytes (tooLarge says so). Special:Import reads its
// dump with it, under the same one-at-a-time rule as uploads.
func (s *Server) readMultipart(w http.ResponseWriter, r *http.Request, limit int64, tooLarge func() error) (uploadForm, error) {
	f := uploadForm{Fields: url.Values{}}
	// One upload at a time per uploader, and uploadSlots in all: a slow
	// client holds its slot for as long as its file takes to arrive.
	uid, name := s.editor(r)
	who := "u" + strconv.FormatInt(uid, 10)
	if uid == 0 {
		who = "a" + name
	}
	if _, busy := s.uploading.LoadOrStore(who, true); busy {
		return f, &wiki.Error{Kind: wiki.KindTooMany, RetryAfter: 10 * time.Second,
			Msg: "another upload of yours is under way; wait for it to finish, then upload the next file"}
	}
	select {
	case s.uploadSlots <- struct{}{}:
		// Released by Done, or at the latest when the request ends: the
		// file is held until then.
		f.done = sync.OnceFunc(func() { <-s.uploadSlots; s.uploading.Delete(who) })
		context.AfterFunc(r.Context(), f.done)
	default:
		s.uploading.Delete(who)
		return f, &wiki.Error{Kind: wiki.KindUnavailable, RetryAfter: 10 * time.Second,
			Msg: "the wiki is receiving other uploads right now; try again in a moment"}
	}
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(uploadReadTimeout))
	_ = rc.SetWriteDeadline(time.Now().Add(uploadReadTimeout + time.Minute))
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct != "multipart/form-data" {
		return f, wiki.Errorf(wiki.KindInvalid, "send the file as multipart/form-data, in a part named \"file\"")
	}
	fieldBytes := 0
	mr, err := r.MultipartReader()
	if err != nil {
		return f, wiki.Errorf(wiki.KindInvalid, "the upload's body cannot be read as multipart/form-data: %v", err)
	}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return f, s.uploadReadError(err)
		}
		name := part.FormName()
		switch {
		case name == "file" && !f.HasFile:
			var buf bytes.Buffer
			n, err := io.Copy(&buf, io.LimitReader(part, limit+1))
			if err != nil {
				return f, s.uploadReadError(err)
			}
			if n > limit {
				return f, tooLarge()
			}
			f.File, f.FileName, f.HasFile = buf.Bytes(), path.Base(strings.ReplaceAll(part.FileName(), `\`, "/")), true
		case name != "":
			b, err := io.ReadAll(io.LimitReader(part, int64(maxUploadFields-fieldBytes+1)))
			if err != nil {
				return f, s.uploadReadError(err)
			}
			if fieldBytes += len(b) + len(name); fieldBytes > maxUploadFields {
				return f, wiki.Errorf(wiki.KindTooLarge, "the form's fields other than the file are longer than %s together; shorten the description", wiki.ByteSize(maxUploadFields))
			}
			f.Fields.Add(name, string(b))
		}
		part.Close()
	}
	r.PostForm = f.Fields
	return f, nil
}

// uploadReadError says why an upload's body could not be read.
func (s *Server) uploadReadError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return s.tooLargeUpload()
	}
	return wiki.Errorf(wiki.KindInvalid, "the upload was cut off before its end (%v); try again", err)
}

func (s *Server) tooLargeUpload() error {
	return wiki.Errorf(wiki.KindTooLarge, "the file is larger than this wiki's upload limit of %s; make it smaller (compress or scale it down), or ask an administrator to raise max_upload_bytes",
		wiki.ByteSize(s.cfg.MaxUploadBytes))
}

// requireUpload lets through the viewers who may upload: of upload_group
// or above, not blocked, within the rate.
func (s *Server) requireUpload(r *http.Request) error {
	v := viewerOf(r)
	if !v.Group().AtLeast(s.cfg.UploadGroup) {
		if !v.LoggedIn {
			return wiki.Errorf(wiki.KindUnauthorized, "log in to upload files")
		}
		return wiki.Errorf(wiki.KindForbidden, "your account may not upload files on this wiki (uploads are for %s and above); ask an administrator", s.cfg.UploadGroup)
	}
	if err := s.checkBlock(r); err != nil {
		return err
	}
	if wait, ok := s.uploads.allow(s.limitKey(r)); !ok {
		return &wiki.Error{Kind: wiki.KindTooMany, RetryAfter: wait, Msg: "you have uploaded many files in the last minute; wait a minute and try again"}
	}
	return nil
}

// canUpload reports whether v's group may upload (for links and forms).
func (s *Server) canUpload(v Viewer) bool { return v.Group().AtLeast(s.cfg.UploadGroup) }

// sentence makes a message worded for the API ("the file is …") a
// sentence for a form: a capital first letter and a full stop.
func sentence(msg string) string {
	r, n := utf8.DecodeRuneInString(msg)
	if n == 0 {
		return msg
	}
	msg = string(unicode.ToUpper(r)) + msg[n:]
	if !strings.HasSuffix(msg, ".") && !strings.HasSuffix(msg, "?") && !strings.HasSuffix(msg, "!") {
		msg += "."
	}
	return msg
}

// uploadData is Special:Upload's form.
type uploadData struct {
	DestFile    string // the name the file gets (without "File:")
	Comment     string
	Description string
	Watch       bool
	Error       string
	MaxBytes    int64
	MaxSize     string
	Accept      string // the file input's accept list
	Existing    *wiki.FileVersion
}

var destFileParam = httpx.Param{Name: "wpDestFile", Kind: httpx.Text, Max: 255}

func (s *Server) uploadPage(w http.ResponseWriter, r *http.Request, _ string) error {
	if r.Method == http.MethodPost {
		return s.upload(w, r)
	}
	v := viewerOf(r)
	if !s.canUpload(v) {
		if !v.LoggedIn {
			redirect(w, r, "/wiki/Special:UserLogin?returnto=Special:Upload", http.StatusSeeOther)
			return nil
		}
		return s.requireUpload(r)
	}
	d := uploadData{DestFile: httpx.From(r).Get(destFileParam.Name), Watch: !v.User.Prefs.NoAutoWatch}
	return s.writeUploadForm(w, r, http.StatusOK, d)
}

func (s *Server) writeUploadForm(w http.ResponseWriter, r *http.Request, status int, d uploadData) error {
	d.MaxBytes, d.MaxSize = s.cfg.MaxUploadBytes, wiki.ByteSize(s.cfg.MaxUploadBytes)
	d.Accept = "image/*,.pdf,.txt,.zip,.docx,.xlsx,.pptx,.odt,.ods,.odp,.gz,.7z"
	if d.DestFile != "" {
		if t, err := s.titles.Parse("File:" + d.DestFile); err == nil {
			// The current version, the newest visible one: versions hidden
			// by a deletion are no file to warn about.
			if vs, err := s.store.FileVersions(r.Context(), t); err == nil {
				if i := slices.IndexFunc(vs, func(v wiki.FileVersion) bool { return !v.Hidden }); i >= 0 {
					d.Existing = &vs[i]
				}
			}
		}
	}
	p := s.formPage(r, "Upload file")
	p.Data = d
	s.writePage(w, r, status, "upload", p)
	return nil
}

// wantsJSON reports whether r came from a script that reads the answer
// (the upload form's drag and drop).
func wantsJSON(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "application/json")
}

func (s *Server) upload(w http.ResponseWriter, r *http.Request) error {
	d := uploadData{}
	fail := func(err error) error {
		if wantsJSON(r) {
			// The form's script shows the message (as the REST API words it).
			s.writeAPIError(w, r, err)
			return nil
		}
		if k := wiki.KindOf(err); k == wiki.KindInternal || k == wiki.KindUnauthorized || k == wiki.KindTooMany {
			return err
		}
		d.Error = sentence(wiki.Message(err))
		return s.writeUploadForm(w, r, statusOf(err), d)
	}
	if err := s.requireUpload(r); err != nil {
		return fail(err)
	}
	form, err := s.readUpload(w, r)
	defer form.Done()
	if err != nil {
		return fail(err)
	}
	if err := s.checkCSRF(r); err != nil {
		return fail(err)
	}
	d.DestFile, d.Comment, d.Description = strings.TrimSpace(form.Fields.Get("wpDestFile")), form.Fields.Get("wpUploadDescription"), form.Fields.Get("wpPageText")
	d.Watch = form.Fields.Get("watchthis") != ""
	out, err := s.saveUpload(r, form, d.DestFile, d.Comment, d.Description)
	if err != nil {
		return fail(err)
	}
	s.autoWatch(r, out.Page.Title)
	if wantsJSON(r) {
		s.writeJSON(w, r, http.StatusCreated, map[string]string{"title": string(out.Page.Title), "url": out.Page.Title.URL()}, cacheNone, time.Time{})
		return nil
	}
	redirect(w, r, out.Page.Title.URL(), http.StatusSeeOther)
	return nil
}

// saveUpload stores form's file as File:name (the client's file name
// when name is empty).
func (s *Server) saveUpload(r *http.Request, form uploadForm, name, comment, description string) (engine.UploadOutcome, error) {
	if !form.HasFile {
		return engine.UploadOutcome{}, wiki.Errorf(wiki.KindInvalid, "choose a file to upload")
	}
	if name == "" {
		name = form.FileName
	}
	name = strings.TrimPrefix(strings.TrimPrefix(name, "File:"), "file:")
	if name == "" || name == "." || name == "/" {
		return engine.UploadOutcome{}, wiki.Errorf(wiki.KindInvalid, "give the file a name, such as Diagram.png")
	}
	t, err := s.titles.Parse("File:" + name)
	if err != nil {
		return engine.UploadOutcome{}, wiki.Errorf(wiki.KindInvalid, "%q cannot be a file name: %s", sanitizeLine(name), wiki.Message(err))
	}
	if t.Namespace() != wiki.NSFile || strings.Contains(t.Name(), "/") {
		return engine.UploadOutcome{}, wiki.Errorf(wiki.KindInvalid, "a file name may not contain \"/\" or a namespace: name it like Diagram.png")
	}
	out, err := s.eng.Upload(r.Context(), engine.Upload{Title: t, Data: form.File, Comment: comment, Description: description, Editor: s.editorOf(r)})
	// Before the answer is written: the uploader's next file may come as
	// soon as it has it.
	form.Done()
	return out, err
}

// apiFile is a file as MediaWiki's REST API describes it (GET
// /file/{title}): its page, its latest upload, and the original's and a
// preview's address and size.
type apiFile struct {
	Title          string          `json:"title"`
	DescriptionURL string          `json:"file_description_url"`
	Latest         apiFileLatest   `json:"latest"`
	Preferred      apiFileVariant  `json:"preferred"`
	Original       apiFileVariant  `json:"original"`
	Thumbnail      *apiFileVariant `json:"thumbnail"`
}

type apiFileLatest struct {
	Timestamp string      `json:"timestamp"`
	User      apiUserJSON `json:"user"`
}

type apiUserJSON struct {
	ID   *int64 `json:"id"`
	Name string `json:"name"`
}

type apiFileVariant struct {
	MediaType string  `json:"mediatype"`
	Size      *int64  `json:"size"`
	Width     *int    `json:"width"`
	Height    *int    `json:"height"`
	Duration  *string `json:"duration"`
	URL       string  `json:"url"`
}

// mediaType is MediaWiki's media type of a MIME type.
func mediaType(mime string) string {
	switch {
	case strings.HasPrefix(mime, "image/svg"):
		return "DRAWING"
	case strings.HasPrefix(mime, "image/"):
		return "BITMAP"
	case strings.HasPrefix(mime, "video/"):
		return "VIDEO"
	case strings.HasPrefix(mime, "audio/"):
		return "AUDIO"
	case mime == "text/plain":
		return "TEXT"
	case strings.Contains(mime, "zip") || strings.Contains(mime, "7z") || strings.Contains(mime, "gzip") || strings.Contains(mime, "tar"):
		return "ARCHIVE"
	}
	return "OFFICE"
}

func (s *Server) fileJSON(v wiki.FileVersion) apiFile {
	orig := apiFileVariant{MediaType: mediaType(v.MIME), Size: &v.Size, URL: wiki.OriginalURL(v.SHA256, v.Name())}
	if v.Width > 0 {
		w, h := v.Width, v.Height
		orig.Width, orig.Height = &w, &h
	}
	f := apiFile{Title: v.Title.Name(), DescriptionURL: v.Title.URL(), Original: orig, Preferred: orig,
		Latest: apiFileLatest{Timestamp: v.Time.UTC().Format(time.RFC3339), User: apiUserJSON{Name: v.UserName}}}
	if v.UserID != 0 {
		id := v.UserID
		f.Latest.User.ID = &id
	}
	if v.Thumbable() && v.Width > wiki.DefaultThumbWidth {
		w, h := wiki.DefaultThumbWidth, max(1, (v.Height*wiki.DefaultThumbWidth+v.Width/2)/v.Width)
		f.Thumbnail = &apiFileVariant{MediaType: orig.MediaType, Width: &w, Height: &h, URL: wiki.ThumbURL(v.SHA256, v.Name(), w)}
	} else {
		th := orig
		f.Thumbnail = &th
	}
	return f
}

// apiFileTitle reads the {title} of a file route: a file name, with or
// without its "File:" prefix.
func (s *Server) apiFileTitle(r *http.Request) (wiki.Title, error) {
	name := r.PathValue("title")
	if !strings.HasPrefix(strings.ToLower(name), "file:") {
		name = "File:" + name
	}
	t, err := s.titles.Parse(name)
	if err != nil || t.Namespace() != wiki.NSFile {
		return "", wiki.Errorf(wiki.KindInvalid, "give a file name, such as File:Diagram.png")
	}
	return t, nil
}

func (s *Server) apiGetFile(w http.ResponseWriter, r *http.Request) error {
	t, err := s.apiFileTitle(r)
	if err != nil {
		return err
	}
	addTag(r, t)
	files, err := s.store.CurrentFiles(r.Context(), []wiki.Title{t})
	if err != nil {
		return err
	}
	v, ok := files[t]
	if !ok {
		return wiki.Errorf(wiki.KindNotFound, "there is no file %q", t.Name())
	}
	s.writeJSON(w, r, http.StatusOK, s.fileJSON(v), cachePublic, v.Time)
	return nil
}

// apiUpload stores a file (multipart: "file", and optionally "comment" and
// "text", the new file page's description). A new file answers 201, a new
// version of one 200; both with the file as GET /file/{title} has it.
func (s *Server) apiUpload(w http.ResponseWriter, r *http.Request) error {
	t, err := s.apiFileTitle(r)
	if err != nil {
		return err
	}
	if err := s.requireUpload(r); err != nil {
		return err
	}
	form, err := s.readUpload(w, r)
	defer form.Done()
	if err != nil {
		return err
	}
	if err := s.checkCSRF(r); err != nil {
		return err
	}
	out, err := s.saveUpload(r, form, t.Name(), form.Fields.Get("comment"), form.Fields.Get("text"))
	if err != nil {
		return err
	}
	status := http.StatusOK
	if out.Created {
		w.Header().Set("Location", restBase+"file/"+restKey(out.Page.Title))
		status = http.StatusCreated
	}
	s.writeJSON(w, r, status, s.fileJSON(out.Version), cacheNone, time.Time{})
	return nil
}
