package wiki

import (
	"strings"
	"unicode/utf8"
)

// MaxUserNameRunes is the longest user name accepted, in characters (as MediaWiki).
const MaxUserNameRunes = 85

// ParseUserName validates and normalizes a user name: a valid title text
// (NFC, first letter upper-cased whatever the wiki's TitleRules, as in
// MediaWiki, spaces for underscores) without a
// namespace, '/', ':' or '@', at most 85 characters, and held to the
// character rules of titles, except that no emoji ZWJ sequence is allowed.
// Every path that accepts a new or given user name comes through here.
func ParseUserName(name string) (string, error) {
	if !utf8.ValidString(name) {
		return "", Errorf(KindInvalid, "the user name is not valid UTF-8; use plain Unicode text")
	}
	if strings.ContainsAny(name, "/:@") {
		return "", Errorf(KindInvalid, "user names may not contain '/', ':' or '@'; choose another name")
	}
	if err := checkCharacters(normalizeNFC(name), "user name", false); err != nil {
		return "", err
	}
	t, err := ParseTitle(name)
	if err != nil {
		return "", Errorf(KindInvalid, "that user name cannot be used: %s", Message(err))
	}
	if utf8.RuneCountInString(string(t)) > MaxUserNameRunes {
		return "", Errorf(KindInvalid, "the user name is too long: use at most %d characters", MaxUserNameRunes)
	}
	return string(t), nil
}

// LookupUserName normalizes a name given to find an existing account (log
// in, block, rights, contributions): ParseUserName without the character
// rules, which came after some accounts were made. A name those rules
// refuse cannot be registered, but its account can still be reached, to
// block it or reset its password; wikid check lists such names.
func LookupUserName(name string) (string, error) {
	if !utf8.ValidString(name) {
		return "", Errorf(KindInvalid, "the user name is not valid UTF-8; use plain Unicode text")
	}
	if strings.ContainsAny(name, "/:@") {
		return "", Errorf(KindInvalid, "user names may not contain '/', ':' or '@'")
	}
	t, err := TitleRules{}.parse(name, false)
	if err != nil {
		return "", Errorf(KindInvalid, "that is not a user name: %s", Message(err))
	}
	if utf8.RuneCountInString(string(t)) > MaxUserNameRunes {
		return "", Errorf(KindInvalid, "the user name is too long: names have at most %d characters", MaxUserNameRunes)
	}
	return string(t), nil
}
