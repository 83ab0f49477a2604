package wiki

import (
	"strings"
	"testing"
)

func TestTitleCharacterRules(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     string // the title, or "" for an error
		errHas   string // text the error must contain
	}{
		{"a Cyrillic letter is a letter", "\u0410dmin", "\u0410dmin", ""},
		{"a Greek capital omicron is a letter", "\u039fmega", "\u039fmega", ""},
		{"Korean is accepted", "위키 백과", "위키 백과", ""},
		{"Chinese is accepted", "维基百科", "维基百科", ""},
		{"e and a combining acute become é", "Caf" + "e\u0301", "Café", ""},
		{"a ZWNJ inside a Persian word is part of its spelling", "می\u200cخواهم", "می\u200cخواهم", ""},
		{"a ZWJ after a Devanagari virama is part of its spelling", "क्\u200dष", "क्\u200dष", ""},
		{"an emoji ZWJ sequence is one emoji", "👩\u200d💻 tips", "👩\u200d💻 tips", ""},
		{"an emoji ZWJ sequence with a skin tone", "👩🏽\u200d💻", "👩🏽\u200d💻", ""},
		{"a family emoji chains ZWJs", "👨\u200d👩\u200d👧", "👨\u200d👩\u200d👧", ""},
		{"a heart with VS16 joins", "❤\ufe0f\u200d🔥", "❤\ufe0f\u200d🔥", ""},
		{"a right-to-left override is refused with its name and place", "Abc\u202edef", "",
			"the title contains U+202E RIGHT-TO-LEFT OVERRIDE (an invisible bidirectional control) at character 4; remove it"},
		{"a left-to-right mark is refused", "A\u200eB", "", "U+200E LEFT-TO-RIGHT MARK"},
		{"an Arabic letter mark is refused", "\u061cA", "", "U+061C ARABIC LETTER MARK"},
		{"an isolate is refused", "A\u2067B\u2069", "", "U+2067 RIGHT-TO-LEFT ISOLATE"},
		{"a zero-width space is refused", "Main\u200bPage", "", "U+200B ZERO WIDTH SPACE (an invisible character) at character 5"},
		{"a byte order mark is refused", "\ufeffMain", "", "U+FEFF ZERO WIDTH NO-BREAK SPACE (an invisible character) at character 1"},
		{"a word joiner is refused", "A\u2060B", "", "U+2060 WORD JOINER"},
		{"a soft hyphen is refused", "Ad\u00admin", "", "U+00AD SOFT HYPHEN"},
		{"a tag character is refused", "A\U000E0041", "", "U+E0041 TAG 'A' (an invisible tag character) at character 2"},
		{"a Hangul filler is refused", "A\u3164B", "", "U+3164 HANGUL FILLER"},
		{"a private-use character is refused", "A\ue000", "", "U+E000 (a private-use character) at character 2"},
		{"a supplementary private-use character is refused", "A\U000F0000", "", "U+F0000 (a private-use character)"},
		{"a noncharacter is refused", "A\ufdd0", "", "U+FDD0 (a noncharacter)"},
		{"a plane-end noncharacter is refused", "A\U0001FFFF", "", "U+1FFFF (a noncharacter)"},
		{"an unassigned code point is refused", "A\U0003FFF0", "", "U+3FFF0 (an unassigned code point)"},
		{"a C1 control is refused", "A\u0090", "", "U+0090 (a control character) at character 2"},
		{"a C0 control is refused", "A\x1bB", "", "U+001B ESCAPE (a control character)"},
		{"the replacement character is refused", "A\ufffdB", "", "U+FFFD REPLACEMENT CHARACTER"},
		{"a ZWNJ between Latin letters is refused", "Ad\u200cmin", "", "U+200C ZERO WIDTH NON-JOINER (an invisible joiner"},
		{"a ZWJ between Latin letters is refused", "Ad\u200dmin", "", "U+200D ZERO WIDTH JOINER"},
		{"a ZWNJ at the start is refused", "\u200cمی", "", "at character 1"},
		{"a ZWNJ at the end is refused", "می\u200c", "", "at character 3"},
		{"a ZWJ between an emoji and a letter is refused", "👩\u200dA", "", "U+200D"},
		{"the position counts characters, not bytes", "위키\u202e", "", "at character 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseTitle(tc.in)
			if tc.want != "" {
				if err != nil || string(got) != tc.want {
					t.Fatalf("ParseTitle(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("ParseTitle(%q) = %q, want an error", tc.in, got)
			}
			if KindOf(err) != KindInvalid || !strings.Contains(Message(err), tc.errHas) {
				t.Fatalf("ParseTitle(%q): %q; want a KindInvalid containing %q", tc.in, Message(err), tc.errHas)
			}
		})
	}
}

func TestParseUserName(t *testing.T) {
	for _, tc := range []struct {
		name, in, want, errHas string
	}{
		{"a plain name is upper-cased", "alice", "Alice", ""},
		{"underscores become spaces", "alice_smith", "Alice smith", ""},
		{"a Persian name keeps its ZWNJ", "علی\u200cرضا", "علی\u200cرضا", ""},
		{"a Korean name", "김철수", "김철수", ""},
		{"NFC makes e and an acute one letter", "Rene\u0301", "René", ""},
		{"a slash is refused", "a/b", "", "may not contain"},
		{"a colon is refused", "User:x", "", "may not contain"},
		{"a right-to-left override is refused", "Bob\u202e", "", "the user name contains U+202E RIGHT-TO-LEFT OVERRIDE (an invisible bidirectional control) at character 4; remove it"},
		{"a zero-width space is refused", "Ad\u200bmin", "", "U+200B ZERO WIDTH SPACE"},
		{"an emoji ZWJ sequence is refused in a name", "Ann👩\u200d💻", "", "U+200D ZERO WIDTH JOINER"},
		{"a private-use character is refused", "\ue000x", "", "U+E000"},
		{"a title error is explained", "a#b", "", "that user name cannot be used"},
		{"85 characters are allowed", strings.Repeat("x", 85), "X" + strings.Repeat("x", 84), ""},
		{"86 are not", strings.Repeat("x", 86), "", "too long"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseUserName(tc.in)
			if tc.want != "" {
				if err != nil || got != tc.want {
					t.Fatalf("ParseUserName(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
				}
				return
			}
			if err == nil || KindOf(err) != KindInvalid || !strings.Contains(Message(err), tc.errHas) {
				t.Fatalf("ParseUserName(%q) = %q, %v; want a KindInvalid containing %q", tc.in, got, err, tc.errHas)
			}
		})
	}
}

func TestOneLine(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"  a\n\tb  ", "a b"},
		{"a\x00b\x07c\x7fd", "a b c d"},
		{"a\xffb", "a\uFFFDb"},
		{"hé wwö", "hé ww"}, // not cut inside the ö
	} {
		if got := OneLine(tt.in, 7); got != tt.want {
			t.Errorf("OneLine(%q, 7) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
