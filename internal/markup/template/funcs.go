package template

import (
	"fmt"
	"html"
	"strconv"
	"strings"
)

// magic returns the value of a magic word: {{PAGENAME}} and the like
// (upper case, as MediaWiki), {{!}} for a pipe and {{=}} for an equals
// sign that must not split an argument.
func (e *expander) magic(name string) (string, bool) {
	switch name {
	case "PAGENAME":
		return e.page.Title.Name(), true
	case "FULLPAGENAME":
		return string(e.page.Title), true
	case "NAMESPACE":
		return e.page.Title.Namespace(), true
	case "SITENAME":
		return e.page.SiteName, true
	case "!":
		return "|", true
	case "=":
		return "=", true
	}
	return "", false
}

// defaultSortNames are the names of MediaWiki's DEFAULTSORT magic word,
// which, as there, are written in upper case.
var defaultSortNames = []string{"DEFAULTSORT:", "DEFAULTSORTKEY:", "DEFAULTCATEGORYSORT:"}

// defaultSortCall returns the key of a {{DEFAULTSORT:key}} call named
// name (the name expanded and trimmed), trimmed.
func defaultSortCall(name string) (string, bool) {
	for _, n := range defaultSortNames {
		if key, ok := strings.CutPrefix(name, n); ok {
			return trimSpace(key), true
		}
	}
	return "", false
}

// sortOps sums up DEFAULTSORTs met in order by their effect, in constant
// space, so that a template's remembered output can replay those it met
// however many it met: the first key given, and the last key given
// without noreplace, which wins over every one before it.
type sortOps struct {
	first, last  string
	any, replace bool
}

// then returns the sum of s and the DEFAULTSORTs of t, met after s's.
func (s sortOps) then(t sortOps) sortOps {
	switch {
	case !t.any:
		return s
	case !s.any:
		return t
	case t.replace:
		s.last, s.replace = t.last, true
	}
	return s
}

// apply returns the default sort key (and whether there is one) after
// the DEFAULTSORTs of s, from key (and set).
func (s sortOps) apply(key string, set bool) (string, bool) {
	switch {
	case !s.any:
		return key, set
	case s.replace:
		return s.last, true
	case set:
		return key, true
	}
	return s.first, true
}

// defaultSort handles {{DEFAULTSORT:key|option}} as MediaWiki does: it
// sets the page's default category sort key (Result.DefaultSort) and
// writes nothing, unless it replaces an earlier, different key: then it
// writes a warning, which the option noerror silences. With noreplace, an
// earlier key stays (and no warning is written). An empty key does
// nothing.
func (e *expander) defaultSort(key string, args []part, f *frame, o *out) {
	if key == "" || !e.spend(len(key)) {
		return
	}
	option := ""
	if len(args) > 0 {
		option = strings.ToLower(e.str(f.t.nodes(&args[0]), f, true))
		if e.stopped() {
			return
		}
	}
	op := sortOps{first: key, any: true}
	if option != "noreplace" {
		op.last, op.replace = key, true
	}
	old, had := e.sortKey, e.sortSet
	e.setDefaultSort(op)
	if had && old != key && option != "noerror" && option != "noreplace" {
		e.errorBox(o, fmt.Sprintf("Warning: Default sort key &#34;%s&#34; overrides earlier default sort key &#34;%s&#34;.",
			html.EscapeString(key), html.EscapeString(old)))
	}
}

// setDefaultSort applies ops to the page's default sort key and adds them
// to those of the text being expanded.
func (e *expander) setDefaultSort(ops sortOps) {
	e.sortKey, e.sortSet = ops.apply(e.sortKey, e.sortSet)
	e.sortOps = e.sortOps.then(ops)
}

// A parserFunc writes its result to o. first is the text after the colon,
// expanded and trimmed; args are the other parts, unexpanded: a function
// expands only what it uses (the branch taken).
type parserFunc func(e *expander, first string, args []part, f *frame, o *out)

// parserFunction splits "#name: first" and finds the function (names in
// any case, as MediaWiki).
func parserFunction(name string) (parserFunc, string, bool) {
	if !strings.HasPrefix(name, "#") {
		return nil, "", false
	}
	fn, first, ok := strings.Cut(name, ":")
	if !ok {
		return nil, "", false
	}
	var pf parserFunc
	switch strings.ToLower(trimSpace(fn)) {
	case "#if":
		pf = fnIf
	case "#ifeq":
		pf = fnIfeq
	case "#switch":
		pf = fnSwitch
	case "#expr":
		pf = fnExpr
	case "#ifexpr":
		pf = fnIfexpr
	default:
		return nil, "", false
	}
	return pf, trimSpace(first), true
}

// branch writes argument i, trimmed, if there is one.
func (e *expander) branch(args []part, i int, f *frame, o *out) {
	if i < len(args) {
		e.trimmed(f.t.nodes(&args[i]), f, o)
	}
}

// {{#if: test | then | else}}: then when test is not empty.
func fnIf(e *expander, first string, args []part, f *frame, o *out) {
	if first != "" {
		e.branch(args, 0, f, o)
	} else {
		e.branch(args, 1, f, o)
	}
}

// {{#ifeq: a | b | then | else}}: then when a and b are equal, as numbers
// if both are numbers.
func fnIfeq(e *expander, first string, args []part, f *frame, o *out) {
	b := ""
	if len(args) > 0 {
		b = e.str(f.t.nodes(&args[0]), f, true)
	}
	if e.stopped() {
		return
	}
	if e.equal(first, b) {
		e.branch(args, 1, f, o)
	} else {
		e.branch(args, 2, f, o)
	}
}

// {{#switch: value | a = x | b | c = y | #default = z | fallback}}: the
// value of the first case equal to value; bare cases fall through to the
// next case with a value; without a match, the #default case's value, or
// a bare last case.
func fnSwitch(e *expander, primary string, args []part, f *frame, o *out) {
	found, defaultFound := false, false
	var def []node
	hasDef := false
	lastBare, lastItem := false, ""
	for i := range args {
		p := &args[i]
		if p.eq >= 0 {
			lastBare = false
			if found {
				e.trimmed(f.t.value(p), f, o)
				return
			}
			test := e.str(f.t.name(p), f, true)
			if e.stopped() {
				return
			}
			if e.equal(test, primary) {
				e.trimmed(f.t.value(p), f, o)
				return
			}
			if defaultFound || strings.EqualFold(test, "#default") {
				def, hasDef, defaultFound = f.t.value(p), true, false
			}
			continue
		}
		lastBare = true
		lastItem = e.str(f.t.nodes(p), f, true)
		if e.stopped() {
			return
		}
		if e.equal(lastItem, primary) {
			found = true
		} else if strings.EqualFold(lastItem, "#default") {
			defaultFound = true
		}
	}
	switch {
	case lastBare:
		e.put(o, lastItem, false)
	case hasDef:
		e.trimmed(def, f, o)
	}
}

// {{#expr: expression}}: the value, or an error box.
func fnExpr(e *expander, first string, args []part, f *frame, o *out) {
	r, ok := e.eval(first)
	if !ok {
		return
	}
	if r.err != nil {
		e.errorBox(o, html.EscapeString(r.err.Error()))
		return
	}
	e.put(o, r.v, false)
}

// {{#ifexpr: expression | then | else}}: then when the value is not zero.
func fnIfexpr(e *expander, first string, args []part, f *frame, o *out) {
	r, ok := e.eval(first)
	if !ok {
		return
	}
	if r.err != nil {
		e.errorBox(o, html.EscapeString(r.err.Error()))
		return
	}
	if x, ok := number(r.v); ok && x != 0 {
		e.branch(args, 0, f, o)
	} else {
		e.branch(args, 1, f, o)
	}
}

// exprResult is what evalExpr returns for an expression.
type exprResult struct {
	v   string
	err error
}

const (
	// exprNodeBytes is how many bytes of an expression count as one node
	// visited (besides the call), each time it is used: reading, hashing
	// and comparing it is work even when its value is remembered.
	exprNodeBytes = 64
	// exprCost is what an evaluation counts against Limits.Expr besides
	// its bytes (the memo entry, formatting the result): many tiny
	// expressions are bounded too.
	exprCost = 16
)

// eval returns the value of expression s for #expr and #ifexpr. Within an
// expansion each distinct expression is evaluated once; the bytes
// evaluated count against Limits.Expr, and every use counts as work and
// nodes, so that no text, however repeated or varied, evaluates more than
// Limits.Expr bytes of expressions. ok is false when a limit stopped the
// expansion.
func (e *expander) eval(s string) (r exprResult, ok bool) {
	n := min(len(s), maxExpr+1) // a longer one is rejected unread
	if !e.tick(n/exprNodeBytes) || !e.spend(n) {
		return r, false
	}
	if len(s) > maxExpr {
		_, err := evalExpr(s)
		return exprResult{err: err}, true
	}
	if r, ok := e.exprs[s]; ok {
		return r, true
	}
	if e.exprBytes += n + exprCost; e.exprBytes > e.lim.Expr {
		e.stop(haltExpr)
		return r, false
	}
	r.v, r.err = evalExpr(s)
	if e.exprs == nil {
		e.exprs = make(map[string]exprResult)
	}
	e.exprs[s] = r
	return r, true
}

// equal compares as PHP's == does for two strings: as numbers when both
// are numeric, else byte for byte.
func (e *expander) equal(a, b string) bool {
	e.spend(len(a) + len(b))
	if a == b {
		return true
	}
	x, ok := number(a)
	if !ok {
		return false
	}
	y, ok := number(b)
	return ok && x == y
}

// number parses a numeric string the way PHP recognizes one: an optional
// sign, digits with an optional decimal point, an optional exponent.
func number(s string) (float64, bool) {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i, digits = i+1, digits+1
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i, digits = i+1, digits+1
		}
	}
	if digits == 0 {
		return 0, false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		k := j
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if k == j {
			return 0, false
		}
		i = k
	}
	if i != len(s) {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		// Out of range: ParseFloat returns ±Inf, as PHP does.
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return v, true
		}
		return 0, false
	}
	return v, true
}
