// Package media is the content logic of uploads: what type a file is (by
// its bytes, never its name), whether its name fits that type, the size of
// an image from its header, thumbnails, and removing GPS positions.
// It reads and writes byte slices only; storage and HTTP live elsewhere.
package media

import (
	"errors"
	"fmt"
	"strings"
)

// The kinds of refusal, for errors.Is. ErrType, ErrUnsafe and ErrInvalid
// refuse an upload (415), ErrName its name (400); ErrTooLarge and
// ErrTooWide refuse a thumbnail.
var (
	ErrType     = errors.New("media: file type not accepted")
	ErrUnsafe   = errors.New("media: unsafe content")
	ErrInvalid  = errors.New("media: malformed file")
	ErrName     = errors.New("media: name does not fit the type")
	ErrTooLarge = errors.New("media: image too large to decode")
	ErrTooWide  = errors.New("media: thumbnail wider than the image")
)

// Error is a refusal: Kind is one of the Err sentinels, Msg a sentence
// safe to show the uploader.
type Error struct {
	Kind error
	Msg  string
}

func (e *Error) Error() string { return "media: " + e.Msg }

func (e *Error) Unwrap() error { return e.Kind }

func refuse(kind error, format string, args ...any) error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// The types Sniff reports.
const (
	mimePNG      = "image/png"
	mimeJPEG     = "image/jpeg"
	mimeGIF      = "image/gif"
	mimeWebP     = "image/webp"
	mimeSVG      = "image/svg+xml"
	mimePDF      = "application/pdf"
	mimeText     = "text/plain"
	mimeZIP      = "application/zip"
	mimeDOCX     = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
	mimeXLSX     = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
	mimePPTX     = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
	mimeODT      = "application/vnd.oasis.opendocument.text"
	mimeODS      = "application/vnd.oasis.opendocument.spreadsheet"
	mimeODP      = "application/vnd.oasis.opendocument.presentation"
	mimeODG      = "application/vnd.oasis.opendocument.graphics"
	mimeDOC      = "application/msword"
	mimeXLS      = "application/vnd.ms-excel"
	mimePPT      = "application/vnd.ms-powerpoint"
	mimeOLE      = "application/x-ole-storage"
	mimeGzip     = "application/gzip"
	mimeSevenZip = "application/x-7z-compressed"
	mimeTar      = "application/x-tar"
	mimeMP4      = "video/mp4"
	mimeM4A      = "audio/mp4"
	mimeMOV      = "video/quicktime"
	mimeWebM     = "video/webm"
	mimeMKV      = "video/x-matroska"
	mimeMP3      = "audio/mpeg"
	mimeOgg      = "audio/ogg"
	mimeOGV      = "video/ogg"
	mimeFLAC     = "audio/flac"
	mimeWAV      = "audio/wav"
)

// DefaultAllowed are the types a wiki accepts unless configured otherwise:
// images, PDF, plain text, office documents and common archives.
var DefaultAllowed = []string{
	mimePNG, mimeJPEG, mimeGIF, mimeWebP, mimeSVG, mimePDF, mimeText, mimeZIP,
	mimeDOCX, mimeXLSX, mimePPTX, mimeODT, mimeODS, mimeODP, mimeODG,
	mimeGzip, mimeSevenZip,
}

// kind describes a type for messages and names: the first extension is
// the one a rename is suggested with.
type kind struct {
	desc string // with its article, as in "the file is a PNG image"
	exts []string
}

// JPEG names end in .jpg or .jpeg only: wiki.ThumbName keeps those names
// for JPEG thumbnails and adds ".png" to any other.
var kinds = map[string]kind{
	mimePNG:      {"a PNG image", []string{".png"}},
	mimeJPEG:     {"a JPEG image", []string{".jpg", ".jpeg"}},
	mimeGIF:      {"a GIF image", []string{".gif"}},
	mimeWebP:     {"a WebP image", []string{".webp"}},
	mimeSVG:      {"an SVG image", []string{".svg"}},
	mimePDF:      {"a PDF document", []string{".pdf"}},
	mimeText:     {"a text file", []string{".txt", ".text", ".csv", ".tsv", ".md", ".log"}},
	mimeZIP:      {"a ZIP archive", []string{".zip"}},
	mimeDOCX:     {"a Word document", []string{".docx"}},
	mimeXLSX:     {"an Excel spreadsheet", []string{".xlsx"}},
	mimePPTX:     {"a PowerPoint presentation", []string{".pptx"}},
	mimeODT:      {"an OpenDocument text", []string{".odt"}},
	mimeODS:      {"an OpenDocument spreadsheet", []string{".ods"}},
	mimeODP:      {"an OpenDocument presentation", []string{".odp"}},
	mimeODG:      {"an OpenDocument drawing", []string{".odg"}},
	mimeDOC:      {"a Word 97–2003 document", []string{".doc"}},
	mimeXLS:      {"an Excel 97–2003 spreadsheet", []string{".xls"}},
	mimePPT:      {"a PowerPoint 97–2003 presentation", []string{".ppt"}},
	mimeOLE:      {"an OLE compound file (an older Office document)", []string{".doc", ".xls", ".ppt"}},
	mimeGzip:     {"a gzip archive", []string{".gz", ".tgz"}},
	mimeSevenZip: {"a 7z archive", []string{".7z"}},
	mimeTar:      {"a tar archive", []string{".tar"}},
	mimeMP4:      {"an MP4 video", []string{".mp4", ".m4v"}},
	mimeM4A:      {"an MP4 audio file", []string{".m4a"}},
	mimeMOV:      {"a QuickTime video", []string{".mov"}},
	mimeWebM:     {"a WebM video", []string{".webm"}},
	mimeMKV:      {"a Matroska video", []string{".mkv"}},
	mimeMP3:      {"an MP3 audio file", []string{".mp3"}},
	mimeOgg:      {"an Ogg audio file", []string{".ogg", ".oga", ".opus"}},
	mimeOGV:      {"an Ogg video", []string{".ogv"}},
	mimeFLAC:     {"a FLAC audio file", []string{".flac"}},
	mimeWAV:      {"a WAV audio file", []string{".wav"}},
}

// describe names mime for a message.
func describe(mime string) string {
	if k, ok := kinds[mime]; ok {
		return k.desc
	}
	return "a file of type " + mime
}

// Extensions returns the file name extensions (lower case, with the dot)
// a file of type mime may have, the usual one first; nil for an unknown type.
func Extensions(mime string) []string {
	k, ok := kinds[mime]
	if !ok {
		return nil
	}
	return append([]string(nil), k.exts...)
}

// CheckName reports whether name ends in one of the extensions of mime
// (case-insensitively); the error suggests a name that does.
func CheckName(name, mime string) error {
	k, ok := kinds[mime]
	if !ok {
		return refuse(ErrType, "files of type %s cannot be uploaded", mime)
	}
	base, ext := name, ""
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		base, ext = name[:i], name[i:]
	}
	for _, e := range k.exts {
		if strings.EqualFold(ext, e) {
			return nil
		}
	}
	if ext == "" {
		return refuse(ErrName, "the file is %s, but its name has no extension: name it %q", k.desc, name+k.exts[0])
	}
	return refuse(ErrName, "the file is %s, but its name ends in %q: name it %q", k.desc, ext, base+k.exts[0])
}
