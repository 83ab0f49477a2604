package main

import (
	"encoding/json"
	"reflect"
	"testing"
)

// pageLineCases are lines of JSON lines imports, each decoded by
// pageLineFast or handed to json.Unmarshal (fast false).
var pageLineCases = []struct {
	line string
	fast bool
}{
	{`{"title":"Main Page","text":"Hello"}`, true},
	{` { "title" : "A" , "text" : "b\n\"c\" \\ \/ \t\r\b\f \u00e9\u4e2d\u0000" , "content_model":"wikitext" } `, true},
	{`{"title":"A","source":"from REST"}`, true},
	{`{"title":"A","text":"one","text":"two"}`, true},
	{`{"ti\u0074le":"A","text":"x"}`, true},
	{`{}`, true},
	{`{"title":"Ünïcödé","text":"日本語 ✓"}`, true},
	{`{"title":"A","text":null}`, false},
	{`{"Title":"A","text":"x"}`, false},           // matched case-insensitively
	{`{"title":"A","text":"x","extra":1}`, false}, // other keys
	{`{"title":"A","text":"\ud83d\ude00"}`, false},
	{`{"title":"A","text":"\ud800"}`, false},
	{"{\"title\":\"A\",\"text\":\"\xff\"}", false}, // invalid UTF-8
	{"{\"title\":\"A\",\"text\":\"a\tb\"}", false}, // a raw control character
	{`{"title":"A","text":"x"} x`, false},
	{`{"title":"A","text":"x",}`, false},
	{`{"title":"A","text":"\x"}`, false},
	{`{"title":"A","text":"\u00g0"}`, false},
	{`{"title":"A","text":"x`, false},
	{`["title","A"]`, false},
	{``, false},
}

func TestPageLineFast(t *testing.T) {
	for _, c := range pageLineCases {
		got, ok := pageLineFast([]byte(c.line))
		if ok != c.fast {
			t.Errorf("pageLineFast(%q) ok = %v, want %v", c.line, ok, c.fast)
			continue
		}
		if !ok {
			continue
		}
		var want pageLine
		if err := json.Unmarshal([]byte(c.line), &want); err != nil {
			t.Errorf("pageLineFast(%q) decoded a line json.Unmarshal refuses: %v", c.line, err)
		} else if !reflect.DeepEqual(got, want) {
			t.Errorf("pageLineFast(%q) = %+v, json.Unmarshal gives %+v", c.line, got, want)
		}
	}
}

// FuzzPageLine: whatever pageLineFast decodes, json.Unmarshal decodes
// the same way.
func FuzzPageLine(f *testing.F) {
	for _, c := range pageLineCases {
		f.Add(c.line)
	}
	f.Fuzz(func(t *testing.T, line string) {
		got, ok := pageLineFast([]byte(line))
		if !ok {
			return
		}
		var want pageLine
		if err := json.Unmarshal([]byte(line), &want); err != nil {
			t.Fatalf("pageLineFast(%q) decoded a line json.Unmarshal refuses: %v", line, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("pageLineFast(%q) = %+v, json.Unmarshal gives %+v", line, got, want)
		}
	})
}
