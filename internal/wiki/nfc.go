package wiki

import "golang.org/x/text/unicode/norm"

// normalizeNFC and normalizeNFD are the only place the domain package
// reaches outside the standard library: golang.org/x/text is maintained by
// the Go team.
func normalizeNFC(s string) string { return norm.NFC.String(s) }

func normalizeNFD(s string) string { return norm.NFD.String(s) }
