package wiki

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// The character rules that titles and user names share. A title or a name
// is shown to people who must be able to tell it apart from another one and
// read it in the order it was typed, so it may not contain what renders as
// nothing or reorders the text around it:
//
//   - C0 and C1 control characters (white space among them is turned into
//     spaces before this check);
//   - bidirectional controls (LRM, RLM, ALM, the embeddings, overrides and
//     isolates): MediaWiki strips some of them silently; Wikid refuses them
//     with the position, so what is stored is what was typed;
//   - invisible format characters (general category Cf: zero-width space,
//     word joiner, byte order mark, soft hyphen, tag characters…) and the
//     blank fillers that are letters in name only (Hangul fillers, the
//     blank Braille pattern, the combining grapheme joiner);
//   - ZWNJ and ZWJ, except between two letters of a script whose spelling
//     needs them (Persian and Arabic, the Indic scripts, Sinhala, Myanmar,
//     Khmer, Mongolian…) and, in titles only, inside emoji ZWJ sequences;
//   - private-use characters, noncharacters and code points that Go's
//     Unicode tables do not know (unassigned in unicode.Version).
//
// Variation selectors are kept: emoji need VS16 and they are not invisible
// on their own (a stray one is at worst a no-op after its base).

// joiningScripts are the scripts in which ZWNJ or ZWJ changes how letters
// join or conjoin and so may be part of a correct spelling.
var joiningScripts = []*unicode.RangeTable{
	unicode.Arabic, unicode.Syriac, unicode.Nko, unicode.Mongolian, unicode.Phags_Pa, unicode.Manichaean,
	unicode.Devanagari, unicode.Bengali, unicode.Gurmukhi, unicode.Gujarati, unicode.Oriya, unicode.Tamil,
	unicode.Telugu, unicode.Kannada, unicode.Malayalam, unicode.Sinhala, unicode.Myanmar, unicode.Khmer,
	unicode.Tibetan, unicode.Balinese, unicode.Javanese,
}

// characterNames names the characters refused by class, for error messages;
// the standard library has no name table.
var characterNames = map[rune]string{
	0x0000: "NULL", 0x0009: "CHARACTER TABULATION", 0x000A: "LINE FEED", 0x000D: "CARRIAGE RETURN",
	0x001B: "ESCAPE", 0x007F: "DELETE", 0x0085: "NEXT LINE",
	0x00AD: "SOFT HYPHEN", 0x034F: "COMBINING GRAPHEME JOINER", 0x061C: "ARABIC LETTER MARK",
	0x115F: "HANGUL CHOSEONG FILLER", 0x1160: "HANGUL JUNGSEONG FILLER", 0x17B4: "KHMER VOWEL INHERENT AQ",
	0x17B5: "KHMER VOWEL INHERENT AA", 0x180E: "MONGOLIAN VOWEL SEPARATOR",
	0x200B: "ZERO WIDTH SPACE", 0x200C: "ZERO WIDTH NON-JOINER", 0x200D: "ZERO WIDTH JOINER",
	0x200E: "LEFT-TO-RIGHT MARK", 0x200F: "RIGHT-TO-LEFT MARK",
	0x202A: "LEFT-TO-RIGHT EMBEDDING", 0x202B: "RIGHT-TO-LEFT EMBEDDING", 0x202C: "POP DIRECTIONAL FORMATTING",
	0x202D: "LEFT-TO-RIGHT OVERRIDE", 0x202E: "RIGHT-TO-LEFT OVERRIDE",
	0x2060: "WORD JOINER", 0x2061: "FUNCTION APPLICATION", 0x2062: "INVISIBLE TIMES", 0x2063: "INVISIBLE SEPARATOR",
	0x2064: "INVISIBLE PLUS", 0x2066: "LEFT-TO-RIGHT ISOLATE", 0x2067: "RIGHT-TO-LEFT ISOLATE",
	0x2068: "FIRST STRONG ISOLATE", 0x2069: "POP DIRECTIONAL ISOLATE", 0x2800: "BRAILLE PATTERN BLANK",
	0x3164: "HANGUL FILLER", 0xFEFF: "ZERO WIDTH NO-BREAK SPACE", 0xFFA0: "HALFWIDTH HANGUL FILLER",
	0xFFF9: "INTERLINEAR ANNOTATION ANCHOR", 0xFFFA: "INTERLINEAR ANNOTATION SEPARATOR",
	0xFFFB: "INTERLINEAR ANNOTATION TERMINATOR", 0xFFFD: "REPLACEMENT CHARACTER",
	0xE0001: "LANGUAGE TAG", 0xE007F: "CANCEL TAG",
}

// isBidiControl reports the explicit bidirectional formatting characters.
func isBidiControl(r rune) bool {
	return r == 0x200E || r == 0x200F || r == 0x061C || (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
}

// isBlank reports characters that are not Cf but render as nothing.
func isBlank(r rune) bool {
	switch r {
	case 0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x2800, 0x3164, 0xFFA0:
		return true
	}
	return false
}

func isNoncharacter(r rune) bool {
	return (r >= 0xFDD0 && r <= 0xFDEF) || r&0xFFFE == 0xFFFE
}

// isAssigned reports whether Go's Unicode tables give r a category (their
// unicode.C also covers the unassigned code points, so the Cx are listed).
func isAssigned(r rune) bool {
	return unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs)
}

// charClass says why r may not appear in a title or a name, or "" if it may
// (ZWJ and ZWNJ are judged by their neighbours elsewhere).
func charClass(r rune) string {
	switch {
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
		return "a control character"
	case isBidiControl(r):
		return "an invisible bidirectional control"
	case r >= 0xE0000 && r <= 0xE007F:
		return "an invisible tag character"
	case r == 0x200C || r == 0x200D:
		return "an invisible joiner"
	case unicode.Is(unicode.Cf, r) || isBlank(r):
		return "an invisible character"
	case unicode.Is(unicode.Co, r):
		return "a private-use character"
	case isNoncharacter(r):
		return "a noncharacter"
	case r == utf8.RuneError:
		return "the mark of a character lost in an earlier conversion"
	case !isAssigned(r):
		return "an unassigned code point"
	}
	return ""
}

// describeChar names r for an error message: "U+202E RIGHT-TO-LEFT OVERRIDE
// (an invisible bidirectional control)" or "U+E000 (a private-use character)".
func describeChar(r rune, class string) string {
	if name, ok := characterNames[r]; ok {
		return fmt.Sprintf("U+%04X %s (%s)", r, name, class)
	}
	if r >= 0xE0020 && r <= 0xE007E {
		return fmt.Sprintf("U+%04X TAG %q (%s)", r, r-0xE0000, class)
	}
	return fmt.Sprintf("U+%04X (%s)", r, class)
}

// inJoiningScript reports a letter or mark of a script that uses ZWNJ/ZWJ.
func inJoiningScript(r rune) bool {
	if !unicode.In(r, unicode.L, unicode.M) {
		return false
	}
	for _, s := range joiningScripts {
		if unicode.Is(s, r) {
			return true
		}
	}
	return false
}

// isPictographic approximates Extended_Pictographic, which Go's tables lack:
// the symbol blocks emoji are drawn from.
func isPictographic(r rune) bool {
	return (r >= 0x1F000 && r <= 0x1FAFF) || (r >= 0x2600 && r <= 0x27BF) || (r >= 0x2B00 && r <= 0x2BFF) ||
		r == 0x2194 || r == 0x2195 || r == 0x2B50 || r == 0x3030 || r == 0x303D || r == 0x00A9 || r == 0x00AE
}

// joinerAllowed reports whether the ZWNJ or ZWJ between prev and next is
// part of a spelling: between letters (or marks, as a virama) of a joining
// script, or, when emoji is set, a ZWJ joining two pictographs (the first
// possibly followed by VS16 or a skin-tone modifier, as in 👩🏽‍💻).
func joinerAllowed(j, prev, prevBase, next rune, emoji bool) bool {
	if inJoiningScript(prev) && inJoiningScript(next) {
		return true
	}
	return emoji && j == 0x200D && isPictographic(prevBase) && isPictographic(next)
}

// checkCharacters returns an error naming the first character of s, with its
// position counted in characters from 1, that a title or name may not hold.
// what is "title" or "user name"; emoji allows emoji ZWJ sequences.
func checkCharacters(s, what string, emoji bool) error {
	var prev, prevBase rune = -1, -1
	pos := 0
	for i, r := range s {
		pos++
		if r >= 0x20 && r < 0x7f { // the common case, and never refused here
			prev, prevBase = r, r
			continue
		}
		if unicode.IsSpace(r) { // becomes a space
			prev, prevBase = ' ', ' '
			continue
		}
		class := charClass(r)
		if r == 0x200C || r == 0x200D {
			next, _ := utf8.DecodeRuneInString(s[i+utf8.RuneLen(r):])
			if i+utf8.RuneLen(r) < len(s) && prev >= 0 && joinerAllowed(r, prev, prevBase, next, emoji) {
				class = ""
			} else {
				class = "an invisible joiner, allowed only between letters of a script that needs it"
				if emoji {
					class += " or inside an emoji sequence"
				}
			}
		}
		if class != "" {
			return Errorf(KindInvalid, "the %s contains %s at character %d; remove it", what, describeChar(r, class), pos)
		}
		prev = r
		// Skin-tone modifiers and variation selectors belong to the emoji
		// before them: a ZWJ after them joins that emoji.
		if !(r >= 0x1F3FB && r <= 0x1F3FF) && !(r >= 0xFE00 && r <= 0xFE0F) {
			prevBase = r
		}
	}
	return nil
}
