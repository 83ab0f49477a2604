package diff

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestMerge(t *testing.T) {
	const base = "Intro line.\n\nFirst paragraph.\n\nSecond paragraph.\n\nThird paragraph.\n"
	tests := []struct {
		name         string
		base         string
		ours, theirs string
		want         string
		conflict     bool
	}{
		{
			name:   "edits in different paragraphs merge cleanly",
			base:   base,
			ours:   "Intro line.\n\nFirst paragraph, edited by me.\n\nSecond paragraph.\n\nThird paragraph.\n",
			theirs: "Intro line.\n\nFirst paragraph.\n\nSecond paragraph.\n\nThird paragraph, edited by them.\n",
			want:   "Intro line.\n\nFirst paragraph, edited by me.\n\nSecond paragraph.\n\nThird paragraph, edited by them.\n",
		},
		{
			name:     "different edits to the same line conflict",
			base:     "a\nb\nc\n",
			ours:     "a\nmine\nc\n",
			theirs:   "a\ntheirs\nc\n",
			want:     "a\n<<<<<<< your version\nmine\n=======\ntheirs\n>>>>>>> current version\nc\n",
			conflict: true,
		},
		{
			name:   "the same edit on both sides merges",
			base:   "a\nb\nc\n",
			ours:   "a\nB\nc\n",
			theirs: "a\nB\nc\n",
			want:   "a\nB\nc\n",
		},
		{
			// Unlike git: both replacements land where their own lines were.
			name:   "edits to adjacent lines merge cleanly",
			base:   "a\nb\nc\nd\n",
			ours:   "a\nB\nc\nd\n",
			theirs: "a\nb\nC\nd\n",
			want:   "a\nB\nC\nd\n",
		},
		{
			name:   "deletions of adjacent lines merge cleanly",
			base:   "a\nb\nc\nd\n",
			ours:   "a\nc\nd\n",
			theirs: "a\nb\nd\n",
			want:   "a\nd\n",
		},
		{
			name:     "different insertions at the same spot conflict",
			base:     "a\nb\n",
			ours:     "a\nmine\nb\n",
			theirs:   "a\ntheirs\nb\n",
			want:     "a\n<<<<<<< your version\nmine\n=======\ntheirs\n>>>>>>> current version\nb\n",
			conflict: true,
		},
		{
			name:   "identical insertions at the same spot merge",
			base:   "a\nb\n",
			ours:   "a\nnew\nb\n",
			theirs: "a\nnew\nb\n",
			want:   "a\nnew\nb\n",
		},
		{
			name:     "an insertion right after a changed line conflicts",
			base:     "a\nb\nc\n",
			ours:     "a\nB\nc\n",
			theirs:   "a\nb\nnew\nc\n",
			want:     "a\n<<<<<<< your version\nB\n=======\nb\nnew\n>>>>>>> current version\nc\n",
			conflict: true,
		},
		{
			name:     "deleting a line the other side edited conflicts",
			base:     "a\nb\nc\n",
			ours:     "a\nc\n",
			theirs:   "a\nB\nc\n",
			want:     "a\n<<<<<<< your version\n=======\nB\n>>>>>>> current version\nc\n",
			conflict: true,
		},
		{
			name:   "a deletion and an edit elsewhere merge cleanly",
			base:   base,
			ours:   "Intro line.\n\nSecond paragraph.\n\nThird paragraph.\n",
			theirs: "Intro line.\n\nFirst paragraph.\n\nSecond paragraph.\n\nThird paragraph!\n",
			want:   "Intro line.\n\nSecond paragraph.\n\nThird paragraph!\n",
		},
		{
			name:   "both sides deleting the same line merge",
			base:   "a\nb\nc\n",
			ours:   "a\nc\n",
			theirs: "a\nc\n",
			want:   "a\nc\n",
		},
		{
			name:   "both creating the same text from an empty base merge",
			base:   "",
			ours:   "hello\n",
			theirs: "hello\n",
			want:   "hello\n",
		},
		{
			name:     "both creating different texts from an empty base conflict",
			base:     "",
			ours:     "mine\n",
			theirs:   "theirs\n",
			want:     "<<<<<<< your version\nmine\n=======\ntheirs\n>>>>>>> current version\n",
			conflict: true,
		},
		{
			name:     "shared lines stay outside the conflict markers",
			base:     "",
			ours:     "= Title =\nmine\n",
			theirs:   "= Title =\ntheirs\n",
			want:     "= Title =\n<<<<<<< your version\nmine\n=======\ntheirs\n>>>>>>> current version\n",
			conflict: true,
		},
		{
			name:   "Unicode edits in different lines merge cleanly",
			base:   "위키백과\n维基百科\nウィキペディア\nWikipédia\n",
			ours:   "위키백과는 자유 백과사전\n维基百科\nウィキペディア\nWikipédia\n",
			theirs: "위키백과\n维基百科\nウィキペディア\nWikipédia — l'encyclopédie\n",
			want:   "위키백과는 자유 백과사전\n维基百科\nウィキペディア\nWikipédia — l'encyclopédie\n",
		},
		{
			name:   "an edit merges into a text without a final newline",
			base:   "a\nb\nc",
			ours:   "A\nb\nc",
			theirs: "a\nb\nC",
			want:   "A\nb\nC",
		},
		{
			name:   "adding a final newline on one side is kept",
			base:   "a\nb\nc",
			ours:   "a\nb\nc\n",
			theirs: "A\nb\nc",
			want:   "A\nb\nc\n",
		},
		{
			name:   "removing a final newline on the other side is kept",
			base:   "a\nb\nc\n",
			ours:   "A\nb\nc\n",
			theirs: "a\nb\nc",
			want:   "A\nb\nc",
		},
		{
			name:   "appending after a last line without newline works when the other side edits elsewhere",
			base:   "a\nb\nc",
			ours:   "a\nb\nc\nd",
			theirs: "A\nb\nc",
			want:   "A\nb\nc\nd",
		},
		{
			name:   "CRLF lines are compared as written",
			base:   "a\r\nb\r\nc\r\n",
			ours:   "A\r\nb\r\nc\r\n",
			theirs: "a\r\nb\r\nC\r\n",
			want:   "A\r\nb\r\nC\r\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, conflict := Merge(tt.base, tt.ours, tt.theirs)
			if got != tt.want || conflict != tt.conflict {
				t.Fatalf("Merge = %q, %v\nwant    %q, %v", got, conflict, tt.want, tt.conflict)
			}
		})
	}
}

// randomText builds a text from a few short lines so that random edits
// collide often, sometimes without a final newline.
func randomText(r *rand.Rand) string {
	var b strings.Builder
	for range r.IntN(12) {
		b.WriteString([]string{"a", "b", "c", "", "dé", "维"}[r.IntN(6)])
		b.WriteByte('\n')
	}
	s := b.String()
	if r.IntN(3) == 0 {
		s = strings.TrimSuffix(s, "\n")
	}
	return s
}

// mutate makes a few random line edits to s.
func mutate(r *rand.Rand, s string) string {
	lines := strings.SplitAfter(s, "\n")
	for range r.IntN(4) {
		i := r.IntN(len(lines) + 1)
		switch r.IntN(3) {
		case 0:
			lines = append(lines[:i], append([]string{"new\n"}, lines[i:]...)...)
		case 1:
			if i < len(lines) {
				lines = append(lines[:i], lines[i+1:]...)
			}
		case 2:
			if i < len(lines) {
				lines[i] = "x" + lines[i]
			}
		}
	}
	return strings.Join(lines, "")
}

func checkMergeProperties(t *testing.T, base, other string) {
	t.Helper()
	if got, c := Merge(base, other, base); got != other || c {
		t.Fatalf("Merge(base, ours, base) = %q, %v; want ours %q\nbase %q", got, c, other, base)
	}
	if got, c := Merge(base, base, other); got != other || c {
		t.Fatalf("Merge(base, base, theirs) = %q, %v; want theirs %q\nbase %q", got, c, other, base)
	}
	if got, c := Merge(base, other, other); got != other || c {
		t.Fatalf("Merge(base, x, x) = %q, %v; want %q\nbase %q", got, c, other, base)
	}
}

func TestMergeWithOneSideUnchangedGivesTheOther(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 5000 {
		base := randomText(r)
		other := randomText(r)
		if r.IntN(2) == 0 {
			other = mutate(r, base)
		}
		checkMergeProperties(t, base, other)
	}
}

func TestCleanMergesAreSymmetric(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for range 5000 {
		base := randomText(r)
		ours, theirs := mutate(r, base), mutate(r, base)
		m1, c1 := Merge(base, ours, theirs)
		m2, c2 := Merge(base, theirs, ours)
		if c1 != c2 {
			t.Fatalf("conflict %v one way and %v the other\nbase %q\nours %q\ntheirs %q", c1, c2, base, ours, theirs)
		}
		if !c1 && m1 != m2 {
			t.Fatalf("clean merges differ: %q vs %q\nbase %q\nours %q\ntheirs %q", m1, m2, base, ours, theirs)
		}
		if !c1 && strings.Contains(m1, MarkerSep) {
			t.Fatalf("clean merge holds markers: %q", m1)
		}
	}
}

func FuzzMerge(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nB\nc\n", "a\nb\nC\n")
	f.Add("", "x", "y\n")
	f.Add("위키\n", "위키백과", "维基\n")
	f.Fuzz(func(t *testing.T, base, ours, theirs string) {
		Merge(base, ours, theirs)
		checkMergeProperties(t, base, ours)
		checkMergeProperties(t, base, theirs)
	})
}
