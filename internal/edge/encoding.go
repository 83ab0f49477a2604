package edge

import "strings"

// Encoding is the content coding of one stored variant.
type Encoding uint8

// The variants an entry may hold, in order of preference when serving.
const (
	Identity Encoding = iota
	Gzip
	Brotli
	numEncodings
)

func (e Encoding) String() string {
	switch e {
	case Gzip:
		return "gzip"
	case Brotli:
		return "br"
	default:
		return "identity"
	}
}

// Accepted is the set of compressed codings a client accepts. Identity is always
// acceptable: an "identity;q=0" request still gets identity rather than a 406,
// which is what every mainstream server does.
type Accepted uint8

// Flags of Accepted.
const (
	AcceptGzip Accepted = 1 << iota
	AcceptBrotli
)

// ParseAcceptEncoding reads one Accept-Encoding header value. It honours q=0
// (a coding with q=0 is refused, also when it would otherwise match "*") and
// ignores other q-values: br is preferred over gzip whenever both are
// acceptable, since the variants were compressed in advance. It does not
// allocate.
func ParseAcceptEncoding(s string) Accepted {
	var ok, refused Accepted
	star, starSeen := false, false
	for len(s) > 0 {
		var item string
		if i := strings.IndexByte(s, ','); i >= 0 {
			item, s = s[:i], s[i+1:]
		} else {
			item, s = s, ""
		}
		coding, params := item, ""
		if i := strings.IndexByte(item, ';'); i >= 0 {
			coding, params = item[:i], item[i+1:]
		}
		coding = strings.TrimSpace(coding)
		if coding == "" {
			continue
		}
		zero, valid := qZero(params)
		var bit Accepted
		switch {
		case strings.EqualFold(coding, "br"):
			bit = AcceptBrotli
		case strings.EqualFold(coding, "gzip"), strings.EqualFold(coding, "x-gzip"):
			bit = AcceptGzip
		case coding == "*":
			starSeen = true
			star = valid && !zero
			continue
		default:
			continue
		}
		if !valid || zero {
			refused |= bit
		} else {
			ok |= bit
		}
	}
	if starSeen && star {
		ok |= (AcceptGzip | AcceptBrotli) &^ refused
	}
	return ok &^ refused
}

// qZero reports whether the parameters of one Accept-Encoding item carry q=0,
// and whether they parsed at all (an unparsable q is treated as a refusal).
func qZero(params string) (zero, valid bool) {
	for len(params) > 0 {
		var p string
		if i := strings.IndexByte(params, ';'); i >= 0 {
			p, params = params[:i], params[i+1:]
		} else {
			p, params = params, ""
		}
		p = strings.TrimSpace(p)
		if len(p) < 2 || (p[0] != 'q' && p[0] != 'Q') || p[1] != '=' {
			continue
		}
		v := strings.TrimSpace(p[2:])
		// qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )
		if v == "" || (v[0] != '0' && v[0] != '1') || len(v) > 5 {
			return false, false
		}
		allZero := true
		if len(v) > 1 {
			if v[1] != '.' {
				return false, false
			}
			for i := 2; i < len(v); i++ {
				if v[i] < '0' || v[i] > '9' {
					return false, false
				}
				if v[i] != '0' {
					allZero = false
				}
			}
		}
		if v[0] == '1' {
			return false, allZero
		}
		return allZero, true
	}
	return false, true
}
