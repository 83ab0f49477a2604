package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/wikid/wikid/internal/render"
	"github.com/wikid/wikid/internal/wiki"
)

// Section editing, as MediaWiki's: an edit of one section (Edit.Section
// "1", "2"…, numbered by render.Sections) is its text put in place of that
// section of the revision the editor started from; the whole text is then
// saved against that revision, so that the three-way merge takes in what
// others changed meanwhile (another section merges cleanly, the same
// section conflicts). A new section ("new") is appended to the latest
// text, whatever it is: adding topics never conflicts.

// NewSection is the Edit.Section that appends a new section.
const NewSection = "new"

// ParseSection reads an Edit.Section: "" (the whole page), NewSection,
// or a section number (-1 for the first two).
func ParseSection(s string) (int, error) {
	if s == "" || s == NewSection {
		return -1, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || strconv.Itoa(n) != s {
		return 0, wiki.Errorf(wiki.KindInvalid, "the section must be a section number (0, 1, 2, …) or new, not %.40q", s)
	}
	return n, nil
}

// SectionText returns section n of text, a revision of page t in model m,
// and its heading's plain text ("" for section 0). A number past the last
// section is an error that says how many there are.
func (e *Engine) SectionText(ctx context.Context, t wiki.Title, text string, m wiki.ContentModel, n int) (string, string, error) {
	secs, err := e.sections(ctx, text, m)
	if err != nil {
		return "", "", err
	}
	if n >= len(secs) {
		return "", "", noSection(t, n, len(secs))
	}
	s := secs[n]
	return text[s.Start:s.End], s.Heading, nil
}

// sections finds the sections of text, in model m, in a slot of the
// render gate: the parse of a page at the size limit costs what a render
// does.
func (e *Engine) sections(ctx context.Context, text string, m wiki.ContentModel) ([]render.Section, error) {
	release, err := e.gate.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	return e.markupOf(m).Sections(text)
}

func noSection(t wiki.Title, n, count int) error {
	if count == 1 {
		return wiki.Errorf(wiki.KindInvalid, "the page %q has no section %d: it has no headings, so its only section is 0 (the whole text); edit the whole page or section 0", t, n)
	}
	return wiki.Errorf(wiki.KindInvalid, "the page %q has no section %d: its sections are numbered 0 to %d (0 is the text before the first heading); reload the page and use the edit link of the section", t, n, count-1)
}

// spliceSection turns ed, an edit of section n, into an edit of the whole
// page: the text of ed's base revision (the latest when it has none) with
// section n replaced by ed.Text, against that revision. Its summary
// defaults to "/* Heading */", as MediaWiki's.
func (e *Engine) spliceSection(ctx context.Context, ed *Edit, n int) error {
	cur, err := e.store.FindPage(ctx, ed.Title)
	exists := err == nil && !cur.Deleted
	if err != nil && !errors.Is(err, wiki.ErrNotFound) {
		return err
	}
	if ed.BaseRevID == 0 {
		if !exists {
			return wiki.Errorf(wiki.KindNotFound, "the page %q does not exist, so it has no section %d; create the page with its whole text, or add a new section", ed.Title, n)
		}
		ed.BaseRevID = cur.LatestID
	}
	b, err := e.store.FindRevision(ctx, ed.BaseRevID)
	if errors.Is(err, wiki.ErrNotFound) {
		// Deleted, or no revision of this page: say which.
		if _, err := e.staleBase(ctx, *ed, cur, exists); err != nil {
			return err
		}
		return wiki.ErrNotFound
	}
	if err != nil {
		return err
	}
	// The sections are the base revision's, read in its model; the edit
	// saves in the model it names (Save decided it), usually that one.
	secs, err := e.sections(ctx, b.Text, b.Model)
	if err != nil {
		return err
	}
	if n >= len(secs) {
		return noSection(ed.Title, n, len(secs))
	}
	s := secs[n]
	mine := normalizeText(ed.Text)
	full := b.Text
	if mine != normalizeText(b.Text[s.Start:s.End]) {
		rest := b.Text[s.End:]
		if mine != "" && rest != "" {
			mine += "\n" // a blank line before the next heading (a setext heading would take in a paragraph)
		}
		full = b.Text[:s.Start] + mine + rest
	}
	if strings.TrimSpace(ed.Summary) == "" {
		heading := s.Heading
		if mineSecs, err := e.sections(ctx, mine, b.Model); err == nil && len(mineSecs) > 1 && mineSecs[1].Start == 0 {
			heading = mineSecs[1].Heading
		}
		if heading != "" {
			ed.Summary = SectionSummary(heading)
		}
	}
	ed.Text, ed.BaseRevID = full, b.ID
	return nil
}

// SectionSummary is the start of an edit summary that names the section
// edited, as MediaWiki writes it: "/* Heading */ ".
func SectionSummary(heading string) string {
	return "/* " + wiki.OneLine(heading, 200) + " */ "
}

// topicHeading is the heading line of a new section with subject s, in
// model m: "== s ==" in wikitext, "## s" in Markdown.
func topicHeading(s string, m wiki.ContentModel) string {
	if m == wiki.ModelWikitext {
		return "== " + s + " ==\n"
	}
	// A trailing run of '#' would be taken for the heading's closing
	// sequence: escape its first character.
	if t := strings.TrimRight(s, "#"); len(t) < len(s) && (t == "" || strings.HasSuffix(t, " ")) {
		s = t + `\` + s[len(t):]
	}
	return "## " + s + "\n"
}

// appendTopic is text, in model m, with a new section appended: the
// heading of subject and body, after a blank line.
func appendTopic(text, subject, body string, m wiki.ContentModel) string {
	text = normalizeText(text)
	if text != "" {
		text += "\n"
	}
	text += topicHeading(subject, m)
	if body = normalizeText(body); body != "" {
		text += "\n" + body
	}
	return text
}

// TopicText is a new section alone in model m, for its preview: its
// heading of subject and body.
func TopicText(subject, body string, m wiki.ContentModel) string {
	return appendTopic("", wiki.OneLine(subject, 255), body, m)
}

// TopicSubject checks and cleans the subject of a new section: one line,
// not empty.
func TopicSubject(s string) (string, error) {
	s = wiki.OneLine(s, 255)
	if s == "" {
		return "", wiki.Errorf(wiki.KindInvalid, "give the new section a subject: it becomes the section's heading")
	}
	return s, nil
}

// Signatures: ~~~ (the signature), ~~~~ (signature and time) and ~~~~~
// (time) are expanded when an edit is saved, in the saved text, as
// MediaWiki's pre-save transform does; code and <nowiki> keep them
// (render.ExpandTildes).

// signatureTime is how a signature writes the time, as MediaWiki.
const signatureTime = "15:04, 2 January 2006 (UTC)"

// MaxSignature is the longest custom signature, in characters.
const MaxSignature = 255

// Sign returns text, in model m, with its signatures expanded for ed, at
// the engine's clock. The signature's links ([[User:…|…]]) are written
// alike in Markdown and wikitext.
func (e *Engine) Sign(text string, m wiki.ContentModel, ed Editor) (string, error) {
	when := e.now().UTC().Format(signatureTime)
	sig := e.signature(ed)
	return e.markupOf(m).ExpandTildes(text, func(n int) string {
		switch n {
		case 3:
			return sig
		case 4:
			return sig + " " + when
		}
		return when
	})
}

// signature is ed's signature: their custom one when it is valid, else
// links to their user and talk pages, or, for an anonymous editor, to the
// contributions of their address.
func (e *Engine) signature(ed Editor) string {
	name := ed.UserName
	if ed.UserID == 0 {
		if _, err := netip.ParseAddr(name); err != nil {
			return name // not an address (a Unix socket peer): no page to link
		}
		return "[[Special:Contributions/" + name + "|" + name + "]]"
	}
	if ed.Signature != "" && e.CheckSignature(ed.Signature, name) == nil {
		return ed.Signature
	}
	return "[[User:" + name + "|" + name + "]] ([[User talk:" + name + "|talk]])"
}

// CheckSignature checks sig as user name's custom signature: one line of
// at most MaxSignature characters, with a link to the user's page, talk
// page or contributions, and neither a signature (~~~) nor a template.
func (e *Engine) CheckSignature(sig, name string) error {
	if n := utf8.RuneCountInString(sig); n > MaxSignature {
		return wiki.Errorf(wiki.KindInvalid, "your signature is %d characters long; the limit is %d: shorten it", n, MaxSignature)
	}
	if strings.ContainsAny(sig, "\r\n") {
		return wiki.Errorf(wiki.KindInvalid, "your signature must be one line; remove the line breaks")
	}
	if strings.Contains(sig, "~~~") {
		return wiki.Errorf(wiki.KindInvalid, "your signature must not contain ~~~ (a signature in a signature); write your name and links instead")
	}
	if strings.Contains(sig, "{{") {
		return wiki.Errorf(wiki.KindInvalid, "your signature must not use templates ({{…}}); write the markup itself")
	}
	// Markup a signature repeats on every comment must not reach past it:
	// no HTML (an unclosed <pre> would swallow the rest of the page).
	if htmlTagRE.MatchString(sig) {
		return wiki.Errorf(wiki.KindInvalid, "your signature must not contain HTML tags; use Markdown and wiki links")
	}
	// A signature goes into pages of every model: it is read as
	// Markdown, whose wiki links are wikitext's.
	md := e.markupOf(wiki.ModelMarkdown)
	rules := md.TitleRules()
	var own []wiki.Title
	for _, s := range []string{"User:" + name, "User talk:" + name, "Special:Contributions/" + name} {
		if t, err := rules.Parse(s); err == nil {
			own = append(own, t)
		}
	}
	signed := false
	for _, l := range md.WikiLinks(sig) {
		mine := slices.Contains(own, l)
		signed = signed || mine
		// Another user's links would pass for theirs, and mention them in
		// every comment signed.
		if !mine && (l.Namespace() == wiki.NSUser || l.Namespace() == wiki.NSUserTalk ||
			l.Namespace() == wiki.NSSpecial && strings.HasPrefix(l.Name(), "Contributions/")) {
			return wiki.Errorf(wiki.KindInvalid, "your signature links to %s, which is not yours; link only to your own user page, talk page or contributions", l)
		}
	}
	if signed {
		return nil
	}
	return wiki.Errorf(wiki.KindInvalid, "your signature must link to your user page ([[User:%s|%s]]), your talk page ([[User talk:%s|talk]]) or your contributions ([[Special:Contributions/%s|contributions]]); add one of these links", name, name, name, name)
}

// htmlTagRE finds an HTML tag, comment or declaration.
var htmlTagRE = regexp.MustCompile(`<[A-Za-z!/?]`)

// newSectionMark returns a random nonce for render.MarkSections.
func newSectionMark() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
